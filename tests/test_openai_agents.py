"""The OpenAI Agents SDK session (OAI-1 .. OAI-6): the SDK's Runner over a stub model, items kept whole, budgets."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import math
import subprocess
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, Usage, function_tool
from agents.items import ModelResponse
from agents.memory.session import SessionABC
from agents.memory.session_settings import SessionSettings
from agents.models.chatcmpl_converter import Converter
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.openai_agents import (
    ITEM_PART,
    SentinelSession,
    budget_items,
    chat_messages,
    items_of_turn,
)

TOKENIZER = sm.upper_bound_tokens  # bytes: not the memory's default, so the session must use the one it is given
INSTRUCTIONS = "You are a concise weather assistant."
BUDGET = 700


def request_tokens(instructions: str | None, items: list[dict[str, Any]]) -> int:
    """What a request counts (MSG-3): the instructions as a system message, then each item's chat message."""
    total = 0 if instructions is None else TOKENIZER(instructions) + 3
    return total + sum(TOKENIZER(body_of(message)) + 3 for message in chat_messages(items))


def outputs_follow_their_calls(items: list[dict[str, Any]]) -> bool:
    seen: set[str] = set()
    for item in items:
        if item.get("type") == "function_call":
            seen.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in seen:
            return False
    return True


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"4 °C and drizzle in {city}"


@function_tool
def forecast(city: str) -> str:
    """A long forecast for a city."""
    return f"Forecast for {city}: " + "cloudy, then clearing; " * 12


class StubModel(Model):
    """Answers every question itself, calling one tool, two tools at once (after a reasoning item) or none."""

    def __init__(self, first_turn: int = 0) -> None:
        self.requests: list[tuple[str | None, list[dict[str, Any]]]] = []
        self.turn = first_turn
        self.calls = 0

    async def get_response(
        self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **_
    ):  # type: ignore[no-untyped-def, override]
        assert isinstance(input, list)
        self.requests.append((system_instructions, copy.deepcopy(input)))
        self.calls += 1
        question = [item for item in input if item.get("role") == "user"][-1]["content"]
        n = self.turn
        if input[-1].get("role") == "user" and n % 3:
            output: list[Any] = []
            if n % 3 == 2:
                output.append(
                    ResponseReasoningItem(
                        id=f"rs_{n}", type="reasoning", summary=[Summary(text="Two cities.", type="summary_text")]
                    )
                )
            for k, (tool, city) in enumerate([("weather", "Brno"), ("forecast", "Praha")][: n % 3]):
                output.append(
                    ResponseFunctionToolCall(
                        type="function_call",
                        id=f"fc_{n}_{k}",
                        call_id=f"call_{n}_{k}",
                        name=tool,
                        arguments=json.dumps({"city": city}),
                        status="completed",
                    )
                )
        else:
            text = f"Answer {n} to {question!r}."
            output = [
                ResponseOutputMessage(
                    id=f"msg_{n}_{self.calls}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        raise NotImplementedError


class AcknowledgingSession(SentinelSession):
    """Records every batch whose ``add_items`` returned: what the session acknowledged storing."""

    acknowledged: list[dict[str, Any]]

    async def add_items(self, items: list[Any]) -> None:
        await super().add_items(items)
        self.acknowledged.extend(copy.deepcopy(items))


def test_oai_1_to_oai_4_a_runner_conversation_of_24_turns_with_tools_and_a_restart(tmp_path):
    """OAI-1, OAI-2, OAI-3, OAI-4, INT-1, MSG-8: 24 Runner turns with single and parallel tool calls over a stub model, restarted once from the folder: every request within the budget and valid, nothing acknowledged lost."""
    acknowledged: list[dict[str, Any]] = []

    def session() -> AcknowledgingSession:
        made = AcknowledgingSession("chat-7", tmp_path / "sessions", token_budget=BUDGET, tokenizer=TOKENIZER)
        made.acknowledged = acknowledged
        return made

    async def run(turns: range, current: AcknowledgingSession) -> StubModel:
        model = StubModel()
        agent = Agent(name="weather", instructions=INSTRUCTIONS, model=model, tools=[weather, forecast])
        config = RunConfig(call_model_input_filter=current.call_model_input_filter, tracing_disabled=True)
        for n in turns:
            model.turn = n
            result = await Runner.run(agent, f"Question {n}: how is the weather?", session=current, run_config=config)
            assert (
                result.final_output == f"Answer {n} to 'Question {n}: how is the weather?'."
            )  # the SDK took every reply
        return model

    first = asyncio.run(run(range(12), session()))
    # The restart: a new session, agent and model over the same folder find everything acknowledged so far.
    assert asyncio.run(SentinelSession("chat-7", tmp_path / "sessions").get_items()) == acknowledged
    second = asyncio.run(run(range(12, 24), session()))

    requests = first.requests + second.requests
    assert len(requests) == 24 + sum(1 for n in range(24) if n % 3)  # one more call on every turn with tools
    calls = [item for _, items in requests for item in items if item.get("type") == "function_call"]
    assert {item["name"] for item in calls} == {"weather", "forecast"}
    largest = 0
    for instructions, items in requests:
        tokens = request_tokens(instructions, items)
        largest = max(largest, tokens)
        assert tokens <= BUDGET  # (1) the budget, counted with the same tokenizer
        chat = Converter.items_to_messages(items)  # the SDK's own chat-completions form of the request
        assert sm.request_problems([{"role": "system", "content": instructions}, *map(dict, chat)]) == []
        assert sm.request_problems([{"role": "system", "content": instructions}, *chat_messages(items)]) == []
        assert outputs_follow_their_calls(items)  # (2) valid: every output after its call
        assert items[0].get("role") == "user"
    assert largest > BUDGET * 0.7  # the budget was what bound the requests
    assert min(len(items) for _, items in second.requests) < len(acknowledged) / 4  # and history was cut

    # (3) nothing acknowledged is lost: a new session after the run holds every item, equal as JSON.
    stored = asyncio.run(SentinelSession("chat-7", tmp_path / "sessions").get_items())
    assert stored == acknowledged and len(stored) > 24 * 3
    assert [item["type"] for item in stored if item.get("type") == "reasoning"] == ["reasoning"] * 8
    assert sum(1 for item in stored if item.get("type") == "function_call_output") == 8 + 2 * 8


def test_oai_3_get_items_without_a_limit_is_the_budgeted_history(tmp_path):
    """OAI-3, MSG-2, MSG-9: with token_budget, get_items() is get_messages as items: the system item first, then whole units from a user message; the limit keeps the SDK's meaning."""
    memory = sm.create_memory()
    memory.remember("user:city", "Jakub lives in Brno", importance=0.9)
    session = SentinelSession("s", memory=memory, token_budget=120, system="Be brief.", tokenizer=TOKENIZER)
    call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city":"Brno"}'}
    items = [
        {"role": "user", "content": "x" * 200},
        {"role": "assistant", "content": "y" * 100},
        {"role": "user", "content": "Weather?"},
        call,
        {"type": "function_call_output", "call_id": "c1", "output": "4 °C"},
        {"id": "m1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Cold."}]},
    ]
    asyncio.run(session.add_items(items))
    got = asyncio.run(session.get_items())
    assert got == [{"role": "system", "content": "Be brief.\n\nuser:city: Jakub lives in Brno"}, *items[2:]]
    assert request_tokens(None, got) <= 120
    assert asyncio.run(session.get_items(2)) == items[-2:]
    assert asyncio.run(session.get_items(0)) == [] and asyncio.run(session.get_items(-1)) == items
    limited = SentinelSession("s", memory=memory, token_budget=120, session_settings=SessionSettings(limit=1))
    assert asyncio.run(limited.get_items()) == items[-1:]
    with pytest.raises(sm.TokenBudgetError):
        asyncio.run(SentinelSession("s", memory=memory, token_budget=5).get_items())
    with pytest.raises(TypeError, match="token_budget"):
        SentinelSession("s", memory=memory).budgeted_items()


def test_oai_1_int_1_every_kind_of_item_round_trips_whole_through_a_restart(tmp_path):
    """OAI-1, OAI-2, INT-1: an image, a file, a refusal, reasoning, hosted and custom calls, a computer call's screenshot and unknown kinds come back as they came after a restart."""
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "Use metric units."},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in this photo?"},
                image,
                {"type": "input_file", "file_id": "file-123", "filename": "notes.pdf"},
            ],
        },
        {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAAB" + "z" * 40},
        {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "x"}},
        {"type": "custom_tool_call", "call_id": "cc1", "name": "sql", "input": "SELECT 1"},
        {
            "type": "computer_call",
            "call_id": "pc1",
            "id": "cu_1",
            "action": {"type": "screenshot"},
            "status": "completed",
            "pending_safety_checks": [],
        },
        {"type": "custom_tool_call_output", "call_id": "cc1", "output": "1"},
        {
            "type": "computer_call_output",
            "call_id": "pc1",
            "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "m1",
            "status": "completed",
            "content": [{"type": "refusal", "refusal": "I cannot say."}],
        },
        {"type": "item_reference", "id": "msg_0"},
        {"type": "some_future_kind", "payload": {"nested": [1, 2.5, None, True, "é"]}},
        {"role": "user", "content": ("a", "tuple")},  # type: ignore[dict-item]
    ]
    asyncio.run(SentinelSession("kinds", tmp_path).add_items(items))
    back = asyncio.run(SentinelSession("kinds", tmp_path).get_items())
    assert back == json.loads(json.dumps(items))  # equal after a JSON round trip: the tuple is a list
    # The model items of one response are one assistant message with both calls; their outputs are tool messages.
    stored = [data for key, data in SentinelSession("kinds", tmp_path).memory.items()]
    roles = [(m["role"], [c["id"] for c in m.get("tool_calls", ())]) for m in stored]
    assert roles == [
        ("developer", []),
        ("user", []),
        ("assistant", ["cc1", "pc1"]),
        ("tool", []),
        ("tool", []),
        ("assistant", []),
        ("user", []),
    ]
    assert stored[1]["content"][0] == {"type": "text", "text": "What is in this photo?"}
    assert [part["type"] for part in stored[1]["content"]] == ["text", ITEM_PART]
    assert stored[2]["tool_calls"][0]["function"] == {"name": "sql", "arguments": "SELECT 1"}
    assert stored[2]["tool_calls"][1]["function"] == {"name": "computer_call", "arguments": '{"type":"screenshot"}'}
    assert stored[5]["content"][0] == {"type": "text", "text": "I cannot say."}  # a refusal's text is read


def test_oai_2_an_image_counts_nothing_beyond_its_message(tmp_path):
    """OAI-2, INT-1, MSG-3: a user message with an image counts as its text alone; a reasoning item adds nothing to its turn."""
    text_only = [{"role": "user", "content": "Look at this"}]
    with_image = [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look at this"},
                {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 5000},
            ],
        }
    ]
    assert request_tokens(None, with_image) == request_tokens(None, text_only) == TOKENIZER("Look at this") + 3
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    reasoning = {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "long " * 100}]}
    assert request_tokens(None, [reasoning, answer]) == request_tokens(None, [answer])


def test_oai_2_parallel_calls_stay_one_unit_with_their_outputs():
    """OAI-2, MSG-7: two calls of one response and their outputs are one unit: a budget keeps both or neither."""
    items = [
        {"role": "user", "content": "Brno and Praha?"},
        {"type": "function_call", "call_id": "a", "name": "weather", "arguments": '{"city":"Brno"}'},
        {"type": "function_call", "call_id": "b", "name": "weather", "arguments": '{"city":"Praha"}'},
        {"type": "function_call_output", "call_id": "a", "output": "4"},
        {"type": "function_call_output", "call_id": "b", "output": "5"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Cold."}]},
        {"role": "user", "content": "Thanks"},
    ]
    messages = chat_messages(items)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["a", "b"]
    everything = request_tokens(None, items)
    for budget in range(0, everything + 1):
        try:
            kept = budget_items(items, budget, tokenizer=TOKENIZER)
        except sm.TokenBudgetError:
            assert budget < request_tokens(None, items[-1:])
            continue
        assert request_tokens(None, kept) <= budget
        calls = {i["call_id"] for i in kept if i.get("type") == "function_call"}
        assert calls in (set(), {"a", "b"}) and kept[0]["role"] == "user"
        assert sm.request_problems(chat_messages(kept)) == []
    assert budget_items(items, everything, tokenizer=TOKENIZER) == items


def test_oai_2_an_output_that_answers_no_open_call_is_kept_but_never_sent(tmp_path):
    """OAI-2, OAI-3: an output whose call is not the newest turn's is kept as an assistant message, read back by get_items, and left out of budgeted histories."""
    session = SentinelSession("o", tmp_path, token_budget=500)
    stray = {"type": "function_call_output", "call_id": "gone", "output": "late"}
    items = [{"role": "user", "content": "Hi"}, stray, {"role": "assistant", "content": "Hello"}]
    asyncio.run(session.add_items(items))
    assert [m["role"] for m in session.memory.values()] == ["user", "assistant", "assistant"]
    assert asyncio.run(session.get_items(-1)) == items
    assert asyncio.run(session.get_items()) == [items[0], items[2]]
    assert budget_items(items, 500) == [items[0], items[2]]


def test_oai_1_pop_item_and_clear_session(tmp_path):
    """OAI-1, OAI-2: pop_item removes and returns the newest item, also from a turn of several; clear_session forgets the turns and keeps the facts."""
    session = SentinelSession("p", tmp_path)
    session.memory.remember("user:name", "Jakub")
    calls = [
        {"type": "reasoning", "id": "rs", "summary": []},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
    ]
    asyncio.run(session.add_items([{"role": "user", "content": "Hi"}, *calls]))
    assert asyncio.run(session.pop_item()) == calls[2]
    assert asyncio.run(SentinelSession("p", tmp_path).get_items()) == [{"role": "user", "content": "Hi"}, *calls[:2]]
    turn = session.memory["chat:2"]
    assert [c["id"] for c in turn["tool_calls"]] == ["a"]
    asyncio.run(session.add_items([{"type": "function_call_output", "call_id": "a", "output": "1"}]))
    assert session.memory["chat:3"]["role"] == "tool"  # the kept call is still open and answered
    assert [asyncio.run(session.pop_item()) for _ in range(4)][-1] == {"role": "user", "content": "Hi"}
    assert asyncio.run(session.pop_item()) is None
    asyncio.run(session.add_items([{"role": "user", "content": "Again"}]))
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == [] and dict(session.memory) == {"user:name": "Jakub"}


def test_oai_1_turns_written_by_others_read_as_items():
    """OAI-1: turns that add_turn and add_messages stored read as the SDK's messages, function calls and outputs."""
    memory = sm.create_memory()
    memory.add_turn("user", "Weather?")
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    memory.add_messages(
        [
            {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
            {"role": "tool", "content": "4", "tool_call_id": "c1"},
        ]
    )
    assert asyncio.run(SentinelSession("x", memory=memory).get_items()) == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "4"},
    ]
    assert items_of_turn("not a message") == []


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ("just text", r"items\[1\] is a str"),
        ({"type": "input_image", "image": b"\x89PNG"}, r"items\[1\] \(type 'input_image'\) has no JSON form.*base64"),
        ({"role": "user", "content": [{"type": "input_text", "text": math.nan}]}, r"items\[1\] \(type 'message'\)"),
        ({"type": "x", "tags": {"a", "b"}}, r"items\[1\] \(type 'x'\)"),
        ({"type": "x", 1: "int key"}, r"items\[1\]"),
    ],
)
def test_oai_5_int_1_an_item_without_a_json_form_is_refused_whole(tmp_path, bad, match):
    """OAI-5, INT-1: an item that is not a dict or has no JSON form raises TypeError naming it and what to pass; nothing of its batch is stored."""
    session = SentinelSession("bad", tmp_path)
    asyncio.run(session.add_items([{"role": "user", "content": "kept"}]))
    before = (tmp_path / session.memory.store.path.name).read_bytes()
    with pytest.raises(TypeError, match=match):
        asyncio.run(session.add_items([{"role": "user", "content": "not kept"}, bad]))
    assert (tmp_path / session.memory.store.path.name).read_bytes() == before
    assert asyncio.run(SentinelSession("bad", tmp_path).get_items()) == [{"role": "user", "content": "kept"}]
    with pytest.raises(TypeError, match=r"items\[0\]"):
        budget_items([bad], 100)


def test_oai_5_other_bad_input(tmp_path):
    """OAI-5, ENT-13: a batch that is not a list, duplicate call ids in one response, an item nested too deep for a turn, and bad constructor arguments raise and change nothing."""
    session = SentinelSession("b", tmp_path)
    deep: Any = "x"
    for _ in range(sm.MAX_DEPTH - 4):
        deep = [deep]
    session.add([{"type": "odd", "v": deep}])  # 96 deep in the item, 100 in its turn: kept
    assert session.items() == [{"type": "odd", "v": deep}]
    session.clear()
    with pytest.raises(ValueError, match=r"items\[1\] \(type 'odd'\) is nested more than 97 containers deep"):
        session.add([{"role": "user", "content": "Hi"}, {"type": "odd", "v": [deep]}])
    with pytest.raises(TypeError, match="list"):
        asyncio.run(session.add_items("hello"))  # type: ignore[arg-type]
    twice = {"type": "function_call", "call_id": "same", "name": "f", "arguments": "{}"}
    with pytest.raises(ValueError, match="same"):
        asyncio.run(session.add_items([{"role": "user", "content": "Hi"}, twice, dict(twice)]))
    assert asyncio.run(session.get_items()) == [] and len(session.memory) == 0
    with pytest.raises(TypeError, match="session_id"):
        SentinelSession(42, tmp_path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="exactly one"):
        SentinelSession("x")
    with pytest.raises(TypeError, match="exactly one"):
        SentinelSession("x", tmp_path, memory=sm.create_memory())
    with pytest.raises(TypeError, match="Memory"):
        SentinelSession("x", memory=sm.MemoryStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit"):
        SentinelSession("x", memory=sm.create_memory(), limit=3)
    with pytest.raises(TypeError, match="system"):
        SentinelSession("x", tmp_path, system=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SentinelSession("x", tmp_path, tokenizer=42)  # type: ignore[arg-type]


def test_oai_4_the_filter_counts_the_instructions_and_passes_without_a_budget():
    """OAI-4, MSG-9: budget_items counts the instructions and leading system items first and raises TokenBudgetError when they exceed; without a budget the filter changes nothing."""
    items = [{"role": "system", "content": "Facts."}, {"role": "user", "content": "Hi"}]
    need = TOKENIZER("Rules.") + 3 + TOKENIZER("Facts.") + 3
    with pytest.raises(sm.TokenBudgetError) as raised:
        budget_items(items, need - 1, tokenizer=TOKENIZER, instructions="Rules.")
    assert raised.value.needed == need
    with pytest.raises(sm.TokenBudgetError):
        budget_items(items, need, tokenizer=TOKENIZER, instructions="Rules.")  # the question does not fit
    assert budget_items(items, need + TOKENIZER("Hi") + 3, tokenizer=TOKENIZER, instructions="Rules.") == items
    from agents.run_config import CallModelData, ModelInputData

    data = CallModelData(
        model_data=ModelInputData(input=items, instructions="Rules."), agent=Agent(name="a"), context=None
    )
    assert SentinelSession("f", memory=sm.create_memory()).call_model_input_filter(data) is data.model_data


class ThreadStore(sm.MemoryStore):
    """Records the threads its saves run in."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[int] = []

    def save(self, document: Any) -> None:
        self.threads.append(threading.get_ident())
        super().save(document)


def test_oai_6_the_coroutines_run_the_memory_in_a_worker_thread_and_finish_when_cancelled():
    """OAI-6: saves happen off the event loop's thread; a cancelled add_items still stores its batch whole, then raises CancelledError."""
    store = ThreadStore()
    session = SentinelSession("t", memory=sm.create_memory(store=store, autosave=True))
    assert isinstance(session, SessionABC) and repr(session).startswith("SentinelSession('t', <Memory")

    async def scenario() -> None:
        await session.add_items([{"role": "user", "content": "one"}])
        task = asyncio.ensure_future(
            session.add_items([{"role": "user", "content": "two"}, {"role": "assistant", "content": "2"}])
        )
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await session.get_items() == [
            {"role": "user", "content": "one"},
            {"role": "user", "content": "two"},
            {"role": "assistant", "content": "2"},
        ]
        await session.pop_item()
        await session.clear_session()

    asyncio.run(scenario())
    assert store.threads and threading.get_ident() not in store.threads
    assert session.items() == [] and session.pop() is None


def test_oai_6_importing_the_package_does_not_import_the_sdk():
    """OAI-6, DEP-1: `import sentinel_memory` imports no module of the SDK; importing the adapter does."""
    code = (
        "import sys, sentinel_memory; print('agents' in sys.modules); "
        "import sentinel_memory.integrations.openai_agents; print('agents' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_oai_6_without_the_sdk_the_adapter_names_the_extra(monkeypatch):
    """OAI-6: with the SDK missing, importing the adapter raises ImportError naming the [openai-agents] extra."""
    for name in [m for m in sys.modules if m == "agents" or m.startswith("agents.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.openai_agents")
    with pytest.raises(ImportError, match=r"sentinel-memory\[openai-agents\]"):
        importlib.import_module("sentinel_memory.integrations.openai_agents")
