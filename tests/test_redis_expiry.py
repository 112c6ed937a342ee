"""RedisStore's idle expiry on every kind of save, in the right unit, against the tests' own redis-server (RDS-4)."""

from __future__ import annotations

import datetime

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from support import T0

MINUTE_MS = 60_000


def ttls(client, store) -> list[int]:
    """The remaining Redis ttl of each of the store's keys, in ms (-1: none, -2: no such key)."""
    return [client.pttl(store.meta_key), client.pttl(store.entries_key)]


def within(values: list[int], idle_ms: int) -> bool:
    """Each key expires after at most ``idle_ms``, and no sooner than a few seconds before that."""
    return all(idle_ms - 5_000 < value <= idle_ms for value in values)


@pytest.mark.parametrize("idle", [10 * MINUTE_MS, datetime.timedelta(minutes=10)])
def test_rds_4_a_whole_save_sets_the_idle_ttl_on_both_keys(redis_client, idle):
    """RDS-4: save() of a whole document (a first save, Memory.save, a save after a lossy load) leaves no key without the ttl."""
    store = sm.RedisStore(redis_client, key="whole", idle_ttl=idle)
    mem = sm.create_memory(store=store, clock=lambda: T0)
    mem.remember("user:name", "Jakub")
    mem.save()
    assert within(ttls(redis_client, store), 10 * MINUTE_MS)
    redis_client.persist(store.meta_key)
    redis_client.persist(store.entries_key)
    store.save(core.to_document(mem.state, generation=mem.generation + 1))
    assert within(ttls(redis_client, store), 10 * MINUTE_MS)


def test_rds_4_incremental_and_whole_saves_alike_refresh_the_ttl(redis_client):
    """RDS-4, MW-4: an autosaving memory's incremental saves and its whole saves each set the ttl anew on both keys."""
    store = sm.RedisStore(redis_client, key="mixed", idle_ttl=10 * MINUTE_MS)
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    for step in (
        lambda: mem.remember("a", 1),  # a first save: whole
        lambda: mem.remember("b", [2]),  # incremental
        lambda: mem.working.set({"task": "refund"}),
        lambda: mem.forget("a"),
        mem.save,  # whole
        mem.clear,  # whole
    ):
        redis_client.pexpire(store.meta_key, 1_000_000_000)
        redis_client.pexpire(store.entries_key, 1_000_000_000)
        step()
        assert within([t for t in ttls(redis_client, store) if t != -2], 10 * MINUTE_MS)  # clear leaves no entries key


@pytest.mark.parametrize(
    ("idle", "ms"),
    [
        (datetime.timedelta(seconds=90), 90_000),
        (datetime.timedelta(minutes=10), 600_000),
        (datetime.timedelta(days=1), 86_400_000),
        (datetime.timedelta(milliseconds=2_500), 2_500),
    ],
)
def test_rds_4_a_timedelta_is_taken_in_milliseconds(redis_client, idle, ms):
    """RDS-4, NUM-6: idle_ttl=timedelta(...) expires the keys after exactly as long as the same number of milliseconds."""
    as_delta = sm.RedisStore(redis_client, key="delta", idle_ttl=idle)
    as_number = sm.RedisStore(redis_client, key="number", idle_ttl=ms)
    for store in (as_delta, as_number):
        sm.create_memory(store=store, autosave=True, clock=lambda: T0).remember("k", "v")
        assert within(ttls(redis_client, store), ms)
    assert as_delta.idle_ms == as_number.idle_ms == ms
