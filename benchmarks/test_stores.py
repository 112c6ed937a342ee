"""Store benchmarks (pytest-benchmark): an autosaved remember, and a load, per store and size.

JsonFileStore rewrites the whole file on every save, so its cost grows with
the memory; SqliteStore writes the rows a change touched, and the memory's own change
shares all but a few chunks of its table and index with the state before,
so an autosaved remember into SqliteStore costs about the same at any size.
"""

from __future__ import annotations

import functools
import itertools
import tempfile
from pathlib import Path

import pytest
from workload import NOW, QUERIES, SHAPES, make_state

from sentinel_memory import JsonFileStore, RedisStore, SqliteStore, core, create_memory

SIZES = [1_000, 10_000, 100_000]


def only_when_timed(benchmark, n: int) -> None:
    """Building 100,000-entry stores takes seconds: ``make test`` smoke-runs the smaller sizes only."""
    if benchmark.disabled and n >= 100_000:
        pytest.skip("100,000 entries only under make bench")


STORES = {"json": (JsonFileStore, "memory.json"), "sqlite": (SqliteStore, "memory.db")}
FOLDER = Path(tempfile.mkdtemp(prefix="sentinel-bench-stores-"))


@functools.cache
def saved(kind: str, n: int, purpose: str, shape: str = "seven") -> Path:
    """A store of ``n`` entries of ``shape`` on disk, one per purpose (built once per run)."""
    store_type, name = STORES[kind]
    path = FOLDER / f"{kind}-{n}-{shape}-{purpose}" / name
    store_type(path).save(core.to_document(make_state(n, shape, limit=n + 10_000), generation=1))
    return path


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", sorted(STORES))
def test_autosaved_remember(benchmark, kind, n):
    """One autosaved remember into a memory of n entries."""
    only_when_timed(benchmark, n)
    store_type, _ = STORES[kind]
    mem = create_memory(
        store=store_type(saved(kind, n, "remember")), autosave=True, limit=n + 10_000, clock=lambda: NOW
    )
    keys = (f"new:{i}" for i in itertools.count())
    benchmark.extra_info.update(kind="autosave", shape="seven", n=n, store=kind)
    benchmark.pedantic(
        lambda: mem.remember(next(keys), "the user asked about the refund", importance=0.5),
        rounds=5 if n == 100_000 else 30,
        warmup_rounds=1,
    )
    assert mem.size() > n


@pytest.mark.parametrize("kind", sorted(STORES))
def test_store_load(benchmark, kind):
    """Loading 100,000 entries into a new memory."""
    only_when_timed(benchmark, 100_000)
    store_type, _ = STORES[kind]
    path = saved(kind, 100_000, "load")
    benchmark.extra_info.update(kind="store load", shape="seven", n=100_000, store=kind)
    mem = benchmark.pedantic(lambda: create_memory(store=store_type(path), limit=200_000), rounds=3)
    assert mem.size() == 100_000


@pytest.mark.parametrize("query", [None, "chat turn"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shape", SHAPES)
def test_first_context_after_load(benchmark, shape, n, query):
    """The first get_context (budget 4,000) of a memory just loaded: what a stateless server, or a process that saw another's save, pays per message."""
    only_when_timed(benchmark, n)
    path = saved("json", n, "first context", shape)

    def loaded():
        return (create_memory(store=JsonFileStore(path), limit=n + 10_000, clock=lambda: NOW),), {}

    def first_context(mem):
        return mem.get_context(token_budget=4_000, query=None if query is None else QUERIES[query])

    benchmark.extra_info.update(kind="first context", shape=shape, n=n, query=query or "none", store="json")
    ctx = benchmark.pedantic(first_context, setup=loaded, rounds=5 if n == 100_000 else 15)
    assert ctx.entries


REDIS_SIZES = [1_000, 10_000]


@functools.cache
def saved_in_redis(url: str, n: int, purpose: str) -> str:
    """A memory of ``n`` entries in Redis under a key of its own (built once per run); its key."""
    key = f"bench-{n}-{purpose}"
    RedisStore(url=url, key=key).save(core.to_document(make_state(n, limit=n + 10_000), generation=1))
    return key


@pytest.mark.parametrize("n", REDIS_SIZES)
def test_redis_autosaved_remember(benchmark, redis_server, n):
    """One autosaved remember into a memory of n entries kept in Redis on localhost (RDS-2: one script, one field)."""
    key = saved_in_redis(redis_server.url, n, "remember")
    mem = create_memory(
        store=RedisStore(url=redis_server.url, key=key), autosave=True, limit=n + 10_000, clock=lambda: NOW
    )
    keys = (f"new:{i}" for i in itertools.count())
    benchmark.extra_info.update(kind="autosave", shape="seven", n=n, store="redis")
    benchmark.pedantic(
        lambda: mem.remember(next(keys), "the user asked about the refund", importance=0.5), rounds=30, warmup_rounds=1
    )
    assert mem.size() > n


@pytest.mark.parametrize("n", REDIS_SIZES)
def test_redis_context_after_reload(benchmark, redis_server, n):
    """What a stateless app server does per message: load the user's memory from Redis, then get_context (budget 4,000)."""
    key = saved_in_redis(redis_server.url, n, "context")
    store = RedisStore(url=redis_server.url, key=key)

    def reload_and_context():
        return create_memory(store=store, limit=n + 10_000, clock=lambda: NOW).get_context(token_budget=4_000)

    benchmark.extra_info.update(kind="redis context", shape="seven", n=n, store="redis")
    ctx = benchmark.pedantic(reload_and_context, rounds=10 if n == 10_000 else 30, warmup_rounds=1)
    assert ctx.tokens <= 4_000
