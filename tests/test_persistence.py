"""Persistence: the document, the store contract, loading rules, autosave (PER-*).

``StoreContract`` is one set of tests run against every store: each store
class below only says how to build one.
"""

from __future__ import annotations

import gc
import json
import os
import time
import warnings

import pytest

import sentinel_memory as sm
from sentinel_memory.testing import StoreSuite
from support import T0, RecordingStore, saved_then_unloaded


def sample(mem, clock):
    mem.remember("user:name", "Jakub", importance=0.9)
    clock.advance(1)
    mem.remember("user:allergy", {"what": "peanuts", "severity": 1.0}, importance=1, ttl=10_000)
    clock.advance(1)
    mem.working.set({"task": "refund", "step": 2})


class StoreContract(StoreSuite):
    """The behaviour every store must have: the kit's suite (``sentinel_memory.testing``), as any store's tests run it.

    In the manner of cachetools' shared test mixin: each store class below
    says how to build one (and, for a store that can be damaged, how to
    damage it); every test of the kit runs against each.
    """

    def snapshot(self, store) -> bytes:
        """Everything the store keeps, to show that a damaged one was left alone."""
        return store.path.read_bytes()

    def reopen(self, store):
        """The same store, opened afresh, as another process would."""
        return type(store)(store.path)


class TestMemoryStore(StoreContract):
    processes = False  # it lives in this process: its writers are threads

    def make_store(self, tmp_path):
        return sm.MemoryStore()

    def reopen(self, store):
        return store


class TestSqliteStore(StoreContract):
    def make_store(self, tmp_path):
        return sm.SqliteStore(tmp_path / "data" / "memory.db")

    def damage(self, store):
        store.path.parent.mkdir(parents=True, exist_ok=True)
        store.path.write_bytes(b"this is not a database, it only looks like a file " * 100)
        return store.path.read_bytes()

    def test_mw_7_a_foreign_sqlite_database_is_never_written(self, tmp_path, make):
        """MW-7: a SQLite database of someone else's raises DamagedStoreError and keeps its bytes and its tables."""
        import sqlite3

        path = tmp_path / "data" / "memory.db"
        path.parent.mkdir()
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE invoices (id INTEGER)")
        other.close()
        before = path.read_bytes()
        with pytest.raises(sm.DamagedStoreError, match="without sentinel-memory's tables"):
            make(store=sm.SqliteStore(path), autosave=True)
        with pytest.raises(sm.DamagedStoreError):
            sm.SqliteStore(path).save({"version": 1, "entries": []})
        assert path.read_bytes() == before

    def test_mw_4_an_autosaved_remember_writes_one_row(self, tmp_path, make, clock):
        """MW-4, MW-7: an autosaved remember into a store of many entries sends the one entry, not the memory."""
        store = self.make_store(tmp_path)
        mem = make(store=store, limit=1000)
        for i in range(200):
            mem.remember(f"k{i}", i)
        mem.save()
        mem = make(store=store, autosave=True, limit=1000)
        sent = []
        real = store.save_changes
        store.save_changes = lambda changes: (sent.append(changes), real(changes))[1]
        store.save = None  # a whole save now would fail loudly
        mem.remember("new", "entry")
        assert [(len(c.upserts), c.deletes, c.working) for c in sent] == [(1, (), None)]


class TestRedisStore(StoreContract):
    """The contract against a real redis-server (RDS-1 .. RDS-3)."""

    @pytest.fixture(autouse=True)
    def _redis(self, redis_client, redis_server):
        self.client, self.url = redis_client, redis_server.url

    def make_store(self, tmp_path):
        return sm.RedisStore(self.client, key=f"user-{tmp_path.name}")

    def reopen(self, store):
        return sm.RedisStore(url=self.url, key=store.key)

    def damage(self, store):
        self.client.hset(store.meta_key, mapping={"version": "9", "generation": "1"})
        return self.snapshot(store)

    def snapshot(self, store):
        return repr(sorted((key, self.client.dump(key)) for key in self.client.keys("*")))


class TestJsonFileStore(StoreContract):
    def make_store(self, tmp_path):
        return sm.JsonFileStore(tmp_path / "data" / "memory.json")

    def damage(self, store):
        store.path.parent.mkdir(parents=True, exist_ok=True)
        store.path.write_text('{"version": 1, "entries": [')
        return store.path.read_bytes()

    def test_per_9_atomic_write_leaves_no_temp_file(self, tmp_path, make, clock):
        """PER-9: save creates missing folders, writes the target, and leaves no temp file."""
        store = self.make_store(tmp_path)
        mem = make(store=store)
        sample(mem, clock)
        mem.save()
        assert files(tmp_path / "data") == ["memory.json"]
        assert json.loads((tmp_path / "data" / "memory.json").read_text())["version"] == 1

    def test_per_9_creates_every_missing_folder_level(self, tmp_path):
        """PER-9: a save creates several missing parent folders, not only the last one."""
        store = sm.JsonFileStore(tmp_path / "a" / "b" / "c" / "memory.json")
        store.save({"version": 1, "entries": [], "working": {"data": {}, "updatedAt": None}})
        assert store.load()["version"] == 1

    def test_per_9_fsyncs_the_temp_file_before_the_rename_and_the_folder_after(self, tmp_path, monkeypatch):
        """PER-9: the data is on disk before it replaces the target, and the rename is on disk before save returns."""
        store = self.make_store(tmp_path)
        trace = durability_trace(monkeypatch)
        store.save({"version": 1, "entries": [], "working": {"data": {}, "updatedAt": None}})
        target, folder = os.stat(store.path), os.stat(store.path.parent)
        replaced = trace.index(("replace", str(store.path)))
        assert ("fsync file", target.st_ino) in trace[:replaced]
        assert ("fsync folder", folder.st_ino) in trace[replaced + 1 :]

    def test_per_9_a_failed_fsync_never_replaces_the_target(self, tmp_path, monkeypatch):
        """PER-9: when the temp file cannot be synced, the target is not replaced and no temp file is left."""
        store = self.make_store(tmp_path)
        store.save({"version": 1, "entries": [], "working": {"data": {}, "updatedAt": None}})
        before = store.path.read_bytes()
        trace = durability_trace(monkeypatch, fail_file_fsync=True)
        with pytest.raises(OSError):
            store.save({"version": 1, "entries": [{"key": "k"}], "working": {}})
        assert not any(step[0] == "replace" for step in trace)
        assert store.path.read_bytes() == before and files(store.path.parent) == ["memory.json"]

    def test_per_9_failed_save_leaves_old_file_intact(self, tmp_path, monkeypatch):
        """PER-9: a save that fails mid-way leaves the old file byte for byte and no debris."""
        store = self.make_store(tmp_path)
        store.save({"version": 1, "entries": [], "working": {"data": {}, "updatedAt": None}})
        before = store.path.read_bytes()

        def broken_replace(src, dst):
            raise OSError("disk full")

        monkeypatch.setattr(os, "replace", broken_replace)
        with pytest.raises(OSError):
            store.save({"version": 1, "entries": [{"key": "k"}], "working": {}})
        assert store.path.read_bytes() == before
        assert files(store.path.parent) == ["memory.json"]

    def test_per_9_unwritable_document_leaves_old_file(self, tmp_path):
        """PER-9: a document that cannot be written as JSON fails before the file is touched."""
        store = self.make_store(tmp_path)
        store.save({"version": 1, "entries": []})
        before = store.path.read_bytes()
        with pytest.raises(ValueError):
            store.save({"version": 1, "entries": [float("nan")]})
        assert store.path.read_bytes() == before

    def test_per_4_missing_file_is_empty_memory(self, tmp_path, make):
        """PER-4: a missing file loads as an empty memory."""
        mem = make(store=self.make_store(tmp_path))
        assert mem.size() == 0 and mem.load() == sm.LoadResult(loaded=0, dropped=0)

    @pytest.mark.parametrize("content", ['{"version": 1, "entries": [', "not json", '{"version": 1, "entries": [NaN]}'])
    def test_per_4_damaged_file_raises_and_is_untouched(self, tmp_path, make, content):
        """PER-4, PER-13: a damaged file raises DamagedStoreError naming it, stays untouched, and the memory keeps its state."""
        store = self.make_store(tmp_path)
        store.path.parent.mkdir(parents=True)
        store.path.write_text(content)
        with pytest.raises(sm.DamagedStoreError):
            make(store=store)
        mem = make(store=store, load=False)
        mem.remember("k", "v")
        with pytest.raises(sm.DamagedStoreError, match=str(store.path)) as raised:
            mem.load()
        assert isinstance(raised.value, ValueError) and raised.value.location == str(store.path)
        assert mem.get("k") == "v"
        assert store.path.read_text() == content


def files(folder) -> list[str]:
    """The files in a folder, less the save lock's sidecar file, which is there for good (PER-15)."""
    return sorted(name for name in os.listdir(folder) if not name.endswith(".lock"))


def durability_trace(monkeypatch, *, fail_file_fsync=False) -> list[tuple]:
    """Record every fsync (of a file or a folder, by inode) and every os.replace, in order."""
    import stat

    trace: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        info = os.fstat(fd)
        kind = "fsync folder" if stat.S_ISDIR(info.st_mode) else "fsync file"
        trace.append((kind, info.st_ino))
        if fail_file_fsync and kind == "fsync file":
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    def replace(src, dst):
        trace.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return trace


def document(entries, working=None):
    return {"version": 1, "entries": entries, "working": working or {"data": {}, "updatedAt": None}}


def raw(key="k", **fields):
    base = {"key": key, "data": "v", "importance": 0.5, "createdAt": T0, "updatedAt": T0, "expiresAt": None}
    base.update(fields)
    return base


def loaded(make, doc):
    """Load ``doc`` into a new memory; a LoadWarning comes exactly when the load lost entries (PER-14)."""
    store = sm.MemoryStore()
    store.save(doc)
    mem = make(store=store, load=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mem.load()
    assert [w.category for w in caught] == ([sm.LoadWarning] if result.lost else [])
    return mem, result


def test_per_1_document_shape(make, clock):
    """PER-1: save writes version 1, the article's entry JSON, and the working memory."""
    store = sm.MemoryStore()
    mem = make(store=store)
    mem.remember("user:allergy", "allergic to peanuts", importance=1)
    mem.save()
    assert store.load() == {
        "version": 1,
        "generation": 1,  # MW-1: the first save of this store
        "entries": [
            {
                "key": "user:allergy",
                "data": "allergic to peanuts",
                "importance": 1,
                "createdAt": T0,
                "updatedAt": T0,
                "expiresAt": None,
            }
        ],
        "working": {"data": {}, "updatedAt": None},
    }


def test_per_2_default_store_is_a_memory_store():
    """PER-2: without a store, a memory gets its own MemoryStore."""
    assert isinstance(sm.create_memory().store, sm.MemoryStore)


def test_per_2_custom_store_object(make, clock):
    """PER-2: any object with load() and save(document) is a store."""

    class DictStore:
        def __init__(self):
            self.document = None

        def load(self):
            return self.document

        def save(self, document):
            self.document = document

    store = DictStore()
    mem = make(store=store, autosave=True)
    mem.remember("k", "v")
    assert store.document["entries"][0]["key"] == "k"


def test_per_3_load_false_and_load_keeps_cache_and_counters(make, clock):
    """PER-3: load=False skips the initial load; load() replaces entries, keeps cache and counters."""
    store = sm.MemoryStore()
    store.save(document([raw("stored")]))
    mem = make(store=store, load=False, limit=1)
    assert mem.size() == 0
    mem.remember("a", 1)
    mem.remember("b", 2)  # one eviction
    mem.cache.put("c", 3)
    assert mem.load() == sm.LoadResult(loaded=1, dropped=0)
    assert [e.key for e in mem.get_recent()] == ["stored"]
    assert mem.cache.get("c") == 3 and mem.stats()["evicted"] == 1


@pytest.mark.parametrize(
    "doc",
    [
        [],
        "text",
        {"entries": []},
        {"version": 2, "entries": []},
        {"version": True, "entries": []},
        {"version": 1},
        {"version": 1, "entries": {"k": {}}},
    ],
)
def test_per_5_bad_document_is_a_value_error(make, doc):
    """PER-5: a non-object, a missing or unknown version, or entries not a list raise ValueError."""
    store = sm.MemoryStore()
    store.save(doc)
    mem = make(store=store, load=False)
    mem.remember("k", "v")
    with pytest.raises(ValueError):
        mem.load()
    assert mem.get("k") == "v"


@pytest.mark.parametrize(
    "bad",
    [
        raw(importance=2),
        raw(importance=True),
        raw(importance="0.5"),
        raw(key=""),
        raw(key=7),
        raw(expiresAt="soon"),
        raw(createdAt=None),
        raw(updatedAt="now"),
        {k: v for k, v in raw().items() if k != "data"},
        "not an entry",
    ],
)
def test_per_6_invalid_entries_are_dropped_and_counted(make, bad):
    """PER-6: an invalid entry is dropped and counted, the valid ones load."""
    mem, result = loaded(make, document([raw("good"), bad]))
    assert result == sm.LoadResult(loaded=1, dropped=1)
    assert [e.key for e in mem.get_recent()] == ["good"]


def test_per_6_duplicate_key_keeps_the_later(make):
    """PER-6: of two entries with one key the later is kept and the earlier counted as dropped."""
    mem, result = loaded(make, document([raw("k", data="first"), raw("other"), raw("k", data="second")]))
    assert result == sm.LoadResult(loaded=2, dropped=1)
    assert mem.get("k") == "second"


def test_per_6_missing_expires_at_is_valid(make):
    """PER-6: expiresAt may be missing."""
    entry = raw()
    del entry["expiresAt"]
    _, result = loaded(make, document([entry]))
    assert result.loaded == 1


@pytest.mark.parametrize(
    "working",
    [
        None,
        "x",
        {"data": [1], "updatedAt": T0},
        {"data": {"a": 1}, "updatedAt": "now"},
        {"data": {"a": 1}, "updatedAt": None},
    ],
)
def test_per_7_invalid_working_loads_empty(make, working):
    """PER-7: an invalid working memory loads as {}."""
    doc = document([])
    doc["working"] = working
    mem, _ = loaded(make, doc)
    assert mem.working.get() == {}


def test_per_8_over_limit_load_compacts_like_automatic(make, clock):
    """PER-8: loading more than limit compacts, counts, calls on_evict and autosaves."""
    store = sm.MemoryStore()
    store.save(document([raw("a", importance=0.1), raw("b", importance=0.9), raw("c", importance=0.5)]))
    seen = []
    with pytest.warns(sm.LoadWarning, match="compacted 1"):
        mem = make(store=store, limit=2, on_evict=seen.append, autosave=True)
    assert [e.key for e in seen[0].evicted] == ["a"]
    assert mem.stats()["evicted"] == 1 and mem.stats()["compactions"] == 1
    assert [e["key"] for e in store.load()["entries"]] == ["b", "c"]


def test_per_11_autosave_after_every_persisted_change(make, clock):
    """PER-11: autosave after remember, forget, clear, compaction drops and working set/clear only."""
    store = RecordingStore()
    saves = store.saves
    mem = make(store=store, autosave=True)
    steps = [
        (lambda: mem.remember("a", 1, ttl=5), 1),
        (lambda: mem.forget("nope"), 0),
        (lambda: mem.compact(), 0),  # nothing dropped
        (lambda: clock.advance(5), 0),
        (lambda: mem.compact(), 1),  # dropped the expired a
        (lambda: mem.remember("b", 2), 1),
        (lambda: mem.forget("b"), 1),
        (lambda: mem.clear(), 1),
        (lambda: mem.working.set({"x": 1}), 1),
        (lambda: mem.working.clear(), 1),
        (lambda: mem.cache.put("c", 1), 0),
        (lambda: mem.get_context(token_budget=10), 0),
    ]
    for step, expected in steps:
        before = len(saves)
        step()
        assert len(saves) - before == expected
    assert saves[-1] == sm.core.to_document(mem.state, generation=mem.generation)


def test_per_12_saved_oldest_first_and_order_restored(make, clock):
    """PER-12: entries are saved oldest first, including an overwrite, and load restores the order."""
    store = sm.MemoryStore()
    mem = make(store=store)
    for key in ("a", "b", "c"):
        mem.remember(key, key)
    mem.remember("a", "again")  # same millisecond, newer seq
    mem.save()
    assert [e["key"] for e in store.load()["entries"]] == ["b", "c", "a"]
    assert [e.key for e in make(store=store).get_recent()] == ["a", "c", "b"]


def test_per_12_saved_by_age_after_the_clock_went_back(make, clock):
    """PER-12: entries remembered after a clock went back are saved by age, oldest first, not in the order they were stored."""
    store = sm.MemoryStore()
    mem = make(store=store)
    mem.remember("stored-first", "a")
    clock.advance(-60_000)
    mem.remember("stored-second", "b")
    clock.advance(-60_000)
    mem.remember("stored-third", "c")
    mem.save()
    assert [e["key"] for e in store.load()["entries"]] == ["stored-third", "stored-second", "stored-first"]
    again = make(store=store)
    assert [e.key for e in again.get_recent()] == ["stored-first", "stored-second", "stored-third"]


def _in_oldest_generation(entry):
    return any(item is entry for item in gc.get_objects(generation=2))


def test_per_18_a_large_load_puts_what_it_made_in_the_oldest_generation(tmp_path, monkeypatch):
    """PER-18: above the threshold the loaded entries skip the young collections; the collector is on again."""
    from sentinel_memory import memory

    if gc.get_freeze_count():
        pytest.skip("this interpreter starts with frozen objects (Python 3.12), which a load never unfreezes")
    again = saved_then_unloaded(tmp_path / "memory.json", 300)
    monkeypatch.setattr(memory, "PROMOTE_AFTER_LOAD", 100)
    assert gc.isenabled()
    again.load()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert _in_oldest_generation(again._state.entries["k7"])


def test_per_18_a_small_load_leaves_the_collector_alone(tmp_path, monkeypatch):
    """PER-18: at or below the threshold nothing is moved: the loaded entries are young like any new object."""
    from sentinel_memory import memory

    again = saved_then_unloaded(tmp_path / "memory.json", 300)
    monkeypatch.setattr(memory, "PROMOTE_AFTER_LOAD", 10**9)
    gc.collect()  # no young collection is due that would move them there on its own
    again.load()
    assert gc.isenabled()
    assert not _in_oldest_generation(again._state.entries["k7"])


def test_per_18_a_load_keeps_the_apps_frozen_objects_frozen(tmp_path, monkeypatch):
    """PER-18: a process that froze objects (before forking workers) keeps them frozen across a large load."""
    from sentinel_memory import memory

    if gc.get_freeze_count():
        pytest.skip("this interpreter starts with frozen objects (Python 3.12), which the test must not unfreeze")
    again = saved_then_unloaded(tmp_path / "memory.json", 300)
    monkeypatch.setattr(memory, "PROMOTE_AFTER_LOAD", 100)
    frozen = [object()]  # a container, so the collector tracks it
    gc.freeze()
    try:
        again.load()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        assert not any(item is frozen for generation in range(3) for item in gc.get_objects(generation=generation))
    finally:
        gc.unfreeze()


def test_per_18_a_load_leaves_a_disabled_collector_disabled(tmp_path, monkeypatch):
    """PER-18: an app that turned the collector off finds it off after a load, large or not."""
    from sentinel_memory import memory

    again = saved_then_unloaded(tmp_path / "memory.json", 300)
    monkeypatch.setattr(memory, "PROMOTE_AFTER_LOAD", 100)
    gc.disable()
    try:
        again.load()
        assert not gc.isenabled()
        assert not _in_oldest_generation(again._state.entries["k7"])
    finally:
        gc.enable()


def _open_descriptors_of(path) -> int:
    """How many of this process's file descriptors point at ``path`` (Linux /proc)."""
    fds = os.listdir("/proc/self/fd")
    return sum(1 for fd in fds if os.path.realpath(f"/proc/self/fd/{fd}") == str(path.resolve()))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_wrp_5_with_releases_the_sqlite_connection_and_the_memory_goes_on(tmp_path, clock):
    """WRP-5: leaving `with create_memory(store=SqliteStore(...))` closes the database; the memory and store work again after."""
    path = tmp_path / "memory.db"
    with sm.create_memory(store=sm.SqliteStore(path), autosave=True, clock=clock) as mem:
        mem.remember("a", 1)
        assert _open_descriptors_of(path) == 1
    assert _open_descriptors_of(path) == 0
    mem.remember("b", 2)  # the step after: the store opens again
    with sm.SqliteStore(path) as store:
        assert [e["key"] for e in store.load()["entries"]] == ["a", "b"]
    mem.close()
    assert _open_descriptors_of(path) == 0


def test_wrp_5_with_closes_a_redis_client_the_store_made_and_no_other(redis_server, redis_client, clock):
    """WRP-5: a RedisStore built from a url closes its client on the way out of `with`; a client passed in stays the caller's."""

    def connections(expected: int | None = None) -> int:
        # Clients an earlier test dropped close when collected, and the server counts a close a moment
        # later: collect first, and give the count a few seconds to reach what is expected.
        deadline = time.monotonic() + 5
        while True:
            gc.collect()
            found = len(redis_client.client_list())
            if found == expected or time.monotonic() > deadline:
                return found
            time.sleep(0.01)
            if expected is None and len(redis_client.client_list()) == found:  # settled
                return found

    before = connections()
    with sm.create_memory(store=sm.RedisStore(url=redis_server.url, key="w"), autosave=True, clock=clock) as mem:
        mem.remember("a", 1)
        assert connections(before + 1) == before + 1
    assert connections(before) == before
    with sm.RedisStore(redis_client, key="w") as store:
        assert store.load()["entries"][0]["key"] == "a"
    assert redis_client.ping() and connections(before) == before


@pytest.mark.parametrize("store", [sm.MemoryStore, lambda: sm.JsonFileStore("unused.json")])
def test_wrp_5_every_store_is_a_context_manager(store):
    """WRP-5: MemoryStore and JsonFileStore hold nothing open, but take `with` like the others."""
    with store() as opened:
        assert opened.load() is None


@pytest.mark.parametrize("store", [sm.MemoryStore, lambda **o: sm.JsonFileStore("unused.json", **o)])
def test_mw_8_a_wait_longer_than_a_thread_lock_can_is_refused(store):
    """MW-8, WRP-4: lock_wait above threading.TIMEOUT_MAX raises ValueError at construction, never OverflowError later."""
    import threading

    with pytest.raises(ValueError, match="at most"):
        store(lock_wait=threading.TIMEOUT_MAX * 2)
    assert store(lock_wait=threading.TIMEOUT_MAX).lock_wait == threading.TIMEOUT_MAX


def test_per_18_a_child_forked_during_another_threads_load_collects_again():
    """PER-18, MW-9: a process forked while another thread's load has the cycle collector paused gets it back on in the child."""
    import gc
    import os
    import threading

    from sentinel_memory import memory as memory_module

    started, release = threading.Event(), threading.Event()

    def load_in_progress():
        with memory_module._cycle_collector_paused():
            started.set()
            release.wait(5)

    thread = threading.Thread(target=load_in_progress)
    thread.start()
    started.wait(5)
    try:
        pid = os.fork()
        if pid == 0:  # the child: no thread of it will ever end that pause
            os._exit(0 if gc.isenabled() and memory_module._PAUSES["count"] == 0 else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        thread.join()
    assert os.waitstatus_to_exitcode(status) == 0 and gc.isenabled()
