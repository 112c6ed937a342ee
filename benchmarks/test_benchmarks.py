"""Benchmarks (pytest-benchmark). ``make bench`` runs them and writes docs/performance.md.

In the normal test command they run once each with ``--benchmark-disable``,
as smoke tests, so they cannot rot; the 100,000-entry cases then only run
where they are cheap to build. They are benchmarks, not timed tests: nothing
here asserts a duration.

Every operation runs on each workload shape of :mod:`workload` (seven
importances, continuous importances, continuous with expiring entries), with
the default estimator unless the case says otherwise. Each context case is
timed with the fast fill and, where it finishes in reasonable time, with the
naive reference fill (:func:`sentinel_memory.core.prompt.fill_naive`), and next to
the peers a user might pick instead, so the report can print their ratios
from one run.
"""

from __future__ import annotations

import functools
import itertools

import pytest
from pairing import paired
from workload import NOW, QUERIES, SHAPES, live_texts, make_state, mass_expiry_state

from sentinel_memory import JsonFileStore, additive, core, create_memory
from sentinel_memory.core import prompt, window

#: (entries, budget) per shape: the seven-importance workload keeps its full table.
CONTEXT_CASES = {
    "seven": [
        (100, 500),
        (100, 4_000),
        (100, 100_000),
        (1_000, 500),
        (1_000, 4_000),
        (1_000, 100_000),
        (10_000, 4_000),
        (10_000, 100_000),
        (100_000, 4_000),
    ],
    "continuous": [(1_000, 4_000), (10_000, 4_000), (100_000, 4_000)],
    "expiring": [(1_000, 4_000), (10_000, 4_000), (100_000, 4_000)],
}
#: The naive fill is quadratic; past these it takes seconds to minutes a call.
NAIVE_CASES = [
    (s, n, b)
    for s, cases in CONTEXT_CASES.items()
    for n, b in cases
    if n <= 1_000 or (s, n, b) == ("seven", 10_000, 4_000)
]
PEER_CASES = [(s, n, b) for s, cases in CONTEXT_CASES.items() for n, b in cases if n in (1_000, 10_000)]


def cases(shape_cases):
    return [(s, n, b) for s, cases_ in shape_cases.items() for n, b in cases_]


def case_id(case):
    return "-".join(str(part) for part in case)


@functools.cache
def state_of(shape: str, n: int, full: bool = False):
    """A stored workload; ``full`` is at its limit, with nothing expired left, as a store is after its first compaction."""
    state = make_state(n, shape)
    if full:
        state, _ = core.compact(state, now=NOW)
        state = core.MemoryState(config=core.make_config(limit=len(state.entries)), entries=state.entries, next_seq=n)
    return state


def only_when_timed(benchmark, n: int) -> None:
    """Building 100,000-entry workloads takes seconds: ``make test`` smoke-runs the smaller sizes only."""
    if benchmark.disabled and n >= 100_000:
        pytest.skip("100,000 entries only under make bench")


def estimator_counter(batch) -> int:
    """The estimator over the joined text, as the context counts it."""
    return -(-len("\n".join(m.content for m in batch)) // 4)


@pytest.mark.parametrize("case", cases(CONTEXT_CASES), ids=case_id)
def test_context_fast(benchmark, case):
    """get_context with the fast fill."""
    shape, n, budget = case
    only_when_timed(benchmark, n)
    state = state_of(shape, n)
    benchmark.extra_info.update(kind="fast", shape=shape, n=n, budget=budget)
    ctx = benchmark(core.context, state, now=NOW, token_budget=budget)
    assert ctx.tokens <= budget
    benchmark.extra_info["picked"] = len(ctx.entries)


@pytest.mark.parametrize("case", NAIVE_CASES, ids=case_id)
def test_context_naive(benchmark, case, monkeypatch):
    """get_context with the naive reference fill: the readable specification."""
    shape, n, budget = case
    state = state_of(shape, n)
    benchmark.extra_info.update(kind="naive", shape=shape, n=n, budget=budget)
    monkeypatch.setattr(window, "fill", prompt.fill_ranked_naive)
    ctx = benchmark.pedantic(
        core.context, args=(state,), kwargs={"now": NOW, "token_budget": budget}, rounds=3 if n >= 10_000 else 10
    )
    monkeypatch.undo()
    assert ctx == core.context(state, now=NOW, token_budget=budget)


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("case", PEER_CASES, ids=case_id)
def test_context_with_query(benchmark, case, query):
    """get_context with a query: the entries that share its words first."""
    shape, n, budget = case
    state = state_of(shape, n)
    benchmark.extra_info.update(kind="query", shape=shape, n=n, budget=budget, query=query)
    ctx = benchmark(core.context, state, now=NOW, token_budget=budget, query=QUERIES[query])
    assert ctx.tokens <= budget


def trimming(shape: str, n: int, budget: int):
    """langchain's trim_messages over the workload's live texts, newest first, with the same len/4 counter (skips without langchain)."""
    messages_module = pytest.importorskip("langchain_core.messages")
    messages = [messages_module.HumanMessage(content=text) for text in live_texts(state_of(shape, n))]
    return functools.partial(
        messages_module.trim_messages, messages, max_tokens=budget, strategy="last", token_counter=estimator_counter
    )


@pytest.mark.parametrize("case", PEER_CASES, ids=case_id)
def test_context_langchain_trim(benchmark, case):
    """The peer a user might pick instead: langchain's trim_messages, newest first, same len/4 counter."""
    shape, n, budget = case
    benchmark.extra_info.update(kind="langchain", shape=shape, n=n, budget=budget)
    kept = benchmark(trimming(shape, n, budget))
    assert estimator_counter(kept) <= budget


@pytest.mark.parametrize("shape", SHAPES)
def test_context_llamaindex(benchmark, shape):
    """The second peer: LlamaIndex's ChatMemoryBuffer, the newest messages that fit, same len/4 counter.

    Its ``get()`` recounts the whole remaining history for every message it
    drops, so it runs at 1,000 entries only.
    """
    memory_module = pytest.importorskip("llama_index.core.memory")
    llms = pytest.importorskip("llama_index.core.llms")
    n, budget = 1_000, 4_000
    buffer = memory_module.ChatMemoryBuffer.from_defaults(
        token_limit=budget, tokenizer_fn=lambda text: [0] * -(-len(text) // 4)
    )
    for text in live_texts(state_of(shape, n)):
        buffer.put(llms.ChatMessage(role="user", content=text))
    benchmark.extra_info.update(kind="llamaindex", shape=shape, n=n, budget=budget)
    kept = benchmark.pedantic(buffer.get, rounds=3, iterations=1)
    assert kept


@pytest.mark.parametrize("shape", SHAPES)
def test_context_o200k_additive(benchmark, shape):
    """get_context with the o200k tokenizer declared additive(), and trim_messages with the same count."""
    bpe_openai = pytest.importorskip("bpe_openai")
    encoding = bpe_openai.get_encoding("o200k_base")

    def o200k(text: str) -> int:
        return len(encoding.encode(text))

    n, budget = 1_000, 4_000
    state = state_of(shape, n)
    benchmark.extra_info.update(kind="o200k", shape=shape, n=n, budget=budget)
    ctx = benchmark(core.context, state, now=NOW, token_budget=budget, tokenizer=additive(o200k))
    assert ctx.tokens <= budget


def bot_turns(shape: str, n: int):
    """A function that takes a bot's next turn on a full store of ``n``: remember what the user said, then get_context(4,000) with it as the query."""
    states = [state_of(shape, n, full=True)]
    turns = itertools.count()

    def turn():
        i = next(turns)
        said = f"turn {i}: the user asked about refund status for order {i}"
        states[0], _ = core.remember(states[0], f"turn:{i}", said, now=NOW + i, importance=0.5)
        return core.context(states[0], now=NOW + i, token_budget=4_000, query=said)

    return turn


@pytest.mark.parametrize("n", [1_000, 10_000])
@pytest.mark.parametrize("shape", SHAPES)
def test_alternating_remember_and_context(benchmark, shape, n):
    """A bot's turn on a full store: remember what the user said, then get_context(4,000) with it as the query."""
    benchmark.extra_info.update(kind="alternating", shape=shape, n=n, budget=4_000)
    ctx = benchmark(bot_turns(shape, n))
    assert ctx.entries


@pytest.mark.parametrize("what", ["no query", *sorted(QUERIES), "turn"])
@pytest.mark.parametrize("case", [case for case in PEER_CASES if case[2] == 4_000], ids=case_id)
def test_paired_with_trim(benchmark, case, what):
    """get_context (no query, a query) or a bot's turn, and trim_messages, timed back to back in every round.

    The order swaps from round to round, so both meet the same moments of a
    shared machine, and the report takes the median of the rounds' ratios.
    Each call also runs after the other's, with the processor caches full
    of the other's data, as in an app that does other work between turns;
    the benchmarks above call one function again and again, caches warm.
    """
    shape, n, budget = case
    trim = trimming(shape, n, budget)
    ours = (
        bot_turns(shape, n)
        if what == "turn"
        else functools.partial(core.context, state_of(shape, n), now=NOW, token_budget=budget, query=QUERIES.get(what))
    )
    benchmark.extra_info.update(kind="paired", shape=shape, n=n, budget=budget, query=what)
    ratios = paired(benchmark, ours, trim, rounds=300 if n <= 1_000 else 100, warmup=20)
    assert ratios and all(r > 0 for r in ratios)


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("n", [1_000, 100_000])
@pytest.mark.parametrize("shape", SHAPES)
def test_recall(benchmark, shape, n, query):
    """recall over n entries: a two-word query and one taken from a chat turn."""
    only_when_timed(benchmark, n)
    state = state_of(shape, n)
    benchmark.extra_info.update(kind="recall", shape=shape, n=n, query=query)
    hits = benchmark(core.recall, state, QUERIES[query], now=NOW)
    assert hits


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
@pytest.mark.parametrize("shape", SHAPES)
def test_remember_into_full_store(benchmark, shape, n):
    """remember one entry into a full store of n entries: each call evicts one."""
    only_when_timed(benchmark, n)
    state = state_of(shape, n, full=True)
    stored = len(state.entries)
    benchmark.extra_info.update(kind="remember", shape=shape, n=n)
    new_state, dropped = benchmark(
        core.remember,
        state,
        "new",
        "refund requested for order 42, waiting for the warehouse",
        now=NOW + 1,
        importance=0.5,
    )
    assert len(new_state.entries) == stored and len(dropped.evicted) == 1


def test_first_remember_after_mass_expiry(benchmark):
    """The first remember into a full store of 100,000 after 15,000 of its entries expired: it compacts them all."""
    only_when_timed(benchmark, 100_000)
    state = mass_expiry_state()
    benchmark.extra_info.update(kind="mass expiry", shape="continuous", n=100_000)
    new_state, dropped = benchmark.pedantic(
        core.remember, args=(state, "morning", "good morning"), kwargs={"now": NOW, "importance": 0.5}, rounds=7
    )
    assert len(dropped.expired) == 15_000 and len(new_state.entries) == 85_001


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_save(benchmark, n, tmp_path):
    """save() of n entries through JsonFileStore: the document, then an atomic, fsynced write."""
    only_when_timed(benchmark, n)
    state = state_of("seven", n)
    store = JsonFileStore(tmp_path / "memory.json")
    benchmark.extra_info.update(kind="save", shape="seven", n=n)
    benchmark(lambda: store.save(core.to_document(state)))
    assert store.load()["entries"][0]["key"] == "chat:0"


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_load(benchmark, n, tmp_path):
    """load() of n entries through JsonFileStore: parse, validate, rebuild the state and its index."""
    only_when_timed(benchmark, n)
    store = JsonFileStore(tmp_path / "memory.json")
    store.save(core.to_document(state_of("seven", n)))
    mem = create_memory(store=store, load=False, limit=n)
    benchmark.extra_info.update(kind="load", shape="seven", n=n)
    result = benchmark.pedantic(mem.load, rounds=5 if n >= 100_000 else 20)
    assert result.loaded == n
