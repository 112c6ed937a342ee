"""Many writers, as properties: incremental saves, conflicts, shared memories in any interleaving, lock waits (MW-1 .. MW-8)."""

from __future__ import annotations

import datetime
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm

from .strategies import json_data

T0 = 1_792_310_400_000

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from("abcdef"),
            json_data,
            st.sampled_from([None, 0.1, 0.5, 0.9]),
            st.sampled_from([None, 1, 50]),
        ),
        st.tuples(st.just("forget"), st.sampled_from("abcdef")),
        st.tuples(st.just("working"), st.integers(0, 9)),
        st.tuples(st.just("compact")),
        st.tuples(st.just("clear")),
        st.tuples(st.just("wait"), st.sampled_from([1, 10, 100])),
    ),
    max_size=12,
)


def folder() -> Path:
    """A throwaway folder, in memory-backed /dev/shm where there is one, so fsync costs nothing."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="sentinel-writers-", dir=base))


def apply(mem: sm.Memory, operation: tuple, clock: list[int]) -> None:
    kind = operation[0]
    if kind == "remember":
        _, key, data, importance, ttl = operation
        mem.remember(key, data, importance=importance, ttl=ttl)
    elif kind == "forget":
        mem.forget(operation[1])
    elif kind == "working":
        mem.working.set({"step": operation[1]})
    elif kind == "compact":
        mem.compact()
    elif kind == "clear":
        mem.clear()
    else:
        clock[0] += operation[1]


@given(ops=operations, limit=st.integers(2, 5))
def test_mw_4_incremental_saves_equal_whole_saves(ops, limit):
    """MW-1, MW-4, MW-7: the same autosaved changes leave SqliteStore (incremental) and JsonFileStore (whole) holding one document."""
    where = folder()
    try:
        clock = [T0]
        stores = [sm.JsonFileStore(where / "m.json"), sm.SqliteStore(where / "m.db"), sm.MemoryStore()]
        memories = [sm.create_memory(store=s, autosave=True, limit=limit, clock=lambda: clock[0]) for s in stores]
        for operation in ops:
            for mem in memories:
                apply(mem, operation, [0])
            if operation[0] == "wait":
                clock[0] += operation[1]
            documents = [s.load() for s in stores]
            assert documents[0] == documents[1] == documents[2]
            if documents[0] is not None:
                assert documents[0]["generation"] == memories[0].generation
    finally:
        shutil.rmtree(where, ignore_errors=True)


@given(
    ops=st.lists(st.tuples(st.integers(0, 2), operations.map(lambda o: o[:1]).filter(bool)), max_size=10),
    kind=st.sampled_from(["json", "sqlite", "memory", "redis"]),
)
def test_mw_6_shared_memories_in_any_interleaving_lose_nothing(ops, kind, redis_server):
    """MW-2, MW-3, MW-5, MW-6, RDS-2, RDS-3: three shared memories on one store, changes interleaved at random, end as one memory doing them all."""
    where = folder()
    try:
        shared_store = sm.MemoryStore()
        redis_key = where.name

        def store():
            return {
                "json": lambda: sm.JsonFileStore(where / "m.json"),
                "sqlite": lambda: sm.SqliteStore(where / "m.db"),
                "memory": lambda: shared_store,
                "redis": lambda: sm.RedisStore(url=redis_server.url, key=redis_key),
            }[kind]()

        writers = [sm.create_memory(store=store(), autosave=True, shared=True, clock=lambda: T0) for _ in range(3)]
        alone = sm.create_memory(autosave=True, clock=lambda: T0)  # the same changes, one after another
        for who, (operation,) in ops:
            apply(writers[who], operation, [0])
            apply(alone, operation, [0])
        final = sm.create_memory(store=store(), clock=lambda: T0)
        fields = lambda m: [(e.key, e.data, e.importance, e.expires_at) for e in m.get_recent(10**6)]
        assert fields(final) == fields(alone) and final.working.get() == alone.working.get()
    finally:
        shutil.rmtree(where, ignore_errors=True)


@given(
    saves=st.lists(st.integers(0, 1), min_size=1, max_size=8),
    kind=st.sampled_from(["json", "sqlite", "memory", "redis"]),
)
def test_mw_3_a_save_succeeds_exactly_when_its_writer_saw_the_last_generation(saves, kind, redis_server):
    """MW-1, MW-3, RDS-1, RDS-2: two writers saving in any order: each save succeeds iff that writer last saw the store's generation; else ConflictError and no change."""
    where = folder()
    try:
        store = {
            "json": lambda: sm.JsonFileStore(where / "m.json"),
            "sqlite": lambda: sm.SqliteStore(where / "m.db"),
            "memory": sm.MemoryStore,
            "redis": lambda: sm.RedisStore(url=redis_server.url, key=where.name),
        }[kind]()
        writers = [sm.create_memory(store=store, clock=lambda: T0) for _ in range(2)]
        stored = 0
        for step, who in enumerate(saves):
            writer = writers[who]
            writer.remember(f"step{step}", who)
            if writer.generation == stored:
                writer.save()
                stored += 1
                assert store.generation() == stored == writer.generation
            else:
                with pytest.raises(sm.ConflictError):
                    writer.save()
                assert store.generation() == stored
                writer.load()  # the documented way on: reload and make the change again
                writer.remember(f"step{step}", who)
                writer.save()
                stored += 1
    finally:
        shutil.rmtree(where, ignore_errors=True)


@settings(max_examples=30)
@given(
    idle=st.one_of(
        st.none(),
        st.integers(60_000, 10**9),
        st.timedeltas(min_value=datetime.timedelta(minutes=1), max_value=datetime.timedelta(days=400)),
    )
)
def test_rds_4_rds_5_idle_expiry_is_set_on_every_save_or_never(idle, redis_server):
    """RDS-4, RDS-5: after any save the keys carry the idle ttl (a minute or more here) or none, and a load reads back the last committed state."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    key = f"idle-{uuid.uuid4().hex}"
    store = sm.RedisStore(client, key=key, idle_ttl=idle)
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    mem.remember("a", 1, ttl=5)
    mem.remember("b", 2)
    ttl = client.pttl(store.meta_key)
    if idle is None:
        assert ttl == -1
    else:
        expected = idle if isinstance(idle, int) else round(idle / datetime.timedelta(milliseconds=1))
        assert 0 < ttl <= max(1, expected)
    assert store.load() == sm.core.to_document(mem.state, generation=mem.generation)
    client.delete(store.meta_key, store.entries_key)


@settings(max_examples=12, deadline=None)
@given(
    ops=operations.filter(lambda ops: any(op[0] != "wait" for op in ops)),
    kind=st.sampled_from(["json", "sqlite", "memory", "redis"]),
    wait=st.sampled_from([0, 0.02]),
)
def test_mw_8_a_held_lock_makes_every_shared_change_time_out_and_change_nothing(ops, kind, wait, redis_server):
    """MW-8, WRP-1, MW-6: while another writer holds the lock, every shared change raises LockTimeoutError and changes nothing; afterwards each goes through."""
    import threading

    where = folder()
    try:
        shared_store = sm.MemoryStore(lock_wait=wait)

        def store():
            return {
                "json": lambda: sm.JsonFileStore(where / "m.json", lock_wait=wait),
                "sqlite": lambda: sm.SqliteStore(where / "m.db", lock_wait=wait),
                "memory": lambda: shared_store,
                "redis": lambda: sm.RedisStore(url=redis_server.url, key=where.name, lock_wait=wait),
            }[kind]()

        writer = sm.create_memory(store=store(), autosave=True, shared=True, clock=lambda: T0)
        writer.remember("seed", 1)
        alone = sm.create_memory(autosave=True, clock=lambda: T0)
        alone.remember("seed", 1)
        held, done = threading.Event(), threading.Event()
        other = store()

        def hold() -> None:
            with other.lock():
                held.set()
                done.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(30)
            for operation in ops:
                if operation[0] == "wait":
                    continue
                before = writer.state
                with pytest.raises(sm.LockTimeoutError):
                    apply(writer, operation, [0])
                assert writer.state is before
        finally:
            done.set()
            holder.join()
        for operation in ops:  # the same changes, once the lock is free again
            apply(writer, operation, [0])
            apply(alone, operation, [0])
        final = sm.create_memory(store=store(), clock=lambda: T0)
        fields = lambda m: [(e.key, e.data, e.importance, e.expires_at) for e in m.get_recent(10**6)]
        assert fields(final) == fields(alone) and final.working.get() == alone.working.get()
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="module")
def replica_able_redis(tmp_path_factory):
    """A redis-server of this module's own, which a test may turn into a read-only replica and back."""
    import redis

    from support import RedisServer

    try:
        server = RedisServer(tmp_path_factory.mktemp("replica")).start()
    except FileNotFoundError:
        if os.environ.get("CI"):
            raise
        pytest.skip("redis-server is not installed here (make test installs it)")
    yield server, redis.Redis.from_url(server.url)
    server.stop()


@settings(max_examples=15, deadline=None)
@given(ops=operations.filter(lambda ops: any(op[0] not in ("wait", "compact", "forget") for op in ops)))
def test_rds_6_a_read_only_redis_refuses_every_change_and_changes_nothing(ops, replica_able_redis):
    """RDS-6, WRP-1, MW-6: on a read-only replica every shared change that writes raises StoreError and changes nothing; once it takes writes, the same changes land."""
    server, admin = replica_able_redis
    key = uuid.uuid4().hex
    writer = sm.create_memory(
        store=sm.RedisStore(url=server.url, key=key), autosave=True, shared=True, clock=lambda: T0
    )
    alone = sm.create_memory(autosave=True, clock=lambda: T0)
    admin.execute_command("REPLICAOF", "127.0.0.1", "1")
    try:
        for operation in ops:
            before = writer.state
            try:
                apply(writer, operation, [0])
            except sm.StoreError as error:
                assert not isinstance(error, sm.StoreConnectionError) and error.operation in ("save", "lock")
                assert type(error.__cause__).__module__.startswith("redis")
            assert writer.state is before  # a lock or a save was refused, or it changed nothing
    finally:
        admin.execute_command("REPLICAOF", "NO", "ONE")
    for operation in ops:
        apply(writer, operation, [0])
        apply(alone, operation, [0])
    final = sm.create_memory(store=sm.RedisStore(url=server.url, key=key), clock=lambda: T0)
    fields = lambda m: [(e.key, e.data, e.importance, e.expires_at) for e in m.get_recent(10**6)]
    assert fields(final) == fields(alone) and final.working.get() == alone.working.get()


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 3), operations.map(lambda o: o[:1]).filter(bool)), max_size=10))
def test_fld_3_a_users_memories_opened_per_request_in_any_interleaving_lose_nothing(ops):
    """FLD-3, WRP-5, MW-6: handles of one user's memory, kept or opened afresh per request (and closed with `with`), in any order: no ConflictError, nothing lost."""
    where = folder()
    try:
        users = sm.MemoryFolder(where, clock=lambda: T0)
        handles = [users.open("carol"), users.open("carol")]
        alone = sm.create_memory(autosave=True, clock=lambda: T0)
        for who, (operation,) in ops:
            if who < len(handles):
                apply(handles[who], operation, [0])
            else:
                with users.open("carol") as request:  # a memory per request
                    apply(request, operation, [0])
            apply(alone, operation, [0])
        final = users.open("carol")
        fields = lambda m: [(e.key, e.data, e.importance, e.expires_at) for e in m.get_recent(10**6)]
        assert fields(final) == fields(alone) and final.working.get() == alone.working.get()
    finally:
        shutil.rmtree(where, ignore_errors=True)


@settings(max_examples=5, deadline=None)
@given(saves=st.integers(1, 3), kind=st.sampled_from(["json", "sqlite"]))
def test_mw_9_a_child_forked_while_a_thread_holds_the_lock_writes_and_so_does_the_parent(saves, kind):
    """MW-9, MW-8: fork while another thread holds the store's lock; once it lets go, the child's and the parent's shared saves all land."""
    import threading
    import time

    where = folder()
    try:
        make = {
            "json": lambda: sm.JsonFileStore(where / "m.json", lock_wait=5),
            "sqlite": lambda: sm.SqliteStore(where / "m.db", lock_wait=5),
        }[kind]
        store = make()
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with store.lock():
                held.set()
                release.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(30)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                time.sleep(0.1)
                child = sm.create_memory(store=store, autosave=True, shared=True, clock=lambda: T0)
                for i in range(saves):
                    child.remember(f"child:{i}", i)
                code = 0
            finally:
                os._exit(code)
        release.set()
        holder.join()
        parent = sm.create_memory(store=make(), autosave=True, shared=True, clock=lambda: T0)
        for i in range(saves):
            parent.remember(f"parent:{i}", i)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert len(sm.create_memory(store=make(), clock=lambda: T0)) == 2 * saves
    finally:
        shutil.rmtree(where, ignore_errors=True)
