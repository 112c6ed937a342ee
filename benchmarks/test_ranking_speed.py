"""Both rankings at 10,000 entries of chat text, queried with common words: recall, a context, a bot's turn.

Two workloads. ``chat`` is :func:`workload.make_chat_state` (chatterbot-corpus
lines, turns and notes), queried with chat lines and questions full of
common words ("Where is my refund?"). ``locomo`` is LoCoMo's turns (read at
run time from ``--data``, default ``../shared/locomo/locomo-dev.json``;
skipped when absent, never copied) remembered one minute apart and repeated
up to 10,000, queried with LoCoMo's own questions ("When did Caroline go to
the support group?"). Each case runs with ``ranking="words"`` (REC-2) and
``ranking="bm25"`` (BM-1 .. BM-9). Nothing here asserts a duration:

    pytest benchmarks/test_ranking_speed.py --benchmark-enable --benchmark-timer=time.process_time -p no:xdist -o addopts=""
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import attrs
import locomo
import pytest
from workload import NOW, chat_queries, make_chat_state

from sentinel_memory import core, per_line
from sentinel_memory.core.state import MemoryState

pytest.importorskip("snowballstemmer")
bpe_openai = pytest.importorskip("bpe_openai")

RANKINGS = ("words", "bm25")
COMMON = (
    "Where is my refund?",
    "what did you say about the weather?",
    "do you like it?",
    "I am not sure what you mean",
)


WORKLOADS = ("chat", "locomo")
N = 10_000


@pytest.fixture(scope="module")
def data(request) -> Path:
    given = request.config.getoption("--data", default=None)
    return Path(given) if given else locomo.DEFAULT_DATA


@functools.cache
def locomo_talk(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every turn's ``Speaker: text`` and every scored question of the file, in order."""
    turns: list[str] = []
    asked: list[str] = []
    for talk, questions in locomo.conversations(path):
        turns += [text for _, text in talk]
        asked += [question for question, _, _ in questions]
    return tuple(turns), tuple(asked)


@functools.cache
def state_of(workload: str, ranking: str, path: Path) -> MemoryState:
    config = core.make_config(limit=2 * N, ranking=ranking)
    if workload == "chat":
        return attrs.evolve(make_chat_state(N, seed=N), config=config)
    turns, _ = locomo_talk(path)
    state = MemoryState(config=config)
    for i in range(N):  # the dev half's turns, repeated: one minute apart, up to NOW
        text = turns[i % len(turns)]
        state, _ = core.remember(state, f"turn:{i}", text, now=NOW - (N - i) * 60_000, importance=0.5)
    return state


def prepared(workload: str, ranking: str, path: Path) -> tuple[MemoryState, list[str]]:
    """The workload's state at 10,000 entries and its eight queries."""
    if workload == "locomo":
        if not path.is_file():
            pytest.skip(f"no LoCoMo data at {path}")
        _, asked = locomo_talk(path)
        return state_of(workload, ranking, path), list(asked[:: max(1, len(asked) // 8)][:8])
    return state_of(workload, ranking, path), list(COMMON) + chat_queries(4, seed=11)


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("ranking", RANKINGS)
def test_recall_common_words(benchmark, ranking, workload, data):
    """recall(query, limit=10) at 10,000 entries, the queries full of common words, warm."""
    state, queries = prepared(workload, ranking, data)
    asked = itertools.cycle(queries)
    for query in queries:
        core.recall(state, query, now=NOW)
    benchmark.extra_info.update(kind="recall common words", ranking=ranking, n=N, workload=workload)
    hits = benchmark.pedantic(lambda: core.recall(state, next(asked), now=NOW, limit=10), rounds=80)
    assert len(hits) <= 10


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("ranking", RANKINGS)
def test_context_common_words(benchmark, ranking, workload, data):
    """get_context(token_budget=2,000, query=...) with the estimator at 10,000 entries, warm."""
    state, queries = prepared(workload, ranking, data)
    asked = itertools.cycle(queries)
    for query in queries:
        core.context(state, now=NOW, token_budget=2_000, query=query)
    benchmark.extra_info.update(kind="context common words", ranking=ranking, n=N, workload=workload)
    ctx = benchmark.pedantic(lambda: core.context(state, now=NOW, token_budget=2_000, query=next(asked)), rounds=80)
    assert ctx.tokens <= 2_000


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("ranking", RANKINGS)
def test_turn_o200k(benchmark, ranking, workload, data):
    """A bot's turn at 10,000 entries: add_turn what the user said, then get_context(2,000) queried with it, o200k."""
    state, queries = prepared(workload, ranking, data)
    states = [state]
    counter = per_line(bpe_openai.get_encoding("o200k_base"))
    lines = itertools.cycle(queries)
    moments = itertools.count(NOW + 1)
    core.context(states[0], now=NOW, token_budget=2_000, tokenizer=counter)  # the counts of the store so far

    def turn():
        said, now = next(lines), next(moments)
        states[0], _, _ = core.add_turn(states[0], "user", said, now=now)
        return core.context(states[0], now=now, token_budget=2_000, query=said, tokenizer=counter)

    benchmark.extra_info.update(kind="turn o200k", ranking=ranking, n=N, workload=workload)
    ctx = benchmark.pedantic(turn, rounds=1 if benchmark.disabled else 60)
    assert ctx.tokens <= 2_000
