"""The async surface: AsyncMemory on every store, many tasks, shared writers, errors, cancellation (AIO-1 .. AIO-5)."""

from __future__ import annotations

import asyncio
import inspect
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from async_support import KINDS, CoroutineStore, scratch, store_maker, stored_document

import sentinel_memory as sm
from support import T0, FakeClock

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def where():
    folder = scratch()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def make_store(where, request):
    """``make_store(kind)``: a new store object on this test's one place of that kind (Redis: the tests' server)."""
    makers = {}

    def make(kind):
        url = request.getfixturevalue("redis_server").url if kind.startswith("redis") else None
        if kind not in makers:
            makers[kind] = store_maker(kind, where, url)
        return makers[kind]()

    return make


def fields(mem):
    return [(e.key, e.data, e.importance, e.expires_at) for e in mem.get_recent(10**6)]


# -- AIO-2: 200 tasks, one user's memory, nothing lost --------------------------------------------


@pytest.mark.parametrize("kind", [*KINDS, "redis-sync"])
def test_aio_2_two_hundred_concurrent_tasks_on_one_memory_lose_nothing(kind, make_store):
    """AIO-2, AIO-3: 200 tasks remember 200 keys at once, then 200 tasks increment one counter in transactions: 0 lost."""

    async def main():
        store = make_store(kind)
        mem = await sm.create_async_memory(store=store, autosave=True, limit=1000)
        assert mem.threaded == (kind not in ("redis", "coroutines"))
        started = time.perf_counter()
        await asyncio.gather(*(mem.remember(f"k{i}", i) for i in range(200)))
        writes = time.perf_counter() - started

        async def increment():
            async with mem.transaction():
                await mem.remember("n", mem.get("n", 0) + 1)

        started = time.perf_counter()
        await asyncio.gather(*(increment() for _ in range(200)))
        increments = time.perf_counter() - started
        fresh = await sm.create_async_memory(store=make_store(kind), limit=1000)
        lost = 200 - sum(fresh.get(f"k{i}") == i for i in range(200))
        print(f"\n{kind}: 200 writes in {writes:.3f} s, 200 increments in {increments:.3f} s, lost {lost}")
        assert lost == 0 and fresh.get("n") == 200 and fresh.generation == mem.generation == 400
        await mem.close()
        await fresh.close()

    asyncio.run(main())


@pytest.mark.parametrize("kind", [*KINDS, "redis-sync"])
def test_aio_2_two_shared_memories_number_200_turns_without_a_gap(kind, make_store):
    """AIO-2, MW-6, ENT-16: 200 tasks add turns through two shared AsyncMemory objects on one store: chat:1 .. chat:200, each once."""

    async def main():
        writers = [
            await sm.create_async_memory(store=make_store(kind), autosave=True, shared=True, limit=1000)
            for _ in range(2)
        ]
        entries = await asyncio.gather(*(writers[i % 2].add_turn("user", f"message {i}") for i in range(200)))
        assert sorted(int(e.key[5:]) for e in entries) == list(range(1, 201))
        fresh = await sm.create_async_memory(store=make_store(kind), limit=1000)
        assert sorted(e.data["content"] for e in fresh.get_recent(1000)) == sorted(f"message {i}" for i in range(200))
        for mem in (*writers, fresh):
            await mem.close()

    asyncio.run(main())


def test_aio_5_sync_and_async_writers_share_one_redis_memory(redis_server):
    """AIO-5, RDS-3, MW-6: a sync Memory in threads and an AsyncMemory on AsyncRedisStore, both shared on one key: no turn lost."""
    key = uuid.uuid4().hex

    async def main():
        mem = await sm.create_async_memory(
            store=sm.AsyncRedisStore(url=redis_server.url, key=key), autosave=True, shared=True, limit=1000
        )
        sync = sm.create_memory(store=sm.RedisStore(url=redis_server.url, key=key), autosave=True, shared=True)

        def sync_writes():
            for i in range(50):
                sync.add_turn("assistant", f"sync {i}")

        thread = threading.Thread(target=sync_writes)
        thread.start()
        await asyncio.gather(*(mem.add_turn("user", f"async {i}") for i in range(50)))
        await asyncio.to_thread(thread.join)
        final = sm.create_memory(store=sm.RedisStore(url=redis_server.url, key=key), limit=1000)
        contents = sorted(entry.data["content"] for entry in final.get_recent(1000))
        assert contents == sorted([f"sync {i}" for i in range(50)] + [f"async {i}" for i in range(50)])
        assert sorted(int(k[5:]) for k in final) == list(range(1, 101))
        await mem.close()
        sync.close()

    asyncio.run(main())


# -- AIO-1: the sync memory's behaviour, awaited ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_aio_1_awaited_calls_leave_what_the_same_sync_calls_leave(kind, make_store):
    """AIO-1, TIME-1, WRP-1, MW-4, CMP-3: one clock read per change, on_evict, saves and results as a sync Memory's."""

    async def main():
        clock, sync_clock = FakeClock(), FakeClock()
        dropped, sync_dropped = [], []
        mem = await sm.create_async_memory(
            store=make_store(kind), autosave=True, limit=3, clock=clock, on_evict=dropped.append
        )
        sync = sm.create_memory(autosave=True, limit=3, clock=sync_clock, on_evict=sync_dropped.append)
        reads = clock.reads
        results = [
            await mem.remember("a", 1, importance=0.9),
            await mem.add_turn("user", "hi", ttl=1000),
            await mem.remember("b", [1, 2], importance=0.2),
            await mem.remember("c", {"x": 1}),
            await mem.forget("a"),
            await mem.forget("missing"),
            await mem.working.set({"task": "refund"}),
            await mem.cache.put("tool", 42),
            await mem.cache.delete("tool"),
        ]
        assert clock.reads - reads == 9  # one clock read per change (TIME-1)
        clock.advance(2000)
        results.append(await mem.compact())
        sync_results = [
            sync.remember("a", 1, importance=0.9),
            sync.add_turn("user", "hi", ttl=1000),
            sync.remember("b", [1, 2], importance=0.2),
            sync.remember("c", {"x": 1}),
            sync.forget("a"),
            sync.forget("missing"),
            sync.working.set({"task": "refund"}),
            sync.cache.put("tool", 42),
            sync.cache.delete("tool"),
        ]
        sync_clock.advance(2000)
        sync_results.append(sync.compact())
        assert results == sync_results and dropped == sync_dropped
        assert sm.core.to_document(mem.state) == sm.core.to_document(sync.state)
        assert await stored_document(mem.store) == sm.core.to_document(mem.state, generation=mem.generation)
        # The reads are plain methods, the same as the sync memory's; the changes are coroutines.
        assert mem.stats() == sync.stats() and dict(mem) == dict(sync) and len(mem) == len(sync)
        assert mem.get_context(token_budget=100, query="hi").text == sync.get_context(token_budget=100, query="hi").text
        assert mem.recall("hi") == sync.recall("hi") and mem.get_recent(2) == sync.get_recent(2)
        assert mem.working.get() == {"task": "refund"} and mem.cache.get("tool") is None
        assert mem.get_entry("c") == sync.get_entry("c") and mem.has("c") and "c" in mem and mem["c"] == {"x": 1}
        for name in ("remember", "add_turn", "forget", "clear", "compact", "save", "load", "close"):
            assert inspect.iscoroutinefunction(getattr(mem, name)), name
        for name in ("get", "get_entry", "has", "size", "get_recent", "recall", "get_context", "stats"):
            assert not inspect.iscoroutinefunction(getattr(mem, name)), name
        await mem.clear()
        sync.clear()
        assert sm.core.to_document(mem.state) == sm.core.to_document(sync.state)
        async with mem:
            pass  # closes the store (WRP-5); a later call opens it again
        await mem.remember("after", "close")
        assert mem.get("after") == "close"
        await mem.close()

    asyncio.run(main())


def test_aio_1_options_are_checked_as_create_memory_checks_them():
    """AIO-1, OPT-1: a wrong option raises the same TypeError before any store is touched."""

    async def main():
        with pytest.raises(TypeError, match="autosave"):
            await sm.create_async_memory(autosave="yes")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="store"):
            await sm.create_async_memory(store=object())  # type: ignore[arg-type]
        with pytest.warns(sm.IgnoredValueWarning):
            mem = await sm.create_async_memory(limit=0)
        assert mem.stats()["limit"] == 1000

    asyncio.run(main())


def test_aio_1_a_lossy_load_warns_and_preserves_before_the_first_save():
    """AIO-1, PER-14, MW-4: the native shell warns, preserves the original once, then saves whole, then incrementally."""

    async def main():
        inner = sm.MemoryStore()
        inner.save(
            {
                "version": 1,
                "entries": [
                    {"key": "ok", "data": 1, "importance": 0.5, "createdAt": T0, "updatedAt": T0},
                    {"key": "", "data": 1, "importance": 0.5, "createdAt": T0, "updatedAt": T0},
                ],
            }
        )
        store = CoroutineStore(inner)
        with pytest.warns(sm.LoadWarning, match="dropped 1 invalid"):
            mem = await sm.create_async_memory(store=store, autosave=True, clock=lambda: T0)
        assert mem.last_load.dropped == 1 and inner.preserved == []
        await mem.remember("a", 1)
        assert len(inner.preserved) == 1 and len(store.saves) == 1 and store.changes == []
        await mem.remember("b", 2)
        assert len(inner.preserved) == 1 and len(store.saves) == 1 and len(store.changes) == 1
        assert store.changes[0].upserts[0].key == "b"

    asyncio.run(main())


def test_aio_1_wrp_3_a_change_from_inside_a_save_is_refused():
    """AIO-1, WRP-3, WRP-1: a store of coroutines that changes the memory from inside its save gets ReentrantCallError."""

    async def main():
        store = CoroutineStore()
        mem = await sm.create_async_memory(store=store, autosave=True, clock=lambda: T0)
        refused = []

        async def meddle():
            try:
                await mem.remember("inner", 1)
            except sm.ReentrantCallError as error:
                refused.append(error)
                raise

        store.on_save = meddle
        before = mem.state
        with pytest.raises(sm.ReentrantCallError):
            await mem.remember("outer", 1)
        assert refused and mem.state is before
        store.on_save = None
        await mem.remember("outer", 1)
        assert list(mem) == ["outer"]

    asyncio.run(main())


# -- AIO-3: where the I/O runs -------------------------------------------------------------------------


def test_aio_3_a_slow_file_save_never_blocks_the_loop(where):
    """AIO-3: while a sync store's save sleeps in the memory's worker thread, the event loop keeps running."""

    class SlowStore(sm.JsonFileStore):
        def save(self, document):
            time.sleep(0.2)
            super().save(document)

    async def main():
        loop_thread = threading.get_ident()
        threads = []
        mem = await sm.create_async_memory(
            store=SlowStore(where / "slow.json"),
            autosave=True,
            limit=1,
            on_evict=lambda c: threads.append(threading.get_ident()),
        )
        ticks: list[float] = []

        async def tick():
            while True:
                await asyncio.sleep(0.01)
                ticks.append(time.perf_counter())

        ticker = asyncio.create_task(tick())
        start = time.perf_counter()
        await mem.remember("a", 1)
        await mem.remember("b", 2)  # evicts a: on_evict in the worker thread
        took = time.perf_counter() - start
        ticker.cancel()
        # About 0.4 s of saves, and the loop ticked all along: no gap near a save's 0.2 s, however loaded the machine.
        gaps = [b - a for a, b in zip([start, *ticks], ticks, strict=False)]
        assert took >= 0.4 and len(ticks) >= 5 and max(gaps) < 0.15, (took, len(ticks), max(gaps))
        assert threads and all(t != loop_thread for t in threads) and mem.threaded

        native = await sm.create_async_memory(
            store=CoroutineStore(), autosave=True, limit=1, on_evict=lambda c: threads.append(threading.get_ident())
        )
        await native.remember("a", 1)
        await native.remember("b", 2)
        assert threads[-1] == loop_thread and not native.threaded

    asyncio.run(main())


# -- errors ------------------------------------------------------------------------------------------


def test_aio_5_redis_errors_map_as_redisstore_maps_them(redis_server, redis_client):
    """AIO-5, RDS-5, RDS-6, MW-3, MW-8, WRP-1: unreachable, refused, damaged, conflicting and locked Redis, each its documented error; nothing changes."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]

    async def main():
        dead = sm.AsyncRedisStore(url=f"redis://127.0.0.1:{free_port}/0", key="k")
        with pytest.raises(sm.StoreConnectionError) as caught:
            await sm.create_async_memory(store=dead)
        assert caught.value.operation == "load" and caught.value.server == f"127.0.0.1:{free_port}/0"
        assert type(caught.value.__cause__).__module__.startswith("redis")

        key = uuid.uuid4().hex
        store = sm.AsyncRedisStore(url=redis_server.url, key=key, lock_wait=0.1)
        a = await sm.create_async_memory(store=store, autosave=True, clock=lambda: T0)
        b = await sm.create_async_memory(store=sm.AsyncRedisStore(url=redis_server.url, key=key), autosave=True)
        await a.remember("first", 1)
        before = b.state
        with pytest.raises(sm.ConflictError):
            await b.remember("second", 2)
        assert b.state is before

        sync = sm.RedisStore(url=redis_server.url, key=key)
        shared = await sm.create_async_memory(store=store, autosave=True, shared=True, clock=lambda: T0)
        with sync.lock():
            before = shared.state
            with pytest.raises(sm.LockTimeoutError) as waited:
                await shared.remember("locked", 1)
            assert waited.value.location == store.lock_key and shared.state is before
        await shared.remember("unlocked", 1)
        assert shared.get("unlocked") == 1

        redis_client.hset(store.meta_key, "version", "2")
        with pytest.raises(sm.DamagedStoreError):
            await shared.load()
        with pytest.raises(sm.DamagedStoreError):
            await store.save(sm.core.to_document(shared.state, generation=shared.generation + 1))
        redis_client.delete(store.meta_key)
        redis_client.set(store.meta_key, "not a hash")
        with pytest.raises(sm.StoreError) as refused:
            await store.load()
        assert not isinstance(refused.value, sm.StoreConnectionError) and refused.value.operation == "load"
        await store.close()

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["json", "sqlite", "memory"])
def test_aio_2_threaded_stores_raise_their_own_errors(kind, make_store, where):
    """AIO-2, AIO-3, MW-3, MW-8, PER-4: ConflictError, LockTimeoutError and DamagedStoreError come through the thread unchanged; the memory keeps its state."""

    async def main():
        a = await sm.create_async_memory(store=make_store(kind), autosave=True)
        b = await sm.create_async_memory(store=make_store(kind), autosave=True)
        await a.remember("first", 1)
        before = b.state
        with pytest.raises(sm.ConflictError):
            await b.remember("second", 2)
        assert b.state is before
        holder = make_store(kind)
        if kind != "memory":
            quick = {"json": sm.JsonFileStore, "sqlite": sm.SqliteStore}[kind](
                where / ("m.json" if kind == "json" else "m.db"), lock_wait=0.05
            )
            c = await sm.create_async_memory(store=quick, autosave=True, shared=True)
            held, done = threading.Event(), threading.Event()

            def hold():
                with holder.lock():
                    held.set()
                    done.wait(10)

            thread = threading.Thread(target=hold)
            thread.start()
            held.wait(10)
            try:
                before = c.state
                with pytest.raises(sm.LockTimeoutError):
                    await c.remember("x", 1)
                assert c.state is before
            finally:
                done.set()
                thread.join()
            await c.close()
        if kind == "json":
            (where / "m.json").write_text("{not json", encoding="utf-8")
            with pytest.raises(sm.DamagedStoreError):
                await a.load()
            assert a.get("first") == 1
        for mem in (a, b):
            await mem.close()

    asyncio.run(main())


# -- AIO-4: cancellation -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_aio_4_a_task_cancelled_mid_save_ends_after_the_whole_change(kind, make_store):
    """AIO-4, WRP-1: cancelled in the middle of its save, a task ends cancelled only once the change is kept and saved; the store holds what the memory holds."""

    async def main():
        store = make_store(kind)
        if isinstance(store, CoroutineStore):
            store.delay = 0.05
        mem = await sm.create_async_memory(store=store, autosave=True, shared=True, clock=lambda: T0)
        await mem.remember("before", 0)
        cancelled = 0
        for spins in range(12):
            task = asyncio.create_task(mem.remember(f"k{spins}", spins))
            for _ in range(spins):
                await asyncio.sleep(0)
            if task.cancel():  # False: it was done already
                cancelled += 1
                with pytest.raises(asyncio.CancelledError):
                    await task
            assert await stored_document(store) == sm.core.to_document(mem.state, generation=mem.generation)
            assert mem.generation == 1 + sum(f"k{i}" in mem for i in range(spins + 1))
        assert cancelled >= 2
        await mem.remember("after", 1)  # nothing half done: the next change goes on from there
        assert await stored_document(store) == sm.core.to_document(mem.state, generation=mem.generation)
        await mem.close()

    asyncio.run(main())


def test_aio_4_a_change_cancelled_while_it_waits_for_its_turn_never_happens():
    """AIO-4, AIO-2: behind a slow change, a cancelled change is not made, and the ones after it are, in order."""

    async def main():
        store = CoroutineStore(delay=0.05)
        mem = await sm.create_async_memory(store=store, autosave=True, clock=lambda: T0)
        first = asyncio.create_task(mem.remember("first", 1))
        await asyncio.sleep(0)
        second = asyncio.create_task(mem.remember("second", 2))
        third = asyncio.create_task(mem.remember("third", 3))
        await asyncio.sleep(0.01)
        second.cancel()
        await first
        await third
        with pytest.raises(asyncio.CancelledError):
            await second
        assert list(mem) == ["first", "third"] and mem.generation == 2
        assert mem.get_recent(1)[0].key == "third"

    asyncio.run(main())


def test_aio_4_a_lease_set_for_a_cancelled_task_is_released(redis_server, redis_client):
    """AIO-4, AIO-5, RDS-5: a transaction cancelled at any moment leaves no Redis lease behind."""
    key = uuid.uuid4().hex

    async def main():
        store = sm.AsyncRedisStore(url=redis_server.url, key=key, lock_wait=2)
        mem = await sm.create_async_memory(store=store, autosave=True, shared=True)
        for spins in range(10):
            task = asyncio.create_task(mem.remember("k", spins))
            for _ in range(spins):
                await asyncio.sleep(0)
            if task.cancel():
                with pytest.raises(asyncio.CancelledError):
                    await task
            else:
                await task
            assert not redis_client.exists(store.lock_key)
        other = sm.create_memory(store=sm.RedisStore(url=redis_server.url, key=key, lock_wait=0.5), shared=True)
        other.remember("sync", 1)  # the lease is free
        await store.close()

    asyncio.run(main())


# -- the example bot, the types, the imports --------------------------------------------------------


def test_aio_2_the_async_example_bot_runs(tmp_path):
    """AIO-1, AIO-2: examples/async_bot.py serves three users and a burst of 200 messages at once, and loses none."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "async_bot.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    out = result.stdout
    assert "bot to alice: you are allergic to peanuts, so no satay." in out
    assert "bot to bob: your name is Bob." in out
    assert "burst: 200 messages, 200 turns stored, 0 lost" in out
    assert len(list((tmp_path / "users").glob("*.json"))) == 3


def test_aio_1_mypy_strict_accepts_the_documented_usage_and_flags_a_missing_await(tmp_path):
    """AIO-1, NUM-5: code written as the async guide shows passes mypy --strict; a change that is not awaited is reported."""
    from mypy import api

    program = tmp_path / "bot.py"
    good = (
        "import asyncio\n"
        "from datetime import timedelta\n"
        "from sentinel_memory import AsyncMemory, Context, Entry, JsonFileStore, create_async_memory\n"
        "\n"
        "async def handle(mem: AsyncMemory, message: str) -> str:\n"
        "    turn: Entry = await mem.add_turn('user', message)\n"
        "    await mem.remember('user:name', 'Ada', importance=0.9, ttl=timedelta(days=30))\n"
        "    async with mem.transaction():\n"
        "        visits: int = mem.get('visits', 0)\n"
        "        await mem.remember('visits', visits + 1)\n"
        "    await mem.working.set({'task': 'chat'})\n"
        "    await mem.cache.put('tool', 1)\n"
        "    context: Context = mem.get_context(token_budget=800, query=message, must_keep=0.9)\n"
        "    return f'{turn.key}: {context.tokens} tokens'\n"
        "\n"
        "async def main() -> None:\n"
        "    async with await create_async_memory(store=JsonFileStore('m.json'), autosave=True, shared=True) as mem:\n"
        "        print(await handle(mem, 'hello'))\n"
        "\n"
        "asyncio.run(main())\n"
    )
    program.write_text(
        good + "\nasync def forgetful(mem: AsyncMemory) -> None:\n    mem.remember('a', 1)\n", encoding="utf-8"
    )
    out, _, status = api.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(program)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1 and len(errors) == 1 and "unused-coroutine" in errors[0], out
    assert errors[0].split(":")[1] == str(len(good.splitlines()) + 3)


def test_aio_5_importing_the_package_imports_neither_redis_nor_asyncio():
    """AIO-5, DEP-1: the async names are importable from the package, which imports no redis client and not even asyncio."""
    code = (
        "import sys, sentinel_memory as sm; sm.AsyncMemory, sm.AsyncRedisStore, sm.create_async_memory; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('redis', 'asyncio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_aio_5_a_task_holding_the_lease_changes_its_shared_memory_at_once(redis_server):
    """AIO-5, MW-2: inside `async with store.lock()`, a shared AsyncMemory on that store changes without waiting for itself."""
    import asyncio
    import time
    import uuid

    async def main() -> float:
        store = sm.AsyncRedisStore(url=redis_server.url, key=uuid.uuid4().hex, lock_wait=5)
        mem = await sm.create_async_memory(store=store, autosave=True, shared=True)
        started = time.monotonic()
        async with store.lock():
            await mem.remember("a", 1)
            await mem.add_turn("user", "hi")
        took = time.monotonic() - started
        again = await sm.create_async_memory(store=sm.AsyncRedisStore(url=redis_server.url, key=store.key))
        assert again.get("a") == 1 and len(again) == 2
        await mem.close()
        await again.close()
        return took

    assert asyncio.run(main()) < 4  # not a wait of lock_wait for itself, then a LockTimeoutError
