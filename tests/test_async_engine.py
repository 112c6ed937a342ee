"""The async engine with an async store: nothing happened, nothing saved; side effects in order; logged; AsyncRedisStore's recoveries.

The native engine (a store of coroutines) drives ``shell.Plumbing`` as the
sync memory does; these tests count what reaches an async store, so a
rule of the plumbing broken for both shells fails here too (issue 45).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

import pytest
from async_support import CoroutineStore

import sentinel_memory as sm
from support import MINUTE, T0, FakeClock


def writes(store: CoroutineStore) -> int:
    return len(store.saves) + len(store.changes)


async def autosaved(**options):
    store = CoroutineStore()
    clock = options.pop("clock", None) or FakeClock()
    mem = await sm.create_async_memory(store=store, autosave=True, clock=clock, **options)
    return mem, store, clock


def test_per_11_nothing_happened_nothing_saved_on_the_async_engine():
    """PER-11, L0-2, AIO-1: a compaction that dropped nothing, a forget of a missing key and a cache.put write nothing."""

    async def main():
        mem, store, _ = await autosaved()
        assert not mem.threaded
        await mem.remember("a", 1)
        before = writes(store)
        assert before == 1
        assert not await mem.compact()
        assert writes(store) == before, "a compaction that dropped nothing saved"
        assert await mem.forget("missing") is False
        assert writes(store) == before, "a forget of a missing key saved"
        await mem.cache.put("otp", 123)
        await mem.cache.delete("otp")
        await mem.cache.clear()
        assert writes(store) == before, "the cache saved"
        assert await mem.forget("a") is True and writes(store) == before + 1

    asyncio.run(main())


def test_per_11_a_compaction_that_dropped_something_is_saved_on_the_async_engine():
    """PER-11, CMP-3: an explicit compaction that dropped an expired entry saves once, and the store no longer holds it."""

    async def main():
        mem, store, clock = await autosaved()
        await mem.remember("cart", 1, ttl=MINUTE)
        clock.advance(MINUTE)
        before = writes(store)
        assert [e.key for e in (await mem.compact()).expired] == ["cart"]
        assert writes(store) == before + 1 and store.inner.load()["entries"] == []

    asyncio.run(main())


def test_wrp_1_on_evict_runs_before_the_autosave_on_the_async_engine():
    """WRP-1, CMP-3: an automatic compaction's on_evict is called before the autosave reaches the async store."""
    seen: list[tuple[list[str], int]] = []
    holder: dict[str, CoroutineStore] = {}

    def on_evict(compaction: sm.Compaction) -> None:
        seen.append(([e.key for e in compaction.evicted], writes(holder["store"])))

    async def main():
        store = CoroutineStore()
        holder["store"] = store
        clock = FakeClock()
        mem = await sm.create_async_memory(store=store, autosave=True, clock=clock, limit=1, on_evict=on_evict)
        await mem.remember("a", 1, importance=0.1)
        clock.advance(1)
        await mem.remember("b", 2, importance=0.9)
        return writes(store)

    total = asyncio.run(main())
    assert seen == [(["a"], 1)] and total == 2


def test_log_2_a_compaction_on_the_async_engine_is_logged(caplog):
    """LOG-2, AIO-1: an explicit compaction on the async engine logs its counts at INFO and its keys at DEBUG; one that dropped nothing logs nothing."""

    async def main():
        mem, _, clock = await autosaved()
        await mem.remember("cart", 1, ttl=MINUTE)
        caplog.set_level(logging.DEBUG, logger="sentinel_memory")
        assert not await mem.compact()
        assert [r for r in caplog.records if r.name == "sentinel_memory"] == []
        clock.advance(MINUTE)
        await mem.compact()

    asyncio.run(main())
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sentinel_memory"]
    assert records == [
        ("INFO", "CoroutineStore(): 1 expired, 0 evicted"),
        ("DEBUG", "CoroutineStore(): expired ['cart']; evicted -"),
    ]


def test_log_2_an_eviction_on_the_async_engine_logs_evicted_not_expired(caplog):
    """LOG-2: an automatic eviction is counted as evicted, and its key listed as evicted, at INFO and DEBUG."""

    async def main():
        mem, _, clock = await autosaved(limit=1)
        caplog.set_level(logging.DEBUG, logger="sentinel_memory")
        await mem.remember("a", 1, importance=0.1)
        clock.advance(1)
        await mem.remember("b", 2, importance=0.9)

    asyncio.run(main())
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sentinel_memory"]
    assert records == [
        ("INFO", "CoroutineStore(): 0 expired, 1 evicted"),
        ("DEBUG", "CoroutineStore(): expired -; evicted ['a']"),
    ]


def test_log_2_nothing_is_logged_when_info_is_off(caplog):
    """LOG-1, LOG-2: with the logger at WARNING, a compaction that dropped something logs nothing."""

    async def main():
        mem, _, clock = await autosaved()
        await mem.remember("cart", 1, ttl=MINUTE)
        clock.advance(MINUTE)
        caplog.set_level(logging.WARNING, logger="sentinel_memory")
        await mem.compact()

    asyncio.run(main())
    assert [r for r in caplog.records if r.name == "sentinel_memory"] == []


# -- AsyncRedisStore's recoveries (LOG-3, PER-14, RDS-4, RDS-5) -----------------------------------------------


def test_log_3_an_async_redis_outage_and_the_way_back_are_logged(tmp_path, caplog):
    """LOG-3, RDS-5, AIO-5: an AsyncRedisStore that lost its server logs a WARNING, and the first call through afterwards an INFO."""
    from support import RedisServer

    server = RedisServer(tmp_path).start()

    async def main():
        store = sm.AsyncRedisStore(url=server.url, key="outage")
        mem = await sm.create_async_memory(store=store, autosave=True)
        await mem.remember("before", 1)
        caplog.set_level(logging.INFO, logger="sentinel_memory")
        server.stop()
        with pytest.raises(sm.StoreConnectionError):
            await mem.remember("during", 2)
        server.start()
        await mem.remember("after", 3)
        await mem.remember("again", 4)
        await store.close()

    try:
        asyncio.run(main())
    finally:
        server.stop()
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sentinel_memory"]
    assert [level for level, _ in records] == ["WARNING", "INFO"], records
    assert f"127.0.0.1:{server.port}" in records[0][1] and "reachable again" in records[1][1]


def test_per_14_the_async_redis_copy_of_a_lossy_load_expires_with_idle_ttl(redis_server, redis_client):
    """PER-14, RDS-4, AIO-5: the preserved copy an AsyncRedisStore keeps expires with idle_ttl, and never without one."""
    key = uuid.uuid4().hex
    entries = [{"key": k, "data": 1, "importance": 0.5, "createdAt": T0, "updatedAt": T0} for k in ("", "a")]

    async def main(idle_ttl):
        store = sm.AsyncRedisStore(url=redis_server.url, key=key + str(idle_ttl), idle_ttl=idle_ttl)
        await store.save({"version": 1, "entries": entries})
        with pytest.warns(sm.LoadWarning):
            mem = await sm.create_async_memory(store=store, autosave=True)
        await mem.remember("b", 2)
        await store.close()
        return store

    store = asyncio.run(main(60_000))
    (copy,) = redis_client.keys(store.meta_key.replace(":meta", ":orig:*"))
    assert 0 < redis_client.pttl(copy) <= 60_000
    store = asyncio.run(main(None))
    (copy,) = redis_client.keys(store.meta_key.replace(":meta", ":orig:*"))
    assert redis_client.pttl(copy) == -1


def test_rds_5_a_lease_left_by_a_cancelled_lock_is_released_by_the_next(redis_server, redis_client, monkeypatch):
    """RDS-5, AIO-4: when lock() is cancelled after Redis set the lease but before the answer came, the next lock() releases it by its token."""
    import redis.asyncio.lock

    key = uuid.uuid4().hex
    real = redis.asyncio.lock.Lock.do_acquire
    set_in_redis: list[asyncio.Event] = []

    async def set_then_hang(lease, token):
        await real(lease, token)
        set_in_redis[0].set()
        await asyncio.sleep(60)  # the answer never comes in time

    async def main():
        set_in_redis.append(asyncio.Event())
        store = sm.AsyncRedisStore(url=redis_server.url, key=key, lock_timeout=60, lock_wait=1)
        monkeypatch.setattr(redis.asyncio.lock.Lock, "do_acquire", set_then_hang)

        async def hold():
            async with store.lock():
                pass

        task = asyncio.create_task(hold())
        await set_in_redis[0].wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.setattr(redis.asyncio.lock.Lock, "do_acquire", real)
        assert redis_client.pttl(store.lock_key) > 30_000  # set, and nobody knows it but the store
        started = time.monotonic()
        async with store.lock():
            assert redis_client.exists(store.lock_key)
        assert not redis_client.exists(store.lock_key) and time.monotonic() - started < 1
        await store.close()

    asyncio.run(main())


def test_time_2_an_async_read_with_a_clock_that_is_no_number_names_the_clock():
    """TIME-2, AIO-1: a read of an async memory whose clock returns no number raises TypeError naming the clock."""

    async def main():
        now: list[object] = [T0]
        mem = await sm.create_async_memory(store=CoroutineStore(), clock=lambda: now[0])
        await mem.remember("a", 1)
        now[0] = "soon"
        for read in (lambda: mem.get("a"), lambda: mem.get_context(token_budget=10), lambda: mem.recall("a")):
            with pytest.raises(TypeError, match="clock must return a finite number of milliseconds, got 'soon'"):
                read()

    asyncio.run(main())
