"""What the conformance runner writes and shows, pinned whole: the JSON report, the summary, a failure as read, its parts (PROTOCOL section 10)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from sentinel_memory.conformance import PROTOCOL, REQUIRED_GROUPS, backend, runner

FAILED = runner.Outcome(
    id="c-2",
    status="failed",
    description="two steps",
    step=2,
    op="get",
    args={"key": "k"},
    now=0,
    expected=[],
    got=0,
    where="$",
    before=({"op": "remember", "args": {"key": "k", "data": 1}, "now": 5},),
)


def outcomes() -> tuple[runner.Outcome, ...]:
    """One outcome of each status, a required skip among them."""
    return (
        runner.Outcome(id="c-1", status="passed", description="first"),
        FAILED,
        runner.Outcome(id="c-3", status="skipped", reason="needs stores"),
        runner.Outcome(id="c-4", status="skipped", reason="step 1 (get) is not supported", required=True),
        runner.Outcome(id="c-5", status="errored", reason="no answer within 1 s"),
        runner.Outcome(id="c-6", status="expected failure", step=1, op="get", expected=1, got=2, where="$"),
    )


def test_an_outcome_as_json_leaves_out_only_what_is_unset():
    """An outcome's JSON drops None, "", () and False, and keeps what is set, 0 and an empty list among it."""
    assert FAILED.to_json() == {
        "id": "c-2",
        "status": "failed",
        "description": "two steps",
        "step": 2,
        "op": "get",
        "args": {"key": "k"},
        "now": 0,
        "expected": [],
        "got": 0,
        "where": "$",
        "before": ({"op": "remember", "args": {"key": "k", "data": 1}, "now": 5},),
    }
    assert runner.Outcome(id="c", status="skipped", reason="r", required=True).to_json() == {
        "id": "c",
        "status": "skipped",
        "reason": "r",
        "required": True,
    }


def test_the_report_as_json_is_the_protocol_the_implementation_the_counts_and_every_case():
    """The JSON report: protocol, implementation, tolerance, a count of each of the five statuses, the list's problems, every case."""
    report = runner.Report(
        implementation={"name": "port", "version": "1"},
        outcomes=outcomes(),
        list_problems=("expected failure 'gone' is not a case",),
        tolerance=1e-9,
    )
    assert report.to_json() == {
        "protocol": PROTOCOL,
        "implementation": {"name": "port", "version": "1"},
        "tolerance": 1e-9,
        "summary": {"passed": 1, "failed": 1, "skipped": 2, "errored": 1, "expected failure": 1},
        "expected_failure_problems": ["expected failure 'gone' is not a case"],
        "cases": [outcome.to_json() for outcome in outcomes()],
    }
    assert report.summary() == "1 passed, 1 failed, 2 skipped, 1 errored"
    assert report.required_skips == 1 and not report.ok


@pytest.mark.parametrize(
    ("statuses", "required", "problems", "ok"),
    [
        (("passed", "expected failure"), False, (), True),
        (("passed", "skipped"), False, (), True),
        (("passed", "skipped"), True, (), False),
        (("passed", "failed"), False, (), False),
        (("passed", "errored"), False, (), False),
        (("passed",), False, ("expected failure 'x' is not a case",), False),
    ],
)
def test_a_report_is_ok_without_a_failure_an_error_a_required_skip_or_a_problem_with_the_list(
    statuses, required, problems, ok
):
    """ok: no failed or errored case, no skip of a required group's case, no problem with the expected-failures list."""
    report = runner.Report(
        implementation={},
        outcomes=tuple(runner.Outcome(id=f"c{i}", status=s, required=required) for i, s in enumerate(statuses)),
        list_problems=problems,
    )
    assert report.ok is ok
    assert report.required_skips == (1 if required and "skipped" in statuses else 0)


def test_a_failure_reads_with_its_steps_the_difference_and_its_reason():
    """describe: the status, id and description, each step before, the differing step, expected, got, the place; a reason second."""
    assert runner.describe(FAILED) == "\n".join(
        [
            "FAILED c-2: two steps",
            '  step 1: remember {"key": "k", "data": 1} at now=5',
            '  step 2: get {"key": "k"} at now=0  <- differs',
            "  expected: []",
            "  got:      0",
            "  first difference at $",
        ]
    )
    listed = runner.Outcome(
        id="c", status="failed", reason="listed as an expected failure, but it passed", step=1, op="x"
    )
    assert runner.describe(listed).splitlines()[:2] == [
        "FAILED c: ",
        "  listed as an expected failure, but it passed",
    ]


def test_an_error_reads_with_its_reason_and_what_was_expected_when_there_is_one():
    """describe without a step: the reason, then expected and got only when something was expected."""
    assert runner.describe(
        runner.Outcome(id="c", status="errored", description="d", reason="no answer within 1 s")
    ) == ("ERRORED c: d\n  no answer within 1 s")
    config = runner.Outcome(id="c", status="failed", reason="creating the memory", expected="E_RANGE", got="a memory")
    assert runner.describe(config) == (
        'FAILED c: \n  creating the memory\n  expected: "E_RANGE"\n  got:      "a memory"'
    )


def test_a_backend_gets_ten_seconds_a_case_and_its_handshake_thirty_or_a_cases_if_longer():
    """Subprocess: 10 s a case, 30 s for the handshake (which waits for the start too), never less than a case's."""
    plain = runner.Subprocess("backend --serve")
    assert (plain.command, plain.timeout, plain.handshake_timeout, plain.env) == (
        ["backend", "--serve"],
        10.0,
        30.0,
        None,
    )
    slow = runner.Subprocess(["backend"], timeout=45, env={"A": "1"})
    assert (slow.command, slow.timeout, slow.handshake_timeout, slow.env) == (["backend"], 45, 45, {"A": "1"})
    assert plain.process is None and plain.hello == {} and plain.lines.empty()
    with pytest.raises(runner.BackendError, match=r"^the backend is not running$"):
        plain.ask({"op": "start"})


def test_the_expected_failures_file_is_ids_with_comments_and_blank_lines(tmp_path: Path):
    """One id a line; "#" starts a comment; blank and comment-only lines are no ids."""
    listed = tmp_path / "expected.txt"
    listed.write_text("# why each fails\n\n  a-1  # rounding\nb-2\n   \n#c-3\n", encoding="utf-8")
    assert runner.read_expected_failures(listed) == ["a-1", "b-2"]


def test_cases_are_selected_by_only_globs_then_skip_globs():
    """select: every case without --only, those matching some --only glob with; then none matching a --skip glob."""
    cases = [{"id": i} for i in ("entries-1", "entries-2", "recall-1", "messages-1")]
    ids = lambda **kw: [c["id"] for c in runner.select(cases, **kw)]
    assert ids() == ["entries-1", "entries-2", "recall-1", "messages-1"]
    assert ids(only=["entries-*", "recall-?"]) == ["entries-1", "entries-2", "recall-1"]
    assert ids(skip=["*-2", "messages-*"]) == ["entries-1", "recall-1"]
    assert ids(only=["entries-*"], skip=["entries-1"]) == ["entries-2"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"id": "\xff"}', 'the answer is not UTF-8 (byte 8): b\'{"id": "\\xff"}\''),
        (b'{"x": NaN}', "the answer is not JSON (NaN is not JSON (section 4 writes it as $number)): b'{\"x\": NaN}'"),
        (b"[1]", "the answer is not a JSON object: b'[1]'"),
        (b"[" * 100_000, "the answer is nested too deep to read: b'" + "[" * 200 + "'"),
    ],
    ids=["not-utf8", "nan", "not-object", "too-deep"],
)
def test_an_answer_that_is_not_one_says_why_and_shows_its_start(raw, message):
    """parse_answer: each way a line is not an answer, said whole, with the line's first 200 bytes."""
    with pytest.raises(runner.BackendError) as error:
        runner.parse_answer(raw)
    assert str(error.value) == message


def _backend(tmp_path: Path, after_handshake: str, *, timeout: float = 5.0) -> runner.Subprocess:
    """A backend that shakes hands, then runs ``after_handshake`` (Python) when the first case line comes."""
    script = tmp_path / "backend.py"
    script.write_text(
        "import json, os, sys, time\n"
        "from sentinel_memory.conformance.backend import handshake\n"
        "sys.stdin.readline()\n"
        "print(json.dumps(handshake()), flush=True)\n"
        "sys.stdin.readline()\n" + after_handshake + "\n",
        encoding="utf-8",
    )
    return runner.Subprocess([sys.executable, str(script)], timeout=timeout)


def test_a_backend_that_exits_is_said_with_its_status_and_the_next_write_fails_by_name(tmp_path: Path):
    """ask: a backend whose output ends as it exits is 'exited (status N)'; a case written after that cannot be written."""
    process = _backend(tmp_path, "sys.exit(3)")
    process.start()
    with pytest.raises(runner.BackendError) as exited:
        process.ask({"id": "c-1"})
    assert str(exited.value) == "the backend exited (status 3)"
    with pytest.raises(runner.BackendError) as unwritten:
        process.ask({"id": "c-2"})
    assert str(unwritten.value) == "could not write to the backend: [Errno 32] Broken pipe"
    process.stop()


def test_a_backend_that_ends_its_output_but_lives_on_is_said_to_be_still_running(tmp_path: Path):
    """ask: output that ends while the process lives on is 'exited (status still running)' after the case's wait."""
    process = _backend(tmp_path, "os.close(1)\ntime.sleep(60)", timeout=1.0)
    process.start()
    living = process.process
    with pytest.raises(runner.BackendError) as ended:
        process.ask({"id": "c-1"})
    assert str(ended.value) == "the backend exited (status still running)"
    process.stop(kill=True)
    assert living is not None and living.returncode == -9


def test_stop_lets_a_backend_end_on_its_own_and_a_restart_kills_the_old_one(tmp_path: Path):
    """stop: input closed, the backend exits by itself (status 0); start on a running backend kills it first."""
    process = _backend(tmp_path, "sys.stdin.read()")
    process.start()
    first = process.process
    process.stop()
    assert first is not None and first.returncode == 0 and process.process is None
    process.start()
    second = process.process
    process.start()  # a restart: the old process is killed at once, not waited for
    assert second is not None and second.returncode == -9
    process.stop()
    process.stop()  # the step after: stopping a stopped backend does nothing


def _case(*expects: object, config: dict[str, object] | None = None, **extra: object) -> dict[str, object]:
    """A case of ``get`` steps (the required entries group) expecting ``expects``, or an error with ``error=``."""
    steps = [{"op": "get", "args": {"key": "k"}, "now": 0, "expect": expect} for expect in expects]
    return {"id": "c", "config": config or {}, "steps": steps, **extra}


def test_judge_compares_numbers_exactly_by_default():
    """judge: without a tolerance, 1.5 and a number a relative 1e-9 from it differ."""
    outcome = runner.judge(_case({"ok": 1.5}), {"id": "c", "results": [{"ok": 1.5 * (1 + 1e-9)}]})
    assert (outcome.status, outcome.where) == ("failed", "$.ok")
    assert runner.judge(_case({"ok": 1.5}), {"id": "c", "results": [{"ok": 1.5}]}, 0.0).status == "passed"


@pytest.mark.parametrize("description", [None, "what it pins"])
def test_every_verdict_carries_the_cases_description_or_none(description):
    """judge: each outcome has the case's description, "" when the case has none (left out of the JSON)."""
    extra = {} if description is None else {"description": description}
    answers = [
        {"id": "c", "results": [{"ok": 1}]},
        {"id": "c", "results": [{"ok": 2}]},
        {"id": "other", "results": [{"ok": 1}]},
        {"id": "c", "error": "E_UNSUPPORTED"},
    ]
    for answer in answers:
        outcome = runner.judge(_case({"ok": 1}, **extra), answer)
        assert outcome.description == (description or "")
        assert ("description" in outcome.to_json()) is (description is not None)


@pytest.mark.parametrize(
    ("case", "answer", "status", "reason"),
    [
        (_case({"ok": 1}), {"id": "other", "results": [{"ok": 1}]}, "errored", "answered id 'other'"),
        (_case({"ok": 1}), {"results": [{"ok": 1}]}, "errored", "answered id None"),
        (
            _case({"ok": 1}),
            {"id": "c", "error": "E_UNSUPPORTED"},
            "skipped",
            "the backend does not support this config",
        ),
        (_case(error="E_RANGE"), {"id": "c", "error": "E_RANGE", "results": []}, "failed", "creating the memory"),
        (_case(error="E_RANGE"), {"id": "c", "results": []}, "failed", "creating the memory"),
        (_case({"ok": 1}), {"id": "c", "error": "E_TYPE"}, "failed", "creating the memory"),
        (
            _case({"ok": 1}, {"ok": 2}),
            {"id": "c", "results": [{"ok": 1}]},
            "errored",
            "expected 2 results, got [{'ok': 1}]",
        ),
        (_case({"ok": 1}), {"id": "c", "results": "x" * 300}, "errored", "expected 1 results, got '" + "x" * 199),
        (
            _case({"ok": 1}, {"ok": 2}),
            {"id": "c", "results": [{"ok": 1}, {"error": "E_UNSUPPORTED"}]},
            "skipped",
            "step 2 (get) is not supported",
        ),
    ],
    ids=[
        "another-id",
        "no-id",
        "config-declined",
        "error-and-results",
        "results-for-an-error",
        "error-for-a-memory",
        "too-few-results",
        "results-not-a-list",
        "step-declined",
    ],
)
def test_each_verdict_says_why(case, answer, status, reason):
    """judge: each way an answer is not the case's, its status and reason whole; an error answer that also has results is no pass."""
    outcome = runner.judge(case, answer)
    assert (outcome.status, outcome.reason) == (status, reason)
    if status == "skipped":
        assert outcome.required  # a get is the required entries group's: declining it fails the run
    if reason == "creating the memory":
        assert (outcome.expected, outcome.got) == (
            case.get("error"),
            answer.get("error", "a memory"),
        )


def test_a_declined_case_of_an_optional_group_is_a_skip_that_fails_nothing():
    """judge: E_UNSUPPORTED for a case that needs an optional group (persistence, for autosave) is a skip not marked required."""
    outcome = runner.judge(_case({"ok": 1}, config={"autosave": True}), {"id": "c", "error": "E_UNSUPPORTED"})
    assert (outcome.status, outcome.required) == ("skipped", False)
    report = runner.Report(implementation={}, outcomes=(outcome,))
    assert report.ok and report.required_skips == 0


def test_a_failure_names_its_step_its_op_args_and_now_and_the_steps_before_as_sent():
    """judge: the failing step's number, op, args ({} when it has none), now (None when none), and each step before as sent (op, args, now, memory)."""
    steps = [
        {"op": "remember", "args": {"key": "k", "data": 1}, "now": 5, "memory": "a", "expect": {"ok": None}},
        {"op": "stats", "memory": "b", "expect": {"ok": 1}, "note": "not sent"},
        {"op": "clear", "expect": {"ok": None}},
    ]
    case = {"id": "c", "config": {}, "steps": steps}
    outcome = runner.judge(case, {"id": "c", "results": [{"ok": None}, {"ok": 1}, {"ok": 0}]})
    assert (outcome.status, outcome.step, outcome.op, outcome.args, outcome.now) == ("failed", 3, "clear", {}, None)
    assert (outcome.expected, outcome.got, outcome.where) == ({"ok": None}, {"ok": 0}, "$.ok")
    assert outcome.before == (
        {"op": "remember", "args": {"key": "k", "data": 1}, "now": 5, "memory": "a"},
        {"op": "stats", "memory": "b"},
    )


class _Scripted:
    """An in-process backend: a handshake, then each case's answer from ``answer(request)`` (which may raise)."""

    def __init__(self, answer: Any, hello: dict[str, Any] | None = None) -> None:
        self.answer = answer
        self.hello = hello if hello is not None else {**backend.handshake(), "groups": list(REQUIRED_GROUPS)}
        self.starts = self.stops = 0

    def start(self) -> dict[str, Any]:
        self.starts += 1
        return self.hello

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.answer(request)

    def stop(self, *, kill: bool = False) -> None:
        self.stops += 1


def _cases(n: int) -> list[dict[str, Any]]:
    return [{**_case({"ok": None}), "id": f"c-{i}"} for i in range(n)]


def _passing(request: dict[str, Any]) -> dict[str, Any]:
    return {"id": request["id"], "results": [{"ok": None}]}


@pytest.mark.parametrize(
    ("hello", "said"),
    [
        (
            {"protocol": PROTOCOL - 1, "groups": list(REQUIRED_GROUPS)},
            f"the backend does not speak protocol {PROTOCOL} with the required groups (missing []): "
            f"{{'protocol': {PROTOCOL - 1}, 'groups': {list(REQUIRED_GROUPS)!r}}}",
        ),
        (
            {"protocol": PROTOCOL, "groups": [g for g in REQUIRED_GROUPS if g != "text"]},
            f"the backend does not speak protocol {PROTOCOL} with the required groups (missing ['text']): "
            f"{{'protocol': {PROTOCOL}, 'groups': {[g for g in REQUIRED_GROUPS if g != 'text']!r}}}",
        ),
    ],
    ids=["old-protocol", "a-required-group-missing"],
)
def test_a_handshake_of_another_protocol_or_without_a_required_group_ends_the_run_saying_which(hello, said):
    """run: a backend of another protocol, or lacking a required group, is stopped and the run refused, naming what is missing."""
    scripted = _Scripted(_passing, hello)
    with pytest.raises(runner.BackendError) as refused:
        runner.run(scripted, _cases(1))
    assert str(refused.value) == said and scripted.stops == 1


def test_five_cases_in_a_row_without_an_answer_in_time_end_the_run_by_default():
    """run: by default the fifth timeout in a row stops the run; the cases left are errored, not run; each timeout restarts the backend."""

    def hangs(request: dict[str, Any]) -> dict[str, Any]:
        raise runner.BackendError("no answer within 1 s")

    scripted = _Scripted(hangs)
    report = runner.run(scripted, _cases(7))
    assert [o.reason for o in report.outcomes] == ["no answer within 1 s"] * 5 + [
        "not run: 5 cases in a row got no answer in time"
    ] * 2
    assert {o.status for o in report.outcomes} == {"errored"} and scripted.starts == 5


def test_the_runs_deadline_leaves_the_cases_after_it_not_run():
    """run: once the deadline has passed, each case left is errored as not run, and the backend is asked nothing more."""
    asked: list[str] = []

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request["id"])
        time.sleep(0.05)
        return _passing(request)

    report = runner.run(_Scripted(slow), _cases(3), deadline=0.01)
    assert [(o.status, o.reason) for o in report.outcomes] == [
        ("passed", ""),
        ("errored", "not run: the run's deadline of 0.01 s passed"),
        ("errored", "not run: the run's deadline of 0.01 s passed"),
    ]
    assert asked == ["c-0"]


def test_cases_not_run_skipped_for_a_group_or_errored_keep_their_description_and_say_why():
    """run: a case of a group the backend lacks is skipped naming the groups; an errored one, and one past the deadline, keep the description."""

    def fails(request: dict[str, Any]) -> dict[str, Any]:
        raise runner.BackendError("the backend exited (status 1)")

    stored = {**_case({"ok": None}, config={"autosave": True, "shared": True}), "id": "s", "description": "shared"}
    plain = {**_case({"ok": None}), "id": "p", "description": "plain"}
    report = runner.run(_Scripted(fails), [stored, plain])
    assert [(o.id, o.status, o.description, o.reason) for o in report.outcomes] == [
        ("s", "skipped", "shared", "needs persistence, sessions"),
        ("p", "errored", "plain", "the backend exited (status 1)"),
    ]
    late = runner.run(_Scripted(_passing), [plain, {**plain, "id": "q"}], deadline=-1)
    assert [(o.id, o.status, o.description) for o in late.outcomes] == [
        ("p", "errored", "plain"),
        ("q", "errored", "plain"),
    ]
    # Without a description, each of these outcomes has none.
    bare = [{k: v for k, v in case.items() if k != "description"} for case in (stored, plain)]
    assert [o.description for o in runner.run(_Scripted(fails), bare).outcomes] == ["", ""]
    assert [o.description for o in runner.run(_Scripted(_passing), bare[1:], deadline=-1).outcomes] == [""]


def test_a_listed_case_that_passes_fails_saying_so_and_a_listed_failure_is_expected():
    """run: a case on the expected-failures list that passes fails the run, saying why; one that fails is an expected failure."""

    def half(request: dict[str, Any]) -> dict[str, Any]:
        return {"id": request["id"], "results": [{"ok": None if request["id"] == "c-0" else 1}]}

    report = runner.run(_Scripted(half), _cases(2), expected_failures=["c-0", "c-1"])
    assert [(o.status, o.reason) for o in report.outcomes] == [
        ("failed", "listed as an expected failure, but it passed"),
        ("expected failure", ""),
    ]


def test_a_report_names_the_implementation_the_handshake_gave_or_none():
    """run: the report's implementation is the handshake's, {} when it gave none."""
    hello = {"protocol": PROTOCOL, "groups": list(REQUIRED_GROUPS)}
    assert runner.run(_Scripted(_passing, hello), _cases(1)).implementation == {}
    named = {**hello, "implementation": {"name": "port", "language": "js"}}
    assert runner.run(_Scripted(_passing, named), _cases(1)).implementation == {"name": "port", "language": "js"}


def test_a_failure_reads_its_earlier_steps_without_args_or_now_as_empty_and_null():
    """describe: a step before the failing one with no args shows {}, with no now null; the reason comes second."""
    outcome = attrs.evolve(
        FAILED, id="c", description="", reason="r", args={}, now=None, expected=1, got=2, before=({"op": "stats"},)
    )
    assert runner.describe(outcome).splitlines() == [
        "FAILED c: ",
        "  r",
        "  step 1: stats {} at now=null",
        "  step 2: get {} at now=null  <- differs",
        "  expected: 1",
        "  got:      2",
        "  first difference at $",
    ]


def test_a_backend_runs_in_this_environment_with_pythons_output_unbuffered(monkeypatch):
    """default_env: this process's environment, with PYTHONUNBUFFERED=1 so a Python backend answers at once."""
    monkeypatch.setenv("SENTINEL_RUNNER_PROBE", "x")
    monkeypatch.setenv("PYTHONUNBUFFERED", "")  # set here or not, the backend's is "1"
    env = runner.default_env()
    assert env["PYTHONUNBUFFERED"] == "1" and env["SENTINEL_RUNNER_PROBE"] == "x"


def test_a_failing_steps_args_and_now_are_the_steps_own():
    """judge: the failing step's args and now are reported as the case gave them."""
    steps = [{"op": "get", "args": {"key": "k", "default": 3}, "now": 7, "expect": {"ok": 3}}]
    outcome = runner.judge({"id": "c", "config": {}, "steps": steps}, {"id": "c", "results": [{"ok": 4}]})
    assert (outcome.args, outcome.now) == ({"key": "k", "default": 3}, 7)


def test_a_report_made_with_outcomes_alone_has_no_problems_and_no_tolerance():
    """Report: without a list's problems or a tolerance, its JSON says [] and 0.0, and it is ok when every case passed."""
    report = runner.Report(implementation={}, outcomes=(runner.Outcome(id="c", status="passed"),))
    assert report.ok and report.to_json()["expected_failure_problems"] == [] and report.to_json()["tolerance"] == 0.0


def test_a_backend_that_never_shakes_hands_is_killed_at_once_not_waited_for(tmp_path: Path):
    """start: when the handshake does not come in time, the backend is killed then, not given seconds more to end."""
    script = tmp_path / "silent.py"
    script.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    process = runner.Subprocess([sys.executable, str(script)], timeout=1, handshake_timeout=1)
    started = time.monotonic()
    with pytest.raises(runner.BackendError, match=r"^no answer within 1 s$"):
        process.start()
    assert time.monotonic() - started < 2.5  # a stop that waited would take the handshake's 1 s and 2 s more


def test_a_run_ends_though_a_backends_child_keeps_its_output_open(tmp_path: Path):
    """The reader of a backend's output never keeps the runner's process from ending (a daemon thread)."""
    script = tmp_path / "backend.py"
    script.write_text(
        "import json, subprocess, sys\n"
        "from sentinel_memory.conformance.backend import handshake\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(20)'])  # inherits stdout\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    print(json.dumps(handshake() if request.get('op') == 'start' else {'id': request['id'], 'results': [{'ok': None}]}), flush=True)\n",
        encoding="utf-8",
    )
    code = (
        "import sys; from sentinel_memory.conformance import runner\n"
        f"case = {{'id': 'c', 'config': {{}}, 'steps': [{{'op': 'get', 'args': {{'key': 'k'}}, 'now': 0, 'expect': {{'ok': None}}}}]}}\n"
        f"report = runner.run(runner.Subprocess([sys.executable, {str(script)!r}]), [case])\n"
        "print(report.summary())\n"
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "1 passed, 0 failed, 0 skipped, 0 errored"
    assert time.monotonic() - started < 15  # the child sleeps 20 s with the backend's output open
