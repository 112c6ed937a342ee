"""The examples run, offline, and do what their docstrings say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(name: str, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_chat_loop_remembers_the_allergy_and_continues_after_a_restart(tmp_path):
    """examples/chat.py: the scripted chat avoids peanuts, knows the name, and turns keep counting after a restart (ENT-16, CTX-10)."""
    out = run("chat.py", str(tmp_path))
    assert "bot: How about a lemon sorbet? It has no peanuts." in out
    assert "bot: Your name is Jakub." in out
    assert "after a restart the next turn is chat:10" in out
    kept = [entry["key"] for entry in json.loads((tmp_path / "memory.json").read_text())["entries"]]
    assert "user:allergy" in kept and "user:name" in kept and len(kept) <= 6 + 1


def test_chat_loop_reads_typed_messages(tmp_path):
    """examples/chat.py --interactive: typed lines are the messages; an empty line ends the chat."""
    out = run("chat.py", "--interactive", str(tmp_path), stdin="My name is Ada.\nWhat is my name?\n\n")
    assert "bot: Nice to meet you, Ada!" in out and "bot: Your name is Ada." in out


def test_archive_evictions_records_every_drop(tmp_path):
    """examples/archive_evictions.py: every evicted and expired entry is a line in the archive, with its reason (CMP-3)."""
    run("archive_evictions.py", str(tmp_path))
    records = [json.loads(line) for line in (tmp_path / "evicted.jsonl").read_text().splitlines()]
    assert [(r["key"], r["reason"]) for r in records] == [
        ("chat:1", "evicted"),
        ("chat:2", "evicted"),
        ("session:cart", "expired"),
    ]


def test_per_user_keeps_users_apart_and_inside_the_folder(tmp_path):
    """examples/per_user.py: three users, three files inside users/, each reading back its own name (FLD-1, FLD-2)."""
    out = run("per_user.py", str(tmp_path))
    files = sorted(p.name for p in (tmp_path / "users").glob("*.json"))
    assert len(files) == 3 and not (tmp_path / "etc").exists()
    assert "name Mallory" in out and "name Alice" in out
