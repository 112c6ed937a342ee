"""The LangGraph store under a LangChain v1 agent, end to end: tools put and search memories through runtime.store (LG-1, LG-5)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langgraph")

from agent_support import ScriptedToolModel, check_requests
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import HumanMessage

import sentinel_memory as sm
from sentinel_memory.integrations.langchain import turns_from_messages
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.langgraph import SentinelStore

NAMESPACE = ("guests", "7")
SYSTEM = "You are the concierge. Save what the guest tells you; search before you answer."
BUDGET = 350
TURNS = 22
DISHES = (
    "risotto goulash pierogi ramen paella moussaka tagine borscht pho falafel lasagne "
    "ceviche biryani dumplings schnitzel gnocchi kimchi hummus tempura svickova gazpacho couscous"
).split()


def tokenizer(text: str) -> int:
    return sm.estimate_tokens(text)


def script(turn: int) -> list[tuple[str, dict[str, Any]]]:
    """Every turn saves what the guest said; every other turn also searches what was saved before."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"key": f"fact-{turn}", "text": f"the guest likes {DISHES[turn - 1]}"})
    ]
    if turn % 2 == 0:
        calls.append(("recall", {"query": DISHES[turn - 2]}))
    return calls


def store_tools(acknowledged: dict[str, dict[str, Any]]) -> list[Any]:
    @tool
    def remember(key: str, text: str, runtime: ToolRuntime) -> str:
        """Save a fact about the guest under a key."""
        value = {"text": text, "importance": 0.6}
        runtime.store.put(NAMESPACE, key, value)
        acknowledged[key] = value  # the tool told the model it is saved
        return f"saved {key}"

    @tool
    def recall(query: str, runtime: ToolRuntime) -> str:
        """Search the saved facts."""
        hits = runtime.store.search(NAMESPACE, query=query, limit=2)
        return "; ".join(f"{hit.key}: {hit.value['text']}" for hit in hits) or "nothing saved"

    return [remember, recall]


def agent_over(path: Any, model: ScriptedToolModel, acknowledged: dict[str, dict[str, Any]]) -> Any:
    store = SentinelStore(path / "store")
    history = SentinelMemoryMiddleware.from_folder(path / "history", "guest-7", BUDGET, tokenizer=tokenizer)
    return create_agent(model, tools=store_tools(acknowledged), system_prompt=SYSTEM, middleware=[history], store=store)


def test_lg_1_lg_5_an_agent_saves_and_searches_through_the_store_for_22_turns_and_a_restart(tmp_path):
    """LG-1, LG-5, LC-7, INT-1: create_agent with store=SentinelStore, 22 tool turns and a restart; every request within the budget and valid; every acknowledged put is found after it."""
    acknowledged: dict[str, dict[str, Any]] = {}
    messages: list[Any] = []
    model = ScriptedToolModel(script=script)
    agent = agent_over(tmp_path, model, acknowledged)
    seen: list[Any] = []
    for turn in range(1, TURNS + 1):
        if turn == 12:  # the restart: new store, memory, middleware, model and agent over the same folders
            seen += model.seen
            model = ScriptedToolModel(script=script)
            agent = agent_over(tmp_path, model, acknowledged)
        state = agent.invoke(
            {"messages": [HumanMessage(f"turn {turn}: I like {DISHES[turn - 1]}. What did I like before?")]}
        )
        messages += state["messages"]
        if turn % 2 == 0:
            found = next(m for m in state["messages"] if getattr(m, "name", None) == "recall").content
            assert (
                f"fact-{turn - 1}: the guest likes {DISHES[turn - 2]}" in found
            )  # saved the turn before, maybe before the restart
    seen += model.seen
    counts = check_requests(seen, BUDGET, tokenizer, system=SYSTEM)
    assert len(seen) == 2 * TURNS and max(counts) <= BUDGET
    print(f"\n{len(seen)} requests, tokens per request {min(counts)}..{max(counts)}, budget {BUDGET}")
    # Nothing acknowledged is lost: a third store over the folder holds every put, and finds each by search.
    again = SentinelStore(tmp_path / "store")
    assert len(acknowledged) == TURNS
    for key, value in acknowledged.items():
        item = again.get(NAMESPACE, key)
        assert item is not None and item.value == value
        dish = value["text"].split()[-1]
        assert [hit.key for hit in again.search(NAMESPACE, query=dish, limit=1)] == [key]
    history = sm.MemoryFolder(tmp_path / "history").open("guest-7")
    assert [d for k, d in history.items() if k.startswith("chat:")] == turns_from_messages(messages)
