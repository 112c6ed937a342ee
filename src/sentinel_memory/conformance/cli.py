"""``python -m sentinel_memory.conformance``: run, serve, answer, dump and regen.

Exit status: 0 when everything asked for passed, 1 when a case failed or
errored (or the expected-failures list is wrong, or regen found a
difference), 2 for a usage error or a backend that cannot be started.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import PROTOCOL, wire
from .backend import IMPLEMENTATION, _integer, deep_enough, run_case, serve
from .bugs import BUGS, apply
from .compare import first_difference
from .runner import (
    STATUSES,
    BackendError,
    Outcome,
    Report,
    Subprocess,
    default_env,
    describe,
    read_expected_failures,
    run,
    select,
)
from .stores import factory_stores, redis_stores, store_factory
from .vectors import answer_of, compact, files, load_all, request_of, spec_dir, write_file

__all__ = ["conformance_report", "main", "vectors_version"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sentinel_memory.conformance",
        description="The sentinel-memory conformance suite: check a backend against the reviewed vectors.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def folder(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--vectors", type=Path, metavar="DIR", help="read the vector files from DIR (default: the ones shipped)"
        )

    def selection(command: argparse.ArgumentParser) -> None:
        folder(command)
        command.add_argument(
            "--only", action="append", default=[], metavar="GLOB", help="run only cases whose id matches (repeatable)"
        )
        command.add_argument(
            "--skip", action="append", default=[], metavar="GLOB", help="leave out cases whose id matches (repeatable)"
        )

    run_ = commands.add_parser("run", help="run the vectors through a backend and compare")
    run_.add_argument(
        "--backend", required=True, metavar="CMD", help="the backend command line, e.g. 'node backend.js'"
    )
    selection(run_)
    run_.add_argument("--expected-failures", type=Path, metavar="FILE", help="case ids expected to fail, one per line")
    run_.add_argument("--json", type=Path, metavar="REPORT", help="also write the whole report as JSON")
    run_.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per-case timeout (default 10)")
    run_.add_argument(
        "--deadline",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="end the whole run after this long (default 1800)",
    )
    run_.add_argument(
        "--max-timeouts",
        type=int,
        default=5,
        metavar="N",
        help="end the run after N cases in a row time out (default 5)",
    )
    run_.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        metavar="REL",
        help="relative tolerance for numbers (default 0: doubles must be equal)",
    )
    run_.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    run_.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="write DIR/conformance.md (a pass table per group) and DIR/badge.json (a shields.io endpoint badge)",
    )

    serve_ = commands.add_parser("serve", help="this library as a protocol backend on stdin/stdout")
    serve_.add_argument("--bug", choices=sorted(BUGS), help="break the library on purpose (to test the suite)")
    serve_.add_argument(
        "--store",
        metavar="REDIS_URL|module:factory",
        help="keep every case's memory in this Redis (RedisStore in the loop), or in a store that "
        "module.factory() makes, one per case (any store in the loop)",
    )

    answer = commands.add_parser("answer", help="print what this library, the reference, answers for a case")
    answer.add_argument("case", type=Path, metavar="CASE.json", help="a case, a list of cases, or a vector file")

    folder(commands.add_parser("dump", help="print every vector as one JSON document"))

    regen = commands.add_parser("regen", help="re-derive the expectations from this library and show the diff")
    selection(regen)
    regen.add_argument("--write", action="store_true", help="write the re-derived expectations into the files")

    order = commands.add_parser(
        "precedence", help="generate the precedence vectors (which error wins) and compare them with the kept file"
    )
    order.add_argument("--vectors", type=Path, default=None, help="the vectors folder (default: the reviewed one)")
    order.add_argument("--write", action="store_true", help="write the generated file")
    return parser


def _run(options: argparse.Namespace) -> int:
    expected: list[str] = []
    if options.expected_failures is not None:
        expected = read_expected_failures(options.expected_failures)
    every, areas = [], {}
    for path, case in load_all(options.vectors):
        every.append(case)
        areas[case["id"]] = path.stem
    if not every:
        where = options.vectors or spec_dir() / "vectors"
        print(f"no vector files in {where}: nothing was checked", file=sys.stderr)
        return 2
    cases = select(every, options.only, options.skip)
    if not cases:
        print("no case matches --only and --skip: nothing was checked (a run of no cases is no pass)")
        return 1
    backend = Subprocess(options.backend, timeout=options.timeout, env=default_env())

    def show(outcome: Outcome) -> None:
        if outcome.status in ("failed", "errored"):
            print(describe(outcome), flush=True)
        elif not options.quiet and outcome.status == "skipped":
            print(f"SKIP {outcome.id}: {outcome.reason}", flush=True)

    started = time.perf_counter()
    try:
        report = run(
            backend,
            cases,
            expected_failures=expected,
            tolerance=options.tolerance,
            on_outcome=show,
            known_ids=[case["id"] for case in every],
            deadline=options.deadline,
            max_timeouts=options.max_timeouts,
        )
    except (BackendError, OSError) as error:
        print(f"cannot run the backend {options.backend!r}: {error}", file=sys.stderr)
        return 2
    for problem in report.list_problems:
        print(f"EXPECTED FAILURES: {problem}")
    if options.json is not None:
        # ASCII escapes: a lone surrogate a backend answered is reported, not a reason to crash.
        options.json.write_text(json.dumps(report.to_json(), ensure_ascii=True, indent=1) + "\n", encoding="utf-8")
    if options.report is not None:
        table, badge = conformance_report(report, areas, vectors_version(options.vectors))
        options.report.mkdir(parents=True, exist_ok=True)
        (options.report / "conformance.md").write_text(table, encoding="utf-8")
        (options.report / "badge.json").write_text(
            json.dumps(badge, ensure_ascii=True, indent=1) + "\n", encoding="utf-8"
        )
    if options.tolerance:
        print(f"numbers compared with a relative tolerance of {options.tolerance:g} (claimed by this run)")
    name = report.implementation.get("name", "?")
    xfail = report.count("expected failure")
    print(
        f"{name}: {len(cases)} cases in {time.perf_counter() - started:.1f} s"
        + (f", {xfail} expected failures" if xfail else "")
    )
    if report.required_skips:
        print(f"FAILED: the backend declined {report.required_skips} cases of the required groups (E_UNSUPPORTED)")
    print(report.summary())
    return 0 if report.ok else 1


def vectors_version(folder: Path | None = None) -> str:
    """The version of a set of vectors: this library's version and a digest of the files, so two runs name the same set."""
    digest = hashlib.sha256()
    for path in files(folder):
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return f"{IMPLEMENTATION['version']}+{digest.hexdigest()[:12]}"


def conformance_report(report: Report, areas: Mapping[str, str], version: str) -> tuple[str, dict[str, Any]]:
    """A port's conformance at a glance: a Markdown table of passes per group of vectors, and a shields.io badge.

    ``areas`` names each case's group (its vector file: ``entries``,
    ``expiry``, ``numbers``, ...); an expected failure counts as not passed.
    The badge is a shields.io endpoint document (``schemaVersion``,
    ``label``, ``message``, ``color``) naming the protocol and the vectors'
    version, for a port's README.
    """
    rows: dict[str, dict[str, int]] = {}
    for outcome in report.outcomes:
        rows.setdefault(areas.get(outcome.id, "other"), dict.fromkeys(STATUSES, 0))[outcome.status] += 1
    name = report.implementation.get("name", "?")
    lines = [
        f"# {name} {report.implementation.get('version', '')}: the sentinel-memory conformance suite".replace(
            "  ", " "
        ),
        "",
        f"Protocol {PROTOCOL}, vectors {version}, {len(report.outcomes)} cases: {report.summary()}"
        + (f", {report.count('expected failure')} expected failures" if report.count("expected failure") else "")
        + (f"; numbers compared with a relative tolerance of {report.tolerance:g}" if report.tolerance else "")
        + ".",
        "",
        "| group | passed | failed | expected failures | skipped | errored |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for group, counts in sorted(rows.items()):
        total = sum(counts.values())
        lines.append(
            f"| {group} | {counts['passed']}/{total} | "
            f"{counts['failed']} | {counts['expected failure']} | {counts['skipped']} | {counts['errored']} |"
        )
    passed, total = report.count("passed"), len(report.outcomes)
    color = "brightgreen" if report.ok and passed == total else ("yellow" if report.ok else "red")
    badge = {
        "schemaVersion": 1,
        "label": "sentinel-memory conformance",
        "message": f"{passed}/{total} passed, protocol {PROTOCOL}, vectors {version}",
        "color": color,
    }
    return "\n".join(lines) + "\n", badge


def _dump(options: argparse.Namespace) -> int:
    document: dict[str, Any] = {"protocol": PROTOCOL, "files": []}
    for path in files(options.vectors):
        content = json.loads(path.read_text(encoding="utf-8"))
        document["files"].append({"name": path.name, **content})
    sys.stdout.write(json.dumps(document, ensure_ascii=True, allow_nan=False) + "\n")
    return 0


def _regen(options: argparse.Namespace) -> int:
    chosen = {
        case["id"] for case in select((case for _, case in load_all(options.vectors)), options.only, options.skip)
    }
    changed = 0
    for path in files(options.vectors):
        content = json.loads(path.read_text(encoding="utf-8"))
        cases = content["cases"]
        for case in cases:
            if case["id"] not in chosen:
                continue
            answer = wire.encode(
                run_case({"id": case["id"], "config": case.get("config", {}), "steps": case.get("steps", [])})
            )
            before = answer_of(case)
            if "error" in answer:
                case.pop("steps", None)
                case["steps"] = []
                case["error"] = answer["error"]
            else:
                case.pop("error", None)
                for step, result in zip(case["steps"], answer["results"], strict=True):
                    step["expect"] = result
            after = answer_of(case)
            where = first_difference(before, after)
            if where is not None:
                changed += 1
                print(f"{path.name} {case['id']}: {where}\n  kept:    {compact(before)}\n  derived: {compact(after)}")
        if options.write:
            write_file(path, content["description"], cases)
    print(f"{changed} cases differ from this library" + (" (written)" if options.write and changed else ""))
    return 1 if changed and not options.write else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    options = _parser().parse_args(argv)
    if options.command == "run":
        return _run(options)
    if options.command == "serve":
        if options.bug:
            apply(options.bug)
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(encoding="utf-8")
        spec = options.store
        # Lines are read as bytes and decoded one by one: a line that is not UTF-8 is answered, not fatal.
        source = sys.stdin.buffer if isinstance(sys.stdin, io.TextIOWrapper) else sys.stdin
        if spec is None:
            serve(source, sys.stdout)
        elif spec.startswith(("redis://", "rediss://", "unix://")):
            serve(source, sys.stdout, stores=redis_stores(spec))
        else:
            serve(source, sys.stdout, stores=factory_stores(store_factory(spec)))
        return 0
    if options.command == "dump":
        return _dump(options)
    if options.command == "answer":
        return _answer(options)
    if options.command == "precedence":
        return _precedence(options)
    return _regen(options)


def _precedence(options: argparse.Namespace) -> int:
    """Generate ``precedence.json``; 1 when the kept file differs and ``--write`` was not given."""
    from .precedence import DESCRIPTION, cases

    path = (options.vectors or spec_dir() / "vectors") / "precedence.json"
    made = cases()
    kept = json.loads(path.read_text(encoding="utf-8"))["cases"] if path.exists() else None
    same = kept is not None and first_difference(kept, json.loads(json.dumps(made))) is None
    if options.write:
        write_file(path, DESCRIPTION, made)
    print(
        f"{path.name}: {len(made)} cases, {sum(len(c['steps']) for c in made)} steps, "
        + ("as kept" if same else "written" if options.write else "differs from the kept file")
    )
    return 0 if same or options.write else 1


def _answer_line(case: dict[str, Any], _: str) -> str:
    """The reference's answer to ``case`` as one line of JSON."""
    # ASCII escapes: an id or a result holding a lone surrogate is written, not a reason to crash.
    return json.dumps(wire.encode(run_case(request_of(case))), ensure_ascii=True, allow_nan=False)


def _answer(options: argparse.Namespace) -> int:
    """The reference's answer to each case in a file: what would this library do here?"""
    try:
        text = options.case.read_text(encoding="utf-8")
        content = deep_enough(text, lambda text: json.loads(text, parse_int=_integer))
    except (OSError, ValueError) as error:
        print(f"cannot read {options.case}: {error}", file=sys.stderr)
        return 2
    cases = content.get("cases", [content]) if isinstance(content, dict) else content
    if not isinstance(cases, list) or not all(isinstance(case, dict) and "id" in case for case in cases):
        print(
            f"{options.case}: not a case (an object with an id and steps), a list of them or a vector file",
            file=sys.stderr,
        )
        return 2
    for case in cases:
        # The file's own nesting bounds the case's: run where there is room for it (section 1).
        print(deep_enough(text, functools.partial(_answer_line, case)))
    return 0
