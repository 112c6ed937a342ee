"""RedisStore against a real redis-server: layout, atomic compare-and-set, many app servers, a crash, idle expiry (RDS-1 .. RDS-5)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
import redis

import sentinel_memory as sm
from sentinel_memory.testing import in_processes
from support import T0, RedisServer


def test_rds_1_one_hash_of_entries_and_one_of_meta_in_one_slot(redis_client):
    """RDS-1: entries are fields of one hash, the rest a meta hash; both keys share the {key} hash tag."""
    store = sm.RedisStore(redis_client, key="user-42")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.working.set({"task": "refund"})
    assert sorted(redis_client.keys("*")) == [b"sentinel-memory:{user-42}:entries", b"sentinel-memory:{user-42}:meta"]
    ord_, record = json.loads(redis_client.hget(store.entries_key, "user:name"))
    assert record == mem.get_entry("user:name").to_dict() and ord_ == 0
    meta = redis_client.hgetall(store.meta_key)
    assert (meta[b"version"], meta[b"generation"]) == (b"1", b"2")
    assert json.loads(meta[b"working"])["data"] == {"task": "refund"}


def test_rds_2_an_autosaved_remember_writes_only_its_entry(redis_client):
    """RDS-2, MW-4: into a memory of 300 entries, one autosaved remember runs one script that sets one entry field."""
    store = sm.RedisStore(redis_client, key="big")
    mem = sm.create_memory(store=store, limit=1000, clock=lambda: T0)
    for i in range(300):
        mem.remember(f"k{i}", i)
    mem.save()
    mem = sm.create_memory(store=store, autosave=True, limit=1000, clock=lambda: T0)
    before = {k: v for k, v in redis_client.hgetall(store.entries_key).items()}
    redis_client.config_resetstat()
    mem.remember("new", "entry")
    stats = redis_client.info("commandstats")
    assert stats["cmdstat_evalsha"]["calls"] == 1 and "cmdstat_del" not in stats
    after = redis_client.hgetall(store.entries_key)
    assert {k: v for k, v in after.items() if k != b"new"} == before and len(after) == 301


def test_rds_2_two_writers_from_one_generation_exactly_one_wins(redis_client):
    """RDS-2, MW-3: two memories on two connections load generation 1 and save: one succeeds, the other gets ConflictError."""
    sm.create_memory(store=sm.RedisStore(redis_client, key="duel")).save()
    url = f"redis://127.0.0.1:{redis_client.connection_pool.connection_kwargs['port']}/0"
    first = sm.create_memory(store=sm.RedisStore(url=url, key="duel"), clock=lambda: T0)
    second = sm.create_memory(store=sm.RedisStore(url=url, key="duel"), clock=lambda: T0)
    first.remember("a", 1)
    second.remember("b", 2)
    outcomes = []
    for mem in (second, first):
        try:
            mem.save()
            outcomes.append("saved")
        except sm.ConflictError:
            outcomes.append("conflict")
    assert outcomes == ["saved", "conflict"]
    assert list(sm.create_memory(store=sm.RedisStore(redis_client, key="duel"))) == ["b"]


def test_rds_3_two_app_servers_with_two_workers_each_lose_nothing(redis_server, redis_client):
    """RDS-3, MW-6: 4 processes (2 app servers x 2 workers) x 100 autosaved remembers into one user's memory: exactly 400 entries."""

    def worker(number: int) -> None:
        server, slot = divmod(number, 2)
        users = sm.RedisMemories(url=redis_server.url, autosave=True, shared=True, limit=10_000)
        mem = users.open("user-7", clock=lambda: T0 + number)
        for i in range(100):
            mem.remember(f"server{server}:worker{slot}:{i}", i)

    assert in_processes(4, worker) == [0, 0, 0, 0]
    final = sm.RedisMemories(redis_client, limit=10_000).open("user-7")
    assert len(final) == 400 and final.generation == 400


def test_rds_4_idle_memories_expire_and_entry_ttls_stay_the_librarys(redis_client):
    """RDS-4: with idle_ttl the keys expire after that long without a save; an entry ttl sets no Redis ttl."""
    store = sm.RedisStore(redis_client, key="idle", idle_ttl=300)
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    mem.remember("cart", "2 items", ttl=60_000)
    assert 0 < redis_client.pttl(store.meta_key) <= 300 and 0 < redis_client.pttl(store.entries_key) <= 300
    time.sleep(0.4)
    assert store.load() is None
    plain = sm.RedisStore(redis_client, key="no-idle")
    sm.create_memory(store=plain, autosave=True, clock=lambda: T0).remember("cart", "2 items", ttl=1)
    assert redis_client.pttl(plain.meta_key) == -1 and redis_client.pttl(plain.entries_key) == -1


def test_rds_5_a_server_that_is_down_is_a_typed_error_and_changes_nothing(tmp_path):
    """RDS-5, WRP-1: with the server down, load and save raise StoreConnectionError; the memory keeps its state."""
    server = RedisServer(tmp_path).start()
    try:
        mem = sm.create_memory(store=sm.RedisStore(url=server.url, key="down"), autosave=True, clock=lambda: T0)
        mem.remember("kept", 1)
        server.stop()
        before = mem.state
        with pytest.raises(sm.StoreConnectionError, match="Redis is not reachable"):
            mem.remember("lost", 2)
        assert mem.state is before and "lost" not in mem
        with pytest.raises(sm.StoreConnectionError):
            sm.create_memory(store=sm.RedisStore(url=server.url, key="down"))
        assert isinstance(sm.StoreConnectionError("x"), OSError)
    finally:
        server.stop()


def test_rds_5_a_crash_mid_run_loses_no_acknowledged_write(tmp_path):
    """RDS-5: redis-server is killed and restarted (appendonly, fsync always) while two writers autosave: every acknowledged write is there, and the writers saw typed errors and resumed."""
    server = RedisServer(tmp_path).start()
    acknowledged: list[str] = []
    errors: list[str] = []
    done = threading.Event()

    def write(name: str) -> None:
        mem = sm.create_memory(
            store=sm.RedisStore(url=server.url, key="crash"), autosave=True, shared=True, limit=10_000
        )
        i = 0
        while not done.is_set() or i < 5:
            key = f"{name}:{i}"
            try:
                mem.remember(key, i)
            except (sm.StoreConnectionError, sm.ConflictError) as error:
                errors.append(type(error).__name__)
                time.sleep(0.02)
                continue
            acknowledged.append(key)
            i += 1
            if i >= 400:
                return

    writers = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
    try:
        for thread in writers:
            thread.start()
        while len(acknowledged) < 40:
            time.sleep(0.01)
        os.kill(server.process.pid, 9)  # a crash, not a clean shutdown
        server.process.wait()
        time.sleep(0.3)
        server.start()
        restarted, count = time.monotonic(), len(acknowledged)
        while len(acknowledged) < count + 40:
            time.sleep(0.01)
        # A lease that survived the crash is freed by its holder's next call,
        # not waited out: the default lease is 30 s.
        assert time.monotonic() - restarted < 15
        done.set()
        for thread in writers:
            thread.join(timeout=60)
        stored = set(sm.create_memory(store=sm.RedisStore(url=server.url, key="crash"), limit=10_000))
        assert set(acknowledged) <= stored
        assert "StoreConnectionError" in errors
        lost = len(set(acknowledged) - stored)
        print(
            f"\nRedis killed and restarted: {len(acknowledged)} writes acked, {lost} lost, {len(errors)} typed errors"
        )
    finally:
        done.set()
        server.stop()


def test_rds_5_a_lease_a_crash_left_behind_is_released_by_its_holder(tmp_path):
    """RDS-5, RDS-3: a lease the holder could not release while Redis was down is released by its next lock(), by token, not waited out."""
    server = RedisServer(tmp_path).start()
    try:
        store = sm.RedisStore(url=server.url, key="lease", lock_timeout=60)
        other = sm.RedisStore(url=server.url, key="lease", lock_timeout=60)
        with pytest.raises(sm.StoreConnectionError), store.lock():
            os.kill(server.process.pid, 9)  # a crash while the lease is held; appendonly keeps the lease
            server.process.wait()
        server.start()
        client = redis.Redis.from_url(server.url)
        assert client.pttl(store.lock_key) > 30_000  # the lease survived the crash
        started = time.monotonic()
        with store.lock():
            assert client.exists(store.lock_key)
        assert not client.exists(store.lock_key) and time.monotonic() - started < 5
        with other.lock():  # and nobody else waits for it either
            pass
        # A lease taken by another writer since is not the holder's to release.
        client.set(store.lock_key, b"someone else", px=60_000)
        store._unreleased.append((client.lock(store.lock_key), b"the old token"))
        store._release_unreleased()
        assert client.get(store.lock_key) == b"someone else"
        client.close()
    finally:
        server.stop()


def test_rds_5_a_lease_set_just_before_the_server_went_down_is_released_too(redis_client, monkeypatch):
    """RDS-5: when Redis set the lease but the answer was lost, the store still knows the token and its next lock() releases it."""
    store = sm.RedisStore(redis_client, key="lost-answer", lock_timeout=60)
    real = redis.lock.Lock.do_acquire

    def set_then_lose_the_answer(lease, token):
        real(lease, token)
        raise redis.exceptions.ConnectionError("the answer was lost")

    monkeypatch.setattr(redis.lock.Lock, "do_acquire", set_then_lose_the_answer)
    with pytest.raises(sm.StoreConnectionError), store.lock():
        pass
    monkeypatch.undo()
    assert redis_client.pttl(store.lock_key) > 30_000  # set, and nobody knows it but the store
    started = time.monotonic()
    with store.lock():
        pass
    assert not redis_client.exists(store.lock_key) and time.monotonic() - started < 5


def test_rds_1_user_ids_map_to_keys_safely(redis_client):
    """RDS-1, FLD-1: RedisMemories keys each user by slug and hash; hostile ids stay apart and inside the prefix."""
    users = sm.RedisMemories(redis_client, autosave=True)
    for user_id in ("alice", "Alice", "../../etc/passwd", "a}b{c", ""):
        users.open(user_id).remember("user:id", user_id)
    assert [users.open(user_id)["user:id"] for user_id in ("alice", "Alice", "../../etc/passwd", "a}b{c", "")] == [
        "alice",
        "Alice",
        "../../etc/passwd",
        "a}b{c",
        "",
    ]
    keys = redis_client.keys("*")
    assert len(keys) == 10 and all(key.startswith(b"sentinel-memory:{") for key in keys)


def test_rds_2_damage_is_refused_and_left_alone(redis_client):
    """RDS-2, PER-13: meta of another version is damage: load and save raise DamagedStoreError and write nothing."""
    store = sm.RedisStore(redis_client, key="foreign")
    redis_client.hset(store.meta_key, mapping={"version": "2"})
    with pytest.raises(sm.DamagedStoreError, match="version"):
        store.load()
    with pytest.raises(sm.DamagedStoreError):
        store.save({"version": 1, "entries": []})
    assert redis_client.hgetall(store.meta_key) == {b"version": b"2"}


@pytest.mark.parametrize("where", ["entry", "working"])
def test_per_13_a_value_nested_past_any_depth_is_damage_left_alone(redis_client, where):
    """PER-13, RDS-2: an entry or the working memory overwritten by another program with 100,000 brackets is damage (DamagedStoreError, not RecursionError), for the store and a memory opening it, and the hash stays as it was."""
    store = sm.RedisStore(redis_client, key="bomb")
    mem = sm.create_memory(store=store, autosave=True)
    mem.remember("user:name", "Jakub")
    mem.working.set({"step": 1})
    bomb = "[" * 100_000
    if where == "entry":
        redis_client.hset(store.entries_key, "user:name", bomb)
    else:
        redis_client.hset(store.meta_key, "working", bomb)
    before = (redis_client.hgetall(store.meta_key), redis_client.hgetall(store.entries_key))
    with pytest.raises(sm.DamagedStoreError, match="nested deeper than any memory's"):
        store.load()
    with pytest.raises(sm.DamagedStoreError, match="nested deeper than any memory's"):
        sm.create_memory(store=sm.RedisStore(redis_client, key="bomb"))
    assert (redis_client.hgetall(store.meta_key), redis_client.hgetall(store.entries_key)) == before


def test_redis_is_an_optional_dependency():
    """DEP-1: redis-py is in the [redis] extra, not a runtime dependency; importing the package does not import it."""
    import subprocess
    import sys

    code = "import sys, sentinel_memory; print('redis' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
    assert redis.__version__


def test_rds_2_a_first_incremental_save_holds_what_a_whole_save_holds(redis_client):
    """RDS-2, MW-4: the first autosave into an empty Redis memory (sent as changes) loads as the whole document would."""
    store = sm.RedisStore(redis_client, key="first")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    mem.remember("a", 1)
    assert store.load() == sm.core.to_document(mem.state, generation=mem.generation)


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own, so that it can be made read-only or full without touching the others."""
    server = RedisServer(tmp_path).start()
    yield server, redis.Redis.from_url(server.url)
    server.stop()


def refusing(own_redis, how: str):
    """Make the server refuse writes as a replica (replicaof a port nobody listens on) or as a full one (maxmemory, noeviction)."""
    server, admin = own_redis
    if how == "read-only":
        admin.execute_command("REPLICAOF", "127.0.0.1", "1")  # 1: no server there, so it never syncs
    else:
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", 1)  # below what any server uses: every write that may grow it is refused
    return server


@pytest.mark.parametrize(("how", "cause"), [("read-only", "ReadOnlyError"), ("full", "OutOfMemoryError")])
def test_rds_6_a_server_that_refuses_writes_is_a_store_error_and_changes_nothing(own_redis, how, cause):
    """RDS-6, WRP-1: a read-only replica or a full Redis gives StoreError naming server, operation and cause; the memory and store stay; the retry after works."""
    server, admin = own_redis
    store = sm.RedisStore(url=server.url, key="refused")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    mem.remember("before", 1)
    saved = store.load()
    refusing(own_redis, how)
    changes = [lambda: mem.remember("during", "x" * 2000)]
    if how == "read-only":  # a full Redis lets a script whose first write is a delete run on: it frees memory
        changes.append(mem.save)
    for change in changes:
        before = mem.state
        with pytest.raises(sm.StoreError) as raised:
            change()
        error = raised.value
        assert not isinstance(error, sm.StoreConnectionError) and isinstance(error, OSError)
        assert type(error.__cause__).__name__ == cause and error.operation == "save"
        assert error.server == f"127.0.0.1:{server.port}/0" and error.server in str(error) and cause in str(error)
        assert mem.state is before
    if how == "read-only":
        admin.execute_command("REPLICAOF", "NO", "ONE")
    else:
        admin.config_set("maxmemory", 0)
    assert store.load() == saved  # nothing was written
    mem.remember("during", 2)  # the retry, once the server takes writes again
    assert sm.create_memory(store=sm.RedisStore(url=server.url, key="refused")).get("during") == 2


def test_rds_6_a_listener_that_is_not_redis_is_a_store_error(tmp_path):
    """RDS-6, RDS-5: something that is not Redis on the port gives a documented store error on every operation, never a redis-py one."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def answer_like_http() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer_like_http, daemon=True)
    thread.start()
    try:
        store = sm.RedisStore(url=f"redis://127.0.0.1:{port}/0", key="not-redis")
        for operation in (store.load, store.generation, lambda: store.save({"version": 1, "entries": []})):
            with pytest.raises(sm.StoreError) as raised:
                operation()
            assert f"127.0.0.1:{port}" in str(raised.value) and raised.value.__cause__ is not None
        with pytest.raises(sm.StoreError):
            sm.create_memory(store=store)
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_per_17_a_redis_store_loads_from_a_call_stack_near_the_recursion_limit(redis_client):
    """PER-17, ENT-13: data at the nesting limit saved to Redis loads again with a few dozen frames left (the async store reads it the same way)."""
    import sys

    from support import at_depth, nest, stack_depth

    sm.create_memory(store=sm.RedisStore(redis_client, key="deep"), autosave=True).remember("blob", nest(sm.MAX_DEPTH))
    room = sys.getrecursionlimit() - stack_depth() - 40
    again = at_depth(room, lambda: sm.create_memory(store=sm.RedisStore(redis_client, key="deep")))
    assert again.get("blob") == nest(sm.MAX_DEPTH)
    document = at_depth(room, sm.RedisStore(redis_client, key="deep").load)
    assert document["entries"][0]["data"] == nest(sm.MAX_DEPTH)
