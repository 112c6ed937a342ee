"""Driving a backend through the vectors, as toml-test and Bowtie drive theirs.

The runner starts the backend command, sends the handshake, then one case per
line, and waits for one answer line per case. Each case ends in one of five
ways:

* **passed**: every step's result equals the expectation (``.compare``);
* **failed**: a step differs; the report names the case, the step, the op
  and its args, what was expected and what came back;
* **skipped**: the case needs an optional group the backend does not offer,
  or the backend answered ``E_UNSUPPORTED``. A skip is never a pass;
* **errored**: the backend crashed, took longer than the per-case timeout,
  or wrote something that is not an answer. The runner restarts it and goes on;
* **expected failure**: the case failed and is listed in the expected
  failures file. A listed case that passes, or a listed id that no vector
  has, fails the run, so the list can only shrink honestly (as rust-url's
  ``expected_failures.txt`` and toml-test's skip lists work).
"""

from __future__ import annotations

import fnmatch
import json
import os
import queue
import shlex
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from . import PROTOCOL, REQUIRED_GROUPS, wire
from .compare import first_difference
from .vectors import Vector, answer_of, compact, request_of

__all__ = ["BackendError", "Outcome", "Report", "Subprocess", "parse_answer", "read_expected_failures", "run"]

STATUSES = ("passed", "failed", "skipped", "errored", "expected failure")


class BackendError(Exception):
    """The backend did not give an answer: it crashed, hung, or wrote something that is not one."""


@attrs.frozen
class Outcome:
    """How one case ended, and enough to show why."""

    id: str
    status: str
    description: str = ""
    reason: str = ""
    step: int | None = None
    op: str | None = None
    args: Any = None
    now: Any = None
    expected: Any = None
    got: Any = None
    where: str | None = None
    #: A skip of a case that needs only required groups: the backend said it cannot do what it must.
    required: bool = False
    #: The steps before the failing one, as sent: what led up to the difference.
    before: tuple[Any, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            key: value
            for key, value in attrs.asdict(self).items()
            if value is not None and value != "" and value != () and value is not False
        }


@attrs.frozen
class Report:
    """Every outcome, and the problems with the expected-failures list."""

    implementation: dict[str, Any]
    outcomes: tuple[Outcome, ...]
    list_problems: tuple[str, ...] = ()
    tolerance: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def ok(self) -> bool:
        """No failure, no error, no problem with the list, and no case of a required group skipped."""
        bad = any(o.status in ("failed", "errored") or (o.status == "skipped" and o.required) for o in self.outcomes)
        return not self.list_problems and not bad

    @property
    def required_skips(self) -> int:
        """How many cases of the required groups the backend declined (E_UNSUPPORTED): each fails the run."""
        return sum(1 for outcome in self.outcomes if outcome.status == "skipped" and outcome.required)

    def summary(self) -> str:
        """``N passed, N failed, N skipped, N errored``."""
        return ", ".join(f"{self.count(status)} {status}" for status in ("passed", "failed", "skipped", "errored"))

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": PROTOCOL,
            "implementation": self.implementation,
            "tolerance": self.tolerance,
            "summary": {status: self.count(status) for status in STATUSES},
            "expected_failure_problems": list(self.list_problems),
            "cases": [outcome.to_json() for outcome in self.outcomes],
        }


class Subprocess:
    """A backend command, restarted whenever it stops answering."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 10.0,
        env: dict[str, str] | None = None,
        handshake_timeout: float = 30.0,
    ) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        self.timeout = timeout
        #: A handshake waits for the process to start as well, so it gets longer than a case.
        self.handshake_timeout = max(timeout, handshake_timeout)
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        # Answer lines as bytes: the runner decodes each itself, so a byte that is not UTF-8 is one bad
        # answer (errored), not the end of the reader thread while the backend lives on.
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.hello: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        """Start the backend and shake hands; returns its handshake answer."""
        self.stop(kill=True)
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        self.lines = queue.Queue()
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True).start()
        try:
            self.hello = self.ask({"op": "start", "protocol": PROTOCOL}, timeout=self.handshake_timeout)
        except BackendError:
            self.stop(kill=True)  # a backend that does not shake hands is not left running
            raise
        return self.hello

    def ask(self, request: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Send one line, read one answer line; BackendError when none comes in time or it is not a JSON object."""
        wait = self.timeout if timeout is None else timeout
        if self.process is None or self.process.stdin is None:
            raise BackendError("the backend is not running")
        try:
            self.process.stdin.write(json.dumps(request, ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            raise BackendError(f"could not write to the backend: {error}") from None
        try:
            raw = self.lines.get(timeout=wait)
        except queue.Empty:
            raise BackendError(f"no answer within {wait:g} s") from None
        if raw is None:
            try:
                status: object = self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:  # its output ended, but it lives on
                status = "still running"
            raise BackendError(f"the backend exited (status {status})")
        return parse_answer(raw)

    def stop(self, *, kill: bool = False) -> None:
        """End the backend: close its input and give it a moment to exit, or kill it at once."""
        if self.process is None:
            return
        process, self.process = self.process, None
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        # Its output is left to the reader thread, which sees the end when the process is gone.
        if not kill:
            try:
                process.wait(timeout=2)
                return
            except subprocess.TimeoutExpired:
                pass
        process.kill()
        process.wait()


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    try:
        for line in stream:
            if line.strip():
                lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (section 4 writes it as $number)")


def parse_answer(raw: bytes) -> dict[str, Any]:
    """One answer line as the object it must be, else ``BackendError`` saying why (PROTOCOL.md sections 1, 4).

    Strict: UTF-8, JSON without the bare tokens ``NaN`` and ``Infinity``
    (section 4 writes them as ``$number``), an object. Integer literals of
    any length are read in time below quadratic.
    """
    shown = raw[:200]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BackendError(f"the answer is not UTF-8 (byte {error.start}): {shown!r}") from None
    try:
        answer = json.loads(line, parse_constant=_not_json, parse_int=wire.integer_of)
    except RecursionError:
        raise BackendError(f"the answer is nested too deep to read: {shown!r}") from None
    except ValueError as error:
        raise BackendError(f"the answer is not JSON ({error}): {shown!r}") from None
    if not isinstance(answer, dict):
        raise BackendError(f"the answer is not a JSON object: {shown!r}")
    return answer


def read_expected_failures(path: Path) -> list[str]:
    """Case ids, one per line; ``#`` starts a comment (the reason, which the file should give)."""
    ids = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            ids.append(text)
    return ids


def select(cases: Iterable[Vector], only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Vector]:
    """The cases whose id matches some ``only`` glob (all when none) and no ``skip`` glob."""
    return [
        case
        for case in cases
        if (not only or any(fnmatch.fnmatchcase(case["id"], glob) for glob in only))
        and not any(fnmatch.fnmatchcase(case["id"], glob) for glob in skip)
    ]


def judge(case: Vector, answer: dict[str, Any], tolerance: float = 0.0) -> Outcome:
    """Compare one answer with what the case expects.

    A case the backend declines (``E_UNSUPPORTED``) is skipped; when it needs
    only required groups, the skip is marked ``required`` and fails the run.
    Where the vector itself expects ``E_UNSUPPORTED`` (a name no backend
    has), that answer is compared like any other.
    """
    expected = answer_of(case)
    base: dict[str, Any] = {"id": case["id"], "description": case.get("description", "")}
    required = not (wire.case_groups(case) - set(REQUIRED_GROUPS))
    if answer.get("id") != case["id"]:
        return Outcome(status="errored", reason=f"answered id {answer.get('id')!r}", **base)
    if "error" in expected or "error" in answer:
        if answer.get("error") == "E_UNSUPPORTED" and expected.get("error") != "E_UNSUPPORTED":
            return Outcome(
                status="skipped", reason="the backend does not support this config", required=required, **base
            )
        if "error" in expected and answer.get("error") == expected["error"] and "results" not in answer:
            return Outcome(status="passed", **base)
        return Outcome(
            status="failed",
            reason="creating the memory",
            expected=expected.get("error"),
            got=answer.get("error", "a memory"),
            **base,
        )
    results = answer.get("results")
    steps = case.get("steps", [])
    if not isinstance(results, list) or len(results) != len(steps):
        return Outcome(status="errored", reason=f"expected {len(steps)} results, got {results!r:.200}", **base)
    unsupported = {"error": "E_UNSUPPORTED"}
    for number, (step, got, want) in enumerate(zip(steps, results, expected["results"], strict=True), start=1):
        # Declining what the vector expects to be declined (an unknown name, section 5) is the answer, not a skip.
        if isinstance(got, dict) and got.get("error") == "E_UNSUPPORTED" and want != unsupported:
            return Outcome(
                status="skipped", reason=f"step {number} ({step['op']}) is not supported", required=required, **base
            )
    for number, (step, want, got) in enumerate(zip(steps, expected["results"], results, strict=True), start=1):
        where = first_difference(want, got, tolerance)
        if where is not None:
            return Outcome(
                status="failed",
                step=number,
                op=step["op"],
                args=step.get("args", {}),
                now=step.get("now"),
                expected=want,
                got=got,
                where=where,
                before=tuple({k: s[k] for k in ("op", "args", "now", "memory") if k in s} for s in steps[: number - 1]),
                **base,
            )
    return Outcome(status="passed", **base)


def run(
    backend: Subprocess,
    cases: Sequence[Vector],
    *,
    expected_failures: Sequence[str] = (),
    tolerance: float = 0.0,
    on_outcome: Any = None,
    known_ids: Iterable[str] | None = None,
    deadline: float | None = None,
    max_timeouts: int = 5,
) -> Report:
    """Run ``cases`` through ``backend`` and return the report; ``on_outcome`` sees each outcome as it comes.

    ``known_ids`` are every case id there is (default: those of ``cases``),
    so that a listed expected failure left out by a selection is not called
    unknown. The run ends early, with the cases not run counted as errored,
    once ``deadline`` seconds have passed or ``max_timeouts`` cases in a row
    got no answer in time: a backend that hangs does not hold the run for
    hours.
    """
    hello = backend.start()
    groups = set(hello.get("groups", []))
    missing = [group for group in REQUIRED_GROUPS if group not in groups]
    if hello.get("protocol") != PROTOCOL or missing:
        backend.stop()
        raise BackendError(
            f"the backend does not speak protocol {PROTOCOL} with the required groups (missing {missing}): {hello}"
        )
    listed = set(expected_failures)
    known = set(known_ids) if known_ids is not None else {case["id"] for case in cases}
    outcomes = []
    started, timeouts, stopped = time.monotonic(), 0, ""
    try:
        for case in cases:
            lacking = sorted(wire.case_groups(case) - groups)
            if deadline is not None and time.monotonic() - started > deadline and not stopped:
                stopped = f"not run: the run's deadline of {deadline:g} s passed"
            if stopped:
                outcome = Outcome(
                    id=case["id"], status="errored", description=case.get("description", ""), reason=stopped
                )
            elif lacking:
                outcome = Outcome(
                    id=case["id"],
                    status="skipped",
                    description=case.get("description", ""),
                    reason=f"needs {', '.join(lacking)}",
                )
            else:
                try:
                    outcome = judge(case, backend.ask(request_of(case)), tolerance)
                except BackendError as error:
                    outcome = Outcome(
                        id=case["id"], status="errored", description=case.get("description", ""), reason=str(error)
                    )
                timeouts = timeouts + 1 if outcome.reason.startswith("no answer within") else 0
                if timeouts >= max_timeouts:
                    stopped = f"not run: {timeouts} cases in a row got no answer in time"
                elif outcome.status == "errored":
                    backend.start()  # a fresh process: the old one may be stuck or out of step
            if case["id"] in listed:
                if outcome.status == "failed":
                    outcome = attrs.evolve(outcome, status="expected failure")
                elif outcome.status == "passed":
                    outcome = attrs.evolve(
                        outcome, status="failed", reason="listed as an expected failure, but it passed"
                    )
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    finally:
        backend.stop()
    problems = tuple(f"expected failure {name!r} is not a case" for name in sorted(listed - known))
    return Report(
        implementation=hello.get("implementation", {}),
        outcomes=tuple(outcomes),
        list_problems=problems,
        tolerance=tolerance,
    )


def describe(outcome: Outcome) -> str:
    """A failure or error as a person reads it."""
    head = f"{outcome.status.upper()} {outcome.id}: {outcome.description}"
    if outcome.step is None:
        return f"{head}\n  {outcome.reason}" + (
            f"\n  expected: {_show(outcome.expected)}\n  got:      {_show(outcome.got)}"
            if outcome.expected is not None
            else ""
        )
    lines = [head]
    for number, step in enumerate(outcome.before, start=1):
        lines.append(f"  step {number}: {step['op']} {_show(step.get('args', {}))} at now={_show(step.get('now'))}")
    lines += [
        f"  step {outcome.step}: {outcome.op} {_show(outcome.args)} at now={_show(outcome.now)}  <- differs",
        f"  expected: {_show(outcome.expected)}",
        f"  got:      {_show(outcome.got)}",
        f"  first difference at {outcome.where}",
    ]
    if outcome.reason:
        lines.insert(1, f"  {outcome.reason}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    return compact(value)


def default_env() -> dict[str, str]:
    """The environment a backend runs in: this one, with Python's output unbuffered."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
