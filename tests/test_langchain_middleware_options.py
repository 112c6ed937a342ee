"""The agent middleware's options reach the memory: the newest question, ttl, facts_share, from_folder's must_keep, the async hooks (LC-7, LC-8)."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

import pytest
from agent_support import ScriptedToolModel
from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware
from langchain_core.messages import HumanMessage, SystemMessage

import sentinel_memory as sm
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

NOW = 1_000_000
CONVERSATION = [
    {"role": "user", "content": "when does the spa open?"},
    {"role": "assistant", "content": "At nine."},
    {"role": "user", "content": "does the risotto have nuts?"},
]


def with_facts(mem: sm.Memory) -> sm.Memory:
    mem.remember("spa:hours", "the spa opens at nine every morning", importance=0.5)
    mem.remember("menu:risotto", "the risotto has no nuts at all", importance=0.5)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    return mem


def first_request(middleware: SentinelMemoryMiddleware) -> tuple[str, ScriptedToolModel]:
    """The system message the model got for CONVERSATION, and the model."""
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(model, system_prompt="Be brief.", middleware=[middleware])
    agent.invoke({"messages": CONVERSATION})
    return str(model.seen[0][0].content), model


def test_lc_7_the_newest_question_of_the_request_ranks_the_facts_not_the_first():
    """LC-7: with two questions in the request and room for one fact, the fact the newest asks about is sent."""
    mem = with_facts(sm.create_memory(clock=lambda: NOW))
    system, _ = first_request(SentinelMemoryMiddleware(mem, 32, tokenizer=sm.estimate_tokens))
    assert system == "Be brief.\n\nmenu:risotto: the risotto has no nuts at all"


def test_lc_8_the_recorded_turns_live_for_the_middlewares_ttl():
    """LC-8, ENT-16: the turns the middleware records expire after its ttl; without one they never do."""
    mem = with_facts(sm.create_memory(clock=lambda: NOW))
    first_request(SentinelMemoryMiddleware(mem, 60, tokenizer=sm.estimate_tokens, ttl=60_000, importance=0.4))
    turns = [mem.get_entry(f"chat:{n}") for n in (1, 2, 3, 4)]
    assert [(e.expires_at, e.importance) for e in turns] == [(NOW + 60_000, 0.4)] * 4
    other = with_facts(sm.create_memory(clock=lambda: NOW))
    first_request(SentinelMemoryMiddleware(other, 60, tokenizer=sm.estimate_tokens))
    assert other.get_entry("chat:1").expires_at is None


def test_lc_7_facts_share_gives_the_facts_their_share_of_the_budget():
    """LC-7, MSG-2: facts_share=0.9 sends the facts get_messages gives at that share, more than the default's."""
    mem = with_facts(sm.create_memory(clock=lambda: NOW))
    default, _ = first_request(SentinelMemoryMiddleware(mem, 50, tokenizer=sm.estimate_tokens))
    mem = with_facts(sm.create_memory(clock=lambda: NOW))
    shared, _ = first_request(SentinelMemoryMiddleware(mem, 50, tokenizer=sm.estimate_tokens, facts_share=0.9))
    assert "user:allergy" not in default and shared.endswith("user:allergy: allergic to peanuts")


def test_lc_7_from_folder_keeps_must_keep_and_the_other_options(tmp_path):
    """LC-7, FLD-2, INT-2: from_folder passes must_keep, cut (and the rest) on: the must-keep fact is sent where the query would rank others first."""
    middleware = SentinelMemoryMiddleware.from_folder(
        tmp_path, "guest", 40, tokenizer=sm.estimate_tokens, must_keep=0.9, ttl=60_000, importance=0.4, cut="newest"
    )
    with_facts(middleware.memory)
    system, _ = first_request(middleware)
    assert system == "Be brief.\n\nmenu:risotto: the risotto has no nuts at all\nuser:allergy: allergic to peanuts"
    entry = middleware.memory.get_entry("chat:1")
    assert entry.importance == 0.4 and entry.expires_at == entry.created_at + 60_000


def test_lc_8_an_async_agent_records_the_question_before_the_model_call():
    """LC-8: with ainvoke the question is a turn before the first model call, so the model is sent it."""
    mem = sm.create_memory(clock=lambda: NOW)
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(model, middleware=[SentinelMemoryMiddleware(mem, 100)])
    stored_before_call: list[Any] = []
    generate = model._generate

    def noting(messages: Any, *args: Any, **kwargs: Any) -> Any:
        stored_before_call.append(dict(mem.items()))
        return generate(messages, *args, **kwargs)

    object.__setattr__(model, "_generate", noting)
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "turn 1: hello?"}]}))
    assert stored_before_call == [{"chat:1": {"role": "user", "content": "turn 1: hello?"}}]
    assert isinstance(model.seen[0][-1], HumanMessage) and model.seen[0][-1].content == "turn 1: hello?"
    assert mem["chat:2"]["content"] == "Answer 1: nothing to look up."


def test_lc_7_the_middleware_says_what_it_needs():
    """LC-7, LC-9: a memory that is neither a Memory nor a folder of memories is refused with a TypeError that says what to pass and what was given; the repr names the memory and budget."""
    with pytest.raises(TypeError) as raised:
        SentinelMemoryMiddleware(5, 100)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "memory must be a Memory (create_memory(), MemoryFolder.open()) or a MemoryFolder / "
        "RedisMemories for one agent of many users, got 5"
    )
    mem = sm.create_memory()
    assert repr(SentinelMemoryMiddleware(mem, 100)) == f"SentinelMemoryMiddleware({mem!r}, token_budget=100)"


def test_lc_5_without_langchain_the_middleware_says_how_to_install_it(monkeypatch):
    """LC-5: with langchain (v1) missing, importing the middleware raises ImportError whose whole text names the extra."""
    for name in [m for m in sys.modules if m == "langchain" or m.startswith("langchain.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langchain", None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.langchain.middleware", raising=False)
    with pytest.raises(ImportError) as raised:
        importlib.import_module("sentinel_memory.integrations.langchain.middleware")
    assert str(raised.value) == (
        "sentinel_memory.integrations.langchain.middleware needs langchain (v1); "
        "install it with: pip install 'sentinel-memory[langchain]'"
    )


class Capture(AgentMiddleware):  # type: ignore[type-arg]
    """A middleware inside the memory's: it keeps every request as the memory's middleware hands it on."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return handler(request)


def test_lc_7_a_system_prompt_of_text_blocks_is_the_system_message_and_the_rest_are_messages():
    """LC-7: a system prompt of str and text blocks is read as its text; the request's system_message is the system message, its messages the rest."""
    capture = Capture()
    prompt = SystemMessage(content=[{"type": "text", "text": "Be brief. "}, "Answer in Czech."])
    agent = create_agent(
        ScriptedToolModel(script=lambda turn: []),
        system_prompt=prompt,
        middleware=[SentinelMemoryMiddleware(sm.create_memory(), 100), capture],
    )
    agent.invoke({"messages": [{"role": "user", "content": "turn 1"}]})
    (request,) = capture.requests
    assert request.system_message.content == "Be brief. Answer in Czech."
    assert [(type(m), m.content) for m in request.messages] == [(HumanMessage, "turn 1")]


def test_lc_7_without_a_system_prompt_or_facts_the_request_has_no_system_message():
    """LC-7: with no system prompt and no facts, the request's system_message is None and its first message the question."""
    capture = Capture()
    agent = create_agent(
        ScriptedToolModel(script=lambda turn: []),
        middleware=[SentinelMemoryMiddleware(sm.create_memory(), 100), capture],
    )
    agent.invoke({"messages": [{"role": "user", "content": "turn 1"}]})
    (request,) = capture.requests
    assert request.system_message is None
    assert [(type(m), m.content) for m in request.messages] == [(HumanMessage, "turn 1")]


def test_lc_7_a_system_prompt_with_an_image_block_is_refused_with_the_whole_reason():
    """LC-7: a system prompt holding a block that is not text raises TypeError whose text says why and what to pass."""
    prompt = SystemMessage(content=[{"type": "text", "text": "Be brief."}, {"type": "image", "url": "https://x/a.png"}])
    agent = create_agent(
        ScriptedToolModel(script=lambda turn: []),
        system_prompt=prompt,
        middleware=[SentinelMemoryMiddleware(sm.create_memory(), 100)],
    )
    with pytest.raises(TypeError) as raised:
        agent.invoke({"messages": [{"role": "user", "content": "turn 1"}]})
    assert str(raised.value) == (
        "the agent's system message has content blocks that are not text, which the memory's "
        "system message cannot carry; pass create_agent a str system_prompt"
    )
