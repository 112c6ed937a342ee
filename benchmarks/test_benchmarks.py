"""Benchmarks (pytest-benchmark). ``make bench`` runs them and writes docs/performance.md.

In the normal test command they run once each with ``--benchmark-disable``,
as smoke tests, so they cannot rot. They are benchmarks, not timed tests:
nothing here asserts a duration.

The workload is the article's: stored entries of about 60 characters, the
default estimator. Each context case is timed with the fast fill and, where
it finishes in reasonable time, with the naive reference fill
(:func:`sentinel_memory.prompt.fill_naive`), so the report can print their
ratio from one run.
"""

from __future__ import annotations

import functools

import pytest

from sentinel_memory import JsonFileStore, core, create_memory, prompt
from workload import NOW, make_state, texts_of

CONTEXT_CASES = [
    (100, 500),
    (100, 4_000),
    (100, 100_000),
    (1_000, 500),
    (1_000, 4_000),
    (1_000, 100_000),
    (10_000, 4_000),
    (10_000, 100_000),
    (100_000, 4_000),
]
#: The naive fill is quadratic; past these it takes seconds to minutes a call.
NAIVE_CASES = {(n, b) for n, b in CONTEXT_CASES if n <= 1_000 or (n, b) == (10_000, 4_000)}


@functools.lru_cache(maxsize=None)
def state_of(n: int):
    return make_state(n)


def case_id(case):
    n, budget = case
    return f"{n}-{budget}"


@pytest.mark.parametrize("case", CONTEXT_CASES, ids=case_id)
def test_context_fast(benchmark, case):
    """get_context with the fast fill."""
    n, budget = case
    state = state_of(n)
    benchmark.extra_info.update(n=n, budget=budget, kind="fast")
    ctx = benchmark(core.context, state, now=NOW, token_budget=budget)
    assert ctx.tokens <= budget


@pytest.mark.parametrize("case", sorted(NAIVE_CASES), ids=case_id)
def test_context_naive(benchmark, case, monkeypatch):
    """get_context with the naive reference fill: the readable specification."""
    n, budget = case
    state = state_of(n)
    benchmark.extra_info.update(n=n, budget=budget, kind="naive")
    monkeypatch.setattr(core, "fill", prompt.fill_ranked_naive)
    ctx = benchmark.pedantic(core.context, args=(state,), kwargs={"now": NOW, "token_budget": budget}, rounds=3 if n >= 10_000 else 10)
    monkeypatch.undo()
    assert ctx == core.context(state, now=NOW, token_budget=budget)


@pytest.mark.parametrize("case", [c for c in CONTEXT_CASES if c[0] in (1_000, 10_000)], ids=case_id)
def test_context_langchain_trim(benchmark, case):
    """The peer a user might pick instead: langchain's trim_messages, newest first, same len/4 counter."""
    messages_module = pytest.importorskip("langchain_core.messages")
    n, budget = case
    messages = [messages_module.HumanMessage(content=text) for text in texts_of(state_of(n))]

    def counter(batch):
        # The estimator over the joined text, as our context counts it.
        return -(-len("\n".join(m.content for m in batch)) // 4)

    benchmark.extra_info.update(n=n, budget=budget, kind="langchain")
    kept = benchmark(messages_module.trim_messages, messages, max_tokens=budget, strategy="last", token_counter=counter)
    assert counter(kept) <= budget


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_recall(benchmark, n):
    """recall over n entries, a two-word query."""
    state = state_of(n)
    benchmark.extra_info.update(n=n, kind="recall")
    hits = benchmark(core.recall, state, "refund status", now=NOW)
    assert hits


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000])
def test_remember_into_full_store(benchmark, n):
    """remember one entry into a full store of n entries: each call evicts one."""
    state = make_state(n, limit=n)
    benchmark.extra_info.update(n=n, kind="remember")
    new_state, dropped = benchmark(
        core.remember, state, "new", "refund requested for order 42, waiting for the warehouse", now=NOW + 1, importance=0.5
    )
    assert len(new_state.entries) == n and len(dropped.evicted) == 1


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_save(benchmark, n, tmp_path):
    """save() of n entries through JsonFileStore: the document, then an atomic, fsynced write."""
    state = state_of(n)
    store = JsonFileStore(tmp_path / "memory.json")
    benchmark.extra_info.update(n=n, kind="save")
    benchmark(lambda: store.save(core.to_document(state)))
    assert store.load()["entries"][0]["key"] == "chat:0"


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_load(benchmark, n, tmp_path):
    """load() of n entries through JsonFileStore: parse, validate, rebuild the state."""
    store = JsonFileStore(tmp_path / "memory.json")
    store.save(core.to_document(state_of(n)))
    mem = create_memory(store=store, load=False, limit=n)
    benchmark.extra_info.update(n=n, kind="load")
    result = benchmark(mem.load)
    assert result.loaded == n
