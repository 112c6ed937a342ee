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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from . import PROTOCOL, REQUIRED_GROUPS, wire
from .compare import first_difference
from .vectors import Vector, answer_of, compact, request_of

__all__ = ["BackendError", "Outcome", "Report", "Subprocess", "read_expected_failures", "run"]

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

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in attrs.asdict(self).items() if value is not None and value != ""}


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
        return not self.list_problems and not any(o.status in ("failed", "errored") for o in self.outcomes)

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
        self, command: str | Sequence[str], *, timeout: float = 10.0, env: dict[str, str] | None = None
    ) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        self.timeout = timeout
        self.env = env
        self.process: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.hello: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        """Start the backend and shake hands; returns its handshake answer."""
        self.stop(kill=True)
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            bufsize=1,
            env=self.env,
        )
        self.lines = queue.Queue()
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines), daemon=True).start()
        self.hello = self.ask({"op": "start", "protocol": PROTOCOL})
        return self.hello

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one line, read one answer line; BackendError when none comes in time or it is not a JSON object."""
        if self.process is None or self.process.stdin is None:
            raise BackendError("the backend is not running")
        try:
            self.process.stdin.write(json.dumps(request, ensure_ascii=True, allow_nan=False) + "\n")
            self.process.stdin.flush()
        except OSError as error:
            raise BackendError(f"could not write to the backend: {error}") from None
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            raise BackendError(f"no answer within {self.timeout:g} s") from None
        if line is None:
            raise BackendError(f"the backend exited (status {self.process.wait()})")
        try:
            answer = json.loads(line)
        except ValueError:
            raise BackendError(f"the answer is not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise BackendError(f"the answer is not a JSON object: {line[:200]!r}")
        return answer

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


def _pump(stream: TextIO, lines: queue.Queue[str | None]) -> None:
    try:
        for line in stream:
            if line.strip():
                lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


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
    """Compare one answer with what the case expects."""
    expected = answer_of(case)
    base = {"id": case["id"], "description": case.get("description", "")}
    if answer.get("id") != case["id"]:
        return Outcome(status="errored", reason=f"answered id {answer.get('id')!r}", **base)
    if "error" in expected or "error" in answer:
        if answer.get("error") == "E_UNSUPPORTED":
            return Outcome(status="skipped", reason="the backend does not support this config", **base)
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
    for number, (step, got) in enumerate(zip(steps, results, strict=True), start=1):
        if isinstance(got, dict) and got.get("error") == "E_UNSUPPORTED":
            return Outcome(status="skipped", reason=f"step {number} ({step['op']}) is not supported", **base)
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
) -> Report:
    """Run ``cases`` through ``backend`` and return the report; ``on_outcome`` sees each outcome as it comes."""
    hello = backend.start()
    groups = set(hello.get("groups", []))
    missing = [group for group in REQUIRED_GROUPS if group not in groups]
    if hello.get("protocol") != PROTOCOL or missing:
        backend.stop()
        raise BackendError(
            f"the backend does not speak protocol {PROTOCOL} with the required groups (missing {missing}): {hello}"
        )
    listed = set(expected_failures)
    known = {case["id"] for case in cases}
    outcomes = []
    try:
        for case in cases:
            lacking = sorted(wire.case_groups(case) - groups)
            if lacking:
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
                if outcome.status == "errored":
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
    lines = [
        head,
        f"  step {outcome.step}: {outcome.op} {_show(outcome.args)} at now={_show(outcome.now)}",
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
