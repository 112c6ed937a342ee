"""The LangChain adapter against a plain model of a chat history beside facts (LC-1 .. LC-6).

The model restates the rules in the plainest Python: a list of turns in
the order LC-1 shows them, a dict of facts, and the turn counter of ENT-16.
A state machine drives a real ``SentinelChatMessageHistory`` (sync and
async forms at random) and the model side by side; a property checks that
eviction takes turns oldest first and before facts of higher importance.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)

import sentinel_memory as sm
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
from sentinel_memory.serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK

ROLES = ["user", "assistant", "system", "tool", "critic", "human", "ai", "a: b"]
CHAT_ROLES = ["user", "assistant", "system", "developer"]  # what a ChatMessage may carry in (MSG-5); tool needs an id
texts = st.text(max_size=12)  # hypothesis's text has no lone surrogates
roles = st.one_of(st.sampled_from(ROLES), st.text(min_size=1, max_size=6))
blocks = st.lists(
    st.one_of(
        texts,
        texts.map(lambda t: {"type": "text", "text": t}),
        st.just({"type": "image_url", "image_url": {"url": "data:,"}}),
        st.just({"type": "reasoning", "reasoning": "hidden"}),
    ),
    max_size=4,
)
contents = st.one_of(texts, blocks)


@st.composite
def messages(draw: st.DrawFn) -> BaseMessage:
    """A message the adapter keeps: human, ai (a chunk too), system, or a ChatMessage of a chat role."""
    kind = draw(st.sampled_from(["human", "ai", "system", "chat"]))
    content = draw(contents)
    if kind == "chat":
        return ChatMessage(role=draw(st.sampled_from(CHAT_ROLES)), content=content)
    return {"human": HumanMessage, "ai": AIMessage, "system": SystemMessage}[kind](content=content)


refused = st.sampled_from(
    [
        ToolMessage("42", tool_call_id="call-1"),  # answers no open call (MSG-6)
        FunctionMessage(name="f", content="42"),
        AIMessage("", invalid_tool_calls=[{"name": "f", "args": "{", "id": "call-1", "error": None}]),
        ChatMessage(role="", content="no role"),
        ChatMessage(role="critic", content="not a chat role"),
        "not a message",
    ]
)


def model_text(content: Any) -> Any:
    """LC-2, INT-1 restated: a str as is; a list whole, each string as a text block; an empty list the empty text."""
    if isinstance(content, str) or not content:
        return content or ""
    return [{"type": "text", "text": b} if isinstance(b, str) else dict(b) for b in content]


def model_role(message: BaseMessage) -> str:
    """LC-2 restated: the role a message is stored with."""
    if isinstance(message, ChatMessage):
        return message.role
    return {"human": "user", "ai": "assistant", "system": "system"}[message.type]


def read_back(role: str, text: str) -> tuple[str, str, str]:
    """LC-1 restated: (type, role of a ChatMessage or "", content) of the message a turn reads back as."""
    known = {"user": "human", "assistant": "ai", "system": "system"}
    return (known[role], "", text) if role in known else ("chat", role, text)


def shape(message: BaseMessage) -> tuple[str, str, Any]:
    return (message.type, getattr(message, "role", ""), message.content)


def turn_n(key: str) -> int | None:
    """ENT-16 restated: N of a chat:N key with ASCII digits only, else None."""
    found = re.fullmatch(r"chat:([0-9]+)", key)
    return int(found.group(1)) if found else None


def legacy(data: Any) -> tuple[str, str] | tuple[str, str, str] | None:
    """MSG-1 restated: (role, content) of a message with a non-empty role, or of a "role: content" string of a chat role.

    A tool exchange the machine stored reads as (type, "", content) of its LangChain message (LC-1).
    """
    if isinstance(data, dict) and "tool_calls" in data:
        return ("ai", "", data["content"] or "")
    if isinstance(data, dict) and "tool_call_id" in data:
        return ("tool", "", data["content"])
    if isinstance(data, dict) and set(data) == {"role", "content"}:
        if isinstance(data["role"], str) and data["role"] and isinstance(data["content"], str | list):
            return data["role"], data["content"]
    if isinstance(data, str) and ": " in data:
        role, content = data.split(": ", 1)
        if role in ("user", "assistant", "system", "tool"):
            return role, content
    return None


class HistoryComparison(RuleBasedStateMachine):
    """The adapter and the model, step by step: add_messages, refused batches, clear, facts and hand-made chat keys."""

    def __init__(self) -> None:
        super().__init__()
        self.mem = sm.create_memory(limit=10_000, clock=lambda: 0, store=sm.MemoryStore(), autosave=True)
        self.history = SentinelChatMessageHistory(self.mem)
        self.entries: dict[str, Any] = {}  # key -> data, oldest first (a remember moves a key to the end)
        self.counter = 0  # ENT-16: the largest N stored

    def store(self, key: str, data: Any) -> None:
        self.entries.pop(key, None)
        self.entries[key] = data
        n = turn_n(key)
        if n is not None:
            self.counter = max(self.counter, n)

    def model_turns(self) -> list[tuple[str, str, str]]:
        turns = [(turn_n(k), legacy(d)) for k, d in self.entries.items()]
        shown = [(n, message) for n, message in turns if n is not None and message is not None]
        return [
            message if len(message) == 3 else read_back(*message) for _, message in sorted(shown, key=lambda t: t[0])
        ]

    def run(self, asynchronous: bool, name: str, *args: Any) -> Any:
        """Call the sync form, or its async form in an event loop (LC-4)."""
        if not asynchronous:
            return getattr(self.history, name)(*args) if name != "messages" else self.history.messages
        coroutine = {"messages": "aget_messages", "add_messages": "aadd_messages", "clear": "aclear"}[name]
        return asyncio.run(getattr(self.history, coroutine)(*args))

    @rule(batch=st.lists(messages(), max_size=4), asynchronous=st.booleans())
    def add_messages(self, batch: list[BaseMessage], asynchronous: bool) -> None:
        """LC-2, LC-4, ENT-16: each message becomes the next turn, {"role", "content"} under chat:N, in order."""
        self.run(asynchronous, "add_messages", batch)
        for message in batch:
            self.store(
                f"chat:{self.counter + 1}", {"role": model_role(message), "content": model_text(message.content)}
            )

    @rule(question=texts, answer=texts, calls=st.integers(1, 2), asynchronous=st.booleans())
    def add_a_tool_exchange(self, question: str, answer: str, calls: int, asynchronous: bool) -> None:
        """LC-2, LC-1, MSG-6: an AIMessage's tool calls and the ToolMessages answering them are kept with their ids."""
        ids = [f"call-{self.counter + 1}-{i}" for i in range(calls)]
        batch: list[BaseMessage] = [
            HumanMessage(question),
            AIMessage("", tool_calls=[{"name": "menu", "args": {"i": i}, "id": call} for i, call in enumerate(ids)]),
            *(ToolMessage(f"result {i}", tool_call_id=call) for i, call in enumerate(ids)),
            AIMessage(answer),
        ]
        self.run(asynchronous, "add_messages", batch)
        self.store(f"chat:{self.counter + 1}", {"role": "user", "content": question})
        self.store(
            f"chat:{self.counter + 1}",
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "menu", "arguments": f'{{"i": {i}}}'}}
                    for i, call in enumerate(ids)
                ],
            },
        )
        for i, call in enumerate(ids):
            self.store(f"chat:{self.counter + 1}", {"role": "tool", "content": f"result {i}", "tool_call_id": call})
        self.store(f"chat:{self.counter + 1}", {"role": "assistant", "content": answer})

    @rule(budget=st.integers(0, 120), system=st.sampled_from([None, "Be brief."]))
    def budgeted_view(self, budget: int, system: str | None) -> None:
        """LC-6, MSG-8, MSG-10, INT-2: get_messages of the history is the memory's get_messages with the adapters' cut read back, and a valid request."""
        try:
            view = self.history.get_messages(budget, system=system)
        except sm.TokenBudgetError:
            return
        defaults = {"cut": ADAPTER_CUT, "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}
        direct = self.mem.get_messages(token_budget=budget, system=system, **defaults).messages
        assert [m.type for m in view] == [
            {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}.get(m["role"], "chat")
            for m in direct
        ]
        # MSG-8, MSG-10: a valid request, or [] (flagged) when there is nothing to send
        assert sm.request_problems(convert_to_openai_messages(view)) == ([] if view else [sm.core.chat.EMPTY_REQUEST])

    @rule(batch=st.lists(messages(), max_size=3), bad=refused, at=st.integers(0, 3), asynchronous=st.booleans())
    def add_a_refused_batch(self, batch: list[BaseMessage], bad: Any, at: int, asynchronous: bool) -> None:
        """LC-2, LC-4: a batch holding tool traffic, an empty role or a non-message raises, and stores nothing."""
        batch.insert(min(at, len(batch)), bad)
        try:
            self.run(asynchronous, "add_messages", batch)
        except (TypeError, ValueError):
            pass
        else:
            raise AssertionError("the batch was stored")

    @rule(asynchronous=st.booleans())
    def clear(self, asynchronous: bool) -> None:
        """LC-3, LC-4: clear forgets exactly the turns; facts stay and the counter does not go back."""
        self.run(asynchronous, "clear")
        self.entries = {k: d for k, d in self.entries.items() if turn_n(k) is None or legacy(d) is None}

    @rule(
        key=st.one_of(st.sampled_from(["user:name", "note", "chat:x", "chat:\u0661", "chat:"]), st.text(max_size=4)),
        data=st.one_of(texts, st.integers(), st.just({"role": "user", "content": "shaped like a turn"})),
    )
    def remember_a_fact(self, key: str, data: Any) -> None:
        """LC-1, LC-3: entries that are not turns are never shown and never cleared, whatever their data."""
        if not key:
            return
        self.mem.remember(key, data)
        self.store(key, data)

    @precondition(lambda self: self.counter > 0)
    @rule(
        back=st.integers(0, 3),
        zeros=st.sampled_from(["", "0", "00"]),
        data=st.one_of(
            st.tuples(roles, texts).map(lambda rt: f"{rt[0]}: {rt[1]}"),
            st.tuples(roles, texts).map(lambda rt: {"role": rt[0], "content": rt[1]}),
            texts,
            st.just(": empty role"),
        ),
    )
    def remember_under_a_chat_key(self, back: int, zeros: str, data: Any) -> None:
        """LC-1, MSG-1: a chat:N written by hand (a legacy string, a message, leading zeros) is shown in the place of its N."""
        key = f"chat:{zeros}{max(1, self.counter - back)}"
        self.mem.remember(key, data)
        self.store(key, data)

    @invariant()
    def messages_are_the_model_turns(self) -> None:
        """LC-1, LC-2, LC-3, MSG-1: messages (sync and async) show the model's turns, by N, each by its role."""
        expected = self.model_turns()
        assert [shape(m) for m in self.history.messages] == expected
        assert [shape(m) for m in self.run(True, "messages")] == expected

    @invariant()
    def the_memory_holds_the_model(self) -> None:
        """LC-2, LC-3, ENT-16, MSG-5: the memory holds exactly the model's entries, turns as chat-completions messages."""
        assert dict(self.mem.items()) == self.entries


HistoryComparison.TestCase.settings = settings(HistoryComparison.TestCase.settings, max_examples=60)
TestHistoryComparison = HistoryComparison.TestCase


@settings(max_examples=60)
@given(
    steps=st.lists(
        st.one_of(
            st.lists(messages(), min_size=1, max_size=3),
            st.tuples(st.sampled_from(["name", "allergy", "city", "dish"]), st.floats(0.5, 1)),
            st.just("clear"),
        ),
        max_size=12,
    ),
    limit=st.integers(1, 6),
)
def test_lc_2_eviction_takes_turns_oldest_first_and_before_weightier_facts(steps, limit):
    """LC-2, LC-1, CMP-1, ENT-16: over its limit, a memory drops turns oldest first, and a fact of importance >= 0.5 only when no turn is left."""
    mem = sm.create_memory(limit=limit, clock=lambda: 0)
    history = SentinelChatMessageHistory(mem)
    all_turns: list[tuple[str, str, str]] = []
    facts: dict[str, float] = {}
    for step in steps:
        if step == "clear":
            history.clear()
            all_turns = []
        elif isinstance(step, tuple):
            mem.remember(step[0], "a fact", importance=step[1])
            facts[step[0]] = step[1]
        else:
            history.add_messages(step)
            all_turns += [read_back(model_role(m), model_text(m.content)) for m in step]
    shown = [shape(m) for m in history.messages]
    assert shown == all_turns[len(all_turns) - len(shown) :]  # the newest turns, in order
    assert len(mem) <= limit
    if any(key not in mem for key in facts):
        assert shown == []


PACKAGE = Path(sm.__file__).parent


@given(st.sampled_from(sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))))
def test_lc_5_no_module_but_the_adapter_reaches_langchain(module):
    """LC-5, DEP-1, FWT-3: no module of the package imports the adapters or langchain; the history and the memory tools import langchain_core alone, the middleware langchain too."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [
        ("." * node.level) + (node.module or "") + "." + alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    reaching = [name for name in names if "langchain" in name]
    if module == "integrations/langchain/__init__.py":
        assert reaching and all(name.startswith("langchain_core.") for name in reaching)
    elif module == "integrations/langchain/middleware.py":  # LC-7: the middleware alone needs langchain v1
        assert any(name.startswith("langchain.agents.") for name in reaching)
        assert all(name.startswith(("langchain_core.", "langchain.agents.")) for name in reaching)
    elif module == "integrations/tools/langchain.py":  # FWT-3: the memory tools need langchain_core alone
        assert reaching and all(name.startswith("langchain_core.") for name in reaching)
    else:
        assert reaching == []
