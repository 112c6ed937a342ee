"""What a request hands out is the caller's own, though the adapters build it from the stored data (MSG-18, PAI-12, OAI-12)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
from agents import Agent as SdkAgent
from agents import RunConfig, Runner
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from server_support import EchoModel

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.openai_agents import SentinelSession
from sentinel_memory.integrations.pydantic_ai import SentinelHistory, messages_from_turns, turns_from_messages

NOW = 1_000_000
LONG = "rain and wind all day long in the city, " * 6
FACT = "user:allergy: allergic to peanuts"


def tool_memory() -> sm.Memory:
    """A memory of a question, a tool call whose result is a list of content parts, and an answer."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_turn("user", "What is the weather?")
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Brno"}'}}
    mem.add_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "4 °C"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Cold."}]},
        ]
    )
    return mem


def test_msg_18_a_changed_result_changes_neither_its_entries_nor_the_memory_nor_the_next_result():
    """MSG-18, ENT-3: every message and entry of get_messages is a new copy, apart from each other and from the store."""
    mem = tool_memory()
    first = mem.get_messages(token_budget=500)
    before = copy.deepcopy(mem.get_messages(token_budget=500))
    tool = next(m for m in first.messages if m["role"] == "tool")
    entry = next(e for e in first.entries if e.data.get("role") == "tool")
    assert tool is not entry.data and tool == entry.data
    tool["content"][0]["text"] = "changed"
    tool["tool_call_id"] = "changed"
    entry.data["content"].append({"type": "text", "text": "more"})
    first.messages[1]["tool_calls"][0]["function"]["name"] = "changed"
    assert entry.data["content"][0]["text"] == "4 °C"  # the message and its entry share nothing
    assert mem.get_messages(token_budget=500) == before
    assert mem.get("chat:3") == before.messages[2]


def test_msg_18_shared_messages_build_the_same_request_from_the_stored_data():
    """MSG-18: core.shared_messages is messages without the copies: equal results, the stored data read and not copied."""
    mem = tool_memory()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for options in ({}, {"cut": "stable", "facts_at": "end"}, {"keep_results": 0}, {"facts_at": "start"}):
        shared = core.shared_messages(mem.state, now=NOW, token_budget=60, must_keep=0.9, **options)
        copied = core.messages(mem.state, now=NOW, token_budget=60, must_keep=0.9, **options)
        assert shared == copied
        stored = {id(entry.data) for entry in mem.state.entries.values() if isinstance(entry.data, dict)}
        assert any(id(entry.data) in stored for entry in shared.entries)
        assert not any(id(entry.data) in stored for entry in copied.entries)
        assert not any(id(message) in stored for message in copied.messages)


def test_pai_12_a_changed_view_changes_neither_the_memory_nor_the_next_view():
    """PAI-12, INT-1: the view's messages are new each call; changing one, its parts or their content changes nothing stored."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    history.record(
        [
            ModelRequest(parts=[UserPromptPart("Weather in Brno?")]),
            ModelResponse(parts=[TextPart("Looking."), ToolCallPart("weather", {"city": "Brno"}, tool_call_id="c1")]),
            ModelRequest(parts=[ToolReturnPart("weather", {"temp": [4, "°C"]}, tool_call_id="c1")]),
            ModelResponse(parts=[TextPart("Cold.")]),
        ]
    )
    first = history.view()
    again = history.view()
    assert first == again
    assert all(a is not b for a, b in zip(first, again, strict=True))
    assert all(a is not b for x, y in zip(first, again, strict=True) for a, b in zip(x.parts, y.parts, strict=True))
    snapshot = copy.deepcopy(again)
    call = first[1].parts[1]
    call.args["city"] = "Praha"
    first[2].parts[0].content["temp"].append("changed")
    first[0].parts[0].content = "changed"
    first[3].parts.append(TextPart("more"))
    first[3].usage.input_tokens = 99
    assert history.view() == snapshot
    assert mem.get("chat:2") == turns_from_messages([snapshot[1]])[0]


def test_pai_12_a_turn_changed_in_the_memory_is_read_anew():
    """PAI-12: what a view made of a stored turn is used again only for that very data; a turn stored anew reads as it is now."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    history.record([ModelRequest(parts=[UserPromptPart("Hi")]), ModelResponse(parts=[TextPart("Hello!")])])
    assert history.view()[1].parts[0].content == "Hello!"
    [turn] = turns_from_messages([ModelResponse(parts=[TextPart("Hello again!")])])
    mem.remember("chat:2", turn)
    assert history.view()[1].parts[0].content == "Hello again!"


def test_pai_12_a_group_that_lost_a_turn_is_read_anew():
    """PAI-12: a message's group found again with a turn less (one forgotten) is another group: the view reads what is left."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    history.record(
        [
            ModelRequest(parts=[UserPromptPart("Weather in Brno?")]),
            ModelResponse(parts=[ToolCallPart("weather", {"city": "Brno"}, tool_call_id="c1")]),
            ModelRequest(parts=[ToolReturnPart("weather", "4 °C", tool_call_id="c1"), UserPromptPart("And Praha?")]),
        ]
    )
    assert [type(p).__name__ for p in history.view()[-1].parts] == ["ToolReturnPart", "UserPromptPart"]
    assert mem.forget("chat:4")  # the user turn of the last message: its tool turn is left alone
    last = history.view()[-1]
    assert [type(p).__name__ for p in last.parts] == ["ToolReturnPart"]
    assert history.view() == messages_from_turns(mem.get_messages(token_budget=2_000).messages)


def test_pai_12_a_view_after_another_writer_reads_the_reloaded_turns(tmp_path: Path):
    """PAI-12: after another writer's change is reloaded, the view is the memory's request read back anew, every step."""
    mine = SentinelHistory.from_folder(tmp_path, "u", 2_000)
    other = SentinelHistory.from_folder(tmp_path, "u", 2_000)
    mine.record([ModelRequest(parts=[UserPromptPart("Hi")]), ModelResponse(parts=[TextPart("Hello!")])])
    assert [p.content for m in mine.view() for p in m.parts] == ["Hi", "Hello!"]
    for n in range(3):
        other.record([ModelRequest(parts=[UserPromptPart(f"question {n}")])])
        expected = messages_from_turns(other.memory.get_messages(token_budget=2_000).messages)
        assert mine.view() == expected
        assert mine.view()[-1].parts[0].content == f"question {n}"
        other.record([ModelResponse(parts=[TextPart(f"answer {n}")])])


def test_oai_12_changed_items_change_neither_the_memory_nor_the_next_read():
    """OAI-12, INT-1: get_items (all, limited, budgeted) gives new items each call; changing them changes nothing stored."""
    mem = sm.create_memory(clock=lambda: NOW)
    session = SentinelSession("s", memory=mem, token_budget=500)
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "4 °C"}]},
    ]
    asyncio.run(session.add_items(items))
    for read in (lambda: session.items(), lambda: session.items(2), lambda: session.budgeted_items()):
        got = read()
        assert got == read()
        for item in got:
            for value in item.values():
                if isinstance(value, list):
                    value.append("changed")
            item["type"] = "changed"
        assert read() == [i for i in items[-len(got) :]] and session.items() == items


def test_oai_12_a_turn_changed_in_the_memory_is_read_anew():
    """OAI-12: a session's kept items of a turn serve only that very data; a turn stored anew reads as it is now."""
    mem = sm.create_memory(clock=lambda: NOW)
    session = SentinelSession("s", memory=mem)
    asyncio.run(session.add_items([{"role": "user", "content": "Hi"}]))
    assert session.items() == [{"role": "user", "content": "Hi"}]
    mem.add_turn("user", "Hello?")
    asyncio.run(session.pop_item())
    asyncio.run(session.pop_item())
    asyncio.run(session.add_items([{"role": "user", "content": "Hi again"}]))
    assert session.items() == [{"role": "user", "content": "Hi again"}]


def test_msg_18_the_middleware_gives_the_model_new_messages_each_call():
    """MSG-18, LC-7: the middleware's request is built from the stored data; the model changing its messages changes nothing stored."""
    from langchain.agents import create_agent
    from server_support import EchoChatModel

    mem = tool_memory()
    before = {key: copy.deepcopy(mem.get(key)) for key in mem.keys()}
    seen: list[Any] = []

    class Spoiling(EchoChatModel):  # type: ignore[misc]
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            seen.append([m.model_copy(deep=True) for m in messages])
            for message in messages:
                if isinstance(message.content, list):
                    message.content.append({"type": "text", "text": "changed"})
                message.content = message.content if isinstance(message.content, list) else "changed"
            return super()._generate(messages, *args, **kwargs)

    agent = create_agent(Spoiling(), middleware=[SentinelMemoryMiddleware(mem, 500)])
    agent.invoke({"messages": [{"role": "user", "content": "And tomorrow?"}]})
    agent.invoke({"messages": [{"role": "user", "content": "And after?"}]})
    assert {key: mem.get(key) for key in before} == before
    assert [m.content for m in seen[1][: len(seen[0]) - 1]] == [m.content for m in seen[0][:-1]]


def test_oai_12_the_runner_reads_a_long_session_as_it_is():
    """OAI-12, OAI-1: through the Runner, the model gets every stored item as it came, read after read."""
    session = SentinelSession("s", memory=sm.create_memory(clock=lambda: NOW))
    model = EchoModel()
    agent = SdkAgent(name="a", model=model)
    config = RunConfig(tracing_disabled=True)
    for n in range(3):
        asyncio.run(Runner.run(agent, f"question {n}", session=session, run_config=config))
    assert [item.get("content") for item in model.last_input if item.get("role") == "user"] == [
        "question 0",
        "question 1",
        "question 2",
    ]
    assert session.items()[:2] == [model.last_input[0], model.last_input[1]]


def test_msg_18_a_turn_read_once_is_read_anew_when_changed_and_forgotten_when_gone():
    """MSG-18: the walk's memo of each turn's message follows the entry: a changed turn reads as it is now, a forgotten one is dropped."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_messages([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
    mem.add_turn("assistant", "Hello!")
    assert [m["content"] for m in mem.get_messages(token_budget=100).messages] == [
        [{"type": "text", "text": "Hi"}],
        "Hello!",
    ]
    views = mem.state.index.split().views
    assert {entry.seq for entry in mem.state.entries.values()} == set(views)
    mem.remember("chat:2", {"role": "assistant", "content": "Hello again!"})
    assert mem.get_messages(token_budget=100).messages[-1]["content"] == "Hello again!"
    mem.forget("chat:1")
    mem.add_turn("user", "Bye")
    mem.get_messages(token_budget=100)
    assert set(mem.state.index.split().views) == {entry.seq for entry in mem.state.entries.values()}


def test_oai_12_a_limit_beyond_the_items_reads_them_all():
    """OAI-1, OAI-12: items(limit) with more than the stored items gives every item once, oldest first; 0 none; negative all."""
    session = SentinelSession("s", memory=sm.create_memory(clock=lambda: NOW))
    stored = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    session.add(stored)
    assert session.items(3) == session.items(2) == session.items(-1) == stored
    assert session.items(1) == stored[1:] and session.items(0) == []


def test_msg_19_messages_stored_once_checked_are_apart_from_what_was_passed_and_returned():
    """MSG-19: add_messages stores its checked copy; changing the passed messages or returned entries changes nothing."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_turn("user", "What is the weather?")
    parts = [{"type": "text", "text": "4 °C"}, {"type": "data", "value": {"deep": [1, 2]}}]
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    passed = [
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}], "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": parts},
    ]
    before = copy.deepcopy(passed)
    entries = mem.add_messages(passed)
    stored = copy.deepcopy([entry.data for entry in entries])
    assert stored == before
    parts[0]["text"] = "changed"
    parts[1]["value"]["deep"].append(3)
    parts.append({"type": "text", "text": "more"})
    call["function"]["name"] = "other"
    passed[0]["content"][0]["text"] = "changed"
    entries[1].data["content"][1]["value"]["deep"].clear()
    entries[0].data["tool_calls"][0]["id"] = "c9"
    assert [mem.get(entry.key) for entry in entries] == stored
    assert mem.get_messages(token_budget=1_000).messages[1:] == stored


def test_msg_19_a_message_stored_alone_is_apart_from_what_was_passed():
    """MSG-19: add_message stores its checked copy: changing the passed message's parts afterwards changes nothing."""
    mem = sm.create_memory(clock=lambda: NOW)
    message = {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    entry = mem.add_message(message)
    message["content"][0]["text"] = "changed"
    message["content"].append({"type": "text", "text": "more"})
    assert mem.get(entry.key) == {"role": "user", "content": [{"type": "text", "text": "Hi"}]}


def test_msg_19_add_turn_text_is_still_checked_as_data():
    """MSG-19, ENT-2: add_turn's text is checked as remember checks data: a lone surrogate is refused, nothing stored."""
    mem = sm.create_memory(clock=lambda: NOW)
    with pytest.raises(TypeError, match=r"lone surrogate"):
        mem.add_turn("user", "a\ud800")
    assert list(mem.items()) == []
    mem.add_turn("user", "fine")
    assert mem.get_messages(token_budget=100).messages == [{"role": "user", "content": "fine"}]


def _spoiling_model(seen: list[Any]) -> Any:
    """A chat model that keeps a deep copy of the messages it gets, then changes every part of them it can."""
    from server_support import EchoChatModel

    class Spoiling(EchoChatModel):  # type: ignore[misc]
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            seen.append([m.model_copy(deep=True) for m in messages])
            for message in messages:
                if isinstance(message.content, list):
                    message.content[0]["text"] = "changed"
                    message.content.append({"type": "text", "text": "more"})
                for call in getattr(message, "tool_calls", []):
                    call["args"]["city"] = "Nowhere"
                if getattr(message, "tool_calls", None) is not None:
                    message.tool_calls.append({"name": "x", "args": {}, "id": "x1", "type": "tool_call"})
                message.additional_kwargs["spoiled"] = True
                message.response_metadata["spoiled"] = True
            return super()._generate(messages, *args, **kwargs)

    return Spoiling()


def test_lc_14_the_model_gets_the_same_messages_anew_though_it_changed_the_last_ones():
    """LC-14: each call's messages are new copies of the kept ones: parts, tool calls' args and kwargs a model changed come back as stored."""
    from langchain.agents import create_agent

    mem = tool_memory()
    seen: list[Any] = []
    agent = create_agent(_spoiling_model(seen), middleware=[SentinelMemoryMiddleware(mem, 500)])
    agent.invoke({"messages": [{"role": "user", "content": "And tomorrow?"}]})
    agent.invoke({"messages": [{"role": "user", "content": "And after?"}]})
    agent.invoke({"messages": [{"role": "user", "content": "And then?"}]})
    assert seen[0][1].tool_calls[0]["args"] == {"city": "Brno"}
    assert seen[1][: len(seen[0]) - 1] == seen[0][:-1]
    assert seen[2][: len(seen[0]) - 1] == seen[0][:-1]


def test_lc_14_a_turn_changed_in_the_memory_is_read_anew():
    """LC-14: a turn whose data changed between calls reaches the model as it is now, not as it was kept."""
    from langchain.agents import create_agent

    mem = tool_memory()
    seen: list[Any] = []
    agent = create_agent(_spoiling_model(seen), middleware=[SentinelMemoryMiddleware(mem, 500)])
    agent.invoke({"messages": [{"role": "user", "content": "And tomorrow?"}]})
    mem.remember("chat:1", {"role": "user", "content": "What is the weather in Prague?"}, importance=0.3)
    agent.invoke({"messages": [{"role": "user", "content": "And after?"}]})
    assert seen[0][0].content == "What is the weather?"
    assert seen[1][0].content == "What is the weather in Prague?"
    assert seen[1][1 : len(seen[0]) - 1] == seen[0][1:-1]


def test_lc_14_a_kept_message_is_copied_as_model_copy_copies_it():
    """LC-14: a kept message's copy equals it and shares no container with it; a class with its own copy is copied by it."""
    from langchain_core.messages import AIMessage

    from sentinel_memory.integrations.langchain.middleware import _copied

    kept = AIMessage(
        "Looking.",
        tool_calls=[{"name": "weather", "args": {"city": "Brno"}, "id": "c1", "type": "tool_call"}],
        additional_kwargs={"k": [1]},
    )
    made = _copied(kept)
    assert made == kept and made.__pydantic_fields_set__ == kept.model_copy().__pydantic_fields_set__
    assert made.__dict__ is not kept.__dict__ and made.__pydantic_fields_set__ is not kept.__pydantic_fields_set__
    made.content = "changed"
    made.tool_calls[0]["args"]["city"] = "Praha"
    made.additional_kwargs["k"].append(2)
    made.response_metadata["spoiled"] = True
    made.__pydantic_fields_set__.add("spoiled")
    assert kept == AIMessage(
        "Looking.",
        tool_calls=[{"name": "weather", "args": {"city": "Brno"}, "id": "c1", "type": "tool_call"}],
        additional_kwargs={"k": [1]},
    )
    assert "spoiled" not in kept.__pydantic_fields_set__

    class Own(AIMessage):
        def __copy__(self) -> Own:
            copied = super().__copy__()
            copied.additional_kwargs = {"copied by": "its class"}
            return copied

    assert _copied(Own("Hi")).additional_kwargs == {"copied by": "its class"}


def test_lc_14_a_plain_message_is_copied_field_by_field_as_model_copy_would(monkeypatch):
    """LC-14: a message of a class without a copy of its own and without private values is copied without
    model_copy(), into what model_copy() gives: its fields, extra fields and set fields each in a new container."""
    from langchain_core.messages import AIMessage, BaseMessage

    from sentinel_memory.integrations.langchain.middleware import _copied

    kept = AIMessage("Looking.", tool_calls=[], mood=["calm"])
    expected = kept.model_copy()

    def refused(self: Any, **_: Any) -> Any:
        raise AssertionError("model_copy() called for a plain message")

    monkeypatch.setattr(BaseMessage, "model_copy", refused)
    made = _copied(kept)
    assert made == expected and made.__pydantic_extra__ == {"mood": ["calm"]} == expected.__pydantic_extra__
    assert made.__pydantic_private__ is None and expected.__pydantic_private__ is None
    assert made.__pydantic_fields_set__ == expected.__pydantic_fields_set__
    assert made.__pydantic_extra__ is not kept.__pydantic_extra__
    assert made.__pydantic_extra__["mood"] is not kept.__pydantic_extra__["mood"]
    made.__pydantic_extra__["mood"].append("cross")
    made.__pydantic_extra__["other"] = 1
    assert kept.__pydantic_extra__ == {"mood": ["calm"]}


def test_lc_14_a_message_with_private_values_is_copied_by_model_copy():
    """LC-14: a message holding private values is copied by model_copy(), which keeps them; its extra fields' lists are new."""
    from langchain_core.messages import AIMessage
    from pydantic import PrivateAttr

    from sentinel_memory.integrations.langchain.middleware import _copied

    class Marked(AIMessage):
        _mark: str = PrivateAttr(default="")

    kept = Marked("Hi", mood=["calm"])
    kept._mark = "kept"
    made = _copied(kept)
    assert made == kept and made._mark == "kept" and made.__pydantic_private__ is not kept.__pydantic_private__
    made.__pydantic_extra__["mood"].append("cross")  # the extra fields' lists are copies here too
    assert kept.__pydantic_extra__ == {"mood": ["calm"]}


def test_srv_3_the_newest_turns_handed_out_are_copies_and_the_comparison_changes_nothing():
    """SRV-3, MSG-18: newest_turns gives copies a caller may change; unseen compares the stored turns and leaves them as they were."""
    from sentinel_memory.serving import newest_turns, unseen

    mem = tool_memory()
    before = copy.deepcopy(mem.get_messages(token_budget=500).messages)
    [(key, tool), (_, answer)] = newest_turns(mem, 2)
    assert key == "chat:3" and tool == before[2]
    tool["content"][0]["text"] = "changed"
    answer["content"].append({"type": "text", "text": "more"})
    assert unseen(mem, before[2:]) == 2 and unseen(mem, [before[3], before[3]]) == 1
    assert mem.get_messages(token_budget=500).messages == before
