"""Nothing lost silently at close (PER-21), and messages that say what to do (MW-3, NUM-5)."""

from __future__ import annotations

import asyncio
import logging
import warnings

import pytest
from async_support import CoroutineStore

import sentinel_memory as sm
from support import T0


def closing(mem: sm.Memory) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem.close()
    return [w for w in caught if issubclass(w.category, sm.UnsavedChangesWarning)]


def test_per_21_closing_unsaved_changes_warns_with_their_count_and_a_save_still_keeps_them(tmp_path, caplog):
    """PER-21: two unsaved remembers warn "2 changes" at close, logged at WARNING; the memory keeps them and a save after it stores them."""
    store = sm.JsonFileStore(tmp_path / "m.json")
    mem = sm.create_memory(store=store, clock=lambda: T0)
    mem.remember("a", 1)
    mem.remember("b", 2)
    with caplog.at_level(logging.WARNING, logger="sentinel_memory"):
        warned = closing(mem)
    assert len(warned) == 1 and "2 changes not saved" in str(warned[0].message)
    assert "save()" in str(warned[0].message) and "autosave=True" in str(warned[0].message)
    assert any("not saved" in record.getMessage() for record in caplog.records)
    assert store.load() is None and list(mem) == ["a", "b"]
    mem.save()  # the step after: the warned changes are still there to keep
    assert closing(mem) == []
    assert list(sm.create_memory(store=store)) == ["a", "b"]


def test_per_21_the_end_of_a_with_block_warns_at_the_with_line(tmp_path):
    """PER-21, WRP-5: leaving `with create_memory(store=...)` with one unsaved change warns "1 change", pointing at this file."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sm.create_memory(store=sm.JsonFileStore(tmp_path / "m.json")) as mem:
            mem.remember("a", 1)
    (warning,) = [w for w in caught if issubclass(w.category, sm.UnsavedChangesWarning)]
    assert "1 change not saved" in str(warning.message) and warning.filename == __file__


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda path: sm.create_memory(store=sm.JsonFileStore(path), autosave=True), id="autosave"),
        pytest.param(lambda path: sm.create_memory(), id="no-store-given"),
        pytest.param(lambda path: sm.MemoryFolder(path.parent).open("carol"), id="folder-default"),
    ],
)
def test_per_21_nothing_to_warn_of(tmp_path, make):
    """PER-21: with autosave, on the MemoryStore create_memory made itself, or a MemoryFolder's default memory, closing is silent."""
    mem = make(tmp_path / "m.json")
    mem.remember("a", 1)
    mem.working.set({"task": "x"})
    assert closing(mem) == []


def test_per_21_a_folder_memory_without_autosave_warns_the_same_way(tmp_path):
    """PER-21, FLD-2: MemoryFolder(...).open(id, autosave=False) warns at close as create_memory does."""
    mem = sm.MemoryFolder(tmp_path).open("carol", autosave=False)
    mem.remember("a", 1)
    (warning,) = closing(mem)
    assert "1 change not saved" in str(warning.message)


def test_per_21_a_load_or_a_save_clears_the_count_and_reads_count_nothing(tmp_path):
    """PER-21: after load() or save() nothing is unsaved; reads and cache changes never count."""
    store = sm.JsonFileStore(tmp_path / "m.json")
    mem = sm.create_memory(store=store)
    mem.remember("a", 1)
    mem.load()  # the store's state replaces the unsaved change
    mem.cache.put("c", 1)
    mem.get("a"), mem.recall("a"), mem.get_context(token_budget=50)
    assert closing(mem) == []
    mem.remember("b", 1)
    mem.save()
    mem.cache.put("d", 2)
    assert closing(mem) == []


@pytest.mark.parametrize("kind", ["json", "coroutines"])
def test_per_21_the_async_memory_warns_at_close_and_async_with(tmp_path, kind):
    """PER-21, AIO-1: an AsyncMemory on a file (worker thread) or a store of coroutines (native) warns at close and at the end of async with."""

    def store():
        return sm.JsonFileStore(tmp_path / "m.json") if kind == "json" else CoroutineStore()

    async def main():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            async with await sm.create_async_memory(store=store()) as mem:
                await mem.remember("a", 1)
            other = await sm.create_async_memory(store=store())
            await other.remember("a", 1)
            await other.remember("b", 1)
            await other.close()
        return [str(w.message) for w in caught if issubclass(w.category, sm.UnsavedChangesWarning)]

    messages = asyncio.run(main())
    assert len(messages) == 2 and "1 change not saved" in messages[0] and "2 changes not saved" in messages[1]


def test_mw_3_a_conflict_says_how_processes_share_a_store():
    """MW-3: ConflictError's message says to reload, and that shared=True or a MemoryFolder is how writers share one store."""
    store = sm.MemoryStore()
    first = sm.create_memory(store=store, autosave=True)
    second = sm.create_memory(store=store, autosave=True)
    first.remember("a", 1)
    with pytest.raises(sm.ConflictError) as caught:
        second.remember("b", 2)
    text = str(caught.value)
    assert "reload" in text and "shared=True" in text and "MemoryFolder" in text


def test_num_5_a_bad_must_keep_warns_in_its_own_words():
    """NUM-5: must_keep=2 warns that no must-keep facts are used, not a ttl's "no expiry"."""
    mem = sm.create_memory()
    mem.remember("a", 1)
    with pytest.warns(sm.IgnoredValueWarning) as caught:
        mem.get_context(token_budget=10, must_keep=2)
    text = str(caught[0].message)
    assert "no must-keep facts" in text and "expiry" not in text


def test_per_21_changes_that_change_nothing_and_a_loads_own_compaction_do_not_warn(tmp_path):
    """PER-21: clearing an empty memory, clearing a clear working memory and a load that compacts to a smaller limit leave nothing to warn of at close."""
    path = tmp_path / "m.json"
    first = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0)
    for key in "abc":
        first.remember(key, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the LoadWarning of the compaction on load
        mem = sm.create_memory(store=sm.JsonFileStore(path), limit=2, clock=lambda: T0)
    assert mem.last_load.compacted == 1
    mem.working.clear()
    mem.working.clear()
    assert closing(mem) == []
    empty = sm.create_memory(store=sm.JsonFileStore(tmp_path / "empty.json"))
    empty.clear()
    assert closing(empty) == []


def test_per_21_a_store_whose_close_raises_still_warns(tmp_path):
    """PER-21, WRP-5: when the store's close() raises, the unsaved-changes warning is given all the same, then the error."""

    class Failing(sm.MemoryStore):
        def close(self) -> None:
            raise OSError("disk went away")

    mem = sm.create_memory(store=Failing())
    mem.remember("a", 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(OSError):
            mem.close()
    assert [w.category for w in caught] == [sm.UnsavedChangesWarning]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_per_14_a_lossy_reload_inside_a_transaction_warns_at_the_callers_line(tmp_path, kind):
    """PER-14, MW-6: when a transaction (or a shared change) reloads a store another writer damaged an entry of, the LoadWarning is given, pointing at this file."""
    path = tmp_path / "m.json"
    writer = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0)
    writer.remember("a", 1)

    def damage() -> None:
        document = sm.JsonFileStore(path).load()
        document["entries"].append({"key": "bad", "data": 1, "importance": "high", "createdAt": T0, "updatedAt": T0})
        document["generation"] += 1
        sm.JsonFileStore(path).save(document)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if kind == "sync":
            mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=lambda: T0)
            damage()
            mem.remember("b", 2)
        else:

            async def main() -> None:
                mem = await sm.create_async_memory(store=CoroutineFile(path), autosave=True, shared=True)
                damage()
                await mem.remember("b", 2)

            asyncio.run(main())
    (warning,) = [w for w in caught if issubclass(w.category, sm.LoadWarning)]
    assert warning.filename == __file__ and "dropped 1 invalid" in str(warning.message)


class CoroutineFile:
    """A store of coroutines over a JSON file: the native engine on a file, with its lock and generation."""

    def __init__(self, path) -> None:
        self.inner = sm.JsonFileStore(path)

    async def load(self):
        return self.inner.load()

    async def save(self, document) -> None:
        self.inner.save(document)

    async def generation(self) -> int:
        return self.inner.generation()

    def lock(self):
        import contextlib

        @contextlib.asynccontextmanager
        async def held():
            with self.inner.lock():
                yield

        return held()
