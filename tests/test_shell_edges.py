"""The shared plumbing's edges: a load undone by its on_evict, a store re-created behind a memory (WRP-1, PER-21, MW-6)."""

from __future__ import annotations

import warnings

import pytest

import sentinel_memory as sm


def test_wrp_1_a_load_whose_on_evict_raises_keeps_the_unsaved_changes_counted():
    """WRP-1, PER-21: a load undone by its on_evict leaves the unsaved changes, so closing still warns of both and save() keeps them."""
    store = sm.MemoryStore()
    writer = sm.create_memory(store=store, autosave=True)
    for i in range(5):
        writer.remember(f"k{i}", i)

    def refuse(compaction: sm.Compaction) -> None:
        raise RuntimeError("on_evict failed")

    mem = sm.create_memory(store=store, limit=3, on_evict=refuse, load=False)
    mem.remember("mine", 1)
    mem.remember("mine2", 2)
    with pytest.raises(RuntimeError, match="on_evict failed"):
        mem.load()
    assert sorted(mem.keys()) == ["mine", "mine2"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem.close()
    assert [type(w.message) for w in caught] == [sm.UnsavedChangesWarning]
    assert "with 2 changes not saved" in str(caught[0].message)


def test_mw_6_a_transaction_reloads_a_store_whose_generation_went_back(tmp_path):
    """MW-6: a store re-created by another writer (its generation now lower) is reloaded by the next transaction, and saving goes on."""
    path = tmp_path / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True)
    for i in range(3):
        mem.remember(f"a{i}", i)
    path.unlink()
    other = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
    other.remember("b", 1)
    assert sm.JsonFileStore(path).generation() == 1
    with mem.transaction():
        assert sorted(mem.keys()) == ["b"]
    mem.remember("after", 1)  # the step after: the next shared change saves on the re-created store
    assert sorted(sm.create_memory(store=sm.JsonFileStore(path)).keys()) == ["after", "b"]
