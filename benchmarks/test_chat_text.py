"""Benchmarks on real chat text with real tokenizers: ``make bench`` writes docs/performance-tokenizers.md.

The workload is chatterbot-corpus's conversations in six languages
(:func:`workload.make_chat_state`): lines that end in punctuation, as real
chat does, so a BPE tokenizer's joins merge. Every context case runs with
bpe-openai's o200k_base and cl100k_base ``Encoding`` objects, counted line
by line (CTX-12), next to langchain-core's ``trim_messages`` with the same
per-message counter. *warm* keeps the line counts between calls, as a
memory does; *cold* starts every call with none, as the first context after
a start does. Each pair is timed back to back, in turns of order, and the
report takes the median of the rounds' ratios. Nothing here asserts a
duration.
"""

from __future__ import annotations

import functools
import itertools

import pytest
from pairing import paired
from workload import NOW, chat_queries, make_chat_state

from sentinel_memory import core, per_line
from sentinel_memory.core.tokens import LineCounter

bpe_openai = pytest.importorskip("bpe_openai")
messages_module = pytest.importorskip("langchain_core.messages")

ENCODINGS = ("o200k_base", "cl100k_base")
CASES = [(1_000, 2_000), (1_000, 4_000), (10_000, 2_000), (10_000, 4_000)]


@functools.cache
def encoding(name: str):
    return bpe_openai.get_encoding(name)


@functools.cache
def chat_state(n: int):
    return make_chat_state(n, seed=n)


@functools.cache
def query(n: int) -> str:
    """What the user said last: a chat line, as a bot queries with it."""
    return chat_queries(1, seed=n)[0]


def trimming(name: str, n: int, budget: int, counting: str = "encode"):
    """trim_messages, newest first, over the live turns' and notes' texts, with a counter that sums len(enc.encode(content))."""
    encode = getattr(encoding(name), counting)
    texts = [entry.line for entry in chat_state(n).index.live_by_age(NOW)]
    messages = [messages_module.HumanMessage(content=text) for text in texts]

    def counter(batch) -> int:
        return sum(len(encode(m.content)) for m in batch)

    return functools.partial(
        messages_module.trim_messages, messages, max_tokens=budget, strategy="last", token_counter=counter
    )


def context(name: str, n: int, budget: int, warm: bool):
    """get_context with the Encoding object: one kept counter (warm), or a new one each call (cold)."""
    kept = per_line(encoding(name))
    state, said = chat_state(n), query(n)

    def call():
        counter = kept if warm else per_line(encoding(name))
        return core.context(state, now=NOW, token_budget=budget, query=said, tokenizer=counter)

    return call


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[1]}")
@pytest.mark.parametrize("name", ENCODINGS)
def test_chat_context_against_trim(benchmark, name, case, warm):
    """get_context with an Encoding object (query: a chat line) and trim_messages with the same per-message count, paired."""
    n, budget = case
    own = context(name, n, budget, warm)
    ctx = own()
    assert ctx.tokens == len(encoding(name).encode_ordinary(ctx.text)) <= budget
    benchmark.extra_info.update(kind="chat " + ("warm" if warm else "cold"), shape=name, n=n, budget=budget)
    paired(benchmark, own, trimming(name, n, budget), rounds=30 if n <= 1_000 else 10, warmup=1)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[1]}")
@pytest.mark.parametrize("name", ENCODINGS)
def test_chat_trim_with_encode_ordinary(benchmark, name, case):
    """trim_messages counting with encode_ordinary, the count a memory uses for an Encoding object (CTX-9)."""
    n, budget = case
    benchmark.extra_info.update(kind="chat trim ordinary", shape=name, n=n, budget=budget)
    trim = trimming(name, n, budget, "encode_ordinary")
    benchmark.pedantic(trim, rounds=1 if benchmark.disabled else (20 if n <= 1_000 else 5))


@pytest.mark.parametrize("name", ENCODINGS)
def test_chat_turn(benchmark, name):
    """A bot's turn at 10,000 entries: add_turn what the user said, then get_context(2,000) queried with it."""
    n = 10_000
    states = [chat_state(n)]
    counter = per_line(encoding(name))
    lines = itertools.cycle(chat_queries(200, seed=99))
    moments = itertools.count(NOW + 1)
    core.context(states[0], now=NOW, token_budget=2_000, tokenizer=counter)  # the counts of the store so far

    def turn():
        said, now = next(lines), next(moments)
        states[0], _, _ = core.add_turn(states[0], "user", said, now=now)
        return core.context(states[0], now=now, token_budget=2_000, query=said, tokenizer=counter)

    benchmark.extra_info.update(kind="chat turn", shape=name, n=n, budget=2_000)
    ctx = benchmark.pedantic(turn, rounds=1 if benchmark.disabled else 100)
    assert ctx.tokens <= 2_000


@pytest.mark.parametrize("name", ENCODINGS)
def test_chat_repair_rate(benchmark, name):
    """How many contexts the repair of CTX-12 runs in: 100 chat-line queries at each size and budget."""

    class Counting(LineCounter):
        whole = 0

        def __call__(self, text: str) -> int | float:
            Counting.whole += 1
            return super().__call__(text)

    contexts = repaired = 0
    for n, budget in CASES:
        state = chat_state(n)
        for said in chat_queries(10 if benchmark.disabled else 100, seed=n + budget):
            Counting.whole = 0
            counter = Counting(lambda text: len(encoding(name).encode_ordinary(text)))
            core.context(state, now=NOW, token_budget=budget, query=said, tokenizer=counter)
            contexts += 1
            repaired += Counting.whole > 2  # the empty text and the text sent; more is the repair
    benchmark.extra_info.update(kind="chat repairs", shape=name, contexts=contexts, repaired=repaired)
    benchmark.pedantic(lambda: None, rounds=1)
    assert repaired <= contexts
