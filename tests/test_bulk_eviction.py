"""Evicting several entries at once ranks them as evicting one at a time does: lowest retention, ties to the older (CMP-1, CMP-2, PER-8)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sentinel_memory as sm
from support import DAY, T0

NOW = T0 + 10 * DAY

pytestmark = pytest.mark.filterwarnings("ignore::sentinel_memory.LoadWarning")  # every load here compacts (PER-14)


def record(key, importance, updated_at) -> dict:
    return {"key": key, "data": key, "importance": importance, "createdAt": updated_at, "updatedAt": updated_at}


def evicted_by_loading(records, limit) -> list[str]:
    """The keys a load into a memory of ``limit`` evicts (PER-8), in the order it reports them."""
    store = sm.MemoryStore()
    store.save({"version": 1, "entries": records})
    reported = []
    sm.create_memory(store=store, limit=limit, clock=lambda: NOW, on_evict=reported.append)
    return [e.key for c in reported for e in c.evicted]


def evicted_one_at_a_time(records, limit) -> list[str]:
    """The keys single evictions drop: over and over, a compaction to one entry fewer than are left."""
    store = sm.MemoryStore()
    store.save({"version": 1, "entries": records})
    state = sm.create_memory(store=store, limit=len(records), clock=lambda: NOW).state
    order = []
    while len(state.entries) > limit:
        state = attrs.evolve(state, config=attrs.evolve(state.config, limit=len(state.entries) - 1))
        state, dropped = sm.core.compact(state, now=NOW)
        assert len(dropped.evicted) == 1
        order += [e.key for e in dropped.evicted]
    return order


def model(records, limit) -> list[str]:
    """RET-2, CMP-1: ascending (importance + 0.1 * freshness, updatedAt, file position), the first len - limit of them."""

    def rank(item):
        position, r = item
        freshness = max(0, 1 - max(0, NOW - r["updatedAt"]) / DAY)
        return (r["importance"] + 0.1 * freshness, r["updatedAt"], position)

    ranked = sorted(enumerate(records), key=rank)
    return [r["key"] for _, r in ranked[: max(0, len(records) - limit)]]


def test_cmp_1_equal_entries_evicted_together_go_oldest_first():
    """CMP-1, CMP-2: five entries equal in importance and time, loaded into a limit of 2: the first three in file order go, in that order."""
    records = [record(f"k{i}", 0.5, T0) for i in range(5)]
    assert evicted_by_loading(records, 2) == ["k0", "k1", "k2"]


def test_cmp_1_stale_entries_tie_on_retention_and_the_older_goes_first():
    """CMP-1, RET-1: entries older than the recency window all have freshness 0; of equal importance the oldest go first."""
    records = [record(f"k{i}", 0.5, T0 + (5 - i) * DAY // 10) for i in range(5)]  # listed newest first
    assert evicted_by_loading(records, 3) == ["k4", "k3"]


entries = st.lists(
    st.tuples(
        st.sampled_from([0.1, 0.5, 0.9, 0.45]),
        st.sampled_from([T0, T0 + 1, NOW - DAY // 2, NOW - DAY // 2 + 1, NOW, NOW - 2 * DAY]),
    ),
    min_size=2,
    max_size=24,
)


@given(entries=entries, keep=st.integers(1, 23))
def test_cmp_1_evicting_several_at_once_is_evicting_one_at_a_time(entries, keep):
    """CMP-1, CMP-2, PER-8: a load over the limit evicts exactly what the rule picks and in its order, as single evictions do."""
    records = [record(f"k{i}", importance, at) for i, (importance, at) in enumerate(entries)]
    limit = min(keep, len(records))
    expected = model(records, limit)
    assert evicted_by_loading(records, limit) == expected
    assert evicted_one_at_a_time(records, limit) == expected
