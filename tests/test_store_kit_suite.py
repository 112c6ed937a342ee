"""The store kit's suites as a store author meets them: what a subclass must say, the defaults it may keep, and the
skip a store without an optional method gets (PER-2, MW-6)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from sentinel_memory.testing import AsyncStoreSuite, StoreSuite, _needs

SUITES = [StoreSuite, AsyncStoreSuite]


def test_per_2_a_suite_that_does_not_say_how_to_make_its_store_says_so():
    """PER-2: make_store of either suite, not overridden, raises NotImplementedError naming what is missing."""
    with pytest.raises(NotImplementedError) as sync:
        StoreSuite().make_store(None)
    with pytest.raises(NotImplementedError) as not_sync:
        AsyncStoreSuite().make_store(None)
    assert str(sync.value) == "a StoreSuite subclass says how to make its store"
    assert str(not_sync.value) == "an AsyncStoreSuite subclass says how to make its store"


@pytest.mark.parametrize("suite", SUITES)
def test_per_13_a_suite_that_damages_its_store_must_say_how_to_see_it(suite: Any):
    """PER-13: snapshot, not overridden, raises NotImplementedError naming what is missing; damage by default says the store cannot be damaged (None)."""
    with pytest.raises(NotImplementedError) as raised:
        suite().snapshot(object())
    assert str(raised.value) == "a suite that damages its store says how to see all of it"
    assert suite().damage(object()) is None


@pytest.mark.parametrize("suite", SUITES)
def test_mw_6_by_default_a_store_is_reopened_as_itself_and_writers_fork(suite: Any):
    """MW-6: by default reopen hands back the same store object, the many-writers checks fork processes, three writers remember ten keys each, and a deadlock is called after 300 s of a sync history (30 s of any async check)."""
    store = object()
    assert suite().reopen(store) is store
    assert (suite.processes, suite.history_writers, suite.history_each) == (True, 3, 10)
    assert suite.deadline == (30.0 if suite is AsyncStoreSuite else 300.0)


@pytest.mark.parametrize("missing", [("save_changes",), ("save_changes", "lock")])
def test_per_2_a_check_of_an_optional_method_skips_a_store_without_it_and_names_what_it_lacks(missing: tuple[str, ...]):
    """PER-2: a check that needs optional methods skips a store that lacks one, naming each it lacks; a store with them goes on."""

    class Store:
        def load(self) -> None:
            return None

    class WithThem(Store):
        save_changes = lock = Store.load

    with pytest.raises(pytest.skip.Exception) as skipped:
        _needs(Store(), *missing)
    assert str(skipped.value) == f"the store has no {', '.join(f'{name}()' for name in missing)}"
    _needs(WithThem(), *missing)


class _Unreachable:
    """A store with lock() and generation() but no lock_wait, in one process, that no one can damage from outside."""

    def load(self) -> None:
        return None

    def save(self, document: Any) -> None:
        pass

    def generation(self) -> int:
        return 0

    def lock(self) -> Any:
        raise AssertionError("a skipped check takes no lock")


@pytest.mark.parametrize("suite", SUITES)
def test_per_2_a_check_that_cannot_reach_its_store_skips_it_and_says_why(suite: Any, tmp_path: Any):
    """PER-2, PER-13, MW-2, MW-6, MW-8: each check a store cannot be put through skips it, saying what the store lacks."""

    class Kit(suite):
        processes = False

        def make_store(self, tmp_path: Any) -> Any:
            return _Unreachable()

    kit = Kit()
    checks = {
        "this store cannot be damaged from outside": lambda: kit.test_per_13_damage_is_reported_and_left_alone(
            tmp_path, *([None] if suite is StoreSuite else [])
        ),
        "the store has no lock_wait": lambda: kit.test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing(
            tmp_path, *([None] if suite is StoreSuite else [])
        ),
        "the store lives in one process (processes = False)": (
            lambda: kit.test_mw_6_many_writers_leave_a_history_one_at_a_time_could(tmp_path, "processes")
        ),
        "reopen gives the same object: no other object to exclude": (
            lambda: kit.test_mw_2_lock_excludes_another_store_object(tmp_path)
        ),
    }
    for reason, check in checks.items():
        with pytest.raises(pytest.skip.Exception) as skipped:
            check()
        assert str(skipped.value) == reason


class _Unanswering:
    """An async store none of whose calls answer until ``gate`` is set (then each raises): every check waits on it."""

    lock_wait = 0.1

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    async def _wait(self) -> Any:
        while not self.gate.is_set():
            await asyncio.sleep(0.01)
        raise RuntimeError("let go")

    async def load(self) -> Any:
        return await self._wait()

    async def save(self, document: Any) -> Any:
        return await self._wait()

    async def save_changes(self, changes: Any) -> Any:
        return await self._wait()

    async def generation(self) -> Any:
        return await self._wait()

    async def close(self) -> Any:
        return await self._wait()

    @contextlib.asynccontextmanager
    async def lock(self) -> Any:
        await self._wait()
        yield


#: Each async check that runs on a thread of its own, and the name its deadline message gives it.
ASYNC_CHECK_NAMES = {
    "test_aio_3_an_empty_store_loads_none_and_a_save_loads_back": "a save and a load",
    "test_mw_3_two_async_writers_from_one_generation_one_wins": "two writers",
    "test_aio_2_lock_lets_its_holder_and_its_tasks_take_it_again": "taking lock() again while holding it",
    "test_aio_2_shared_tasks_lose_nothing": "shared writers in tasks",
    "test_mw_3_first_saves_racing_one_wins": "first saves racing",
    "test_mw_4_incremental_saves_keep_the_order": "incremental saves",
    "test_mw_2_lock_excludes_another_store_object": "lock() against another store object",
    "test_aio_2_lock_excludes_another_task_of_the_same_object": "lock() against another task of the same object",
    "test_mw_8_a_lock_held_elsewhere_times_out_and_changes_nothing": "a lock held elsewhere",
    "test_aio_4_a_cancel_inside_lock_lets_it_go": "a cancel inside lock()",
    "test_aio_4_a_cancelled_save_is_whole_or_nothing": "cancelled saves",
    "test_wrp_5_close_lets_go_and_the_store_opens_again": "close()",
    "test_per_13_damage_is_reported_and_left_alone": "a damaged store",
    "test_mw_6_many_writers_leave_a_history_one_at_a_time_could[tasks]": "writers in tasks",
    "test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents[one object]": "writers in one object",
}


def test_aio_2_a_check_that_never_ends_names_itself_at_its_deadline(tmp_path: Path):
    """AIO-2: each async check whose store never answers fails at the suite's deadline, naming what it was doing and what lock() must do."""

    class Kit(AsyncStoreSuite):
        deadline = 0.2
        processes = False

        def make_store(self, tmp_path: Any) -> Any:
            return _Unanswering(gate)

        def reopen(self, store: Any) -> Any:
            return _Unanswering(gate)

        def damage(self, store: Any) -> Any:
            return "damaged"

        def snapshot(self, store: Any) -> Any:
            return "damaged"

    gate = threading.Event()
    kit, said = Kit(), {}
    try:
        for check in ASYNC_CHECK_NAMES:
            name, _, mode = check.rstrip("]").partition("[")
            with pytest.raises(pytest.fail.Exception) as failed:
                getattr(kit, name)(tmp_path, *([mode] if mode else []))
            said[check] = str(failed.value)
    finally:
        gate.set()  # every check's thread raises and ends
    tail = (
        " did not end in 0.2 s: a deadlock? lock() must let the task holding it, and the tasks it starts, take it "
        "again (AIO-2), as a shared change saves while it holds the lock"
    )
    assert said == {check: name + tail for check, name in ASYNC_CHECK_NAMES.items()}
    assert {name for name in dir(AsyncStoreSuite) if name.startswith("test_")} >= {c.split("[")[0] for c in said}


class _Plain:
    """A correct store with load and save only (no lock, no generation): one JSON text."""

    def __init__(self) -> None:
        self.text: str | None = None

    def load(self) -> Any:
        return None if self.text is None else json.loads(self.text)

    def save(self, document: Any) -> None:
        self.text = json.dumps(document)


class _AsyncPlain(_Plain):
    async def load(self) -> Any:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().load()

    async def save(self, document: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        super().save(document)


@pytest.mark.parametrize(
    ("suite", "store", "mode"), [(StoreSuite, _Plain, "threads"), (AsyncStoreSuite, _AsyncPlain, "tasks")]
)
def test_per_3_the_reader_check_needs_no_lock_its_one_writer_is_not_shared(
    suite: Any, store: Any, mode: str, tmp_path: Path
):
    """PER-3, MW-6: a store with load and save only (no lock) passes the reader-beside-a-writer check: its one writer writes alone, not shared."""

    class Kit(suite):  # type: ignore[misc, valid-type]
        processes = False

        def make_store(self, tmp_path: Any) -> Any:
            return store()

    Kit().test_per_3_a_reader_beside_a_saving_writer_sees_whole_documents(tmp_path, mode)
