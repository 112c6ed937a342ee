"""REC-7: the postings counted in bits (``bitsets``, ``HashTable.bits``) are the postings counted one by one.

The search that counts a query's words per entry from bit sets is checked
three ways: the bit arithmetic against counting member by member, a table's
kept bit set against the set of its keys after every change (carried or
dropped), and recall and a context's matches, forced through the bit
counts while entries come, change, expire and go, against the naive ranking.
"""

from __future__ import annotations

from collections import Counter
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import bitsets, lexical
from sentinel_memory.core import search as search_module
from sentinel_memory.core.lexical import ranked, words
from sentinel_memory.core.persistent import HashTable

DAY = 86_400_000
sets = st.lists(st.frozensets(st.integers(0, 200), max_size=30), max_size=12)


@given(sets=sets)
def test_rec_7_bit_sliced_counts_are_the_counts_member_by_member(sets):
    """REC-7: planes_of, with_count and members give, for every count, exactly the ints held by that many sets."""
    as_bits = [bitsets.bits_of(s) for s in sets]
    assert [bitsets.members(b) for b in as_bits] == [sorted(s) for s in sets]
    planes = bitsets.planes_of(as_bits)
    expected = Counter(k for s in sets for k in s)
    assert bitsets.counts_of(as_bits) == dict(expected)
    assert not planes or planes[-1]  # never an empty top plane
    for count in range(1, len(sets) + 2):
        held = bitsets.members(bitsets.with_count(planes, count))
        assert held == sorted(k for k, n in expected.items() if n == count)


@given(
    start=st.dictionaries(st.integers(0, 300), st.integers(), max_size=40),
    steps=st.lists(
        st.tuples(st.lists(st.integers(0, 300), max_size=80), st.lists(st.integers(0, 300), max_size=80)), max_size=8
    ),
    asked=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_rec_7_a_tables_kept_bit_set_is_its_keys_after_every_change(start, steps, asked):
    """REC-7: HashTable.bits equals the set of the keys after each change, carried (small changes) or made afresh (large)."""
    table = HashTable(start)
    for (removed, put), ask in zip(steps, asked, strict=False):
        if ask:
            table.bits()
        before = dict(table)
        table = table.changed(removed, [(k, k) for k in put])
        model = {k: v for k, v in before.items() if k not in set(removed)} | {k: k for k in put}
        assert dict(table) == model
        assert table.bits() == bitsets.bits_of(model)


POOL = ["the", "the", "the", "you", "you", "tea", "café", "CAFE", "rare", "x1"]
texts = st.lists(st.sampled_from(POOL), max_size=5).map(" ".join)
steps_ = st.lists(
    st.tuples(
        st.sampled_from(["remember", "remember", "remember", "forget"]),
        st.integers(0, 25),
        texts,
        st.sampled_from([0, 0.5, 0.5, 1]),
        st.sampled_from([None, None, 1, DAY]),
        st.integers(0, 2 * DAY),
    ),
    max_size=30,
)
queries = st.lists(st.sampled_from([*POOL, "nowhere"]), min_size=1, max_size=6).map(" ".join)


@given(
    steps=steps_,
    query=queries,
    limit=st.sampled_from([1, 2, 5, 100]),
    kept=st.booleans(),
    in_order=st.booleans(),
)
def test_rec_7_recall_counted_in_bits_is_the_naive_ranking_at_every_step(steps, query, limit, kept, in_order):
    """REC-7: recall and a context's matches counted in bits, asked after every change, are the naive ranking.

    Either every list keeps its bit set (carried through the changes that
    follow) or none does (each laid out for its query); the clock either
    only goes forward (so ``seq`` order is age order, and a group leaves
    out the entries too old to matter before it looks them up) or jumps.
    """
    if in_order:
        steps = [(*step[:5], at) for step, at in zip(steps, sorted(step[5] for step in steps), strict=True)]
    state = sm.MemoryState()
    with (
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: True),
        mock.patch.object(lexical, "_BIT_POSTINGS", 0),
        mock.patch.object(lexical, "_KEPT_DENSITY", 10**6 if kept else 0),
    ):
        for kind, key, text, importance, ttl, at in steps:
            if kind == "forget":
                state, _ = core.forget(state, f"k{key}", now=at)
            else:
                state, _ = core.remember(state, f"k{key}", text, now=at, importance=importance, ttl=ttl)
            now = at + DAY // 2
            hits = core.recall(state, query, now=now, limit=limit)
            found = ranked(words(query), state.index.live_by_age(now), now, state.config.recency_window)
            assert [(h.score, h.entry.key) for h in hits] == [(v, e.key) for v, e in found[:limit]]
            matched = search_module._matches(state, words(query), now, 10**6)
            assert [(v, e.key) for v, e in matched] == [(v, e.key) for v, e in found]


WORDS = ["w1", "w2", "w3", "w4", "w5", "w6"]


@given(
    found=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
            st.sampled_from([0, 0.1, 0.2, 0.5, 0.7, 0.9, 1]),
            st.one_of(st.integers(0, 3 * DAY), st.integers(2 * DAY, 3 * DAY)),  # mostly in the last window
        ),
        min_size=1,
        max_size=40,
    ),
    limit=st.sampled_from([1, 1, 2, 5]),
    leader=st.sampled_from([None, 0.7, 0.75, 0.75]),
)
def test_rec_7_groups_that_leave_out_the_old_entries_give_the_naive_ranking(found, limit, leader):
    """REC-7: over three windows of entries in age order, the groups counted in bits leave out what is too old to matter, and recall is the naive ranking.

    A stale ``leader`` holding every word at an importance of 0.7 or 0.75
    sets a floor of 0.85 or 0.875, which the group of five words (5/6 and
    some freshness) reaches only from a recent band.
    """
    if leader is not None:
        found = [(" ".join(WORDS), leader, 0), *found]
    state = sm.MemoryState()
    for i, (text, importance, at) in enumerate(sorted(found, key=lambda item: item[2])):
        state, _ = core.remember(state, f"k{i}", text, now=at, importance=importance)
    now = 3 * DAY
    with (
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: True),
        mock.patch.object(lexical, "_BIT_POSTINGS", 0),
    ):
        hits = core.recall(state, " ".join(WORDS), now=now, limit=limit)
    expected = ranked(frozenset(WORDS), state.index.live_by_age(now), now, state.config.recency_window)
    assert [(h.score, h.entry.key) for h in hits] == [(v, e.key) for v, e in expected[:limit]]
