"""Prompt context: ranking, greedy fill, rendering, budget checks (CTX-*)."""

from __future__ import annotations

import math
import random
from unittest import mock

import pytest
from spec.strategies import TOKENIZERS as MACHINE_TOKENIZERS

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import prompt, window
from sentinel_memory.core import search as search_module
from sentinel_memory.core.lexical import words
from sentinel_memory.core.tokens import additive


def word_count(text: str) -> int:
    return len(text.split())


def odd_tokenizer(text: str) -> int:
    """Deterministic but not additive: vowels count 1, a newline 3, the rest 1 per 3 characters."""
    vowels = sum(text.count(v) for v in "aeiou")
    return vowels + 3 * text.count("\n") + len(text) // 3


TOKENIZERS = [sm.estimate_tokens, word_count, odd_tokenizer]


def test_ctx_1_query_matches_come_first(mem):
    """CTX-1: an entry sharing a query word is ranked before more important ones."""
    mem.remember("vital", "x" * 40, importance=1.0)
    mem.remember("order", "refund pending", importance=0.1)
    ctx = mem.get_context(token_budget=estimate("order: refund pending"), query="refund")
    assert [e.key for e in ctx.entries] == ["order"]


def estimate(text):
    return sm.estimate_tokens(text)


def test_ctx_1_without_query_words_rank_by_retention(mem):
    """CTX-1: with no query words, the more important entry wins the only slot."""
    mem.remember("a", "aaaa", importance=0.2)
    mem.remember("b", "bbbb", importance=0.9)
    for query in (None, "", "?!"):
        assert [e.key for e in mem.get_context(token_budget=2, query=query).entries] == ["b"]


def test_ctx_1_retention_tie_goes_to_newer(mem):
    """CTX-1, ENT-6: equal retention picks the newer entry."""
    mem.remember("a", "aaaa")
    mem.remember("b", "bbbb")
    assert [e.key for e in mem.get_context(token_budget=2).entries] == ["b"]


def test_ctx_2_skips_a_big_entry_and_fills_with_small(mem):
    """CTX-2: a candidate that does not fit is skipped; smaller ones further down still fit."""
    mem.remember("big", "x" * 400, importance=1.0)
    mem.remember("s1", "tiny", importance=0.2)
    mem.remember("s2", "tiny", importance=0.1)
    ctx = mem.get_context(token_budget=10)
    assert [e.key for e in ctx.entries] == ["s1", "s2"]
    assert ctx.omitted == 1


def test_ctx_3_renders_oldest_first(mem, clock):
    """CTX-3: the text lists memories in the order they happened, whatever their rank."""
    mem.remember("first", "1", importance=0.1)
    clock.advance(1)
    mem.remember("second", "2", importance=0.9)
    clock.advance(1)
    mem.remember("third", "3", importance=0.5)
    ctx = mem.get_context(token_budget=100)
    assert ctx.text == "first: 1\nsecond: 2\nthird: 3"


def test_ctx_3_format_and_separator_count_in_the_budget(mem):
    """CTX-3, CTX-4: a custom format and separator are part of the counted text."""
    mem.remember("a", "1")
    mem.remember("b", "2")
    ctx = mem.get_context(token_budget=100, format=lambda e: f"- {e.key}={e.data}", separator=" | ")
    assert ctx.text == "- a=1 | - b=2"
    assert ctx.tokens == sm.estimate_tokens("- a=1 | - b=2")
    # Both lines with the separator are 13 characters (4 tokens); one line is 2.
    tight = mem.get_context(token_budget=3, format=lambda e: f"- {e.key}={e.data}", separator=" | ")
    assert (tight.text, tight.tokens) == ("- b=2", 2)


def test_ctx_3_format_gets_an_entry_and_must_return_str(mem):
    """CTX-3: format receives an Entry copy, and a non-str result raises TypeError."""
    mem.remember("k", {"a": 1})
    seen = []

    def spy(entry):
        seen.append(entry)
        entry.data["a"] = 99  # mutating the copy changes nothing
        return "line"

    mem.get_context(token_budget=10, format=spy)
    assert isinstance(seen[0], sm.Entry) and mem.get("k") == {"a": 1}
    with pytest.raises(TypeError):
        mem.get_context(token_budget=10, format=lambda e: 42)


def test_ctx_4_tokens_is_the_count_of_the_text(mem):
    """CTX-4: tokens is the tokenizer's count of the returned text, not a sum of parts."""
    mem.remember("a", "one two")
    mem.remember("b", "three")
    joined_count = lambda text: len(text.replace("\n", " ").split())
    ctx = mem.get_context(token_budget=100, tokenizer=joined_count)
    assert ctx.tokens == joined_count(ctx.text) == 5


@pytest.mark.parametrize("budget", [-1, math.nan, math.inf, "30", None, True])
def test_ctx_5_invalid_budget_is_a_value_error(mem, budget):
    """CTX-5: a token budget that is not a finite number >= 0 raises ValueError."""
    with pytest.raises(ValueError):
        mem.get_context(token_budget=budget)


@pytest.mark.parametrize("result", [math.nan, -1, "3", None, True, math.inf])
def test_ctx_5_bad_tokenizer_result_is_a_type_error(mem, result):
    """CTX-5: a tokenizer returning NaN, a negative, a bool or a non-number raises TypeError."""
    mem.remember("k", "v")
    with pytest.raises(TypeError):
        mem.get_context(token_budget=10, tokenizer=lambda text: result)


def test_ctx_5_zero_budget_gives_empty_context(mem):
    """CTX-5, CTX-6: budget 0 with the estimator gives an empty text and omits everything."""
    mem.remember("k", "v")
    assert mem.get_context(token_budget=0) == sm.Context(text="", entries=(), tokens=0, omitted=1)


def test_ctx_5_empty_text_over_budget_is_a_value_error(mem):
    """CTX-5: a tokenizer that counts the empty text over the budget raises ValueError."""
    with pytest.raises(ValueError):
        mem.get_context(token_budget=2, tokenizer=lambda text: 3 + len(text))


def test_ctx_6_entries_plus_omitted_is_size(mem, clock):
    """CTX-6: entries are copies in render order and entries + omitted equals the live size."""
    for i in range(6):
        mem.remember(f"k{i}", "v" * (i * 7), ttl=10 if i == 0 else None)
    clock.advance(10)
    ctx = mem.get_context(token_budget=12)
    assert len(ctx.entries) + ctx.omitted == mem.size() == 5
    orders = [e.order for e in ctx.entries]
    assert orders == sorted(orders)


def test_ctx_7_per_call_tokenizer_wins(make):
    """CTX-7: a per-call tokenizer overrides the one from create_memory."""
    mem = make(tokenizer=lambda text: 1000 if text else 0)
    mem.remember("k", "v")
    assert mem.get_context(token_budget=10).entries == ()
    assert len(mem.get_context(token_budget=10, tokenizer=word_count).entries) == 1


def naive_fill(state, now, budget, query, tokenizer, separator="\n"):
    """An independent, obviously-correct fill to compare with: rank, then try each candidate."""
    live = [e for e in state.entries.values() if e.expires_at is None or now < e.expires_at]
    qwords = words(query) if query else frozenset()
    window = state.config.recency_window

    def fresh(e):
        return max(0, 1 - max(0, now - e.updated_at) / window)

    def rscore(e):
        rel = len(qwords & e.words) / len(qwords)
        return rel * (0.5 + e.importance / 2) + 0.05 * fresh(e)

    matched = [e for e in live if qwords and qwords & e.words]
    rest = [e for e in live if e not in matched]
    ranking = sorted(matched, key=lambda e: (rscore(e), e.order), reverse=True) + sorted(
        rest, key=lambda e: (e.importance + 0.1 * fresh(e), e.order), reverse=True
    )
    chosen = []
    for candidate in ranking:
        trial = sorted(chosen + [candidate], key=lambda e: e.order)
        if tokenizer(separator.join(f"{e.key}: {e.text}" for e in trial)) <= budget:
            chosen = trial
    return [e.key for e in chosen]


VOCABULARY = "refund order status cart peanut allergy name weather prague czech tool result".split()


def random_state(rng: random.Random):
    state = sm.MemoryState(config=sm.Config(limit=rng.choice([5, 50, 1000])))
    now = 0
    discrete, mass_expiry = rng.random() < 0.5, rng.random() < 0.3
    for _ in range(rng.randint(0, 60)):
        now += rng.choice([0, 1, 1000, 3_600_000])
        key = f"k{rng.randint(0, 40)}"
        data = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.2:
            data = {"note": data, "n": rng.randint(-5, 5)}
        # Discrete importances, or (the shape a classifier gives) every one its own.
        importance = rng.choice([None, 0, 0.1, 0.5, 0.9, 1, 1.5]) if discrete else rng.random()
        # Some memories let many entries expire together: a mass expiry.
        ttl = (
            rng.choice([None, None, 10, 5000]) if not mass_expiry or rng.random() < 0.5 else 7_200_000 - now % 3_600_000
        )
        state, _ = core.remember(state, key, data, now=now, importance=importance, ttl=ttl)
    return state, now + rng.choice([0, 5, 10, 100_000, 7_200_000])


@pytest.mark.parametrize("search", ["holders", "walk"])
def test_ctx_4_seeded_random_memories_respect_the_budget(search):
    """CTX-1, CTX-2, CTX-4, CTX-6: 200 seeded random memories x 3 tokenizers, by either search: the reference fill, within budget, exact count."""
    rng = random.Random(20261202)
    for _ in range(200):
        state, now = random_state(rng)
        budget = rng.choice([0, 1, 5, 20, 60, 400])
        query = rng.choice([None, "", "refund status", "peanut", "xyz", "refund cart peanut name"])
        for tokenizer in TOKENIZERS:
            try:
                with mock.patch.multiple(
                    search_module,
                    _by_holders=lambda stored, limit: search == "holders",
                    _walk_budget=lambda postings, top_band=0: None,
                ):
                    ctx = core.context(state, now=now, token_budget=budget, query=query, tokenizer=tokenizer)
            except ValueError:
                assert tokenizer("") > budget
                continue
            assert ctx.tokens <= budget
            assert ctx.tokens == tokenizer(ctx.text)
            assert len(ctx.entries) + ctx.omitted == core.size(state, now=now)
            assert ctx.text == "\n".join(sm.default_format(e) for e in ctx.entries)
            assert [e.key for e in ctx.entries] == naive_fill(state, now, budget, query, tokenizer)


def vowel_count(text: str) -> int:
    return sum(text.count(v) for v in "aeiouAEIOU")


# Tokenizers whose declaration holds for every text (the fast fill must agree
# exactly), plus every tokenizer the state machines use.
FAST_TOKENIZERS = [sm.estimate_tokens, additive(vowel_count), additive(lambda text: len(text) / 3), *MACHINE_TOKENIZERS]


def test_ctx_8_fast_fill_equals_naive_fill():
    """CTX-8: on 200 seeded random memories, with the machines' tokenizers too, the fast fill returns what the naive fill returns."""
    rng = random.Random(8)
    formats = [None, lambda e: f"[{e.key}] {e.text}"]
    for _ in range(200):
        state, now = random_state(rng)
        budget = rng.choice([0, 3, 20, 60, 400, 10**6])
        query = rng.choice([None, "refund status", "peanut"])
        separator = rng.choice(["\n", "", " | "])
        fmt = rng.choice(formats)
        for tokenizer in FAST_TOKENIZERS:
            args = dict(now=now, token_budget=budget, query=query, tokenizer=tokenizer, format=fmt, separator=separator)
            fast = core.context(state, **args)
            with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
                naive = core.context(state, **args)
            assert fast == naive


def test_ctx_8_false_declaration_falls_back(mem):
    """CTX-8: an additive() tokenizer that is not additive still gets tokens == tokenizer(text) <= budget."""
    mem.remember("a", "x")
    mem.remember("b", "y")
    # Counts one token per line, but three for any text with a join in it.
    lying = additive(lambda text: 0 if not text else (3 if "\n" in text else 1))
    ctx = mem.get_context(token_budget=2, tokenizer=lying)
    assert ctx.tokens == lying(ctx.text) <= 2
    assert len(ctx.entries) == 1


def test_ctx_8_additive_rejects_non_callables():
    """CTX-8, OPT-1: additive() of something that is not callable raises TypeError."""
    with pytest.raises(TypeError):
        additive("o200k")


def test_ctx_8_fractional_additive_counts_take_the_exact_fill(mem):
    """CTX-8: an additive() tokenizer with fractional counts gets exactly the naive fill (float sums could round)."""
    for i, text in enumerate(["alpha beta", "gamma", "delta epsilon zeta", "eta"]):
        mem.remember(f"k{i}", text, importance=0.2 * i)
    thirds = additive(lambda text: len(text) / 3)
    state = mem.state
    args = dict(now=max(e.updated_at for e in state.entries.values()), token_budget=9.5, tokenizer=thirds)
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        naive = core.context(state, **args)
    assert core.context(state, **args) == naive
    assert naive.tokens == thirds(naive.text) <= 9.5 and naive.entries


def test_ctx_1_every_query_match_comes_first_beyond_the_recall_limit(mem):
    """CTX-1: with twelve matches (more than recall's default 10), all twelve rank before a more important non-match."""
    for i in range(12):
        mem.remember(f"note:{i}", f"refund step {i}", importance=0.1)
    mem.remember("vital", "allergic to peanuts", importance=1.0)
    # Room for the twelve matches (5 or 6 tokens each, joined) but not for a thirteenth line.
    everything = mem.get_context(token_budget=10**6, query="refund")
    matches_only = "\n".join(line for line in everything.text.split("\n") if line.startswith("note:"))
    budget = sm.estimate_tokens(matches_only)
    ctx = mem.get_context(token_budget=budget, query="refund")
    assert [e.key for e in ctx.entries] == [f"note:{i}" for i in range(12)]
    assert ctx.omitted == 1


def test_ctx_1_freshness_can_lift_a_lower_importance_into_a_short_context():
    """CTX-1, RET-3: a fresh 0.5 (0.6) outranks day-old 0.55s, also when the fill works out only the start of the ranking.

    The budget holds one line, so the fill asks for the first two ranks;
    two stale 0.55 entries would fill that start if freshness were ignored.
    """
    state = sm.MemoryState()
    state, _ = core.remember(state, "old1", "note", now=0, importance=0.55)
    state, _ = core.remember(state, "old2", "note", now=0, importance=0.55)
    state, _ = core.remember(state, "fresh", "note b", now=86_400_000, importance=0.5)
    ctx = core.context(state, now=86_400_000, token_budget=4)  # "fresh: note b" is 13 units: 4 tokens
    assert [e.key for e in ctx.entries] == ["fresh"]


def test_ctx_8_fractional_line_measures_are_not_summed(mem):
    """CTX-8: an additive() tokenizer counting halves takes the naive fill: a 2.5-token line fits a 2.5 budget."""
    halves = additive(lambda text: len(text) / 2)
    mem.remember("k", "abc")  # "k: abc" is 6 characters: 3.0 tokens
    mem.remember("j", "ab")  # "j: ab" is 5 characters: 2.5 tokens
    ctx = mem.get_context(token_budget=2.5, tokenizer=halves)
    assert (ctx.text, ctx.tokens, ctx.omitted) == ("j: ab", 2.5, 1)
    state = mem.state
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert (
            core.context(
                state, now=max(e.updated_at for e in state.entries.values()), token_budget=2.5, tokenizer=halves
            )
            == ctx
        )


# -- CTX-9: tokenizer objects; CTX-10: must-keep entries ---------------------------------------------


def refund_memory(make, **options):
    mem = make(**options)
    for key, data, importance in [
        ("user:name", "Jakub", 0.9),
        ("user:language", "prefers answers in Czech", 0.8),
        ("chat:7", "talked about the weather in Prague for a while", 0.1),
        ("order:42", "refund requested for order 42, waiting for the warehouse", 0.7),
    ]:
        mem.remember(key, data, importance=importance)
    return mem


def test_ctx_9_an_encoding_object_is_a_tokenizer(make):
    """CTX-9: bpe-openai's o200k_base Encoding itself, passed as the tokenizer, gives the article's 30 tokens, 1 omitted."""
    bpe_openai = pytest.importorskip("bpe_openai")
    o200k = bpe_openai.get_encoding("o200k_base")
    ctx = refund_memory(make).get_context(token_budget=30, query="refund status", tokenizer=o200k)
    assert (ctx.tokens, ctx.omitted) == (30, 1)
    assert refund_memory(make, tokenizer=o200k).get_context(token_budget=30, query="refund status").tokens == 30
    assert refund_memory(make).get_context(token_budget=30, query="refund status").tokens == 21  # the estimator


def test_ctx_9_a_callable_returning_the_tokens_gets_a_helpful_error(mem):
    """CTX-9: tokenizer=encoding.encode returns a list; the TypeError says to pass the object or a counting function."""
    mem.remember("k", "some text")
    with pytest.raises(TypeError, match=r"returned a list of 3 tokens, not a count; pass the tokenizer object itself"):
        mem.get_context(token_budget=100, tokenizer=lambda text: [1, 2, 3])


def test_ctx_9_encode_is_preferred_over_call(mem):
    """CTX-9: an object that is callable and has encode (as Hugging Face tokenizers are) is counted by encode."""

    class HuggingFaceLike:
        def __call__(self, text):
            return {"input_ids": [0] * 99}

        def encode(self, text):
            return text.split()

    mem.remember("k", "three words here")
    assert mem.get_context(token_budget=100, tokenizer=HuggingFaceLike()).tokens == 4  # "k:", "three", "words", "here"


@pytest.mark.parametrize("tokenizer", [42, "o200k", object()])
def test_ctx_9_anything_else_is_a_type_error(mem, tokenizer):
    """CTX-9, OPT-1: neither callable nor with encode: TypeError naming what is accepted."""
    with pytest.raises(TypeError, match="must be callable or have an encode"):
        mem.get_context(token_budget=10, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="must be callable or have an encode"):
        sm.create_memory(tokenizer=tokenizer, load=False)


def bad_waiter(make):
    """The issue's setup: the allergy and the city matter, five small-talk lines share 'what is ... my'."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.remember("user:city", "lives in Brno", importance=0.9)
    for i, line in enumerate(
        [
            "what is the weather like",
            "my day is fine",
            "what is new",
            "is it raining in my street",
            "what is my horoscope",
        ]
    ):
        mem.remember(f"chat:{i}", line, importance=0.1)
    return mem


def test_ctx_10_a_chatty_query_crowds_out_the_allergy_by_default(make):
    """CTX-1: without must_keep the query's matches rank first, so small talk fills budget 30 and the allergy is left out."""
    ctx = bad_waiter(make).get_context(token_budget=30, query="what is my name?")
    keys = [e.key for e in ctx.entries]
    assert "user:allergy" not in keys and all(key.startswith("chat:") for key in keys)


def test_ctx_10_must_keep_places_the_allergy_first(make):
    """CTX-10: must_keep=0.9 puts the allergy and the city first, whatever the query; the rest fill what is left."""
    ctx = bad_waiter(make).get_context(token_budget=30, query="what is my name?", must_keep=0.9)
    keys = [e.key for e in ctx.entries]
    assert keys[:2] == ["user:allergy", "user:city"]
    assert ctx.tokens <= 30


def test_ctx_10_must_keep_still_respects_the_budget(make):
    """CTX-10, CTX-2: a must-keep entry that does not fit is left out; the budget is never exceeded."""
    mem = make()
    mem.remember("huge", "x" * 400, importance=1.0)
    mem.remember("small", "fits", importance=0.2)
    ctx = mem.get_context(token_budget=10, must_keep=0.9)
    assert [e.key for e in ctx.entries] == ["small"]


def test_ctx_10_an_invalid_must_keep_is_ignored_with_a_warning(make):
    """CTX-10, NUM-5: must_keep=1.5 is not in [0, 1]: the default (none) is used and a warning says so."""
    mem = bad_waiter(make)
    with pytest.warns(sm.IgnoredValueWarning, match="must_keep=1.5"):
        ctx = mem.get_context(token_budget=30, query="what is my name?", must_keep=1.5)
    assert ctx == mem.get_context(token_budget=30, query="what is my name?")
