"""The store contract as an importable pytest suite: a conformance kit for store backends.

A store of your own (Postgres, DynamoDB, a company's key-value service)
passes the same tests as the built-in ones when its test module subclasses
``StoreSuite`` and says how to make one::

    # test_my_store.py
    from sentinel_memory.testing import StoreSuite

    class TestMyStore(StoreSuite):
        def make_store(self, tmp_path):
            return MyStore(dsn=..., key=f"test-{uuid.uuid4().hex}")  # tmp_path.name repeats across runs

        def reopen(self, store):  # as another process would open it
            return MyStore(dsn=..., key=store.key)

Every test cites the rules it checks (PER-*, MW-*). The optional methods
of a store (``generation``, ``lock``, ``save_changes``, ``preserve``,
``close``) switch on the tests that need them; a test that needs one the
store lacks is skipped with the reason. The many-writers checks run in
processes (forked, each opening the store with ``reopen``), or in threads
when ``processes = False``. It needs pytest, and the fork start method
for processes (Linux, macOS).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import json
import os
import random
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from .core import to_document
from .core.errors import ConflictError, DamagedStoreError, LoadWarning, LockTimeoutError, RankingWarning
from .core.values import LoadResult
from .fakeclock import FakeClock
from .memory import Memory, create_memory

__all__ = [
    "AsyncRecordingStore",
    "AsyncStoreSuite",
    "FakeClock",
    "RecordingStore",
    "StoreSuite",
    "history_problems",
    "in_processes",
]

#: The kit's clocks start here: 2026-10-17, in milliseconds.
T0 = 1_792_310_400_000


def _fields(mem: Memory) -> list[tuple[Any, ...]]:
    return [(e.key, e.data, e.importance, e.created_at, e.updated_at, e.expires_at) for e in mem.get_recent()]


def _refuses(call: Callable[[], object], what: str) -> None:
    """``call()`` must raise ``DamagedStoreError``; the failure says which call did not."""
    try:
        call()
    except DamagedStoreError:
        return
    pytest.fail(f"{what} did not raise DamagedStoreError")


def in_processes(count: int, work: Callable[[int], object]) -> list[int]:
    """Run ``work(worker)`` in ``count`` forked processes at once, for many-writers tests of a store's own.

    Each process opens what it needs itself (a store's connection must not
    cross a fork) and ends without returning to the test runner.

    Args:
        count: How many processes.
        work: Called with the worker's number, 0 to ``count - 1``.

    Returns:
        The exit codes, in worker order: 0 when ``work`` returned, 1 when it
        raised (``sys.exit`` included: the worker did not finish its work),
        the code of an ``os._exit``, and minus the signal that killed it.
    """
    pids = []
    for worker in range(count):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                work(worker)
                code = 0
            finally:
                os._exit(code)  # never back into the test runner
        pids.append(pid)
    # Exit codes, not wait statuses: a status of 256 reads as success to nobody, but -9 says SIGKILL.
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]


# -- what many writers did, and whether one at a time could have done it -----------------------------


def _needs(store: Any, *methods: str) -> None:
    """Skip the check when the store lacks one of the optional ``methods`` it is about, naming each it lacks."""
    missing = [name for name in methods if not callable(getattr(store, name, None))]
    if missing:
        pytest.skip(f"the store has no {', '.join(f'{name}()' for name in missing)}")


def _generation_of(document: Any) -> int | None:
    if not isinstance(document, dict):
        return None
    generation = document.get("generation", 0)
    return int(generation) if isinstance(generation, (int, float)) and not isinstance(generation, bool) else None


def _every_entry_scores_one(query: str, entries: Any) -> list[float]:
    """The app's own ranking of the kit's ranking check (BM-9): every entry scores 1."""
    return [1.0] * len(entries)


def _said(error: BaseException) -> str:
    """How a record names an error: its type and its text."""
    return f"{type(error).__name__}: {error}"


class _Recorder:
    """What both recorders share: who they record for, their records, and the optional methods they pass on."""

    _OPTIONAL = ("save_changes", "generation", "lock", "preserve", "close")
    #: Seconds the recorder holds a lock it took before going on, so that races show in a short run.
    pause = 0.002

    def __init__(self, store: Any, worker: str, events: list[dict[str, Any]]) -> None:
        self.store, self.worker, self.events = store, worker, events
        self._depth = 0

    def __repr__(self) -> str:
        return f"<{self.store!r} as seen by {self.worker}>"

    def _record(self, op: str, start: int, error: BaseException | None = None, **fields: Any) -> None:
        event = {"worker": self.worker, "op": op, "start": start, "end": time.monotonic_ns(), **fields}
        if error is not None:
            event["error"] = _said(error)
        self.events.append(event)


def _loaded(document: Any) -> dict[str, Any]:
    """A load's record of what it found: nothing or not, the generation, and how many entries."""
    entries = document.get("entries") if isinstance(document, dict) else None
    return {
        "missing": document is None,
        "generation": _generation_of(document),
        "entries": len(entries) if isinstance(entries, list) else None,
    }


def _answered(name: str, args: tuple[Any, ...], result: Any) -> dict[str, Any]:
    """An optional method's record of what it answered: the generation a ``generation()`` gave or a ``save_changes`` wrote."""
    if name == "generation":
        return {"generation": result}
    if name == "save_changes":
        return {"generation": args[0].generation}
    return {}


class RecordingStore(_Recorder):
    """A store seen through the kit: every call recorded with its start, its end and its outcome.

    The kit hands one to each writer and reader of a concurrency check, and
    checks the history they leave against the one-at-a-time model
    (``history_problems``). It has exactly the optional methods the store
    has, so a memory uses the store as it would without it.

    Args:
        store: The store under test.
        worker: Who uses this one (a name the history shows).
        events: Where each call's record is appended (dicts of JSON values).
    """

    def load(self) -> Any:
        start = time.monotonic_ns()
        try:
            document = self.store.load()
        except Exception as error:
            self._record("load", start, error)
            raise
        self._record("load", start, **_loaded(document))
        return document

    def save(self, document: dict[str, Any]) -> None:
        start = time.monotonic_ns()
        try:
            self.store.save(document)
        except Exception as error:
            self._record("save", start, error, generation=_generation_of(document))
            raise
        self._record("save", start, generation=_generation_of(document))

    def __getattr__(self, name: str) -> Any:
        if name not in self._OPTIONAL:
            return getattr(self.store, name)
        method = getattr(self.store, name)  # AttributeError when the store has none: so has the recorder
        if name == "lock":
            return lambda: self._lock(method)

        def recorded(*args: Any) -> Any:
            start = time.monotonic_ns()
            try:
                result = method(*args)
            except Exception as error:
                self._record(name, start, error)
                raise
            self._record(name, start, **_answered(name, args, result))
            return result

        return recorded

    @contextlib.contextmanager
    def _lock(self, lock: Callable[[], Any]) -> Iterator[None]:
        with lock():
            self._depth += 1
            held = time.monotonic_ns()
            if self._depth == 1:
                time.sleep(self.pause)  # a wider window: a lock that excludes nobody lets others in now
            try:
                yield
            finally:
                self._depth -= 1
                if not self._depth:  # the outermost hold is the one others must wait for
                    self._record("lock", held)


def history_problems(events: list[dict[str, Any]], final: Any) -> list[str]:
    """What in a history of concurrent calls no one-at-a-time run could have given (MW-2, MW-3, MW-6).

    The history is of writers that each remember keys of their own with
    ``shared=True`` (or of one writer alone) into a store that started empty, so the save of
    generation *g* holds exactly *g* entries, and of readers that load
    meanwhile. Checked: no two saves of one generation both acknowledged
    (a lost update); no read, started after a save was acknowledged, that
    answers an older generation (a stale read) or nothing, and no document
    read whose entries are not the ones its generation holds (a partial or
    torn write); no two writers holding ``lock()`` at once; every
    acknowledged ``remember`` in the ``final`` document; no writer that
    raised.

    Args:
        events: The records of ``RecordingStore`` and of the kit's writers.
        final: The document the store holds after every writer ended.

    Returns:
        One line per problem found, the first few of each kind; empty when the history is sound.
    """
    problems: list[str] = []
    saves = [e for e in events if e["op"] in ("save", "save_changes") and "error" not in e]
    seen: dict[int, dict[str, Any]] = {}
    for save in sorted(saves, key=lambda e: e["start"]):
        other = seen.setdefault(save["generation"], save)
        if other is not save:
            problems.append(
                f"lost update: {other['worker']} and {save['worker']} both saved generation {save['generation']} "
                "and both were acknowledged (the generation check and the write must be one step against "
                "other savers, MW-3)"
            )
    acknowledged = sorted((e["end"], e["generation"]) for e in saves)
    ends = [end for end, _ in acknowledged]
    highest = list(itertools.accumulate((g for _, g in acknowledged), max))
    for read in (e for e in events if e["op"] in ("load", "generation") and "error" in e):
        if not read["error"].startswith("LockTimeoutError"):
            problems.append(
                f"read failed: {read['op']}() by {read['worker']} raised {read['error']} beside saving writers"
            )
    for read in (e for e in events if e["op"] in ("load", "generation") and "error" not in e):
        before = bisect.bisect_left(ends, read["start"])
        floor = highest[before - 1] if before else 0
        what = f"{read['op']}() by {read['worker']}"
        if read.get("missing") and floor:
            problems.append(
                f"missing: {what} found nothing after generation {floor} was saved (a save that is not atomic)"
            )
        elif read.get("generation") is not None and read["generation"] < floor:
            problems.append(
                f"stale read: {what} answered generation {read['generation']} after generation {floor} was "
                "acknowledged (a cached load or generation that misses other writers)"
            )
        if read["op"] == "load" and read.get("entries") is not None and read["entries"] != read.get("generation"):
            problems.append(
                f"partial document: {what} read generation {read.get('generation')} holding {read['entries']} "
                "entries (a save that is not atomic)"
            )
    held = sorted((e for e in events if e["op"] == "lock" and "error" not in e), key=lambda e: e["start"])
    for first, second in itertools.pairwise(held):
        if second["start"] < first["end"] and second["worker"] != first["worker"]:
            problems.append(f"lock held twice: {first['worker']} and {second['worker']} held lock() at once (MW-2)")
    stored = {entry.get("key") for entry in (final or {}).get("entries", []) if isinstance(entry, dict)}
    for event in events:
        if event["op"] == "remember" and "error" not in event and event["key"] not in stored:
            problems.append(f"lost update: {event['worker']}'s acknowledged remember({event['key']!r}) is not stored")
        elif event["op"] == "remember":
            if "error" in event:
                problems.append(
                    f"writer failed: {event['worker']} raised {event['error']} (a writer alone or shared never conflicts, MW-6)"
                )
    kinds: dict[str, list[str]] = {}
    for problem in problems:
        kinds.setdefault(problem.split(":")[0], []).append(problem)
    return [line for found in kinds.values() for line in found[:3]]


def _unopened(worker: str, error: Exception) -> dict[str, Any]:
    """The record of a writer that never began (its memory did not open, or the others never came): a failed remember of no key."""
    return {"worker": worker, "op": "remember", "key": "", "start": 0, "end": 0, "error": repr(error)}


def _remembered(worker: str, key: str, start: int, error: Exception | None = None) -> dict[str, Any]:
    """The record of a writer's remember of ``key``, begun at ``start`` and ended now, and its error if it raised."""
    event = {"worker": worker, "op": "remember", "key": key, "start": start, "end": time.monotonic_ns()}
    if error is not None:
        event["error"] = _said(error)
    return event


def _remembering(
    store: Any,
    worker: str,
    count: int,
    events: list[dict[str, Any]],
    together: threading.Barrier | None = None,
    *,
    shared: bool,
) -> None:
    """A writer of the history checks: ``count`` autosaved remembers of keys of its own, each recorded, and a failure too.

    ``shared=False`` is the reader check's one writer (the store needs no lock for it).
    """
    try:
        if together is not None:
            together.wait(60)  # every writer begins at once, so their changes interleave
        mem = create_memory(store=store, autosave=True, shared=shared, limit=100_000, clock=lambda: T0)
    except Exception as error:  # a writer that never began (the others never came, or its memory did not open)
        events.append(_unopened(worker, error))
        return
    for i in range(count):
        key = f"{worker}:{i}"
        start = time.monotonic_ns()
        try:
            mem.remember(key, i)
        except Exception as error:
            events.append(_remembered(worker, key, start, error))
            return
        events.append(_remembered(worker, key, start))
        time.sleep(0.001)  # let the others (writers, the reader) in between


def _reading(store: Any, stop: threading.Event, events: list[dict[str, Any]]) -> None:
    """A reader of the history check: loads until told to stop, each load recorded by its ``RecordingStore``."""
    while not stop.is_set():
        try:
            store.load()
        except Exception:  # recorded: a reader that cannot read is a problem of the history
            pass


class AsyncRecordingStore(_Recorder):
    """``RecordingStore`` for an async store: every coroutine call recorded with its start, end and outcome.

    It has exactly the optional methods the store has; ``lock()`` is recorded by its outermost hold, which
    it widens by ``pause`` seconds, so that a lock that excludes nobody shows in a short run.

    Args:
        store: The async store under test.
        worker: Who uses this one (a name the history shows).
        events: Where each call's record is appended.
    """

    async def load(self) -> Any:
        start = time.monotonic_ns()
        try:
            document = await self.store.load()
        except Exception as error:
            self._record("load", start, error)
            raise
        self._record("load", start, **_loaded(document))
        return document

    async def save(self, document: dict[str, Any]) -> None:
        start = time.monotonic_ns()
        try:
            await self.store.save(document)
        except Exception as error:
            self._record("save", start, error, generation=_generation_of(document))
            raise
        self._record("save", start, generation=_generation_of(document))

    def __getattr__(self, name: str) -> Any:
        if name not in self._OPTIONAL:
            return getattr(self.store, name)
        method = getattr(self.store, name)  # AttributeError when the store has none: so has the recorder
        if name == "lock":
            return lambda: self._lock(method)

        async def recorded(*args: Any) -> Any:
            start = time.monotonic_ns()
            try:
                result = method(*args)
                if asyncio.iscoroutine(result):
                    result = await result
            except Exception as error:
                self._record(name, start, error)
                raise
            self._record(name, start, **_answered(name, args, result))
            return result

        return recorded

    @contextlib.asynccontextmanager
    async def _lock(self, lock: Callable[[], Any]) -> AsyncIterator[None]:
        async with lock():
            self._depth += 1
            held = time.monotonic_ns()
            if self._depth == 1:
                await asyncio.sleep(self.pause)
            try:
                yield
            finally:
                self._depth -= 1
                if not self._depth:
                    self._record("lock", held)


async def _remembering_async(
    store: Any, worker: str, count: int, events: list[dict[str, Any]], *, shared: bool = True
) -> None:
    """A writer of the async history checks: ``count`` autosaved remembers of keys of its own."""
    from .aio import create_async_memory

    try:
        mem = await create_async_memory(store=store, autosave=True, shared=shared, limit=100_000, clock=lambda: T0)
    except Exception as error:
        events.append(_unopened(worker, error))
        return
    for i in range(count):
        key = f"{worker}:{i}"
        start = time.monotonic_ns()
        try:
            await mem.remember(key, i)
        except Exception as error:
            events.append(_remembered(worker, key, start, error))
            return
        events.append(_remembered(worker, key, start))
        await asyncio.sleep(0.001)  # let the others in between


async def _reading_async(store: Any, stop: Callable[[], bool]) -> None:
    """A reader of the async history checks: loads until ``stop()``, each load recorded by its recorder.

    Between loads it yields to the loop a varying number of times (a fixed sequence), so that its loads
    fall on every point of a writer's steps: with a fixed pace, asyncio's round robin could keep it in
    step with the writer and never let it read between two of them.
    """
    pace = random.Random(20261017)
    while not stop():
        with contextlib.suppress(Exception):  # recorded: a reader that cannot read is a problem of the history
            await store.load()
        for _ in range(pace.randrange(1, 4)):
            await asyncio.sleep(0)


class StoreSuite:
    """The behaviour every store must have: subclass it in a test module and define ``make_store``.

    ``make_store(tmp_path)`` returns a new, empty store. Override
    ``reopen(store)`` to open the same store afresh, as another process
    would (the default hands back the same object, and the writers are then
    threads); ``damage(store)`` and ``snapshot(store)`` to check that damage
    is reported and left alone. Set ``processes = False`` for a store that
    lives in one process. A history check whose writer threads have not
    ended after ``deadline`` seconds fails as a deadlock.
    """

    #: Whether the many-writers checks fork processes (each opening the store with ``reopen``).
    processes = True

    def make_store(self, tmp_path: Any) -> Any:
        """A new, empty store; ``tmp_path`` is pytest's temporary folder for the test.

        Args:
            tmp_path: A folder of the test's own.

        Returns:
            The store.
        """
        raise NotImplementedError("a StoreSuite subclass says how to make its store")

    def reopen(self, store: Any) -> Any:
        """The same store opened afresh, as another process would open it; by default ``store`` itself.

        Args:
            store: A store ``make_store`` made.

        Returns:
            A store on the same data.
        """
        return store

    def damage(self, store: Any) -> Any:
        """Put something that is not a memory where the store keeps one; what ``snapshot`` then gives, or None.

        Args:
            store: A store ``make_store`` made.

        Returns:
            The snapshot of the damaged store, or None when it cannot be damaged from outside.
        """
        return None

    def snapshot(self, store: Any) -> Any:
        """Everything the store keeps, to show that a damaged one was left alone.

        Args:
            store: A store ``make_store`` made.

        Returns:
            Any value that compares equal when the store is unchanged.
        """
        raise NotImplementedError("a suite that damages its store says how to see all of it")

    @pytest.fixture
    def clock(self) -> FakeClock:
        """A clock the test moves by hand."""
        return FakeClock()

    @pytest.fixture
    def make(self, clock: FakeClock) -> Callable[..., Memory]:
        """``make(**options)``: a memory on the test's clock."""

        def build(**options: Any) -> Memory:
            options.setdefault("clock", clock)
            return create_memory(**options)

        return build

    # -- one memory --------------------------------------------------------------------------

    def test_per_2_an_empty_store_loads_none(self, tmp_path: Any) -> None:
        """PER-2: a store that was never saved loads None, and a memory on it starts empty."""
        store = self.make_store(tmp_path)
        assert store.load() is None
        assert create_memory(store=store).size() == 0

    def test_per_3_a_save_loads_back_as_it_was(self, tmp_path: Any, make: Any, clock: FakeClock) -> None:
        """PER-3, PER-12: entries (fields and order), a turn and the working memory load back; the cache does not."""
        store = self.make_store(tmp_path)
        mem = make(store=store)
        mem.remember("user:name", "Jakub", importance=0.9)
        clock.advance(1)
        mem.remember("user:allergy", {"what": "peanuts", "severity": 1.0}, importance=1, ttl=10_000)
        clock.advance(1)
        mem.add_turn("user", "Any nuts in the risotto?")
        mem.working.set({"task": "refund", "step": 2})
        mem.cache.put("scratch", 1)
        mem.save()
        again = make(store=store)
        assert _fields(again) == _fields(mem)
        assert again.working.get() == {"task": "refund", "step": 2} and again.cache.get("scratch") is None
        assert again.add_turn("assistant", "None.").key == "chat:2"

    def test_bm_10_the_rankings_name_loads_back(self, tmp_path: Any, make: Any) -> None:
        """BM-10, BM-11: a memory ranked by the app's function loads back named so; a whole save naming none drops it."""
        store = self.make_store(tmp_path)
        mem = make(store=store, ranking=_every_entry_scores_one, autosave=True)
        mem.remember("a", 1)
        mem.remember("b", 2)  # an incremental save, when the store takes one, keeps the name
        loaded = store.load()
        assert loaded is not None and loaded.get("ranking") == "function"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankingWarning)  # saved with a function, opened with words: said
            words = make(store=store, ranking="words", autosave=True)
        assert words.stats()["ranking"] == "words"
        words.remember("c", 3)  # the next save is whole, and names no ranking
        loaded = store.load()
        assert loaded is not None and "ranking" not in loaded and make(store=store).stats()["ranking"] == "words"

    def test_per_3_unicode_and_big_numbers_survive(self, tmp_path: Any, make: Any) -> None:
        """PER-3, ENT-2: astral characters, every JSON kind, 2**53 + 1 and -0.0 come back exactly."""
        store = self.make_store(tmp_path)
        data = {"emoji": "👩‍👩‍👧 🇨🇿", "czech": "Příliš žluťoučký", "n": 2**53 + 1, "neg": -0.0, "x": [None, True, 1.5]}
        make(store=store, autosave=True).remember("odd:🙂", data)
        loaded = make(store=store).get("odd:🙂")
        assert loaded == data and json.dumps(loaded) == json.dumps(data)

    def test_per_10_documents_are_copies(self, tmp_path: Any) -> None:
        """PER-10: changing a document after saving it, or after loading it, changes no store."""
        store = self.make_store(tmp_path)
        entries: list[Any] = []
        store.save({"version": 1, "entries": entries, "working": {"data": {}, "updatedAt": None}})
        entries.append("junk")
        loaded = store.load()
        assert loaded["entries"] == []
        loaded["entries"].append("junk")
        assert store.load()["entries"] == []

    def test_per_12_expired_entries_are_saved_and_stay_invisible(
        self, tmp_path: Any, make: Any, clock: FakeClock
    ) -> None:
        """PER-12: expired-but-stored entries are saved and stay invisible after load until compact."""
        store = self.make_store(tmp_path)
        mem = make(store=store)
        mem.remember("cart", "2 items", ttl=5)
        clock.advance(5)
        mem.save()
        again = make(store=store)
        assert not again.has("cart") and again.stats()["stored"] == 1
        assert [e.key for e in again.compact().expired] == ["cart"]

    def test_per_13_damage_is_reported_and_left_alone(self, tmp_path: Any, make: Any) -> None:
        """PER-13, MW-7: whatever the store keeps, when it is not a memory, raises DamagedStoreError and stays as it was."""
        store = self.make_store(tmp_path)
        damaged = self.damage(store)
        if damaged is None:
            pytest.skip("this store cannot be damaged from outside")
        _refuses(lambda: make(store=store, autosave=True), "a memory loading the damaged store")
        _refuses(lambda: store.save({"version": 1, "entries": []}), "store.save() over the damage (MW-7)")
        assert self.snapshot(store) == damaged, "the damaged store was changed"

    @pytest.mark.parametrize("shared", [False, True])
    def test_per_19_writes_after_a_lossy_load(self, tmp_path: Any, make: Any, shared: bool) -> None:
        """PER-19, PER-14, ENT-17: after a load that dropped entries before the last, every write works and is saved."""
        store = self.make_store(tmp_path)
        if shared:
            _needs(store, "lock", "generation")

        def record(key: str, at: int) -> dict[str, Any]:
            return {"key": key, "data": at, "importance": 0.5, "createdAt": at, "updatedAt": at}

        # Two invalid entries, neither of them the last one: an empty key, an importance of 2.
        store.save({"version": 1, "entries": [record("", 0), dict(record("b", 1), importance=2), record("chat:3", 2)]})
        with pytest.warns(LoadWarning):
            mem = make(store=store, autosave=True, shared=shared)
        assert mem.last_load == LoadResult(loaded=1, dropped=2)
        mem.remember("x", 1)
        assert mem.add_turn("user", "hi").key == "chat:4"
        loaded = make(store=store)
        assert dict(loaded.items()) == {"chat:3": 2, "x": 1, "chat:4": {"role": "user", "content": "hi"}}

    # -- generations and many writers -----------------------------------------------------------

    def test_mw_1_generations_count_saves(self, tmp_path: Any, make: Any) -> None:
        """MW-1: each save of a memory stores the next generation, and a fresh memory loads the last one."""
        store = self.make_store(tmp_path)
        mem = make(store=store, autosave=True)
        mem.remember("a", 1)
        mem.working.set({"step": 1})
        mem.forget("a")
        assert mem.generation == 3 and make(store=store).generation == 3
        if callable(getattr(store, "generation", None)):
            assert store.generation() == 3

    def test_mw_3_two_writers_from_one_generation_one_wins(self, tmp_path: Any, make: Any) -> None:
        """MW-3: two memories that loaded the same generation both save: one succeeds, the other gets ConflictError."""
        store = self.make_store(tmp_path)
        make(store=store).save()
        first, second = make(store=self.reopen(store)), make(store=self.reopen(store))
        first.remember("winner", "first")
        first.save()
        second.remember("loser", "second")
        before = second.state
        with pytest.raises(ConflictError) as raised:
            second.save()
        assert (raised.value.expected, raised.value.found) == (1, 2)
        assert second.state is before
        loaded = make(store=store)
        assert loaded.has("winner") and not loaded.has("loser")

    def test_mw_3_an_autosave_that_conflicts_changes_nothing(self, tmp_path: Any, make: Any) -> None:
        """MW-3, WRP-1: an autosaved change that conflicts raises, and neither the memory nor the store changes; a reload and retry work."""
        store = self.make_store(tmp_path)
        first, second = make(store=store, autosave=True), make(store=self.reopen(store), autosave=True)
        first.remember("a", 1)
        with pytest.raises(ConflictError):
            second.remember("b", 2)
        assert not second.has("b") and _fields(make(store=store)) == _fields(first)
        second.load()
        second.remember("b", 2)
        assert sorted(make(store=store)) == ["a", "b"]

    def test_mw_4_incremental_saves_hold_what_a_whole_save_holds(
        self, tmp_path: Any, make: Any, clock: FakeClock
    ) -> None:
        """MW-4: after autosaved remembers, overwrites, forgets, evictions, expiry and working changes, the store loads as the memory."""
        store = self.make_store(tmp_path)
        _needs(store, "save_changes")
        mem = make(store=store, autosave=True, limit=4)
        for i in range(7):
            mem.remember(f"k{i % 5}", {"n": i}, importance=(i % 3) / 3, ttl=5 if i == 2 else None)
            clock.advance(3)
        mem.forget("k0")
        mem.working.set({"task": "refund"})
        mem.compact()
        assert store.load() == to_document(mem.state, generation=mem.generation)
        again = make(store=store, limit=4)
        assert _fields(again) == _fields(mem) and again.working.get() == {"task": "refund"}

    def test_mw_6_writers_in_shared_mode_lose_nothing(self, tmp_path: Any) -> None:
        """MW-6, MW-5, MW-2: four writers x 25 autosaved remembers into one store in shared mode end with all 100 entries."""
        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        workers, each = 4, 25

        def write(worker: int, target: Any) -> None:
            mem = create_memory(store=target, autosave=True, shared=True, limit=10_000, clock=lambda: T0 + worker)
            for i in range(each):
                mem.remember(f"w{worker}:{i}", i)

        if self.processes:
            codes = in_processes(workers, lambda worker: write(worker, self.reopen(store)))
            assert codes == [0] * workers
        else:
            threads = [threading.Thread(target=write, args=(w, self.reopen(store))) for w in range(workers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        final = create_memory(store=self.reopen(store), limit=10_000)
        assert final.size() == workers * each and final.generation == workers * each

    def test_mw_2_a_transaction_reads_and_writes_as_one(self, tmp_path: Any, make: Any) -> None:
        """MW-2: counters incremented in transactions by two memories on one store lose no increment."""
        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        first, second = make(store=store, autosave=True), make(store=self.reopen(store), autosave=True)
        for _ in range(10):
            for mem in (first, second):
                with mem.transaction():
                    mem.remember("count", (mem.get("count") or 0) + 1)
        assert make(store=store).get("count") == 20

    def test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing(self, tmp_path: Any, make: Any) -> None:
        """MW-8, WRP-1: while another writer holds the store's lock, a shared write raises LockTimeoutError after lock_wait; the retry works."""
        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        if not hasattr(store, "lock_wait"):
            pytest.skip("the store has no lock_wait")
        mem = make(store=store, autosave=True, shared=True)
        mem.remember("before", 1)
        store.lock_wait = 0.2
        other = self.reopen(store)
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            with other.lock():
                held.set()
                done.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(30)
            started = time.monotonic()
            with pytest.raises(LockTimeoutError):
                mem.remember("during", 2)
            waited = time.monotonic() - started
            assert 0.18 <= waited < 2, f"lock_wait was 0.2 s, but the lock gave up after {waited:.2f} s"
            assert not mem.has("during")
        finally:
            done.set()
            holder.join()
        assert make(store=store).get("during") is None
        mem.remember("during", 2)  # the retry, once the lock is let go (WRP-1)
        assert make(store=store).get("during") == 2

    # -- many writers, checked against the one-at-a-time model ---------------------------------------

    #: How many writers a history check runs, and how many remembers each makes.
    history_writers = 3
    history_each = 10
    #: The seconds a history check waits for each writer thread before it calls the run a deadlock.
    deadline = 300.0

    def _history(self, tmp_path: Any, store: Any, mode: str, *, shared: bool = True) -> tuple[list[Any], Any]:
        """Run the writers (and a reader beside them) in ``mode``; their history and the store's final document.

        ``threads``: each writer and the reader in a thread with a store of
        its own from ``reopen``; ``one object``: threads sharing the store
        object itself; ``processes``: forked writers, each opening the store
        with ``reopen``, and a reader thread.
        """
        events: list[dict[str, Any]] = []
        stop = threading.Event()

        def own() -> Any:
            return store if mode == "one object" else self.reopen(store)

        count, each = (self.history_writers, self.history_each) if shared else (1, 3 * self.history_each)

        together = threading.Barrier(count) if mode != "processes" else None

        def write(worker: int, target: list[dict[str, Any]]) -> None:
            name = f"writer {worker}"
            _remembering(RecordingStore(own(), name, target), name, each, target, together, shared=shared)

        reader = threading.Thread(target=lambda: _reading(RecordingStore(own(), "reader", events), stop, events))
        try:  # however the writers end, the reader stops: it is no daemon, and would keep the process alive
            if mode == "processes":
                folder = tempfile.mkdtemp(prefix="sentinel-kit-history-", dir=tmp_path)

                def child(worker: int) -> None:
                    mine: list[dict[str, Any]] = []
                    try:
                        write(worker, mine)
                    finally:
                        with open(os.path.join(folder, f"{worker}.json"), "w", encoding="utf-8") as out:
                            json.dump(mine, out)

                pids = []
                for worker in range(count):
                    pid = os.fork()
                    if pid == 0:
                        try:
                            child(worker)
                        finally:
                            os._exit(0)
                    pids.append(pid)
                reader.start()  # after the forks: a child never inherits a running thread
                for pid in pids:
                    os.waitpid(pid, 0)
                for worker in range(count):
                    path = os.path.join(folder, f"{worker}.json")
                    if not os.path.exists(path):
                        pytest.fail(f"writer {worker} (a forked process) ended without a history")
                    with open(path, encoding="utf-8") as kept:
                        events.extend(json.load(kept))
            else:
                # daemons: writers stuck in a deadlock must not keep the process alive once the check has failed
                threads = [
                    threading.Thread(target=write, args=(worker, events), name=f"writer {worker}", daemon=True)
                    for worker in range(count)
                ]
                reader.start()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(self.deadline)
                    if thread.is_alive():
                        pytest.fail(
                            f"{thread.name} did not end in {self.deadline:g} s: a deadlock (is lock() re-entrant?)"
                        )
        finally:
            stop.set()
        reader.join(60)
        return events, self.reopen(store).load()

    @pytest.mark.parametrize("mode", ["threads", "one object", "processes"])
    def test_mw_6_many_writers_leave_a_history_one_at_a_time_could(self, tmp_path: Any, mode: str) -> None:
        """MW-6, MW-2, MW-3: shared writers (threads with stores of their own, threads on one store object, processes) and a reader: no lost update, stale read, torn document or lock held twice."""
        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        if mode == "processes" and not self.processes:
            pytest.skip("the store lives in one process (processes = False)")
        problems = history_problems(*self._history(tmp_path, store, mode))
        assert not problems, f"with writers in {mode}:\n" + "\n".join(problems)

    @pytest.mark.parametrize("mode", ["threads", "one object"])
    def test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents(self, tmp_path: Any, mode: str) -> None:
        """PER-3, MW-1: a reader loading while a writer autosaves never sees nothing, part of a document or an older one than was acknowledged (a save is atomic)."""
        store = self.make_store(tmp_path)
        problems = history_problems(*self._history(tmp_path, store, mode, shared=False))
        assert not problems, f"a reader beside a writer ({mode}):\n" + "\n".join(problems)

    def test_mw_2_lock_lets_its_holder_take_it_again(self, tmp_path: Any) -> None:
        """MW-2, MW-6: the thread holding lock() can take it again (a shared change holds it while its save may take it)."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")
        if hasattr(store, "lock_wait"):
            store.lock_wait = 1
        outcome: list[Any] = []

        def twice() -> None:
            try:
                with store.lock(), store.lock():
                    outcome.append("held twice")
            except BaseException as error:  # handed to the test below
                outcome.append(error)

        thread = threading.Thread(target=twice, daemon=True)
        thread.start()
        thread.join(10)
        if outcome != ["held twice"]:
            got = "still waiting after 10 s" if not outcome else repr(outcome[0])
            pytest.fail(f"lock() taken again by the thread holding it: {got}; lock() must be re-entrant for its holder")

    def test_mw_2_lock_excludes_another_store_object(self, tmp_path: Any) -> None:
        """MW-2: while one store object holds lock(), another on the same data (``reopen``) cannot take it until it is let go."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")
        other = self.reopen(store)
        if other is store:
            pytest.skip("reopen gives the same object: no other object to exclude")
        if hasattr(other, "lock_wait"):
            other.lock_wait = 0.3
        held, done = threading.Event(), threading.Event()
        got: list[Any] = []

        def hold() -> None:
            with store.lock():
                held.set()
                done.wait(30)

        def take() -> None:
            try:
                with other.lock():
                    got.append(time.monotonic())
            except LockTimeoutError:
                got.append("timed out")

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(30)
            taker = threading.Thread(target=take, daemon=True)
            started = time.monotonic()
            taker.start()
            taker.join(0.5)
            early = bool(got) and got[0] != "timed out"
        finally:
            done.set()
            holder.join()
        taker.join(30)
        assert not early, f"another store object took lock() {got[0] - started:.2f} s after it was held elsewhere"

    def test_mw_4_incremental_saves_keep_the_order(self, tmp_path: Any, make: Any, clock: FakeClock) -> None:
        """MW-4, PER-1: save_changes keeps the entries in the order a whole save writes them, through overwrites, forgets and evictions; a load gives that order back."""
        store = self.make_store(tmp_path)
        _needs(store, "save_changes")
        mem = make(store=store, autosave=True, limit=6)
        for key in ("zeta", "alpha", "mid", "beta", "omega", "b10", "b9"):
            mem.remember(key, key, importance=0.9 if key != "omega" else 0.1)
            clock.advance(1)
        mem.remember("alpha", "again", importance=1.0)  # first by importance: a store ordering by it is caught
        mem.forget("mid")
        mem.remember("mid", "back")
        mem.working.set({"step": 1})
        whole = to_document(mem.state, generation=mem.generation)
        stored = store.load()
        order = [entry["key"] for entry in whole["entries"]]
        assert [entry["key"] for entry in stored["entries"]] == order, "save_changes changed the stored order"
        assert stored == whole
        again = make(store=store, limit=6)
        assert _fields(again) == _fields(mem)

    def test_per_14_a_lossy_load_keeps_the_original(self, tmp_path: Any, make: Any) -> None:
        """PER-14: before the first save after a load that dropped entries, the store keeps a copy of what it held."""
        store = self.make_store(tmp_path)
        _needs(store, "preserve")
        entries = [{"key": key, "data": 1, "importance": 0.5, "createdAt": 0, "updatedAt": 0} for key in ("", "a")]
        store.save({"version": 1, "entries": entries})
        with pytest.warns(LoadWarning):
            mem = make(store=store, autosave=True)
        kept: list[Any] = []
        real = store.preserve

        def preserve() -> Any:
            kept.append(real())
            return kept[-1]

        store.preserve = preserve
        mem.remember("b", 3)
        assert len(kept) == 1 and sorted(make(store=store)) == ["a", "b"]

    def test_wrp_5_a_closed_store_opens_again(self, tmp_path: Any, make: Any) -> None:
        """WRP-5: a memory used in ``with`` closes its store on the way out, and a later call opens it again."""
        store = self.make_store(tmp_path)
        _needs(store, "close")
        with make(store=store, autosave=True) as mem:
            mem.remember("a", 1)
        mem.remember("b", 2)
        assert sorted(make(store=store)) == ["a", "b"]


class AsyncStoreSuite:
    """The kit for async stores (AIO-3): subclass it and define ``make_store``, as for ``StoreSuite``.

    ``make_store(tmp_path)`` returns a new, empty async store (its ``load``
    and ``save`` coroutines); ``reopen(store)`` the same store as another
    writer opens it (by default ``store`` itself). The checks drive it with
    ``AsyncMemory`` on an event loop of their own (no pytest plugin needed),
    and each ends within ``deadline`` seconds: a store whose ``lock()`` waits
    on its own holder fails, with the reason, instead of hanging the run.
    """

    #: The seconds a check may take before the kit calls it a deadlock.
    deadline = 30.0
    #: Whether the many-writers history also runs forked writers (each opening the store with ``reopen``).
    processes = True
    #: How many writers a history check runs, and how many remembers each makes.
    history_writers = 3
    history_each = 10

    def make_store(self, tmp_path: Any) -> Any:
        """A new, empty async store; ``tmp_path`` is pytest's temporary folder for the test.

        Args:
            tmp_path: A folder of the test's own.

        Returns:
            The store.
        """
        raise NotImplementedError("an AsyncStoreSuite subclass says how to make its store")

    def reopen(self, store: Any) -> Any:
        """The same store opened afresh, as another writer would open it; by default ``store`` itself.

        Args:
            store: A store ``make_store`` made.

        Returns:
            A store on the same data.
        """
        return store

    def damage(self, store: Any) -> Any:
        """Put something that is not a memory where the store keeps one; what ``snapshot`` then gives, or None.

        May be a coroutine function. The default, None, skips the damage check.

        Args:
            store: A store ``make_store`` made.

        Returns:
            The snapshot of the damaged store, or None when it cannot be damaged from outside.
        """
        return None

    def snapshot(self, store: Any) -> Any:
        """Everything the store keeps, to show that a damaged one was left alone; may be a coroutine function.

        Args:
            store: A store ``make_store`` made.

        Returns:
            Any value that compares equal when the store is unchanged.
        """
        raise NotImplementedError("a suite that damages its store says how to see all of it")

    def _run(self, check: Callable[[], Any], what: str) -> Any:
        # On a thread of its own: a deadlocked change cannot be cancelled (a memory finishes the change it
        # began), so the kit stops waiting for it instead, and the thread is left to the process's end.
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append((True, asyncio.run(check())))
            except BaseException as error:  # handed back to the test
                outcome.append((False, error))

        thread = threading.Thread(target=run, name=f"sentinel-memory-kit: {what}", daemon=True)
        thread.start()
        thread.join(self.deadline)
        if outcome:
            ok, value = outcome[0]
            if not ok:
                raise value
            return value
        else:
            pytest.fail(
                f"{what} did not end in {self.deadline:g} s: a deadlock? lock() must let the task holding it, "
                "and the tasks it starts, take it again (AIO-2), as a shared change saves while it holds the lock"
            )

    def test_aio_3_an_empty_store_loads_none_and_a_save_loads_back(self, tmp_path: Any) -> None:
        """AIO-3, PER-2, PER-3: an empty async store loads None; entries, a turn and the working memory load back as saved."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)

        async def check() -> None:
            assert await store.load() is None
            clock = FakeClock()
            mem = await create_async_memory(store=store, clock=clock)
            await mem.remember("user:name", "Jakub", importance=0.9)
            clock.advance(1)
            await mem.remember("odd:🙂", {"n": 2**53 + 1, "x": [None, True, 1.5]}, ttl=10_000)
            await mem.add_turn("user", "Any nuts?")
            await mem.working.set({"task": "refund"})
            await mem.save()
            again = await create_async_memory(store=self.reopen(store), clock=clock)
            assert _fields(again) == _fields(mem) and again.working.get() == {"task": "refund"}  # type: ignore[arg-type]

        self._run(check, "a save and a load")

    def test_mw_3_two_async_writers_from_one_generation_one_wins(self, tmp_path: Any) -> None:
        """MW-3, AIO-3: two async memories that loaded the same generation both save: one wins, the other gets ConflictError."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)

        async def check() -> None:
            first = await create_async_memory(store=store, clock=FakeClock())
            second = await create_async_memory(store=self.reopen(store), clock=FakeClock())
            await first.remember("winner", 1)
            await first.save()
            await second.remember("loser", 2)
            with pytest.raises(ConflictError):
                await second.save()
            final = await create_async_memory(store=self.reopen(store))
            assert final.has("winner") and not final.has("loser")

        self._run(check, "two writers")

    def test_aio_2_lock_lets_its_holder_and_its_tasks_take_it_again(self, tmp_path: Any) -> None:
        """AIO-2, MW-2: the task holding lock() takes it again, and so does a task it starts meanwhile (an AsyncMemory runs each change in a task of its own)."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")

        async def check() -> None:
            async def inner() -> str:
                async with store.lock():
                    return "taken"

            async with store.lock():
                assert await inner() == "taken"
                assert await asyncio.create_task(inner()) == "taken"

        self._run(check, "taking lock() again while holding it")

    def test_aio_2_shared_tasks_lose_nothing(self, tmp_path: Any) -> None:
        """AIO-2, MW-6: three async memories, each on its own store object, autosaving shared in tasks at once, lose no remember."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        writers, each = 3, 10

        async def check() -> None:
            memories = [
                await create_async_memory(
                    store=self.reopen(store), autosave=True, shared=True, limit=10_000, clock=FakeClock()
                )
                for _ in range(writers)
            ]

            async def write(worker: int) -> None:
                for i in range(each):
                    await memories[worker].remember(f"w{worker}:{i}", i)

            await asyncio.gather(*(write(worker) for worker in range(writers)))
            final = await create_async_memory(store=self.reopen(store), limit=10_000)
            assert final.size() == writers * each, f"{writers * each - final.size()} acknowledged remembers lost"
            assert final.generation == writers * each

        self._run(check, "shared writers in tasks")

    # -- the sync kit's checks, for async stores --------------------------------------------------------

    def _async_history(self, tmp_path: Any, store: Any, mode: str, *, shared: bool = True) -> tuple[list[Any], Any]:
        """Writers (and a reader beside them) in ``mode``: ``tasks`` each on a store object of its own from
        ``reopen``, ``one object`` sharing ``store``, ``processes`` forked, each on its own event loop."""
        events: list[dict[str, Any]] = []
        count, each = (self.history_writers, self.history_each) if shared else (1, 3 * self.history_each)

        def own() -> Any:
            return store if mode == "one object" else self.reopen(store)

        pids: list[int] = []
        folder = tempfile.mkdtemp(prefix="sentinel-kit-history-", dir=tmp_path)
        if mode == "processes":  # forked before any event loop runs here: a child starts its own
            for worker in range(count):
                pid = os.fork()
                if pid == 0:
                    mine: list[dict[str, Any]] = []
                    try:
                        name = f"writer {worker}"
                        asyncio.run(_remembering_async(AsyncRecordingStore(own(), name, mine), name, each, mine))
                    finally:
                        with open(os.path.join(folder, f"{worker}.json"), "w", encoding="utf-8") as out:
                            json.dump(mine, out)
                        os._exit(0)
                pids.append(pid)

        async def check() -> Any:
            done: list[bool] = []
            reader = asyncio.ensure_future(
                _reading_async(AsyncRecordingStore(own(), "reader", events), lambda: bool(done))
            )
            try:
                if mode == "processes":
                    for pid in pids:
                        await asyncio.to_thread(os.waitpid, pid, 0)
                else:
                    await asyncio.gather(
                        *(
                            _remembering_async(
                                AsyncRecordingStore(own(), f"writer {w}", events),
                                f"writer {w}",
                                each,
                                events,
                                shared=shared,
                            )
                            for w in range(count)
                        )
                    )
            finally:
                done.append(True)
                await reader
            return await self.reopen(store).load()

        final = self._run(check, f"writers in {mode}")
        for worker in range(len(pids)):
            path = os.path.join(folder, f"{worker}.json")
            if not os.path.exists(path):
                pytest.fail(f"writer {worker} (a forked process) ended without a history")
            with open(path, encoding="utf-8") as kept:
                events.extend(json.load(kept))
        return events, final

    @pytest.mark.parametrize("mode", ["tasks", "one object", "processes"])
    def test_mw_6_many_writers_leave_a_history_one_at_a_time_could(self, tmp_path: Any, mode: str) -> None:
        """MW-6, MW-2, MW-3, AIO-2: shared async writers (tasks on objects of their own, tasks on one object, processes) and a reader: no lost update, stale read, torn document or lock held twice."""
        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        if mode == "processes" and not self.processes:
            pytest.skip("the store lives in one process (processes = False)")
        problems = history_problems(*self._async_history(tmp_path, store, mode))
        assert not problems, f"with async writers in {mode}:\n" + "\n".join(problems)

    @pytest.mark.parametrize("mode", ["tasks", "one object"])
    def test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents(self, tmp_path: Any, mode: str) -> None:
        """PER-3, MW-1, AIO-3: a reader task loading while a writer autosaves never sees nothing, part of a document or an older one than was acknowledged."""
        store = self.make_store(tmp_path)
        problems = history_problems(*self._async_history(tmp_path, store, mode, shared=False))
        assert not problems, f"a reader beside an async writer ({mode}):\n" + "\n".join(problems)

    def test_mw_3_first_saves_racing_one_wins(self, tmp_path: Any) -> None:
        """MW-3, AIO-3: three store objects save generation 1 of an empty store at once: one is acknowledged, the others get ConflictError."""
        store = self.make_store(tmp_path)

        async def check() -> None:
            stores = [self.reopen(store) for _ in range(3)]
            for one in stores:
                assert await one.load() is None
            documents = [
                {
                    "version": 1,
                    "generation": 1,
                    "entries": [{"key": f"first:{i}", "data": i, "importance": 0.5, "createdAt": T0, "updatedAt": T0}],
                    "working": {"data": {}, "updatedAt": None},
                }
                for i in range(3)
            ]
            outcomes = await asyncio.gather(
                *(one.save(document) for one, document in zip(stores, documents, strict=True)), return_exceptions=True
            )
            won = [i for i, outcome in enumerate(outcomes) if outcome is None]
            assert all(outcome is None or isinstance(outcome, ConflictError) for outcome in outcomes), outcomes
            assert len(won) == 1, (
                f"{len(won)} of 3 first saves of generation 1 were acknowledged: a first save must conflict with "
                "another one as any save does (there is no row to lock before it: insert the row first, MW-3)"
            )
            final = await self.reopen(store).load()
            assert [entry["key"] for entry in final["entries"]] == [f"first:{won[0]}"]

        self._run(check, "first saves racing")

    def test_mw_4_incremental_saves_keep_the_order(self, tmp_path: Any) -> None:
        """MW-4, PER-1, AIO-3: save_changes keeps the order a whole save writes, through rewrites, forgets, evictions and batches; a load gives it back."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)
        _needs(store, "save_changes")

        async def check() -> None:
            clock = FakeClock()
            mem = await create_async_memory(store=store, autosave=True, limit=6, clock=clock)
            for key in ("zeta", "alpha", "mid", "beta", "omega", "b10", "b9"):
                await mem.remember(key, key, importance=0.9 if key != "omega" else 0.1)
                clock.advance(1)
            await mem.remember("alpha", "again")
            await mem.forget("mid")
            await mem.remember("mid", "back", importance=0.95)  # outlives the batch's evictions: its place shows
            batch = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}]
            await mem.add_messages(batch, importance=1.0)  # a batch written in one change, kept in its order
            await mem.working.set({"step": 1})
            whole = to_document(mem.state, generation=mem.generation)
            stored = await self.reopen(store).load()
            order = [entry["key"] for entry in whole["entries"]]
            assert [entry["key"] for entry in stored["entries"]] == order, "save_changes changed the stored order"
            assert stored == whole
            again = await create_async_memory(store=self.reopen(store), limit=6, clock=clock)
            assert _fields(again) == _fields(mem)  # type: ignore[arg-type]

        self._run(check, "incremental saves")

    def test_mw_2_lock_excludes_another_store_object(self, tmp_path: Any) -> None:
        """MW-2, AIO-2: while one store object holds lock(), another on the same data cannot take it until it is let go."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")
        other = self.reopen(store)
        if other is store:
            pytest.skip("reopen gives the same object: no other object to exclude")
        if hasattr(other, "lock_wait"):
            other.lock_wait = 0.3

        async def check() -> None:
            held = asyncio.Event()

            async def take() -> str:  # started before the hold: not one of the holder's tasks
                await held.wait()
                try:
                    async with other.lock():
                        return "taken"
                except LockTimeoutError:
                    return "timed out"

            taker = asyncio.ensure_future(take())
            async with store.lock():
                held.set()
                await asyncio.sleep(0.5)
                early = taker.done() and taker.result() == "taken"
            got = await asyncio.wait_for(taker, 10) if not taker.done() else taker.result()
            assert not early, "another store object took lock() while it was held elsewhere"
            assert got in ("taken", "timed out")

        self._run(check, "lock() against another store object")

    def test_aio_2_lock_excludes_another_task_of_the_same_object(self, tmp_path: Any) -> None:
        """AIO-2, MW-2: lock() lets in its holder and the tasks the holder starts, not any other task of the same store object."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")
        if hasattr(store, "lock_wait"):
            store.lock_wait = 0.3

        async def check() -> None:
            held, release = asyncio.Event(), asyncio.Event()
            taken: list[str] = []

            async def hold() -> None:
                async with store.lock():
                    held.set()
                    await release.wait()

            async def stranger() -> None:  # started before the hold, from outside it: not the holder's task
                await held.wait()
                try:
                    async with store.lock():
                        taken.append("taken" if not release.is_set() else "after")
                except LockTimeoutError:
                    taken.append("timed out")

            holder, other = asyncio.ensure_future(hold()), asyncio.ensure_future(stranger())
            await held.wait()
            await asyncio.sleep(0.5)
            early = list(taken)
            release.set()
            await asyncio.gather(holder, other)
            assert "taken" not in early, (
                "a task that is neither the holder nor one it started took lock() while it was held: lock() must "
                "exclude other tasks of the same store object (AIO-2)"
            )

        self._run(check, "lock() against another task of the same object")

    def test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing(self, tmp_path: Any) -> None:
        """MW-8, WRP-1, AIO-3: while another store object holds the lock, a shared write raises LockTimeoutError after lock_wait and changes nothing; the retry works."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)
        _needs(store, "lock", "generation")
        if not hasattr(store, "lock_wait"):
            pytest.skip("the store has no lock_wait")

        async def check() -> None:
            mem = await create_async_memory(store=store, autosave=True, shared=True, clock=FakeClock())
            await mem.remember("before", 1)
            store.lock_wait = 0.2
            other = self.reopen(store)
            held, release = asyncio.Event(), asyncio.Event()

            async def hold() -> None:
                async with other.lock():
                    held.set()
                    await release.wait()

            holder = asyncio.ensure_future(hold())
            await held.wait()
            started = time.monotonic()
            try:
                with pytest.raises(LockTimeoutError):
                    await mem.remember("during", 2)
                waited = time.monotonic() - started
                assert 0.18 <= waited < 2, f"lock_wait was 0.2 s, but the async lock gave up after {waited:.2f} s"
                assert not mem.has("during")
            finally:
                release.set()
                await holder
            assert (await create_async_memory(store=self.reopen(store))).get("during") is None
            await mem.remember("during", 2)  # the retry, once the lock is let go (WRP-1)
            final = await create_async_memory(store=self.reopen(store))
            assert final.get("during") == 2

        self._run(check, "a lock held elsewhere")

    def test_aio_4_a_cancel_inside_lock_lets_it_go(self, tmp_path: Any) -> None:
        """AIO-4, MW-2: a task cancelled while it holds lock(), or while it waits for it, leaves the lock free for another store object."""
        store = self.make_store(tmp_path)
        _needs(store, "lock")
        other = self.reopen(store)
        for one in (store, other):
            if hasattr(one, "lock_wait"):
                one.lock_wait = 2

        async def check() -> None:
            inside = asyncio.Event()

            async def hold() -> None:
                async with store.lock():
                    inside.set()
                    await asyncio.sleep(60)

            holder = asyncio.ensure_future(hold())
            await inside.wait()
            waiter = asyncio.ensure_future(other.lock().__aenter__())  # waits: the lock is held
            await asyncio.sleep(0.05)
            for task in (waiter, holder):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, LockTimeoutError):
                    await task
            third = self.reopen(store)
            if hasattr(third, "lock_wait"):
                third.lock_wait = 2
            try:
                async with asyncio.timeout(5):
                    async with third.lock():
                        pass
            except (LockTimeoutError, TimeoutError):
                pytest.fail("a task cancelled inside lock() left it held: another store object cannot take it")

        self._run(check, "a cancel inside lock()")

    def test_aio_4_a_cancelled_save_is_whole_or_nothing(self, tmp_path: Any) -> None:
        """AIO-4, PER-3: a save cancelled at any point leaves the document it replaced or the new one, whole, and the next save goes on."""
        store = self.make_store(tmp_path)

        def document(generation: int, size: int) -> dict[str, Any]:
            entries = [
                {"key": f"k{i}", "data": generation, "importance": 0.5, "createdAt": T0, "updatedAt": T0}
                for i in range(size)
            ]
            return {
                "version": 1,
                "generation": generation,
                "entries": entries,
                "working": {"data": {}, "updatedAt": None},
            }

        async def check() -> None:
            await store.save(document(1, 3))
            current, size = 1, 3
            for delay in range(12):
                task = asyncio.ensure_future(store.save(document(current + 1, 4 + delay)))
                for _ in range(delay):
                    await asyncio.sleep(0)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                found = await self.reopen(store).load()
                assert found in (document(current, size), document(current + 1, 4 + delay)), (
                    f"a save cancelled after {delay} steps left a document that is neither the old one nor the new one"
                )
                current, size = found["generation"], len(found["entries"])
            await self.reopen(store).save(document(current + 1, 2))  # the next save, from another object
            assert (await self.reopen(store).load())["generation"] == current + 1

        self._run(check, "cancelled saves")

    def test_wrp_5_close_lets_go_and_the_store_opens_again(self, tmp_path: Any) -> None:
        """WRP-5, MW-2, AIO-3: a memory closed after a transaction leaves the lock free for another object, and its store opens again."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)
        _needs(store, "close", "lock", "generation")

        async def check() -> None:
            mem = await create_async_memory(store=store, autosave=True, shared=True, clock=FakeClock())
            async with mem.transaction():
                await mem.remember("a", 1)
            await mem.close()
            other = self.reopen(store)
            if hasattr(other, "lock_wait"):
                other.lock_wait = 1
            try:
                async with asyncio.timeout(5):
                    async with other.lock():
                        pass
            except (LockTimeoutError, TimeoutError):
                pytest.fail("after close() another store object cannot take lock(): the closed store still holds it")
            await mem.remember("b", 2)  # a closed store opens again
            await mem.close()
            final = await create_async_memory(store=self.reopen(store))
            assert sorted(final) == ["a", "b"]

        self._run(check, "close()")

    def test_per_13_damage_is_reported_and_left_alone(self, tmp_path: Any) -> None:
        """PER-13, MW-7, AIO-3: whatever the store keeps, when it is not a memory, raises DamagedStoreError on load and save and stays as it was."""
        from .aio import create_async_memory

        store = self.make_store(tmp_path)

        async def check() -> bool:
            damaged = self.damage(store)
            damaged = await damaged if asyncio.iscoroutine(damaged) else damaged
            if damaged is None:
                return False
            for what, call in (
                ("a memory loading the damaged store", lambda: create_async_memory(store=store, autosave=True)),
                ("store.load()", store.load),
                ("store.save() over the damage (MW-7)", lambda: store.save({"version": 1, "entries": []})),
            ):
                try:
                    await call()
                except DamagedStoreError:
                    continue
                pytest.fail(f"{what} did not raise DamagedStoreError")
            now = self.snapshot(store)
            now = await now if asyncio.iscoroutine(now) else now
            assert now == damaged, "the damaged store was changed"
            return True

        if not self._run(check, "a damaged store"):
            pytest.skip("this store cannot be damaged from outside")
