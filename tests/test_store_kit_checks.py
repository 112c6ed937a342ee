"""The store kit's own checks, tested: one deliberately broken store per check, and each check fails on it.

A store that passes every check of ``sentinel_memory.testing.StoreSuite``
(``GoodStore`` below, with every optional method) is the baseline: each
broken store is it with one thing wrong, and the kit must fail the check
that is about that thing. So deleting or weakening a check of the kit fails
a test here (issue 45), and so does ``in_processes`` calling a crashed
worker a success.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_memory.testing import in_processes

STORES = r'''
import contextlib
import copy
import json
import os
import threading
import time

from sentinel_memory import ConflictError, DamagedStoreError, LockTimeoutError
from sentinel_memory.core.document import working_record
from sentinel_memory.testing import StoreSuite

EMPTY = {"version": 1, "generation": 0, "entries": [], "working": {"data": {}, "updatedAt": None}}


class GoodStore:
    """One memory as a JSON text in a shared dict, with every optional method of the contract."""

    def __init__(self, backend, key, lock_wait=30.0):
        self.backend, self.key, self.lock_wait = backend, key, lock_wait
        self._lock = backend.setdefault(key + ":lock", threading.RLock())

    def _read(self):
        text = self.backend.get(self.key)
        if text is None:
            return None
        try:
            document = json.loads(text)
        except ValueError:
            raise DamagedStoreError("not JSON", self.key) from None
        if not isinstance(document, dict) or document.get("version") != 1:
            raise DamagedStoreError("not a memory", self.key)
        return document

    def load(self):
        return self._read()

    def _stored_generation(self):
        document = self._read()
        return 0 if document is None else document.get("generation", 0)

    def generation(self):
        return self._stored_generation()

    def _check(self, declared):
        found = self._stored_generation()
        if declared is not None and found != declared - 1:
            raise ConflictError(self.key, declared - 1, found)

    def _write(self, document):
        self.backend[self.key] = json.dumps(document, allow_nan=False)

    def _commit(self, document, declared):
        with self.lock():
            self._check(declared)
            self._write(document)

    def save(self, document):
        self._commit(document, document.get("generation"))

    def save_changes(self, changes):
        with self.lock():
            document = self._read() or copy.deepcopy(EMPTY)
            gone = self._replaced(changes) | set(changes.deletes)
            kept = [e for e in document["entries"] if e["key"] not in gone]
            upserts = [entry.to_dict() for entry in changes.upserts]
            document["entries"] = self._place(document["entries"], kept, upserts, set(changes.deletes))
            if changes.working is not None:
                document["working"] = working_record(changes.working)
            document["generation"] = changes.generation
            self._commit(document, changes.generation)

    def _place(self, old, kept, upserts, deletes):
        """The stored entries after an incremental save: those it keeps, in their order, then those it writes."""
        return kept + upserts

    def _replaced(self, changes):
        """The keys whose stored entries an incremental save replaces: every key it writes."""
        return {entry.key for entry in changes.upserts}

    def preserve(self):
        text = self.backend.get(self.key)
        if text is not None:
            self.backend[self.key + ":orig"] = text

    @contextlib.contextmanager
    def lock(self):
        if not self._lock.acquire(timeout=self.lock_wait):
            raise LockTimeoutError(self.key, self.lock_wait)
        try:
            yield
        finally:
            self._lock.release()

    def close(self):
        pass


# -- one thing wrong each ---------------------------------------------------------------------------


class NeverEmptyStore(GoodStore):
    """Loads an empty memory, not None, when nothing was saved."""

    def load(self):
        return self._read() or copy.deepcopy(EMPTY)


class NoWorkingStore(GoodStore):
    """Saves the entries and forgets the working memory."""

    def _write(self, document):
        super()._write({k: v for k, v in document.items() if k != "working"})


class NoRankingStore(GoodStore):
    """Saves the document without its ranking's name (BM-10)."""

    def _write(self, document):
        super()._write({k: v for k, v in document.items() if k != "ranking"})


class KeepsOldFieldsStore(GoodStore):
    """Writes a document's fields over the stored one's, as a hash store that never deletes a field would: a field the
    new document lacks (a ranking's name, BM-10) stays as it was."""

    def _write(self, document):
        super()._write({**(self._read() or {}), **document})


class NoExpiresAtStore(GoodStore):
    """Drops each entry's expiresAt: an entry with a ttl comes back without one."""

    def _write(self, document):
        entries = [{k: v for k, v in e.items() if k != "expiresAt"} for e in document["entries"]]
        super()._write(dict(document, entries=entries))


class SignlessZeroStore(GoodStore):
    """Writes a zero double (-0.0 too) as 0, as JavaScript's JSON.stringify does: equal as a number, not the same JSON."""

    def _write(self, document):
        def signless(value):
            if isinstance(value, dict):
                return {k: signless(v) for k, v in value.items()}
            if isinstance(value, list):
                return [signless(v) for v in value]
            return 0 if isinstance(value, float) and value == 0 else value

        super()._write(signless(document))


class DoubleNumbersStore(GoodStore):
    """Reads every whole number as a double, as a JavaScript service would: 2**53 + 1 comes back 2**53."""

    def _read(self):
        document = super()._read()
        return None if document is None else json.loads(json.dumps(document), parse_int=lambda s: int(float(s)))


class KeepsTheSavedDocumentStore(GoodStore):
    """Keeps the very document it was given: changing it afterwards changes the store."""

    def _write(self, document):
        self.kept = document

    def _read(self):
        return copy.deepcopy(getattr(self, "kept", None))


class HandsOutItsDocumentStore(GoodStore):
    """Hands out the document it keeps: changing a loaded one changes the store."""

    def _write(self, document):
        self.kept = copy.deepcopy(document)

    def _read(self):
        return getattr(self, "kept", None)


class TidiesByItsOwnClockStore(GoodStore):
    """Drops, on save, the entries that expired by the server's clock: expired entries must stay until compact."""

    def _write(self, document):
        now = time.time() * 1000
        entries = [e for e in document["entries"] if e.get("expiresAt") is None or e["expiresAt"] > now]
        super()._write(dict(document, entries=entries))


class IgnoresDamageStore(GoodStore):
    """Loads damage as an empty store."""

    def load(self):
        try:
            return self._read()
        except DamagedStoreError:
            return None


class SavesOverDamageStore(GoodStore):
    """Refuses to load damage, but a save overwrites it (MW-7)."""

    def _stored_generation(self):
        try:
            return super()._stored_generation()
        except DamagedStoreError:
            return 0


class DiesInAForkedWriterStore(GoodStore):
    """A save in a forked process ends that process at once (a driver that cannot live through a fork): the forked
    writer leaves no history."""

    def __init__(self, backend, key, lock_wait=30.0):
        super().__init__(backend, key, lock_wait)
        self.pid = backend.setdefault(key + ":pid", os.getpid())  # the process that made the store

    def _write(self, document):
        if os.getpid() != self.pid:
            os._exit(1)
        super()._write(document)


class ClearsDamageStore(GoodStore):
    """Refuses to load or save over damage, but clears the damaged value as it refuses a save: nothing left to repair."""

    def _stored_generation(self):
        try:
            return super()._stored_generation()
        except DamagedStoreError:
            del self.backend[self.key]
            raise


class WriteOnceStore(GoodStore):
    """Keeps the first document saved; every later save is acknowledged and dropped."""

    def _write(self, document):
        self.backend.setdefault(self.key, json.dumps(document))


class NoGenerationStore(GoodStore):
    """Loads documents without their generation: a fresh memory starts from 0 again."""

    def load(self):
        document = self._read()
        return None if document is None else {k: v for k, v in document.items() if k != "generation"}


class StaleGenerationStore(GoodStore):
    """generation() answers from a cache of this client's own last read or write, not from the store."""

    seen = 0

    def _read(self):
        document = super()._read()
        self.seen = 0 if document is None else document.get("generation", 0)
        return document

    def _write(self, document):
        super()._write(document)
        self.seen = document.get("generation", 0)

    def generation(self):
        return self.seen


class GenerationOfWholeSavesStore(GoodStore):
    """generation() answers from a key of its own that only a whole save sets: an incremental save leaves it behind."""

    def save(self, document):
        super().save(document)
        self.backend[self.key + ":generation"] = document.get("generation", 0)

    def generation(self):
        return self.backend.get(self.key + ":generation", 0)


class IncrementalKeepsTheGenerationStore(GoodStore):
    """An incremental save writes its entries and leaves the stored generation as it was (a column its UPDATE forgot):
    shared writers reload before every change and all their saves land, while the count of saves stays behind."""

    def save_changes(self, changes):
        with self.lock():
            kept = self._stored_generation()
            super().save_changes(changes)
            document = self._read()
            document["generation"] = kept
            self._write(document)


class IgnoresGenerationsStore(GoodStore):
    """Saves whatever generation a document declares: two writers overwrite each other."""

    def _check(self, declared):
        pass


class WritesThenConflictsStore(GoodStore):
    """Checks the generation only after writing: a save that conflicts has changed the store."""

    def _commit(self, document, declared):
        with self.lock():
            found = self._stored_generation()
            self._write(document)
            if declared is not None and found != declared - 1:
                raise ConflictError(self.key, declared - 1, found)


class UpsertsThenConflictsStore(GoodStore):
    """Stores a document's entries as rows, each upserted, before it checks the generation: a save that conflicts has
    added its entries to the winner's."""

    def _commit(self, document, declared):
        with self.lock():
            stored = self._read()
            found = 0 if stored is None else stored.get("generation", 0)
            if stored is not None:
                keys = {entry["key"] for entry in document["entries"]}
                entries = [e for e in stored["entries"] if e["key"] not in keys] + document["entries"]
                self._write(dict(stored, entries=entries))
            if declared is not None and found != declared - 1:
                raise ConflictError(self.key, declared - 1, found)
            self._write(document)


class DuplicatesOverwritesStore(GoodStore):
    """An incremental save appends each written entry, and keeps the entry's older version too."""

    def _replaced(self, changes):
        return set()


class ImportanceOrderStore(GoodStore):
    """Keeps its entries ordered by importance, most important first, as a table read through an index on it would."""

    def _place(self, old, kept, upserts, deletes):
        return sorted(kept + upserts, key=lambda e: -e["importance"])


class RevivesInPlaceStore(GoodStore):
    """A forgotten entry's row stays behind as a tombstone, and writing its key again revives the row where it was
    (a soft delete): the entry comes back in its old place, not last."""

    def _place(self, old, kept, upserts, deletes):
        tombstones = self.backend.setdefault(self.key + ":tombstones", {})
        tombstones.update({e["key"]: i for i, e in enumerate(old) if e["key"] in deletes})
        entries = list(kept)
        for entry in upserts:
            if entry["key"] in tombstones:
                entries.insert(min(tombstones.pop(entry["key"]), len(entries)), entry)
            else:
                entries.append(entry)
        return entries


class KeepsDeletedStore(GoodStore):
    """save_changes writes the upserts and ignores the deletes."""

    def save_changes(self, changes):
        changes = type(changes)(upserts=changes.upserts, deletes=(), working=changes.working, generation=changes.generation)
        super().save_changes(changes)


class NoLockStore(GoodStore):
    """lock() excludes nobody; a save takes a moment between its check and its write, as over a network."""

    @contextlib.contextmanager
    def lock(self):
        yield

    def _commit(self, document, declared):
        self._check(declared)
        time.sleep(0.002)
        self._write(document)


class NotReentrantLockStore(GoodStore):
    """lock() on a plain lock: its holder cannot take it again, so a shared change's save waits on its own transaction."""

    def __init__(self, backend, key, lock_wait=30.0):
        super().__init__(backend, key, lock_wait)
        self._lock = backend.setdefault(key + ":plain-lock", threading.Lock())


class ImpatientLockStore(GoodStore):
    """lock() gives up at once when the lock is held, whatever lock_wait says."""

    @contextlib.contextmanager
    def lock(self):
        if not self._lock.acquire(blocking=False):
            raise LockTimeoutError(self.key, self.lock_wait)
        try:
            yield
        finally:
            self._lock.release()


class TimesOutAfterWritingStore(GoodStore):
    """A lease lock checked only when it is let go: a write that could not take the lock goes ahead, then raises
    LockTimeoutError, having changed the store."""

    @contextlib.contextmanager
    def lock(self):
        taken = self._lock.acquire(timeout=self.lock_wait)
        try:
            yield
        finally:
            if taken:
                self._lock.release()
        if not taken:
            raise LockTimeoutError(self.key, self.lock_wait)


class FailingPreserveStore(GoodStore):
    """preserve() fails: the copy of what a lossy load dropped cannot be kept."""

    def preserve(self):
        raise OSError("no room for the copy")


class CopiesOnTheNextWriteStore(GoodStore):
    """preserve() puts the copy off to the next write, and that write goes to the copy: the save after it is lost."""

    copy_next = False

    def preserve(self):
        self.copy_next = True

    def _write(self, document):
        if self.copy_next:
            self.copy_next = False
            self.backend[self.key + ":orig"] = json.dumps(document, allow_nan=False)
        else:
            super()._write(document)


class StuckAfterTimeoutStore(GoodStore):
    """Once its lock gave up waiting, it never takes the lock again (a lock file left behind): the retry fails."""

    stuck = False

    @contextlib.contextmanager
    def lock(self):
        if self.stuck:
            raise LockTimeoutError(self.key, self.lock_wait)
        try:
            with super().lock():
                yield
        except LockTimeoutError:
            self.stuck = True
            raise


class BusyWhileReadStore(GoodStore):
    """save() refuses while a reader is loading (a file another process has open): the writer fails, the reader never does."""

    def load(self):
        readers = self.backend.setdefault(self.key + ":readers", [0])
        readers[0] += 1
        try:
            time.sleep(0.001)
            return super().load()
        finally:
            readers[0] -= 1

    def _write(self, document):
        if self.backend.get(self.key + ":readers", [0])[0]:
            raise OSError("the store is being read")
        super()._write(document)


class ClosedForGoodStore(GoodStore):
    """After close(), every call fails: it does not open again (WRP-5)."""

    closed = False

    def close(self):
        self.closed = True

    def _read(self):
        if self.closed:
            raise RuntimeError("the store is closed")
        return super()._read()


class Suite(StoreSuite):
    processes = False
    store_class = GoodStore

    def make_store(self, tmp_path):
        self.backend = {}
        return self.store_class(self.backend, tmp_path.name)

    def reopen(self, store):
        return self.store_class(self.backend, store.key)

    def damage(self, store):
        self.backend[store.key] = "this is not a memory"
        return self.snapshot(store)

    def snapshot(self, store):
        return self.backend.get(store.key)


class TestGoodStore(Suite):
    pass


for _name, _class in list(globals().items()):
    if _name.endswith("Store") and _name != "GoodStore" and isinstance(_class, type):
        globals()["Test" + _name] = type("Test" + _name, (Suite,), {"store_class": _class})


class TestDiesInAForkedWriterStore(Suite):
    store_class = DiesInAForkedWriterStore
    processes = True  # its writers fork; each dies at its first save, before it can share anything
'''

#: Each check of the kit, and the broken stores it must fail (at least one per check).
BROKEN = {
    "test_mw_2_lock_lets_its_holder_take_it_again": ["NotReentrantLockStore"],
    "test_per_2_an_empty_store_loads_none": ["NeverEmptyStore"],
    "test_per_3_a_save_loads_back_as_it_was": ["NoWorkingStore", "NoExpiresAtStore"],
    "test_per_3_unicode_and_big_numbers_survive": ["DoubleNumbersStore", "SignlessZeroStore"],
    "test_bm_10_the_rankings_name_loads_back": ["NoRankingStore", "KeepsOldFieldsStore"],
    "test_per_10_documents_are_copies": ["KeepsTheSavedDocumentStore", "HandsOutItsDocumentStore"],
    "test_per_12_expired_entries_are_saved_and_stay_invisible": ["TidiesByItsOwnClockStore"],
    "test_per_13_damage_is_reported_and_left_alone": [
        "IgnoresDamageStore",
        "SavesOverDamageStore",
        "ClearsDamageStore",
    ],
    "test_per_19_writes_after_a_lossy_load[False]": ["WriteOnceStore"],
    "test_per_19_writes_after_a_lossy_load[True]": ["WriteOnceStore"],
    "test_mw_1_generations_count_saves": ["NoGenerationStore", "GenerationOfWholeSavesStore"],
    "test_mw_3_two_writers_from_one_generation_one_wins": ["IgnoresGenerationsStore", "UpsertsThenConflictsStore"],
    "test_mw_3_an_autosave_that_conflicts_changes_nothing": ["WritesThenConflictsStore"],
    "test_mw_4_incremental_saves_hold_what_a_whole_save_holds": ["KeepsDeletedStore", "DuplicatesOverwritesStore"],
    "test_mw_4_incremental_saves_keep_the_order": ["ImportanceOrderStore", "RevivesInPlaceStore"],
    "test_mw_6_writers_in_shared_mode_lose_nothing": ["NoLockStore", "IncrementalKeepsTheGenerationStore"],
    "test_mw_2_a_transaction_reads_and_writes_as_one": ["StaleGenerationStore"],
    "test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing": [
        "ImpatientLockStore",
        "StuckAfterTimeoutStore",
        "TimesOutAfterWritingStore",
    ],
    "test_per_14_a_lossy_load_keeps_the_original": ["FailingPreserveStore", "CopiesOnTheNextWriteStore"],
    "test_wrp_5_a_closed_store_opens_again": ["ClosedForGoodStore"],
    "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[threads]": ["BusyWhileReadStore"],
    "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]": ["DiesInAForkedWriterStore"],
}


def kit_checks() -> set[str]:
    """The kit's checks as pytest names them (a parametrized check once per parameter)."""
    from sentinel_memory.testing import StoreSuite

    names = set()
    for name in dir(StoreSuite):
        if name.startswith("test_"):
            marks = getattr(getattr(StoreSuite, name), "pytestmark", [])
            params = [m.args[1] for m in marks if m.name == "parametrize"]
            names |= {f"{name}[{value}]" for value in params[0]} if params else {name}
    return names


#: The kit's checks of stores under concurrency: their broken stores (a save that is not atomic, a stale cached load,
#: a lock that excludes nobody, a reordering incremental save) are the Extending page's store, varied, in
#: tests/test_store_kit_catches.py.
CAUGHT_ELSEWHERE = {
    "test_mw_2_lock_excludes_another_store_object",
    "test_mw_4_incremental_saves_keep_the_order",
    "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[threads]",
    "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[one object]",
    "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]",
    "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[threads]",
    "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[one object]",
}


def test_per_2_every_check_of_the_kit_has_a_broken_store():
    """PER-2: the table below (or the concurrency checks' own file) names a broken store for every check StoreSuite makes, and no check that is not there."""
    assert set(BROKEN) | CAUGHT_ELSEWHERE == kit_checks()
    catches = (Path(__file__).parent / "test_store_kit_catches.py").read_text(encoding="utf-8")
    assert all(check.split("[")[0] in catches for check in CAUGHT_ELSEWHERE)


@pytest.fixture(scope="module")
def kit_folder(tmp_path_factory):
    """A folder holding the good store and every broken one as a test module, ``test_kit_stores.py``."""
    folder = tmp_path_factory.mktemp("kit")
    (folder / "test_kit_stores.py").write_text(STORES, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def verdicts(kit_folder):
    """Run the good store through every check, and each broken store through its own: {(suite, check): outcome}, the
    output's end, and {(suite, check): the first line of what a failed check said}."""
    folder = kit_folder
    module = folder / "test_kit_stores.py"
    targets = [f"{module.name}::TestGoodStore"]
    for check, stores in BROKEN.items():
        targets += [f"{module.name}::Test{store}::{check}" for store in stores]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-o", "addopts=", "-rA", "-q"],
        cwd=folder,
        check=False,
        capture_output=True,
        text=True,
        # seconds when every check ends its threads; a thread left running (a reader never told to stop after a
        # forked writer died) keeps the process alive for minutes
        timeout=180,
        env={**os.environ, "COLUMNS": "1000"},  # each failure's line whole in the summary
    )
    found = re.findall(
        r"^(PASSED|FAILED|SKIPPED|ERROR) \S+::(\w+)::(\w+(?:\[[^\]]*\])?)(?: - (.*))?$", result.stdout, re.M
    )
    outcomes = {(suite, check): outcome for outcome, suite, check, _ in found}
    said = {(suite, check): message for outcome, suite, check, message in found if outcome == "FAILED"}
    return outcomes, result.stdout[-4000:], said


def test_per_2_a_store_with_everything_right_passes_every_check(verdicts):
    """PER-2: the baseline store passes every check of the kit, none skipped, so each broken store differs from a passing one by one thing."""
    outcomes, output, _ = verdicts
    good = {check: outcome for (suite, check), outcome in outcomes.items() if suite == "TestGoodStore"}
    # The baseline store lives in one process's dict, so the kit's forked writers are skipped for it.
    forked = "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]"
    assert good.pop(forked, "SKIPPED") == "SKIPPED", output
    assert good == dict.fromkeys((set(BROKEN) | CAUGHT_ELSEWHERE) - {forked}, "PASSED"), output


@pytest.mark.parametrize(("check", "store"), [(c, s) for c, stores in BROKEN.items() for s in stores])
def test_per_2_each_check_fails_its_broken_store(verdicts, check, store):
    """PER-2, MW-3, MW-7, PER-10: each check of the kit fails the store broken in what the check is about."""
    outcomes, output, _ = verdicts
    assert outcomes.get((f"Test{store}", check)) == "FAILED", output


@pytest.mark.parametrize(
    ("store", "check", "message"),
    [
        (
            "IgnoresDamageStore",
            "test_per_13_damage_is_reported_and_left_alone",
            "Failed: a memory loading the damaged store did not raise DamagedStoreError",
        ),
        (
            "SavesOverDamageStore",
            "test_per_13_damage_is_reported_and_left_alone",
            "Failed: store.save() over the damage (MW-7) did not raise DamagedStoreError",
        ),
        (
            "ClearsDamageStore",
            "test_per_13_damage_is_reported_and_left_alone",
            "AssertionError: the damaged store was changed",
        ),
        (
            "RevivesInPlaceStore",
            "test_mw_4_incremental_saves_keep_the_order",
            "AssertionError: save_changes changed the stored order",
        ),
        (
            "DiesInAForkedWriterStore",
            "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[processes]",
            "Failed: writer 0 (a forked process) ended without a history",
        ),
        (
            "ImpatientLockStore",
            "test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing",
            "AssertionError: lock_wait was 0.2 s, but the lock gave up after 0.00 s",
        ),
        (
            "BusyWhileReadStore",
            "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[threads]",
            "AssertionError: a reader beside a writer (threads):",
        ),
    ],
)
def test_per_13_the_kit_says_what_failed_and_where(verdicts, store, check, message):
    """PER-13, MW-4, MW-7, MW-8, PER-3: a broken store fails the kit with a message naming what went wrong: the call that did not refuse the damage, the damage changed, the order changed, the wait the lock gave up after, the writers' mode."""
    _, output, said = verdicts
    assert said.get((f"Test{store}", check)) == message, output


def test_mw_2_the_kit_says_a_lock_its_holder_cannot_take_again_must_be_re_entrant(verdicts):
    """MW-2: a lock its holder cannot take again fails the kit with what the second take did and what lock() must be."""
    _, output, said = verdicts
    message = said.get(("TestNotReentrantLockStore", "test_mw_2_lock_lets_its_holder_take_it_again"), "")
    assert message.startswith("Failed: lock() taken again by the thread holding it: LockTimeoutError("), output
    assert message.endswith("); lock() must be re-entrant for its holder"), output


# -- in_processes -------------------------------------------------------------------------------------


def test_mw_6_in_processes_reports_each_workers_end():
    """MW-6: in worker order, a worker that returns is 0, one that raises or calls sys.exit 1, an os._exit its code, a signal minus it."""

    def work(worker: int) -> None:
        if worker == 1:
            raise RuntimeError("a failed write")
        if worker == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        if worker == 3:
            os._exit(7)
        if worker == 4:
            sys.exit(0)  # not a return: the worker did not finish its work

    codes = in_processes(5, work)
    assert codes == [0, 1, -signal.SIGKILL, 7, 1]


def test_mw_6_in_processes_runs_the_workers_at_once(tmp_path):
    """MW-6: every worker runs with its own number, and the call returns after all have ended."""

    def work(worker: int) -> None:
        Path(tmp_path, str(worker)).write_text("done", encoding="utf-8")

    assert in_processes(3, work) == [0, 0, 0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1", "2"]
