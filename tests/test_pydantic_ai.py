"""The pydantic-ai adapter, with the real pydantic-ai: a capability that keeps a run's history in a memory within a budget (PAI-1 .. PAI-6, INT-1)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    InstructionDeltaPart,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import sentinel_memory as sm
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.pydantic_ai import (
    KNOWN_LEAST,
    PART_TYPE,
    SentinelHistory,
    messages_from_turns,
    turns_from_messages,
)
from sentinel_memory.serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK
from support import import_error_without

BUDGET = 260
FACT = "allergic to peanuts"


#: INT-2: what the adapters pass to get_messages unless told otherwise.
ADAPTER_DEFAULTS = {"cut": ADAPTER_CUT, "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}


def json_of(messages: list[Any]) -> list[Any]:
    """Messages after pydantic-ai's own JSON round trip, the form INT-1 compares."""
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")


def counted(chat: list[dict[str, Any]]) -> int:
    """A request's tokens as MSG-3 counts them, with the memory's default tokenizer."""
    return sum(sm.estimate_tokens(body_of(message)) + MESSAGE_TOKENS for message in chat)


def newest_question(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return part.content if isinstance(part.content, str) else None
    return None


class Script:
    """A FunctionModel script: on a new question it calls tools (none, one or two calls), then answers."""

    def __init__(self) -> None:
        self.requests: list[list[Any]] = []
        self.calls = 0

    def __call__(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        last = messages[-1]
        asked = [part for part in last.parts if isinstance(part, UserPromptPart)]
        if asked:
            turn = int(str(asked[-1].content).split("#")[1].split(":")[0])
            if turn % 3 != 2:
                calls = [
                    ToolCallPart("add", {"a": turn, "b": k}, tool_call_id=f"t{turn}-{k}") for k in range(turn % 3 + 1)
                ]
                self.calls += len(calls)
                return ModelResponse(parts=[ThinkingPart(f"adding for #{turn}"), *calls])
            return ModelResponse(parts=[TextPart(f"No tools needed for #{turn}.")])
        returns = [part.content for part in last.parts if isinstance(part, ToolReturnPart)]
        return ModelResponse(parts=[TextPart(f"The sums are {returns}.")])


def build(history: SentinelHistory, script: Script) -> Agent[None, str]:
    agent = Agent(FunctionModel(script), instructions="Answer briefly.", capabilities=[history])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return agent


def test_pai_an_agent_runs_24_turns_with_tools_and_a_restart_within_the_budget(tmp_path):
    """PAI-1, PAI-2, PAI-4, PAI-5, INT-1, MSG-8: 24 runs with tool calls and a restart; every request fits the budget, is valid, holds the question and the must-keep fact; nothing stored is lost."""
    folder = tmp_path / "chats"
    history = SentinelHistory.from_folder(folder, "ann", BUDGET, must_keep=0.8, system="You add numbers.")
    history.memory.remember("user:allergy", FACT, importance=0.9)
    script = Script()
    agent = build(history, script)
    said: list[Any] = []
    for turn in range(12):
        said += agent.run_sync(f"Question #{turn}: add please").new_messages()
    # The restart: a new memory, history, model and agent over the same folder.
    history = SentinelHistory.from_folder(folder, "ann", BUDGET, must_keep=0.8, system="You add numbers.")
    script_after = Script()
    agent = build(history, script_after)
    after: list[Any] = []
    for turn in range(12, 24):
        result = agent.run_sync(f"Question #{turn}: add please")
        assert result.output.startswith(("The sums are", "No tools needed"))
        after += result.new_messages()
    said += after
    assert script.calls + script_after.calls >= 20
    requests = script.requests + script_after.requests
    assert len(requests) >= 40
    trimmed = 0
    for request in requests:
        chat = turns_from_messages(request)
        assert sm.request_problems(chat) == []
        assert counted(chat) <= BUDGET
        first = request[0].parts[0]
        assert (
            isinstance(first, SystemPromptPart)
            and first.content.startswith("You add numbers.")
            and FACT in first.content
        )
        question = newest_question(request)
        assert question is not None and question.startswith("Question #")
        trimmed += newest_question(request[:2]) != "Question #0: add please"
    assert trimmed >= len(requests) // 2  # the budget dropped the oldest turns from most requests
    # Nothing acknowledged is lost: every message of every run is in the store after the restart, whole.
    again = SentinelHistory.from_folder(folder, "ann", BUDGET)
    assert json_of(again.load()) == json_of(said)
    assert history.record(after) == []  # the history stored each of its runs' messages once


def test_pai_1_each_message_is_stored_once(mem):
    """PAI-1: record stores only what the history has not seen; a run's messages given again store nothing."""
    history = SentinelHistory(mem, 500)
    agent = build(history, Script())
    result = agent.run_sync("Question #0: add please")
    size = mem.size()
    assert history.record(result.all_messages()) == []
    agent.run_sync("Question #1: add please", message_history=result.all_messages())
    assert len(history.load()) == len(result.all_messages()) + 4
    assert mem.size() > size
    loaded = history.load()
    assert history.record(loaded) == []
    fresh = ModelMessagesTypeAdapter.validate_python(json_of(loaded[:1]))
    assert history.record(fresh) == fresh  # a message built anew is new to the history


def test_pai_1_what_the_history_knows_stays_bounded_and_is_each_very_message(mem):
    """PAI-1: many views' messages dropped leave the history's references bounded; a kept one stays known, a new one at a freed id is new."""
    history = SentinelHistory(mem, 5_000)
    for n in range(20):
        history.record([ModelRequest(parts=[UserPromptPart(f"question {n}")]), ModelResponse(parts=[TextPart("ok")])])
    kept = history.view()
    history.record([ModelRequest(parts=[UserPromptPart("one more")]), ModelResponse(parts=[TextPart("ok")])])
    for _ in range(3 * KNOWN_LEAST // len(kept)):
        history.view()
    assert len(history._known) <= KNOWN_LEAST + len(kept)
    asked = ModelRequest(parts=[UserPromptPart("question 20")])
    assert history.record([*kept, asked]) == [asked]  # the kept view's messages outlived the dropping
    freed = {id(message) for message in history.view()}  # given out and dropped at once
    made = [ModelRequest(parts=[UserPromptPart("question 21")]) for _ in range(2_000)]
    again = next(message for message in made if id(message) in freed)
    assert history.record([again]) == [again]


class _Said:
    """An object the history may know by a weak reference, as it knows a message."""


class _Filler:
    """An object of the same size as ``_Said``, holding the place a dropped one left."""


def test_pai_1_the_references_to_messages_gone_are_dropped_once_there_are_many(mem):
    """PAI-1: past KNOWN_LEAST references, those to messages gone are dropped and those still in use kept."""
    history = SentinelHistory(mem, 500)
    gone = [_Said() for _ in range(KNOWN_LEAST - 10)]
    history._remember(gone)
    del gone
    places = [_Filler() for _ in range(KNOWN_LEAST)]  # the dropped ones' places taken: the next ids are new
    alive = [_Said() for _ in range(20)]
    history._remember(alive)
    assert len(history._known) == len(alive) and all(history._is_known(said) for said in alive)
    assert places


def test_pai_1_the_references_are_dropped_again_and_again_as_messages_come_and_go(mem):
    """PAI-1: after a drop of the references to messages gone, the next ones are dropped too, round after round; those alive stay known."""
    history = SentinelHistory(mem, 500)
    alive = [_Said() for _ in range(600)]
    history._remember(alive)
    for _ in range(6):
        history._remember([_Said() for _ in range(KNOWN_LEAST)])  # alive while remembered, gone right after
    assert len(history._known) <= 2 * (len(alive) + KNOWN_LEAST)
    assert all(history._is_known(message) for message in alive)


def test_pai_1_the_run_keeps_its_own_history(mem):
    """PAI-1: the capability changes only the model's request; result.all_messages() is the run's own history."""
    history = SentinelHistory(mem, 500, system="You add numbers.")
    script = Script()
    result = build(history, script).run_sync("Question #1: add please")
    assert [type(m).__name__ for m in result.all_messages()] == ["ModelRequest", "ModelResponse"] * 2
    assert not any(isinstance(p, SystemPromptPart) for p in result.all_messages()[0].parts)
    assert isinstance(script.requests[0][0].parts[0], SystemPromptPart)


def test_pai_2_int_1_thinking_images_and_files_come_back_whole_after_a_restart(tmp_path):
    """PAI-2, PAI-3, PAI-5, INT-1: a thinking part, an image by URL and a BinaryContent file come back equal after a restart."""
    path = tmp_path / "memory.json"
    history = SentinelHistory(sm.create_memory(store=sm.JsonFileStore(path), autosave=True), 1000)
    said = [
        ModelRequest(
            parts=[
                SystemPromptPart("You look at pictures."),
                UserPromptPart(
                    [
                        "What is on",
                        ImageUrl("https://example.com/cat.png"),
                        BinaryContent(data=b"\x00\xff", media_type="image/png"),
                    ]
                ),
            ]
        ),
        ModelResponse(parts=[ThinkingPart("a cat?", signature="sig"), TextPart("A cat."), TextPart("Cute.")]),
    ]
    assert history.record(said) == said
    again = SentinelHistory(sm.create_memory(store=sm.JsonFileStore(path)), 1000)
    loaded = again.load()
    assert json_of(loaded) == json_of(said)
    image = loaded[0].parts[1].content[2]
    assert isinstance(image, BinaryContent) and (image.data, image.media_type) == (b"\x00\xff", "image/png")
    assert again.memory["chat:1"]["content"][:2] == [
        {"type": "text", "text": "You look at pictures."},
        {"type": "text", "text": "What is on"},
    ]
    assert again.memory["chat:2"]["content"][:2] == [
        {"type": "text", "text": "A cat."},
        {"type": "text", "text": "Cute."},
    ]
    # The budget counts the text only: the image, the file and the thinking add nothing (TXT-4).
    assert sm.estimate_tokens(body_of(again.memory["chat:2"])) == sm.estimate_tokens("A cat.Cute.")


def test_pai_2_a_response_with_several_calls_is_one_assistant_turn(mem):
    """PAI-2, MSG-7: a ModelResponse with two ToolCallParts is one assistant message with two tool_calls; their returns follow as tool messages."""
    history = SentinelHistory(mem, 1000)
    said = [
        ModelRequest(parts=[UserPromptPart("Add 1+2 and 3+4")]),
        ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2}, "c1"), ToolCallPart("add", '{"a":3,"b":4}', "c2")]),
        ModelRequest(parts=[ToolReturnPart("add", 3, "c1"), ToolReturnPart("add", {"sum": 7}, "c2")]),
    ]
    history.record(said)
    chat = [mem[f"chat:{n}"] for n in range(1, 5)]
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool"]
    assert chat[1]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a":1,"b":2}'}},
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a":3,"b":4}'}},
    ]
    assert chat[1]["content"] == [chat[1]["content"][0]] and chat[1]["content"][0]["type"] == PART_TYPE == "pydantic-ai"
    assert [m["tool_call_id"] for m in chat[2:]] == ["c1", "c2"]
    assert chat[3]["content"][0] == {"type": "text", "text": '{"sum":7}'}
    view = history.view()
    assert json_of(view) == json_of(said)  # the request's two returns are one ModelRequest again


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_pai_2_bad_input_is_refused_and_nothing_is_stored(mem):
    """PAI-2, INT-1, MSG-6: a non-message, a part with no JSON form, a repeated call id and a stray return raise, naming the item; nothing is stored."""
    history = SentinelHistory(mem, 1000)
    ask = ModelRequest(parts=[UserPromptPart("Hi")])
    with pytest.raises(TypeError, match=r"messages\[1\] must be a pydantic-ai ModelRequest or ModelResponse"):
        history.record([ask, {"role": "user", "content": "Hi"}])
    with pytest.raises(TypeError) as refused:
        history.record(
            [
                ask,
                ModelRequest(parts=[ToolReturnPart("add", 3, "c1"), ToolReturnPart("x", threading.Lock(), "c2")]),
            ]
        )
    assert str(refused.value) == (
        "messages[1].parts[1] (a ToolReturnPart) has no JSON form and cannot be kept: give the part JSON data "
        "(text, numbers, lists, dicts, a pydantic model, a dataclass), or a file as BinaryContent or by URL"
    )
    with pytest.raises(ValueError) as twice:
        history.record([ask, ModelResponse(parts=[ToolCallPart("a", {}, "c1"), ToolCallPart("b", {}, "c1")])])
    assert str(twice.value) == (
        "messages[1] (a ModelResponse), its chat turn 0.tool_calls[1].id: two calls with the id 'c1'; "
        "this pydantic-ai message cannot be kept as a chat turn"
    )
    with pytest.raises(
        ValueError, match=r"^messages\[1\] \(a ModelRequest\), its chat turn 0\.tool_call_id: 'c9' answers no"
    ):
        history.record([ask, ModelRequest(parts=[ToolReturnPart("add", 3, "c9")])])
    with pytest.raises(TypeError, match="must be a list"):
        history.record(ask)  # type: ignore[arg-type]
    assert mem.size() == 0 and history.load() == []
    assert history.record([ask]) == [ask]  # the refused batches left the good message unseen
    with pytest.raises(TypeError, match=r"^messages\[1\] must be"):  # named by its place in the list given
        history.record([ask, "Hi"])
    assert mem.size() == 1


def test_pai_3_turns_another_writer_stored_read_back_as_messages(mem):
    """PAI-3: turns without the pydantic-ai part read back as pydantic-ai messages, a tool return named after its call."""
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Brno"}'}}
    mem.add_messages(
        [
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {"role": "assistant", "content": "Let me see.", "tool_calls": [call]},
            {"role": "tool", "content": "4 °C", "tool_call_id": "c1"},
            {"role": "assistant", "content": "4 °C in Brno."},
        ]
    )
    loaded = SentinelHistory(mem, 1000).load()
    assert loaded[0].parts == [SystemPromptPart("Be kind.", timestamp=loaded[0].parts[0].timestamp)]
    assert loaded[1].parts[0].content == "Weather?"
    assert [type(p) for p in loaded[2].parts] == [TextPart, ToolCallPart]
    assert loaded[2].parts[1].args == '{"city":"Brno"}' and loaded[2].parts[1].tool_call_id == "c1"
    assert loaded[3].parts[0].tool_name == "weather" and loaded[3].parts[0].content == "4 °C"
    assert loaded[4].parts[0].content == "4 °C in Brno."


def test_pai_3_a_message_cut_by_the_budget_keeps_the_parts_in_view(mem):
    """PAI-3, MSG-9: when the budget leaves out the turns before a user prompt, its message comes back with the parts in view, in their places."""
    request = ModelRequest(parts=[SystemPromptPart("S " * 50), UserPromptPart("What now?")])
    turns = turns_from_messages([request])
    assert [t["role"] for t in turns] == ["user"]  # a system prompt beside a question rides in its turn
    alone = turns_from_messages([ModelRequest(parts=[SystemPromptPart("Be kind.")])])
    assert [t["role"] for t in alone] == ["system"]
    both = ModelRequest(parts=[UserPromptPart("And?"), ToolReturnPart("a", 1, "c1")])
    two = turns_from_messages([both])
    assert [t["role"] for t in two] == ["tool", "user"]  # the return answers its call first
    assert json_of(messages_from_turns(two)) == json_of([both])  # back in their places
    back = messages_from_turns(two[1:])
    assert [type(p) for p in back[0].parts] == [UserPromptPart]


def test_pai_2_pydantic_ais_own_records_ride_in_the_last_tool_turn(mem):
    """PAI-2, PAI-3: a request of returns and a record part (no prompt) is tool turns only, the record in the last; it comes back whole."""
    history = SentinelHistory(mem, 1000)
    said = [
        ModelRequest(parts=[UserPromptPart("Find it")]),
        ModelResponse(parts=[ToolCallPart("load", {}, "c1"), ToolCallPart("load", {}, "c2")]),
        ModelRequest(
            parts=[
                ToolReturnPart("load", "ok", "c1"),
                ToolAvailabilityDeltaPart(tools_added=["search"]),
                ToolReturnPart("load", "ok", "c2"),
            ]
        ),
    ]
    history.record(said)
    assert [mem[f"chat:{n}"]["role"] for n in range(1, 5)] == ["user", "assistant", "tool", "tool"]
    assert mem["chat:4"]["content"][-1]["at"] == [1, 2] and "chat:5" not in mem
    assert json_of(history.load()) == json_of(said)


def test_pai_3_turns_of_two_messages_never_merge(mem):
    """PAI-3: a message whose first turn is left out does not join the turn before it, which is another message's."""
    answer = ModelRequest(parts=[ToolReturnPart("a", 1, "c1"), UserPromptPart("And?")])
    other = ModelRequest(parts=[UserPromptPart("Hi")])
    turns = turns_from_messages([other]) + turns_from_messages([answer])[1:]
    back = messages_from_turns(turns)
    assert len(back) == 2 and [type(p) for p in back[1].parts] == [UserPromptPart]


def test_pai_4_must_keep_and_facts_share_reach_get_messages(mem):
    """PAI-4, MSG-2: the history passes must_keep and facts_share: with no share for facts a long history crowds the fact out, unless it must be kept."""
    mem.remember("user:allergy", FACT, importance=0.9)
    history = SentinelHistory(mem, 80, facts_share=0)
    for n in range(8):
        history.record([ModelRequest(parts=[UserPromptPart(f"Tell me about dish {n}")])])
        history.record([ModelResponse(parts=[TextPart(f"Dish {n} is fine.")])])
    assert not any(isinstance(m.parts[0], SystemPromptPart) for m in history.view())
    kept = SentinelHistory(mem, 80, facts_share=0, must_keep=0.8).view()
    assert FACT in kept[0].parts[0].content


def test_pai_4_the_view_is_the_memorys_budgeted_request(mem):
    """PAI-4, MSG-2, MSG-9, INT-2: view() is get_messages with the history's arguments and the adapters' cut; the question is the newest user prompt; too small a budget raises."""
    history = SentinelHistory(mem, 60, must_keep=0.8, system="Be brief.")
    mem.remember("user:allergy", FACT, importance=0.9)
    mem.remember("user:pet", "has a cat named Peanut", importance=0.5)
    for n in range(8):  # newer facts, which fill the facts' share when no question ranks the cat first
        mem.remember(
            f"user:walk{n}", f"likes long walks on sandy beaches near an old harbour, number {n}", importance=0.5
        )
    for n in range(6):
        history.record(
            [
                ModelRequest(parts=[UserPromptPart(f"Tell me about dish {n}")]),
                ModelResponse(parts=[TextPart(f"Dish {n} is fine.")]),
            ]
        )
    view = history.process([ModelRequest(parts=[UserPromptPart("Is the cat food safe?")])])
    chat = turns_from_messages(view)
    expected = mem.get_messages(
        token_budget=60, query="Is the cat food safe?", must_keep=0.8, system="Be brief.", **ADAPTER_DEFAULTS
    )
    assert [body_of(m) for m in chat] == [body_of(m) for m in expected.messages]
    assert view[0].parts[0].content == expected.messages[0]["content"] and FACT in view[0].parts[0].content
    assert "cat named Peanut" in view[0].parts[0].content  # ranked first by the newest question
    assert "cat named Peanut" not in history.view()[0].parts[0].content
    assert counted(chat) == expected.tokens <= 60
    assert newest_question(view) == "Is the cat food safe?"
    with pytest.raises(sm.TokenBudgetError):
        SentinelHistory(mem, 10, must_keep=0.8).view()


def test_pai_4_the_processor_form_works_with_process_history(mem):
    """PAI-4, PAI-1: history.process given to pydantic-ai's ProcessHistory budgets each request; record(result.all_messages()) stores the final answer."""
    history = SentinelHistory(mem, 120)
    script = Script()
    agent = Agent(FunctionModel(script), capabilities=[ProcessHistory(history.process)])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    for turn in range(6):
        result = agent.run_sync(f"Question #{turn}: add please")
        history.record(result.all_messages())
    for request in script.requests:
        chat = turns_from_messages(request)
        assert sm.request_problems(chat) == [] and counted(chat) <= 120
    assert sum(isinstance(m, ModelResponse) for m in history.load()) == sum(1 + (t % 3 != 2) for t in range(6))


def test_pai_4_the_async_forms_do_the_io_off_the_event_loop(mem):
    """PAI-4: under agent.run the memory's writes and reads run in a worker thread, never the event loop's."""
    history = SentinelHistory(mem, 500)
    threads: list[int] = []
    real = mem.add_messages

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    mem.add_messages = spy  # type: ignore[method-assign]

    async def main() -> int:
        await build(history, Script()).run("Question #0: add please")
        await history.arecord([ModelRequest(parts=[UserPromptPart("And?")])])
        await history.aprocess([])
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert len(threads) == 4 and loop_thread not in threads


def test_pai_5_load_limits_to_the_newest_messages(mem):
    """PAI-5: load(limit) gives the newest messages, whole; load() gives every stored one, known to the history."""
    history = SentinelHistory(mem, 500)
    said = [ModelRequest(parts=[UserPromptPart(f"q{n}")]) for n in range(3)]
    said.append(ModelRequest(parts=[SystemPromptPart("Be kind."), UserPromptPart("q3")]))  # one message, one turn
    said.append(ModelResponse(parts=[ToolCallPart("f", {}, "c1"), ToolCallPart("f", {}, "c2")]))
    said.append(ModelRequest(parts=[ToolReturnPart("f", 1, "c1"), ToolReturnPart("f", 2, "c2")]))  # two turns
    history.record(said)
    assert json_of(history.load(limit=2)) == json_of(said[-2:])
    assert [m.parts[0].content for m in history.load(limit=5)[:2]] == ["q1", "q2"]
    assert history.load(limit=0) == []
    assert history.record(history.load()) == []


def test_pai_1_the_history_takes_only_a_memory(tmp_path):
    """PAI-1: a history over anything but a Memory raises TypeError."""
    with pytest.raises(TypeError, match="memory must be a Memory"):
        SentinelHistory({}, 100)  # type: ignore[arg-type]
    assert "token_budget=100" in repr(SentinelHistory.from_folder(tmp_path, "u", 100))
    assert SentinelHistory.get_serialization_name() is None


def test_pai_6_importing_the_package_does_not_import_pydantic_ai():
    """PAI-6, DEP-1: `import sentinel_memory` imports no pydantic_ai module; importing the adapter does."""
    code = (
        "import sys, sentinel_memory; print(any(m.split('.')[0] == 'pydantic_ai' for m in sys.modules)); "
        "import sentinel_memory.integrations.pydantic_ai; print('pydantic_ai' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_pai_6_without_pydantic_ai_the_adapter_names_the_extra(monkeypatch):
    """PAI-6: with pydantic-ai missing, importing the adapter raises ImportError naming the [pydantic-ai] extra."""
    assert import_error_without(monkeypatch, "pydantic_ai", "sentinel_memory.integrations.pydantic_ai") == (
        "sentinel_memory.integrations.pydantic_ai needs pydantic-ai; install it with: "
        "pip install 'sentinel-memory[pydantic-ai]'"
    )


def test_pai_1_streamed_and_iterated_runs_store_their_answer_too(mem):
    """PAI-1: under run_stream and iter, as under run, each run's question and final answer are stored once."""
    from pydantic_ai.models.test import TestModel

    history = SentinelHistory(mem, 500)
    agent = Agent(TestModel(custom_output_text="Hello there."), capabilities=[history])

    async def main() -> None:
        async with agent.run_stream("Hi") as streamed:
            assert await streamed.get_output() == "Hello there."
        async with agent.iter("Again") as run:
            async for _ in run:
                pass

    asyncio.run(main())
    loaded = history.load()
    assert [type(m).__name__ for m in loaded] == ["ModelRequest", "ModelResponse"] * 2
    assert loaded[1].parts[0].content == loaded[3].parts[0].content == "Hello there."


@pytest.mark.parametrize("last_text", ["", "done"])
def test_pai_2_a_record_rides_in_the_last_of_three_tool_turns_even_one_without_text(mem, last_text):
    """PAI-2, PAI-3: with three returns, the record parts ride in the third's turn (not the second's), also when that return's text is empty, their text before its carried part; every part comes back."""
    history = SentinelHistory(mem, 1000)
    said = [
        ModelRequest(parts=[UserPromptPart("Find it")]),
        ModelResponse(parts=[ToolCallPart("load", {}, f"c{n}") for n in (1, 2, 3)]),
        ModelRequest(
            parts=[
                ToolReturnPart("load", "ok", "c1"),
                ToolAvailabilityDeltaPart(tools_added=["search"]),
                ToolReturnPart("load", "ok", "c2"),
                ToolReturnPart("load", last_text, "c3"),
                InstructionDeltaPart(id="i1", content="be brief"),
            ]
        ),
    ]
    history.record(said)
    assert [mem[f"chat:{n}"]["role"] for n in range(1, 6)] == ["user", "assistant", "tool", "tool", "tool"]
    assert mem["chat:4"]["content"][-1]["at"] == [2]
    assert mem["chat:5"]["content"][-1]["at"] == [1, 3, 4] and "chat:6" not in mem
    # A record's text is the turn's text too, before the part that carries the message.
    texts = [last_text, "be brief"] if last_text else ["be brief"]
    assert mem["chat:5"]["content"][:-1] == [{"type": "text", "text": text} for text in texts]
    # Whole, but by kind: pydantic-ai's own adapter gives an InstructionDeltaPart back without its id.
    assert [[part.part_kind for part in m.parts] for m in history.load()] == [
        [part.part_kind for part in m.parts] for m in said
    ]


def test_pai_2_a_turn_names_its_message_by_the_first_16_hex_digits_of_its_sorted_json(mem):
    """PAI-2: each turn's carried part says [k, n, id], id the first 16 hex digits of the SHA-256 of json.dumps([fields, parts], sort_keys=True)."""
    answer = ModelResponse(parts=[TextPart("Two calls."), ToolCallPart("a", {}, "c1"), ToolCallPart("b", {}, "c2")])
    dumped = ModelMessagesTypeAdapter.dump_python([answer], mode="json")[0]
    parts = dumped.pop("parts")
    expected = hashlib.sha256(json.dumps([dumped, parts], sort_keys=True).encode()).hexdigest()[:16]
    (turn,) = turns_from_messages([answer])
    assert turn["content"][-1]["turn"] == [0, 1, expected]
