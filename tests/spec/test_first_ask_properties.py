"""CTX-8, BM-8: how much of the ranking the fill asks for first, and ranking only some entries, change no context."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core import bm25, prompt, window
from sentinel_memory.core import ranking as ranking_module
from sentinel_memory.core.tokens import per_line

from .strategies import merging

DAY = 86_400_000
#: Common words most lines hold, rarer ones, and lines of very different lengths: the budget fills before the
#: end of the ranking, and the room left is offered to the short lines.
POOL = ["the", "the", "you", "refund", "refunds", "tea", "rare", "a" * 30, "b" * 60, "?"]

texts = st.lists(st.sampled_from(POOL), max_size=6).map(" ".join)
items = st.lists(
    st.tuples(
        st.integers(0, 80),  # the key: a repeated one replaces the entry
        texts,
        st.sampled_from([0, 0.1, 0.5, 0.9, 1]),
        st.integers(0, 3 * DAY),
        st.sampled_from([None, None, None, 1]),  # ttl: some entries are expired at ``now``
    ),
    min_size=20,
    max_size=50,
)
queries = st.sampled_from([None, "the", "refund you", "rare tea the", "nowhere"])


def state_of(found, ranking: str) -> sm.MemoryState:
    state = sm.MemoryState(config=sm.core.make_config(ranking=ranking))
    for key, text, importance, at, ttl in found:
        state, _ = sm.core.remember(state, f"k{key}", text, now=at, importance=importance, ttl=ttl)
    return state


@settings(max_examples=150, deadline=None)
@given(
    found=items,
    query=queries,
    budget=st.integers(0, 60),
    share=st.integers(2, 12),
    ranking=st.sampled_from(["words", "bm25"]),
    counted=st.booleans(),
    must_keep=st.sampled_from([None, None, 0.9]),
    waiting=st.sampled_from([None, 0, 10**6]),
)
def test_ctx_8_any_first_ask_fills_as_the_reference(found, query, budget, share, ranking, counted, must_keep, waiting):
    """CTX-8, CTX-12: asking any share of the ranking first, then the rest or the short lines, gives the reference fill."""
    pytest.importorskip("snowballstemmer")
    state = state_of(found, ranking)
    now = 3 * DAY
    args = dict(now=now, token_budget=budget, query=query, must_keep=must_keep)
    calls: list[str] = []
    real = window.fill

    def spied(count, oldest_first, rank, *, rank_among, **options):
        def counted_rank(at_least):
            calls.append("rank")
            return rank(at_least)

        def counted_among(some):
            calls.append("among")
            return rank_among(some)

        return real(count, oldest_first, counted_rank, rank_among=counted_among, **options)

    tokenizer = per_line(merging) if counted else None
    with (
        mock.patch.object(prompt, "_FIRST_WHOLE_UP_TO", 0),
        mock.patch.object(prompt, "_FIRST_SHARE", share),
        mock.patch.object(window, "fill", spied),
        # How many short lines wait decides between widening and ranking them; forced either way, or as it is.
        mock.patch.object(
            sm.core.index.Index,
            "units_count_within",
            sm.core.index.Index.units_count_within if waiting is None else lambda self, units: waiting,
        ),
    ):
        fast = sm.core.context(state, tokenizer=tokenizer, **args)
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert sm.core.context(state, tokenizer=per_line(merging) if counted else None, **args) == fast
    event("widened" if calls.count("rank") > 1 else "one ask")
    event("short lines ranked" if "among" in calls else "no short lines")


@pytest.mark.parametrize("waiting", ["few", "many"])
def test_ctx_8_the_walk_goes_on_or_offers_the_room_to_the_short_lines(waiting):
    """CTX-8: when the first ask leaves room, the fill either widens the ranking or ranks the short lines, and both give the reference."""
    state = sm.MemoryState()
    for i in range(200):
        # Lines of one length: the first third of the most that fit leaves two thirds of the budget.
        state, _ = sm.core.remember(state, f"k{i:03}", "the x", now=i, importance=(i % 10) / 10)
    ranks: list[int | None] = []
    real = window.fill

    among: list[int] = []

    def spied(count, oldest_first, rank, *, rank_among, **options):
        def counted_rank(at_least):
            ranks.append(at_least)
            return rank(at_least)

        def counted_among(some):
            among.append(len(some))
            return rank_among(some)

        return real(count, oldest_first, counted_rank, rank_among=counted_among, **options)

    small = (lambda units: 0) if waiting == "few" else (lambda units: 10**6)
    with (
        mock.patch.object(window, "fill", spied),
        mock.patch.object(prompt, "_FIRST_WHOLE_UP_TO", 0),
        mock.patch.object(sm.core.index.Index, "units_count_within", lambda self, units: small(units)),
    ):
        fast = sm.core.context(state, now=300, token_budget=300, query="the")
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert sm.core.context(state, now=300, token_budget=300, query="the") == fast
    assert len(fast.entries) == 300 * 4 // len("k000: the x\n")  # the budget is full
    if waiting == "few":
        assert ranks == [ranks[0]] and among and among[0] > 0  # the short lines ranked among themselves
    else:
        most = ranks[0] * prompt._FIRST_SHARE
        assert len(ranks) == 2 and most <= ranks[1] < most + prompt._FIRST_SHARE and not among


@pytest.mark.parametrize(("most", "first"), [(None, None), (0, 0), (64, 64), (65, 21), (667, 222)])
def test_ctx_8_the_first_ask(most, first):
    """CTX-8: up to 64 lines that can fit are all asked for; above, a third; no bound asks for the whole ranking."""
    assert prompt._first_ask(most) == first


bm25_items = st.lists(
    st.tuples(
        st.integers(0, 30),
        texts,
        st.sampled_from([0, 0.5, 1]),
        st.integers(0, 3).map(lambda minutes: minutes * 60_000),
        st.sampled_from([None, None, 60_000]),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(
    found=bm25_items,
    query=st.sampled_from(["the", "refund you", "rare tea the", "nowhere", "refunds tea"]),
    picks=st.lists(st.integers(0, 60), max_size=20),
    limit=st.integers(1, 40),
    in_context=st.booleans(),
    few=st.booleans(),
)
def test_bm_8_ranking_some_entries_scores_as_ranking_every_entry(found, query, picks, limit, in_context, few):
    """BM-5, BM-8: ranking ``among`` some live entries gives the naive ranking's scores and order, neighbours of all live entries."""
    pytest.importorskip("snowballstemmer")
    state, now = sm.MemoryState(config=sm.core.make_config(ranking="bm25")), 0
    for i, (key, text, importance, step, ttl) in enumerate(found):
        now += step
        state, _ = sm.core.remember(state, f"k{key}", text, now=now, importance=importance, ttl=ttl)
        if i == len(found) // 2:
            state.index.postings()  # kept current by the writes after: updates remove entries from it
    now += 120_000
    live = state.index.live_by_age(now)
    among = list({live[i % len(live)].seq: live[i % len(live)] for i in picks}.values()) if live else []
    with mock.patch.object(ranking_module, "_FEW", 64 if few else 0):  # neighbours one by one, or all at once
        got = ranking_module.matches(state, query, now, limit, among=among, in_context=in_context)
    expected = ranking_module.naive(
        bm25.query_terms(query), live, now, state.config.recency_window, among=among, neighbours=in_context
    )[:limit]
    assert [(value, entry.seq) for value, entry in got] == [(value, entry.seq) for value, entry in expected]


#: A tokenizer whose count of some lines is not a whole number: while one is stored, the fill takes its pass.
def sometimes_half(text: str) -> int | float:
    return len(text) / 2 if "rare" in text else merging(text)


def twice(text: str) -> int:
    """Counts every character twice: counts that differ from the others for every line."""
    return 2 * len(text)


steps = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.integers(0, 30), texts, st.sampled_from([None, None, 1, 60_000])),
        st.tuples(st.just("forget"), st.integers(0, 30)),
        st.tuples(st.just("turn"), texts),
        st.tuples(st.just("many"), st.integers(1, 80)),  # more changes than are carried: counted afresh
        *[
            st.tuples(
                st.just("context"), st.integers(0, 80), queries, st.sampled_from(["kept", "kept", "other", "clear"])
            )
        ]
        * 3,
    ),
    min_size=4,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(steps=steps, odd=st.booleans())
def test_ctx_12_counts_kept_with_the_index_fill_as_the_reference(steps, odd):
    """CTX-12: line counts kept with the index and carried by each change (removed, added, many, expired, a cleared counter) fill as the reference."""
    # A tokenizer object that changes how it counts (``add_tokens``, say), then clears its counter.
    counting = [sometimes_half if odd else merging]
    kept = per_line(lambda text: counting[0](text))
    other = per_line(merging)
    state, now = sm.MemoryState(config=sm.core.make_config(limit=60)), 0
    read: list[bool] = []
    real = sm.core.index.Index.line_counts

    def spied(self, counter, now):
        found = real(self, counter, now)
        read.append(found is not None)
        return found

    for i in range(12):  # a memory to start from, with short and long lines
        state, _ = sm.core.remember(state, f"s{i}", "the " * (i % 5) + "tea", now=now)
    for step in [("context", 30, None, "kept"), *steps]:  # the first ask of the line of indexes takes a pass
        now += 30_000
        if step[0] == "remember":
            state, _ = sm.core.remember(state, f"k{step[1]}", step[2], now=now, ttl=step[3])
        elif step[0] == "forget":
            state, _ = sm.core.forget(state, f"k{step[1]}", now=now)
        elif step[0] == "turn":
            state, _, _ = sm.core.add_turn(state, "user", step[1] or "hi", now=now)
        elif step[0] == "many":
            for i in range(step[1]):
                state, _ = sm.core.remember(state, f"m{i % 40}", f"the {'x' * (i % 9)}", now=now)
        else:
            _, budget, query, which = step
            if which == "clear":
                counting[0] = twice if counting[0] is not twice else merging
                kept.clear()  # the counts made before are of an older generation: never used again
            counter = other if which == "other" else kept
            with mock.patch.object(sm.core.index.Index, "line_counts", spied):
                fast = sm.core.context(state, now=now, token_budget=budget, query=query, tokenizer=counter)
            fresh = per_line(counting[0] if counter is kept else merging)
            with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
                assert sm.core.context(state, now=now, token_budget=budget, query=query, tokenizer=fresh) == fast
    event(f"fills that read kept counts: {min(sum(read), 5)}")


@pytest.mark.parametrize("extra", [0, 1])
def test_ctx_8_the_walk_goes_on_only_past_the_widening_ratio(extra):
    """CTX-8: short lines numbering exactly _WIDEN_RATIO times what widening adds are ranked among themselves; one more widens."""
    state = sm.MemoryState()
    for i in range(200):
        state, _ = sm.core.remember(state, f"k{i:03}", "the x", now=i, importance=(i % 10) / 10)
    mosts: list[int | None] = []
    ranks: list[int | None] = []
    real_first, real_fill = prompt._first_ask, window.fill

    def first(most):
        mosts.append(most)
        return real_first(most)

    def spied(count, oldest_first, rank, **options):
        def counted_rank(at_least):
            ranks.append(at_least)
            return rank(at_least)

        return real_fill(count, oldest_first, counted_rank, **options)

    def waiting(self, units):
        (most,), (asked, *_) = mosts, ranks
        return prompt._WIDEN_RATIO * (most - asked) + extra

    with (
        mock.patch.object(prompt, "_first_ask", first),
        mock.patch.object(prompt, "_FIRST_WHOLE_UP_TO", 0),
        mock.patch.object(window, "fill", spied),
        mock.patch.object(sm.core.index.Index, "units_count_within", waiting),
    ):
        fast = sm.core.context(state, now=300, token_budget=300, query="the")
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert sm.core.context(state, now=300, token_budget=300, query="the") == fast
    assert len(ranks) == 1 + extra
