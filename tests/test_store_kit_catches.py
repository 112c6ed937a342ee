"""The store kit fails the unsafe stores a store author writes by mistake: each bug below, put into the Extending
page's example store, fails the kit test named for it (MW-2, MW-3, MW-4, MW-6, PER-3, AIO-2)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import sentinel_memory as sm
from sentinel_memory.testing import AsyncStoreSuite

TESTS = Path(__file__).resolve().parent

#: The broken stores, each the Extending page's DictStore with one mistake, and the kit run on each.
BROKEN = '''
import asyncio
import contextlib
import contextvars
import copy
import json
import os
import threading
import time

from kit_stores import example_store_class

from sentinel_memory import ConflictError, LockTimeoutError, read_document
from sentinel_memory.testing import AsyncStoreSuite, StoreSuite

DictStore = example_store_class()


class Incremental(DictStore):
    """The example store with a correct save_changes: deletes and rewritten entries leave, rewritten ones go last."""

    def save_changes(self, changes):
        with self.lock():
            document = self.load() or {"version": 1, "entries": []}
            if self.generation() != changes.generation - 1:
                raise ConflictError(self.key, changes.generation - 1, self.generation())
            gone = set(changes.deletes) | {entry.key for entry in changes.upserts}
            entries = [entry for entry in document["entries"] if entry["key"] not in gone]
            self.place(document["entries"], entries, [entry.to_dict() for entry in changes.upserts])
            document["entries"] = entries
            if changes.working is not None:
                document["working"] = {"data": dict(changes.working.data), "updatedAt": changes.working.updated_at}
            document["generation"] = changes.generation
            self.backend[self.key] = json.dumps(document, allow_nan=False)

    def place(self, old, entries, upserts):
        entries.extend(upserts)


class Reordering(Incremental):
    """An overwritten entry keeps its old place: an UPDATE that leaves the row where it was."""

    def place(self, old, entries, upserts):
        places = {entry["key"]: i for i, entry in enumerate(old)}
        for entry in upserts:
            if entry["key"] in places:
                entries.insert(min(places[entry["key"]], len(entries)), entry)
            else:
                entries.append(entry)


class NotAtomic(DictStore):
    """Saves in two steps, as delete-then-insert in two transactions does: a reader can come between."""

    def save(self, document):
        with self.lock():
            declared = document.get("generation")
            if declared is not None and self.generation() != declared - 1:
                raise ConflictError(self.key, declared - 1, self.generation())
            self.backend.pop(self.key, None)
            time.sleep(0.002)  # the second transaction
            self.backend[self.key] = json.dumps(document, allow_nan=False)


class StaleLoad(DictStore):
    """Keeps the document it last read or wrote and hands it out again: other writers' saves are not seen."""

    def load(self):
        if getattr(self, "cached", None) is None:
            self.cached = super().load()
        return copy.deepcopy(self.cached)

    def save(self, document):
        super().save(document)
        self.cached = copy.deepcopy(document)

    def generation(self):
        text = self.backend.get(self.key)
        return 0 if text is None else json.loads(text).get("generation", 0)


class OwnGeneration(DictStore):
    """generation() answers the last generation this object saw, not what the store holds."""

    seen = 0

    def load(self):
        document = super().load()
        self.seen = 0 if document is None else document.get("generation", 0)
        return document

    def save(self, document):
        with self.lock():
            declared = document.get("generation")
            if declared is not None and self.generation() != declared - 1:
                raise ConflictError(self.key, declared - 1, self.generation())
            self.backend[self.key] = json.dumps(document, allow_nan=False)
            self.seen = declared or 0

    def generation(self):
        return self.seen


class LockOfItsOwn(DictStore):
    """Each store object locks a lock of its own: it excludes nobody else."""

    def __init__(self, backend, key, lock_wait=30):
        super().__init__(backend, key, lock_wait)
        self._lock = threading.RLock()


class ReentrantForItsObject(DictStore):
    """lock() lets in again whoever uses the store object that holds it (a lease token kept on the object), not only
    the thread holding it: threads sharing one object all get in at once."""

    def __init__(self, backend, key, lock_wait=30):
        super().__init__(backend, key, lock_wait)
        self._held = backend.setdefault(f"{key}:holder", {"object": None, "depth": 0})

    @contextlib.contextmanager
    def lock(self):
        held = self._held
        if held["object"] is self:
            held["depth"] += 1
            try:
                yield
            finally:
                held["depth"] -= 1
            return
        with super().lock():
            held["object"], held["depth"] = self, 1
            try:
                yield
            finally:
                held["object"], held["depth"] = None, 0


class Suite(StoreSuite):
    processes = False
    kind = DictStore

    def make_store(self, tmp_path):
        self.backend = {}
        return self.kind(self.backend, key=tmp_path.name)

    def reopen(self, store):
        return self.kind(self.backend, key=store.key)


class TestIncremental(Suite):
    kind = Incremental


class TestReordering(Suite):
    kind = Reordering


class TestNotAtomic(Suite):
    kind = NotAtomic


class TestStaleLoad(Suite):
    kind = StaleLoad


class TestOwnGeneration(Suite):
    kind = OwnGeneration


class TestLockOfItsOwn(Suite):
    kind = LockOfItsOwn


class TestReentrantForItsObject(Suite):
    kind = ReentrantForItsObject


class AsyncDictStore:
    """The example store as an async store, with a lock that a task may take again (as AIO-2 needs)."""

    def __init__(self, backend, key):
        self.backend, self.key = backend, key
        self.state = backend.setdefault(
            f"{key}:lock", {"owner": None, "depth": 0, "free": None, "holder": contextvars.ContextVar("holder")}
        )

    async def load(self):
        text = self.backend.get(self.key)
        return None if text is None else read_document(text, self.key)

    async def save(self, document):
        async with self.lock():
            declared = document.get("generation")
            found = await self.generation()
            if declared is not None and found != declared - 1:
                raise ConflictError(self.key, declared - 1, found)
            self.backend[self.key] = json.dumps(document, allow_nan=False)

    async def generation(self):
        document = await self.load()
        return 0 if document is None else document.get("generation", 0)

    @contextlib.asynccontextmanager
    async def lock(self):
        # Re-entrant for the task holding it and the tasks it starts (they inherit the context variable).
        state, me = self.state, asyncio.current_task()
        if state["free"] is None:
            state["free"] = asyncio.Event()
            state["free"].set()
        while state["depth"] and not self.mine(state["owner"], me):
            state["free"].clear()
            await state["free"].wait()
        if not state["depth"]:
            state["owner"] = me
            state["holder"].set(me)
        state["depth"] += 1
        try:
            yield
        finally:
            state["depth"] -= 1
            if not state["depth"]:
                state["owner"] = None
                state["free"].set()

    def mine(self, owner, me):
        return owner is me or self.state["holder"].get(None) is owner


class AsyncPlainLock(AsyncDictStore):
    """An asyncio.Lock per stored key: not re-entrant, so a shared change's save waits on its own transaction."""

    def __init__(self, backend, key):
        super().__init__(backend, key)
        self.plain = backend.setdefault(f"{key}:plain", asyncio.Lock())

    @contextlib.asynccontextmanager
    async def lock(self):
        async with self.plain:
            yield


class AsyncSuite(AsyncStoreSuite):
    kind = AsyncDictStore
    deadline = 5.0  # a deadlock shows in seconds
    processes = False  # its data is a dict of this process

    def make_store(self, tmp_path):
        self.backend = {}
        return self.kind(self.backend, key=tmp_path.name)

    def reopen(self, store):
        return self.kind(self.backend, key=store.key)


class TestAsyncPlainLock(AsyncSuite):
    kind = AsyncPlainLock


class AsyncTableStore:
    """A correct async store as a database table would make one: a row per memory written in one statement, the
    generation checked in the transaction that writes, a lock with lock_wait that lets in its holder and the tasks
    it starts (and no other task), released on every way out, a strict load, save_changes, close."""

    def __init__(self, backend, key, lock_wait=30.0):
        self.backend, self.key, self.lock_wait = backend, key, lock_wait
        self.state = backend.setdefault(f"{key}:lock", {"owner": None, "depth": 0})
        self.holder = contextvars.ContextVar(f"holder-{id(self)}", default=None)
        self.open = True

    async def load(self):
        await asyncio.sleep(0)  # a round trip
        self.open = True
        return self.read(self.backend.get(self.key))

    def read(self, text):
        return None if text is None else read_document(text, self.key)

    async def generation(self):
        document = await self.load()
        return 0 if document is None else document.get("generation", 0)

    # A save never takes lock(): the memory calls it inside lock() (a shared change, a transaction) from a task
    # that is not the lock's, and alone otherwise. The check and the write are one transaction of their own.
    async def save(self, document):
        await asyncio.sleep(0)  # the round trip; then one transaction: check and write, nothing between
        self.check(document.get("generation"))
        await self.write(json.dumps(document, allow_nan=False))

    def check(self, declared):
        text = self.backend.get(self.key)
        found = 0 if text is None else self.read(text).get("generation", 0)
        if declared is not None and found != declared - 1:
            raise ConflictError(self.key, declared - 1, found)

    async def write(self, text):
        self.backend[self.key] = text  # one statement: all of it or nothing

    async def save_changes(self, changes):
        await asyncio.sleep(0)
        self.check(changes.generation)
        document = self.read(self.backend.get(self.key)) or {"version": 1, "entries": []}
        gone = set(changes.deletes) | {entry.key for entry in changes.upserts}
        entries = [entry for entry in document["entries"] if entry["key"] not in gone]
        self.place(document["entries"], entries, [entry.to_dict() for entry in changes.upserts])
        document["entries"] = entries
        if changes.working is not None:
            document["working"] = {"data": dict(changes.working.data), "updatedAt": changes.working.updated_at}
        document["generation"] = changes.generation
        await self.write(json.dumps(document, allow_nan=False))

    def place(self, old, entries, upserts):
        entries.extend(upserts)

    def mine(self, me):
        owner = self.state["owner"]
        return owner is not None and owner[0] is self and (owner[1] is me or self.holder.get() is owner[1])

    @contextlib.asynccontextmanager
    async def lock(self):
        me, state = asyncio.current_task(), self.state
        if state["depth"] and self.mine(me):
            state["depth"] += 1
            try:
                yield
            finally:
                state["depth"] -= 1
            return
        await self.wait_for_lock()
        state["owner"], state["depth"] = (self, me), 1
        self.holder.set(me)
        try:
            yield
        finally:
            self.release()

    async def wait_for_lock(self):
        deadline = time.monotonic() + self.lock_wait
        while self.state["depth"]:
            if time.monotonic() >= deadline:
                raise LockTimeoutError(self.key, self.lock_wait)
            await asyncio.sleep(0.005)

    def release(self):
        self.state["owner"], self.state["depth"] = None, 0

    async def close(self):
        self.open = False


class TwoStepSave(AsyncTableStore):
    """Deletes the row, then inserts the new one: two transactions, a reader or a cancel can come between."""

    async def write(self, text):
        self.backend.pop(self.key, None)
        await asyncio.sleep(0)
        self.backend[self.key] = text


class CheckThenWrite(AsyncTableStore):
    """Checks the generation under the lock, then writes after letting it go: another writer comes between."""

    async def save(self, document):
        await asyncio.sleep(0)
        self.check(document.get("generation"))  # one transaction
        await asyncio.sleep(0.001)  # the next one
        self.backend[self.key] = json.dumps(document, allow_nan=False)


class FirstSaveUnchecked(AsyncTableStore):
    """SELECT ... FOR UPDATE, then UPDATE or INSERT: with no row yet there is nothing to lock or to check."""

    async def save(self, document):
        await asyncio.sleep(0)
        if self.backend.get(self.key) is None:  # no row to lock: INSERT in a transaction of its own
            await asyncio.sleep(0.001)
            self.backend[self.key] = json.dumps(document, allow_nan=False)
            return
        await super().save(document)


class RewriteInPlace(AsyncTableStore):
    """A rewritten entry keeps its old place: an UPDATE that leaves the row where it was."""

    def place(self, old, entries, upserts):
        places = {entry["key"]: i for i, entry in enumerate(old)}
        for entry in upserts:
            if entry["key"] in places:
                entries.insert(min(places[entry["key"]], len(entries)), entry)
            else:
                entries.append(entry)


class RevivesInPlace(AsyncTableStore):
    """A forgotten entry's row stays behind as a tombstone, and writing its key again revives the row where it was (a
    soft delete): the entry comes back in its old place, not last."""

    def place(self, old, entries, upserts):
        tombstones = self.backend.setdefault(f"{self.key}:tombstones", {})
        written = {entry["key"] for entry in entries} | {entry["key"] for entry in upserts}
        tombstones.update({entry["key"]: i for i, entry in enumerate(old) if entry["key"] not in written})
        for entry in upserts:
            if entry["key"] in tombstones:
                entries.insert(min(tombstones.pop(entry["key"]), len(entries)), entry)
            else:
                entries.append(entry)


class NewestFirst(AsyncTableStore):
    """Writes a batch newest first: the rows of one change inserted in reverse."""

    def place(self, old, entries, upserts):
        entries.extend(reversed(upserts))


class KeptOnCancel(AsyncTableStore):
    """Lets go of the lock when the block ends or raises, but not when its task is cancelled."""

    @contextlib.asynccontextmanager
    async def lock(self):
        me, state = asyncio.current_task(), self.state
        if state["depth"] and self.mine(me):
            state["depth"] += 1
            try:
                yield
            finally:
                state["depth"] -= 1
            return
        await self.wait_for_lock()
        state["owner"], state["depth"] = (self, me), 1
        self.holder.set(me)
        try:
            yield
        except asyncio.CancelledError:
            raise
        except BaseException:
            self.release()
            raise
        self.release()


class AnyTaskOfTheObject(AsyncTableStore):
    """Re-entrant for every task of the store object that holds it, not only the holder's own tasks."""

    def mine(self, me):
        owner = self.state["owner"]
        return owner is not None and owner[0] is self


class IgnoresLockWait(AsyncTableStore):
    """Waits for the lock as long as its driver's default, whatever lock_wait says."""

    async def wait_for_lock(self):
        waited = 0.0
        while self.state["depth"]:
            if waited >= 3.0:
                raise LockTimeoutError(self.key, self.lock_wait)
            await asyncio.sleep(0.005)
            waited += 0.005


class WritesPastTimeout(AsyncTableStore):
    """A lease checked only when the lock is let go: a change that could not take the lock goes ahead, writes, then
    raises LockTimeoutError."""

    @contextlib.asynccontextmanager
    async def lock(self):
        try:
            await self.wait_for_lock()
        except LockTimeoutError as late:
            yield
            raise late from None
        async with super().lock():
            yield


class CloseKeepsLock(AsyncTableStore):
    """Lets go of the lock with the connection's next statement; close() drops the connection without one."""

    def release(self):
        self.pending = True

    async def load(self):
        if getattr(self, "pending", False):
            self.pending = False
            super().release()
        return await super().load()

    async def close(self):
        self.pending = False  # the connection is gone, and the lock with it only when the server notices


class LenientLoad(AsyncTableStore):
    """Reads the row with json.loads: duplicate keys, NaN and a wrong version go through unnoticed."""

    def read(self, text):
        if text is None:
            return None
        try:
            document = json.loads(text)
        except ValueError:
            return None
        return document if isinstance(document, dict) else None


class CachedLoad(AsyncTableStore):
    """Keeps the document it last read or wrote, and hands it out again: other writers' saves are not seen."""

    async def load(self):
        if getattr(self, "cached", None) is None:
            self.cached = await super().load()
        return copy.deepcopy(self.cached)

    async def write(self, text):
        await super().write(text)
        self.cached = json.loads(text)

    async def generation(self):
        text = self.backend.get(self.key)
        return 0 if text is None else json.loads(text).get("generation", 0)


class AsyncLockOfItsOwn(AsyncTableStore):
    """Each store object keeps the lock's state of its own: it excludes nobody else."""

    def __init__(self, backend, key, lock_wait=30.0):
        super().__init__(backend, key, lock_wait)
        self.state = {"owner": None, "depth": 0}


class ForgetsWorking(AsyncTableStore):
    """Keeps the entries and drops the working memory: a column the INSERT forgot."""

    async def write(self, text):
        document = json.loads(text)
        document.pop("working", None)
        await super().write(json.dumps(document))


class NoGenerationCheck(AsyncTableStore):
    """Writes whatever generation it is given: the last writer wins, silently."""

    def check(self, declared):
        return None


class RacesUnlocked(AsyncTableStore):
    """A first try: a lock per store object, and an incremental save that loads the row and writes it back a round
    trip later with no generation check. Writers on other store objects overwrite each other's saves."""

    def __init__(self, backend, key, lock_wait=30.0):
        super().__init__(backend, key, lock_wait)
        self.state = {"owner": None, "depth": 0}

    def check(self, declared):
        return None

    async def save_changes(self, changes):
        document = await self.load() or {"version": 1, "entries": []}
        await asyncio.sleep(0)  # the write's round trip
        gone = set(changes.deletes) | {entry.key for entry in changes.upserts}
        entries = [entry for entry in document["entries"] if entry["key"] not in gone]
        entries.extend(entry.to_dict() for entry in changes.upserts)
        document["entries"] = entries
        document["generation"] = changes.generation
        self.backend[self.key] = json.dumps(document, allow_nan=False)


class UpsertsThenConflicts(AsyncTableStore):
    """Upserts a document's entries as rows before it checks the generation: a save that conflicts has added its
    entries to the winner's."""

    async def save(self, document):
        await asyncio.sleep(0)
        text = self.backend.get(self.key)
        if text is not None:
            stored = self.read(text)
            keys = {entry["key"] for entry in document["entries"]}
            entries = [entry for entry in stored["entries"] if entry["key"] not in keys] + document["entries"]
            await self.write(json.dumps(dict(stored, entries=entries), allow_nan=False))
        self.check(document.get("generation"))
        await self.write(json.dumps(document, allow_nan=False))


class DoubleNumbers(AsyncTableStore):
    """Reads every whole number as a double, as a JavaScript service would: 2**53 + 1 comes back 2**53."""

    def read(self, text):
        document = super().read(text)
        return None if document is None else json.loads(json.dumps(document), parse_int=lambda s: int(float(s)))


class DiesInAForkedWriter(AsyncTableStore):
    """A save in a forked process ends that process at once (a driver that cannot live through a fork): the forked
    writer leaves no history."""

    def __init__(self, backend, key, lock_wait=30.0):
        super().__init__(backend, key, lock_wait)
        self.pid = backend.setdefault(f"{key}:pid", os.getpid())  # the process that made the store

    async def write(self, text):
        if os.getpid() != self.pid:
            os._exit(1)
        await super().write(text)


class FailsInAForkedWriter(DiesInAForkedWriter):
    """A save in a forked process raises (a connection that cannot be used after a fork): the forked writer's
    remember fails."""

    async def write(self, text):
        if os.getpid() != self.pid:
            raise OSError("connection used after fork")
        await super().write(text)


class TableSuite(AsyncStoreSuite):
    kind = AsyncTableStore
    deadline = 8.0
    processes = False

    def make_store(self, tmp_path):
        self.backend = {}
        return self.kind(self.backend, key=tmp_path.name)

    def reopen(self, store):
        return self.kind(self.backend, key=store.key)

    def damage(self, store):
        self.backend[store.key] = '{"version": 1, "entries": [], "entries": [{"key": "x", "data": 1}]}'
        return self.snapshot(store)

    def snapshot(self, store):
        return self.backend.get(store.key)


class TestAsyncTableStore(TableSuite):
    kind = AsyncTableStore


class TestTwoStepSave(TableSuite):
    kind = TwoStepSave


class TestCheckThenWrite(TableSuite):
    kind = CheckThenWrite


class TestFirstSaveUnchecked(TableSuite):
    kind = FirstSaveUnchecked


class TestRewriteInPlace(TableSuite):
    kind = RewriteInPlace


class TestNewestFirst(TableSuite):
    kind = NewestFirst


class TestRevivesInPlace(TableSuite):
    kind = RevivesInPlace


class TestKeptOnCancel(TableSuite):
    kind = KeptOnCancel


class TestAnyTaskOfTheObject(TableSuite):
    kind = AnyTaskOfTheObject


class TestIgnoresLockWait(TableSuite):
    kind = IgnoresLockWait


class TestWritesPastTimeout(TableSuite):
    kind = WritesPastTimeout


class TestCloseKeepsLock(TableSuite):
    kind = CloseKeepsLock


class TestLenientLoad(TableSuite):
    kind = LenientLoad


class TestCachedLoad(TableSuite):
    kind = CachedLoad


class TestAsyncLockOfItsOwn(TableSuite):
    kind = AsyncLockOfItsOwn


class TestForgetsWorking(TableSuite):
    kind = ForgetsWorking


class TestNoGenerationCheck(TableSuite):
    kind = NoGenerationCheck


class TestRacesUnlocked(TableSuite):
    kind = RacesUnlocked


class TestUpsertsThenConflicts(TableSuite):
    kind = UpsertsThenConflicts


class TestDoubleNumbers(TableSuite):
    kind = DoubleNumbers


class TestDiesInAForkedWriter(TableSuite):
    kind = DiesInAForkedWriter
    processes = True  # its writers fork; each dies at its first save, before it can share anything


class TestFailsInAForkedWriter(TableSuite):
    kind = FailsInAForkedWriter
    processes = True  # its writers fork; each fails at its first save, before it can share anything
'''


#: Each unsafe store and the kit check its mistake fails.
CAUGHT = [
    ("TestReordering", "test_mw_4_incremental_saves_keep_the_order"),
    ("TestNotAtomic", "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[threads]"),
    ("TestStaleLoad", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[threads]"),
    ("TestOwnGeneration", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[threads]"),
    ("TestLockOfItsOwn", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[threads]"),
    ("TestLockOfItsOwn", "test_mw_2_lock_excludes_another_store_object"),
    ("TestReentrantForItsObject", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[one object]"),
    ("TestAsyncPlainLock", "test_aio_2_shared_tasks_lose_nothing"),
    ("TestAsyncPlainLock", "test_aio_2_lock_lets_its_holder_and_its_tasks_take_it_again"),
    # The async kit, on an async table store with one mistake each (AIO-2, AIO-3, AIO-4, MW-*, PER-*, WRP-5).
    ("TestTwoStepSave", "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[tasks]"),
    ("TestTwoStepSave", "test_aio_4_a_cancelled_save_is_whole_or_nothing"),
    ("TestCheckThenWrite", "test_mw_3_first_saves_racing_one_wins"),
    ("TestFirstSaveUnchecked", "test_mw_3_first_saves_racing_one_wins"),
    ("TestRewriteInPlace", "test_mw_4_incremental_saves_keep_the_order"),
    ("TestNewestFirst", "test_mw_4_incremental_saves_keep_the_order"),
    ("TestRevivesInPlace", "test_mw_4_incremental_saves_keep_the_order"),
    ("TestKeptOnCancel", "test_aio_4_a_cancel_inside_lock_lets_it_go"),
    ("TestAnyTaskOfTheObject", "test_aio_2_lock_excludes_another_task_of_the_same_object"),
    ("TestIgnoresLockWait", "test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing"),
    ("TestWritesPastTimeout", "test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing"),
    ("TestCloseKeepsLock", "test_wrp_5_close_lets_go_and_the_store_opens_again"),
    ("TestLenientLoad", "test_per_13_damage_is_reported_and_left_alone"),
    ("TestCachedLoad", "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[tasks]"),
    ("TestCachedLoad", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[tasks]"),
    ("TestAsyncLockOfItsOwn", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[tasks]"),
    ("TestAsyncLockOfItsOwn", "test_mw_2_lock_excludes_another_store_object"),
    ("TestTwoStepSave", "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[one object]"),
    ("TestAnyTaskOfTheObject", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[one object]"),
    ("TestForgetsWorking", "test_aio_3_an_empty_store_loads_none_and_a_save_loads_back"),
    ("TestNoGenerationCheck", "test_mw_3_two_async_writers_from_one_generation_one_wins"),
    ("TestUpsertsThenConflicts", "test_mw_3_two_async_writers_from_one_generation_one_wins"),
    ("TestRacesUnlocked", "test_aio_2_shared_tasks_lose_nothing"),
    ("TestDoubleNumbers", "test_aio_3_an_empty_store_loads_none_and_a_save_loads_back"),
    ("TestDiesInAForkedWriter", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]"),
    ("TestFailsInAForkedWriter", "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]"),
]
#: The stores of the first rounds: every kit check runs on each of them.
OLDER = {
    "TestIncremental",
    "TestReordering",
    "TestNotAtomic",
    "TestStaleLoad",
    "TestOwnGeneration",
    "TestLockOfItsOwn",
    "TestReentrantForItsObject",
    "TestAsyncPlainLock",
}
#: A -k expression for them: no table store's name.
OLDER_NAMES = [
    "not Table",
    "not TwoStep",
    "not CheckThen",
    "not FirstSave",
    "not RewriteIn",
    "not NewestFirst",
    "not RevivesIn",
    "not KeptOn",
    "not AnyTask",
    "not IgnoresLock",
    "not WritesPast",
    "not CloseKeeps",
    "not Lenient",
    "not CachedLoad",
    "not AsyncLockOfItsOwn",
    "not ForgetsWorking",
    "not NoGenerationCheck",
    "not UpsertsThen",
    "not RacesUnlocked",
    "not DoubleNumbers",
    "not DiesInAForked",
    "not FailsInAForked",
]


def _run_broken(folder, selection, stores=BROKEN, timeout=900):
    """The kit on the broken stores (a module's text, ``BROKEN`` by default) that ``selection`` (a -k expression)
    picks, in a pytest of its own that must end within ``timeout`` seconds: which tests failed, and the output."""
    module = folder / "test_broken_stores.py"
    module.write_text(stores, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rf"]
        + ["-W", "error::sentinel_memory.core.errors.IgnoredValueWarning", "-k", selection],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))},
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    failed = set(re.findall(r"^FAILED \S+::(\w+::\w+(?:\[[^\]]*\])?)", result.stdout, re.M))
    return failed, result.stdout


def _named_checks(stores):
    """A -k expression for the kit check named for each of ``stores``' mistakes (``CAUGHT``) on that store."""
    return " or ".join(f"({store} and {check.split('[')[0]})" for store, check in CAUGHT if store in stores)


@pytest.fixture(scope="module")
def older_verdicts(tmp_path_factory):
    """Every kit test on the correct incremental store, and on each unsafe store of the first rounds the checks named
    for its mistake: which failed, and the output."""
    chosen = f"TestIncremental or {_named_checks(OLDER)}"
    return _run_broken(tmp_path_factory.mktemp("broken"), f"({chosen}) and " + " and ".join(OLDER_NAMES))


@pytest.fixture(scope="module")
def table_verdicts(tmp_path_factory):
    """Every async kit test on the correct async table store, and on each unsafe one the checks named for its mistake
    (the others would each wait out their deadline on a broken store): which failed, and the output."""
    tables = {store for store, _ in CAUGHT if store not in OLDER}
    return _run_broken(tmp_path_factory.mktemp("broken-async"), f"TestAsyncTableStore or {_named_checks(tables)}")


def failures_of(verdicts, store):
    failed, _ = verdicts
    return {name.split("::")[1] for name in failed if name.startswith(f"{store}::")}


def test_mw_4_the_kit_passes_a_correct_incremental_store(older_verdicts):
    """MW-4: the example store with a correct save_changes passes every kit test, the new order check included."""
    assert failures_of(older_verdicts, "TestIncremental") == set(), older_verdicts[1][-3000:]


def test_aio_3_the_async_kit_passes_a_correct_async_table_store(table_verdicts):
    """AIO-7, AIO-3, MW-3: an async store whose save checks and writes in one step and whose lock is the holder's passes every async kit check."""
    assert failures_of(table_verdicts, "TestAsyncTableStore") == set(), table_verdicts[1][-3000:]


@pytest.mark.parametrize(("store", "caught_by"), [(store, check) for store, check in CAUGHT if store in OLDER])
def test_mw_6_the_kit_fails_each_unsafe_store(older_verdicts, store, caught_by):
    """MW-2, MW-4, MW-6, PER-3, AIO-2: each unsafe store of the first rounds, sync or async, fails the kit check named for its mistake."""
    assert caught_by in failures_of(older_verdicts, store), older_verdicts[1][-4000:]


@pytest.mark.parametrize(("store", "caught_by"), [(store, check) for store, check in CAUGHT if store not in OLDER])
def test_aio_7_the_async_kit_fails_each_unsafe_table_store(table_verdicts, store, caught_by):
    """AIO-2, AIO-3, AIO-4, AIO-7, MW-3, MW-4, MW-6, MW-8, PER-3, PER-13, WRP-5: each unsafe async table store fails the kit check named for its mistake."""
    assert caught_by in failures_of(table_verdicts, store), table_verdicts[1][-4000:]


def test_aio_2_the_async_kit_says_a_check_that_never_ends_is_a_deadlock_and_what_lock_must_do(older_verdicts):
    """AIO-2: a lock its holder cannot take again leaves a shared change waiting on itself: the kit stops waiting at its
    deadline (5 s here) and says why."""
    said = (
        "Failed: shared writers in tasks did not end in 5 s: a deadlock? lock() must let the task holding it, and the "
        "tasks it starts, take it again (AIO-2), as a shared change saves while it holds the lock"
    )
    assert said in older_verdicts[1], older_verdicts[1][-4000:]


def _says_then_lists_problems(output, said):
    """Whether pytest's ``output`` shows an AssertionError saying ``said``, then problems each on a line of its own."""
    return re.search(rf"^E +AssertionError: {re.escape(said)}\nE +[a-z ]+: .+\nE +[a-z ]+: ", output, re.M)


def test_mw_6_a_failed_history_says_the_writers_mode_then_each_problem_on_a_line(older_verdicts):
    """MW-6, PER-3: a store that loses, tears or reads stale fails the history checks with the writers' mode, then each
    problem the history shows on a line of its own."""
    output = older_verdicts[1]
    for said in ("with writers in threads:", "a reader beside a writer (threads):"):
        assert _says_then_lists_problems(output, said), output
    # each problem names who did what: the writers by their number, the reader as the reader
    assert re.search(r"^E +lock held twice: writer \d and writer \d held lock\(\) at once \(MW-2\)$", output, re.M), (
        output
    )
    assert re.search(r"^E +(stale read|missing): load\(\) by reader (answered|found) ", output, re.M), output


def test_mw_2_the_kit_says_how_soon_another_store_object_took_the_lock(older_verdicts):
    """MW-2: a lock that keeps no other store object out fails the kit with how long after the hold the other took it."""
    took = re.findall(
        r"^E +AssertionError: another store object took lock\(\) (\d+\.\d\d) s after it was held elsewhere$",
        older_verdicts[1],
        re.M,
    )
    assert took and all(float(after) < 5 for after in took), older_verdicts[1][-4000:]


def test_mw_2_the_async_kit_says_what_a_store_that_reorders_or_lets_another_object_in_did(table_verdicts):
    """MW-4, MW-2, MW-6, AIO-2: a store that reorders its entries, one whose lock lets another store object in, and ones
    whose forked writers die or fail, fail the async kit saying so."""
    for said in (
        "AssertionError: save_changes changed the stored order",
        "AssertionError: another store object took lock() while it was held elsewhere",
        "Failed: writer 0 (a forked process) ended without a history",
    ):
        assert said in table_verdicts[1], table_verdicts[1][-4000:]
    assert re.search(
        r"AssertionError: \d of 3 first saves of generation 1 were acknowledged: a first save must conflict with "
        r"another one as any save does \(there is no row to lock before it: insert the row first, MW-3\)",
        table_verdicts[1],
    ), table_verdicts[1][-4000:]
    # a forked writer's failure names the writer, as a task's does
    assert re.search(
        r"^E +writer failed: writer \d raised OSError: connection used after fork", table_verdicts[1], re.M
    )


def test_mw_6_a_failed_async_history_says_the_writers_mode_then_each_problem_naming_who(table_verdicts):
    """MW-6, PER-3, AIO-3: an async store that loses, reads stale or lets two writers hold the lock fails the async
    history checks with the writers' mode, then each problem on a line of its own, naming the writers by number and
    the reader as the reader."""
    output = table_verdicts[1]
    for said in ("with async writers in tasks:", "a reader beside an async writer (tasks):"):
        assert _says_then_lists_problems(output, said), output
    # in tasks: the forked writers of the stores that die or fail at a fork name themselves in a branch of their own
    tasks = r"^E +AssertionError: with async writers in tasks:\n(?:E .*\n)*?E +"
    assert re.search(tasks + r"lock held twice: writer \d and writer \d held lock\(\) at once \(MW-2\)$", output, re.M)
    for problem in (
        r"stale read: load\(\) by reader answered generation \d+ after generation \d+ was acknowledged",
        r"writer failed: writer \d raised ConflictError: ",
    ):
        assert re.search(rf"^E +{problem}", output, re.M), problem


def test_aio_2_the_async_kit_says_how_many_acknowledged_remembers_shared_tasks_lost(table_verdicts):
    """AIO-2, MW-6: a store whose writers overwrite each other fails the shared-tasks check with how many of its 30
    acknowledged remembers are gone (some, never all: the last save keeps its own)."""
    lost = re.findall(r"^E +AssertionError: (\d+) acknowledged remembers lost$", table_verdicts[1], re.M)
    assert lost and all(0 < int(count) < 30 for count in lost), table_verdicts[1][-4000:]


def test_aio_2_the_async_kit_says_what_lock_must_do_against_another_task_of_the_object(table_verdicts):
    """AIO-2: a lock that any task of the object may take fails the kit with what lock() must do, whole."""
    said = (
        "AssertionError: a task that is neither the holder nor one it started took lock() while it was held: lock() "
        "must exclude other tasks of the same store object (AIO-2)"
    )
    assert said in table_verdicts[1], table_verdicts[1][-4000:]


class TestAsyncRedisStoreKit(AsyncStoreSuite):
    """AIO-2, AIO-3, RDS-3: the built-in async store passes the async kit, each check on a key of its own."""

    @pytest.fixture(autouse=True)
    def _redis(self, redis_server):
        self.url = redis_server.url

    def make_store(self, tmp_path):
        return sm.AsyncRedisStore(url=self.url, key=f"kit-{uuid.uuid4().hex}")

    def reopen(self, store):
        return sm.AsyncRedisStore(url=self.url, key=store.key)


class TestAsyncDocsStyleStore(AsyncStoreSuite):
    """AIO-2, AIO-3: an async store whose lock is re-entrant for its holder's tasks passes the async kit."""

    processes = False  # its data is a dict of this process

    def make_store(self, tmp_path):
        namespace: dict = {}
        exec(compile(BROKEN.split("class AsyncPlainLock")[0], "broken", "exec"), namespace)  # up to the good store
        self.kind, self.backend = namespace["AsyncDictStore"], {}
        return self.kind(self.backend, key=tmp_path.name)

    def reopen(self, store):
        return self.kind(self.backend, key=store.key)


def test_per_2_create_memory_refuses_an_async_store_with_type_error():
    """PER-2, AIO-3: create_memory given an async store raises TypeError naming create_async_memory; create_async_memory drives it."""
    import asyncio

    class Async:
        async def load(self):
            return None

        async def save(self, document):
            self.document = document

    with pytest.raises(TypeError, match="create_async_memory"):
        sm.create_memory(store=Async())
    assert asyncio.run(sm.create_async_memory(store=Async())).threaded is False
    with pytest.raises(TypeError):
        asyncio.run(sm.create_async_memory(store=object()))


@pytest.mark.parametrize(
    "text",
    [
        b"\xef\xbb\xbf{}",
        b"\xff",
        '{"version": 1, "entries": [], "x": NaN}',
        '{"version": 1, "entries": [], "entries": []}',
        '{"version": 1, "entries": [], "x": ' + "9" * 4301 + "}",
        "[" * 401 + "]" * 401,
        "null",
        '{"version": 2, "entries": []}',
        '{"version": 1, "entries": {}}',
        '{"version": 1, "entries": [], "generation": -1}',
        '{"version": 1, "entries": [',
    ],
)
def test_per_13_read_document_refuses_what_the_file_store_refuses(tmp_path, text):
    """PER-13, PER-5: the public strict parser raises DamagedStoreError, naming the location, exactly where JsonFileStore.load does."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    with pytest.raises(sm.DamagedStoreError, match="user-42"):
        sm.read_document(text, "user-42")
    path = tmp_path / "memory.json"
    path.write_bytes(raw)
    with pytest.raises(sm.DamagedStoreError):
        sm.JsonFileStore(path).load()


def test_per_13_write_document_reads_back_as_it_was():
    """PER-13, PER-3: write_document's text reads back with read_document as the same document; NaN is refused before any text."""
    document = {"version": 1, "generation": 3, "entries": [{"key": "ü🙂", "data": 2**53 + 1}], "working": {}}
    assert sm.read_document(sm.write_document(document)) == document
    with pytest.raises(ValueError):
        sm.write_document({"version": 1, "entries": [float("nan")]})


HANGS_ON_RE_ENTRY = '''
import contextlib
import threading

from sentinel_memory.testing import StoreSuite


class HangsOnReEntry:
    """lock() is a plain lock taken with no timeout: its holder taking it again waits for good."""

    def __init__(self):
        self._lock = threading.Lock()

    def load(self):
        return None

    def save(self, document):
        with self.lock():  # the check and the write, one step: a shared change already holds the lock
            pass

    def generation(self):
        return 0

    @contextlib.contextmanager
    def lock(self):
        self._lock.acquire()
        try:
            yield
        finally:
            self._lock.release()


class TestHangsOnReEntry(StoreSuite):
    processes = False
    deadline = 1.0

    def make_store(self, tmp_path):
        return HangsOnReEntry()
'''


def test_mw_2_a_lock_its_holder_waits_on_for_good_fails_the_check_and_the_run_still_ends(tmp_path):
    """MW-2, MW-6: a holder whose second lock() never returns fails the re-entry check after 10 s, saying it is still
    waiting, and the history check at the suite's deadline, naming the writer; the threads left waiting do not keep
    the run's process from ending."""
    _, output = _run_broken(
        tmp_path,
        "lock_lets_its_holder_take_it_again or many_writers_leave_a_history and threads",
        HANGS_ON_RE_ENTRY,
        60,
    )
    said = (
        "Failed: lock() taken again by the thread holding it: still waiting after 10 s; lock() must be re-entrant for "
        "its holder"
    )
    assert said in output and "2 failed" in output, output[-3000:]
    assert "Failed: writer 0 did not end in 1 s: a deadlock (is lock() re-entrant?)" in output, output[-3000:]
