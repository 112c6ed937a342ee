"""Benchmarks of get_messages on an agent's history with tool calls: ``make bench`` reports them with their targets.

The workload (:func:`workload.make_agent_state`) is a tool-using agent's
history of chatterbot-corpus lines: a question, a tool call, its result and
an answer per step, and notes among them. Three comparisons, each pair
timed back to back in turns of order (the report takes the median of the
rounds' ratios):

* ``get_messages`` against ``get_context`` at the same budget and query
  (a chat line), with the estimator and with the o200k_base object: the
  target is at most 1.5x.
* ``get_messages`` against langchain-core's ``trim_messages`` (newest
  first) over the same turns as LangChain messages, with the same counter,
  each message's text (TXT-4) plus 3, counted with o200k_base's
  ``encode_ordinary``: *warm* keeps a memory's line counts between calls,
  *cold* starts each call with none; the target is at most 0.5x.
* A turn at 10,000 entries: ``add_messages`` of what the user said, then
  ``get_messages`` queried with it: under 2 ms with the estimator, under
  10 ms with the o200k_base object.

Nothing here asserts a duration; each case checks its result is a valid
request within the budget.
"""

from __future__ import annotations

import functools
import itertools

import pytest
from pairing import paired
from workload import NOW, chat_queries, make_agent_state

from sentinel_memory import core, per_line, request_problems
from sentinel_memory.core.chat import body_of

bpe_openai = pytest.importorskip("bpe_openai")
messages_module = pytest.importorskip("langchain_core.messages")

CASES = [(1_000, 2_000), (10_000, 2_000), (10_000, 4_000)]


@functools.cache
def o200k():
    return bpe_openai.get_encoding("o200k_base")


@functools.cache
def agent_state(n: int):
    return make_agent_state(n, seed=n)


@functools.cache
def query(n: int) -> str:
    return chat_queries(1, seed=n)[0]


def tokenizer(name: str, warm: bool = True):
    """The memory's tokenizer: the estimator (None), or the o200k_base object, one kept counter (warm) or new each call."""
    if name == "estimator":
        return lambda: None
    kept = per_line(o200k())
    return (lambda: kept) if warm else (lambda: per_line(o200k()))


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[1]}")
@pytest.mark.parametrize("name", ["estimator", "o200k_base"])
def test_agent_messages_against_context(benchmark, name, case):
    """get_messages and get_context at one budget and query (a chat line), paired: get_messages costs at most 1.5x."""
    n, budget = case
    state, said, counter = agent_state(n), query(n), tokenizer(name)

    def messages():
        return core.messages(state, now=NOW, token_budget=budget, query=said, tokenizer=counter())

    def context():
        return core.context(state, now=NOW, token_budget=budget, query=said, tokenizer=counter())

    result = messages()
    assert request_problems(result.messages) == [] and result.tokens <= budget
    benchmark.extra_info.update(kind="agent messages vs context", shape=name, n=n, budget=budget)
    paired(benchmark, messages, context, rounds=30 if n <= 1_000 else 15, warmup=1)


def langchain_history(n: int) -> list:
    """The live turns as LangChain messages: HumanMessage, AIMessage with tool_calls, ToolMessage."""
    out = []
    for item in agent_state(n).index.split().turns:
        message = item[-1].data
        if message["role"] == "user":
            out.append(messages_module.HumanMessage(content=message["content"]))
        elif message["role"] == "tool":
            out.append(messages_module.ToolMessage(content=message["content"], tool_call_id=message["tool_call_id"]))
        elif "tool_calls" in message:
            calls = [{"name": c["function"]["name"], "args": {}, "id": c["id"]} for c in message["tool_calls"]]
            out.append(messages_module.AIMessage(content="", tool_calls=calls))
        else:
            out.append(messages_module.AIMessage(content=message["content"]))
    return out


def lc_body(message) -> str:
    """A LangChain message's text as TXT-4 reads the stored message: content, then each call as name(arguments)."""
    calls = [f"{call['name']}({{}})" for call in getattr(message, "tool_calls", None) or ()]
    return " ".join([message.content, *calls]) if message.content and calls else message.content or " ".join(calls)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[1]}")
def test_agent_messages_against_trim(benchmark, case, warm):
    """get_messages (facts and turns) and trim_messages (turns) with one counter, o200k_base text + 3 per message, paired."""
    n, budget = case
    state, counter = agent_state(n), tokenizer("o200k_base", warm)
    encode = o200k().encode_ordinary
    history = langchain_history(n)

    def count(batch) -> int:
        return sum(len(encode(lc_body(m))) + 3 for m in batch)

    def ours():
        return core.messages(state, now=NOW, token_budget=budget, tokenizer=counter())

    def theirs():
        return messages_module.trim_messages(history, max_tokens=budget, strategy="last", token_counter=count)

    result = ours()
    assert request_problems(result.messages) == [] and result.tokens <= budget
    assert result.tokens == sum(
        len(encode(body_of(m) if m["role"] != "system" else m["content"])) + 3 for m in result.messages
    )
    benchmark.extra_info.update(kind=f"agent {'warm' if warm else 'cold'}", shape="o200k_base", n=n, budget=budget)
    paired(benchmark, ours, theirs, rounds=20 if n <= 1_000 else 8, warmup=1)


@pytest.mark.parametrize("name", ["estimator", "o200k_base"])
def test_agent_turn(benchmark, name):
    """A turn at 10,000 entries: add_messages what the user said, then get_messages(4,000) queried with it."""
    n = 10_000
    states = [agent_state(n)]
    counter = tokenizer(name)()
    lines = itertools.cycle(chat_queries(200, seed=99))
    moments = itertools.count(NOW + 1)
    core.messages(states[0], now=NOW, token_budget=4_000, tokenizer=counter)  # the counts of the store so far

    def turn():
        said, now = next(lines), next(moments)
        states[0], _, _ = core.add_messages(states[0], [{"role": "user", "content": said}], now=now)
        return core.messages(states[0], now=now, token_budget=4_000, query=said, tokenizer=counter)

    benchmark.extra_info.update(kind="agent turn", shape=name, n=n, budget=4_000)
    result = benchmark.pedantic(turn, rounds=1 if benchmark.disabled else 100)
    assert request_problems(result.messages) == [] and result.tokens <= 4_000
