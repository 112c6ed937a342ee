"""The store kit's suites as a store author meets them: what a subclass must say, the defaults it may keep, and the
skip a store without an optional method gets (PER-2, MW-6)."""

from __future__ import annotations

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
    """MW-6: by default reopen hands back the same store object, the many-writers checks fork processes, and three writers remember ten keys each."""
    store = object()
    assert suite().reopen(store) is store
    assert (suite.processes, suite.history_writers, suite.history_each) == (True, 3, 10)
    if suite is AsyncStoreSuite:
        assert suite.deadline == 30.0  # how long a check may take before the kit calls it a deadlock


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
