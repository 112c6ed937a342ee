"""A census of the random mode: which ops, argument kinds and situations the differential machine sends (issue 45).

The machine of ``tests/spec/test_differential.py`` only finds what it
sends. This runs it without a backend, over a fixed, derandomized budget of
cases, and counts every step by op, by argument and the kind of its value,
and by situation (a second memory, a clock that went back, a now that is no
number). A generator that stops producing one of them fails here, instead
of the random mode silently testing less.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from spec.test_differential import Differential
from spec.weak_spots import SPOTS, cases
from spec.weak_spots import census as vector_census

ROOT = Path(__file__).resolve().parent.parent


def protocol_ops() -> set[str]:
    """Every op section 6 of spec/PROTOCOL.md defines, from its ``### op, op`` headings."""
    text = (ROOT / "spec" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = text.split("## 6. Ops", 1)[1].split("\n## 7.", 1)[0]
    return {op.strip() for heading in re.findall(r"^### (.+)$", section, re.M) for op in heading.split(",")}


def kind(value: Any) -> str:
    """The kind of an argument's value on the wire (section 4)."""
    if isinstance(value, dict) and set(value) == {"$number"}:
        return "number-marker"
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}[type(value)]


class Census(Differential):
    """The machine with no backend: each case's steps are counted, not sent."""

    process: ClassVar[Any] = object()  # never started: teardown sends nothing
    seen: ClassVar[Counter[tuple[str, ...]]] = Counter()

    def send(self, op: str, wait: int | float = 0, **args: object) -> None:
        """Send as the machine does, and note which rule sent the step and the wait before it."""
        before = len(self.steps)
        super().send(op, wait, **args)
        if len(self.steps) > before:
            self.steps[-1]["rule"] = sys._getframe(1).f_code.co_name
            self.steps[-1]["wait"] = wait

    def teardown(self) -> None:
        seen = type(self).seen
        seen["configs", len(self.config)] += 1
        seen["cases",] += 1
        case = {"config": self.config, "steps": self.steps}
        for spot, reaches in SPOTS.items():
            seen["spot", spot] += reaches(case)
        for name, value in self.config.items():
            seen["config", name, kind(value)] += 1
        previous = None
        for step in self.steps:
            op, args, now = step["op"], step["args"], step["now"]
            seen["op", op] += 1
            for name, value in args.items():
                seen["arg", op, name, kind(value)] += 1
                seen["rule", step.get("rule", "-"), op, name, kind(value)] += 1
            if not args:
                seen["arg", op, "-", "none"] += 1
            if step.get("memory") == 2:
                seen["memory 2", op] += 1
            if isinstance(now, dict):
                seen["now", "number-marker"] += 1
            elif step.get("wait", 0) < 0:
                seen["now", "went back"] += 1
            elif previous is not None and now == previous:
                seen["now", "unchanged"] += 1
            elif previous is not None and now != int(now):
                seen["now", "fraction"] += 1
            previous = now if not isinstance(now, dict) else previous
            seen["answer", "error" if "error" in step["expect"] else "ok", op] += 1


@pytest.fixture(scope="module")
def census() -> Counter[tuple[str, ...]]:
    Census.seen = Counter()
    run_state_machine_as_test(
        Census,
        settings=settings(
            max_examples=1000,  # enough that the rarest kind is sent about 25 times: no lottery on any platform
            stateful_step_count=15,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    return Census.seen


#: The ops the machine must also send so that they fail: with bad arguments, or at a now that is no number.
FAILING = {
    "remember",
    "add_turn",
    "add_message",
    "add_messages",
    "get",
    "has",
    "get_context",
    "get_messages",
    "cache_put",
    "working_set",
    "load",
    "save",
}


def test_census_every_op_of_the_protocol_is_sent_and_answered_both_ways(census):
    """TIME-2, NUM-5, MSG-2: every op of spec/PROTOCOL.md section 6 is sent and answered, and the ops that can fail are sent so that they do."""
    ops = protocol_ops()
    assert len(ops) == 26 and {"get_messages", "add_message", "add_messages"} <= ops
    assert {key[1] for key in census if key[0] == "op"} == ops
    assert {key[2] for key in census if key[:2] == ("answer", "ok")} == ops
    failing = {key[2] for key in census if key[:2] == ("answer", "error")}
    assert sorted(FAILING - failing) == []


#: The argument kinds each op must be sent with: (op, argument, kind).
ARGUMENTS = {
    *(("remember", "data", k) for k in ("str", "int", "float", "list", "dict", "number-marker")),
    *(("remember", "importance", k) for k in ("int", "float", "str", "bool")),
    ("remember", "ttl", "int"),
    ("remember", "key", "str"),
    ("remember", "key", "int"),
    ("remember", "no_such_argument", "bool"),
    ("add_turn", "role", "str"),
    ("add_turn", "role", "int"),
    ("add_turn", "text", "int"),
    ("add_turn", "importance", "float"),
    *(("get_context", name, "str") for name in ("query", "tokenizer", "separator", "format", "only")),
    ("get_context", "token_budget", "int"),
    ("get_context", "must_keep", "float"),
    ("get_context", "query", "int"),
    *(("get_messages", "facts_share", k) for k in ("int", "float", "null")),
    ("get_messages", "token_budget", "int"),
    ("get_messages", "query", "str"),
    ("get_messages", "query", "int"),
    ("get_messages", "must_keep", "float"),
    ("get_messages", "no_such_argument", "bool"),
    # Only the messages rule sends a system prompt, valid or not (MSG-2): its census mark.
    ("get_messages", "system", "str"),
    ("get_messages", "system", "int"),
    ("recall", "query", "str"),
    ("recall", "limit", "int"),
    ("get", "default", "str"),
    ("get", "key", "str"),
    ("has", "key", "int"),
    ("get_recent", "n", "null"),
    *(("working_set", "patch", k) for k in ("dict", "null", "list", "str")),
    ("cache_put", "key", "int"),
    ("cache_put", "value", "dict"),
    ("cache_put", "ttl", "int"),
    ("cache_get", "default", "str"),
    ("load", "document", "dict"),
    ("load", "text", "str"),
    ("load", "missing", "bool"),
    ("stored", "document", "dict"),
    ("stored", "text", "str"),
}


#: The kinds an argument must be sent with by the random rule of its own: (rule, op, argument) -> kinds.
BY_RULE = {
    ("remember", "remember", "data"): {"str", "int", "float", "list", "dict"},
    ("remember", "remember", "importance"): {"int", "float", "str", "bool"},
    ("add_turn", "add_turn", "role"): {"str", "int"},
}


def test_census_every_argument_kind_is_sent(census):
    """NUM-5, ENT-2, CTX-9: each op is sent with each kind of argument value it must be tested with, valid and not."""
    sent = {key[1:] for key in census if key[0] == "arg"}
    assert sorted(ARGUMENTS - sent) == []
    # Other rules send a few of these kinds too (big numbers, bad arguments): the random rules send them all.
    for (rule, op, name), kinds in BY_RULE.items():
        assert kinds <= {key[4] for key in census if key[:4] == ("rule", rule, op, name)}, (rule, op, name)
    # An optional argument given as null (section 3), counted over each op, since any one of them is rare.
    assert {"remember", "get_messages", "get_recent"} <= {op for op, _, value in sent if value == "null"}


def test_census_situations_second_memories_clocks_and_configs(census):
    """MW-3, TIME-2, CTX-13: a second memory on the store, a clock that went back, stood still, moved by a fraction or is no number; every config option."""
    second = {key[1] for key in census if key[0] == "memory 2"}
    assert second >= {
        "remember",
        "save",
        "load",
        "get_recent",
        "add_turn",
        "add_message",
        "add_messages",
        "get_messages",
    }
    assert {key[1] for key in census if key[0] == "now"} == {"number-marker", "went back", "unchanged", "fraction"}
    options = {key[1] for key in census if key[0] == "config" and len(key) == 3}
    assert options == {
        "limit",
        "recency_window",
        "working_ttl",
        "cache_ttl",
        "tokenizer",
        "autosave",
        "shared",
        "ranking",
    }
    assert {key[2] for key in census if key[:2] == ("config", "limit")} == {"int", "float", "str"}


def test_census_the_weak_spots_are_sent_more_often_than_the_vectors_reach_them(census):
    """Section 12: each weak spot of the vectors (tests/spec/weak_spots.py) is reached by a larger share of the random cases than of the vector cases, and the thinnest spot by at least 5% of them."""
    counts = vector_census()
    vector_cases = sum(1 for _ in cases())
    random_cases = census["cases",]
    shares = {spot: census["spot", spot] / random_cases for spot in SPOTS}
    for spot, share in shares.items():
        assert share > counts[spot] / vector_cases, (spot, share, counts[spot] / vector_cases)
    thinnest = min(counts, key=lambda spot: (counts[spot], spot))
    assert shares[thinnest] >= 0.05, shares
