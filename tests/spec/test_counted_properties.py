"""The counted fill (CTX-12 .. CTX-14) against its readable reference, the naive fill and fresh counts."""

from __future__ import annotations

from unittest import mock

from hypothesis import event, example, given
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import prompt, window
from sentinel_memory.core.tokens import LineCounter, per_line

from .strategies import merging, odd_tokenizer, vowel_count

#: Chat-like texts: they end in punctuation, a line feed or a word, so joins merge, cost more, or neither.
texts = st.builds(
    lambda words, end: words + end,
    st.text("ab ", max_size=12),
    st.sampled_from(["", ".", "?", "!", "\n", "?\n", " "]),
)
entries = st.lists(
    st.tuples(
        st.sampled_from("abcdefghij"),
        texts,
        st.sampled_from([0, 0.1, 0.3, 0.5, 0.9, 1]),
        st.integers(0, 3 * 86_400_000),
    ),
    max_size=12,
)
separators = st.sampled_from(["\n", " ", " | ", "", "\n\n"])
queries = st.sampled_from([None, "a", "ab b", "?"])
#: A tokenizer counted line by line that keeps its counts between examples, as a memory's does.
KEPT = per_line(merging)


def state_of(items) -> sm.MemoryState:
    state = sm.MemoryState()
    for key, text, importance, at in items:
        state, _ = core.remember(state, key, text, now=at, importance=importance)
    return state


def the_reference(state, **args) -> sm.Context:
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        return core.context(state, **args)


# Three lines that fit by their counts but not joined: "x: a\n y: b\n z: c" counts 4 more than its parts.
@example(items=[("x", "a\n", 0.9, 0), ("y", "b\n", 0.5, 0), ("z", "c", 0.1, 0)], budget=15, separator=" ", query=None)
@given(items=entries, budget=st.one_of(st.integers(0, 60), st.floats(0, 60)), separator=separators, query=queries)
def test_ctx_12_the_fast_counted_fill_equals_the_reference(items, budget, separator, query):
    """CTX-12, CTX-4: the fast fill of a tokenizer counted line by line gives fill_counted's result, within budget, exactly counted."""
    state = state_of(items)
    now = 3 * 86_400_000
    args = dict(now=now, token_budget=budget, separator=separator, query=query)
    whole_texts: list[str] = []

    class Spy(LineCounter):
        def __call__(self, text: str) -> int | float:  # whole texts; lines go through measure_many
            whole_texts.append(text)
            return super().__call__(text)

    fast = core.context(state, tokenizer=KEPT, **args)
    assert fast == the_reference(state, tokenizer=per_line(merging), **args)
    assert fast.tokens == merging(fast.text) <= budget
    # How often the joins merge and the repair runs: --hypothesis-show-statistics shows the shares.
    assert core.context(state, tokenizer=Spy(merging), **args) == fast
    lines = [merging(sm.default_format(e)) for e in fast.entries]
    summed = sum(lines) + merging(separator) * (len(lines) - 1)
    event("repaired" if len(whole_texts) > 2 else "merged" if lines and fast.tokens < summed else "as summed")


@given(items=entries, budget=st.integers(0, 60), separator=separators, query=queries)
def test_ctx_12_an_additive_count_per_line_is_the_naive_fill(items, budget, separator, query):
    """CTX-12, CTX-13, CTX-2: an additive count taken line by line picks what a plain function (the naive fill) picks."""
    state = state_of(items)
    args = dict(now=3 * 86_400_000, token_budget=budget, separator=separator, query=query)
    counted = core.context(state, tokenizer=per_line(vowel_count), **args)
    with mock.patch.object(prompt, "fill_counted", side_effect=AssertionError("a plain function is filled naively")):
        naive = core.context(state, tokenizer=vowel_count, **args)  # a plain function takes the naive fill (CTX-13)
    assert counted == naive


@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("remember"), st.sampled_from("abcde"), texts, st.sampled_from([None, 1, 5_000])),
            st.tuples(st.just("forget"), st.sampled_from("abcde")),
            st.tuples(st.just("wait"), st.integers(1, 3_000)),
        ),
        max_size=15,
    ),
    budget=st.integers(0, 40),
    separator=separators,
    fmt=st.sampled_from([None, lambda e: e.text, lambda e: f"[{e.key}] {e.text}"]),
)
def test_ctx_14_remembered_counts_are_never_stale(steps, budget, separator, fmt):
    """CTX-14: one counter kept through remember, forget, expiry and changed formats gives what fresh counts give."""
    kept = LineCounter(odd_tokenizer, max_lines=8)  # small, so forgetting half happens too
    state, now = sm.MemoryState(), 0
    for step in steps:
        if step[0] == "remember":
            state, _ = core.remember(state, step[1], step[2], now=now, ttl=step[3])
        elif step[0] == "forget":
            state, _ = core.forget(state, step[1], now=now)
        else:
            now += step[1]
        args = dict(now=now, token_budget=budget, separator=separator, format=fmt)
        assert core.context(state, tokenizer=kept, **args) == core.context(
            state, tokenizer=per_line(odd_tokenizer), **args
        )
        assert kept.cached <= 8
