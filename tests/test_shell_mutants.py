"""What the mutation tool found the shared plumbing's tests let through: shell.py (PER-18, MW-6, WRP-1)."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest

import sentinel_memory as sm
from sentinel_memory import shell


class _CollectorWatch(sm.MemoryStore):
    """A MemoryStore that notes, for each call, whether the cycle collector was on while it ran."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, set[bool]] = {}

    def _note(self, name: str) -> None:
        self.seen.setdefault(name, set()).add(gc.isenabled())

    def load(self) -> Any:
        self._note("load")
        return super().load()

    def save(self, document: Any) -> None:
        self._note("save")
        super().save(document)

    def generation(self) -> int:
        self._note("generation")
        return super().generation()

    def preserve(self) -> None:
        self._note("preserve")
        super().preserve()

    def close(self) -> None:
        self._note("close")


def test_per_18_only_a_load_pauses_the_cycle_collector():
    """PER-18: a load runs with the collector paused; a save, generation, preserve and close run with it on."""
    assert gc.isenabled()
    store = _CollectorWatch()
    store.save({"version": 1, "generation": 1, "entries": [{"key": "bad"}]})
    with pytest.warns(sm.LoadWarning, match="dropped 1 invalid entries"):
        mem = sm.create_memory(store=store, autosave=True, shared=True)
    mem.remember("a", 1)  # a transaction: generation, then preserve, then the save
    mem.close()
    assert store.seen == {
        "load": {False},
        "save": {True},
        "generation": {True},
        "preserve": {True},
        "close": {True},
    }
    assert gc.isenabled()


def test_mw_4_a_clear_autosaved_to_a_store_of_changes_leaves_it_empty(tmp_path):
    """MW-4, ENT-9: clear() on a store taking save_changes removes every stored entry, alone and inside a group."""
    path = tmp_path / "memory.db"

    def stored() -> list[str]:
        with sm.create_memory(store=sm.SqliteStore(path)) as reader:
            return sorted(reader.keys())

    mem = sm.create_memory(store=sm.SqliteStore(path), autosave=True)
    mem.remember("a", 1)
    mem.remember("b", 2)
    mem.clear()
    assert stored() == []
    mem.remember("c", 3)
    with mem.group():
        mem.remember("d", 4)
        mem.clear()
    assert stored() == []
    mem.remember("e", 5)  # the step after: the next change is saved on the emptied store
    assert stored() == ["e"]
    mem.close()


class _CountingSaves(sm.MemoryStore):
    """A MemoryStore that counts its saves."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    def save(self, document: Any) -> None:
        self.saves += 1
        super().save(document)


def test_l0_2_the_caches_changes_never_autosave():
    """L0-2: cache.put, cache.delete (True for a live item, then False) and cache.clear never trigger an autosave."""
    store = _CountingSaves()
    mem = sm.create_memory(store=store, autosave=True)
    mem.cache.put("a", 1)
    mem.cache.put("b", 2)
    assert mem.cache.delete("a") is True
    assert mem.cache.delete("a") is False
    mem.cache.clear()
    assert store.saves == 0 and mem.cache.get("b") is None
    mem.remember("k", 1)  # the step after: a persisted change still saves
    assert store.saves == 1


def test_l0_2_per_21_the_caches_changes_leave_nothing_unsaved():
    """L0-2, PER-21: without autosave, the cache's changes are no unsaved change: closing does not warn."""
    mem = sm.create_memory(store=_CountingSaves())
    mem.cache.put("a", 1)
    mem.cache.delete("a")
    mem.cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mem.close()


PERSISTED = {
    "remember": lambda mem: mem.remember("mine", 1),
    "add_turn": lambda mem: mem.add_turn("user", "hello"),
    "add_message": lambda mem: mem.add_message({"role": "user", "content": "hello"}),
    "add_messages": lambda mem: mem.add_messages([{"role": "user", "content": "hello"}]),
    "forget": lambda mem: mem.forget("old"),
    "clear": lambda mem: mem.clear(),
    "compact": lambda mem: mem.compact(),
    "working.set": lambda mem: mem.working.set({"w": 1}),
    "working.clear": lambda mem: mem.working.clear(),
}


@pytest.mark.parametrize("name", list(PERSISTED))
def test_mw_6_each_persisted_change_of_a_shared_memory_reloads_first(name):
    """MW-6: with shared=True every persisted change is a transaction: it reloads what another writer saved, then saves."""
    assert set(PERSISTED) == {step for step, (_, persisted) in shell.STEPS.items() if persisted}
    store = sm.MemoryStore()
    first = sm.create_memory(store=store, autosave=True, shared=True)
    first.remember("old", 0)
    stale = sm.create_memory(store=store, autosave=True, shared=True)
    first.remember("theirs", 1)
    PERSISTED[name](stale)
    expected = set() if name == "clear" else {"theirs"}
    assert expected <= set(stale.keys())
    assert set(sm.create_memory(store=store).keys()) == set(stale.keys())


class _Recording(sm.MemoryStore):
    """A MemoryStore that lists the calls a memory makes on it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def load(self) -> Any:
        self.calls.append("load")
        return super().load()

    def generation(self) -> int:
        self.calls.append("generation")
        return super().generation()

    def lock(self) -> Any:
        self.calls.append("lock")
        return super().lock()


def test_l0_2_mw_6_the_caches_changes_in_a_shared_memory_touch_no_store():
    """L0-2, MW-6: in a shared memory cache.put, cache.delete and cache.clear are no transaction: no lock, no reload."""
    store = _Recording()
    mem = sm.create_memory(store=store, autosave=True, shared=True)
    sm.create_memory(store=store, autosave=True).remember("theirs", 1)
    store.calls.clear()
    mem.cache.put("a", 1)
    assert mem.cache.delete("a") is True
    mem.cache.clear()
    assert store.calls == [] and "theirs" not in mem.keys()
    mem.remember("mine", 1)  # the step after: a persisted change is a transaction, reloading first
    assert store.calls[0] == "lock" and "load" in store.calls and set(mem.keys()) == {"mine", "theirs"}
