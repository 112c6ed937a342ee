"""An autosave sends only a change when the store holds exactly the memory's last saved state, and the whole memory otherwise (MW-4)."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from support import T0


def raw(key, importance=0.5) -> dict:
    return {"key": key, "data": key, "importance": importance, "createdAt": T0, "updatedAt": T0, "expiresAt": None}


class Counting(sm.SqliteStore):
    """A SqliteStore that counts whole and incremental saves."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.whole = self.incremental = 0

    def save(self, document) -> None:
        self.whole += 1
        super().save(document)

    def save_changes(self, changes) -> None:
        self.incremental += 1
        super().save_changes(changes)


def held(store, mem) -> bool:
    """The store holds exactly what the memory would save now (MW-4)."""
    return sm.SqliteStore(store.path).load() == core.to_document(mem.state, generation=mem.generation)


def test_mw_4_after_a_lossy_load_the_first_autosave_is_a_whole_save(tmp_path):
    """MW-4, PER-14: a load that dropped an invalid entry leaves the store out of step; the next autosave sends everything, then changes again."""
    store = Counting(tmp_path / "memory.db")
    store.save({"version": 1, "entries": [raw("good"), raw("bad", importance=2), raw("also good")]})
    with pytest.warns(sm.LoadWarning, match="dropped 1 invalid"):
        mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0)
    store.whole = 0
    mem.remember("new", "entry")
    assert (store.whole, store.incremental) == (1, 0) and held(store, mem)
    mem.remember("newer", "entry")
    mem.forget("good")
    assert (store.whole, store.incremental) == (1, 2) and held(store, mem)


changes = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.sampled_from(["a", "b", "good", "bad", "chat:1"])),
        st.tuples(st.just("forget"), st.sampled_from(["a", "good", "bad"])),
        st.tuples(st.just("working"), st.sampled_from(["refund", "cart"])),
        st.tuples(st.just("clear"), st.none()),
        st.tuples(st.just("reload"), st.none()),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60)
@given(steps=changes, invalid=st.integers(0, 2), limit=st.sampled_from([2, 3, 1000]))
def test_mw_4_after_every_autosave_the_store_holds_the_memory(tmp_path_factory, steps, invalid, limit):
    """MW-4, PER-8, PER-11, PER-14: whatever a load lost (invalid entries, a smaller limit) and whatever follows, every autosave, incremental or whole, leaves the store holding the memory."""
    store = sm.SqliteStore(tmp_path_factory.mktemp("sync") / "memory.db")
    bad = [raw(f"bad{i}", importance=2) for i in range(invalid)]
    store.save({"version": 1, "entries": [raw("good"), *bad, raw("kept", 0.9), raw("other", 0.7)]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.LoadWarning)
        mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0, limit=limit)
        for kind, argument in steps:
            saved = mem.generation
            if kind == "remember":
                mem.remember(argument, {"v": argument})
            elif kind == "forget":
                mem.forget(argument)
            elif kind == "working":
                mem.working.set({"task": argument})
            elif kind == "clear":
                mem.clear()
            else:
                mem.load()
            assert store.generation() == mem.generation
            if mem.generation != saved and kind != "reload":  # this step saved
                assert held(store, mem), kind
        mem.remember("last", "change")
        assert held(store, mem)
    store.close()
