"""The backend for Anthropic's memory tool (AMT-1 .. AMT-4): the documented tool-use blocks, paths refused, sizes bounded, one user's files."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("anthropic")

import httpx2 as httpx
from anthropic import Anthropic
from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError

from sentinel_memory import MemoryFolder
from sentinel_memory.integrations.tools.anthropic import (
    DEFAULT_MAX_FILE_CHARS,
    MAX_PATH_CHARS,
    SentinelMemoryTool,
)

GUIDE = "/memories/customer_service_guidelines.xml"
GUIDE_TEXT = "<guidelines>\n<rule>Be kind</rule>\n<rule>Refund within 30 days</rule>\n</guidelines>\n"


def tool_for(tmp_path: Any, user: str = "alice", **options: Any) -> SentinelMemoryTool:
    return SentinelMemoryTool(MemoryFolder(tmp_path), user_id=user, **options)


def block(command: str, **arguments: Any) -> dict[str, Any]:
    """A tool_use block's input as the memory tool's documentation shows it."""
    return {"command": command, **arguments}


def refused(tool: SentinelMemoryTool, given: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as caught:
        tool.call(given)
    return str(caught.value)


def test_amt_1_the_documented_session_view_create_edit_rename_delete(tmp_path):
    """AMT-1: each command of the documentation answers as the SDK's own backend: listing, line numbers, unique replace, insert, rename, delete."""
    tool = tool_for(tmp_path)
    assert isinstance(tool, BetaAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    empty = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories"
    assert tool.call(block("view", path="/memories")) == empty
    assert tool.call(block("create", path=GUIDE, file_text=GUIDE_TEXT)) == f"File created successfully at: {GUIDE}"
    tool.call(block("create", path="/memories/notes/2026/december.md", file_text="x" * 2048))
    tool.call(block("create", path="/memories/notes/2026/q4/deep.md", file_text="deep"))
    tool.call(block("create", path="/memories/.scratch", file_text="hidden"))
    listing = tool.call(block("view", path="/memories")).split("\n")
    assert listing[1:] == [  # 2048 + 4 + 83 + 6 bytes (the hidden file counts in its folder's size)
        "2.1K\t/memories",
        f"{len(GUIDE_TEXT)}B\t{GUIDE}",
        "2.0K\t/memories/notes/",
        "2.0K\t/memories/notes/2026/",
    ]
    assert tool.call(block("view", path=GUIDE)) == (
        f"Here's the content of {GUIDE} with line numbers:\n"
        "     1\t<guidelines>\n     2\t<rule>Be kind</rule>\n     3\t<rule>Refund within 30 days</rule>\n"
        "     4\t</guidelines>\n     5\t"
    )
    assert tool.call(block("view", path=GUIDE, view_range=[2, 3])).split("\n")[1:] == [
        "     2\t<rule>Be kind</rule>",
        "     3\t<rule>Refund within 30 days</rule>",
    ]
    assert tool.call(block("view", path=GUIDE, view_range=[4, -1])).split("\n")[1:] == [
        "     4\t</guidelines>",
        "     5\t",
    ]
    edited = tool.call(block("str_replace", path=GUIDE, old_str="Be kind", new_str="Be kind and brief"))
    assert edited.split("\n")[1:] == [
        "     1\t<guidelines>",
        "     2\t<rule>Be kind and brief</rule>",
        "     3\t<rule>Refund within 30 days</rule>",
        "     4\t</guidelines>",
    ]
    assert tool.call(block("insert", path=GUIDE, insert_line=1, insert_text="<rule>Greet</rule>\n")) == (
        f"The file {GUIDE} has been edited."
    )
    assert tool.call(block("insert", path=GUIDE, insert_line=5, insert_text="<!-- end -->")) == (
        f"The file {GUIDE} has been edited."
    )
    memory = MemoryFolder(tmp_path).open("alice")
    assert memory[GUIDE] == (
        "<guidelines>\n<rule>Greet</rule>\n<rule>Be kind and brief</rule>\n<rule>Refund within 30 days</rule>\n"
        "</guidelines>\n<!-- end -->\n"
    )
    assert tool.call(block("rename", old_path="/memories/notes", new_path="/memories/archive/notes")) == (
        "Successfully renamed /memories/notes to /memories/archive/notes"
    )
    assert sorted(MemoryFolder(tmp_path).open("alice")) == [
        "/memories/.scratch",
        "/memories/archive/notes/2026/december.md",
        "/memories/archive/notes/2026/q4/deep.md",
        GUIDE,
    ]
    assert tool.call(block("delete", path="/memories/archive")) == "Successfully deleted /memories/archive"
    assert tool.call(block("rename", old_path=GUIDE, new_path="/memories/guide.xml")).startswith("Successfully renamed")
    assert sorted(MemoryFolder(tmp_path).open("alice")) == ["/memories/.scratch", "/memories/guide.xml"]


def test_amt_1_str_replace_needs_exactly_one_match_and_insert_a_line_in_range(tmp_path):
    """AMT-1: no match or several matches (with their lines) replace nothing; insert_line outside [0, lines] inserts nothing."""
    tool = tool_for(tmp_path)
    tool.call(block("create", path=GUIDE, file_text=GUIDE_TEXT))
    assert "did not appear verbatim" in refused(tool, block("str_replace", path=GUIDE, old_str="Be rude", new_str="x"))
    several = refused(tool, block("str_replace", path=GUIDE, old_str="<rule>", new_str="<r>"))
    assert "Multiple occurrences" in several and "lines: 2, 3" in several
    assert "[0, 4]" in refused(tool, block("insert", path=GUIDE, insert_line=5, insert_text="x"))
    assert "[0, 4]" in refused(tool, block("insert", path=GUIDE, insert_line=-1, insert_text="x"))
    assert tool.call(block("insert", path=GUIDE, insert_line=4, insert_text="last")).endswith("edited.")
    assert tool.call(block("insert", path=GUIDE, insert_line=0, insert_text="first")).endswith("edited.")
    assert MemoryFolder(tmp_path).open("alice")[GUIDE].split("\n")[0::5] == ["first", "last"]


def test_amt_1_errors_of_existence_and_kind(tmp_path):
    """AMT-1: a missing path, an existing file on create, a directory where a file must be and a taken destination are refused."""
    tool = tool_for(tmp_path)
    tool.call(block("create", path="/memories/a/b.md", file_text="b"))
    assert "does not exist" in refused(tool, block("view", path="/memories/nope"))
    assert "already exists" in refused(tool, block("create", path="/memories/a/b.md", file_text="again"))
    assert "is a directory" in refused(tool, block("create", path="/memories/a", file_text="x"))
    assert "is a file" in refused(tool, block("create", path="/memories/a/b.md/c", file_text="x"))
    assert "not a file" in refused(tool, block("str_replace", path="/memories/a", old_str="b", new_str="c"))
    assert "does not exist" in refused(tool, block("delete", path="/memories/zzz"))
    assert "itself" in refused(tool, block("delete", path="/memories"))
    assert "itself" in refused(tool, block("rename", old_path="/memories", new_path="/memories/x"))
    tool.call(block("create", path="/memories/c.md", file_text="c"))
    assert "already exists" in refused(tool, block("rename", old_path="/memories/c.md", new_path="/memories/a/b.md"))
    assert "already exists" in refused(tool, block("rename", old_path="/memories/c.md", new_path="/memories/a"))
    assert "into itself" in refused(tool, block("rename", old_path="/memories/a", new_path="/memories/a/inner"))
    assert "does not exist" in refused(tool, block("rename", old_path="/memories/zz", new_path="/memories/yy"))
    assert sorted(MemoryFolder(tmp_path).open("alice").items()) == [("/memories/a/b.md", "b"), ("/memories/c.md", "c")]


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../etc/passwd",
        "/memories/a/../../b",
        "/memories/./a",
        "/memories//a",
        "/etc/passwd",
        "/memoriesX/a",
        "memories/a",
        "",
        "/memories/a\\..\\b",
        "/memories/%2e%2e/b",
        "/memories/a\x00b",
        "/memories/" + "a" * MAX_PATH_CHARS,
    ],
)
def test_amt_2_paths_outside_memories_or_with_dots_are_refused(tmp_path, path):
    """AMT-2: a path outside /memories, with '..', '.' or an empty part, encoded, with a backslash or NUL, or too long is refused by every command."""
    tool = tool_for(tmp_path)
    tool.call(block("create", path="/memories/a", file_text="a"))
    for given in (
        block("view", path=path),
        block("create", path=path, file_text="x"),
        block("str_replace", path=path, old_str="a", new_str="b"),
        block("insert", path=path, insert_line=0, insert_text="x"),
        block("delete", path=path),
        block("rename", old_path=path, new_path="/memories/z"),
        block("rename", old_path="/memories/a", new_path=path),
    ):
        message = refused(tool, given)
        assert "path" in message
    assert dict(MemoryFolder(tmp_path).open("alice")) == {"/memories/a": "a"}


def test_amt_2_a_missing_or_wrong_argument_names_it_and_what_is_accepted(tmp_path):
    """AMT-2: an unknown command, a missing or mistyped argument and a bad view_range are refused naming the argument."""
    tool = tool_for(tmp_path)
    tool.call(block("create", path="/memories/a", file_text="one\ntwo"))
    cases = {
        "command: must be one of view, create, str_replace, insert, delete, rename": block("list", path="/memories"),
        "file_text: create needs it; it takes path, file_text": block("create", path="/memories/b"),
        "new_str: str_replace needs it": block("str_replace", path="/memories/a", old_str="one"),
        "file_text: must be a string, got int": block("create", path="/memories/b", file_text=5),
        "insert_line: must be a whole number": block("insert", path="/memories/a", insert_line="1", insert_text="x"),
        "view_range: must be two whole numbers": block("view", path="/memories/a", view_range=[1]),
        "view_range: [3, 4] is outside": block("view", path="/memories/a", view_range=[3, 4]),
        "view_range: [2, 1] is outside": block("view", path="/memories/a", view_range=[2, 1]),
    }
    for words, given in cases.items():
        assert words in refused(tool, given), given
    assert "input must be an object" in refused(tool, ["view"])  # type: ignore[arg-type]
    assert dict(MemoryFolder(tmp_path).open("alice")) == {"/memories/a": "one\ntwo"}


def test_amt_2_sizes_are_bounded_and_a_refused_edit_changes_nothing(tmp_path):
    """AMT-2: a file of exactly max_file_chars is taken, one more refused, in create, str_replace and insert; max_files bounds the count."""
    tool = tool_for(tmp_path, max_file_chars=10, max_files=2)
    assert tool.call(block("create", path="/memories/a", file_text="x" * 10)).startswith("File created")
    assert "11 characters" in refused(tool, block("create", path="/memories/b", file_text="x" * 11))
    assert "11 characters" in refused(
        tool, block("str_replace", path="/memories/a", old_str="x" * 10, new_str="y" * 11)
    )
    tool.call(block("create", path="/memories/b", file_text="12345678\n"))
    assert "11 characters" in refused(tool, block("insert", path="/memories/b", insert_line=1, insert_text="z"))
    assert "at most" not in refused(tool, block("create", path="/memories/c", file_text="c"))
    assert "the most it takes is 2" in refused(tool, block("create", path="/memories/c", file_text="c"))
    assert dict(MemoryFolder(tmp_path).open("alice")) == {"/memories/a": "x" * 10, "/memories/b": "12345678\n"}
    assert SentinelMemoryTool(memory=MemoryFolder(tmp_path).open("z")).max_file_chars == DEFAULT_MAX_FILE_CHARS


def test_amt_3_threads_writing_one_users_files_lose_nothing_and_a_restart_keeps_them(tmp_path):
    """AMT-3: 4 threads, each with its own tool on one user's folder, create 25 files and edit one shared file; all 100 and every edit are kept."""

    tool_for(tmp_path).call(block("create", path="/memories/log.md", file_text=""))

    def work(n: int) -> None:
        tool = tool_for(tmp_path)
        for k in range(25):
            tool.call(block("create", path=f"/memories/t{n}/f{k}.md", file_text=f"{n}-{k}"))
            tool.call(block("insert", path="/memories/log.md", insert_line=0, insert_text=f"{n}-{k}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    memory = MemoryFolder(tmp_path).open("alice")
    assert len([key for key in memory if key != "/memories/log.md"]) == 100
    assert sorted(memory["/memories/log.md"].split()) == sorted(f"{n}-{k}" for n in range(4) for k in range(25))


def test_amt_4_one_users_tool_never_reaches_another_users_files(tmp_path):
    """AMT-4: the user is the app's choice; deleting every path Claude can name empties only that user's /memories, the app's facts stay."""
    folder = MemoryFolder(tmp_path)
    folder.open("bob").remember("/memories/bob.md", "bob's")
    folder.open("alice").remember("user:name", "Alice")
    alice = tool_for(tmp_path, "alice")
    alice.call(block("create", path="/memories/a.md", file_text="a"))
    assert "does not exist" in refused(alice, block("delete", path="/memories/bob.md"))
    assert "escape" in refused(alice, block("delete", path="/memories/../bob/memories/bob.md"))
    assert "does not exist" in refused(alice, block("view", path="/memories/bob.md"))
    assert alice.clear_all_memory() == "All memory cleared"
    assert dict(folder.open("alice")) == {"user:name": "Alice"}
    assert dict(folder.open("bob")) == {"/memories/bob.md": "bob's"}


def test_amt_1_the_sdks_tool_runner_drives_it_offline(tmp_path):
    """AMT-1: the anthropic client's tool_runner, over a mocked HTTP transport, sends each tool_use block to the backend and its result back."""
    turns = [
        [{"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {"command": "view", "path": "/memories"}}],
        [
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "memory",
                "input": {"command": "create", "path": "/memories/prefs.md", "file_text": "likes coffee\n"},
            }
        ],
        [
            {
                "type": "tool_use",
                "id": "toolu_3",
                "name": "memory",
                "input": {"command": "view", "path": "/memories/../x"},
            }
        ],
        [{"type": "text", "text": "Noted: you like coffee."}],
    ]
    requests: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        content = turns[len(requests) - 1]
        return httpx.Response(
            200,
            json={
                "id": f"msg_{len(requests)}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )

    client = Anthropic(api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(answer)), max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=100,
        tools=[tool_for(tmp_path)],
        messages=[{"role": "user", "content": "Remember that I like coffee"}],
    )
    final = runner.until_done()
    assert final.content[0].text == "Noted: you like coffee."
    assert requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = [request["messages"][-1]["content"][0] for request in requests[1:]]
    assert results[0]["tool_use_id"] == "toolu_1" and "0B\t/memories" in str(results[0]["content"])
    assert "File created successfully at: /memories/prefs.md" in str(results[1]["content"])
    assert results[2].get("is_error") is True and "would escape /memories" in str(results[2]["content"])
    assert MemoryFolder(tmp_path).open("alice")["/memories/prefs.md"] == "likes coffee\n"


def test_amt_4_construction_refuses_a_bad_configuration(tmp_path):
    """AMT-4: neither or both of memory and memories with user_id, an empty user, a non-Memory or a bad bound raise TypeError."""
    folder = MemoryFolder(tmp_path)
    for bad in (
        {},
        {"memories": folder},
        {"memories": folder, "user_id": ""},
        {"memories": folder, "user_id": "a", "memory": folder.open("a")},
        {"memory": {}},
        {"memories": folder, "user_id": "a", "max_files": 0},
        {"memories": folder, "user_id": "a", "max_file_chars": True},
    ):
        with pytest.raises(TypeError):
            SentinelMemoryTool(**bad)


def test_amt_dep_1_importing_the_package_does_not_import_anthropic():
    """DEP-1, AMT-1: `import sentinel_memory` imports no anthropic module; importing the backend does."""
    code = (
        "import sys, sentinel_memory; print(any(m.split('.')[0] == 'anthropic' for m in sys.modules)); "
        "import sentinel_memory.integrations.tools.anthropic; print('anthropic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_amt_1_without_the_sdk_the_module_names_the_extra(monkeypatch):
    """AMT-1, DEP-1: with anthropic missing, importing the backend raises ImportError naming the [anthropic] extra."""
    for name in [m for m in sys.modules if m == "anthropic" or m.startswith("anthropic.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.tools.anthropic", raising=False)
    with pytest.raises(ImportError, match=r"sentinel-memory\[anthropic\]"):
        importlib.import_module("sentinel_memory.integrations.tools.anthropic")


def test_amt_2_a_path_of_exactly_255_characters_is_taken_and_256_refused(tmp_path):
    """AMT-2: the path bound is inclusive: 255 characters are a file, 256 are refused naming the bound; a trailing slash names the directory."""
    tool = tool_for(tmp_path)
    longest = "/memories/" + "p" * (MAX_PATH_CHARS - len("/memories/"))
    assert len(longest) == 255
    assert tool.call(block("create", path=longest, file_text="x")).startswith("File created")
    assert "the most accepted is 255" in refused(tool, block("create", path=longest + "q", file_text="x"))
    assert tool.call(block("view", path="/memories/")).startswith("Here're the files")
    assert list(MemoryFolder(tmp_path).open("alice")) == [longest]
