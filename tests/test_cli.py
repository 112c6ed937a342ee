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


def twenty(path, importances=None):
    """A file of twenty entries, importance rising with the number, saved as the library saves."""
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=False)
    for i in range(20):
        mem.remember(f"k{i:02}", f"note {i}", importance=i / 20)
    mem.save()
    return path


@pytest.mark.parametrize("dry_run", [False, True])
def test_cli_2_compact_with_a_limit_evicts_down_to_it_and_saves(tmp_path, dry_run):
    """CLI-4, CLI-2, PER-8: compact --limit 2 on twenty entries evicts the eighteen least important and saves two; --dry-run saves nothing."""
    path = twenty(tmp_path / "memory.json")
    before = path.read_bytes()
    result = run("compact", str(path), "--limit", "2", "--json", *(["--dry-run"] if dry_run else []))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["evicted"] == [f"k{i:02}" for i in range(18)] and report["saved"] is not dry_run
    if dry_run:
        assert path.read_bytes() == before
    else:
        assert [e["key"] for e in json.loads(path.read_text())["entries"]] == ["k18", "k19"]
        again = json.loads(run("compact", str(path), "--limit", "2", "--json").stdout)
        assert again == {"expired": [], "evicted": [], "saved": False}  # nothing left to drop: not saved again


def hold_lock(path, seconds: float) -> subprocess.Popen[str]:
    """Another process that holds the file's lock (MW-2) for ``seconds``; returns once it holds it."""
    code = (
        "import sys, time, sentinel_memory as sm\n"
        f"with sm.JsonFileStore({str(path)!r}).lock():\n"
        "    print('held', flush=True)\n"
        f"    time.sleep({seconds})\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("command", [["forget", "k19"], ["compact", "--limit", "2"]])
def test_cli_3_a_command_that_saves_gives_up_on_a_held_lock_after_wait(tmp_path, command):
    """CLI-3, MW-8: while another process holds the lock, a saving command waits --wait seconds, names the lock file, exits 3 and changes nothing."""
    path = twenty(tmp_path / "memory.json")
    before = path.read_bytes()
    holder = hold_lock(path, 30)
    try:
        started = time.monotonic()
        result = run(command[0], str(path), *command[1:], "--wait", "0.5")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 3
    (line,) = result.stderr.strip().splitlines()
    assert str(tmp_path / ".memory.json.lock") in line and "--wait" in line
    assert 0.5 <= waited < 20 and path.read_bytes() == before
    # The step after: once the holder is gone, the same command goes through.
    assert run(command[0], str(path), *command[1:], "--wait", "5").returncode == 0
    assert path.read_bytes() != before


def test_cli_3_help_lists_every_command_with_what_it_requires():
    """CLI-3: --help names each command's required arguments (context needs --budget) and the exit statuses."""
    text = run("--help").stdout
    for usage in ("show FILE", "recall FILE QUERY", "context FILE --budget N", "forget FILE KEY", "compact FILE"):
        assert usage in text
    assert "3 another process held the file's lock" in text
    assert "required:\n  --budget N" in run("context", "--help").stdout
    missing = run("context", "somewhere.json")
    assert missing.returncode == 2 and "--budget" in missing.stderr


def test_cli_4_forget_removes_its_one_entry_whatever_limit_says(tmp_path):
    """CLI-4, CLI-2: forget with --limit 2 on twenty entries removes only the one key; the other nineteen stay in the file."""
    path = twenty(tmp_path / "memory.json")
    result = run("forget", str(path), "k19", "--limit", "2")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(path.read_text())["entries"]) == 19


@pytest.mark.parametrize("limit", ["0", "-3", "2.5", "many"])
def test_cli_4_a_limit_that_cannot_be_kept_is_a_usage_error(tmp_path, limit):
    """CLI-4, CLI-3: compact --limit 0 (or negative, or not a whole number) exits 2 and leaves the file as it was."""
    path = twenty(tmp_path / "memory.json")
    before = path.read_bytes()
    result = run("compact", str(path), "--limit", limit)
    assert result.returncode == 2 and path.read_bytes() == before


@pytest.mark.parametrize("command", [["forget", "k1"], ["compact", "--limit", "5"]])
def test_cli_4_an_app_saving_while_the_command_runs_loses_nothing(tmp_path, command, monkeypatch, capsys):
    """CLI-4, MW-6: the app saves between the command's load and its change: the command reloads under the lock, nothing of either is lost."""
    from sentinel_memory import cli

    path = twenty(tmp_path / "memory.json")
    real = cli.create_memory

    def app_writes_meanwhile(**options):
        memory = real(**options)
        app = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, limit=10_000)
        app.remember("app:new", "written by the app meanwhile", importance=1.0)
        return memory

    monkeypatch.setattr(cli, "create_memory", app_writes_meanwhile)
    assert cli.main([command[0], str(path), *command[1:]]) == 0, capsys.readouterr().err
    keys = [e["key"] for e in json.loads(path.read_text())["entries"]]
    assert "app:new" in keys and ("k1" not in keys if command[0] == "forget" else len(keys) == 5)
