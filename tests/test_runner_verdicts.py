"""The conformance runner as an oracle: every verdict it gives, each earned by a backend that deserves it.

Each backend here is this library's own (``run_case``) with one thing done
wrong to its answers, run in process through ``runner.run``: an extra array
item, an extra result, an ``E_UNSUPPORTED``, a wrong error code, ... The
subprocess side (crash, hang, garbage) is in ``tests/test_conformance.py``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sentinel_memory.conformance import OPTIONAL_GROUPS, REQUIRED_GROUPS, backend, compare, runner, vectors

#: The reviewed vectors of this clone (not of whatever copy of the package is imported, as in `make mutants`).
CASES = {case["id"]: case for _, case in vectors.load_all(Path(__file__).resolve().parent.parent / "spec" / "vectors")}

#: A case whose first result is an array (get_recent), one whose config is refused, and plain ones.
LISTING = "entries-recent-3"
REFUSED = "options-autosave-string"
PLAIN = ["article-restaurant", "article-refund-estimate"]


class Backend:
    """``run_case`` behind the runner's backend interface, its answers passed through ``tamper`` first."""

    def __init__(self, tamper: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None, groups=None):
        self.tamper = tamper or (lambda request, answer: answer)
        self.groups = list(groups or [*REQUIRED_GROUPS, *OPTIONAL_GROUPS])
        self.starts = 0

    def start(self) -> dict[str, Any]:
        self.starts += 1
        return {**backend.handshake(), "groups": self.groups}

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.tamper(request, json.loads(json.dumps(backend.run_case(copy.deepcopy(request)))))

    def stop(self, *, kill: bool = False) -> None:
        pass


def verdicts(
    tamper=None, ids=(LISTING, REFUSED, *PLAIN), expected_failures=(), groups=None
) -> dict[str, runner.Outcome]:
    report = runner.run(Backend(tamper, groups), [CASES[i] for i in ids], expected_failures=expected_failures)
    return {outcome.id: outcome for outcome in report.outcomes} | {"": report}


def only(case_id: str, change: Callable[[dict[str, Any]], None]):
    """A tamper that applies ``change`` to the answer of one case."""

    def tamper(request, answer):
        if request["id"] == case_id:
            change(answer)
        return answer

    return tamper


def test_the_honest_backend_passes_every_case():
    """Passed: this library's own answers pass each case, the refused config included, and the report is ok."""
    found = verdicts()
    assert {i: o.status for i, o in found.items() if i} == dict.fromkeys((LISTING, REFUSED, *PLAIN), "passed")
    assert found[""].ok and found[""].summary() == "4 passed, 0 failed, 0 skipped, 0 errored"


def test_an_extra_array_item_fails_the_case_at_that_array():
    """Failed: a result array with one item more than expected is a difference, named at the array with both lengths."""
    assert isinstance(CASES[LISTING]["steps"][-1]["expect"]["ok"], list)
    found = verdicts(only(LISTING, lambda answer: answer["results"][-1]["ok"].append(answer["results"][-1]["ok"][0])))
    failed = found[LISTING]
    assert failed.status == "failed" and failed.step == len(CASES[LISTING]["steps"])
    assert failed.where.startswith("$.ok (length ") and not found[""].ok
    assert {found[i].status for i in (REFUSED, *PLAIN)} == {"passed"}


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_missing_array_item_fails_the_case(where):
    """Failed: a result array short of one item is a difference too."""
    index = 0 if where == "first" else -1
    found = verdicts(only(LISTING, lambda answer: answer["results"][-1]["ok"].pop(index)))
    assert found[LISTING].status == "failed" and not found[""].ok


@pytest.mark.parametrize("extra", [{"ok": None}, {"ok": 0}, {"error": "E_UNSUPPORTED"}])
def test_an_extra_result_is_an_error_not_a_pass(extra):
    """Errored: more results than steps is not an answer to the case, whatever the extra one says; the run is not ok."""
    found = verdicts(only(PLAIN[0], lambda answer: answer["results"].append(extra)))
    assert found[PLAIN[0]].status == "errored" and "results" in found[PLAIN[0]].reason
    assert not found[""].ok and found[PLAIN[1]].status == "passed"


def test_a_missing_result_is_an_error():
    """Errored: fewer results than steps."""
    found = verdicts(only(PLAIN[0], lambda answer: answer["results"].pop()))
    assert found[PLAIN[0]].status == "errored" and not found[""].ok


def test_an_unsupported_config_is_a_skip_never_a_pass():
    """Skipped: E_UNSUPPORTED for a config, also where the case expects a config error; never a pass, and for a case of
    the required groups the skip fails the run."""

    def unsupported(request, answer):
        return {"id": request["id"], "error": "E_UNSUPPORTED"}

    found = verdicts(unsupported)
    assert {i: o.status for i, o in found.items() if i} == dict.fromkeys((LISTING, REFUSED, *PLAIN), "skipped")
    assert found[""].count("passed") == 0 and not found[""].ok and found[""].required_skips == 4
    assert "does not support this config" in found[REFUSED].reason


def test_an_unsupported_step_is_a_skip():
    """Skipped: E_UNSUPPORTED for a step, though the other steps' results are right."""
    found = verdicts(only(PLAIN[1], lambda answer: answer["results"].__setitem__(1, {"error": "E_UNSUPPORTED"})))
    assert found[PLAIN[1]].status == "skipped" and "step 2" in found[PLAIN[1]].reason


def test_a_missing_optional_group_is_a_skip():
    """Skipped: a case needing an optional group the backend lacks is not sent, and not passed."""
    cache_case = next(i for i in CASES if i.startswith("cache-"))
    found = verdicts(ids=(cache_case, PLAIN[0]), groups=REQUIRED_GROUPS)
    assert found[cache_case].status == "skipped" and found[cache_case].reason == "needs cache"
    assert found[PLAIN[0]].status == "passed"


@pytest.mark.parametrize("code", ["E_RANGE", "E_PARSE", "E_CONFLICT", "E_NONSENSE", ""])
def test_a_wrong_error_code_where_a_config_error_is_expected_fails(code):
    """Failed: the config must be refused with the expected code; another code is a failure naming both."""
    assert CASES[REFUSED]["error"] == "E_TYPE"
    found = verdicts(only(REFUSED, lambda answer: answer.__setitem__("error", code)))
    assert found[REFUSED].status == "failed" and (found[REFUSED].expected, found[REFUSED].got) == ("E_TYPE", code)


def test_a_memory_where_a_config_error_is_expected_fails():
    """Failed: accepting a config that must be refused (results instead of the error)."""

    def accepting(request, answer):
        return {"id": request["id"], "results": []} if request["id"] == REFUSED else answer

    found = verdicts(accepting)
    assert found[REFUSED].status == "failed" and found[REFUSED].got == "a memory"


def test_a_config_error_where_a_memory_is_expected_fails():
    """Failed: refusing a config the case accepts."""
    found = verdicts(
        lambda request, answer: {"id": request["id"], "error": "E_TYPE"} if request["id"] == PLAIN[0] else answer
    )
    assert found[PLAIN[0]].status == "failed" and found[PLAIN[0]].expected is None


def test_a_wrong_value_fails_with_the_step_and_the_place():
    """Failed: one number off in one step: the outcome names the step, the op and the path of the difference."""

    def off(answer):
        answer["results"][0]["ok"]["importance"] = 0.8

    found = verdicts(only(PLAIN[0], off))
    failed = found[PLAIN[0]]
    assert (failed.status, failed.step, failed.op, failed.where) == ("failed", 1, "remember", "$.ok.importance")


def test_an_answer_to_another_case_is_an_error_and_the_backend_restarts():
    """Errored: an answer carrying another case's id; the runner starts a fresh backend before going on."""
    engine = Backend(only(PLAIN[0], lambda answer: answer.__setitem__("id", "someone-else")))
    report = runner.run(engine, [CASES[i] for i in PLAIN])
    assert [o.status for o in report.outcomes] == ["errored", "passed"] and engine.starts == 2


def test_a_backend_error_is_an_error():
    """Errored: the backend gave no answer (BackendError), and the next case still runs."""

    def broken(request, answer):
        if request["id"] == PLAIN[0]:
            raise runner.BackendError("no answer within 1 s")
        return answer

    report = runner.run(Backend(broken), [CASES[i] for i in PLAIN])
    assert [(o.status, o.reason) for o in report.outcomes] == [("errored", "no answer within 1 s"), ("passed", "")]


def test_a_listed_failure_is_an_expected_failure_and_a_listed_pass_fails():
    """Expected failure: a listed case that fails; a listed case that passes fails the run, as does a listed id of no case."""
    found = verdicts(
        only(PLAIN[0], lambda answer: answer["results"][0]["ok"].__setitem__("importance", 0.8)),
        expected_failures=(PLAIN[0], PLAIN[1], "no-such-case"),
    )
    assert found[PLAIN[0]].status == "expected failure"
    assert found[PLAIN[1]].status == "failed" and "it passed" in found[PLAIN[1]].reason
    assert found[""].list_problems == ("expected failure 'no-such-case' is not a case",) and not found[""].ok


def test_a_listed_error_stays_an_error():
    """Errored: listing a case does not excuse a crash."""
    found = verdicts(only(PLAIN[0], lambda answer: answer["results"].pop()), expected_failures=(PLAIN[0],))
    assert found[PLAIN[0]].status == "errored" and not found[""].ok


# -- the comparison itself ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4),
    max_leaves=15,
)


@given(expected=json_values, extra=json_values)
def test_a_longer_or_shorter_array_is_never_equal(expected, extra):
    """Comparing: an array with an item added or removed, at any depth, differs, and the path says so."""
    wrapped = {"ok": [expected]}
    longer = {"ok": [expected, extra]}
    assert compare.first_difference(wrapped, longer) == "$.ok (length 1 != 2)"
    assert compare.first_difference(longer, wrapped) == "$.ok (length 2 != 1)"
    assert compare.equal(wrapped, json.loads(json.dumps(wrapped)))
    assert not compare.equal({"a": [[expected]]}, {"a": [[expected, extra]]})
    assert not compare.equal([], [extra])


@pytest.mark.parametrize(
    ("expected", "got", "tolerance", "same"),
    [
        ("9007199254740993", "9007199254740992", 0.0, False),
        ("9007199254740993", "9007199254740992", 1e-6, False),
        ("9007199254740993", "9007199254740993", 0.0, True),
        ("-9007199254740993", "-9007199254740992.0", 0.0, False),
        ("9007199254740992", "9007199254740992.0", 0.0, True),
        ("1000", "1000.0000001", 1e-6, False),
        ("1000", "1000.0", 1e-6, True),
        ("1000", "1e3", 0.0, True),
        ("5", "5.5", 0.5, False),
        ("1000.0", "1000.0000001", 1e-6, True),
        ("1e3", "1000.0000001", 1e-6, True),
        (
            "100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
            "1e308",
            1e-6,
            False,
        ),
    ],
)
def test_an_expected_integer_literal_is_compared_exactly(expected, got, tolerance, same):
    """PROTOCOL §9: an integer literal in a vector is the exact integer; no tolerance and no rounding to a double hides a difference."""
    assert compare.equal(json.loads(expected), json.loads(got), tolerance=tolerance) is same
    assert (compare.first_difference({"ok": json.loads(expected)}, {"ok": json.loads(got)}, tolerance) is None) is same


def test_a_timestamp_beyond_2_53_rounded_by_a_port_fails_its_case():
    """PROTOCOL §9, TIME-1: a backend that answers an integer timestamp beyond 2**53 as the rounded double fails the case."""
    big = [case_id for case_id, case in CASES.items() if "9007199254740993" in json.dumps(case)]
    assert big, "the vectors hold a timestamp beyond 2**53"

    def rounded(request, answer):
        return json.loads(json.dumps(answer).replace("9007199254740993", "9007199254740992"))

    assert {outcome.status for outcome in runner.run(Backend(), [CASES[case_id] for case_id in big]).outcomes} == {
        "passed"
    }
    report = runner.run(Backend(rounded), [CASES[case_id] for case_id in big])
    assert report.count("failed") == len(big)
