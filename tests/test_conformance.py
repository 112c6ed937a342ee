"""The conformance suite: the vector files, the runner, this library as a backend, and the bugs it must catch."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jsonschema
import pytest

from sentinel_memory.conformance import backend, bugs, compare, vectors, wire
from sentinel_memory.conformance.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
SERVE = f"{sys.executable} -m sentinel_memory.conformance serve"

#: Summary lines for the end of the test run (conftest prints them).
SUMMARIES: list[str] = []


def rule_ids() -> list[str]:
    return re.findall(
        r"^- \*\*([A-Z][A-Z0-9]*-[0-9]+)\*\*", (SPEC / "RULES.md").read_text(encoding="utf-8"), re.MULTILINE
    )


def all_cases() -> list[dict]:
    return [case for _, case in vectors.load_all(SPEC / "vectors")]


def cli(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


# -- the files -----------------------------------------------------------------------------


def test_every_vector_file_validates_against_the_schema():
    """Each spec/vectors file is valid by spec/vector.schema.json (checked with jsonschema, not by hand)."""
    schema = json.loads((SPEC / "vector.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    problems = {
        path.name: [
            f"{'/'.join(map(str, error.absolute_path))}: {error.message[:200]}"
            for error in validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))
        ]
        for path in vectors.files(SPEC / "vectors")
    }
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_schema_refuses_a_broken_case():
    """The schema check can fail: a step without an expectation and an unknown error code are refused."""
    schema = json.loads((SPEC / "vector.schema.json").read_text(encoding="utf-8"))
    broken = {
        "description": "x",
        "cases": [
            {
                "id": "x-1",
                "description": "x",
                "rules": ["ENT-1"],
                "config": {},
                "steps": [{"op": "size", "now": 0}, {"op": "size", "now": 0, "expect": {"error": "E_OOPS"}}],
            }
        ],
    }
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(broken))
    assert len(errors) == 2


def test_there_are_at_least_400_cases_with_unique_ids():
    """At least 400 cases, and no id is used twice."""
    ids = [case["id"] for case in all_cases()]
    assert len(ids) >= 400
    assert len(ids) == len(set(ids))


def test_vectors_cite_only_existing_rules():
    """Every rule a vector cites is defined in spec/RULES.md."""
    cited = {rule for case in all_cases() for rule in case["rules"]}
    assert cited - set(rule_ids()) == set()


def test_every_rule_has_a_vector_unless_it_is_about_the_host():
    """Every rule is cited by a vector, except the listed host rules, which no vector may cite and which all exist."""
    host = json.loads((SPEC / "host-rules.json").read_text(encoding="utf-8"))["rules"]
    cited = {rule for case in all_cases() for rule in case["rules"]}
    assert set(host) <= set(rule_ids())
    assert [rule for rule in rule_ids() if rule not in cited and rule not in host] == []
    assert sorted(set(host) & cited) == []


def test_the_article_examples_are_there_by_name():
    """The article's examples are vectors with names: restaurant, refund, cart note, freshness cap, eviction, miss, damage."""
    ids = {case["id"] for case in all_cases()}
    named = [
        "article-restaurant",
        "article-refund-estimate",
        "article-cart-note",
        "article-freshness-cap-55",
        "article-freshness-cap-65",
        "article-new-low-evicts-itself",
        "article-jak-se-jmenuju",
        "article-damaged-file",
        "article-invalid-entries-dropped",
    ]
    assert [name for name in named if name not in ids] == []


def test_the_refund_vector_expects_the_articles_numbers():
    """article-refund-estimate expects 21 tokens and 2 omitted, the article's figures, not whatever the code said."""
    case = next(case for case in all_cases() if case["id"] == "article-refund-estimate")
    context = case["steps"][-1]["expect"]["ok"]
    assert (context["tokens"], context["omitted"]) == (21, 2)


def test_the_files_are_kept_in_their_own_format(tmp_path):
    """Writing a file back changes nothing, so regen --write diffs show only real changes."""
    for path in vectors.files(SPEC / "vectors"):
        content = json.loads(path.read_text(encoding="utf-8"))
        assert vectors.format_file(content["description"], content["cases"]) == path.read_text(encoding="utf-8"), (
            path.name
        )


# -- comparing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "got", "same"),
    [
        ("1e-7", "1e-07", True),
        ("5", "5.0", True),
        ("0.30000000000000004", "0.3", False),
        ("true", "1", False),
        ("[1, 2]", "[2, 1]", False),
        ('{"a": 1, "b": 2}', '{"b": 2, "a": 1}', True),
        ('{"a": 1}', '{"a": 1, "b": null}', False),
        ("null", "0", False),
        ('"1"', "1", False),
    ],
)
def test_results_compare_as_json_values_and_numbers_as_doubles(expected, got, same):
    """Numbers compare by double value whatever their text; order of arrays counts, of object keys not; bool is no number."""
    assert compare.equal(json.loads(expected), json.loads(got)) is same


def test_a_tolerance_is_off_unless_claimed():
    """A relative tolerance is zero by default and explicit when used."""
    assert not compare.equal(0.1 + 0.2, 0.3)
    assert compare.equal(0.1 + 0.2, 0.3, tolerance=1e-15)


def test_first_difference_names_the_field():
    """A failure points at the first differing field."""
    assert (
        compare.first_difference({"ok": {"text": "a", "tokens": 1}}, {"ok": {"text": "a", "tokens": 2}})
        == "$.ok.tokens"
    )


# -- the runner against this library -----------------------------------------------------------


def test_the_whole_suite_passes_through_serve_as_a_subprocess():
    """Every vector passes when the runner drives this library's serve in a subprocess; the summary line is printed."""
    started = time.perf_counter()
    result = cli("run", "--backend", SERVE, "--quiet")
    took = time.perf_counter() - started
    summary = result.stdout.strip().splitlines()[-1]
    SUMMARIES.append(f"conformance (serve, {took:.1f} s): {summary}")
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.fullmatch(r"[0-9]+ passed, 0 failed, 0 skipped, 0 errored", summary)
    assert int(summary.split()[0]) == len(all_cases())


#: For each deliberate bug, a case that pins the very rule it breaks, and the step where it shows.
CAUGHT_BY = {
    "expiry-gt": ("article-cart-note", 4),
    "ties-older": ("entries-ties-fixed-clock-recent", 6),
    "estimate-code-points": ("text-estimate-emoji-five", 2),
    "importance-clamped": ("numbers-importance-fraction", 1),
    "budget-per-entry": ("article-refund-estimate", 5),
    "counted-naive": ("counted-merge-merging-10", 3),
    "counted-tokens-sum": ("counted-merge-merging-11", 3),
    "counted-no-separator": ("counted-merge-merging-10", 3),
    "repair-drops-newest": ("counted-repair-merging-16", 4),
    "repair-falls-back-naive": ("counted-searched-naive", 5),
    "words-nfkd": ("choice-words-nfd-not-nfkd", 2),
    "words-spacing-marks-separate": ("choice-words-every-mark-removed", 2),
    "context-matches-capped": ("choice-context-ranks-every-match", 19),
    "facts-share-unfloored": ("choice-facts-share-floored", 14),
    "null-facts-share-zero": ("choice-null-system-share-must-keep", 15),
}


def caught_in_a_child(bug: str) -> tuple[list[str], list[str]]:
    """Run every vector through serve in a forked process with ``bug`` applied: (failed ids, errored ids).

    The cases go through the same JSON lines a subprocess would read and
    write, and the runner's own ``judge`` decides, without starting a
    Python per bug.
    """
    import io
    import os

    from sentinel_memory.conformance import backend, runner
    from sentinel_memory.conformance.vectors import request_of

    cases = all_cases()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: break the library, answer every case, report the verdicts
        code = 1
        try:
            os.close(read)
            bugs.apply(bug)
            requests = "".join(json.dumps(request_of(case)) + "\n" for case in cases)
            out = io.StringIO()
            backend.serve(io.StringIO(requests), out)
            answers = [json.loads(line, parse_int=backend._integer) for line in out.getvalue().splitlines()]
            outcomes = [runner.judge(case, answer) for case, answer in zip(cases, answers, strict=True)]
            verdict = {
                "failed": [o.id for o in outcomes if o.status == "failed"],
                "errored": [o.id for o in outcomes if o.status == "errored"],
            }
            os.write(write, json.dumps(verdict).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and data, f"the backend with {bug} crashed"
    verdict = json.loads(data)
    return verdict["failed"], verdict["errored"]


@pytest.mark.parametrize("bug", sorted(bugs.BUGS))
def test_the_vectors_catch_every_deliberate_bug(bug):
    """Every one of serve --bug's injected port mistakes fails at least one vector, with a wrong answer, not a crash (section 12)."""
    failed, errored = caught_in_a_child(bug)
    assert failed, f"no vector catches {bug}"
    assert errored == []


def test_there_are_at_least_170_deliberate_bugs():
    """The vectors are measured the way a port is: against at least 170 one-point mistakes (section 12)."""
    assert len(bugs.BUGS) >= 170


@pytest.mark.parametrize("bug", sorted(CAUGHT_BY))
def test_each_deliberate_bug_fails_the_run_with_a_diff(bug, tmp_path):
    """A backend with one injected bug fails the run, and the report names a case, a step, the op, expected and got."""
    assert set(CAUGHT_BY) <= set(bugs.BUGS)
    report = tmp_path / "report.json"
    result = cli("run", "--backend", f"{SERVE} --bug {bug}", "--quiet", "--json", str(report))
    assert result.returncode == 1
    assert re.search(
        r"^FAILED [a-z0-9.-]+: .+(\n  step [0-9]+: [a-z_]+ .* at now=.+)*  <- differs\n  expected: .+\n  got:      .+",
        result.stdout,
        re.MULTILINE,
    )
    content = json.loads(report.read_text(encoding="utf-8"))
    assert content["summary"]["failed"] > 0 and content["summary"]["errored"] == 0
    case, step = CAUGHT_BY[bug]
    failed = {outcome["id"]: outcome for outcome in content["cases"] if outcome["status"] == "failed"}
    assert failed[case]["step"] == step and "error" not in failed[case]["got"]  # a wrong result, not a crash


def test_a_listed_expected_failure_is_not_a_failure(tmp_path):
    """A case that fails and is listed in the expected failures counts as such, and the run passes."""
    listed = tmp_path / "expected.txt"
    listed.write_text(
        "# importance is clamped in this port, on purpose\nnumbers-importance-fraction\n", encoding="utf-8"
    )
    result = cli(
        "run",
        "--backend",
        f"{SERVE} --bug importance-clamped",
        "--only",
        "numbers-importance-fraction",
        "--expected-failures",
        str(listed),
    )
    assert result.returncode == 0, result.stdout
    assert "1 expected failures" in result.stdout


@pytest.mark.parametrize(
    ("listed_id", "message"),
    [
        ("numbers-importance-fraction", "listed as an expected failure, but it passed"),
        ("no-such-case", "'no-such-case' is not a case"),
    ],
)
def test_an_expected_failure_that_passes_or_is_no_case_fails_the_run(tmp_path, listed_id, message):
    """A listed case that passes, or a listed id that is no case, fails the run, so the list can only shrink."""
    listed = tmp_path / "expected.txt"
    listed.write_text(listed_id + "\n", encoding="utf-8")
    result = cli("run", "--backend", SERVE, "--only", "numbers-importance-fraction", "--expected-failures", str(listed))
    assert result.returncode == 1
    assert message in result.stdout


FLAKY = textwrap.dedent(
    """
    import json, os, sys, time
    from sentinel_memory.conformance.backend import handshake, run_case
    groups = os.environ.get("GROUPS")
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "start":
            answer = handshake()
            if groups is not None:
                answer["groups"] = groups.split(",")
        elif request["id"] == os.environ.get("CRASH"):
            os._exit(3)
        elif request["id"] == os.environ.get("HANG"):
            time.sleep(30)
        elif request["id"] == os.environ.get("GARBAGE"):
            print("this is not JSON", flush=True)
            continue
        else:
            answer = run_case(request)
            if os.environ.get("UNSUPPORTED") and any(s["op"] == os.environ["UNSUPPORTED"] for s in request["steps"]):
                answer["results"] = [{"error": "E_UNSUPPORTED"} for _ in request["steps"]]
        print(json.dumps(answer), flush=True)
    """
)


def flaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    script = tmp_path / "flaky.py"
    script.write_text(FLAKY, encoding="utf-8")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return f"{sys.executable} {script}"


def test_a_crash_a_hang_and_garbage_are_errored_and_the_runner_goes_on(tmp_path, monkeypatch):
    """Errored is not failed: after each, the runner restarts the backend, and the next case still passes."""
    command = flaky(
        tmp_path,
        monkeypatch,
        CRASH="article-restaurant",
        HANG="article-restaurant-stats",
        GARBAGE="article-refund-estimate",
    )
    result = cli(
        "run",
        "--backend",
        command,
        "--timeout",
        "1",
        "--only",
        "article-restaurant",
        "--only",
        "article-restaurant-stats",
        "--only",
        "article-refund-estimate",
        "--only",
        "article-refund-estimate-no-query",
    )
    assert result.returncode == 1
    assert result.stdout.strip().splitlines()[-1] == "1 passed, 0 failed, 0 skipped, 3 errored"
    assert "the backend exited (status 3)" in result.stdout
    assert "no answer within 1 s" in result.stdout
    assert "the answer is not JSON" in result.stdout


def test_a_missing_optional_group_is_a_skip_never_a_pass(tmp_path, monkeypatch):
    """A backend without the cache group skips every cache case and still passes the rest."""
    groups = "entries,expiry,compaction,numbers,recall,context,text,working,persistence"
    result = cli("run", "--backend", flaky(tmp_path, monkeypatch, GROUPS=groups), "--only", "cache-*")
    lines = result.stdout.strip().splitlines()
    skipped = int(lines[-1].split(", ")[2].split()[0])
    assert result.returncode == 0
    assert skipped == sum(1 for case in all_cases() if case["id"].startswith("cache-"))
    assert "SKIP cache-put-get: needs cache" in result.stdout


def test_an_unsupported_answer_is_a_skip(tmp_path, monkeypatch):
    """A backend answering E_UNSUPPORTED for a step makes the case a skip; in a required group, one that fails the run."""
    result = cli(
        "run",
        "--backend",
        flaky(tmp_path, monkeypatch, UNSUPPORTED="recall"),
        "--only",
        "recall-digits",
        "--only",
        "article-restaurant",
    )
    assert result.stdout.strip().splitlines()[-1] == "1 passed, 0 failed, 1 skipped, 0 errored"
    assert "declined 1 cases of the required groups" in result.stdout and result.returncode == 1


def test_a_backend_without_a_required_group_cannot_be_run(tmp_path, monkeypatch):
    """A backend lacking a required group is refused before any case: exit status 2."""
    result = cli("run", "--backend", flaky(tmp_path, monkeypatch, GROUPS="entries"), "--only", "article-restaurant")
    assert result.returncode == 2
    assert "missing ['expiry'" in result.stderr


# -- serve, dump and regen --------------------------------------------------------------------


def test_serve_answers_the_handshake_and_a_case():
    """serve speaks the protocol: the handshake names the implementation and groups; a case gets one answer line."""
    request = '{"op": "start", "protocol": 2}\n{"id": "c", "config": {}, "steps": [{"op": "size", "now": 0}, {"op": "teleport", "now": 0}]}\n'
    result = subprocess.run(SERVE.split(), input=request, capture_output=True, text=True, timeout=60, check=True)
    hello, answer = map(json.loads, result.stdout.splitlines())
    assert hello["implementation"]["name"] == "sentinel-memory" and "cache" in hello["groups"]
    assert answer == {"id": "c", "results": [{"ok": 0}, {"error": "E_UNSUPPORTED"}]}


def test_dump_prints_every_vector_as_one_document():
    """dump gives one JSON document with every file and case."""
    result = cli("dump")
    document = json.loads(result.stdout)
    assert document["protocol"] == 2
    assert sum(len(file["cases"]) for file in document["files"]) == len(all_cases())


def test_regen_shows_a_changed_expectation_and_writes_only_when_asked(tmp_path, capsys):
    """regen derives expectations from this library: it reports a tampered one, leaves it unless --write, then fixes it."""
    folder = tmp_path / "vectors"
    shutil.copytree(SPEC / "vectors", folder)
    path = folder / "article.json"
    content = json.loads(path.read_text(encoding="utf-8"))
    content["cases"][0]["steps"][-1]["expect"] = {"ok": "tampered"}
    vectors.write_file(path, content["description"], content["cases"])
    assert main(["regen", "--vectors", str(folder), "--only", "article-*"]) == 1
    assert "tampered" in path.read_text(encoding="utf-8")
    assert main(["regen", "--vectors", str(folder), "--only", "article-*", "--write"]) == 0
    assert path.read_text(encoding="utf-8") == (SPEC / "vectors" / "article.json").read_text(encoding="utf-8")
    assert "1 cases differ" in capsys.readouterr().out


def test_this_library_agrees_with_every_vector_in_process():
    """run_case, the function serve answers with, gives every expectation (the files are what the library computes)."""
    wrong = [
        case["id"]
        for case in all_cases()
        if compare.first_difference(
            vectors.answer_of(case), wire.encode(backend.run_case(vectors.request_of(case)))
        )  # as serve writes it: NaN as section 4's $number
    ]
    assert wrong == []


def test_the_whole_suite_passes_with_redis_in_the_loop(redis_server):
    """RDS-2: every vector passes when each case's memory is kept in a RedisStore on the tests' redis-server (serve --store)."""
    started = time.perf_counter()
    result = cli("run", "--backend", f"{SERVE} --store {redis_server.url}", "--quiet")
    summary = result.stdout.strip().splitlines()[-1]
    SUMMARIES.append(f"conformance (serve --store redis, {time.perf_counter() - started:.1f} s): {summary}")
    assert result.returncode == 0, result.stdout[-3000:]
    assert summary == f"{len(all_cases())} passed, 0 failed, 0 skipped, 0 errored"


def test_the_precedence_vectors_are_what_the_generator_makes(capsys):
    """PROTOCOL §3: spec/vectors/precedence.json is generated from the reference, so a change of which error wins is a reviewed diff."""
    assert main(["precedence", "--vectors", str(SPEC / "vectors")]) == 0
    assert "as kept" in capsys.readouterr().out


def test_the_vector_coverage_report_covers_every_core_module():
    """The report of what the vectors reach names every module of the core, with a total no larger than the branches."""
    text = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "vector_coverage.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    modules = {p.relative_to(ROOT / "src").as_posix() for p in (ROOT / "src" / "sentinel_memory" / "core").glob("*.py")}
    assert modules <= set(re.findall(r"^\| `(sentinel_memory/core/[a-z0-9_/]+\.py)` \| \d", text, re.MULTILINE))
    taken, total = map(int, re.search(r"take \*\*(\d+) of (\d+) branches", text).groups())
    assert 0 < taken <= total
