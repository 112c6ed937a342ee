"""The differential machine: this library and a protocol backend, driven side by side with the same random steps.

The fixed vectors check what someone thought to write down; this machine
checks what nobody did. Every rule appends one protocol step (with its own
``now``) to a case; the step runs on this library in-process
(:class:`sentinel_memory.conformance.backend.Session`) and the whole case so
far is sent to the backend, a subprocess speaking the protocol. Any
difference fails with the case written as a vector, expectations from this
library, ready to paste into ``spec/vectors`` once hypothesis has shrunk it.

The backend is ``SENTINEL_MEMORY_BACKEND`` (a command line) when set, so a
port gets random testing too; by default it is this library's own ``serve``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from sentinel_memory.conformance import backend as reference
from sentinel_memory.conformance.compare import first_difference
from sentinel_memory.conformance.runner import Subprocess, default_env, run
from sentinel_memory.conformance.vectors import compact

SERVE = [sys.executable, "-m", "sentinel_memory.conformance", "serve"]
KEYS = ["user:name", "order:42", "chat:1", "chat:2", "note"]
WORDS = ["name", "order", "refund", "chat", "milk", "prague", "jakub", "?"]
MINUTE = 60_000
T0 = 1_700_000_000_000


def backend_command() -> list[str]:
    """The backend under test: ``SENTINEL_MEMORY_BACKEND`` or this library's ``serve``."""
    configured = os.environ.get("SENTINEL_MEMORY_BACKEND")
    return shlex.split(configured) if configured else SERVE


texts = st.lists(st.sampled_from(WORDS + ["😀", "kůň", "日本"]), min_size=1, max_size=4).map(" ".join)
data = st.one_of(
    texts,
    st.integers(-5, 5),
    st.floats(-2, 2, allow_nan=False),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["b", "a", "é"]), st.integers(0, 2), max_size=2),
)
importances = st.one_of(st.none(), st.sampled_from([0, 0.1, 0.5, 0.9, 1, 1.5, -1, "0.5"]), st.floats(0, 1))
ttls = st.one_of(st.none(), st.sampled_from([1, MINUTE, 15 * MINUTE, 0, -5]))
# Minutes to let pass before a step: often none (ties), often exactly a ttl (expiry edges).
waits = st.sampled_from([0, 0, 0, 1, 14, 15, 60, 24 * 60])
queries = st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join))


class Differential(RuleBasedStateMachine):
    """One case, growing a step at a time, on both sides."""

    command: ClassVar[list[str]] = SERVE
    process: ClassVar[Subprocess | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.config = {"limit": 4}
        self.steps: list[dict] = []
        self.now = T0
        session = reference.start(self.config)
        assert not isinstance(session, str)
        self.session = session
        if type(self).process is None:
            type(self).process = Subprocess(self.command, timeout=10, env=default_env())
            type(self).process.start()

    def send(self, op: str, wait: int = 0, **args: object) -> None:
        self.now += wait * MINUTE
        step = {"op": op, "args": args, "now": self.now}
        self.steps.append({**step, "expect": reference.answer_step(self.session, step)})

    def teardown(self) -> None:
        """Send the whole case to the backend once and compare every step's result."""
        if not self.steps:
            return
        self.send("stats")
        case = {
            "id": "differential",
            "config": self.config,
            "steps": [{k: s[k] for k in ("op", "args", "now")} for s in self.steps],
        }
        assert self.process is not None
        answer = self.process.ask(case)
        results = answer.get("results")
        assert isinstance(results, list) and len(results) == len(self.steps), f"not an answer: {compact(answer)}"
        for number, (step, got) in enumerate(zip(self.steps, results, strict=True), start=1):
            where = first_difference(step["expect"], got)
            if where is not None:
                raise AssertionError(
                    f"step {number} ({step['op']}) differs at {where}\n  expected: {compact(step['expect'])}\n"
                    f"  got:      {compact(got)}\nas a vector:\n{self.as_vector()}"
                )

    def as_vector(self) -> str:
        case = {
            "id": "machine-NAME",
            "description": "WHAT IT PINS",
            "rules": ["RULE-ID"],
            "config": self.config,
            "steps": self.steps,
        }
        return json.dumps(case, ensure_ascii=False)

    @rule(key=st.sampled_from(KEYS), value=data, importance=importances, ttl=ttls, wait=waits)
    def remember(self, key: str, value: object, importance: object, ttl: object, wait: int) -> None:
        args = {"key": key, "data": value}
        if importance is not None:
            args["importance"] = importance
        if ttl is not None:
            args["ttl"] = ttl
        self.send("remember", wait, **args)

    @rule(key=st.sampled_from(KEYS), op=st.sampled_from(["get", "has", "forget"]), wait=waits)
    def by_key(self, key: str, op: str, wait: int) -> None:
        self.send(op, wait, key=key)

    @rule(op=st.sampled_from(["size", "stats", "compact", "evictions", "get_recent"]), wait=waits)
    def read(self, op: str, wait: int) -> None:
        self.send(op, wait)

    @rule(query=queries.filter(lambda q: q is not None), limit=st.sampled_from([None, 0, 2, 10]), wait=waits)
    def recall(self, query: str, limit: int | None, wait: int) -> None:
        self.send("recall", wait, query=query, **({} if limit is None else {"limit": limit}))

    @rule(
        budget=st.sampled_from([0, 4, 10, 25, 60]),
        query=queries,
        wait=waits,
        tokenizer=st.sampled_from(
            [None, "estimate", "utf16_units", "utf8_bytes", "distinct_words", "merging", "merging_whole"]
        ),
        separator=st.sampled_from([None, " | "]),
        must_keep=st.sampled_from([None, None, 0.5, 0.9]),
    )
    def context(
        self,
        budget: int,
        query: str | None,
        tokenizer: str | None,
        separator: str | None,
        wait: int,
        must_keep: float | None,
    ) -> None:
        args: dict[str, object] = {"token_budget": budget}
        for name, value in (
            ("query", query),
            ("tokenizer", tokenizer),
            ("separator", separator),
            ("must_keep", must_keep),
        ):
            if value is not None:
                args[name] = value
        self.send("get_context", wait, **args)

    @rule()
    def save_and_load(self) -> None:
        self.send("save")
        self.send("load")


@pytest.fixture(scope="module")
def machine():
    """The machine class bound to the configured backend, its subprocess stopped at the end."""
    Differential.command = backend_command()
    yield Differential
    if Differential.process is not None:
        Differential.process.stop()
        Differential.process = None


def test_a_backend_agrees_with_this_library_step_by_step(machine):
    """Random remember/read/recall/context/save/load sequences give the same results here and in the backend."""
    run_state_machine_as_test(machine, settings=settings(max_examples=150, stateful_step_count=20))


class Broken(Differential):
    """The machine against a backend with one deliberate bug."""

    command: ClassVar[list[str]] = [*SERVE, "--bug", "importance-clamped"]
    process: ClassVar[Subprocess | None] = None


def test_the_machine_catches_a_broken_backend_and_writes_a_vector():
    """Against a clamped importance, the machine fails and its report is a vector that the runner also fails on."""
    try:
        with pytest.raises(AssertionError, match="as a vector") as failure:
            run_state_machine_as_test(Broken, settings=settings(max_examples=300, stateful_step_count=6, database=None))
    finally:
        if Broken.process is not None:
            Broken.process.stop()
            Broken.process = None
    vector = json.loads(str(failure.value).split("as a vector:\n", 1)[1].strip().splitlines()[0])
    assert vector["steps"] and vector["steps"][-1]["expect"]
    vector["id"] = "machine-shrunk"
    assert [step["expect"] for step in vector["steps"]] == reference.run_case(vector)["results"]
    report = run(Subprocess(Broken.command, env=default_env()), [vector])
    assert report.summary() == "0 passed, 1 failed, 0 skipped, 0 errored"
