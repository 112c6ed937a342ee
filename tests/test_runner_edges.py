"""The conformance runner's edges: timeouts not in a row, an answer without an id, the tolerance, blank lines (PROTOCOL sections 1, 4, 10)."""

from __future__ import annotations

import sys
from pathlib import Path

from sentinel_memory.conformance import runner, vectors

ROOT = Path(__file__).resolve().parent.parent
CASES = {case["id"]: case for _, case in vectors.load_all(ROOT / "spec" / "vectors")}
ENTRIES = [CASES[name] for name in ("entries-key-number-remember", "entries-key-number-get", "entries-key-number-has")]
ENTRIES.append(CASES["entries-key-number-forget"])

BACKEND = """
import json, sys, time
from sentinel_memory.conformance.backend import handshake, run_case

mode, hang = sys.argv[1], set(sys.argv[2:])


def nudge(value):
    if isinstance(value, float) and value != int(value):
        return value * (1 + 1e-9)
    if isinstance(value, list):
        return [nudge(item) for item in value]
    if isinstance(value, dict):
        return {key: nudge(item) for key, item in value.items()}
    return value


for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "start":
        print(json.dumps(handshake()), flush=True)
        continue
    if request["id"] in hang:
        time.sleep(30)
        continue
    answer = run_case(request)
    if mode == "nudge":
        answer = nudge(answer)
    if mode == "blank":
        print("", flush=True)
        print("   ", flush=True)
    print(json.dumps(answer), flush=True)
"""


def backend(tmp_path: Path, mode: str, *hang: str, timeout: float = 20.0) -> runner.Subprocess:
    script = tmp_path / "backend.py"
    script.write_text(BACKEND, encoding="utf-8")
    return runner.Subprocess([sys.executable, str(script), mode, *hang], timeout=timeout)


def test_timeouts_that_are_not_in_a_row_do_not_stop_the_run(tmp_path):
    """PROTOCOL section 10: with max_timeouts=2, two timeouts with an answered case between them stop nothing."""
    hanging = backend(tmp_path, "plain", ENTRIES[0]["id"], ENTRIES[2]["id"], timeout=2.0)
    report = runner.run(hanging, ENTRIES, max_timeouts=2)
    assert [o.status for o in report.outcomes] == ["errored", "passed", "errored", "passed"]
    assert all(o.reason.startswith("no answer within") for o in report.outcomes[::2])


def test_an_answer_without_an_id_is_not_the_cases():
    """PROTOCOL section 1: an answer that carries no id is errored, never judged as the case's answer."""
    case = ENTRIES[0]
    answer = vectors.answer_of(case)
    assert runner.judge(case, {"id": case["id"], **answer}).status == "passed"
    outcome = runner.judge(case, {key: value for key, value in answer.items() if key != "id"})
    assert (outcome.status, outcome.reason) == ("errored", "answered id None")


def test_the_tolerance_reaches_the_comparison(tmp_path):
    """PROTOCOL section 4: numbers off by a relative 1e-9 fail a run at tolerance 0 and pass one at 1e-6."""
    case = CASES["article-refund-estimate"]
    strict = runner.run(backend(tmp_path, "nudge"), [case])
    assert [o.status for o in strict.outcomes] == ["failed"]
    tolerant = runner.run(backend(tmp_path, "nudge"), [case], tolerance=1e-6)
    assert [o.status for o in tolerant.outcomes] == ["passed"] and tolerant.tolerance == 1e-6


def test_blank_lines_from_a_backend_are_not_answers(tmp_path):
    """PROTOCOL section 1: blank lines a backend prints are skipped; the next line is the case's answer."""
    report = runner.run(backend(tmp_path, "blank"), ENTRIES[:2])
    assert [o.status for o in report.outcomes] == ["passed", "passed"]
