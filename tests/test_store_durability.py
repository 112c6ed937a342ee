"""SqliteStore's durability promises, by what a user sees: the pragmas read back, half-done saves, other versions (MW-7)."""

from __future__ import annotations

import sqlite3

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from support import T0

#: SQLite's number for ``synchronous=FULL`` (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA).
FULL = 2


def saved(tmp_path, **options):
    """A SqliteStore holding two entries and a working memory, and the autosaving memory that wrote them."""
    store = sm.SqliteStore(tmp_path / "data" / "memory.db")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0, **options)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("user:allergy", {"what": "peanuts"}, importance=1.0)
    mem.working.set({"task": "refund"})
    return store, mem


def on_disk(store):
    """What a fresh store on the same file loads: the committed document, read as another process would."""
    return sm.SqliteStore(store.path).load()


def test_mw_7_the_connection_syncs_fully_and_the_database_is_in_wal_mode(tmp_path):
    """MW-7: a store's connection runs synchronous=FULL, and the database file itself is in WAL mode for every reader."""
    store, _ = saved(tmp_path)
    assert store._connection.execute("PRAGMA synchronous").fetchone()[0] == FULL
    other = sqlite3.connect(store.path)  # the journal mode is kept in the file, not the connection
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()
    reopened = sm.SqliteStore(store.path)
    assert reopened.generation() == 3
    assert reopened._connection.execute("PRAGMA synchronous").fetchone()[0] == FULL


def test_mw_7_a_whole_save_that_fails_half_way_commits_nothing(tmp_path):
    """MW-7, WRP-1: a whole save whose rows fail after the old ones were deleted rolls back; a reload has the old memory."""
    store, mem = saved(tmp_path)
    before = on_disk(store)
    half_done = core.to_document(mem.state, generation=mem.generation + 1)
    half_done["entries"].append(dict(half_done["entries"][0]))  # the same key again: the second INSERT fails
    with pytest.raises(sqlite3.IntegrityError):
        store.save(half_done)
    assert on_disk(store) == before and store.generation() == mem.generation
    mem.remember("after", "the failed save")  # the store still takes the next save
    assert [e["key"] for e in on_disk(store)["entries"]] == ["user:name", "user:allergy", "after"]


@pytest.mark.parametrize("change", ["remember", "forget", "working", "save"])
def test_mw_7_a_save_that_fails_after_its_rows_commits_nothing(tmp_path, monkeypatch, change):
    """MW-4, MW-7, WRP-1: a save (incremental or whole) failing after writing its rows leaves the store and the memory as they were."""
    store, mem = saved(tmp_path)
    before, state = on_disk(store), mem.state

    def fail(*args):
        raise OSError("the disk went away after the rows were written")

    monkeypatch.setattr(store, "_set_meta", fail)
    with pytest.raises(OSError, match="went away"):
        {
            "remember": lambda: mem.remember("new", "entry"),
            "forget": lambda: mem.forget("user:name"),
            "working": lambda: mem.working.set({"step": 2}),
            "save": mem.save,
        }[change]()
    assert mem.state is state
    assert on_disk(store) == before and store.generation() == mem.generation == 3


@pytest.mark.parametrize(
    ("name", "value"),
    [("version", 2), ("version", "1"), ("format", "someone-else"), ("format", None)],
)
def test_mw_7_a_database_of_another_format_version_is_refused_and_never_written(tmp_path, name, value):
    """MW-7, PER-5: meta of another version or format raises DamagedStoreError on load and save, and the file keeps its bytes."""
    store, _ = saved(tmp_path)
    store.close()
    with sqlite3.connect(store.path) as other:
        if value is None:
            other.execute("DELETE FROM sentinel_memory_meta WHERE name = ?", (name,))
        else:
            other.execute("UPDATE sentinel_memory_meta SET value = ? WHERE name = ?", (value, name))
    other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file, so its bytes say it all
    other.close()
    before = store.path.read_bytes()
    for fresh in (sm.SqliteStore(store.path), store):
        with pytest.raises(sm.DamagedStoreError, match=r"version|format"):
            fresh.load()
        with pytest.raises(sm.DamagedStoreError):
            fresh.save({"version": 1, "entries": []})
        with pytest.raises(sm.DamagedStoreError):
            sm.create_memory(store=fresh)
        fresh.close()
    assert store.path.read_bytes() == before
    assert (
        not store.path.with_name("memory.db-wal").exists() or not store.path.with_name("memory.db-wal").stat().st_size
    )
