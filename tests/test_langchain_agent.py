"""LangChain v1 agents over a memory: create_agent with SentinelMemoryMiddleware, end to end (LC-7, LC-8, INT-1)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest
from agent_support import ScriptedToolModel, check_requests, request_tokens
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import sentinel_memory as sm
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory, turns_from_messages
from sentinel_memory.integrations.langchain.middleware import RECORDED, SentinelMemoryMiddleware

SYSTEM = "You are the concierge of Hotel Sentinel."
ALLERGY = "user:allergy: allergic to peanuts"
BUDGET = 400
TURNS = 24


def tokenizer(text: str) -> int:
    """The count the middleware and the checks share: the package's estimator."""
    return sm.estimate_tokens(text)


def script(turn: int) -> list[tuple[str, dict[str, Any]]]:
    """The tools the model calls after the question of ``turn``: one, two at once, or none every sixth turn."""
    if turn % 6 == 5:
        return []
    if turn % 3 == 0:
        return [("weather", {"city": f"City {turn}"}), ("save_note", {"text": f"note of turn {turn}"})]
    return [("weather", {"city": f"Town {turn}"})]


def hotel_tools(notes: list[str]) -> list[Any]:
    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"{len(city)} °C and sunny in {city}, " + "with a light breeze " * 4

    @tool
    def save_note(text: str) -> str:
        """Save a note for the guest."""
        notes.append(text)
        return f"saved: {text}"

    return [weather, save_note]


def question(turn: int) -> str:
    return f"turn {turn}: what is the weather like today, and is there anything I should know?"


def agent_over(folder: sm.MemoryFolder, model: ScriptedToolModel, notes: list[str], **options: Any) -> Any:
    middleware = SentinelMemoryMiddleware(folder.open("guest-7"), BUDGET, tokenizer=tokenizer, must_keep=0.9)
    return create_agent(model, tools=hotel_tools(notes), system_prompt=SYSTEM, middleware=[middleware], **options)


def test_lc_7_lc_8_int_1_an_agent_runs_24_tool_turns_and_a_restart_within_the_budget(tmp_path):
    """LC-7, LC-8, INT-1, MSG-8: create_agent over a scripted tool model, 24 turns (20 with tool calls), a restart; every request within the budget, valid, with the question and the must-keep fact; nothing acknowledged is lost."""
    folder = sm.MemoryFolder(tmp_path / "guests")
    folder.open("guest-7").remember("user:allergy", "allergic to peanuts", importance=1)
    notes: list[str] = []
    acknowledged: list[Any] = []  # every message of every run's final state, in order
    seen: list[list[Any]] = []
    questions_seen: list[str] = []
    model = ScriptedToolModel(script=script)
    agent = agent_over(folder, model, notes)
    for turn in range(1, TURNS + 1):
        if turn == 13:  # the restart: new memory, middleware, model and agent objects over the same folder
            seen += model.seen
            model = ScriptedToolModel(script=script)
            agent = agent_over(sm.MemoryFolder(tmp_path / "guests"), model, notes)
            first_after_restart = len(seen)
        before = len(model.seen)
        state = agent.invoke({"messages": [{"role": "user", "content": question(turn)}]})
        assert state["messages"][-1].content.startswith(f"Answer {turn}:")
        acknowledged += state["messages"]
        for request in model.seen[before:]:
            assert [m for m in request if isinstance(m, HumanMessage)][-1].content == question(turn)
            questions_seen.append(question(turn))
    seen += model.seen
    calls = sum(1 for request in seen for m in request if isinstance(m, AIMessage) and m.tool_calls)
    counts = check_requests(seen, BUDGET, tokenizer, system=SYSTEM, fact=ALLERGY)
    assert len(seen) == TURNS + sum(1 for turn in range(1, TURNS + 1) if script(turn)) == 44
    assert calls > 0 and max(counts) <= BUDGET and len(questions_seen) == len(seen)
    print(
        f"\n{len(seen)} requests, {calls} assistant tool-call messages across them; tokens per request {min(counts)}..{max(counts)}, mean {sum(counts) / len(counts):.0f}, budget {BUDGET}"
    )
    # The budget binds: late requests leave older turns out, yet the restart kept the history.
    assert max(len(r) for r in seen) < 2 * TURNS
    assert any(isinstance(m, ToolMessage) for m in seen[first_after_restart]), "the history before the restart"
    # Nothing acknowledged is lost: a third process finds every message of every run, in order, once.
    again = sm.MemoryFolder(tmp_path / "guests").open("guest-7")
    turns = [data for key, data in again.items() if key.startswith("chat:")]
    assert turns == turns_from_messages(acknowledged)
    assert len(turns) == TURNS * 2 + sum(1 + len(script(t)) for t in range(1, TURNS + 1) if script(t)) == 96
    assert notes == [f"note of turn {t}" for t in range(1, TURNS + 1) if t % 3 == 0 and t % 6 != 5]
    assert again["user:allergy"] == "allergic to peanuts"


def test_lc_7_the_model_sees_the_memorys_request_not_the_state(tmp_path):
    """LC-7: the model's input is get_messages with the agent's system prompt and the newest question as query; the state keeps every message."""
    mem = sm.create_memory()
    mem.remember("menu:risotto", "the risotto has no nuts", importance=0.5)
    mem.remember("spa:hours", "the spa opens at nine", importance=0.5)
    model = ScriptedToolModel(script=lambda turn: [])
    middleware = SentinelMemoryMiddleware(mem, 60, tokenizer=tokenizer, facts_share=0.5)
    agent = create_agent(model, system_prompt="Be brief.", middleware=[middleware])
    twin = sm.create_memory()  # the memory as the model call finds it: the facts and the question
    for key, data in mem.items():
        twin.remember(key, data, importance=0.5)
    agent.invoke({"messages": [{"role": "user", "content": "turn 1: does the risotto have nuts?"}]})
    twin.add_message({"role": "user", "content": "turn 1: does the risotto have nuts?"})
    expected = twin.get_messages(
        token_budget=60,
        tokenizer=tokenizer,
        system="Be brief.",
        query="turn 1: does the risotto have nuts?",
        facts_share=0.5,
    )
    request = model.seen[0]
    assert [m.content for m in request] == [m["content"] for m in expected.messages]
    assert request[-1].content == "turn 1: does the risotto have nuts?"
    assert request[0].content.index("risotto has no nuts") < request[0].content.index("spa")  # the query ranks it first
    # A state with many turns: the model sees only what fits; the state and the memory keep all.
    for turn in range(2, 8):
        state = agent.invoke({"messages": [{"role": "user", "content": f"turn {turn}: " + "and what else? " * 3}]})
    assert len(state["messages"]) == 2 and len(model.seen[-1]) < 14
    assert request_tokens(model.seen[-1], tokenizer) <= 60
    assert len([k for k in mem if k.startswith("chat:")]) == 14


def test_lc_7_the_newest_question_ranks_the_facts():
    """LC-7, REC-2: with room for one fact, the model is given the one the newest question asks about, not the newest fact."""
    mem = sm.create_memory()
    mem.remember("spa:hours", "the spa opens at nine every morning", importance=0.5)
    mem.remember("menu:risotto", "the risotto has no nuts at all", importance=0.5)
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(
        model, system_prompt="Be brief.", middleware=[SentinelMemoryMiddleware(mem, 40, tokenizer=tokenizer)]
    )
    agent.invoke({"messages": [{"role": "user", "content": "turn 1: when does the spa open?"}]})
    assert model.seen[0][0].content == "Be brief.\n\nspa:hours: the spa opens at nine every morning"


def test_lc_8_a_checkpointed_thread_records_each_message_once_across_runs(tmp_path):
    """LC-8: with a checkpointer the thread's state grows run by run; each message becomes a turn once, the recorded ids stay private."""
    mem = sm.create_memory()
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=hotel_tools([]),
        middleware=[SentinelMemoryMiddleware(mem, BUDGET, tokenizer=tokenizer)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t-1"}}
    for turn in range(1, 5):
        state = agent.invoke({"messages": [{"role": "user", "content": question(turn)}]}, config=config)
    assert RECORDED not in state
    turns = [data for key, data in mem.items() if key.startswith("chat:")]
    assert turns == turns_from_messages(state["messages"])
    # A second thread over the same memory adds its own messages and none of the first's again.
    other = agent.invoke(
        {"messages": [{"role": "user", "content": question(5)}]}, config={"configurable": {"thread_id": "t-2"}}
    )
    assert [d for k, d in mem.items() if k.startswith("chat:")] == turns + turns_from_messages(other["messages"])


class ThreadNotingStore(sm.JsonFileStore):
    """A file store that notes the thread of every load and save."""

    def __init__(self, path: Any, threads: set[int]) -> None:
        super().__init__(path)
        self.threads = threads

    def load(self) -> Any:
        self.threads.add(threading.get_ident())
        return super().load()

    def save(self, document: Any) -> None:
        self.threads.add(threading.get_ident())
        super().save(document)


def test_lc_7_lc_8_ainvoke_does_what_invoke_does_and_never_touches_the_store_on_the_loop(tmp_path):
    """LC-7, LC-8: agent.ainvoke records and budgets as invoke does; the memory's file I/O and its reads run off the event loop's thread."""
    threads: set[int] = set()
    counted: set[int] = set()

    def noting_tokenizer(text: str) -> int:
        counted.add(threading.get_ident())
        return tokenizer(text)

    mem = sm.create_memory(store=ThreadNotingStore(tmp_path / "m.json", threads), autosave=True, shared=True)
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=hotel_tools([]),
        system_prompt=SYSTEM,
        middleware=[SentinelMemoryMiddleware(mem, 300, tokenizer=noting_tokenizer)],
    )

    async def run() -> tuple[int, list[Any]]:
        states = []
        for turn in range(1, 7):
            states.append(await agent.ainvoke({"messages": [{"role": "user", "content": question(turn)}]}))
        return threading.get_ident(), [m for s in states for m in s["messages"]]

    threads.clear()
    loop_thread, acknowledged = asyncio.run(run())
    assert threads and loop_thread not in threads  # the saves (LC-8)
    assert counted and loop_thread not in counted  # the reads that build the request (LC-7)
    check_requests(model.seen, 300, tokenizer, system=SYSTEM)
    reopened = sm.create_memory(store=sm.JsonFileStore(tmp_path / "m.json"))
    assert [d for k, d in reopened.items() if k.startswith("chat:")] == turns_from_messages(acknowledged)


def test_int_1_lc_8_an_image_reaches_the_model_as_it_came_and_counts_no_text(tmp_path):
    """INT-1, LC-8, LC-7: a question with an image block is kept whole, given back to the model equal, and the budget counts its text only."""
    image = {"type": "image", "url": "https://example.com/plate.png"}
    mem = sm.create_memory()
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(model, middleware=[SentinelMemoryMiddleware(mem, 100, tokenizer=tokenizer)])
    content = [{"type": "text", "text": "turn 1: what is on this plate?"}, image]
    agent.invoke({"messages": [HumanMessage(content=content)]})
    agent.invoke({"messages": [HumanMessage("turn 2: and is it vegan?")]})
    assert mem["chat:1"] == {"role": "user", "content": content}
    assert model.seen[1][0].content == content
    assert request_tokens(model.seen[1][:1], tokenizer) == tokenizer("turn 1: what is on this plate?") + 3


def test_int_1_lc_8_a_block_with_no_json_form_stops_the_run_and_stores_nothing():
    """INT-1, LC-8: a question with a bytes block raises TypeError naming the block and what to pass; the memory stores nothing."""
    mem = sm.create_memory()
    agent = create_agent(ScriptedToolModel(script=lambda turn: []), middleware=[SentinelMemoryMiddleware(mem, 100)])
    bad = HumanMessage(content=[{"type": "text", "text": "look"}, {"type": "image", "base64": b"\x89PNG"}])
    with pytest.raises(
        TypeError,
        match=r"messages\[0\] \(HumanMessage\)\.content\[1\], the 'image' block, has no JSON form.*base64 text",
    ):
        agent.invoke({"messages": [bad]})
    assert list(mem) == []


def test_lc_7_a_budget_too_small_for_the_question_raises_before_the_model_is_called():
    """LC-7, MSG-9: a budget that cannot hold the system prompt and the question raises TokenBudgetError; the model is never called."""
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(model, system_prompt=SYSTEM, middleware=[SentinelMemoryMiddleware(sm.create_memory(), 10)])
    with pytest.raises(sm.TokenBudgetError):
        agent.invoke({"messages": [{"role": "user", "content": question(1)}]})
    assert model.seen == []


def test_lc_7_a_system_prompt_with_blocks_other_than_text_is_refused():
    """LC-7: an agent whose system message holds a non-text block raises TypeError saying to pass a str system_prompt."""
    prompt = SystemMessage(
        content=[{"type": "text", "text": "Be brief."}, {"type": "image", "url": "https://x/logo.png"}]
    )
    agent = create_agent(
        ScriptedToolModel(script=lambda turn: []),
        system_prompt=prompt,
        middleware=[SentinelMemoryMiddleware(sm.create_memory(), 100)],
    )
    with pytest.raises(TypeError, match="str system_prompt"):
        agent.invoke({"messages": [{"role": "user", "content": "turn 1"}]})


def test_lc_7_the_middleware_needs_a_memory_and_from_folder_opens_one(tmp_path):
    """LC-7, FLD-2: a non-Memory raises TypeError; from_folder opens the user's memory of the folder."""
    with pytest.raises(TypeError, match="memory must be a Memory"):
        SentinelMemoryMiddleware(SentinelChatMessageHistory(sm.create_memory()), 100)  # type: ignore[arg-type]
    middleware = SentinelMemoryMiddleware.from_folder(tmp_path / "f", "jakub", 100)
    middleware.memory.add_turn("user", "Hi")
    assert (
        sm.MemoryFolder(tmp_path / "f").open("jakub")["chat:1"] == "user: Hi"
        or sm.MemoryFolder(tmp_path / "f").open("jakub")["chat:1"]["content"] == "Hi"
    )


@pytest.mark.parametrize("backed", ["in memory", "by a file"])
def test_lc_7_a_run_counts_what_fits_not_the_whole_history(tmp_path, backed):
    """LC-7, LC-8, MSG-17: with 200 turns in the memory, the first stable request counts each stored turn once (its memo); every later run counts the turns that can fit the budget and the new ones, not every stored turn."""
    memory = sm.MemoryFolder(tmp_path / "f").open("guest") if backed == "by a file" else sm.create_memory()
    memory.add_messages(
        [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 5} for i in range(200)]
    )
    counted: list[str] = []

    def counting(text: str) -> int:
        counted.append(text)
        return tokenizer(text)

    agent = create_agent(
        ScriptedToolModel(script=lambda turn: []),
        middleware=[SentinelMemoryMiddleware(memory, 400, tokenizer=counting)],
    )
    for turn in range(1, 6):
        counted.clear()
        agent.invoke({"messages": [{"role": "user", "content": f"turn {turn}"}]})
        if turn == 1:  # the memo of the stable cut (MSG-17): every stored turn counted once
            assert 200 <= len(counted) < 260, len(counted)
            continue
        # 400 tokens hold about 20 of these turns: a run that counted every stored turn would count 200 and more.
        assert 0 < len(counted) < 60, len(counted)


def test_lc_5_importing_the_history_does_not_import_langchain_agents():
    """LC-5: importing sentinel_memory.integrations.langchain needs langchain-core alone; the middleware is imported on first use."""
    code = (
        "import sys, sentinel_memory.integrations.langchain as lc; print('langchain.agents' in sys.modules); "
        "lc.SentinelMemoryMiddleware; print('langchain.agents' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_lc_5_without_langchain_the_middleware_names_the_extra_and_the_history_still_imports(monkeypatch):
    """LC-5: with langchain (v1) missing, importing the middleware raises ImportError naming the [langchain] extra; the history needs langchain-core alone."""
    import importlib

    for name in [m for m in sys.modules if m == "langchain" or m.startswith("langchain.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langchain", None)
    for name in ("sentinel_memory.integrations.langchain", "sentinel_memory.integrations.langchain.middleware"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    history = importlib.import_module("sentinel_memory.integrations.langchain")
    assert history.SentinelChatMessageHistory(sm.create_memory()).messages == []
    with pytest.raises(ImportError, match=r"needs langchain \(v1\).*sentinel-memory\[langchain\]"):
        importlib.import_module("sentinel_memory.integrations.langchain.middleware")
