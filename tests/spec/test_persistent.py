"""The persistent containers against a sorted list and a dict: every answer the same, every old version unchanged.

The index and the entry table are built from these two containers, so the
machines check them only through memories. Here each is compared with the
plain structure it stands for, with chunks of four items so that splitting,
emptying and whole-run removals all happen in small examples.
"""

from __future__ import annotations

import bisect

import hypothesis.strategies as st
import pytest
from hypothesis import given

from sentinel_memory.core import persistent
from sentinel_memory.core.persistent import HashTable, SortedRun

# Items as the index makes them: a sort key, then a unique number, then a payload never compared.
numbers = st.integers(0, 60)
steps = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "cut", "mixed"]), st.lists(numbers, max_size=12), numbers),
    max_size=25,
)


def item(n: int) -> tuple:
    return (n % 7, n, object())


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(persistent, "CHUNK", 4)


@given(start=st.lists(numbers, unique=True, max_size=30), steps=steps, probe=numbers)
def test_sorted_run_equals_a_sorted_list(start, steps, probe):
    """MW-4, CMP-1, EXP-2: a SortedRun answers as the sorted list of its items, and a change leaves the old run as it was."""
    made = {n: item(n) for n in range(61)}
    model = sorted(made[n] for n in start)
    run = SortedRun(made[n] for n in start)
    history = [(run, list(model))]
    for kind, numbers_, bound in steps:
        present = {i[1] for i in model}
        if kind == "add":
            fresh = sorted({n for n in numbers_ if n not in present})
            run = run.changed((), [made[n] for n in fresh])
            model = sorted(model + [made[n] for n in fresh])
        elif kind == "remove":
            gone = sorted({n for n in numbers_ if n in present})
            # With their ids too, as the index passes them: many then leave in one pass.
            run = run.changed([made[n] for n in gone], removed_ids=set(gone) if bound % 2 else None)
            model = [i for i in model if i[1] not in gone]
        elif kind == "cut":
            run = run.without_below((bound % 7, bound))
            model = [i for i in model if i[:2] >= (bound % 7, bound)]
        else:
            gone = {n for n in numbers_ if n in present}
            fresh = {n for n in numbers_ if n not in present} - gone
            run = run.changed([made[n] for n in gone], [made[n] for n in fresh])
            model = sorted([i for i in model if i[1] not in gone] + [made[n] for n in fresh])
        history.append((run, list(model)))
    for version, expected in history:
        assert list(version) == expected and len(version) == len(expected)
        assert list(reversed(version)) == expected[::-1]
    key = (probe % 7, probe)
    at = bisect.bisect_left([i[:2] for i in model], key)
    assert run.below(key) == model[:at] and run.count_below(key) == at
    assert run.from_(key) == model[at:]
    assert list(run.descending_below(key)) == model[:at][::-1]
    assert run.ceiling(key) == (model[at] if at < len(model) else None)
    few = run.next_few(key, probe % 5 + 1)
    assert list(few) == model[at : at + len(few)] and (0 < len(few) <= probe % 5 + 1 or at == len(model))
    assert run.first() == (model[0] if model else None) and run.last() == (model[-1] if model else None)
    assert [run.at(i) for i in range(len(model))] == model


@given(start=st.lists(numbers, unique=True, min_size=1, max_size=10), missing=numbers)
def test_sorted_run_refuses_to_remove_what_it_lacks(start, missing):
    """MW-4: removing an item the run does not hold, or one item twice, raises ValueError and changes nothing."""
    made = {n: item(n) for n in range(61)}
    run = SortedRun(made[n] for n in start)
    before = list(run)
    if missing not in start:
        with pytest.raises(ValueError):
            run.changed([made[missing]])
    with pytest.raises(ValueError):
        run.changed([made[start[0]], made[start[0]]])
    assert list(run) == before


@given(
    start=st.dictionaries(st.text(max_size=3), numbers, max_size=80),
    steps=st.lists(
        st.tuples(
            st.lists(st.text(max_size=3), max_size=10), st.dictionaries(st.text(max_size=3), numbers, max_size=10)
        ),
        max_size=10,
    ),
)
def test_hash_table_equals_a_dict(start, steps):
    """MW-4: a HashTable reads as the dict it stands for (also when asked about many keys at once), through growth and removals, and old versions stay as they were."""
    table, model = HashTable(start), dict(start)
    history = [(table, dict(model))]
    for removed, put in steps:
        table = table.changed(removed, put.items())
        for key in removed:
            model.pop(key, None)
        model.update(put)
        history.append((table, dict(model)))
    for version, expected in history:
        assert dict(version) == expected and len(version) == len(expected)
        for key in expected:
            assert key in version and version[key] == version.get(key) == expected[key]
        assert version.get("absent-key", 7) == 7 or "absent-key" in expected
        asked = [*expected, "absent-key", *reversed(list(expected))]
        assert version.having(asked) == [key for key in asked if key in expected]
