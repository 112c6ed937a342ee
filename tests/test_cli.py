"""The sentinel-memory command, run as a subprocess on real files (CLI-1 .. CLI-3)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import sentinel_memory as sm


def run(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_memory.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=60,
    )


@pytest.fixture
def saved(tmp_path):
    """A memory file with a name, a cart note, a chat turn and an entry that has already expired."""
    path = tmp_path / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("session:cart", "2 items in the cart", ttl=15 * 60_000)
    mem.remember("old:note", "about to go", ttl=1)
    mem.add_turn("user", "I am allergic to peanuts")
    time.sleep(0.01)
    return path


def test_cli_1_show_lists_live_entries_as_a_table(saved):
    """CLI-1: show prints key, importance, retention, age, expiry and a data preview for each live entry."""
    result = run("show", str(saved))
    assert result.returncode == 0
    header, *rows, footer = result.stdout.strip().splitlines()
    assert header.split() == ["key", "importance", "retention", "age", "expires", "data"]
    assert [row.split()[0] for row in rows] == ["user:name", "session:cart", "chat:1"]
    assert "in 15m" in rows[1] and footer == "3 live entries"


def test_cli_1_every_read_command_speaks_json(saved):
    """CLI-1: show, stats, recall and context take --json and print what the library returns."""
    shown = json.loads(run("show", str(saved), "--json").stdout)
    assert [row["key"] for row in shown] == ["user:name", "session:cart", "chat:1"] and shown[0]["importance"] == 0.9
    assert json.loads(run("stats", str(saved), "--json").stdout)["stored"] == 4
    hits = json.loads(run("recall", str(saved), "peanuts", "--json").stdout)
    assert [hit["entry"]["key"] for hit in hits] == ["chat:1"]
    context = json.loads(run("context", str(saved), "--budget", "20", "--query", "cart", "--json").stdout)
    assert context["tokens"] <= 20 and "session:cart" in [e["key"] for e in context["entries"]]


def test_cli_1_context_with_a_real_tokenizer_and_must_keep(saved):
    """CLI-1: --tokenizer o200k_base counts with bpe-openai; --must-keep ranks the name first."""
    pytest.importorskip("bpe_openai")
    result = run(
        "context", str(saved), "--budget", "8", "--query", "peanuts", "--tokenizer", "o200k_base", "--must-keep", "0.9"
    )
    assert result.returncode == 0
    assert result.stdout.startswith("user:name: Jakub") and "(o200k_base) of 8" in result.stdout


def test_cli_2_compact_saves_unless_dry_run(saved):
    """CLI-2: compact --dry-run changes nothing; compact drops the expired entry and saves the file."""
    assert json.loads(run("compact", str(saved), "--dry-run", "--json").stdout) == {
        "expired": ["old:note"],
        "evicted": [],
        "saved": False,
    }
    assert len(json.loads(saved.read_text())["entries"]) == 4
    assert run("compact", str(saved)).stdout.startswith("dropped 1 expired (old:note)")
    assert [e["key"] for e in json.loads(saved.read_text())["entries"]] == ["user:name", "session:cart", "chat:1"]


def test_cli_2_forget_removes_and_saves(saved):
    """CLI-2: forget removes a live entry and saves; a key that is not there changes nothing."""
    assert run("forget", str(saved), "user:name").stdout.strip() == "forgot user:name"
    assert "user:name" not in [e["key"] for e in json.loads(saved.read_text())["entries"]]
    before = saved.read_bytes()
    assert json.loads(run("forget", str(saved), "nope", "--json").stdout) == {"key": "nope", "forgotten": False}
    assert saved.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ('{"version": 1, "entries": [', "is not valid JSON"),
        ("[]", "not a memory document object"),
        ('{"version": 7, "entries": []}', "version"),
    ],
)
def test_cli_3_a_missing_or_damaged_file_exits_1_naming_file_and_problem(tmp_path, content, message):
    """CLI-3: exit status 1, and stderr names the file and the problem; a damaged file is left as it was."""
    path = tmp_path / "memory.json"
    if content is not None:
        path.write_text(content)
    for command in (["show"], ["stats"], ["compact"], ["forget", "k"]):
        result = run(command[0], str(path), *command[1:])
        assert result.returncode == 1
        assert str(path) in result.stderr and message in result.stderr
    if content is not None:
        assert path.read_text() == content


def test_cli_3_usage_errors_exit_2(saved):
    """CLI-3: a missing argument, an unknown command or a bad budget is a usage error: exit status 2."""
    assert run("context", str(saved)).returncode == 2
    assert run("teleport").returncode == 2
    assert run("context", str(saved), "--budget", "-1").returncode == 2


def test_cli_3_an_invalid_entry_is_reported_on_stderr(tmp_path):
    """CLI-3, PER-14: a file with an invalid entry still shows the rest, and says what was dropped."""
    path = tmp_path / "memory.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "entries": [
                    {"key": "ok", "data": 1, "importance": 0.5, "createdAt": 0, "updatedAt": 0},
                    {"key": "", "data": 2, "importance": 0.5, "createdAt": 0, "updatedAt": 0},
                ],
            }
        )
    )
    result = run("stats", str(path), "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["size"] == 1
    assert "dropped 1 invalid entries" in result.stderr


def test_cli_demo_tells_the_restaurant_story():
    """CLI-1: demo keeps the name and the allergy where the last five would not."""
    result = run("demo")
    assert result.returncode == 0
    assert "sentinel-memory holds:         chat:6, chat:5, chat:4, user:allergy, user:name" in result.stdout
