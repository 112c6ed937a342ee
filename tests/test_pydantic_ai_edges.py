"""The pydantic-ai history's edges: the newest question ranks the facts, ttl, a prompt's TextContent parts (PAI-1, PAI-2, PAI-4)."""

from __future__ import annotations

import threading

import anyio
import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import FunctionModel

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.pydantic_ai import SentinelHistory, messages_from_turns, turns_from_messages

NOW = 1_000_000


def with_facts() -> sm.Memory:
    mem = sm.create_memory(clock=lambda: NOW)
    mem.remember("spa:hours", "the spa opens at nine every morning", importance=0.5)
    mem.remember("menu:risotto", "the risotto has no nuts at all", importance=0.5)
    return mem


def conversation() -> list:
    return [
        ModelRequest(parts=[UserPromptPart("when does the spa open?")]),
        ModelResponse(parts=[TextPart("At nine.")]),
        ModelRequest(parts=[UserPromptPart("does the risotto have nuts?")]),
    ]


def test_pai_4_the_newest_user_prompt_ranks_the_facts_not_the_first():
    """PAI-4: with two questions in the request and room for one fact, the fact the newest asks about is sent."""
    view = SentinelHistory(with_facts(), 32, system="Be brief.").process(conversation())
    assert isinstance(view[0].parts[0], SystemPromptPart)
    assert view[0].parts[0].content == "Be brief.\n\nmenu:risotto: the risotto has no nuts at all"


def test_pai_1_the_stored_turns_live_for_the_historys_ttl():
    """PAI-1, ENT-16: the turns the history stores expire after its ttl, with its importance; without a ttl they never do."""
    mem = with_facts()
    SentinelHistory(mem, 100, ttl=60_000, importance=0.4).record(conversation())
    turns = [mem.get_entry(f"chat:{n}") for n in (1, 2, 3)]
    assert [(e.expires_at, e.importance) for e in turns] == [(NOW + 60_000, 0.4)] * 3
    other = with_facts()
    SentinelHistory(other, 100).record(conversation())
    assert other.get_entry("chat:1").expires_at is None


def test_pai_2_a_user_prompts_text_content_parts_are_its_text():
    """PAI-2, TXT-4: a user prompt given as TextContent parts reads as (and is counted by) their text."""
    prompt = UserPromptPart([TextContent(content="what is in "), "the risotto?"])
    (turn,) = turns_from_messages([ModelRequest(parts=[prompt])])
    assert body_of(turn) == "what is in the risotto?"
    assert [part["text"] for part in turn["content"] if part["type"] == "text"] == ["what is in ", "the risotto?"]


# Deprecated by pydantic-ai, still read: histories kept from before hold RetryPromptParts.
@pytest.mark.filterwarnings("ignore:`RetryPromptPart` is deprecated")
def test_pai_2_a_retry_prompt_for_a_call_is_its_answer_and_one_for_the_output_is_the_users():
    """PAI-2: a RetryPromptPart with a tool_name answers its call (a tool turn with its id); one without (the output's validation) is a user turn."""
    called = ModelResponse(parts=[ToolCallPart("add", {"a": 1}, tool_call_id="c1")])
    for_call = ModelRequest(parts=[RetryPromptPart("a must be even", tool_name="add", tool_call_id="c1")])
    for_output = ModelRequest(parts=[RetryPromptPart("answer in one word")])
    turns = turns_from_messages([called, for_call, for_output])
    assert [(turn["role"], turn.get("tool_call_id")) for turn in turns] == [
        ("assistant", None),
        ("tool", "c1"),
        ("user", None),
    ]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_pai_2_a_message_whose_own_fields_have_no_json_form_is_refused_naming_it():
    """PAI-2, INT-1: a message whose parts have JSON forms but whose own fields do not raises TypeError naming the message, with pydantic's reason; nothing is stored."""
    mem = sm.create_memory(clock=lambda: NOW)
    odd = ModelResponse(parts=[TextPart("x")], provider_details={"x": threading.Lock()})
    with pytest.raises(TypeError) as refused:
        SentinelHistory(mem, 1000).record([ModelRequest(parts=[UserPromptPart("hi")]), odd])
    prefix = "messages[1] (a ModelResponse) has no JSON form and cannot be kept: "
    assert str(refused.value).startswith(prefix) and "_thread.lock" in str(refused.value)  # then pydantic's words
    assert len(mem) == 0


def test_pai_2_what_is_no_list_of_messages_is_refused_saying_what_to_pass():
    """PAI-2: turns_from_messages of no list, or of a list holding something else, raises TypeError showing it and what to pass."""
    with pytest.raises(TypeError) as refused:
        turns_from_messages("hi")  # type: ignore[arg-type]
    assert str(refused.value) == "messages must be a list of pydantic-ai messages, got 'hi'"
    with pytest.raises(TypeError) as refused:
        turns_from_messages([{"role": "user", "content": "Hi"}])  # type: ignore[list-item]
    assert str(refused.value) == (
        "messages[0] must be a pydantic-ai ModelRequest or ModelResponse, got {'content': 'Hi', 'role': 'user'}: "
        "pass the messages of a run (result.all_messages()) or ModelMessagesTypeAdapter.validate_json(...)"
    )


def test_pai_3_a_turn_stored_by_another_writer_reads_back_as_its_parts_joined():
    """PAI-3, MSG-5: a user turn another writer stored as two text parts reads back as one prompt of their text joined as it is."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_message(
        {"role": "user", "content": [{"type": "text", "text": "what is "}, {"type": "text", "text": "in it?"}]}
    )
    (request,) = SentinelHistory(mem, 1000).load()
    assert [(type(part), part.content) for part in request.parts] == [(UserPromptPart, "what is in it?")]


def test_pai_3_another_writers_call_without_text_reads_back_as_the_call_alone():
    """PAI-3, MSG-5: an assistant turn another writer stored with content None and a call reads back as a response of the call alone, no empty text."""
    mem = sm.create_memory(clock=lambda: NOW)
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    mem.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
    mem.add_message({"role": "tool", "content": "3", "tool_call_id": "c1"})
    response, answer = SentinelHistory(mem, 1000).load()
    assert [type(part) for part in response.parts] == [ToolCallPart]
    assert [(part.tool_name, part.content) for part in answer.parts] == [("add", "3")]


def test_pai_3_a_developer_turn_reads_back_as_a_system_prompt():
    """PAI-3: a developer turn another writer stored reads back as a request of one SystemPromptPart, as a system turn does."""
    (request,) = messages_from_turns([{"role": "developer", "content": "Answer in French."}])
    assert [(type(part), part.content) for part in request.parts] == [(SystemPromptPart, "Answer in French.")]


def test_pai_3_a_tool_result_whose_call_is_not_there_is_named_tool():
    """PAI-3: a tool turn read without the call it answers reads back as a ToolReturnPart named "tool", its id kept."""
    (request,) = messages_from_turns([{"role": "tool", "content": "4 °C", "tool_call_id": "c9"}])
    assert [(type(part), part.tool_name, part.tool_call_id, part.content) for part in request.parts] == [
        (ToolReturnPart, "tool", "c9", "4 °C")
    ]


def test_pai_3_another_writers_result_of_this_historys_call_is_named_after_it():
    """PAI-3: a tool result another writer stored for a call this history stored reads back named after that call."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 1000)
    history.record(
        [
            ModelRequest(parts=[UserPromptPart("weather in Brno?")]),
            ModelResponse(parts=[ToolCallPart("weather", {"city": "Brno"}, tool_call_id="c1")]),
        ]
    )
    mem.add_message({"role": "tool", "content": "4 °C", "tool_call_id": "c1"})
    for read in (SentinelHistory(mem, 1000).load(), history.view()):
        assert [(part.tool_name, part.content) for part in read[-1].parts] == [("weather", "4 °C")]


def test_pai_3_this_historys_message_after_another_writers_turn_reads_back_as_it_was():
    """PAI-3: a message this history stored right after a turn another writer stored reads back whole, each its own message."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 1000)
    mem.add_message({"role": "user", "content": "hello"})
    history.record([ModelResponse(parts=[TextPart("Hi!")]), ModelRequest(parts=[UserPromptPart("any nuts?")])])
    for read in (SentinelHistory(mem, 1000).load(), history.view()):
        assert [(type(part), part.content) for message in read for part in message.parts] == [
            (UserPromptPart, "hello"),
            (TextPart, "Hi!"),
            (UserPromptPart, "any nuts?"),
        ]


def test_pai_4_a_prompt_of_several_text_parts_ranks_the_facts_by_each_parts_words():
    """PAI-4: the question a prompt of several text parts asks is their texts on lines of their own, so a word at a part's edge still ranks the facts."""
    prompt = UserPromptPart(["when is the", "spa"])  # nothing matched, the newer fact (the risotto's) would be sent
    view = SentinelHistory(with_facts(), 32, system="Be brief.").process([ModelRequest(parts=[prompt])])
    assert view[0].parts[0].content == "Be brief.\n\nspa:hours: the spa opens at nine every morning"


def test_pai_4_a_budget_the_history_fits_exactly_sends_it_whole_without_a_reserve():
    """PAI-4, INT-2: reserve defaults to 0, so a budget equal to what the history counts sends every message."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 10_000)
    history.record(conversation())
    options = {"cut": "stable", "low_mark": 0.5}
    needed = mem.get_messages(token_budget=10_000, **options).tokens
    assert len(SentinelHistory(mem, needed).view()) == 3
    assert len(SentinelHistory(mem, needed, reserve=1).view()) < 3


def test_pai_7_a_history_refuses_what_is_not_a_memory_and_a_user_without_a_folder():
    """PAI-7: a memory of the wrong kind, or user= beside one memory, is a TypeError saying what to pass."""
    with pytest.raises(TypeError) as refused:
        SentinelHistory("memory", 100)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "memory must be a Memory (create_memory()) or a MemoryFolder / RedisMemories for one agent of many users, "
        "got 'memory'"
    )
    with pytest.raises(TypeError) as refused:
        SentinelHistory(sm.create_memory(), 100, user=lambda deps: "u1")
    assert str(refused.value) == "user= picks each run's memory from a folder; this history has one memory"


def test_pai_7_user_picks_each_runs_memory_from_its_deps(tmp_path):
    """PAI-7: with a folder and user=, a run's memory is the folder's memory of the user the function names from the deps."""
    folder = sm.MemoryFolder(tmp_path)
    history = SentinelHistory(folder, 1000, user=lambda deps: deps.account)

    class Deps:
        account = "u-42"
        user_id = "not-this-one"

    history.record([ModelRequest(parts=[UserPromptPart("hello")])], deps=Deps())
    assert [e.data["content"][0]["text"] for e in folder.open("u-42").get_recent()] == ["hello"]
    assert len(folder.open("not-this-one")) == 0
    with pytest.raises(TypeError) as refused:
        history.memory  # noqa: B018
    assert str(refused.value) == "this history serves a folder's users: memory_for(deps) is a run's memory"


def test_pai_4_the_historys_tokenizer_counts_its_requests():
    """PAI-4, MSG-3: a history's tokenizer, not the estimator, counts what its view sends."""
    mem = sm.create_memory(clock=lambda: NOW)
    SentinelHistory(mem, 1000).record(conversation())
    assert len(SentinelHistory(mem, 60).view()) == 3
    with pytest.raises(sm.TokenBudgetError):
        SentinelHistory(mem, 60, tokenizer=lambda text: 100).view()


def test_pai_7_a_runs_user_comes_from_its_deps_user_id_or_the_deps_themselves(tmp_path):
    """PAI-7: without user=, the deps name the user by a user_id attribute, a "user_id" key or being a str; deps naming none are a ValueError."""
    folder = sm.MemoryFolder(tmp_path)
    history = SentinelHistory(folder, 1000)

    class Deps:
        user_id = "by-attribute"

    for deps, user in ((Deps(), "by-attribute"), ({"user_id": "by-key"}, "by-key"), ("by-str", "by-str")):
        history.record([ModelRequest(parts=[UserPromptPart(f"hello from {user}")])], deps=deps)
        assert len(folder.open(user)) == 1
    for deps, shown_as in (({"name": "x"}, "None"), ({"user_id": ""}, "''"), (object(), "None")):
        with pytest.raises(ValueError) as refused:
            history.memory_for(deps)
        assert str(refused.value) == (
            f"this history serves a folder's users, and the run's deps name none (got {shown_as}): run with "
            "deps={'user_id': ...} (or deps with a user_id attribute, or a str), or give user="
        )


def test_pai_5_a_history_shows_its_memory_and_budget():
    """PAI-5: repr(SentinelHistory) names its memory and its token budget."""
    mem = sm.create_memory(limit=50)
    assert repr(SentinelHistory(mem, 1200)) == f"SentinelHistory({mem!r}, token_budget=1200)"


def test_pai_1_a_refused_turn_after_a_history_sent_again_names_the_message_it_came_from():
    """PAI-1, PAI-8: with the earlier messages sent again (not stored again), a turn the memory refuses is named by its message's place in the list given."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 1000)
    said = [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])]
    history.record(said)
    again = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(said))
    orphan = ModelRequest(parts=[ToolReturnPart("f", "x", tool_call_id="nope")])
    with pytest.raises(ValueError) as refused:
        history.record([*again, ModelRequest(parts=[UserPromptPart("q2")]), orphan])
    assert str(refused.value) == (
        "messages[3] (a ModelRequest), its chat turn 0.tool_call_id: 'nope' answers no open call (open: none)"
    )
    assert len(mem) == 2
    with pytest.raises(TypeError) as refused:
        history.record("hi")  # type: ignore[arg-type]
    assert str(refused.value) == "messages must be a list of pydantic-ai messages, got 'hi'"


def test_pai_5_load_with_a_limit_gives_the_newest_messages():
    """PAI-5: load(limit=n) is the newest n messages, oldest first; limit 0 none."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 1000)
    history.record(conversation())
    assert [m.parts[0].content for m in history.load(limit=1)] == ["does the risotto have nuts?"]
    assert [m.parts[0].content for m in history.load(limit=2)] == ["At nine.", "does the risotto have nuts?"]
    assert history.load(limit=0) == []


def test_pai_10_a_cancelled_run_forgets_what_it_stored_and_the_next_run_works():
    """PAI-10, AIO-4: a run whose cancel scope is cancelled while its model works forgets its question before the cancel goes on; the next run starts clean."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 1000)

    async def main() -> tuple[list[int], list[str]]:
        working = anyio.Event()
        seen: list[int] = []  # the memory's size while the first run's model works

        async def waits(messages, info):
            working.set()
            await anyio.sleep_forever()

        async def echo(messages, info):
            return ModelResponse(parts=[TextPart("ok")])

        with anyio.CancelScope() as scope:  # the run's scope, as a server's request timeout or task group makes
            async with anyio.create_task_group() as tasks:

                async def cancel_once_working() -> None:
                    await working.wait()
                    seen.append(len(mem))
                    scope.cancel()

                tasks.start_soon(cancel_once_working)
                await Agent(FunctionModel(function=waits), capabilities=[history]).run("first")
        await Agent(FunctionModel(function=echo), capabilities=[history]).run("second")
        return seen, [data["content"][0]["text"] for _, data in mem.items()]

    assert anyio.run(main) == ([1], ["second", "ok"])
