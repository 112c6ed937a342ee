"""The context of an empty selection counts as the tokenizer counts the empty text, on the fast fill as on the naive (CTX-4, CTX-8)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core.tokens import additive
from support import T0


def offset_tokenizer(offset: int):
    """Counts characters plus ``offset``, and declares itself additive, which is false unless ``offset`` is 0."""
    return additive(lambda text: len(text) + offset)


def test_ctx_4_nothing_fits_and_the_empty_text_counts_what_the_tokenizer_says():
    """CTX-4, CTX-8: no line fits, so the text is empty and its tokens are the tokenizer's count of "", here 3, not 0."""
    mem = sm.create_memory(clock=lambda: T0)
    mem.remember("user:name", "Jakub")
    ctx = mem.get_context(token_budget=5, tokenizer=offset_tokenizer(3))
    assert (ctx.text, ctx.entries, ctx.tokens, ctx.omitted) == ("", (), 3, 1)


def test_ctx_4_an_empty_memory_counts_the_empty_text_too():
    """CTX-4, CTX-6: with no entries at all the result is ("", (), tokenizer(""), 0)."""
    ctx = sm.create_memory(clock=lambda: T0).get_context(token_budget=2, tokenizer=offset_tokenizer(2))
    assert (ctx.text, ctx.entries, ctx.tokens, ctx.omitted) == ("", (), 2, 0)


@given(
    texts=st.lists(st.text(alphabet="ab ", min_size=0, max_size=12), max_size=6),
    offset=st.integers(0, 4),
    extra=st.integers(0, 30),
    query=st.sampled_from([None, "a", "b b"]),
    separator=st.sampled_from(["\n", "", " | "]),
)
def test_ctx_4_tokens_are_the_count_of_the_text_whatever_is_chosen(texts, offset, extra, query, separator):
    """CTX-4, CTX-8: for a declared tokenizer, true or not, tokens == tokenizer(text), empty selection included; a true declaration fills as the naive fill."""
    tokenizer = offset_tokenizer(offset)
    mem = sm.create_memory(clock=lambda: T0)
    for i, text in enumerate(texts):
        mem.remember(f"k{i}", text, importance=(i % 3) / 3)
    budget = offset + extra
    fast = mem.get_context(token_budget=budget, query=query, tokenizer=tokenizer, separator=separator)
    naive = mem.get_context(
        token_budget=budget, query=query, tokenizer=lambda text: len(text) + offset, separator=separator
    )
    assert fast.tokens == tokenizer(fast.text) <= budget
    assert len(fast.entries) + fast.omitted == len(texts)
    if offset == 0:  # a false declaration promises only the exact count (CTX-8)
        assert (fast.text, [e.key for e in fast.entries], fast.tokens) == (
            naive.text,
            [e.key for e in naive.entries],
            naive.tokens,
        )
