"""The store contract as an importable pytest suite: a conformance kit for store backends.

A store of your own (Postgres, DynamoDB, a company's key-value service)
passes the same tests as the built-in ones when its test module subclasses
``StoreSuite`` and says how to make one::

    # test_my_store.py
    from sentinel_memory.testing import StoreSuite

    class TestMyStore(StoreSuite):
        def make_store(self, tmp_path):
            return MyStore(dsn=..., key=f"test-{tmp_path.name}")

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

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from .core import to_document
from .core.errors import ConflictError, DamagedStoreError, LoadWarning, LockTimeoutError
from .core.values import LoadResult
from .fakeclock import FakeClock
from .memory import Memory, create_memory

__all__ = ["FakeClock", "StoreSuite", "in_processes"]

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
        The exit statuses, in worker order; 0 when ``work`` returned.
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
    return [os.waitpid(pid, 0)[1] for pid in pids]


class StoreSuite:
    """The behaviour every store must have: subclass it in a test module and define ``make_store``.

    ``make_store(tmp_path)`` returns a new, empty store. Override
    ``reopen(store)`` to open the same store afresh, as another process
    would (the default hands back the same object, and the writers are then
    threads); ``damage(store)`` and ``snapshot(store)`` to check that damage
    is reported and left alone. Set ``processes = False`` for a store that
    lives in one process.
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

    def _needs(self, store: Any, *methods: str) -> None:
        missing = [name for name in methods if not callable(getattr(store, name, None))]
        if missing:
            pytest.skip(f"the store has no {', '.join(f'{name}()' for name in missing)}")

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
            self._needs(store, "lock", "generation")

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
        self._needs(store, "save_changes")
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
        self._needs(store, "lock", "generation")
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
        self._needs(store, "lock", "generation")
        first, second = make(store=store, autosave=True), make(store=self.reopen(store), autosave=True)
        for _ in range(10):
            for mem in (first, second):
                with mem.transaction():
                    mem.remember("count", (mem.get("count") or 0) + 1)
        assert make(store=store).get("count") == 20

    def test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing(self, tmp_path: Any, make: Any) -> None:
        """MW-8, WRP-1: while another writer holds the store's lock, a shared write raises LockTimeoutError after lock_wait; the retry works."""
        store = self.make_store(tmp_path)
        self._needs(store, "lock", "generation")
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
        mem.remember("during", 2)  # the retry, once the holder has let go
        assert make(store=store).get("during") == 2

    def test_per_14_a_lossy_load_keeps_the_original(self, tmp_path: Any, make: Any) -> None:
        """PER-14: before the first save after a load that dropped entries, the store keeps a copy of what it held."""
        store = self.make_store(tmp_path)
        self._needs(store, "preserve")
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
        self._needs(store, "close")
        with make(store=store, autosave=True) as mem:
            mem.remember("a", 1)
        mem.remember("b", 2)
        assert sorted(make(store=store)) == ["a", "b"]
