"""Both rankings at 10,000 entries of chat text, queried with common words: recall, a context, a bot's turn.

The workload is :func:`workload.make_chat_state` (chatterbot-corpus lines,
turns and notes); the queries are chat lines and questions full of common
words ("Where is my refund?"). Each case runs with ``ranking="words"``
(REC-2) and ``ranking="bm25"`` (BM-1 .. BM-9). Nothing here asserts a
duration; the results go where ``make bench`` puts them.
"""

from __future__ import annotations

import functools
import itertools

import attrs
import pytest
from workload import NOW, chat_queries, make_chat_state

from sentinel_memory import core, per_line

pytest.importorskip("snowballstemmer")
bpe_openai = pytest.importorskip("bpe_openai")

RANKINGS = ("words", "bm25")
COMMON = (
    "Where is my refund?",
    "what did you say about the weather?",
    "do you like it?",
    "I am not sure what you mean",
)


@functools.cache
def chat_state(ranking: str, n: int = 10_000):
    return attrs.evolve(make_chat_state(n, seed=n), config=core.make_config(limit=2 * n, ranking=ranking))


def queries() -> list[str]:
    return list(COMMON) + chat_queries(4, seed=11)


@pytest.mark.parametrize("ranking", RANKINGS)
def test_recall_common_words(benchmark, ranking):
    """recall(query, limit=10) at 10,000 chat entries, the queries full of common words, warm."""
    state = chat_state(ranking)
    asked = itertools.cycle(queries())
    for query in queries():
        core.recall(state, query, now=NOW)
    benchmark.extra_info.update(kind="recall common words", ranking=ranking, n=10_000)
    hits = benchmark.pedantic(lambda: core.recall(state, next(asked), now=NOW, limit=10), rounds=80)
    assert len(hits) <= 10


@pytest.mark.parametrize("ranking", RANKINGS)
def test_context_common_words(benchmark, ranking):
    """get_context(token_budget=2,000, query=...) with the estimator at 10,000 chat entries, warm."""
    state = chat_state(ranking)
    asked = itertools.cycle(queries())
    for query in queries():
        core.context(state, now=NOW, token_budget=2_000, query=query)
    benchmark.extra_info.update(kind="context common words", ranking=ranking, n=10_000)
    ctx = benchmark.pedantic(lambda: core.context(state, now=NOW, token_budget=2_000, query=next(asked)), rounds=80)
    assert ctx.tokens <= 2_000


@pytest.mark.parametrize("ranking", RANKINGS)
def test_turn_o200k(benchmark, ranking):
    """A bot's turn at 10,000 entries: add_turn what the user said, then get_context(2,000) queried with it, o200k."""
    states = [chat_state(ranking)]
    counter = per_line(bpe_openai.get_encoding("o200k_base"))
    lines = itertools.cycle(queries())
    moments = itertools.count(NOW + 1)
    core.context(states[0], now=NOW, token_budget=2_000, tokenizer=counter)  # the counts of the store so far

    def turn():
        said, now = next(lines), next(moments)
        states[0], _, _ = core.add_turn(states[0], "user", said, now=now)
        return core.context(states[0], now=now, token_budget=2_000, query=said, tokenizer=counter)

    benchmark.extra_info.update(kind="turn o200k", ranking=ranking, n=10_000)
    ctx = benchmark.pedantic(turn, rounds=1 if benchmark.disabled else 60)
    assert ctx.tokens <= 2_000
