"""REC-7: the pruned searches of the default ranking return exactly what scoring every live entry returns."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import lexical, maxscore
from sentinel_memory.core import search as search_module
from sentinel_memory.core.lexical import ranked, words

DAY = 86_400_000
#: A word most entries hold, a few rarer ones, and the same words with accents and capitals (REC-1).
POOL = ["the", "the", "the", "you", "you", "tea", "café", "CAFE", "Čaj", "caj", "rare", "x1"]
#: Close and equal importances, so that ties and freshness decide.
IMPORTANCES = [0, 0.1, 0.2, 0.3, 0.30000000000000004, 0.5, 0.9, 1]

texts = st.lists(st.sampled_from(POOL), max_size=5).map(" ".join)
items = st.lists(
    st.tuples(
        st.integers(0, 40),  # the key: a repeated one replaces the entry
        texts,
        st.sampled_from(IMPORTANCES),
        st.one_of(st.integers(0, 3 * DAY), st.sampled_from([0, DAY, 2 * DAY, 3 * DAY])),  # clocks may go back
        st.sampled_from([None, None, 1, DAY]),  # ttl: some entries are expired at ``now``
    ),
    max_size=40,
)
queries = st.lists(st.sampled_from([*POOL, "nowhere", "CAFÉ"]), min_size=1, max_size=6).map(" ".join)
#: How the search is forced: every holder scored (by MaxScore, or counted in bits), the walk to its end, or the walk
#: giving up after ``n`` entries.
modes = st.one_of(st.sampled_from(["holders", "bits", "walk"]), st.integers(0, 30))


def state_from(found) -> sm.MemoryState:
    """remember() each item at its own time, with its own ttl."""
    state = sm.MemoryState()
    for key, text, importance, at, ttl in found:
        state, _ = core.remember(state, f"k{key}", text, now=at, importance=importance, ttl=ttl)
    return state


def recalled(state: sm.MemoryState, query: str, now: int, limit: int, mode: str | int) -> list[tuple[float, str]]:
    """``recall`` with the search forced to ``mode``, as ``(score, key)``."""
    budget = None if mode == "walk" else 0 if mode in ("holders", "bits") else mode
    with (
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: mode in ("holders", "bits")),
        mock.patch.object(search_module, "_walk_budget", lambda postings, top_band=0: budget),
        mock.patch.object(lexical, "_BIT_POSTINGS", 0 if mode == "bits" else 10**9),
    ):
        hits = core.recall(state, query, now=now, limit=limit)
    return [(hit.score, hit.entry.key) for hit in hits]


def reference(state: sm.MemoryState, query: str, now: int, limit: int) -> list[tuple[float, str]]:
    """The start of ``lexical.ranked`` over every live entry: the unpruned ranking (REC-2, REC-3)."""
    found = ranked(words(query), state.index.live_by_age(now), now, state.config.recency_window)
    return [(value, entry.key) for value, entry in found[:limit]]


# One fresh entry holding only the common word ties the best stale one exactly; the newer wins.
@example(
    found=[(1, "rare tea", 0.2, 0, None), (2, "the", 1, 3 * DAY, None), (3, "the", 0, 0, None)],
    query="rare tea you the",
    now=3 * DAY,
    limit=1,
    mode="holders",
)
@given(
    found=items, query=queries, now=st.integers(0, 4 * DAY), limit=st.sampled_from([0, 1, 2, 3, 10, 100]), mode=modes
)
def test_rec_7_pruned_recall_is_the_naive_ranking(found, query, now, limit, mode):
    """REC-7: recall by every search (holders with MaxScore, the walk, the walk that gives up) equals the naive ranking's start, scores and ties included."""
    state = state_from(found)
    assert recalled(state, query, now, limit, mode) == reference(state, query, now, limit)


#: Entries most of which hold the common word, a few the rare ones: the shape where MaxScore stops reading.
skewed = st.lists(
    st.tuples(
        st.integers(0, 60),
        st.sampled_from(
            ["rare tea", "Rare TEA", "rare tea Čaj you", "rare", "tea", "caj you", "rare the", "", *["the"] * 6]
        ),
        st.sampled_from(IMPORTANCES),
        st.sampled_from([0, DAY, 2 * DAY, 3 * DAY - 1, 3 * DAY]),
        st.sampled_from([None, None, None, 1]),
    ),
    min_size=5,
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(
    found=skewed,
    query=st.sampled_from(["rare tea the", "caj you the the", "rare tea caj you the", "rare THE"]),
    limit=st.integers(0, 4),
    always=st.booleans(),
)
def test_rec_7_maxscore_over_the_holders_is_the_naive_ranking(found, query, limit, always):
    """REC-7: the holders' search, whose common word's list MaxScore often leaves unread, equals the naive ranking's start."""
    state = state_from(found)
    worth = (lambda unread, met: True) if always else lexical._worth_closing  # the cost rule, or a try at every list
    with mock.patch.object(lexical, "_worth_closing", worth):
        assert recalled(state, query, 3 * DAY, limit, "holders") == reference(state, query, 3 * DAY, limit)


@given(found=items, query=queries, now=st.integers(0, 4 * DAY), mode=modes)
def test_rec_7_a_context_ranks_its_matches_as_the_naive_ranking(found, query, now, mode):
    """REC-7, CTX-1: a context's query matches, by every search, come in the naive ranking's order."""
    state = state_from(found)
    budget = None if mode == "walk" else 0 if mode in ("holders", "bits") else mode
    with (
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: mode in ("holders", "bits")),
        mock.patch.object(search_module, "_walk_budget", lambda postings, top_band=0: budget),
        mock.patch.object(lexical, "_BIT_POSTINGS", 0 if mode == "bits" else 10**9),
    ):
        matched = search_module._matches(state, words(query), now, 10**6)
    expected = ranked(words(query), state.index.live_by_age(now), now, state.config.recency_window)
    assert [(value, entry.key) for value, entry in matched] == [(value, entry.key) for value, entry in expected]


def spied_reads(state: sm.MemoryState, query: str, now: int, limit: int) -> tuple[list[tuple[float, str]], list[int]]:
    """``recall`` by the holders' search, and how many lists each MaxScore search read of how many."""
    reads: list[int] = []
    real = maxscore.term_at_a_time

    def spy(lists, read, probe, closed):
        done = real(lists, read, probe, closed)
        reads.extend([done, lists])
        return done

    with mock.patch.object(lexical, "term_at_a_time", spy):
        return recalled(state, query, now, limit, "holders"), reads


def test_rec_7_the_common_word_is_not_read_once_it_cannot_matter():
    """REC-7: once the best few hold the rare words, the common word's list is only asked about them, and the result is unchanged."""
    rare = [(i, "rare tea", 1, 3 * DAY, None) for i in range(3)]
    common = [(10 + i, "the", 0.5, 3 * DAY, None) for i in range(20)]
    state = state_from(rare + common + [(40, "tea", 0.1, 0, None)])
    hits, reads = spied_reads(state, "rare tea the", 3 * DAY, 2)
    assert reads == [2, 3]  # "rare" and "tea" read, "the" only probed
    assert hits == reference(state, "rare tea the", 3 * DAY, 2)
    assert [key for _, key in hits] == ["k2", "k1"]


def test_rec_7_a_bound_equal_to_the_floor_does_not_close():
    """REC-7: an unread word's bound exactly equal to the k-th best floor keeps it essential: the fresh entry holding only it ties and wins."""
    # total 4 words; after the three rare lists the floor is k1's 2/4 * (0.5 + 0.2 / 2) = 0.3 (stale, no freshness),
    # and an entry holding only the common word can score 1/4 * 1.0 + 0.05 * 1.0 = 0.3 too: k2 does, newer.
    assert 2 / 4 * (0.5 + 0.2 / 2) == 1 / 4 * 1.0 + 0.05 * 1.0
    found = [
        (1, "rare tea", 0.2, 0, None),
        (2, "the", 1, 3 * DAY, None),
        (3, "you", 0, 0, None),
        (4, "the", 0, 0, None),
        (5, "the", 0, 0, None),
    ]
    state = state_from(found)
    hits, reads = spied_reads(state, "rare tea you the", 3 * DAY, 1)
    assert reads == [4, 4]  # every list read: the bound equals the floor, it is not below it
    assert hits == [(0.3, "k2")] == reference(state, "rare tea you the", 3 * DAY, 1)


def test_rec_7_a_bound_just_below_the_floor_closes():
    """REC-7: with the floor one importance step higher, the common word's bound is below it and its list is not read."""
    found = [
        (1, "rare tea", 0.3, 0, None),
        (2, "the", 1, 3 * DAY, None),
        (3, "you", 0, 0, None),
        (4, "the", 0, 0, None),
        (5, "the", 0, 0, None),
    ]
    state = state_from(found)
    hits, reads = spied_reads(state, "rare tea you the", 3 * DAY, 1)
    assert reads == [3, 4]
    assert hits == [(2 / 4 * (0.5 + 0.3 / 2), "k1")] == reference(state, "rare tea you the", 3 * DAY, 1)


def test_rec_7_a_candidate_whose_bound_equals_the_floor_is_kept():
    """REC-7: once closed, a candidate that reaches the floor exactly with every unread word is still asked about them; it ties and wins."""
    # total 6 words; k1 holds four rare ones (4/6 * (0.5 + 0.15 / 2), stale) and sets the floor; k2 holds one rare word
    # and the common one at importance 1, fresh: 2/6 * 1.0 + 0.05 * 1.0, exactly the floor, and newer.
    assert 4 / 6 * (0.5 + 0.15 / 2) == 2 / 6 * 1.0 + 0.05 * 1.0
    found = [
        (1, "rare tea you cafe", 0.15, 0, None),
        (2, "caj the", 1, 3 * DAY, None),
        (3, "the", 0, 0, None),
        (4, "the", 0, 0, None),
    ]
    state = state_from(found)
    query = "rare tea you cafe caj the"
    hits, reads = spied_reads(state, query, 3 * DAY, 1)
    assert reads == [5, 6]  # closed before the common word: 1/6 + 0.05 is below the floor
    assert hits == [(2 / 6 * 1.0 + 0.05 * 1.0, "k2")] == reference(state, query, 3 * DAY, 1)


def test_rec_7_expired_entries_set_no_floor():
    """REC-7, EXP-2: an expired candidate does not raise the floor, so the live entry holding only the common word is still found."""
    found = [
        (1, "rare tea", 1, 0, 1),  # expired at once: it would set a floor above every common-only entry
        (2, "the", 0.5, 3 * DAY, None),
        (3, "you", 0, 0, None),
        (4, "the", 0, 0, None),
        (5, "the", 0, 0, None),
    ]
    state = state_from(found)
    hits, _ = spied_reads(state, "rare tea you the", 3 * DAY, 1)
    assert hits == reference(state, "rare tea you the", 3 * DAY, 1)
    assert [key for _, key in hits] == ["k2"]


@pytest.mark.parametrize("limit", [0, 1, 5, 6, 50])
def test_rec_7_limits_zero_one_all_and_more(limit):
    """REC-7, REC-3: a limit of 0 finds nothing, and 1, exactly the matches and more than them give the naive ranking's start."""
    found = [(i, "the tea" if i % 2 else "the", 0.5, i * 1000, None) for i in range(5)] + [(9, "rare", 1, 0, None)]
    state = state_from(found)
    for mode in ("holders", "walk", 0, 3):
        hits = recalled(state, "the tea rare the", 10_000, limit, mode)
        assert hits == reference(state, "the tea rare the", 10_000, limit)
        assert len(hits) == min(limit, 6)


def test_rec_7_the_walk_gives_up_after_its_budget():
    """REC-7: the walk returns None once it has read more entries than its budget, and exactly its budget is still allowed."""
    found = [(i, "the", 0.5, i * 1000, None) for i in range(8)]
    state = state_from(found)
    index = state.index

    def walk(below):
        return index.by_importance_desc(10_000, below)

    query = words("the")
    args = (walk, query, query, 10_000, state.config.recency_window, 3)
    # Blocks of 3, 6: the walk reads 3, then 9 entries (8 exist); the bound stops nothing among equal importances.
    assert lexical.walked(*args, seq_is_age=True, give_up=7) is None
    assert lexical.walked(*args, seq_is_age=True, give_up=8) is not None
    assert lexical.walked(*args, seq_is_age=True, give_up=8) == lexical.best_matches(*args, seq_is_age=True)


def test_bm_7_an_entry_holding_only_the_common_term_can_still_win():
    """BM-7: the BM25 search reads the common term while its bound can beat the floor: a short entry holding only it outscores two long rare ones."""
    pytest.importorskip("snowballstemmer")
    from sentinel_memory.core import ranking

    filler = " ".join(f"w{i}" for i in range(20))
    texts = [f"zebra {filler}", f"zebra {filler}", "apple", *[f"apple {filler}"] * 2, *["plain"] * 5]
    state = sm.MemoryState(config=core.make_config(limit=100, ranking="bm25"))
    for i, text in enumerate(texts):
        state, _ = core.remember(state, f"k{i}", text, importance=0.5, now=1000 + i)
    live = state.index.live_by_age(2000)
    expected = ranking.naive(["appl", "zebra"], live, 2000, state.config.recency_window)[:2]
    hits = core.recall(state, "zebra apple", now=2000, limit=2)
    assert [(hit.score, hit.entry.key) for hit in hits] == [(value, entry.key) for value, entry in expected]
    assert hits[0].entry.key == "k2"  # the short entry holding only "apple"


@pytest.mark.parametrize(
    ("postings", "top_band", "budget"),
    [(8_192, 0, 0), (8_193, 0, 4_096), (10_000, 5_000, 5_000), (10_000, 5_001, 0)],
)
def test_rec_7_the_walk_goes_first_only_when_it_can_end(postings, top_band, budget):
    """REC-7: up to 8,192 postings the holders are searched; above, the walk reads half as many, unless more share the top importance."""
    assert search_module._walk_budget(postings, top_band=top_band) == budget


@pytest.mark.parametrize("importances", ["one", "many"])
def test_rec_7_a_memory_of_one_importance_is_searched_by_its_holders(importances):
    """REC-7: when more entries share the highest importance than the walk may read, recall does not walk; either way it is the naive ranking."""
    state = sm.MemoryState()
    for i in range(300):
        importance = 0.5 if importances == "one" else i / 300
        state, _ = core.remember(state, f"k{i}", f"the w{i % 50}", now=i, importance=importance)
    walks: list[int] = []
    real = search_module.walked

    def spied(*args, **kwargs):
        walks.append(1)
        return real(*args, **kwargs)

    with (
        mock.patch.object(search_module, "walked", spied),
        mock.patch.object(search_module, "_FEW_POSTINGS", 10),  # a large store's sizes, at a small one's cost
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: False),
    ):
        hits = core.recall(state, "the w7", now=300, limit=3)
    assert [(hit.score, hit.entry.key) for hit in hits] == reference(state, "the w7", 300, 3)
    assert len(walks) == (0 if importances == "one" else 1)
