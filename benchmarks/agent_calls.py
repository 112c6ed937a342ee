"""What a memory adds to each model call of an agent, beside the framework's own memory, at 200 turns.

For each framework (a LangChain v1 ``create_agent``, an Agents SDK
``Runner``, a pydantic-ai ``Agent``) over a stub model that answers at once,
one run is one model call: a new question over a conversation of 200 turns
already stored. Each round times, back to back in a rotating order, the
bare agent (no memory) and the same agent with each memory; a memory's cost
is the median over the rounds of its run's time less the bare run's. The
memories: this library over a file folder (the default: autosaved, shared,
each save fsynced, ``durability="full"``; and with ``durability="normal"``,
the file fsynced but not its folder) and over the in-memory store, and the
framework's own persistent memory where it has one (LangGraph's SQLite
checkpointer and its in-memory one, the Agents SDK's ``SQLiteSession``,
pydantic-ai's ``message_history`` passed by hand, which is in memory only).

Run it with ``python benchmarks/agent_calls.py [rounds]``; it prints a
Markdown table, milliseconds per model call, then the targets: the file
folder at most twice the framework's persistent memory, and the in-memory
store at most 2 ms per model call.
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from agents import Agent as SdkAgent
from agents import RunConfig, Runner, SQLiteSession
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel
from server_support import Echo, EchoChatModel, EchoModel

import sentinel_memory as sm
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.openai_agents import SentinelSession
from sentinel_memory.integrations.pydantic_ai import SentinelHistory

TURNS = 200
BUDGET = 2_000


def history(n: int = TURNS) -> list[dict[str, str]]:
    """A conversation of ``n`` turns, question and answer by turns."""
    return [{"role": ("user", "assistant")[i % 2], "content": f"message {i} about the menu " * 3} for i in range(n)]


def per_call(runs: dict[str, Callable[[int], object]], rounds: int) -> dict[str, float]:
    """The median, in ms, of each run's time less the bare run's of the same round; ``runs["bare"]`` is the baseline."""
    names = list(runs)
    extra: dict[str, list[float]] = {name: [] for name in names if name != "bare"}
    order = itertools.cycle([names, names[::-1]])
    for turn in range(rounds + 2):
        took = {}
        for name in next(order):
            start = time.perf_counter()
            runs[name](turn)
            took[name] = time.perf_counter() - start
        if turn >= 2:  # warm-up rounds
            for name in extra:
                extra[name].append((took[name] - took["bare"]) * 1000)
    return {name: statistics.median(values) for name, values in extra.items()}


#: The rows of the targets: (framework, the framework's persistent memory or None).
PERSISTENT = {
    "LangChain `create_agent`": "framework: SQLite checkpointer",
    "OpenAI Agents SDK `Runner`": "framework: SQLiteSession",
    "pydantic-ai `Agent`": None,
}
FILES = "sentinel (file folder)"
FILES_NORMAL = "sentinel (file folder, durability normal)"
IN_MEMORY = "sentinel (in-memory store)"


def langchain_runs(folder: Path) -> dict[str, Callable[[int], object]]:
    files = sm.MemoryFolder(folder / "lc").open("u")
    files.add_messages(history())
    normal = sm.MemoryFolder(folder / "lc-normal", durability="normal").open("u")
    normal.add_messages(history())
    in_memory = sm.create_memory()
    in_memory.add_messages(history())
    prior: list[AnyMessage | dict[str, Any]] = [
        HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"]) for m in history()
    ]
    saver = SqliteSaver(sqlite3.connect(folder / "lc.sqlite", check_same_thread=False))
    user: RunnableConfig = {"configurable": {"thread_id": "u"}}
    sqlite_agent = create_agent(EchoChatModel(), checkpointer=saver)
    sqlite_agent.invoke({"messages": prior}, config=user)
    memory_agent = create_agent(EchoChatModel(), checkpointer=InMemorySaver())
    memory_agent.invoke({"messages": prior}, config=user)
    bare = create_agent(EchoChatModel())
    on_files = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(files, BUDGET)])
    on_normal = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(normal, BUDGET)])
    on_memory = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(in_memory, BUDGET)])

    def ask(agent: Any, **config: Any) -> Callable[[int], object]:
        return lambda n: agent.invoke({"messages": [HumanMessage(f"question {n}")]}, **config)

    thread = {"config": user}
    return {
        "bare": ask(bare),
        FILES: ask(on_files),
        FILES_NORMAL: ask(on_normal),
        IN_MEMORY: ask(on_memory),
        "framework: SQLite checkpointer": ask(sqlite_agent, **thread),
        "framework: in-memory checkpointer": ask(memory_agent, **thread),
    }


def agents_sdk_runs(folder: Path) -> dict[str, Callable[[int], object]]:
    items = history()
    files = SentinelSession("u", folder / "oai")
    files.add(items)
    normal = SentinelSession("u", sm.MemoryFolder(folder / "oai-normal", durability="normal"))
    normal.add(items)
    in_memory = SentinelSession("u", memory=sm.create_memory())
    in_memory.add(items)
    own = SQLiteSession("u", str(folder / "oai.sqlite"))
    asyncio.run(own.add_items(items))  # type: ignore[arg-type]
    agent = SdkAgent(name="a", model=EchoModel())
    config = RunConfig(tracing_disabled=True)

    def ask(session: Any) -> Callable[[int], object]:
        return lambda n: asyncio.run(Runner.run(agent, f"question {n}", session=session, run_config=config))

    return {
        "bare": ask(None),
        FILES: ask(files),
        FILES_NORMAL: ask(normal),
        IN_MEMORY: ask(in_memory),
        "framework: SQLiteSession": ask(own),
    }


def pydantic_ai_runs(folder: Path) -> dict[str, Callable[[int], object]]:
    messages: list[Any] = []
    for m in history():
        if m["role"] == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(m["content"])]))
        else:
            messages.append(ModelResponse(parts=[TextPart(m["content"])]))
    files = SentinelHistory.from_folder(folder / "pai", "u", BUDGET)
    files.record(messages)
    normal = SentinelHistory(sm.MemoryFolder(folder / "pai-normal", durability="normal").open("u"), BUDGET)
    normal.record(messages)
    in_memory = SentinelHistory(sm.create_memory(), BUDGET)
    in_memory.record(messages)
    by_hand = {"history": list(messages)}
    bare = Agent(FunctionModel(Echo()))
    on_files = Agent(FunctionModel(Echo()), capabilities=[files])
    on_normal = Agent(FunctionModel(Echo()), capabilities=[normal])
    on_memory = Agent(FunctionModel(Echo()), capabilities=[in_memory])

    def own(n: int) -> object:
        result = bare.run_sync(f"question {n}", message_history=by_hand["history"])
        by_hand["history"] = result.all_messages()
        return result

    return {
        "bare": lambda n: bare.run_sync(f"question {n}"),
        FILES: lambda n: on_files.run_sync(f"question {n}"),
        FILES_NORMAL: lambda n: on_normal.run_sync(f"question {n}"),
        IN_MEMORY: lambda n: on_memory.run_sync(f"question {n}"),
        "framework: message_history by hand": own,
    }


def table(rounds: int) -> str:
    """The Markdown table of every framework's memories, ms per model call over the bare agent, then the targets."""
    lines = ["| framework | memory | ms per model call over the bare agent |", "|---|---|---|"]
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as path:
        for framework, make in (
            ("LangChain `create_agent`", langchain_runs),
            ("OpenAI Agents SDK `Runner`", agents_sdk_runs),
            ("pydantic-ai `Agent`", pydantic_ai_runs),
        ):
            folder = Path(path) / framework.split()[0]
            folder.mkdir()
            found[framework] = per_call(make(folder), rounds)
            for name, ms in found[framework].items():
                lines.append(f"| {framework} | {name} | {ms:+.2f} |")
    lines += ["", "| framework | target | measured | met |", "|---|---|---|---|"]
    for framework, costs in found.items():
        own = PERSISTENT[framework]
        for files in (FILES, FILES_NORMAL):
            if own is None:
                lines.append(f"| {framework} | {files} <= 2x the framework's persistent memory | (it has none) | - |")
                continue
            ratio = costs[files] / costs[own] if costs[own] > 0 else float("inf")
            lines.append(f"| {framework} | {files} <= 2x {own} | {ratio:.2f}x | {'yes' if ratio <= 2 else 'no'} |")
        lines.append(
            f"| {framework} | {IN_MEMORY} <= 2 ms | {costs[IN_MEMORY]:.2f} ms | {'yes' if costs[IN_MEMORY] <= 2 else 'no'} |"
        )
    return "\n".join(lines)


#: The adapter methods a model call runs the memory in: their time is the memory's own (``own_time``).
HOOKS = (
    (SentinelMemoryMiddleware, "_record"),
    (SentinelMemoryMiddleware, "_request"),
    (SentinelSession, "add"),
    (SentinelSession, "items"),
    (SentinelSession, "budgeted_items"),
    (SentinelHistory, "record"),
    (SentinelHistory, "process"),
)


def own_time(rounds: int) -> str:
    """The time per model call spent inside the adapters' memory work with the in-memory store, median over calls.

    What the table's in-memory row holds besides it is the framework's own
    handling of a request of a hundred messages instead of one. Beside the
    wall-clock time, the CPU time of the threads the hooks ran in, which
    other processes on a busy machine do not inflate.
    """
    spent: list[tuple[float, float]] = []
    originals = [(cls, name, getattr(cls, name)) for cls, name in HOOKS]
    inside = threading.local()  # a hook called by another (``process`` calls ``record``) is timed once, by the outer

    def timed(original: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            if getattr(inside, "hook", False):
                return original(*args, **kwargs)
            inside.hook = True
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent.append((time.perf_counter() - start, time.thread_time() - cpu))
                inside.hook = False

        return run

    lines = [
        "| framework | the memory's own ms per model call (in-memory store, median) | its CPU ms (median) |",
        "|---|---|---|",
    ]
    try:
        for cls, name, original in originals:
            setattr(cls, name, timed(original))
        with tempfile.TemporaryDirectory() as path:
            for framework, make in (
                ("LangChain `create_agent`", langchain_runs),
                ("OpenAI Agents SDK `Runner`", agents_sdk_runs),
                ("pydantic-ai `Agent`", pydantic_ai_runs),
            ):
                folder = Path(path) / framework.split()[0]
                folder.mkdir()
                run = make(folder)[IN_MEMORY]
                calls, cpus = [], []
                for turn in range(rounds + 2):
                    spent.clear()
                    run(turn)
                    if turn >= 2:
                        calls.append(sum(wall for wall, _ in spent) * 1000)
                        cpus.append(sum(cpu for _, cpu in spent) * 1000)
                lines.append(f"| {framework} | {statistics.median(calls):.2f} | {statistics.median(cpus):.2f} |")
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
    return "\n".join(lines)


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 30
    if "--own" not in sys.argv:
        print(table(rounds))
        print()
    print(own_time(rounds))
