"""The store kit's history check, each mistake in a history built by hand, and its lock check on a lock that excludes for a moment (MW-2, MW-3, MW-6, PER-3).

``history_problems`` judges what concurrent writers and readers left: each
test below builds the sound history of two writers, then the same history
with one thing wrong, at the boundary where it starts to be wrong, and the
check must name it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from sentinel_memory import LockTimeoutError, MemoryStore
from sentinel_memory.testing import (
    AsyncRecordingStore,
    RecordingStore,
    StoreSuite,
    _remembering,
    _remembering_async,
    history_problems,
)


def save(worker: str, generation: int, start: int, end: int, **more: Any) -> dict[str, Any]:
    return {"worker": worker, "op": "save", "generation": generation, "start": start, "end": end, **more}


def load(worker: str, generation: int | None, entries: int | None, start: int, end: int, **more: Any) -> dict[str, Any]:
    missing = generation is None
    return {
        "worker": worker,
        "op": "load",
        "start": start,
        "end": end,
        "missing": missing,
        "generation": generation,
        "entries": entries,
        **more,
    }


def remember(worker: str, key: str, start: int, end: int, **more: Any) -> dict[str, Any]:
    return {"worker": worker, "op": "remember", "key": key, "start": start, "end": end, **more}


def document(*keys: str) -> dict[str, Any]:
    return {"version": 1, "generation": len(keys), "entries": [{"key": key} for key in keys]}


def sound() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Two writers, one save each, one after the other, and a reader after each save."""
    events = [
        save("w1", 1, 10, 20),
        remember("w1", "w1:0", 5, 21),
        load("r", 1, 1, 25, 26),
        save("w2", 2, 30, 40),
        remember("w2", "w2:0", 28, 41),
        load("r", 2, 2, 45, 46),
        {"worker": "w1", "op": "lock", "start": 10, "end": 20},
        {"worker": "w2", "op": "lock", "start": 30, "end": 40},
    ]
    return events, document("w1:0", "w2:0")


def test_mw_6_a_sound_history_has_no_problem():
    """MW-6: the history one writer after another leaves is sound, and so is a read that starts as a save is acknowledged."""
    events, final = sound()
    assert history_problems(events, final) == []
    events.append(load("r", 1, 1, 40, 41))  # started exactly as generation 2 was acknowledged: not after it
    assert history_problems(events, final) == []


def test_mw_3_two_writers_acknowledged_saves_of_one_generation_are_a_lost_update():
    """MW-3: two writers' saves of one generation, both acknowledged, are a lost update."""
    events, _ = sound()
    events[3] = save("w2", 1, 30, 40)
    events[5] = load("r", 1, 1, 45, 46)
    (problem,) = history_problems(events, document("w1:0", "w2:0") | {"generation": 1})
    assert problem.startswith("lost update: w1 and w2 both saved generation 1")


def test_mw_6_a_read_one_generation_stale_is_reported():
    """MW-6, MW-2: a load started after generation 2 was acknowledged that answers generation 1 is a stale read."""
    events, final = sound()
    events.append(load("r", 1, 1, 41, 42))  # one nanosecond after the acknowledgement
    (problem,) = history_problems(events, final)
    assert problem.startswith("stale read: load() by r answered generation 1 after generation 2")


def test_per_3_a_torn_document_missing_an_entry_is_reported():
    """PER-3: a load of generation 2 holding one entry (one fewer than its generation holds) is a partial document."""
    events, final = sound()
    events[5] = load("r", 2, 1, 45, 46)
    (problem,) = history_problems(events, final)
    assert problem.startswith("partial document: load() by r read generation 2 holding 1 entries")


def test_mw_6_an_acknowledged_remember_missing_from_the_final_document_is_reported():
    """MW-6: an acknowledged remember whose key is not in the final document is a lost update, even with other keys stored."""
    events, _ = sound()
    (problem,) = history_problems(events, document("w1:0") | {"generation": 2})
    assert problem == "lost update: w2's acknowledged remember('w2:0') is not stored"


def test_mw_6_a_shared_writer_that_raised_is_reported():
    """MW-6: a writer whose remember raised (whatever the error) is a problem: a shared writer, or one alone, never fails."""
    events, final = sound()
    events.append(remember("w2", "w2:1", 50, 51, error="OSError: disk full"))
    (problem,) = history_problems(events, final)
    assert problem == "writer failed: w2 raised OSError: disk full (a writer alone or shared never conflicts, MW-6)"


def test_per_3_a_read_that_finds_nothing_after_the_first_save_is_reported():
    """PER-3: a load started after generation 1 was acknowledged that finds no document is a save that is not atomic."""
    events, final = sound()
    events.insert(3, load("r", None, None, 21, 22))
    (problem,) = history_problems(events, final)
    assert problem.startswith("missing: load() by r found nothing after generation 1 was saved")
    events, final = sound()
    events.insert(0, load("r", None, None, 1, 2))  # before any save: nothing there is right
    assert history_problems(events, final) == []


def test_mw_2_two_writers_holding_lock_at_once_are_reported():
    """MW-2: two writers' lock() holds that overlap are reported; one writer taking it again is not."""
    events, final = sound()
    events.append({"worker": "w2", "op": "lock", "start": 19, "end": 22})
    (problem,) = history_problems(events, final)
    assert problem == "lock held twice: w1 and w2 held lock() at once (MW-2)"


class SharedLockStore(MemoryStore):
    """A MemoryStore whose lock() is a lock shared by every object made over one ``place`` (as a file's sidecar lock)."""

    lock_wait = 30.0

    def __init__(self, place: dict[str, Any]) -> None:
        super().__init__()
        self.place = place
        self.shared = place.setdefault("lock", threading.Lock())

    @contextlib.contextmanager
    def lock(self):
        if not self.shared.acquire(timeout=self.lock_wait):
            raise LockTimeoutError("place", self.lock_wait)
        try:
            yield
        finally:
            self.shared.release()


class MomentaryLockStore(SharedLockStore):
    """lock() waits a moment (20 ms) for another holder, then goes in anyway: it excludes only for a moment."""

    @contextlib.contextmanager
    def lock(self):
        got = self.shared.acquire(timeout=0.02)
        try:
            yield
        finally:
            if got:
                self.shared.release()


class LockSuite(StoreSuite):
    store_class: type = SharedLockStore

    def make_store(self, tmp_path: Any) -> Any:
        self.place: dict[str, Any] = {}
        return self.store_class(self.place)

    def reopen(self, store: Any) -> Any:
        other = self.store_class(self.place)
        other._text, other._generation = copy.copy(store._text), store._generation
        return other


def test_mw_2_the_lock_check_passes_a_lock_that_excludes_until_let_go(tmp_path):
    """MW-2: the kit's lock check passes a lock() another object cannot take until it is let go (it times out instead)."""
    LockSuite().test_mw_2_lock_excludes_another_store_object(tmp_path)


def test_mw_2_the_lock_check_fails_a_lock_that_excludes_for_only_a_moment(tmp_path):
    """MW-2: the kit's lock check fails a lock() that keeps another store object out for 20 ms and then lets it in."""
    suite = LockSuite()
    suite.store_class = MomentaryLockStore
    with pytest.raises(AssertionError, match="another store object took lock"):
        suite.test_mw_2_lock_excludes_another_store_object(tmp_path)


class _Holding:
    """A store that hands back the one document it was given, whatever it holds."""

    def __init__(self, document: Any) -> None:
        self.document = document

    def load(self) -> Any:
        return self.document

    def save(self, document: Any) -> None:
        self.document = document


@pytest.mark.parametrize(
    ("document", "generation"),
    [
        ({"version": 1, "entries": []}, 0),  # no generation: a store's first document (MW-1)
        ({"version": 1, "generation": 3, "entries": []}, 3),
        ({"version": 1, "generation": 3.0, "entries": []}, 3),
        ({"version": 1, "generation": True, "entries": []}, None),
        ({"version": 1, "generation": "2", "entries": []}, None),
        ([], None),
    ],
)
def test_mw_1_the_recorder_names_each_documents_generation(document: Any, generation: int | None) -> None:
    """MW-1: a recorded load and save carry the document's generation: 0 when it names none, None when it is no number."""
    events: list[dict[str, Any]] = []
    recorder = RecordingStore(_Holding(document), "w", events)
    assert recorder.load() is document
    recorder.save(document)
    assert [(event["op"], event["generation"]) for event in events] == [("load", generation), ("save", generation)]
    assert all(0 < event["start"] <= event["end"] for event in events)


def test_mw_3_the_lost_update_names_both_writers_and_why_whole():
    """MW-3: a lost update between two savers is said whole, with the generation and the rule."""
    events, _ = sound()
    events[3] = save("w2", 1, 30, 40)
    events[5] = load("r", 1, 1, 45, 46)
    assert history_problems(events, document("w1:0", "w2:0") | {"generation": 1}) == [
        "lost update: w1 and w2 both saved generation 1 and both were acknowledged (the generation check and the "
        "write must be one step against other savers, MW-3)"
    ]


def test_mw_3_incremental_saves_count_as_saves_and_a_refused_save_does_not():
    """MW-3, MW-4: two acknowledged save_changes of one generation are a lost update; a save that raised (a conflict) is no save."""
    events, _ = sound()
    events[3] = {**save("w2", 1, 30, 40), "op": "save_changes"}
    events[0] = {**events[0], "op": "save_changes"}
    events[5] = load("r", 1, 1, 45, 46)
    final = document("w1:0", "w2:0") | {"generation": 1}
    (problem,) = history_problems(events, final)
    assert problem.startswith("lost update: w1 and w2 both saved generation 1")
    events[3] = save("w2", 1, 30, 40, error="ConflictError: generation 1 was saved by another writer")
    events.pop(4)  # w2's remember, which that conflict refused
    assert history_problems(events, document("w1:0")) == []


@pytest.mark.parametrize("op", ["load", "generation"])
def test_per_3_a_read_that_raised_beside_writers_is_reported_whole(op: str):
    """PER-3: a load() or generation() that raised beside saving writers is a problem, said whole; one that waited out the lock (LockTimeoutError) is not."""
    events, final = sound()
    events.append({"worker": "r", "op": op, "start": 31, "end": 32, "error": "DamagedStoreError: not JSON"})
    assert history_problems(events, final) == [
        f"read failed: {op}() by r raised DamagedStoreError: not JSON beside saving writers"
    ]
    events[-1]["error"] = "LockTimeoutError: the lock was held for 1 s"
    assert history_problems(events, final) == []


def test_mw_6_a_stale_generation_is_reported_whole():
    """MW-6: a generation() started after generation 2 was acknowledged that answers 1 is a stale read, said whole."""
    events, final = sound()
    events.append({"worker": "r", "op": "generation", "start": 41, "end": 42, "generation": 1})
    assert history_problems(events, final) == [
        "stale read: generation() by r answered generation 1 after generation 2 was acknowledged (a cached load or "
        "generation that misses other writers)"
    ]


def test_mw_2_a_lock_that_was_refused_or_let_go_first_is_not_held_twice():
    """MW-2: a lock() that raised (it was never held) overlapping another's is no problem, nor is one taken exactly as the other is let go."""
    events, final = sound()
    events.append({"worker": "w2", "op": "lock", "start": 19, "end": 22, "error": "LockTimeoutError: held"})
    assert history_problems(events, final) == []
    events[-1] = {"worker": "w2", "op": "lock", "start": 20, "end": 22}  # w1 let go at 20
    assert history_problems(events, final) == []


def test_mw_6_each_kind_of_problem_is_said_three_times_at_most():
    """MW-6: the problems come grouped by kind, in the order each kind was first found, the first three of each."""
    events, final = sound()
    for reader in range(5):
        events.append(load(f"r{reader}", 1, 1, 41 + reader, 42 + reader))
    events.append({"worker": "w2", "op": "lock", "start": 19, "end": 22})
    problems = history_problems(events, final)
    assert [problem.split(" by ")[0] if problem.startswith("stale") else problem for problem in problems] == [
        "stale read: load()",
        "stale read: load()",
        "stale read: load()",
        "lock held twice: w1 and w2 held lock() at once (MW-2)",
    ]
    assert [problem.split(" by ")[1].split()[0] for problem in problems[:3]] == ["r0", "r1", "r2"]


def test_mw_3_a_late_save_of_an_old_generation_is_a_lost_update_and_no_read():
    """MW-3: a save of generation 1 acknowledged after generation 2 is one lost update; a save is no read, so not also a stale one."""
    events, _ = sound()
    events.append(save("w3", 1, 50, 60))
    assert [problem.split(":")[0] for problem in history_problems(events, document("w1:0", "w2:0"))] == ["lost update"]


_OPTIONAL = ("save_changes", "generation", "lock", "preserve", "close")


class _Everything(_Holding):
    """A store with every optional method of the contract, each answering at once."""

    def save_changes(self, changes: Any) -> None:
        pass

    def generation(self) -> int:
        return 7

    @contextlib.contextmanager
    def lock(self) -> Any:
        yield

    def preserve(self) -> str:
        return "the copy"

    def close(self) -> None:
        pass


def test_mw_6_the_recorder_has_the_stores_optional_methods_and_records_each_call():
    """MW-6: a recorder has exactly the optional methods its store has, and each call of one is recorded with what it answered."""
    events: list[dict[str, Any]] = []
    assert [hasattr(RecordingStore(_Holding(None), "w", events), name) for name in _OPTIONAL] == [False] * 5
    recorder = RecordingStore(_Everything(None), "w", events)
    assert [hasattr(recorder, name) for name in _OPTIONAL] == [True] * 5
    recorder.save_changes(SimpleNamespace(generation=3))
    assert recorder.generation() == 7 and recorder.preserve() == "the copy"
    recorder.close()
    assert [(event["op"], event.get("generation")) for event in events] == [
        ("save_changes", 3),
        ("generation", 7),
        ("preserve", None),
        ("close", None),
    ]
    assert all(set(event) == {"worker", "op", "start", "end"} for event in events[2:])
    assert all(event["worker"] == "w" and 0 < event["start"] <= event["end"] for event in events)
    assert repr(recorder) == f"<{recorder.store!r} as seen by w>"


class _Failing(_Everything):
    """Every call raises."""

    def load(self) -> Any:
        raise OSError("disk gone")

    def save(self, document: Any) -> None:
        raise OSError("disk full")

    def generation(self) -> int:
        raise TimeoutError("no answer")


def test_per_3_the_recorder_records_a_call_that_raised_with_its_error_and_raises_it():
    """PER-3: a load, save or generation that raised is recorded with the error's type and text, and raised on."""
    events: list[dict[str, Any]] = []
    recorder = RecordingStore(_Failing(None), "r", events)
    for call in (recorder.load, lambda: recorder.save({"generation": 2}), recorder.generation):
        with pytest.raises((OSError, TimeoutError)):
            call()
    assert [(event["op"], event["error"], event.get("generation")) for event in events] == [
        ("load", "OSError: disk gone", None),
        ("save", "OSError: disk full", 2),
        ("generation", "TimeoutError: no answer", None),
    ]
    assert "generation" not in events[0] and "generation" not in events[2]
    assert all(0 < event["start"] <= event["end"] for event in events)


def test_per_3_a_recorded_load_says_what_it_found():
    """PER-3: a recorded load says whether it found nothing, the generation, and how many entries the document holds."""
    events: list[dict[str, Any]] = []
    RecordingStore(_Holding(None), "r", events).load()
    RecordingStore(_Holding({"version": 1, "generation": 2, "entries": [{}, {}]}), "r", events).load()
    RecordingStore(_Holding({"version": 1, "generation": 2, "entries": {}}), "r", events).load()
    assert [(event["op"], event["missing"], event["generation"], event["entries"]) for event in events] == [
        ("load", True, None, None),
        ("load", False, 2, 2),
        ("load", False, 2, None),
    ]


def test_mw_2_the_recorder_records_the_outermost_hold_of_the_lock_once_and_widens_it():
    """MW-2: a lock taken again by its holder is one hold, recorded when the outermost lets go and held at least the recorder's pause; the next hold is another."""
    events: list[dict[str, Any]] = []
    recorder = RecordingStore(_Everything(None), "w", events)
    with recorder.lock():
        with recorder.lock():
            pass
        assert events == []
    with recorder.lock():
        pass
    assert [event["op"] for event in events] == ["lock", "lock"]
    assert all(event["end"] - event["start"] >= RecordingStore.pause * 1e9 for event in events)


class _SecondSaveFails(_Holding):
    """Its second save raises."""

    saves = 0

    def save(self, document: Any) -> None:
        self.saves += 1
        if self.saves == 2:
            raise OSError("disk full")
        super().save(document)


def test_mw_6_a_writer_records_each_remember_and_the_failure_that_ends_it():
    """MW-6: the kit's writer records each acknowledged remember, then the one that raised, whole, and stops; one that cannot open its memory is recorded as failed."""
    events: list[dict[str, Any]] = []
    _remembering(_SecondSaveFails(None), "w1", 3, events, shared=False)
    assert [(event["worker"], event["op"], event["key"], event.get("error")) for event in events] == [
        ("w1", "remember", "w1:0", None),
        ("w1", "remember", "w1:1", "OSError: disk full"),
    ]
    assert all(0 < event["start"] <= event["end"] for event in events)
    events.clear()
    _remembering(_Failing(None), "w2", 3, events, shared=True)
    assert events == [
        {"worker": "w2", "op": "remember", "key": "", "start": 0, "end": 0, "error": "OSError('disk gone')"}
    ]


def test_mw_6_a_writer_that_never_began_is_recorded_as_failed():
    """MW-6: a writer whose start barrier broke (the other writers never came) is recorded as failed, so the history check reports it instead of finding nothing wrong with a writer that wrote nothing."""
    events: list[dict[str, Any]] = []
    together = threading.Barrier(2)
    together.abort()
    _remembering(_SecondSaveFails(None), "w3", 3, events, together, shared=True)
    assert events == [
        {"worker": "w3", "op": "remember", "key": "", "start": 0, "end": 0, "error": "BrokenBarrierError()"}
    ]
    assert any("w3" in problem for problem in history_problems(events, None))


class _AsyncHolding:
    """An async store that hands back the one document it was given."""

    def __init__(self, document: Any) -> None:
        self.document = document

    async def load(self) -> Any:
        return self.document

    async def save(self, document: Any) -> None:
        self.document = document


class _AsyncEverything(_AsyncHolding):
    """An async store with every optional method; its close() is a plain function, as the contract allows."""

    async def save_changes(self, changes: Any) -> None:
        pass

    async def generation(self) -> int:
        return 7

    @contextlib.asynccontextmanager
    async def lock(self) -> Any:
        yield

    async def preserve(self) -> str:
        return "the copy"

    def close(self) -> None:
        pass


class _AsyncFailing(_AsyncEverything):
    """Its load, save and generation() raise."""

    async def load(self) -> Any:
        raise OSError("disk gone")

    async def save(self, document: Any) -> None:
        raise OSError("disk full")

    async def generation(self) -> int:
        raise TimeoutError("no answer")


def test_aio_7_the_async_recorder_has_the_stores_optional_methods_and_records_each_call():
    """AIO-7, MW-6: the async recorder has exactly the optional methods its store has, records each call with what it answered or raised, and records the outermost hold of the lock once, held at least its pause."""
    events: list[dict[str, Any]] = []
    assert [hasattr(AsyncRecordingStore(_AsyncHolding(None), "w", events), name) for name in _OPTIONAL] == [False] * 5
    recorder = AsyncRecordingStore(_AsyncEverything({"version": 1, "generation": 2, "entries": [{}]}), "w", events)
    assert [hasattr(recorder, name) for name in _OPTIONAL] == [True] * 5
    assert repr(recorder) == f"<{recorder.store!r} as seen by w>"
    failing = AsyncRecordingStore(_AsyncFailing(None), "r", events)

    async def calls() -> None:
        assert (await recorder.load())["generation"] == 2
        await recorder.save({"version": 1, "generation": 3, "entries": []})
        await recorder.save_changes(SimpleNamespace(generation=4))
        assert await recorder.generation() == 7 and await recorder.preserve() == "the copy"
        await recorder.close()
        async with recorder.lock():
            async with recorder.lock():
                pass
        for call in (failing.load, failing.generation):
            with pytest.raises((OSError, TimeoutError)):
                await call()

    asyncio.run(calls())
    assert [(event["op"], event.get("generation"), event.get("error")) for event in events] == [
        ("load", 2, None),
        ("save", 3, None),
        ("save_changes", 4, None),
        ("generation", 7, None),
        ("preserve", None, None),
        ("close", None, None),
        ("lock", None, None),
        ("load", None, "OSError: disk gone"),
        ("generation", None, "TimeoutError: no answer"),
    ]
    assert (events[0]["missing"], events[0]["entries"]) == (False, 1)
    assert events[6]["end"] - events[6]["start"] >= AsyncRecordingStore.pause * 1e9
    assert all(event["worker"] in ("w", "r") and 0 < event["start"] <= event["end"] for event in events)


def test_aio_7_the_async_recorder_records_a_save_that_raised_and_widens_a_hold_taken_once():
    """AIO-7, PER-3, MW-2: a save that raised is recorded with its generation and error; a hold not taken again is widened too."""
    events: list[dict[str, Any]] = []
    recorder = AsyncRecordingStore(_AsyncFailing(None), "w", events)

    async def calls() -> None:
        with pytest.raises(OSError):
            await recorder.save({"version": 1, "generation": 5, "entries": []})
        async with recorder.lock():
            pass

    asyncio.run(calls())
    assert [(event["op"], event.get("generation"), event.get("error")) for event in events] == [
        ("save", 5, "OSError: disk full"),
        ("lock", None, None),
    ]
    assert events[1]["end"] - events[1]["start"] >= AsyncRecordingStore.pause * 1e9


class _AsyncSecondSaveFails(_AsyncHolding):
    """Its second save raises."""

    saves = 0

    async def save(self, document: Any) -> None:
        self.saves += 1
        if self.saves == 2:
            raise OSError("disk full")
        await super().save(document)


def test_aio_7_the_async_writer_records_each_remember_and_the_failure_that_ends_it():
    """AIO-7, MW-6: the async kit's writer records each acknowledged remember, with when it began and ended, then the one that raised, and stops."""
    events: list[dict[str, Any]] = []
    asyncio.run(_remembering_async(_AsyncSecondSaveFails(None), "w1", 3, events, shared=False))
    assert [(event["worker"], event["op"], event["key"], event.get("error")) for event in events] == [
        ("w1", "remember", "w1:0", None),
        ("w1", "remember", "w1:1", "OSError: disk full"),
    ]
    assert all(0 < event["start"] <= event["end"] for event in events)
