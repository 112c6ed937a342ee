"""The MCP server through the SDK's own client (MCP-1 .. MCP-4, TOOL-1 .. TOOL-5): tools, bad calls, two clients, a restart."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
import jsonschema
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from sentinel_memory import MemoryFolder
from sentinel_memory.integrations.tools import operations
from sentinel_memory.integrations.tools.mcp import CONTEXT_URI, create_server

TOOLS = ["forget", "get_context", "recall", "remember", "stats"]


def run(coroutine_function: Any, *args: Any) -> Any:
    return anyio.run(coroutine_function, *args)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        return True, result.content[0].text
    return False, result.structured_content


def test_mcp_1_list_tools_shows_each_tool_with_a_json_schema_and_a_description(tmp_path):
    """MCP-1, TOOL-1: list_tools gives the five tools, each with its description and a valid JSON schema of its arguments."""

    async def main() -> list[Any]:
        async with Client(create_server(tmp_path, user_id="alice")) as client:
            return list((await client.list_tools()).tools)

    tools = run(main)
    assert sorted(tool.name for tool in tools) == TOOLS
    for tool in tools:
        assert tool.description == operations.TOOL_DESCRIPTIONS[tool.name]
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema == operations.SCHEMAS[tool.name]  # TOOL-1: one schema for every interface
        assert not [name for name in tool.input_schema["properties"] if "user" in name]  # MCP-3: none picks a user
    schemas = {tool.name: tool.input_schema for tool in tools}
    assert schemas["remember"]["required"] == ["key", "text"]
    assert schemas["remember"]["properties"]["importance"]["maximum"] == 1
    assert schemas["remember"]["properties"]["text"]["maxLength"] == operations.MAX_TEXT_CHARS
    assert schemas["recall"]["required"] == ["query"]
    assert schemas["get_context"]["required"] == ["token_budget"]
    assert schemas["forget"]["required"] == ["key"]
    assert "required" not in schemas["stats"]


#: Twenty calls, good and bad: (tool, arguments, None for success or the words the error must hold).
SESSION: list[tuple[str, dict[str, Any], tuple[str, ...] | None]] = [
    ("remember", {"key": "user:diet", "text": "vegetarian, no mushrooms", "importance": 0.9}, None),
    ("remember", {"key": "user:city", "text": "lives in Brno"}, None),
    ("remember", {"key": "task:deadline", "text": "report due Friday", "ttl_seconds": 3600}, None),
    ("remember", {"text": "no key"}, ("key:", "string of 1 to 200 characters", "got nothing")),
    ("remember", {"key": "user:x", "text": "y", "importance": 1.5}, ("importance:", "from 0 to 1", "1.5")),
    ("remember", {"key": "user:x", "text": "y", "importance": "0.9"}, ("importance:", "from 0 to 1", "string")),
    ("remember", {"key": "user:x", "text": "y", "ttl_seconds": -5}, ("ttl_seconds:", "from 1 to", "-5")),
    ("remember", {"key": "user:x", "text": "y", "ttl": 60}, ("ttl:", "key, text, importance, ttl_seconds")),
    ("remember", {"key": "user:x", "text": "z" * 8001}, ("text:", "8001 characters", "8000")),
    ("remember", {"key": "chat:3", "text": "a turn"}, ("key:", "chat turn")),
    ("recall", {"query": "vegetarian"}, None),
    ("recall", {"query": ""}, ("query:", "string of 1 to 1000 characters", "empty")),
    ("recall", {"query": "brno", "limit": 0}, ("limit:", "whole number from 1 to 50")),
    ("get_context", {"token_budget": 60}, None),
    ("get_context", {"token_budget": "lots"}, ("token_budget:", "whole number from 1 to 100000")),
    ("get_context", {}, ("token_budget:", "whole number", "got nothing")),
    ("forget", {"key": "user:city"}, None),
    ("forget", {"key": "user:city"}, None),
    ("forget", {"key": 7}, ("key:", "string", "7")),
    ("stats", {}, None),
]


def test_mcp_1_twenty_calls_good_and_bad_through_the_sdk_client(tmp_path):
    """MCP-1, TOOL-2, TOOL-3, TOOL-4: 20 calls; good ones answer, bad ones are tool errors naming the argument and what it accepts, and change nothing."""
    folder = MemoryFolder(tmp_path)

    async def main() -> list[tuple[bool, Any, dict[str, Any]]]:
        answers = []
        async with Client(create_server(tmp_path, user_id="alice")) as client:
            for name, arguments, _ in SESSION:
                is_error, answer = await call(client, name, arguments)
                answers.append((is_error, answer, folder.open("alice").state.entries))
        return answers

    answers = run(main)
    assert len(answers) == 20
    before: Any = None
    for (name, _, expected), (is_error, answer, after) in zip(SESSION, answers, strict=True):
        assert is_error == (expected is not None), (name, answer)
        if expected is not None:
            for words in expected:
                assert words in answer, (name, words, answer)
            assert after == before  # TOOL-4: a refused call changes nothing
        before = after
    results = [answer for is_error, answer, _ in answers if not is_error]
    assert results[0] == {"key": "user:diet", "importance": 0.9, "ttl_seconds": None, "replaced": False}
    assert results[2]["ttl_seconds"] == 3600
    assert [hit["key"] for hit in results[3]["hits"]] == ["user:diet"]
    assert results[3]["hits"][0]["text"] == "vegetarian, no mushrooms"
    assert results[4]["tokens"] <= 60 and set(results[4]["keys"]) == {"user:diet", "user:city", "task:deadline"}
    assert results[5:7] == [{"key": "user:city", "forgotten": True}, {"key": "user:city", "forgotten": False}]
    assert results[7]["size"] == 2
    memory = folder.open("alice")
    assert sorted(memory) == ["task:deadline", "user:diet"]
    assert memory.get_entry("task:deadline").expires_at == memory.get_entry("task:deadline").created_at + 3_600_000


def test_mcp_2_the_context_resource_is_the_memory_within_its_budget(tmp_path):
    """MCP-2: memory://context reads as get_context(resource_budget) of the server's user, facts only."""
    memory = MemoryFolder(tmp_path).open("alice")
    for n in range(30):
        memory.remember(f"fact:{n}", f"fact number {n} " * 4, importance=n / 30)
    memory.add_turn("user", "a turn is not a fact")

    async def main() -> tuple[list[str], str]:
        async with Client(create_server(tmp_path, user_id="alice", resource_budget=100)) as client:
            listed = [str(resource.uri) for resource in (await client.list_resources()).resources]
            read = await client.read_resource(CONTEXT_URI)
            return listed, read.contents[0].text

    listed, text = run(main)
    assert listed == [CONTEXT_URI]
    assert text == memory.get_context(token_budget=100, only="facts").text
    assert 0 < memory.get_context(token_budget=100, only="facts").tokens <= 100 and "fact:29" in text


def test_mcp_2_a_server_of_many_users_offers_no_resource(tmp_path):
    """MCP-2: with user_id_from there is no static resource (it would get no request), get_context serves instead."""

    async def main() -> list[Any]:
        async with Client(create_server(tmp_path, user_id_from=lambda ctx: "bob")) as client:
            return list((await client.list_resources()).resources)

    assert run(main) == []


def test_mcp_3_forget_on_every_key_reaches_only_the_servers_user(tmp_path):
    """MCP-3, TOOL-5: a model that forgets every key it can name, another user's included, empties only its own memory."""
    folder = MemoryFolder(tmp_path)
    for n in range(5):
        folder.open("alice").remember(f"note:{n}", f"alice {n}")
        folder.open("bob").remember(f"note:{n}", f"bob {n}")
    folder.open("bob").remember("bob:secret", "bob's")

    async def main() -> list[Any]:
        async with Client(create_server(tmp_path, user_id="alice")) as client:
            keys = [*(f"note:{n}" for n in range(5)), "bob:secret", "../bob", "bob/note:1"]
            answers = [await call(client, "forget", {"key": key}) for key in keys]
            answers.append(await call(client, "forget", {"key": "note:1", "user_id": "bob"}))
            return answers

    answers = run(main)
    assert [answer["forgotten"] for _, answer in answers[:8]] == [True] * 5 + [False] * 3
    assert answers[8][0] is True and "user_id:" in answers[8][1]
    assert len(folder.open("alice")) == 0
    assert sorted(folder.open("bob")) == ["bob:secret", *(f"note:{n}" for n in range(5))]


def test_mcp_3_user_id_from_picks_the_memory_per_request(tmp_path):
    """MCP-3: user_id_from(ctx) chooses each request's memory; an empty answer is a tool error that touches none."""

    def client_name(ctx: Any) -> str:
        return str(ctx.session.client_params.client_info.name)

    server = create_server(tmp_path, user_id_from=client_name)

    async def main() -> list[Any]:
        answers = []
        for user in ("alice", "bob", ""):
            async with Client(server, client_info=Implementation(name=user, version="1")) as client:
                answers.append(await call(client, "remember", {"key": "who", "text": f"I am {user or 'nobody'}"}))
        return answers

    answers = run(main)
    assert [is_error for is_error, _ in answers] == [False, False, True]
    assert "whose memory" in answers[2][1]
    folder = MemoryFolder(tmp_path)
    assert folder.open("alice")["who"] == "I am alice" and folder.open("bob")["who"] == "I am bob"
    assert sorted(path.name for path in tmp_path.iterdir() if path.suffix == ".json") == sorted(
        [folder.path_for("alice").name, folder.path_for("bob").name]
    )


def test_mcp_4_two_clients_on_one_user_lose_no_write_and_a_restart_keeps_them(tmp_path):
    """MCP-4: two clients (on two servers, as two processes would be) writing one user at once lose 0 of 120 writes; a new server sees all."""
    per_client = 60

    async def writer(server: Any, name: str, acknowledged: list[str]) -> None:
        async with Client(server) as client:
            for n in range(per_client):
                is_error, answer = await call(client, "remember", {"key": f"{name}:{n}", "text": f"{name} wrote {n}"})
                assert not is_error, answer
                acknowledged.append(answer["key"])

    async def main() -> list[str]:
        acknowledged: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(writer, create_server(tmp_path, user_id="alice"), "first", acknowledged)
            group.start_soon(writer, create_server(tmp_path, user_id="alice"), "second", acknowledged)
        return acknowledged

    acknowledged = run(main)
    assert len(acknowledged) == 2 * per_client

    async def restarted() -> tuple[Any, Any]:
        async with Client(create_server(tmp_path, user_id="alice")) as client:
            stats = await call(client, "stats", {})
            hits = await call(client, "recall", {"query": "second wrote 59", "limit": 1})
            return stats, hits

    (stats_error, stats), (hits_error, hits) = run(restarted)
    assert not stats_error and stats["size"] == 2 * per_client
    assert not hits_error and hits["hits"][0]["key"] == "second:59"
    assert sorted(MemoryFolder(tmp_path).open("alice")) == sorted(acknowledged)


def test_mcp_4_the_command_serves_stdio_to_the_sdk_client(tmp_path):
    """MCP-4: `sentinel-memory mcp --folder PATH --user ID` serves the tools on stdio; what it stored is in the user's file."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sentinel_memory.cli", "mcp", "--folder", str(tmp_path), "--user", "carol", "--limit", "50"],
        env={"PYTHONPATH": ":".join(sys.path)},
    )

    async def main() -> tuple[Any, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            stored = await session.call_tool("remember", {"key": "user:pet", "text": "a cat called Ada"})
            counted = await session.call_tool("stats", {})
            return stored.structured_content, counted.structured_content

    stored, counted = run(main)
    assert stored["key"] == "user:pet" and counted["limit"] == 50
    assert MemoryFolder(tmp_path).open("carol")["user:pet"] == "a cat called Ada"


def test_mcp_4_the_command_without_the_sdk_names_the_extra(tmp_path, monkeypatch, capsys):
    """MCP-4, DEP-1: without mcp installed, `sentinel-memory mcp` exits 2 naming the [mcp] extra."""
    from sentinel_memory import cli

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.tools.mcp", raising=False)
    assert cli.main(["mcp", "--folder", str(tmp_path)]) == 2
    assert "sentinel-memory[mcp]" in capsys.readouterr().err


def test_mcp_1_create_server_refuses_a_bad_configuration(tmp_path):
    """MCP-1, MCP-3: neither or both of user_id and user_id_from, an empty user, a bad budget or folder raise TypeError."""
    for bad in (
        {},
        {"user_id": "a", "user_id_from": lambda ctx: "a"},
        {"user_id": ""},
        {"user_id": "a", "resource_budget": 0},
        {"user_id": "a", "resource_budget": True},
    ):
        with pytest.raises(TypeError):
            create_server(tmp_path, **bad)
    with pytest.raises(TypeError, match="open"):
        create_server(42, user_id="a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="options"):
        create_server(MemoryFolder(tmp_path), user_id="a", limit=5)
    assert create_server(MemoryFolder(tmp_path), user_id="a", resource_budget=1) is not None


def test_mcp_dep_1_importing_the_package_does_not_import_the_sdk():
    """DEP-1, MCP-1: `import sentinel_memory` imports no mcp module; importing the server module does."""
    code = (
        "import sys, sentinel_memory, sentinel_memory.integrations.tools.operations; "
        "print(any(m.split('.')[0] == 'mcp' for m in sys.modules)); "
        "import sentinel_memory.integrations.tools.mcp; print('mcp' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_mcp_1_without_the_sdk_the_module_names_the_extra(monkeypatch):
    """MCP-1, DEP-1: with mcp missing, importing the server module raises ImportError naming the [mcp] extra."""
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.tools.mcp", raising=False)
    with pytest.raises(ImportError, match=r"sentinel-memory\[mcp\]"):
        importlib.import_module("sentinel_memory.integrations.tools.mcp")


def test_mcp_4_the_command_serves_streamable_http_on_localhost(tmp_path):
    """MCP-4: `sentinel-memory mcp --transport streamable-http --port P` answers the SDK's HTTP client at /mcp; the write is in the file."""
    import socket
    import time

    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "sentinel_memory.cli", "mcp", "--folder", str(tmp_path), "--user", "dora"]
    server = subprocess.Popen(
        [*command, "--transport", "streamable-http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PYTHONPATH": ":".join(sys.path)},
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        async def main() -> Any:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    result = await session.call_tool("remember", {"key": "user:route", "text": "over http"})
                    return result.structured_content

        assert run(main)["key"] == "user:route"
    finally:
        server.terminate()
        server.wait(10)
    assert MemoryFolder(tmp_path).open("dora")["user:route"] == "over http"
