"""The command line reads without writing, compacts only what it must, and honours --must-keep (CLI-1, CLI-2)."""

from __future__ import annotations

import json
import os

import pytest

import sentinel_memory as sm
from sentinel_memory.cli import main
from support import DAY, T0


def entry(key, data, importance=0.5, at=T0, expires_at=None) -> dict:
    return {
        "key": key,
        "data": data,
        "importance": importance,
        "createdAt": at,
        "updatedAt": at,
        "expiresAt": expires_at,
    }


def write(path, entries, generation=7) -> None:
    path.write_text(json.dumps({"version": 1, "generation": generation, "entries": entries}, indent=1))


def folder_state(folder) -> dict:
    """Every file in the folder with its bytes, inode and modification time; the save lock's sidecar is left out."""
    return {
        p.name: (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.name != ".memory.json.lock"
    }


def cli(capsys, *args) -> tuple[int, str, str]:
    status = main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def crowded(tmp_path):
    """A file with three live entries, one long expired, and one invalid entry (a lossy load, PER-14)."""
    path = tmp_path / "memory.json"
    write(
        path,
        [
            entry("user:name", "Jakub", 0.9),
            entry("chat:1", "user: I am allergic to peanuts", 0.3),
            entry("session:cart", "2 items", 0.2, expires_at=T0 + 1),  # expired long ago
            entry("note", "small talk", 0.1),
            entry("broken", "importance out of range", 2),
        ],
    )
    return path


READS = [
    ["show"],
    ["stats"],
    ["recall", "peanuts"],
    ["context", "--budget", "5"],
    ["context", "--budget", "100", "--query", "peanuts", "--must-keep", "0.5", "--tokenizer", "upper-bound"],
    ["compact", "--dry-run"],
]
OPTIONS = [[], ["--json"], ["--limit", "1"], ["--limit", "2", "--json"]]


@pytest.mark.parametrize("options", OPTIONS, ids=" ".join)
@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_cli_1_a_read_command_never_writes_whatever_its_options(crowded, capsys, command, options):
    """CLI-1, CLI-2, PER-8, PER-14: read commands (and compact --dry-run) over a lossy, over-limit file leave every file as it was and make no .orig copy."""
    before = folder_state(crowded.parent)
    status, _, err = cli(capsys, command[0], crowded, *command[1:], *options)
    assert status == 0, err
    assert "dropped 1 invalid" in err
    assert folder_state(crowded.parent) == before


def test_cli_1_reading_more_entries_than_the_default_limit_compacts_nothing(tmp_path, capsys):
    """CLI-1: a file of 1,500 entries is read whole (limit large enough for every stored one) and left untouched."""
    path = tmp_path / "memory.json"
    write(path, [entry(f"k{i}", i, importance=(i % 10) / 10, at=T0 + i) for i in range(1_500)])
    before = folder_state(tmp_path)
    status, out, _ = cli(capsys, "stats", path, "--json")
    stats = json.loads(out)
    assert status == 0 and (stats["size"], stats["stored"], stats["evicted"]) == (1_500, 1_500, 0)
    assert stats["limit"] >= 1_500
    status, out, _ = cli(capsys, "show", path, "--json")
    assert [row["key"] for row in json.loads(out)] == [f"k{i}" for i in range(1_500)]
    status, out, _ = cli(capsys, "compact", path, "--json")
    assert json.loads(out) == {"expired": [], "evicted": [], "saved": False}
    assert folder_state(tmp_path) == before


def test_cli_2_compact_saves_only_when_something_was_dropped(tmp_path, capsys):
    """CLI-2: compact with nothing to drop leaves the file (bytes, inode, time, generation); with something, it saves the next generation."""
    path = tmp_path / "memory.json"
    write(path, [entry("user:name", "Jakub", 0.9), entry("note", "hello", 0.1)])
    before = folder_state(tmp_path)
    status, out, _ = cli(capsys, "compact", path, "--json")
    assert status == 0 and json.loads(out) == {"expired": [], "evicted": [], "saved": False}
    assert folder_state(tmp_path) == before
    status, out, _ = cli(capsys, "compact", path)
    assert out.startswith("dropped 0 expired (-) and 0 evicted (-)")
    assert folder_state(tmp_path) == before
    write(path, [entry("user:name", "Jakub", 0.9), entry("cart", "2 items", expires_at=T0 + 1)])
    status, out, _ = cli(capsys, "compact", path, "--json")
    assert json.loads(out) == {"expired": ["cart"], "evicted": [], "saved": True}
    saved = json.loads(path.read_text())
    assert [e["key"] for e in saved["entries"]] == ["user:name"] and saved["generation"] == 8


def test_cli_1_context_must_keep_puts_the_important_entries_first(tmp_path, capsys):
    """CLI-1, CTX-10: --must-keep 0.9 keeps the name though the query matches a long chat turn that would fill the budget."""
    path = tmp_path / "memory.json"
    write(
        path,
        [
            entry("user:name", "Jakub", 0.9, at=T0 - DAY),
            entry("chat:1", "user: peanuts " + "and more peanuts " * 3, 0.2),
        ],
    )
    args = ["context", path, "--budget", "20", "--query", "peanuts", "--json"]
    _, out, _ = cli(capsys, *args)
    assert [e["key"] for e in json.loads(out)["entries"]] == ["chat:1"]  # the query's match fills the budget
    _, out, _ = cli(capsys, *args, "--must-keep", "0.9")
    kept = json.loads(out)
    assert [e["key"] for e in kept["entries"]] == ["user:name"] and kept["omitted"] == 1
    _, out, _ = cli(capsys, *args[:-1], "--must-keep", "0.9")
    assert out.startswith("user:name: Jakub\n")
    _, out, _ = cli(capsys, *args, "--must-keep", "1")  # nothing that important: the ranking of CTX-1
    assert [e["key"] for e in json.loads(out)["entries"]] == ["chat:1"]


def test_cli_1_the_files_own_mode_survives_every_read(crowded, capsys):
    """CLI-1: reading never touches a read-only file's mode, or the file (a read needs no write permission)."""
    os.chmod(crowded, 0o444)
    for command in READS:
        status, _, err = cli(capsys, command[0], crowded, *command[1:])
        assert status == 0, err
    assert os.stat(crowded).st_mode & 0o777 == 0o444
    assert sm.JsonFileStore(crowded).generation() == 7
