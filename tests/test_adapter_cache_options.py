"""The adapters pass the cut, the facts' place and the clearing on to every request (INT-2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_support import ScriptedToolModel
from langchain.agents import create_agent
from langchain_core.messages import SystemMessage, ToolMessage, convert_to_openai_messages
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import sentinel_memory as sm
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.openai_agents import SentinelSession, SentinelSessions
from sentinel_memory.integrations.pydantic_ai import SentinelHistory
from sentinel_memory.serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK

NOW = 1_000_000
LONG = "rain and wind all day long in the city, " * 6
FACT = "user:allergy: allergic to peanuts"
#: INT-2: what the middleware, SentinelHistory and the chat history pass to get_messages unless told otherwise.
ADAPTER_DEFAULTS = {"cut": ADAPTER_CUT, "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}


def agent_memory(units: int = 6) -> sm.Memory:
    """A memory with a must-keep fact and a past run of ``units`` tool calls with long results."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.add_turn("user", "turn 1: what is the weather this week?")
    for n in range(units):
        call = {"id": f"old-{n}", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        mem.add_messages(
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"old-{n}", "content": f"day {n}: {LONG}"},
            ]
        )
    mem.add_turn("assistant", "Rainy, mostly.")
    return mem


def test_int_2_the_langchain_middleware_clears_old_results_and_puts_the_facts_last():
    """INT-2, MSG-15, MSG-12: the model gets cleared old results, paired with their calls, and the facts after the history."""
    mem = agent_memory()
    model = ScriptedToolModel(script=lambda turn: [])
    middleware = SentinelMemoryMiddleware(
        mem, 300, tokenizer=sm.estimate_tokens, must_keep=0.9, cut="stable", keep_results=1, facts_at="end"
    )
    create_agent(model, system_prompt="Be brief.", middleware=[middleware]).invoke(
        {"messages": [{"role": "user", "content": "turn 2: and tomorrow?"}]}
    )
    seen = model.seen[0]
    results = [m for m in seen if isinstance(m, ToolMessage)]
    assert results and {m.content for m in results} == {"[cleared]"}
    assert [m.tool_call_id for m in results] == [f"old-{n}" for n in range(6)]  # cleared, so all six fit
    assert seen[0] == SystemMessage("Be brief.") and isinstance(seen[-1], SystemMessage) and seen[-1].content == FACT
    sent = convert_to_openai_messages(seen)
    assert not sm.request_problems(sent)
    assert sum(sm.estimate_tokens(m["content"] or "") + 3 for m in sent) <= 300
    plain = ScriptedToolModel(script=lambda turn: [])
    create_agent(
        plain, system_prompt="Be brief.", middleware=[SentinelMemoryMiddleware(mem, 300, must_keep=0.9)]
    ).invoke({"messages": [{"role": "user", "content": "turn 3: and the day after?"}]})
    assert not any(isinstance(m, ToolMessage) for m in plain.seen[0])  # without clearing the old run is dropped


def test_int_2_the_langchain_middleware_cuts_at_marks_unless_told_newest():
    """INT-2, MSG-11: the middleware's requests are get_messages with the adapters' stable cut by default, MSG-2's fill with cut='newest' or None."""
    starts = set()
    for options, expected in (
        ({}, ADAPTER_DEFAULTS),
        ({"cut": "newest"}, {"cut": "newest", "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}),
        ({"cut": None}, {"cut": None, "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}),
    ):
        mem = agent_memory(units=0)
        for n in range(40):
            mem.add_turn("user", f"question {n} " + "word " * 10)
            mem.add_turn("assistant", f"answer {n} " + "word " * 10)
        model = ScriptedToolModel(script=lambda turn: [])
        create_agent(model, middleware=[SentinelMemoryMiddleware(mem, 200, **options)]).invoke(
            {"messages": [{"role": "user", "content": "turn 3: and now?"}]}
        )
        want = mem.get_messages(token_budget=200, query="turn 3: and now?", **expected)
        first = convert_to_openai_messages(model.seen[0])[1]  # after the facts' system message
        assert first["content"] == want.messages[1]["content"]
        starts.add(first["content"])
    assert len(starts) == 2  # the stable cut starts elsewhere than the newest-first fill here


def test_int_2_bad_options_are_refused_when_the_adapter_is_made():
    """INT-2: a cut or facts_at that is not one of its names, and exclude_tools that is not a list of str, raise at once."""
    mem = agent_memory(units=0)
    with pytest.raises(ValueError, match="cut must be one of"):
        SentinelMemoryMiddleware(mem, 300, cut="oldest")
    with pytest.raises(ValueError, match="facts_at must be one of"):
        SentinelHistory(mem, 300, facts_at="middle")
    with pytest.raises(TypeError, match="exclude_tools must be a list or tuple"):
        SentinelHistory(mem, 300, exclude_tools="weather")
    with pytest.raises(ValueError, match="cut must be one of"):
        SentinelSession("s", memory=mem, token_budget=300, cut="oldest")
    with pytest.raises(ValueError, match="cut must be one of"):
        SentinelSessions(sm.MemoryFolder.__new__(sm.MemoryFolder), cut="oldest")


def test_int_2_pydantic_ai_history_clears_old_results_before_dropping_them():
    """INT-2, MSG-15: the FunctionModel gets the old run's returns as '[cleared]', each after its call, and the question."""
    mem = agent_memory()
    requests: list[list[Any]] = []

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        requests.append(list(messages))
        return ModelResponse(parts=[TextPart("Sunny.")])

    history = SentinelHistory(
        mem, 300, must_keep=0.9, system="Be brief.", cut="stable", keep_results=1, exclude_tools=["calendar"]
    )
    Agent(FunctionModel(script), capabilities=[history]).run_sync("turn 2: and tomorrow?")
    sent = requests[0]
    returns = [p for m in sent if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    calls = [p for m in sent if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    assert [p.content for p in returns] == ["[cleared]"] * 6
    assert [p.tool_call_id for p in returns] == [p.tool_call_id for p in calls] == [f"old-{n}" for n in range(6)]
    assert [p.tool_name for p in returns] == ["weather"] * 6
    assert isinstance(sent[0].parts[0], SystemPromptPart) and FACT in sent[0].parts[0].content
    assert any(isinstance(p, UserPromptPart) and p.content == "turn 2: and tomorrow?" for p in sent[-1].parts)
    stored = [mem.get(f"chat:{n}") for n in range(3, 14, 2)]
    assert all(s["content"] != "[cleared]" for s in stored)  # the memory keeps every result whole


def test_int_2_the_agents_sdk_session_cuts_at_marks_by_default():
    """INT-2, OAI-3, MSG-11: the session's budgeted items are get_messages(cut='stable', low_mark=0.5) by default, MSG-2's when told cut='newest' or None."""
    mem = sm.create_memory(clock=lambda: NOW)
    for n in range(40):
        mem.add_turn("user", f"question {n} " + "word " * 10)
        mem.add_turn("assistant", f"answer {n} " + "word " * 10)
    for options, cut in (({}, "stable"), ({"cut": "newest"}, "newest"), ({"cut": None}, None)):
        items = asyncio.run(SentinelSession("s", memory=mem, token_budget=200, **options).get_items())
        want = mem.get_messages(token_budget=200, cut=cut, low_mark=0.5 if cut == "stable" else None)
        assert [i["content"] for i in items] == [m["content"] for m in want.messages]
    stable = asyncio.run(SentinelSession("s", memory=mem, token_budget=200).get_items())
    newest = asyncio.run(SentinelSession("s", memory=mem, token_budget=200, cut="newest").get_items())
    assert stable[0] != newest[0]


def sdk_session_memory(units: int = 6) -> sm.Memory:
    """A memory whose past run, stored by a session as SDK items, made ``units`` calls with long outputs."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    session = SentinelSession("s", memory=mem)
    items: list[dict[str, Any]] = [{"role": "user", "content": "turn 1: what is the weather this week?"}]
    for n in range(units):
        name = "calendar" if n == units - 2 else "weather"
        items.append({"type": "function_call", "call_id": f"old-{n}", "name": name, "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"old-{n}", "output": f"day {n}: {LONG}"})
    items.append({"role": "assistant", "content": [{"type": "output_text", "text": "Rainy, mostly."}]})
    asyncio.run(session.add_items(items))
    return mem


def test_int_2_the_agents_sdk_session_clears_old_outputs_and_puts_the_facts_last():
    """INT-2, OAI-13, MSG-15, MSG-12: through the Runner the model gets old outputs cleared, paired, and the facts after the history."""
    from agents import Agent as SdkAgent
    from agents import RunConfig, Runner
    from server_support import EchoModel

    mem = sdk_session_memory()
    stored = SentinelSession("s", memory=mem).items()
    session = SentinelSession(
        "s",
        memory=mem,
        token_budget=300,
        tokenizer=sm.estimate_tokens,
        must_keep=0.9,
        system="Be brief.",
        cut="stable",
        keep_results=1,
        facts_at="end",
        exclude_tools=["calendar"],
    )
    model = EchoModel()
    asyncio.run(
        Runner.run(SdkAgent(name="a", model=model), "turn 2: and tomorrow?", session=session, run_config=RunConfig())
    )
    sent = model.last_input
    outputs = [item for item in sent if item.get("type") == "function_call_output"]
    calls = [item for item in sent if item.get("type") == "function_call"]
    assert (
        [item["call_id"] for item in outputs] == [item["call_id"] for item in calls] == [f"old-{n}" for n in range(6)]
    )
    assert [item["output"] for item in outputs] == ["[cleared]"] * 4 + [f"day 4: {LONG}", "[cleared]"]  # calendar kept
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[-2] == {"role": "system", "content": FACT}  # after the history, before the new question
    assert sent[-1]["content"] == "turn 2: and tomorrow?"
    assert SentinelSession("s", memory=mem).items()[: len(stored)] == stored  # the stored outputs are whole
    plain = asyncio.run(SentinelSession("s", memory=mem, token_budget=300, must_keep=0.9).get_items())
    assert not any(item.get("type") == "function_call_output" for item in plain)  # without clearing they are dropped


def test_int_2_the_agents_sdk_session_puts_the_facts_at_the_start_when_told():
    """INT-2, OAI-13, MSG-12: facts_at='start' gives the facts a system item of their own right after the system prompt's."""
    mem = sdk_session_memory(units=0)
    for where, heads in (
        ("start", ["Be brief.", FACT]),
        ("system", [f"Be brief.\n\n{FACT}"]),
        (None, [f"Be brief.\n\n{FACT}"]),
    ):
        items = SentinelSession(
            "s", memory=mem, token_budget=300, must_keep=0.9, system="Be brief.", facts_at=where
        ).budgeted_items()
        want = mem.get_messages(token_budget=300, must_keep=0.9, system="Be brief.", facts_at=where)
        assert [item["content"] for item in items[: len(heads)]] == heads
        assert [item["role"] for item in items] == [m["role"] for m in want.messages]  # one item a message here


def test_int_2_the_agents_sdk_sessions_pass_the_options_to_each_session(tmp_path):
    """INT-2, OAI-7, OAI-13: SentinelSessions gives every session its facts_at, keep_results and exclude_tools."""
    sessions = SentinelSessions(
        tmp_path / "users", token_budget=300, facts_at="end", keep_results=1, exclude_tools=["x"]
    )
    session = sessions.session("ann")
    assert session._cut == {
        "cut": "stable",
        "low_mark": 0.5,
        "facts_at": "end",
        "keep_results": 1,
        "exclude_tools": ["x"],
    }
    session.memory.remember("user:allergy", "allergic to peanuts", importance=1.0)
    asyncio.run(session.add_items([{"role": "user", "content": "Hi"}]))
    assert (
        asyncio.run(sessions.session("ann").get_items())[-1]["content"]
        == FACT.split(": ", 1)[0] + ": allergic to peanuts"
    )
    sessions.close()


def test_int_2_the_agents_sdk_session_refuses_bad_cache_options_when_made(tmp_path):
    """INT-2, OAI-13: a facts_at that is not one of its names or exclude_tools that is not a list of str raise at once, nothing opened."""
    mem = agent_memory(units=0)
    with pytest.raises(ValueError, match="facts_at must be one of"):
        SentinelSession("s", memory=mem, token_budget=300, facts_at="middle")
    with pytest.raises(TypeError, match="exclude_tools must be a list or tuple"):
        SentinelSession("s", memory=mem, token_budget=300, exclude_tools="weather")
    with pytest.raises(TypeError, match=r"exclude_tools\[0\] must be a str"):
        SentinelSession("s", tmp_path / "never", token_budget=300, exclude_tools=[1])
    with pytest.raises(ValueError, match="facts_at must be one of"):
        SentinelSessions(tmp_path / "never", facts_at="middle")
    assert not (tmp_path / "never").exists()
