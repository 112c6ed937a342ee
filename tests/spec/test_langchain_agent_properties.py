"""LangChain v1 agents over a memory, against plain restatements (LC-7, LC-8, INT-1).

A property draws a conversation (questions in text or content blocks, each
answered with zero, one or two tool calls), a budget and a restart point, runs
it through ``create_agent`` with ``SentinelMemoryMiddleware`` over a scripted
model, and checks what the rules promise: every request the model received is
within the budget by the same tokenizer, valid, and holds its question as it
was asked; the memory, reopened, holds every message of every run once, in
order. Another draws content blocks of any JSON shape and checks they come
back equal through a store, and that a block with no JSON form stores nothing.
"""

from __future__ import annotations

from typing import Any

from agent_support import ScriptedToolModel, check_requests
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

import sentinel_memory as sm
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory, turns_from_messages
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

SYSTEM = "You are a concierge."
words = st.sampled_from(["risotto", "spa", "taxi", "breakfast", "pool", "view", "late", "quiet"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
blocks = st.one_of(
    st.text(max_size=8).map(lambda t: {"type": "text", "text": t}),
    st.builds(
        lambda kind, extra: {"type": kind, **extra},
        st.sampled_from(["image", "file", "audio", "reasoning", "x-provider"]),
        st.dictionaries(st.sampled_from(["url", "id", "base64", "data", "summary"]), json_values, max_size=3),
    ),
)


def tokenizer(text: str) -> int:
    return sm.estimate_tokens(text)


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: open"


@st.composite
def conversations(draw: st.DrawFn) -> list[tuple[Any, int]]:
    """Turns: the question's content (a str or blocks with an image) and how many tools the model calls after it."""
    turns = []
    for turn in range(1, draw(st.integers(2, 8)) + 1):
        text = f"turn {turn}: " + " ".join(draw(st.lists(words, min_size=1, max_size=4)))
        image = draw(st.booleans())
        content: Any = (
            [{"type": "text", "text": text}, {"type": "image", "url": f"https://x/{turn}.png"}] if image else text
        )
        turns.append((content, draw(st.integers(0, 2))))
    return turns


@settings(max_examples=25, deadline=None)
@given(conversation=conversations(), budget=st.integers(90, 400), restart=st.integers(0, 8), facts=st.booleans())
def test_lc_7_lc_8_int_1_every_request_is_within_the_budget_valid_and_nothing_acknowledged_is_lost(
    conversation, budget, restart, facts
):
    """LC-7, LC-8, LC-12, INT-1, MSG-8, MSG-9: over any conversation, budget and restart, each request fits, is valid and holds its question as asked; the memory holds every message of the runs that succeeded once, in order."""
    store = sm.MemoryStore()
    memory = sm.create_memory(store=store, autosave=True)
    if facts:
        memory.remember("user:name", "Jakub", importance=1)
    plan = {turn: count for turn, (_, count) in enumerate(conversation, 1)}

    def script(turn: int) -> list[tuple[str, dict[str, Any]]]:
        return [("lookup", {"topic": f"t{turn}-{i}"}) for i in range(plan.get(turn, 0))]

    def agent_over(memory: sm.Memory, model: ScriptedToolModel) -> Any:
        middleware = SentinelMemoryMiddleware(memory, budget, tokenizer=tokenizer, must_keep=0.9 if facts else None)
        return create_agent(model, tools=[lookup], system_prompt=SYSTEM, middleware=[middleware])

    model = ScriptedToolModel(script=script)
    agent = agent_over(memory, model)
    expected: list[dict[str, Any]] = []
    seen: list[Any] = []
    for turn, (content, _) in enumerate(conversation, 1):
        if turn == restart:
            seen += model.seen
            model = ScriptedToolModel(script=script)
            agent = agent_over(sm.create_memory(store=store, autosave=True), model)
        before = len(model.seen)
        try:
            state = agent.invoke({"messages": [HumanMessage(content=content)]})
        except sm.TokenBudgetError:
            # LC-12: a run refused at any of its model calls stores nothing of itself; LC-7: every call it
            # made held its question (the tools' schemas, LC-13, may leave a later call of the run no room).
            for request in model.seen[before:]:
                assert [m for m in request if isinstance(m, HumanMessage)][-1].content == content
            continue
        expected += turns_from_messages(state["messages"])
        for request in model.seen[before:]:
            assert [m for m in request if isinstance(m, HumanMessage)][-1].content == content
    seen += model.seen
    check_requests(seen, budget, tokenizer, system=SYSTEM, fact="user:name: Jakub" if facts else None)
    reopened = sm.create_memory(store=store)
    assert [data for key, data in reopened.items() if key.startswith("chat:")] == expected


@settings(max_examples=60, deadline=None)
@given(content=st.lists(st.one_of(st.text(max_size=6), blocks), min_size=1, max_size=4), bad=st.booleans())
def test_int_1_lc_2_blocks_come_back_as_they_came_or_the_batch_is_refused(content, bad):
    """INT-1, LC-2, LC-1: content blocks of any JSON shape are read back equal through a store; one holding bytes is refused and nothing is stored."""
    store = sm.MemoryStore()
    history = SentinelChatMessageHistory(sm.create_memory(store=store, autosave=True))
    if bad:
        content = [*content, {"type": "image", "base64": b"\x89PNG"}]
        try:
            history.add_messages([HumanMessage("first"), HumanMessage(content=content)])
        except TypeError as error:
            assert f"messages[1] (HumanMessage).content[{len(content) - 1}]" in str(error)
        else:
            raise AssertionError("a block holding bytes was stored")
        assert list(sm.create_memory(store=store)) == []
        return
    history.add_messages([HumanMessage(content=content)])
    read = SentinelChatMessageHistory(sm.create_memory(store=store)).messages
    as_blocks = [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]
    assert read == [HumanMessage(content=as_blocks)]
