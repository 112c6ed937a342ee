"""The runner and serve where a port author found them wanting: every skip of a required case fails the run,
a hung backend ends the run in bounded time, and every answer and report gets written (PROTOCOL.md sections 4, 11)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sentinel_memory.conformance import backend, runner, vectors

ROOT = Path(__file__).resolve().parent.parent
CASES = [case for _, case in vectors.load_all(ROOT / "spec" / "vectors")]


def python_backend(tmp_path: Path, body: str) -> str:
    """A backend command: a Python script that answers the handshake, then runs ``body`` for each case line."""
    script = tmp_path / "backend.py"
    script.write_text(
        "import json, sys, time\n"
        "from sentinel_memory.conformance.backend import handshake\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if request.get('op') == 'start':\n"
        "        print(json.dumps(handshake()), flush=True)\n"
        "        continue\n" + "".join(f"    {line}\n" for line in body.splitlines()),
        encoding="utf-8",
    )
    return f"{sys.executable} {script}"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=300,
    )


def test_a_backend_that_declines_every_required_case_fails_the_run(tmp_path):
    """PROTOCOL section 10: answering E_UNSUPPORTED to every case is 'skipped' for each, and the run fails with a line that says why."""
    command = python_backend(tmp_path, "print(json.dumps({'id': request['id'], 'error': 'E_UNSUPPORTED'}), flush=True)")
    result = cli("run", "--backend", command, "--only", "entries-*", "--quiet")
    assert result.returncode == 1, result.stdout
    assert "0 passed, 0 failed" in result.stdout and "declined" in result.stdout
    optional = cli("run", "--backend", command, "--only", "cache-*", "--quiet")
    assert optional.returncode == 0, optional.stdout  # an optional group may be declined


def test_a_handshake_that_never_comes_leaves_no_backend_running(tmp_path):
    """PROTOCOL section 10: a backend that never answers the handshake is killed when the runner gives up on it."""
    marker = tmp_path / "pid"
    script = tmp_path / "silent.py"
    script.write_text(f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    process = runner.Subprocess(f"{sys.executable} {script}", timeout=1, handshake_timeout=1)
    with pytest.raises(runner.BackendError):
        process.start()
    pid = int(marker.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_a_backend_that_hangs_on_every_case_ends_the_run_after_a_few(tmp_path):
    """PROTOCOL section 10: after --max-timeouts cases in a row time out, the rest are errored as not run: seconds, not hours."""
    command = python_backend(tmp_path, "time.sleep(30)")
    started = time.monotonic()
    result = cli(
        "run", "--backend", command, "--only", "entries-*", "--timeout", "0.3", "--max-timeouts", "3", "--quiet"
    )
    assert result.returncode == 1 and time.monotonic() - started < 60
    assert result.stdout.count("no answer within") == 3 and "3 cases in a row got no answer in time" in result.stdout


def test_the_run_deadline_ends_a_slow_backend(tmp_path):
    """PROTOCOL section 10: a run past --deadline counts what it did not run as errored, and ends."""
    command = python_backend(
        tmp_path,
        "time.sleep(0.2)\n"
        "from sentinel_memory.conformance.backend import run_case\n"
        "print(json.dumps(run_case(request)), flush=True)",
    )
    result = cli("run", "--backend", command, "--only", "entries-*", "--deadline", "1", "--quiet")
    assert result.returncode == 1 and "the run's deadline of 1 s passed" in result.stdout


def test_a_report_with_a_lone_surrogate_is_written(tmp_path):
    """PROTOCOL section 10: --json writes the report even when a failing answer holds a lone surrogate."""
    command = python_backend(
        tmp_path,
        "from sentinel_memory.conformance.backend import run_case\n"
        "answer = run_case(request)\n"
        "answer['results'] = [{'ok': '\\ud800'} for _ in answer.get('results', [])]\n"
        "print(json.dumps(answer), flush=True)",
    )
    report = tmp_path / "report.json"
    result = cli("run", "--backend", command, "--only", "entries-recent-3", "--json", str(report), "--quiet")
    assert result.returncode == 1
    assert json.loads(report.read_text())["summary"]["failed"] == 1


def test_only_with_an_expected_failures_list_knows_every_case(tmp_path):
    """PROTOCOL section 10: a listed expected failure left out by --only is still a case, not an unknown id."""
    listed = tmp_path / "expected.txt"
    listed.write_text("article-restaurant  # not selected by --only below\n")
    serve = f"{sys.executable} -m sentinel_memory.conformance serve"
    result = cli("run", "--backend", serve, "--only", "entries-recent-*", "--expected-failures", str(listed), "--quiet")
    assert result.returncode == 0, result.stdout
    assert "is not a case" not in result.stdout


def test_a_failure_shows_the_steps_that_led_to_it():
    """PROTOCOL section 10: a failing case's report lists every step before the one that differs."""
    case = next(c for c in CASES if c["id"] == "article-restaurant")
    answer = backend.run_case(dict(vectors.request_of(case)))
    answer["results"][-1] = {"ok": "something else"}
    outcome = runner.judge(case, json.loads(json.dumps(answer)))
    text = runner.describe(outcome)
    assert outcome.status == "failed" and len(outcome.before) == len(case["steps"]) - 1
    assert text.count("  step ") == len(case["steps"]) and "<- differs" in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"key": "k", "default": {"$number": "NaN"}}, {"$number": "NaN"}),
        ({"key": "k", "default": {"$number": "Infinity"}}, {"$number": "Infinity"}),
        ({"key": "k", "default": 10**5000}, {"$number": "1" + "0" * 5000}),
    ],
)
def test_serve_writes_every_answer_even_numbers_json_cannot(args, expected):
    """PROTOCOL section 4: an answer holding NaN, an infinity or an int of over 4,300 digits is written as section 4's $number."""

    # The request writes NaN and Infinity as section 4 says ($number); only the answer must carry them back.
    request = {"id": "echo", "config": {}, "steps": [{"op": "get", "args": args, "now": 0}]}
    result = subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", "serve"],
        input='{"op": "start", "protocol": 2}\n' + json.dumps(request, default=str) + "\n"
        if not isinstance(args["default"], int)
        else '{"op": "start", "protocol": 2}\n'
        + '{"id": "echo", "config": {}, "steps": [{"op": "get", "args": {"key": "k", "default": 1'
        + "0" * 5000
        + '}, "now": 0}]}\n',
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answer = json.loads(result.stdout.splitlines()[1])
    assert answer["results"] == [{"ok": expected}]


def test_answer_prints_what_the_reference_does_for_a_case(tmp_path):
    """PROTOCOL section 10: `answer CASE.json` prints the reference's results for a case nobody reviewed."""
    case = {
        "id": "mine",
        "config": {"limit": 2},
        "steps": [{"op": "remember", "args": {"key": k, "data": i}, "now": i} for i, k in enumerate("abc")]
        + [{"op": "get_recent", "now": 3}],
    }
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    result = cli("answer", str(path))
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["id"] == "mine" and [e["key"] for e in answer["results"][-1]["ok"]] == ["c", "b"]
    assert cli("answer", str(tmp_path / "missing.json")).returncode == 2


def test_a_vector_that_expects_e_unsupported_is_compared_not_skipped():
    """Section 10: where a vector expects E_UNSUPPORTED (an unknown argument), that answer passes and any other fails; elsewhere it is a skip."""
    from sentinel_memory.conformance.runner import judge

    case = {
        "id": "c",
        "steps": [
            {
                "op": "remember",
                "args": {"key": "a", "no_such_argument": 1},
                "now": 0,
                "expect": {"error": "E_UNSUPPORTED"},
            }
        ],
    }
    assert judge(case, {"id": "c", "results": [{"error": "E_UNSUPPORTED"}]}).status == "passed"
    assert judge(case, {"id": "c", "results": [{"ok": None}]}).status == "failed"
    refused = {"id": "r", "config": {"no_such_key": 1}, "steps": [], "error": "E_UNSUPPORTED"}
    assert judge(refused, {"id": "r", "error": "E_UNSUPPORTED"}).status == "passed"
    assert judge(refused, {"id": "r", "results": []}).status == "failed"
    other = {"id": "o", "steps": [{"op": "size", "now": 0, "expect": {"ok": 0}}]}
    assert judge(other, {"id": "o", "results": [{"error": "E_UNSUPPORTED"}]}).status == "skipped"


def test_a_run_of_no_cases_is_no_pass(tmp_path):
    """PROTOCOL section 10: a selection that matches no case fails, and a folder without vector files is refused; neither reports a pass."""
    serve = f"{sys.executable} -m sentinel_memory.conformance serve"
    nothing = cli("run", "--backend", serve, "--only", "no-such-case-*", "--quiet")
    assert nothing.returncode == 1 and "nothing was checked" in nothing.stdout
    empty = cli("run", "--backend", serve, "--vectors", str(tmp_path), "--quiet")
    assert empty.returncode == 2 and "no vector files" in empty.stderr


def test_serve_answers_a_request_nested_20000_deep_and_the_next(tmp_path):
    """Sections 1 and 4: data 20,000 levels deep gets its E_RANGE (ENT-13) and the echo of a deep default, and serve goes on to the next request."""
    deep = "[" * 20_000 + "1" + "]" * 20_000
    requests = [
        '{"op": "start", "protocol": 2}',
        '{"id": "deep", "config": {}, "steps": [{"op": "remember", "args": {"key": "a", "data": DEEP}, "now": 0},'
        ' {"op": "get", "args": {"key": "b", "default": DEEP}, "now": 0}]}'.replace("DEEP", deep),
        '{"id": "next", "config": {}, "steps": [{"op": "size", "args": {}, "now": 0}]}',
    ]
    result = subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", "serve"],
        input="\n".join(requests) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 3, result.stderr[-2000:]
    assert lines[1].startswith('{"id": "deep", "results": [{"error": "E_RANGE"}, {"ok": [[[[')
    assert json.loads(lines[2]) == {"id": "next", "results": [{"ok": 0}]}


def test_answer_reads_integers_of_any_length(tmp_path):
    """Section 10: answer CASE.json takes a default of 5,001 digits, as serve does, and prints it as a $number."""
    case = tmp_path / "case.json"
    digits = "9" * 5_001
    case.write_text(
        '{"id": "big", "config": {}, "steps": [{"op": "get", "args": {"key": "k", "default": DIGITS}, "now": 0}]}'.replace(
            "DIGITS", digits
        ),
        encoding="utf-8",
    )
    result = cli("answer", str(case))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"id": "big", "results": [{"ok": {"$number": digits}}]}
