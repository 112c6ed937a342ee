"""The model's memory tools against their schemas and a dict model: random arguments, paths and calls (TOOL-1 .. TOOL-5, MCP-1 .. MCP-4, FWT-1, FWT-2, AMT-1 .. AMT-4)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core.turns import is_turn_key
from sentinel_memory.integrations.tools import operations
from sentinel_memory.integrations.tools.operations import ARGUMENTS, SCHEMAS, ToolArgumentError


@contextmanager
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sm-tools-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sized(bound: int) -> st.SearchStrategy[str]:
    """Strings at and around a length bound, and short ones of any characters."""
    return st.one_of(
        st.sampled_from([bound - 1, bound, bound + 1]).map(lambda n: "w" * n),
        st.text(max_size=12),
        st.sampled_from(["   ", "chat:3", "chat:x", "user:diet", "vegetarian"]),
    )


VALUES = {
    "key": sized(operations.MAX_KEY_CHARS),
    "text": sized(operations.MAX_TEXT_CHARS),
    "query": sized(operations.MAX_QUERY_CHARS),
    "importance": st.one_of(st.floats(-0.5, 1.5, allow_nan=False), st.sampled_from([0, 1, 0.0, 1.0, True, "0.5"])),
    "ttl_seconds": st.one_of(
        st.floats(-10, 1e10, allow_nan=False),
        st.sampled_from([0, 0.999, 1, operations.MAX_TTL_SECONDS, operations.MAX_TTL_SECONDS + 1, False, "60"]),
    ),
    "limit": st.one_of(st.integers(-2, 60), st.sampled_from([3.0, 2.5, True, "5"])),
    "token_budget": st.one_of(
        st.integers(-2, 200),
        st.sampled_from([operations.MAX_TOKEN_BUDGET, operations.MAX_TOKEN_BUDGET + 1, 50.0, 7.5, None, "40"]),
    ),
}
NOISE = st.one_of(st.none(), st.integers(), st.lists(st.integers(), max_size=2), st.booleans())


@st.composite
def tool_calls(draw: Any) -> tuple[str, dict[str, Any]]:
    """A tool and a model's arguments for it: each of its own maybe given, maybe of a wrong kind, maybe an unknown one."""
    name = draw(st.sampled_from(sorted(SCHEMAS)))
    required, optional = ARGUMENTS[name]
    arguments: dict[str, Any] = {}
    for argument in required + optional:
        choice = draw(st.integers(0, 9))
        if choice == 0 or (argument in optional and choice < 4):
            continue
        arguments[argument] = draw(NOISE) if choice == 9 else draw(VALUES[argument])
    if draw(st.integers(0, 7)) == 0:
        arguments[draw(st.sampled_from(["user_id", "ttl", "keys"]))] = "x"
    return name, arguments


def accepted(name: str, arguments: dict[str, Any]) -> bool:
    """The oracle: valid under the tool's JSON schema, no string blank, no turn key (TOOL-2, TOOL-3)."""
    given = {k: v for k, v in arguments.items() if v is not None or k in ARGUMENTS[name][0]}
    try:
        jsonschema.validate(given, SCHEMAS[name])
    except jsonschema.ValidationError:
        return False
    strings = [value for value in given.values() if isinstance(value, str)]
    return all(value.strip() for value in strings) and not is_turn_key(given.get("key", ""))


def seeded_memory() -> sm.Memory:
    memory = sm.create_memory(clock=lambda: 1_700_000_000_000)  # a stopped clock: a ttl of 1 µs is still live
    memory.remember("user:diet", "vegetarian", importance=0.9)
    memory.remember("user:city", "Brno")
    memory.add_turn("user", "vegetarian chat turn")
    return memory


@given(tool_calls())
def test_tool_1_to_tool_4_the_operations_accept_exactly_what_the_schema_says(call):
    """TOOL-1, TOOL-2, TOOL-3, TOOL-4: a call succeeds iff its arguments pass the tool's schema (no blank string, no turn key); a refused one names its argument first and changes nothing."""
    name, arguments = call
    memory = seeded_memory()
    before = memory.state
    try:
        result = operations.call(memory, name, arguments)
    except ToolArgumentError as error:
        assert not accepted(name, arguments)
        assert str(error).startswith(f"{error.argument}: ")
        assert error.argument in arguments or error.argument in ARGUMENTS[name][0]
        assert memory.state is before
        return
    assert accepted(name, arguments), (name, arguments)
    json.dumps(result)  # JSON-ready
    if name == "remember":
        assert memory[arguments["key"]] == arguments["text"]
        assert result["replaced"] == (arguments["key"] in before.entries)
    elif name == "forget":
        assert arguments["key"] not in memory and result["forgotten"] == (arguments["key"] in before.entries)
    elif name == "recall":
        assert all(not is_turn_key(hit["key"]) for hit in result["hits"])
        limit = arguments.get("limit") or operations.DEFAULT_RECALL_LIMIT
        assert len(result["hits"]) <= limit
    elif name == "get_context":
        assert result["tokens"] <= arguments["token_budget"] and "chat turn" not in result["text"]
    else:
        assert result == memory.stats()


@settings(max_examples=25)
@given(
    keys=st.lists(
        st.one_of(st.text(min_size=1, max_size=20), st.sampled_from(["bob:secret", "note:1", "../bob"])), max_size=8
    ),
    paths=st.lists(
        st.sampled_from(["/memories/bob.md", "/memories", "/memories/../bob.md", "/memories/a.md"]), max_size=4
    ),
)
def test_tool_5_mcp_3_amt_4_a_model_forgetting_anything_reaches_only_its_user(keys, paths):
    """TOOL-5, MCP-3, AMT-4: whatever keys alice's tools forget and whatever paths they delete, bob's memory is as it was."""
    pytest.importorskip("anthropic")
    from anthropic.lib.tools import ToolError

    from sentinel_memory.integrations.tools.anthropic import SentinelMemoryTool

    with folder() as path:
        users = sm.MemoryFolder(path)
        users.open("bob").remember("bob:secret", "bob's")
        users.open("bob").remember("/memories/bob.md", "bob's file")
        users.open("alice").remember("note:1", "alice's")
        bob_before = dict(users.open("bob"))
        tool = SentinelMemoryTool(users, user_id="alice")
        for key in keys:
            try:
                operations.call(users.open("alice"), "forget", {"key": key})
            except ToolArgumentError:
                pass
        for doomed in paths:
            try:
                tool.call({"command": "delete", "path": doomed})
            except ToolError:
                pass
        assert dict(users.open("bob")) == bob_before


# -- the MCP server -------------------------------------------------------------------

mcp_steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"), st.sampled_from(["a", "b", "c", "chat:1", ""]), st.sampled_from(["x y", "z", ""])
        ),
        st.tuples(st.just("forget"), st.sampled_from(["a", "b", "c", ""]), st.just("")),
    ),
    max_size=10,
)


@settings(max_examples=12, deadline=None)
@given(mcp_steps)
def test_mcp_1_mcp_2_mcp_4_calls_through_the_client_match_a_dict_and_survive_a_restart(steps):
    """MCP-1, MCP-2, MCP-4: random remember/forget calls through the SDK client act as on a dict (refusals as isError), the resource is get_context, a new server sees it all."""
    pytest.importorskip("mcp")
    import anyio
    from mcp.client import Client

    from sentinel_memory.integrations.tools.mcp import CONTEXT_URI, create_server

    with folder() as path:
        expected: dict[str, str] = {}

        async def session() -> None:
            async with Client(create_server(path, user_id="alice", resource_budget=40)) as client:
                for name, key, text in steps:
                    arguments = {"key": key, "text": text} if name == "remember" else {"key": key}
                    result = await client.call_tool(name, arguments)
                    refused = key == "" or key.startswith("chat:") or (name == "remember" and text == "")
                    assert result.is_error == refused
                    if refused:
                        assert result.content[0].text.split(": ")[1] in ("key", "text")
                    elif name == "remember":
                        expected[key] = text
                    else:
                        assert result.structured_content == {"key": key, "forgotten": key in expected}
                        expected.pop(key, None)
                text = (await client.read_resource(CONTEXT_URI)).contents[0].text
                memory = sm.MemoryFolder(path).open("alice")
                assert text == memory.get_context(token_budget=40, only="facts").text

        anyio.run(session)

        async def restarted() -> dict[str, Any]:
            async with Client(create_server(sm.MemoryFolder(path), user_id="alice")) as client:
                return (await client.call_tool("stats", {})).structured_content

        assert anyio.run(restarted)["size"] == len(expected)
        assert dict(sm.MemoryFolder(path).open("alice")) == expected


# -- the frameworks -------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(tool_calls())
def test_fwt_1_fwt_2_each_framework_answers_as_the_operations(call):
    """FWT-1, FWT-2, TOOL-4: LangChain, pydantic-ai and the Agents SDK tools give the operation's result or its refusal's message, and leave the memory as the operation does."""
    pytest.importorskip("langchain_core")
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("agents")
    from agents.tool_context import ToolContext
    from langchain_core.tools import StructuredTool
    from pydantic_ai.exceptions import ToolFailed

    from sentinel_memory.integrations.tools import langchain, openai_agents, pydantic_ai

    name, arguments = call
    with folder() as path:
        reference = sm.MemoryFolder(path / "reference")
        try:
            expected: Any = operations.call(_seed(reference), name, arguments)
        except ToolArgumentError as error:
            expected = error

        def lc(memories: sm.MemoryFolder) -> Any:
            tool: StructuredTool = next(t for t in langchain.memory_tools(memories) if t.name == name)
            answer = tool.invoke(
                {"type": "tool_call", "id": "c", "name": name, "args": arguments},
                config={"configurable": {"user_id": "u"}},
            )
            return answer.text if answer.status == "error" else json.loads(answer.text)

        def pai(memories: sm.MemoryFolder) -> Any:
            tool = pydantic_ai.memory_toolset(memories).tools[name]

            class Ctx:
                deps = "u"

            try:
                return json.loads(json.dumps(tool.function(Ctx(), **arguments)))
            except ToolFailed as failed:
                return failed.message

        def oai(memories: sm.MemoryFolder) -> Any:
            tool = next(t for t in openai_agents.memory_tools(memories) if t.name == name)
            text = json.dumps(arguments)
            context = ToolContext(context={"user_id": "u"}, tool_name=name, tool_call_id="c", tool_arguments=text)
            answer = asyncio.run(tool.on_invoke_tool(context, text))
            return (
                answer[len(openai_agents.ERROR_PREFIX) :]
                if answer.startswith(openai_agents.ERROR_PREFIX)
                else json.loads(answer)
            )

        for framework, run in (("langchain", lc), ("pydantic-ai", pai), ("agents", oai)):
            memories = sm.MemoryFolder(path / framework)
            _seed(memories)
            answer = run(memories)
            if isinstance(expected, ToolArgumentError):
                assert answer == str(expected), framework
            else:
                assert answer == json.loads(json.dumps(expected)), framework
            assert _facts(memories) == _facts(reference), framework


def _seed(memories: sm.MemoryFolder) -> sm.Memory:
    memory = memories.open("u")
    if not len(memory):
        memory.remember("user:diet", "vegetarian", importance=0.9)
        memory.remember("user:city", "Brno")
    return memory


def _facts(memories: sm.MemoryFolder) -> dict[str, Any]:
    memory = memories.open("u")
    return {key: (memory[key], memory.get_entry(key).importance) for key in memory}


# -- Anthropic's memory tool ------------------------------------------------------------

path_parts = st.sampled_from(["a", "b.md", "..", ".", "", "%2e", "x\\y", ".hidden", "n\x00"])
raw_paths = st.one_of(
    st.lists(path_parts, min_size=1, max_size=3).map(lambda parts: "/memories/" + "/".join(parts)),
    st.sampled_from(
        ["/memories", "/memories/", "/etc/passwd", "memories/a", "/memoriesa", "", "/memories/" + "q" * 250]
    ),
)


def path_is_accepted(path: str) -> bool:
    """The oracle of AMT-2."""
    if len(path) > 255 or re.search(r"[\x00-\x1f\x7f\\%]", path):
        return False
    if path in ("/memories", "/memories/"):
        return True
    path = path[:-1] if path.endswith("/") else path
    return path.startswith("/memories/") and all(part not in ("", ".", "..") for part in path[10:].split("/"))


@settings(max_examples=60)
@given(raw_paths)
def test_amt_2_a_path_is_taken_exactly_when_it_stays_inside_memories(path):
    """AMT-2: every command takes a path iff it is /memories or under it with no empty, '.' or '..' part, nothing encoded, no backslash or control character, at most 255 characters."""
    pytest.importorskip("anthropic")
    from anthropic.lib.tools import ToolError

    from sentinel_memory.integrations.tools.anthropic import SentinelMemoryTool

    memory = sm.create_memory()
    tool = SentinelMemoryTool(memory=memory)
    try:
        tool.call({"command": "view", "path": path})
        taken = True
    except ToolError as error:
        taken = "does not exist" in str(error)
    assert taken == path_is_accepted(path)
    if not taken:
        for command in (
            {"command": "create", "path": path, "file_text": "x"},
            {"command": "rename", "old_path": path, "new_path": "/memories/z"},
        ):
            with pytest.raises(ToolError):
                tool.call(command)
        assert len(memory) == 0


file_names = st.sampled_from(
    ["/memories/a.md", "/memories/b.md", "/memories/d/a.md", "/memories/d/e/f.md", "/memories/d"]
)
file_texts = st.sampled_from(["", "one\n", "one\ntwo\n", "x\nx\n", "no newline"])
commands = st.one_of(
    st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, file_names, file_texts),
    st.builds(lambda p: {"command": "delete", "path": p}, file_names),
    st.builds(lambda p, q: {"command": "rename", "old_path": p, "new_path": q}, file_names, file_names),
    st.builds(
        lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
        file_names,
        st.sampled_from(["one", "x", "two\n", ""]),
        st.sampled_from(["ONE", ""]),
    ),
    st.builds(
        lambda p, n, t: {"command": "insert", "path": p, "insert_line": n, "insert_text": t},
        file_names,
        st.integers(-1, 4),
        st.sampled_from(["new", "new\n"]),
    ),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(commands, max_size=12))
def test_amt_1_amt_3_commands_act_on_files_as_a_dict_would_and_refusals_change_nothing(steps):
    """AMT-1, AMT-3: create, delete, rename, str_replace and insert over one user's folder keep the files a dict of paths keeps; a refused command changes nothing; view numbers every line."""
    pytest.importorskip("anthropic")
    from anthropic.lib.tools import ToolError

    from sentinel_memory.integrations.tools.anthropic import SentinelMemoryTool

    with folder() as path:
        users = sm.MemoryFolder(path)
        tool = SentinelMemoryTool(users, user_id="alice", max_file_chars=40)
        for step in steps:
            before = dict(users.open("alice"))
            try:
                tool.call(step)
            except ToolError:
                assert dict(users.open("alice")) == before
                continue
            after = dict(users.open("alice"))
            command = step["command"]
            if command == "create":
                assert after == {**before, step["path"]: step["file_text"]}
            elif command == "delete":
                assert after == {
                    k: v for k, v in before.items() if not (k == step["path"] or k.startswith(step["path"] + "/"))
                }
                assert after != before
            elif command == "rename":
                old, new = step["old_path"], step["new_path"]
                moved = {(new + k[len(old) :]): v for k, v in before.items() if k == old or k.startswith(old + "/")}
                assert moved and after == {
                    **{k: v for k, v in before.items() if k != old and not k.startswith(old + "/")},
                    **moved,
                }
            elif command == "str_replace":
                assert before[step["path"]].count(step["old_str"]) == 1
                assert after[step["path"]] == before[step["path"]].replace(step["old_str"], step["new_str"])
            else:
                lines = before[step["path"]].split("\n")
                if lines[-1] == "":
                    lines.pop()
                assert 0 <= step["insert_line"] <= len(lines)
                lines.insert(step["insert_line"], step["insert_text"].rstrip("\n"))
                assert after[step["path"]] == "\n".join(lines) + "\n"
            for key, text in after.items():
                shown = tool.call({"command": "view", "path": key}).split("\n")[1:]
                assert [line.split("\t", 1)[1] for line in shown] == text.split("\n")
                assert [int(line.split("\t", 1)[0]) for line in shown] == list(range(1, len(shown) + 1))
