"""The memory tools in LangChain, pydantic-ai and the Agents SDK (FWT-1 .. FWT-3): a stub model remembers, recalls and forgets over 10 turns."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from sentinel_memory import MemoryFolder
from sentinel_memory.integrations.tools import operations

#: Each turn's one tool call, as the stub model of every framework makes it.
SCRIPT: dict[int, tuple[str, dict[str, Any]]] = {
    1: ("remember", {"key": "user:diet", "text": "vegetarian, no mushrooms", "importance": 0.9}),
    2: ("remember", {"key": "user:city", "text": "lives in Brno"}),
    3: ("remember", {"key": "task:deadline", "text": "report due Friday", "ttl_seconds": 3600}),
    4: ("recall", {"query": "vegetarian"}),
    5: ("remember", {"key": "user:pet", "text": "a cat", "importance": 2}),
    6: ("forget", {"key": "user:city"}),
    7: ("recall", {"query": "Brno"}),
    8: ("get_context", {"token_budget": 50}),
    9: ("remember", {"key": "user:pet"}),
    10: ("stats", {}),
}

#: What the model must read back in each turn's tool result.
EXPECTED: dict[int, tuple[str, ...]] = {
    1: ('"key": "user:diet"', '"importance": 0.9'),
    2: ('"key": "user:city"',),
    3: ('"ttl_seconds": 3600',),
    4: ('"key": "user:diet"', "vegetarian, no mushrooms"),
    5: ("importance:", "from 0 to 1", "2"),
    6: ('"forgotten": true',),
    7: ('"hits": []',),
    8: ("user:diet: vegetarian, no mushrooms", "task:deadline: report due Friday"),
    9: ("text:", "string of 1 to 8000 characters", "got nothing"),
    10: ('"size": 2',),
}
ERRORS = {5, 9}


def turn_of(text: str) -> int:
    found = re.search(r"turn (\d+)", text)
    assert found, text
    return int(found.group(1))


def check_run(folder: MemoryFolder, seen: dict[int, str]) -> None:
    """The results each turn's model read, and the memories after the run: alice's as scripted, bob's untouched."""
    assert sorted(seen) == list(range(1, 11))
    for turn, words in EXPECTED.items():
        try:  # each framework writes the result's JSON in its own spacing
            text = json.dumps(json.loads(seen[turn]), ensure_ascii=False)
        except ValueError:
            text = seen[turn]
        for word in words:
            assert word in text, (turn, word, text)
    alice = folder.open("alice")
    assert dict(alice) == {"user:diet": "vegetarian, no mushrooms", "task:deadline": "report due Friday"}
    assert alice.get_entry("user:diet").importance == 0.9
    assert alice.get_entry("task:deadline").expires_at is not None
    assert dict(folder.open("bob")) == {"user:city": "bob's city"}


def seed(tmp_path: Any) -> MemoryFolder:
    folder = MemoryFolder(tmp_path)
    folder.open("bob").remember("user:city", "bob's city")
    return folder


# -- LangChain ------------------------------------------------------------------


def test_fwt_1_langchain_agent_remembers_recalls_and_forgets_over_10_turns(tmp_path):
    """FWT-1, FWT-2, TOOL-5: create_agent over a scripted model and memory_tools, 10 turns for alice; results checked, bob untouched."""
    pytest.importorskip("langchain")
    from agent_support import ScriptedToolModel
    from langchain.agents import create_agent

    from sentinel_memory.integrations.tools.langchain import memory_tools

    folder = seed(tmp_path)
    model = ScriptedToolModel(script=lambda turn: [SCRIPT[turn]] if turn in SCRIPT else [])
    agent = create_agent(model, tools=memory_tools(folder))
    seen: dict[int, str] = {}
    for turn in range(1, 11):
        state = agent.invoke(
            {"messages": [{"role": "user", "content": f"turn {turn}"}]}, config={"configurable": {"user_id": "alice"}}
        )
        tool_messages = [m for m in state["messages"] if m.type == "tool"]
        assert len(tool_messages) == 1
        assert (tool_messages[0].status == "error") == (turn in ERRORS)
        seen[turn] = tool_messages[0].text
        assert state["messages"][-1].text == f"Answer {turn}: {seen[turn]}"
    check_run(folder, seen)


def test_fwt_2_langchain_tools_need_the_user_in_the_config(tmp_path):
    """FWT-2, TOOL-5: without configurable user_id the call fails loudly (the app's mistake) and touches no memory."""
    pytest.importorskip("langchain_core")
    from sentinel_memory.integrations.tools.langchain import memory_tools

    remember = memory_tools(MemoryFolder(tmp_path))[0]
    with pytest.raises(LookupError, match="user_id"):
        remember.invoke({"key": "a", "text": "b"})
    with pytest.raises(LookupError, match="user_id"):
        remember.invoke({"key": "a", "text": "b"}, config={"configurable": {"user_id": ""}})
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError):
        memory_tools(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        memory_tools(MemoryFolder(tmp_path), user_key="")


# -- pydantic-ai ----------------------------------------------------------------


def test_fwt_1_pydantic_ai_agent_remembers_recalls_and_forgets_over_10_turns(tmp_path):
    """FWT-1, FWT-2, TOOL-5: an Agent with memory_toolset over a FunctionModel, 10 runs with deps="alice"; results checked, bob untouched."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from sentinel_memory.integrations.tools.pydantic_ai import memory_toolset

    folder = seed(tmp_path)
    seen: dict[int, str] = {}

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        assert sorted(tool.name for tool in info.function_tools) == sorted(operations.SCHEMAS)
        question = [p for m in messages for p in m.parts if isinstance(p, UserPromptPart)][-1]
        turn = turn_of(str(question.content))
        last = messages[-1].parts[-1]
        if isinstance(last, UserPromptPart):
            name, arguments = SCRIPT[turn]
            return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call-{turn}")])
        seen[turn] = last.model_response_str() if hasattr(last, "model_response_str") else str(last.content)
        return ModelResponse(parts=[TextPart(f"Answer {turn}: {seen[turn]}")])

    agent = Agent(FunctionModel(script), deps_type=str, toolsets=[memory_toolset(folder)])
    for turn in range(1, 11):
        result = agent.run_sync(f"turn {turn}", deps="alice")
        assert result.output == f"Answer {turn}: {seen[turn]}"
    check_run(folder, seen)


def test_fwt_2_pydantic_ai_reads_the_user_from_deps_objects_and_mappings(tmp_path):
    """FWT-2, TOOL-5: deps that are a str, a mapping or an object with user_id pick the memory; deps without one fail the run."""
    pytest.importorskip("pydantic_ai")
    from dataclasses import dataclass

    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    from sentinel_memory.integrations.tools.pydantic_ai import memory_toolset

    @dataclass
    class Deps:
        user_id: str

    folder = MemoryFolder(tmp_path)
    toolset = memory_toolset(folder)
    for deps, user in (("carol", "carol"), ({"user_id": "dave"}, "dave"), (Deps("erin"), "erin")):
        model = TestModel(call_tools=["remember"])
        Agent(model, deps_type=object, toolsets=[toolset]).run_sync("hi", deps=deps)
        assert len(folder.open(user)) == 1
    with pytest.raises(LookupError, match="user_id"):
        Agent(TestModel(call_tools=["stats"]), deps_type=object, toolsets=[toolset]).run_sync("hi", deps=None)


# -- OpenAI Agents SDK ----------------------------------------------------------


def test_fwt_1_agents_sdk_runner_remembers_recalls_and_forgets_over_10_turns(tmp_path):
    """FWT-1, FWT-2, TOOL-5: Runner with memory_tools over a stub Model, 10 runs with context alice; results checked, bob untouched."""
    pytest.importorskip("agents")
    from agents import Agent, Runner, Usage
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from sentinel_memory.integrations.tools.openai_agents import ERROR_PREFIX, memory_tools

    folder = seed(tmp_path)
    seen: dict[int, str] = {}

    class StubModel(Model):
        async def get_response(
            self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **_
        ):  # type: ignore[no-untyped-def, override]
            assert sorted(tool.name for tool in tools) == sorted(operations.SCHEMAS)
            turn = turn_of([item for item in input if item.get("role") == "user"][-1]["content"])
            if input[-1].get("role") == "user":
                name, arguments = SCRIPT[turn]
                call = ResponseFunctionToolCall(
                    type="function_call", call_id=f"call_{turn}", name=name, arguments=json.dumps(arguments)
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            assert input[-1]["type"] == "function_call_output"
            seen[turn] = input[-1]["output"]
            text = ResponseOutputText(type="output_text", text=f"Answer {turn}: {seen[turn]}", annotations=[])
            message = ResponseOutputMessage(
                id=f"msg_{turn}", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            raise NotImplementedError

    agent = Agent(name="memory", model=StubModel(), tools=memory_tools(folder))

    async def conversation() -> None:
        for turn in range(1, 11):
            result = await Runner.run(agent, f"turn {turn}", context={"user_id": "alice"})
            assert result.final_output == f"Answer {turn}: {seen[turn]}"
            assert seen[turn].startswith(ERROR_PREFIX) == (turn in ERRORS)

    asyncio.run(conversation())
    check_run(folder, seen)


def test_fwt_2_agents_sdk_tool_answers_bad_json_as_an_error(tmp_path):
    """FWT-2, TOOL-4: arguments that are not JSON or not an object come back as an error output; nothing is stored."""
    pytest.importorskip("agents")
    from agents.tool_context import ToolContext

    from sentinel_memory.integrations.tools.openai_agents import ERROR_PREFIX, memory_tools

    remember = memory_tools(MemoryFolder(tmp_path))[0]

    def context(arguments: str) -> ToolContext[Any]:
        return ToolContext(context="alice", tool_name="remember", tool_call_id="c1", tool_arguments=arguments)

    for text in ("{not json", "[1, 2]"):
        output = asyncio.run(remember.on_invoke_tool(context(text), text))
        assert output.startswith(ERROR_PREFIX)
    assert len(MemoryFolder(tmp_path).open("alice")) == 0


# -- shared ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "framework"),
    [("langchain", "langchain_core"), ("pydantic_ai", "pydantic_ai"), ("openai_agents", "agents")],
)
def test_fwt_3_importing_the_package_imports_no_framework(module, framework):
    """FWT-3, DEP-1: `import sentinel_memory` and the operations import no framework; each tool module imports its own."""
    code = (
        "import sys, sentinel_memory, sentinel_memory.integrations.tools.operations; "
        f"print(any(m.split('.')[0] == {framework!r} for m in sys.modules)); "
        f"import sentinel_memory.integrations.tools.{module}; print({framework!r} in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("openai_agents", "agents", "openai-agents"),
    ],
)
def test_fwt_3_without_the_framework_the_module_names_the_extra(monkeypatch, module, framework, extra):
    """FWT-3, DEP-1: with the framework missing, importing its tool module raises ImportError naming the extra."""
    import importlib

    for name in [m for m in sys.modules if m == framework or m.startswith(framework + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, f"sentinel_memory.integrations.tools.{module}", raising=False)
    with pytest.raises(ImportError, match=re.escape(f"sentinel-memory[{extra}]")):
        importlib.import_module(f"sentinel_memory.integrations.tools.{module}")
