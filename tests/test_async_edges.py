"""The async memory's edges: turns after a change, a raising block's exit, a shared change ended by a BaseException (AIO-2, AIO-3, MW-6, WRP-1)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import warnings
from typing import Any

import pytest
from async_support import CoroutineStore

import sentinel_memory as sm
from sentinel_memory import shell


class GatedStore:
    """A store of coroutines over a MemoryStore whose saves wait at ``gate`` while ``hold`` is set; it records its lock's exits."""

    def __init__(self, inner: sm.MemoryStore | None = None) -> None:
        self.inner = inner if inner is not None else sm.MemoryStore()
        self.hold = False
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()
        self.exits: list[type[BaseException] | None] = []
        self.raise_on_save: BaseException | None = None

    async def load(self) -> dict[str, Any] | None:
        await asyncio.sleep(0)
        return self.inner.load()

    async def save(self, document: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        if self.raise_on_save is not None:
            raise self.raise_on_save
        if self.hold:
            self.waiting.set()
            await self.gate.wait()
        self.inner.save(document)

    async def generation(self) -> int:
        return self.inner.generation()

    @contextlib.asynccontextmanager
    async def lock(self):
        try:
            yield
        except BaseException as error:
            self.exits.append(type(error))
            raise
        else:
            self.exits.append(None)


def test_aio_2_a_task_takes_its_turn_again_for_its_next_change():
    """AIO-2: after a task's change ends it no longer holds the turn: its next change waits for, and is not overtaken by, another task's."""

    async def main() -> list[str]:
        store = GatedStore()
        mem = await sm.create_async_memory(store=store, autosave=True, load=False)

        async def writer() -> None:
            await mem.remember("a1", 1)
            store.hold = True
            await mem.remember("a2", 2)  # the same task's next change

        second = asyncio.ensure_future(writer())
        await store.waiting.wait()  # a2's save is under way and holds the turn
        store.hold = False
        other = asyncio.ensure_future(mem.remember("b", 3))
        await asyncio.sleep(0.01)
        assert not other.done()  # b waits for a2's turn to end
        store.gate.set()
        await asyncio.gather(second, other)
        stored = sm.create_memory(store=store.inner)
        return sorted(stored.keys())

    assert asyncio.run(main()) == ["a1", "a2", "b"]


def test_aio_3_a_transaction_block_that_raised_exits_the_stores_lock_with_its_error():
    """AIO-3, MW-6: a block that raised leaves a custom store's lock() with that error, a clean block with none; the next block works."""

    async def main() -> GatedStore:
        store = GatedStore()
        mem = await sm.create_async_memory(store=store, autosave=True, load=False)
        with pytest.raises(KeyError):
            async with mem.transaction():
                await mem.remember("a", 1)
                raise KeyError("block failed")
        async with mem.transaction():
            await mem.remember("b", 2)
        return store

    assert asyncio.run(main()).exits == [KeyError, None]


class Stop(BaseException):
    """Not an Exception: what a cancel scope or a shutdown raises through a store."""


def test_mw_6_a_shared_change_ended_by_a_base_exception_restores_the_memory():
    """MW-6, WRP-1: a shared change whose save raises a BaseException after its reload leaves the memory as before the reload."""

    async def main() -> None:
        inner = sm.MemoryStore()
        store = GatedStore(inner)
        mem = await sm.create_async_memory(store=store, autosave=True, shared=True)
        await mem.remember("mine", 1)
        other = sm.create_memory(store=inner, autosave=True)
        other.remember("theirs", 2)  # the store moves on: the next shared change reloads first
        before = (sorted(mem.keys()), mem.generation)
        store.raise_on_save = Stop()
        with pytest.raises(Stop):
            await mem.remember("lost", 3)
        assert (sorted(mem.keys()), mem.generation) == before == (["mine"], 1)
        store.raise_on_save = None
        await mem.remember("next", 4)  # the step after: it reloads again and saves
        assert sorted(sm.create_memory(store=inner).keys()) == ["mine", "next", "theirs"]

    asyncio.run(main())


def test_per_14_a_sync_stores_lossy_load_warns_once_at_the_callers_line(tmp_path):
    """PER-14, PER-21: under the async memory a sync store's load runs on a worker thread; its LoadWarning is emitted once, from the loop, at the caller's line."""
    path = tmp_path / "m.json"
    entry = {"key": "ok", "data": 1, "importance": 0.5, "createdAt": 0, "updatedAt": 0}
    path.write_text(json.dumps({"version": 1, "entries": [entry, {**entry, "key": ""}]}))

    async def main() -> sm.AsyncMemory:
        return await sm.create_async_memory(store=sm.JsonFileStore(path), clock=lambda: 0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = asyncio.run(main())
    assert [(type(w.message), w.filename) for w in caught] == [(sm.LoadWarning, __file__)]
    assert mem.last_load.dropped == 1


def test_wrp_5_close_lets_the_worker_thread_go_and_a_later_call_starts_another(tmp_path):
    """WRP-5, AIO-3: a sync store's calls run on one worker thread named sentinel-memory; close ends it, and a call after close starts a new one."""

    # Other tests' memories in this process may still have a worker thread of their own: count this memory's only.
    before = set(threading.enumerate())

    def workers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("sentinel-memory_") and t not in before]

    async def main() -> None:
        mem = await sm.create_async_memory(store=sm.JsonFileStore(tmp_path / "m.json"), autosave=True, clock=lambda: 0)
        await mem.remember("a", 1)
        (worker,) = workers()
        await mem.close()
        worker.join(5)
        assert not worker.is_alive() and workers() == []
        await mem.save()
        (again,) = workers()
        await mem.close()
        again.join(5)

    asyncio.run(main())


@pytest.mark.parametrize(("count", "offloaded"), [(shell.HEAVY_LOAD - 1, False), (shell.HEAVY_LOAD, True)])
def test_aio_3_a_load_of_heavy_load_entries_is_parsed_off_the_loop(count, offloaded, monkeypatch):
    """AIO-3, PER-18: a store of coroutines' document of HEAVY_LOAD (1,000) entries or more is parsed in a worker thread, one entry fewer on the loop's own; either way the memory holds them all."""
    inner = sm.MemoryStore()
    entry = {"data": 1, "importance": 0.5, "createdAt": 0, "updatedAt": 0}
    inner.save({"version": 1, "entries": [{**entry, "key": f"k{n}"} for n in range(count)]})
    threads: list[str] = []
    real = shell.with_stack_room

    def recorded(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(shell, "with_stack_room", recorded)

    async def main() -> int:
        mem = await sm.create_async_memory(store=CoroutineStore(inner), limit=2_000, clock=lambda: 0)
        threads.append(threading.current_thread().name)  # the loop's
        return len(mem)

    assert asyncio.run(main()) == count
    parsed, loop = threads
    assert (parsed != loop) is offloaded


def test_mw_6_a_shared_change_with_bad_arguments_is_refused_before_the_store_is_touched():
    """MW-6, WRP-1: on a shared async memory of coroutines, a change with a bad argument raises before it takes the store's lock or reloads; a good one then does both."""
    calls: list[str] = []

    class Counting(CoroutineStore):
        async def load(self) -> Any:
            calls.append("load")
            return await super().load()

        @contextlib.asynccontextmanager
        async def lock(self) -> Any:
            calls.append("lock")
            async with super().lock():
                yield

    async def main() -> None:
        mem = await sm.create_async_memory(store=Counting(), shared=True, autosave=True, clock=lambda: 0)
        calls.clear()
        with pytest.raises(ValueError):
            await mem.remember("", 1)
        assert calls == []
        await mem.remember("a", 1)
        assert calls[0] == "lock"

    asyncio.run(main())


def test_mw_6_changes_inside_a_transaction_block_nest_and_the_next_change_after_it_reloads():
    """MW-6, MW-10, AIO-3: a transaction block and two groups nested in it hold the store's lock once for all their changes; after the outer block, a change takes the lock again and reloads another writer's entry."""
    inner = sm.MemoryStore()

    async def main() -> list[str]:
        mem = await sm.create_async_memory(store=CoroutineStore(inner), shared=True, autosave=True, clock=lambda: 0)
        other = await sm.create_async_memory(store=CoroutineStore(inner), shared=True, autosave=True, clock=lambda: 0)
        async with mem.transaction():  # the changes in it are this task's: the turn and the lock are its own
            await mem.remember("a", 1)
            async with mem.group():  # groups in the block share its lock: one save for each, none waits
                async with mem.group():
                    await mem.remember("b", 2)
                await mem.remember("c", 3)
            await mem.remember("c2", 3)
        await other.remember("other", 4)
        await mem.remember("d", 5)
        return sorted(mem)

    # A change that waited for a lock the block still held would wait for good, cancels or not (AIO-4): the run
    # has its own thread and 10 seconds.
    ended: list[list[str]] = []
    runner = threading.Thread(target=lambda: ended.append(asyncio.run(main())), daemon=True)
    runner.start()
    runner.join(10)
    assert ended == [["a", "b", "c", "c2", "d", "other"]]
    assert sorted(entry["key"] for entry in inner.load()["entries"]) == ["a", "b", "c", "c2", "d", "other"]


def test_aio_6_a_shared_change_stranded_on_a_closed_loop_holds_no_transaction_after_it():
    """AIO-6, MW-6: a shared change stranded mid-save on a closed loop no longer counts as an open transaction: the next change on a new loop reloads first (the stranded save included) and stores at once."""

    class Lockless(CoroutineStore):
        lock = None  # a store of coroutines with no lock of its own: a shared change still reloads first

    store = Lockless(delay=60)  # never answered: its loop is closed first

    async def written() -> None:
        while not (store.saves or store.changes):
            await asyncio.sleep(0)

    mem = asyncio.run(sm.create_async_memory(store=store, shared=True, autosave=True, clock=lambda: 0))
    loop = asyncio.new_event_loop()
    first = loop.create_task(mem.remember("first", 1))
    loop.run_until_complete(written())  # first is inside its transaction, its save written and not answered
    loop.close()
    store.delay = 0  # the next saves are answered at once
    asyncio.run(asyncio.wait_for(mem.remember("next", 2), 5))
    assert sorted(mem) == ["first", "next"]
    assert sorted(entry["key"] for entry in store.inner.load()["entries"]) == ["first", "next"]
    assert not first.done()
    for task in asyncio.all_tasks(loop):
        task._log_destroy_pending = False  # type: ignore[attr-defined]  # stranded on purpose (conftest.py)


def test_aio_6_a_change_asked_for_on_a_second_live_loop_is_refused_and_changes_nothing():
    """AIO-6: while a change runs on one live loop (another thread's), a change asked for on a new loop raises RuntimeError saying so, and changes nothing; after the first ends, the new loop's change goes on."""
    store = CoroutineStore()
    mem = asyncio.run(sm.create_async_memory(store=store, autosave=True, clock=lambda: 0))
    started, release = threading.Event(), threading.Event()

    async def held() -> None:  # the save waits, holding the change's turn, until the test lets it go (10 s at most)
        started.set()
        for _ in range(10_000):
            if release.is_set():
                return
            await asyncio.sleep(0.001)

    store.on_save = held

    async def first() -> None:
        await mem.remember("first", 1)

    runner = threading.Thread(target=lambda: asyncio.run(first()))
    runner.start()
    started.wait(5)
    with pytest.raises(RuntimeError) as refused:
        asyncio.run(mem.remember("second", 2))
    assert str(refused.value) == (
        "this AsyncMemory is in the middle of a change on another event loop; a memory serves one "
        "event loop at a time: let that change finish first, or give each loop a memory of its own"
    )
    release.set()
    runner.join(5)
    store.on_save = None
    assert sorted(mem) == ["first"]
    asyncio.run(mem.remember("second", 2))
    assert sorted(mem) == ["first", "second"]


class LockFails(Exception):
    """What a store's lock raises when it cannot be taken."""


def test_aio_4_a_task_cancelled_while_its_blocks_lock_is_failing_ends_cancelled():
    """AIO-4: a task cancelled while entering a block whose store lock then fails ends cancelled, not with the lock's error; the next block works."""

    class FailingLockStore(GatedStore):
        def __init__(self) -> None:
            super().__init__()
            self.entering = asyncio.Event()
            self.release = asyncio.Event()
            self.fail = True

        @contextlib.asynccontextmanager
        async def lock(self):
            if self.fail:
                self.entering.set()
                await self.release.wait()
                raise LockFails("the lock could not be taken")
            yield

    async def main() -> None:
        store = FailingLockStore()
        mem = await sm.create_async_memory(store=store, autosave=True, load=False)

        async def block() -> None:
            async with mem.transaction():
                await mem.remember("never", 1)

        task = asyncio.ensure_future(block())
        await store.entering.wait()
        task.cancel()
        await asyncio.sleep(0)
        store.release.set()  # the lock fails after the cancel came
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled() and "never" not in mem
        store.fail = False
        async with mem.transaction():  # the step after: the memory's turn is free
            await mem.remember("next", 2)
        assert sorted(mem.keys()) == ["next"]

    asyncio.run(main())


def test_aio_3_a_clean_block_exits_a_custom_stores_lock_with_no_error():
    """AIO-3, MW-6: a block that ends cleanly calls a custom store lock's __aexit__ with (None, None, None), as async with does."""

    class Exits:
        def __init__(self, seen: list[tuple[Any, Any, Any]]) -> None:
            self.seen = seen

        async def __aenter__(self) -> None:
            return None

        async def __aexit__(self, kind: Any, error: Any, trace: Any) -> None:
            self.seen.append((kind, error, trace))

    class RecordingStore(GatedStore):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[Any, Any, Any]] = []

        def lock(self) -> Exits:  # type: ignore[override]
            return Exits(self.seen)

    async def main() -> RecordingStore:
        store = RecordingStore()
        mem = await sm.create_async_memory(store=store, autosave=True, load=False)
        async with mem.transaction():
            await mem.remember("a", 1)
        return store

    assert asyncio.run(main()).seen == [(None, None, None)]


def test_ent_15_an_async_memory_shows_its_size_limit_and_store_as_a_memory_does():
    """ENT-15: repr(AsyncMemory) is a Memory's, named AsyncMemory: its live size, limit and store."""

    async def main() -> tuple[str, sm.MemoryStore]:
        store = sm.MemoryStore()
        mem = await sm.create_async_memory(limit=50, store=store)
        await mem.remember("a", 1)
        return repr(mem), store

    shown, store = asyncio.run(main())
    assert shown == f"<AsyncMemory size=1 limit=50 store={store!r}>"


def test_l1_3_an_async_memorys_working_memory_clears_and_the_clear_is_saved():
    """L1-3, AIO-1: await mem.working.clear() empties the working memory and saves that, as a set does."""

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        store = sm.MemoryStore()
        mem = await sm.create_async_memory(store=store, autosave=True)
        await mem.working.set({"step": 2, "goal": "book a table"})
        before = mem.working.get()
        await mem.working.clear()
        again = await sm.create_async_memory(store=store)
        return before, mem.working.get(), again.working.get()

    assert asyncio.run(main()) == ({"step": 2, "goal": "book a table"}, {}, {})


def test_per_11_an_async_memory_saves_only_when_told_unless_made_with_autosave():
    """PER-11, AIO-1: create_async_memory's autosave is off by default: a change reaches the store at save(), not before."""

    async def main() -> tuple[Any, Any]:
        store = sm.MemoryStore()
        mem = await sm.create_async_memory(store=store)
        await mem.remember("a", 1)
        unsaved = store.load()
        await mem.save()
        return unsaved, [entry["key"] for entry in store.load()["entries"]]

    assert asyncio.run(main()) == (None, ["a"])
