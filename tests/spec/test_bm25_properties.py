"""Property tests for the BM25 ranking: the pruned search against scoring every entry, terms, ln, the scorer seam."""

from __future__ import annotations

import math
import sys
from unittest import mock

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sentinel_memory import core
from sentinel_memory.core import bm25
from sentinel_memory.core import ranking as ranking_module
from sentinel_memory.core.lexical import word_sequence, words
from sentinel_memory.core.prompt import fill_naive, render_default
from sentinel_memory.core.ranking import matches
from sentinel_memory.core.retention import by_retention
from sentinel_memory.core.state import MemoryState
from sentinel_memory.core.tokens import estimate_tokens

pytest.importorskip("snowballstemmer")

#: A small vocabulary, so that texts share words and scores tie, with stop words and inflections.
VOCAB = ["the", "is", "my", "refund", "refunds", "support", "group", "lives", "live", "caroline", "paint", "a", "b"]
texts = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=6).map(" ".join)
entries = st.lists(
    st.tuples(
        texts,
        st.sampled_from([0.0, 0.5, 1.0]),
        st.integers(min_value=0, max_value=3),  # minutes between writes (0: same millisecond)
        st.sampled_from([None, None, 60_000, 600_000]),  # ttl
    ),
    min_size=0,
    max_size=30,
)
queries = st.lists(st.sampled_from(VOCAB + ["nothing"]), min_size=0, max_size=4).map(" ".join)


def build(items, big: bool):
    config = core.make_config(limit=100_000, ranking="bm25")
    state = MemoryState(config=config)
    now = 1_000_000
    for i, (text, importance, step, ttl) in enumerate(items):
        if big and i == len(items) // 2:
            state.index.postings()  # worked out now, then kept current by the writes after: updates remove entries
        now += step * 60_000
        # Some keys repeat, so that an update moves an entry in age and in the postings.
        state, _ = core.remember(state, f"k{i % 7}", text, importance=importance, ttl=ttl, now=now)
    if big:
        state, _ = core.remember(state, "late", "refund support", now=now + 1)
    return state, now + 120_000


def naive(state, query, now, limit, in_context):
    live = state.index.live_by_age(now)
    found = ranking_module.naive(bm25.query_terms(query), live, now, state.config.recency_window, neighbours=in_context)
    return found[:limit]


@settings(max_examples=300, deadline=None)
@given(entries, queries, st.integers(min_value=1, max_value=40), st.booleans(), st.booleans(), st.booleans())
def test_bm_7_pruned_search_equals_scoring_every_entry(items, query, limit, in_context, big, walk):
    """BM-7, BM-8: the pruned search returns exactly the first ``limit`` of the naive ranking, same scores, same order."""
    state, now = build(items, big)
    with mock.patch.object(ranking_module, "_FEW", 0 if walk else 64):  # all hits at once, or one by one
        pruned = matches(state, query, now, limit, in_context=in_context)
    expected = naive(state, query, now, limit, in_context)
    assert [(value, entry.seq) for value, entry in pruned] == [(value, entry.seq) for value, entry in expected]


@settings(max_examples=200, deadline=None)
@given(entries, queries, st.integers(min_value=0, max_value=12))
def test_bm_5_recall_returns_the_best_matches_with_their_scores(items, query, limit):
    """BM-5, BM-6: recall's hits are the naive ranking's first ``limit``, each with its BM25 score, and all score > 0."""
    state, now = build(items, False)
    hits = core.recall(state, query, now=now, limit=limit)
    expected = naive(state, query, now, limit, False)
    assert [(hit.score, hit.entry.seq) for hit in hits] == [(value, entry.seq) for value, entry in expected]
    assert all(hit.score > 0 for hit in hits)


@settings(max_examples=200, deadline=None)
@given(entries, queries, st.integers(min_value=0, max_value=400))
def test_bm_8_context_takes_matches_and_neighbours_first(items, query, budget):
    """BM-6, BM-8: a queried context fills from the naive ranking with neighbours, then the rest by retention."""
    state, now = build(items, False)
    chosen = core.context(state, now=now, token_budget=budget, query=query).entries
    ranked = [entry for _, entry in naive(state, query, now, 10_000, True)]
    taken = {entry.seq for entry in ranked}
    rest = by_retention(
        [e for e in state.index.live_by_age(now) if e.seq not in taken], now, state.config.recency_window
    )
    _, expected, _ = fill_naive(
        ranked + rest, token_budget=budget, tokenizer=estimate_tokens, render=render_default, separator="\n"
    )
    assert [e.seq for e in chosen] == [e.seq for e in expected]


@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
@example(1.0)
@example(2.0)
@example(0.7071067811865476)
def test_bm_4_ln_is_within_two_ulps(x):
    """BM-4: the pinned ln is within 2 ulp of the platform's log, and exactly 0 at 1."""
    value = bm25.ln(x)
    if x == 1.0:
        assert value == 0.0
    assert abs(value - math.log(x)) <= 2 * math.ulp(math.log(x)) + sys.float_info.min


@given(st.integers(min_value=1, max_value=10**6), st.data())
def test_bm_4_idf_is_positive_and_falls_as_more_hold_the_term(count, data):
    """BM-4: idf is > 0 for every df in 1..N and never rises as df grows."""
    df = data.draw(st.integers(min_value=1, max_value=count))
    assert bm25.idf(count, df) > 0
    if df < count:
        assert bm25.idf(count, df + 1) <= bm25.idf(count, df)


@given(st.text(max_size=40))
def test_bm_1_terms_are_stems_of_words_without_stop_words(text):
    """BM-1, BM-2, BM-3: every term is the stem of a REC-1 word of the text that is not a stop word."""
    found = bm25.terms(text)
    kept = [word for word in words(text) if word not in bm25.STOP_WORDS]
    assert set(found) == {bm25.stem(word) for word in kept}
    assert len(found) == sum(word not in bm25.STOP_WORDS for word in word_sequence(text))


@settings(max_examples=100, deadline=None)
@given(entries, queries, st.lists(st.integers(min_value=-2, max_value=3), max_size=40))
def test_bm_9_a_scorer_ranks_its_positive_scores(items, query, numbers):
    """BM-9: a scorer's entries with a score > 0 come back best first, ties by retention then newer; a wordless query, none."""
    state, now = build(items, False)
    live = state.index.live_by_age(now)
    values = [numbers[i % len(numbers)] if numbers else 0 for i in range(len(live))]
    state = attrs.evolve(state, config=core.make_config(limit=100_000, ranking=lambda q, es: values))
    hits = core.recall(state, query, now=now, limit=100)
    scored = [(float(v), e) for v, e in zip(values, live, strict=True) if v > 0 and words(query)]
    expected = ranking_module.best_first(scored, now, state.config.recency_window)
    assert [(h.score, h.entry.seq) for h in hits] == [(v, e.seq) for v, e in expected]


def _scorer(query, entries):
    return [1.0] * len(entries)


SAVED = st.sampled_from(["words", "bm25", "function", "bm26", 7, None])


@settings(max_examples=150, deadline=None)
@given(entries, st.sampled_from(["words", "bm25", _scorer]), SAVED, st.booleans())
def test_bm_10_bm_11_a_load_takes_or_keeps_the_ranking_and_a_save_names_it(items, ranking, saved, adopt):
    """BM-10, BM-11: a document names the ranking; a load adopts a name it can bring back, else words, or keeps a given one."""
    state, now = build(items, False)
    state = attrs.evolve(state, config=attrs.evolve(state.config, ranking=ranking))
    document = core.to_document(state)
    name = ranking if isinstance(ranking, str) else "function"
    assert document.get("ranking", "words") == name and ("ranking" in document) == (name != "words")
    assert core.stats(state, now=now)["ranking"] == name
    if saved is not None:
        document["ranking"] = saved
    loaded, _, _ = core.from_document(MemoryState(config=state.config), document, now=now, adopt=adopt)
    stored = document.get("ranking", "words")
    expected = (stored if stored in ("words", "bm25") else "words") if adopt else ranking
    assert loaded.config.ranking == expected
    again = core.to_document(loaded)
    assert again.get("ranking", "words") == core.stats(loaded, now=now)["ranking"]
    assert again["entries"] == document["entries"] and again["working"] == document["working"]


#: A memory's life: writes (some keys repeat, so updates move entries), forgets, the clock moving, and searches.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.integers(0, 9), texts, st.sampled_from([None, None, 60_000])),
        st.tuples(st.just("forget"), st.integers(0, 9)),
        st.tuples(st.just("wait"), st.integers(1, 3)),
        st.tuples(st.just("search"), queries, st.integers(1, 12), st.booleans(), st.integers(0, 40)),
    ),
    max_size=40,
)


def _fresh_shapes(postings, term):
    """A term's holders by ``(tf, length)``, worked out from its list alone: what kept shapes must equal."""
    grouped = {}
    for seq in postings.lists.get(term, {}):
        counts, length = postings.lists[term][seq].bm25_terms
        grouped.setdefault((counts[term], length), set()).add(seq)
    return grouped


@settings(max_examples=200, deadline=None)
@given(steps, st.integers(min_value=6, max_value=40))
def test_bm_7_kept_shapes_follow_every_change_and_never_reach_another_state(plan, limit):
    """BM-7: the shapes a search keeps are carried through writes, forgets and evictions; each state, old or new, ranks as the naive ranking."""
    state = MemoryState(config=core.make_config(limit=limit, ranking="bm25"))
    now = 1_000_000
    seen = [state]
    for step in plan:
        if step[0] == "remember":
            state, _ = core.remember(state, f"k{step[1]}", step[2], ttl=step[3], now=now)
        elif step[0] == "forget":
            state, _ = core.forget(state, f"k{step[1]}", now=now)
        elif step[0] == "wait":
            now += step[1] * 60_000
        else:
            _, query, top, in_context, back = step
            # A state from before (its shapes must be its own) and the newest one, each against the naive ranking.
            for searched in (seen[-1 - back % len(seen)], state):
                pruned = matches(searched, query, now, top, in_context=in_context)
                expected = naive(searched, query, now, top, in_context)
                assert [(v, e.seq) for v, e in pruned] == [(v, e.seq) for v, e in expected]
                postings = searched.index.postings()
                for term, shapes in postings._shapes.items():
                    assert {shape: set(seqs) for shape, seqs in shapes.items()} == _fresh_shapes(postings, term)
                    assert all(len(set(seqs)) == len(seqs) for seqs in shapes.values())
                    assert shapes  # a term none holds any more keeps nothing
        seen.append(state)
