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


def test_time_2_a_clock_that_returns_no_number_is_named():
    """TIME-2: a clock returning no finite number is a TypeError saying what the clock must return and what it gave."""
    reading: list[object] = [1000]
    mem = sm.create_memory(clock=lambda: reading[0], load=False)
    reading[0] = "soon"
    with pytest.raises(TypeError, match=r"^clock must return a finite number of milliseconds, got 'soon'$"):
        mem.remember("a", 1)
    reading[0] = 2000
    assert list(mem.keys()) == []
    assert mem.remember("a", 1).created_at == 2000  # the step after: the next reading is used


class _SavesBy(sm.SqliteStore):
    """A SqliteStore noting which of its two saves each autosave used."""

    def __init__(self, path: Any) -> None:
        super().__init__(path)
        self.used: list[str] = []

    def save(self, document: Any) -> None:
        self.used.append("save")
        super().save(document)

    def save_changes(self, changes: Any) -> None:
        self.used.append("save_changes")
        super().save_changes(changes)


def test_mw_1_mw_4_a_memory_never_loaded_saves_its_first_change_as_generation_1_by_its_changes(tmp_path):
    """MW-1, MW-4: a memory created without loading, on an empty store, holds what it holds: its first autosave is generation 1, sent as changes."""
    store = _SavesBy(tmp_path / "memory.db")
    with sm.create_memory(store=store, autosave=True, load=False) as mem:
        mem.remember("a", 1)
        assert store.used == ["save_changes"] and store.generation() == 1 and mem.generation == 1


def test_mw_6_a_memory_never_loaded_has_nothing_unsaved_to_lose_to_a_reload():
    """MW-6: a shared memory created without loading reloads a store another writer filled, at its first change."""
    store = sm.MemoryStore()
    sm.create_memory(store=store, autosave=True).remember("theirs", 1)
    mem = sm.create_memory(store=store, autosave=True, shared=True, load=False)
    mem.remember("mine", 1)
    assert sorted(mem.keys()) == ["mine", "theirs"] and store.generation() == 2


@pytest.mark.parametrize("load", [True, False], ids=["at-creation", "later"])
def test_per_14_a_memory_whose_load_dropped_nothing_never_preserves(load):
    """PER-14: preserve() is for a load that dropped entries: after a clean load, or none, saves never call it."""
    store = sm.MemoryStore()
    sm.create_memory(store=store, autosave=True).remember("a", 1)
    mem = sm.create_memory(store=store, autosave=True, load=load)
    if not load:
        mem.load()  # a clean load after creation
    mem.remember("b", 2)
    mem.save()
    assert store.preserved == [] and mem.last_load == sm.LoadResult(loaded=1, dropped=0)


def test_per_14_a_memory_never_loaded_has_no_last_load():
    """PER-14: last_load is None until the memory loads."""
    mem = sm.create_memory(store=sm.MemoryStore(), load=False)
    assert mem.last_load is None
    mem.load()
    assert mem.last_load == sm.LoadResult(loaded=0, dropped=0)


def test_bm_11_a_memory_constructed_directly_keeps_its_states_ranking():
    """BM-11: Memory(...) takes its options as they are: a load keeps the state's ranking, warning of the document's."""
    store = sm.MemoryStore()
    store.save({"version": 1, "ranking": "bm25", "entries": []})
    mem = sm.Memory(sm.core.MemoryState(), store=store, clock=lambda: 1000, autosave=False, on_evict=None)
    with pytest.warns(sm.RankingWarning, match="bm25"):
        mem.load()
    assert mem.stats()["ranking"] == "words"


def test_wrp_3_a_change_from_inside_on_evict_is_refused_and_the_next_change_goes_on():
    """WRP-3: on_evict changing its own memory gets ReentrantCallError; the change it was called from completes."""
    refused: list[BaseException] = []

    def evict(_: sm.Compaction) -> None:
        try:
            mem.remember("inner", 1)
        except sm.ReentrantCallError as error:
            refused.append(error)

    mem = sm.create_memory(limit=1, on_evict=evict, load=False)
    mem.remember("a", 1)
    mem.remember("b", 2)  # evicts a: on_evict runs and is refused
    assert len(refused) == 1 and list(mem.keys()) == ["b"]
    assert str(refused[0]) == (
        "a memory cannot be changed from inside its own on_evict or store save; "
        "the change in progress would overwrite it"
    )
    mem.remember("c", 3)  # the step after: a change from outside goes on
    assert len(refused) == 2 and list(mem.keys()) == ["c"]


def test_per_14_a_lossy_loads_copy_is_preserved_once():
    """PER-14: after a load that dropped entries, preserve() is called before the next save only, not at every save."""
    store = sm.MemoryStore()
    store.save({"version": 1, "generation": 1, "entries": [{"key": "bad"}]})
    with pytest.warns(sm.LoadWarning):
        mem = sm.create_memory(store=store, autosave=True)
    mem.remember("a", 1)
    mem.remember("b", 2)
    assert len(store.preserved) == 1


def test_mw_6_a_shared_tool_result_without_its_call_is_refused_by_name():
    """MSG-6, MW-6: in a shared memory nobody else wrote to, a tool result answering no open call is NoOpenCallError."""
    mem = sm.create_memory(store=sm.MemoryStore(), autosave=True, shared=True)
    with pytest.raises(sm.NoOpenCallError):
        mem.add_message({"role": "tool", "tool_call_id": "c1", "content": "42"})
    mem.remember("a", 1)  # the step after
    assert list(mem.keys()) == ["a"]


def test_mw_6_a_change_without_autosave_is_never_reloaded_over(tmp_path):
    """MW-6: a change not saved yet (autosave off) makes a transaction on a store that moved on raise ConflictError, keeping it."""
    path = tmp_path / "memory.db"
    mem = sm.create_memory(store=sm.SqliteStore(path))
    mem.remember("mine", 1)
    with sm.create_memory(store=sm.SqliteStore(path), autosave=True) as other:
        other.remember("theirs", 1)
    with pytest.raises(sm.ConflictError), mem.transaction():
        pass
    assert list(mem.keys()) == ["mine"]
    with pytest.warns(sm.UnsavedChangesWarning, match="with 1 change not saved"):
        mem.close()


class _FailingSaves(_SavesBy):
    """A ``_SavesBy`` whose next save of either kind raises when told (``fail_next``)."""

    def __init__(self, path: Any) -> None:
        super().__init__(path)
        self.fail_next = False

    def _fail(self) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")

    def save(self, document: Any) -> None:
        self._fail()
        super().save(document)

    def save_changes(self, changes: Any) -> None:
        self._fail()
        super().save_changes(changes)


def _held(store: Any) -> dict[str, Any]:
    """What a fresh memory loads from the store at ``store``'s path: its entries by key."""
    return dict(sm.create_memory(store=sm.SqliteStore(store.path)).items())


def test_mw_10_mw_4_after_an_inner_group_raised_the_outer_group_saves_its_own_changes_once(tmp_path):
    """MW-10, MW-4: an inner group that raised leaves the outer group's changes to its one save, as changes of their keys."""
    store = _SavesBy(tmp_path / "memory.db")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: 1000)
    with mem.group():
        mem.remember("outer", 1)
        with pytest.raises(ValueError), mem.group():
            mem.remember("inner", 2)
            raise ValueError
    assert store.used == ["save_changes"] and _held(store) == {"outer": 1}
    mem.remember("after", 3)  # the step after: the next change saves its own key alone
    assert store.used == ["save_changes"] * 2 and _held(store) == {"outer": 1, "after": 3}


def test_mw_10_mw_4_after_an_inner_group_raised_a_store_out_of_step_still_gets_the_whole_document(tmp_path):
    """MW-10, MW-4, BM-11: a store holding another ranking is out of step; an inner group's raise does not make the outer's save changes only."""
    store = _SavesBy(tmp_path / "memory.db")
    store.save({"version": 1, "ranking": "bm25", "entries": []})
    with pytest.warns(sm.RankingWarning):
        mem = sm.create_memory(store=store, autosave=True, ranking="words", clock=lambda: 1000)
    store.used.clear()
    with mem.group():
        mem.remember("outer", 1)
        with pytest.raises(ValueError), mem.group():
            mem.remember("inner", 2)
            raise ValueError
    assert store.used == ["save"] and "ranking" not in store.load() and _held(store) == {"outer": 1}


def test_mw_10_a_group_opened_after_a_clear_in_a_group_saves_the_whole_document(tmp_path):
    """MW-10: a clear touches keys not named (the whole document); a group nested after it opens and the outer saves everything once."""
    store = _SavesBy(tmp_path / "memory.db")
    mem = sm.create_memory(store=store, autosave=True, clock=lambda: 1000)
    mem.remember("old", 0)
    store.used.clear()
    with mem.group():
        mem.clear()
        with mem.group():
            mem.remember("new", 1)
    assert store.used == ["save"] and _held(store) == {"new": 1}


def _over_limit(path: Any, n: int) -> _FailingSaves:
    """A store at ``path`` holding ``n`` entries ``k0``, ``k1``, ..., the older the less important."""
    store = _FailingSaves(path)
    store.save(
        {
            "version": 1,
            "entries": [
                {"key": f"k{i}", "data": i, "importance": 0.1 * (i + 1), "createdAt": 1000, "updatedAt": 1000}
                for i in range(n)
            ],
        }
    )
    store.used.clear()
    return store


def test_mw_10_per_8_a_load_in_a_group_that_compacted_is_saved_whole_when_the_group_ends(tmp_path):
    """MW-10, PER-8: a load inside a group that compacted to fit the limit saves the compacted document once, at the group's end."""
    store = _over_limit(tmp_path / "memory.db", 3)
    mem = sm.create_memory(store=store, autosave=True, limit=2, load=False, clock=lambda: 1000)
    with mem.group():
        with pytest.warns(sm.LoadWarning, match="compacted 1 to fit limit=2"):
            mem.load()
        assert store.used == []
    assert store.used == ["save"] and _held(store) == {"k1": 1, "k2": 2}


def test_mw_10_a_clean_load_in_a_group_saves_nothing():
    """MW-10: a load inside a group that dropped nothing leaves nothing for the group to save."""
    store = sm.MemoryStore()
    sm.create_memory(store=store, autosave=True).remember("a", 1)
    mem = sm.create_memory(store=store, autosave=True, load=False)
    with mem.group():
        mem.load()
    assert store.generation() == 1 and dict(mem.items()) == {"a": 1}


def test_mw_10_mw_4_after_the_save_of_a_compacting_load_failed_the_next_change_sends_the_whole_document(tmp_path):
    """MW-10, MW-4: when a group's save of a load's compaction raises, the store is out of step: the next change saves everything."""
    store = _over_limit(tmp_path / "memory.db", 3)
    mem = sm.create_memory(store=store, autosave=True, limit=2, load=False, clock=lambda: 1000)
    store.fail_next = True
    with pytest.raises(OSError, match="disk full"), mem.group():
        with pytest.warns(sm.LoadWarning, match="compacted 1 to fit limit=2"):
            mem.load()
    assert sorted(mem.keys()) == ["k1", "k2"] and store.used == []
    mem.remember("k2", 20, importance=1)
    assert store.used == ["save"] and _held(store) == {"k1": 1, "k2": 20}


@pytest.mark.parametrize("change", ["remember", "compacting load"])
def test_mw_6_mw_10_a_transaction_inside_a_group_refuses_to_reload_over_the_groups_unsaved_change(tmp_path, change):
    """MW-6, MW-10: a group's deferred change is unsaved; a transaction in the group after another writer's save raises ConflictError, losing nothing."""
    store = _over_limit(tmp_path / "memory.db", 2 if change == "remember" else 3)
    mem = sm.create_memory(store=store, autosave=True, limit=2, clock=lambda: 1000, load=change == "remember")
    other = sm.create_memory(store=sm.SqliteStore(store.path), autosave=True, limit=5, clock=lambda: 1000)
    with pytest.raises(sm.ConflictError, match="generation 2, expected 1"), mem.group():
        if change == "remember":
            mem.remember("k0", 10)
        else:
            with pytest.warns(sm.LoadWarning, match="compacted 1 to fit limit=2"):
                mem.load()
        other.remember("theirs", 1)
        with pytest.raises(sm.ConflictError, match="generation 2, expected 1"), mem.transaction():
            pass
        assert dict(mem.items()) == ({"k0": 10, "k1": 1} if change == "remember" else {"k1": 1, "k2": 2})
    assert _held(store) == {"k0": 0, "k1": 1, "theirs": 1} if change == "remember" else len(_held(store)) == 4


def test_mw_6_a_transaction_on_the_generation_the_memory_holds_never_reloads_over_an_unsaved_change():
    """MW-6: with autosave off, a change not saved yet survives a transaction when nobody else saved: no reload."""
    store = sm.MemoryStore()
    mem = sm.create_memory(store=store, clock=lambda: 1000)
    mem.remember("mine", 1)
    with mem.transaction():
        assert mem.get("mine") == 1
    mem.save()  # the step after: the change is saved as the next generation
    assert store.generation() == 1 and dict(sm.create_memory(store=store).items()) == {"mine": 1}


class _NoLocation:
    """A store whose load raises DamagedStoreError without naming where (a store of the app's own)."""

    def load(self) -> Any:
        raise sm.DamagedStoreError("is not a memory document")

    def save(self, document: Any) -> None:
        raise AssertionError("never saved")

    def __repr__(self) -> str:
        return "NoLocation()"


def test_per_13_damage_is_named_by_its_location_or_else_by_the_store(tmp_path):
    """PER-13: a load's DamagedStoreError keeps the location the store named; one without a location names the store's repr."""
    with pytest.raises(sm.DamagedStoreError) as unnamed:
        sm.create_memory(store=_NoLocation())
    assert str(unnamed.value) == "NoLocation(): is not a memory document"
    path = tmp_path / "memory.json"
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(sm.DamagedStoreError) as named:
        sm.create_memory(store=sm.JsonFileStore(path))
    assert str(named.value) == f"{path}: holds a top-level list, not a memory document object"


class _Counts:
    """A tokenizer object (``encode``) counting one token per ``unit`` characters."""

    def __init__(self, unit: int) -> None:
        self.unit = unit

    def encode(self, text: str) -> list[int]:
        return [0] * -(-len(text) // self.unit)


def test_ctx_12_a_tokenizer_passed_per_call_counts_not_the_memorys_own():
    """CTX-12: a memory created with one tokenizer object counts a call's other tokenizer object with that one."""
    mem = sm.create_memory(tokenizer=_Counts(1), clock=lambda: 1000)
    mem.remember("note", "x" * 40)
    own = mem.get_context(token_budget=1000)
    other = mem.get_context(token_budget=1000, tokenizer=_Counts(10))
    assert own.text == other.text == "note: " + "x" * 40
    assert (own.tokens, other.tokens) == (46, 5)


def test_mw_5_ctx_12_the_memorys_own_line_counter_gets_a_lock_at_its_first_read():
    """MW-5, CTX-12: the LineCounter a memory was created with is shared by its threads: a read gives it a threading lock."""
    counter = sm.per_line(lambda text: len(text.split()))
    mem = sm.create_memory(tokenizer=counter, clock=lambda: 1000)
    assert not isinstance(counter.lock, shell._LOCK_TYPE)
    mem.remember("note", "a b c")
    assert mem.get_context(token_budget=100).tokens == 4
    lock = counter.lock
    assert isinstance(lock, shell._LOCK_TYPE)
    mem.get_context(token_budget=100, tokenizer=counter)  # the step after: the same lock is kept
    assert counter.lock is lock


class _Holding:
    """A store holding one document as Python objects: its load parses no text, so a load's depth is the shell's."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def load(self) -> dict[str, Any]:
        return self.document

    def save(self, document: dict[str, Any]) -> None:
        self.document = document


def test_per_17_a_document_at_the_nesting_limit_loads_from_every_call_depth_that_leaves_a_few_dozen_frames():
    """PER-17, ENT-13: data nested MAX_DEPTH deep loads whole from any depth leaving 40 to 400 frames, inline or on a fresh stack."""
    import sys

    from support import at_depth, nest, stack_depth

    writer = sm.create_memory(clock=lambda: 1000)
    writer.remember("blob", nest(sm.MAX_DEPTH))
    store = _Holding(sm.core.to_document(writer.state, generation=1))
    failed = []
    for left in range(40, 400):
        room = sys.getrecursionlimit() - stack_depth() - left
        try:
            mem = at_depth(room, lambda: sm.create_memory(store=store, clock=lambda: 1000))
        except RecursionError:
            failed.append(left)
        else:
            assert mem.get("blob") == nest(sm.MAX_DEPTH)
    assert failed == []


def _raw(key: str, importance: float = 0.5) -> dict[str, Any]:
    return {"key": key, "data": key, "importance": importance, "createdAt": 1000, "updatedAt": 1000, "expiresAt": None}


class _Named(sm.MemoryStore):
    """A MemoryStore with a fixed repr, so its messages can be pinned whole."""

    def __repr__(self) -> str:
        return "Named()"


class _NoPreserve(_Holding):
    """A store of the app's own without preserve(), holding one document, with a fixed repr."""

    def __repr__(self) -> str:
        return "NoPreserve()"


def _said(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """The library's log records so far, as (level, message), then forgotten."""
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sentinel_memory"]
    caplog.clear()
    return said


def test_per_14_log_3_a_lossy_load_and_its_preserve_say_exactly_what_happened(caplog):
    """PER-14, PER-20, LOG-3: the LoadWarning and its INFO record say what was dropped and that the original is kept; the save's preserve is logged."""
    caplog.set_level("INFO", logger="sentinel_memory")
    store = _Named()
    store.save({"version": 1, "entries": [_raw("good"), _raw("bad", importance=2)], "working": {"data": 5}})
    said = (
        "loading from Named() dropped 1 invalid entries and compacted 0 to fit limit=1000; the damaged working "
        "memory loaded as {}; the original is kept before the next save overwrites it"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = sm.create_memory(store=store, autosave=True, clock=lambda: 1000)
    assert [(type(w.message), str(w.message)) for w in caught] == [(sm.LoadWarning, said)]
    assert _said(caplog) == [("INFO", said)]
    mem.remember("next", 1)  # the step after: the save keeps the original first, and says so
    assert _said(caplog) == [("INFO", "Named(): preserved what the last load dropped, before overwriting it")]
    assert len(store.preserved) == 1


def test_per_14_bm_11_per_21_a_store_without_preserve_another_ranking_and_unsaved_changes_are_said_exactly(caplog):
    """PER-14, BM-11, PER-21, LOG-3: the original that cannot be kept, the ranking the store held, the changes a close leaves unsaved: each warning whole, and logged."""
    caplog.set_level("INFO", logger="sentinel_memory")
    store = _NoPreserve({"version": 1, "ranking": "bm25", "entries": [_raw("good"), _raw("bad", importance=2)]})
    lost = (
        "loading from NoPreserve() dropped 1 invalid entries and compacted 0 to fit limit=1000; the original "
        "cannot be kept (the store has no preserve()) before the next save overwrites it"
    )
    ranked = (
        "NoPreserve() was saved with ranking 'bm25'; this memory ranks by 'words', and its next save stores "
        "'words'. Pass create_memory(ranking=...) to choose the ranking"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = sm.create_memory(store=store, ranking="words", clock=lambda: 1000)
    assert [(type(w.message), str(w.message)) for w in caught] == [(sm.LoadWarning, lost), (sm.RankingWarning, ranked)]
    assert _said(caplog) == [("INFO", lost), ("WARNING", ranked)]
    for changes, label in ((1, "1 change"), (2, "2 changes")):
        mem = sm.create_memory(store=_NoPreserve({"version": 1, "entries": []}), clock=lambda: 1000)
        for n in range(changes):
            mem.remember(f"k{n}", n)
        closing = (
            f"closing a memory on NoPreserve() with {label} not saved (autosave is off): call save() before "
            "closing, or create the memory with autosave=True; the memory still holds them"
        )
        with pytest.warns(sm.UnsavedChangesWarning) as unsaved:
            mem.close()
        assert [str(w.message) for w in unsaved] == [closing]
        assert _said(caplog) == [("WARNING", closing)]
