"""Many writers at once: threads on one memory, processes on one file (MW-2 .. MW-6).

Each scenario is the one a bot runs into: worker threads sharing a memory,
gunicorn-style processes autosaving into one file or database, and a writer
killed while it holds the lock.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time

import pytest

import sentinel_memory as sm
from sentinel_memory.testing import in_processes
from support import T0

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX fork and flock")

STORES = {
    "memory": lambda tmp_path: sm.MemoryStore(),
    "json": lambda tmp_path: sm.JsonFileStore(tmp_path / "memory.json"),
    "sqlite": lambda tmp_path: sm.SqliteStore(tmp_path / "memory.db"),
}


@pytest.fixture
def tiny_switch_interval():
    """Switch threads every 10 microseconds (500 times as often as usual), so that interleavings happen everywhere."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


# A whole-file store rewrites everything on each save, so it gets fewer calls.
# "none" is the memory alone, no autosave; SqliteStore saves each change as it
# comes, so it takes the full load with autosave on.
@pytest.mark.parametrize(("kind", "calls"), [("none", 1000), ("sqlite", 1000), ("json", 150)])
def test_mw_5_eight_threads_of_mixed_calls_lose_nothing(tmp_path, tiny_switch_interval, kind, calls):
    """MW-5, WRP-1: 8 threads x mixed calls on one (autosaving) memory: nothing lost, nothing forgotten comes back, in memory or in the store."""
    store = STORES.get(kind, STORES["memory"])(tmp_path)
    mem = sm.create_memory(store=store, autosave=kind != "none", limit=100_000, clock=lambda: T0)
    kept: dict[str, object] = {}
    forgotten: set[str] = set()
    last_working: dict[str, int] = {}
    errors: list[BaseException] = []
    record = threading.Lock()

    def worker(n: int) -> None:
        rng = random.Random(n)
        mine: list[str] = []
        try:
            for i in range(calls):
                roll = rng.random()
                if roll < 0.45:
                    key = f"t{n}:{i}"
                    mem.remember(key, {"thread": n, "i": i}, importance=rng.choice([0.1, 0.5, 0.9]))
                    mine.append(key)
                elif roll < 0.6 and mine:
                    key = mine.pop(rng.randrange(len(mine)))
                    assert mem.forget(key)
                    with record:
                        forgotten.add(key)
                elif roll < 0.7:
                    mem.working.set({f"t{n}": i})
                    with record:
                        last_working[f"t{n}"] = i
                elif roll < 0.8:
                    ctx = mem.get_context(token_budget=200, query=f"t{n}")
                    assert ctx.tokens <= 200
                elif roll < 0.9:
                    mem.recall(f"t{n} thread")
                else:
                    mem.cache.put(f"c{n}", i)
                    assert mem.cache.get(f"c{n}") == i
            with record:
                kept.update({key: {"thread": n, "i": int(key.split(":")[1])} for key in mine})
        except BaseException as error:  # reported in the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    live = {e.key: e.data for e in mem.get_recent(10**6)}
    assert live == kept  # every kept key is there, no forgotten key came back
    assert not forgotten & set(live)
    assert mem.working.get() == last_working
    stats = mem.stats()
    assert stats["size"] == stats["stored"] == len(kept)
    print(f"\nthreads ({kind}): 8 x {calls} mixed calls, {len(kept)} kept, {len(forgotten)} forgotten; 0 lost")
    if kind == "none":
        return
    saved = store.load()
    assert saved == sm.core.to_document(mem.state, generation=mem.generation)
    assert {e["key"] for e in saved["entries"]} == set(kept)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_mw_6_four_processes_autosave_into_one_store_and_lose_nothing(tmp_path, kind):
    """MW-6, MW-3: 4 processes x 100 autosaved remembers, the documented way (shared=True), end with exactly 400 entries."""
    path = tmp_path / ("memory.json" if kind == "json" else "memory.db")
    store_type = sm.JsonFileStore if kind == "json" else sm.SqliteStore

    def write(worker: int) -> None:
        mem = sm.create_memory(store=store_type(path), autosave=True, shared=True, limit=10_000)
        for i in range(100):
            mem.remember(f"p{worker}:{i}", {"worker": worker, "i": i})

    assert in_processes(4, write) == [0, 0, 0, 0]
    final = sm.create_memory(store=store_type(path), limit=10_000)
    assert final.size() == 400 and final.generation == 400
    assert {e.key for e in final.get_recent(10**6)} == {f"p{w}:{i}" for w in range(4) for i in range(100)}
    print(f"\nprocesses ({kind}): 4 x 100 shared autosaved remembers, {final.size()} of 400 stored; 0 lost")


def test_mw_6_a_transaction_reads_modifies_and_writes_without_conflicts(tmp_path):
    """MW-6: counters incremented in transactions by 4 processes end at exactly the number of increments."""
    path = tmp_path / "memory.json"

    def count(worker: int) -> None:
        mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
        for _ in range(25):
            with mem.transaction():
                mem.remember("visits", mem.get("visits", 0) + 1)

    assert in_processes(4, count) == [0, 0, 0, 0]
    assert sm.create_memory(store=sm.JsonFileStore(path)).get("visits") == 100


def test_mw_6_a_transaction_refuses_to_drop_unsaved_changes(tmp_path, make):
    """MW-6: with autosave off, a transaction that finds the store moved on raises ConflictError rather than reload over unsaved changes."""
    store = sm.JsonFileStore(tmp_path / "memory.json")
    mine, theirs = make(store=store), make(store=store)
    mine.remember("unsaved", "mine")
    theirs.remember("saved", "theirs")
    theirs.save()
    with pytest.raises(sm.ConflictError):
        with mine.transaction():
            pass
    assert mine.has("unsaved")


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_mw_2_a_writer_killed_holding_the_lock_does_not_block_the_next(tmp_path, kind):
    """MW-2, PER-15: the kernel releases the lock of a process killed while holding it; the next save goes through at once."""
    path = tmp_path / ("memory.json" if kind == "json" else "memory.db")
    store_type = sm.JsonFileStore if kind == "json" else sm.SqliteStore
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            with store_type(path).lock():
                os.write(write_end, b"locked")
                time.sleep(60)
        finally:
            os._exit(0)
    os.close(write_end)
    assert os.read(read_end, 6) == b"locked"
    os.close(read_end)
    saved = threading.Event()

    def save() -> None:
        sm.create_memory(store=store_type(path), autosave=True).remember("after", "the kill")
        saved.set()

    waiter = threading.Thread(target=save, daemon=True)
    waiter.start()
    assert not saved.wait(0.3)  # held: the save waits
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert saved.wait(10)
    assert sm.create_memory(store=store_type(path)).get("after") == "the kill"


def test_mw_4_sqlite_and_json_stores_hold_the_same_memory(tmp_path):
    """MW-4, MW-7: the same autosaved changes give the same document from SqliteStore (incremental) as from JsonFileStore (whole)."""
    clock = [T0]
    memories = [
        sm.create_memory(store=store, autosave=True, limit=20, clock=lambda: clock[0])
        for store in (sm.JsonFileStore(tmp_path / "m.json"), sm.SqliteStore(tmp_path / "m.db"))
    ]
    rng = random.Random(4)
    for step in range(300):
        key, roll = f"k{rng.randrange(30)}", rng.random()
        importance, ttl = (round(rng.random(), 2) if step % 3 else None), rng.choice([None, 5, 50])
        for mem in memories:
            if roll < 0.6:
                mem.remember(key, {"step": step, "text": "ž😀"}, importance=importance, ttl=ttl)
            elif roll < 0.75:
                mem.forget(key)
            elif roll < 0.85:
                mem.working.set({"step": step})
            elif roll < 0.9:
                mem.compact()
            else:
                mem.cache.put(key, step)
        clock[0] += rng.choice([0, 1, 7, -3])
    documents = [json.loads(json.dumps(mem.store.load())) for mem in memories]
    assert documents[0] == documents[1]


def _child_exit_code(pid: int, deadline: float = 20.0) -> int:
    """The forked child's exit code; a child still running after ``deadline`` seconds (waiting on a lock its fork
    kept) is killed, and the test fails saying so instead of waiting for it for good."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child was still waiting after {deadline:g} s: did the fork keep a lock held?")


def test_mw_9_a_process_forked_while_a_thread_holds_the_lock_does_not_keep_it(tmp_path):
    """MW-9, MW-8: a child forked while another thread holds the file's lock lets go of its copy: parent and child both lock again."""
    path = tmp_path / "memory.json"
    store = sm.JsonFileStore(path, lock_wait=5)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.lock():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    pid = os.fork()
    if pid == 0:  # the child: the holding thread is not here
        code = 1
        try:
            time.sleep(0.2)  # the parent's thread lets go meanwhile
            sm.JsonFileStore(path, lock_wait=5).save({"version": 1, "entries": []})
            with store.lock():  # the inherited store object, started afresh
                code = 0
        finally:
            os._exit(code)
    try:
        release.set()
        holder.join()
        with sm.JsonFileStore(path, lock_wait=5).lock():  # the parent locks while the child may still live
            pass
    finally:  # a child that kept the lock is ended either way, so it outlives neither the test nor its output
        code = _child_exit_code(pid)
    assert code == 0


def test_mw_9_a_fork_waits_for_a_sidecar_being_opened():
    """MW-9: a fork waits while a sidecar's descriptor is being opened and noted, so no child inherits one its lock does not know of."""
    from sentinel_memory.stores import locking

    events: list[str] = []
    locking._OPENING.acquire()  # as a thread between opening a sidecar and noting its descriptor

    def finish_opening() -> None:
        time.sleep(0.3)
        events.append("noted")
        locking._OPENING.release()

    opener = threading.Thread(target=finish_opening)
    opener.start()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if not locking._OPENING.locked() else 1)
    events.append("forked")
    code = _child_exit_code(pid)
    opener.join()
    assert events == ["noted", "forked"]
    assert code == 0  # the child can open sidecars: the fork let go of the lock
    assert not locking._OPENING.locked()
