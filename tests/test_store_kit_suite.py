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
