"""Systematic mutation testing with mutmut, one module at a time, each with a narrow, fast test selection.

Run it with ``make mutation MODULE=conformance/runner.py`` (or
``python tests/mutation.py conformance/runner.py``). mutmut changes the
module one point at a time (an operator, a number, a string, a keyword, a
deleted call) and runs the module's test selection (``SELECTION`` below)
against each change, in a copy of ``src/``, ``tests/`` and ``spec/`` under
``.cache/mutation/<module>/``. Its cache (``.mutmut-cache`` there) makes a
rerun incremental: a mutant already killed is not run again, and a survivor
is run again only when the tests have changed. While a run is going, read
its cache only (``sqlite3``): ``mutmut show`` there re-reads the module while
it holds a mutant and records the mutant's lines as the source's, and the run
then stops on a mutant it cannot find.

At the end it prints killed / total, then every survivor: those listed in
``tests/mutation_equivalent.txt`` with their one-line reason (a change no
user can notice), and the others, which make it exit non-zero. Each entry of
that file is four lines, then a blank line::

    MODULE conformance/runner.py
    - the original line, stripped
    + the mutated line, stripped
    = why no test can tell them apart

``--vectors`` (``make vector-mutation MODULE=core/chat.py``) judges the
conformance vectors instead: the module is any of the code a port must
reproduce (``core/...`` or ``conformance/backend.py``, which reads a step's
arguments), and the one test is ``tests/vectors_alone.py``, every vector
through the reference in one process, stopping at the first difference. Its
cache is ``.cache/mutation/vectors__<module>/``. A survivor is run again
when ``spec/`` has changed since the last run (mutmut's own check of the
tests reads only their ``.py`` files, so ``spec_changed`` keeps a digest of
``spec/`` beside the cache and marks the survivors untested). A survivor
listed in either equivalents file (``tests/vector_mutation_equivalent.txt``
says why no vector can tell a change no port's user could notice) is
explained. Each run records the module's
figures in ``tests/vector_mutation.json``, which ``make vector-coverage``
puts into the porting guide. ``--report`` prints and records from the
cache without running mutmut (survivors not run again against new vectors
stay survivors: the figures can only be low).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from vectors_alone import error_text_only

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path("src/sentinel_memory")
EQUIVALENT = ROOT / "tests" / "mutation_equivalent.txt"
VECTOR_EQUIVALENT = ROOT / "tests" / "vector_mutation_equivalent.txt"
#: Each module's figures from its last ``--vectors`` run: killed, equivalent, total.
VECTOR_SCORES = ROOT / "tests" / "vector_mutation.json"
#: The one test of ``--vectors``: every vector through the reference in one process, stopping at the first difference.
VECTORS_ALONE = ("tests/vectors_alone.py",)

_MESSAGES = ("tests/test_messages_edges.py", "tests/test_chat_messages.py", "tests/test_messages.py")

#: Each module's test selection: the narrowest files that cover it, the fast ones first (pytest stops at the
#: first failure), and pytest's own options where a selection leaves tests out (a timing test, which a
#: loaded machine fails whatever the code; a long end-to-end run that the faster tests before it cover).
SELECTION: dict[str, tuple[str, ...]] = {
    "stores/contract.py": ("tests/test_store_contract.py",),
    # The middleware's tests in files it shares with the other adapters are picked by their rule (LC-*, SRV-*,
    # MSG-18, OTL-10) or the word langchain; the agent's overhead timing and its long tool run are left out.
    "integrations/langchain/middleware.py": (
        "tests/test_langchain_middleware_options.py",
        "tests/test_langchain_agent.py",
        "tests/test_langchain_turns_edges.py",
        "tests/test_adapter_copies.py",
        "tests/test_agent_server.py",
        "tests/test_adapter_cache_options.py",
        "tests/test_telemetry_conversation.py",
        "tests/spec/test_adapter_copies_properties.py",
        "tests/spec/test_langchain_agent_properties.py",
        "-k",
        "(lc_ or langchain or middleware or srv_ or msg_18 or otl_10) and not overhead and not 24_tool_turns",
    ),
    "integrations/langgraph.py": (
        "tests/test_langgraph_edges.py",
        "tests/test_langgraph.py",
        "tests/spec/test_langgraph_properties.py",
        "tests/test_langgraph_agent.py",
    ),
    "conformance/runner.py": (
        "tests/test_runner_report.py",
        "tests/test_runner_edges.py",
        "tests/test_runner_verdicts.py",
        "tests/test_runner_defects.py",
    ),
    # The get_messages path. The mypy test checks the installed package, not the mutated copy, so it is left out.
    "core/chat.py": ("tests/test_chat_mutants.py", *_MESSAGES, "-k", "not mypy"),
    # The stored-form check is held to check_message by a property test.
    "core/message.py": (
        "tests/test_chat_mutants.py",
        *_MESSAGES,
        "tests/spec/test_messages_properties.py::test_msg_5_the_stored_form_check_agrees_with_check_message",
        "-k",
        "not mypy",
    ),
    # Then the tool results cleared (MSG-15) and the stable cut with its memo (MSG-14), which get_messages runs too.
    "core/request.py": (
        "tests/test_request_mutants.py",
        "tests/test_kept_reads.py",
        *_MESSAGES,
        "tests/test_cache_clear.py",
        "tests/test_stable_memo.py",
        "tests/test_cache_cut.py",
        "-k",
        "not mypy",
    ),
    "integrations/langchain/__init__.py": (
        "tests/test_langchain_turns_edges.py",
        "tests/test_langchain.py",
        "tests/spec/test_langchain_properties.py",
    ),
    # With the sessions' cache options, copies, runs on a server, telemetry and tools (OAI-3 .. OAI-13, INT-2):
    # the names keep the Agents SDK's tests of each file.
    "integrations/openai_agents.py": (
        "tests/test_openai_agents_edges.py",
        "tests/test_openai_agents.py",
        "tests/test_adapter_cache_options.py",
        "tests/test_adapter_copies.py",
        "tests/test_agent_server.py",
        "tests/test_telemetry_conversation.py",
        "tests/test_framework_memory_tools.py",
        "tests/spec/test_openai_agents_properties.py",
        "tests/spec/test_adapter_copies_properties.py",
        "-k",
        "oai or openai or session",
    ),
    # With the server tests of its runs (PAI-7 .. PAI-11) and the copies and reuse of its views (PAI-12): the module's name
    # keeps every test of the first two files.
    "integrations/pydantic_ai.py": (
        "tests/test_pydantic_ai_edges.py",
        "tests/test_pydantic_ai.py",
        "tests/test_adapter_copies.py",
        "tests/test_kept_reads.py",
        "tests/test_agent_server.py",
        "-k",
        "pai or pydantic",
    ),
    # The exact pruning both rankings share (REC-7, BM-7): its boundaries and properties.
    "core/maxscore.py": ("tests/spec/test_pruning_properties.py",),
    "core/bitsets.py": ("tests/test_bitsets.py", "tests/spec/test_bit_counts_properties.py"),
    # The BM25 ranking (BM-*): its rules, the vectors (their scores are pinned doubles) through the pruned search and
    # through the reference that scores every entry, the pruned search against that reference, the shapes kept.
    "core/bm25.py": (
        "tests/test_bm25.py",
        "tests/test_vector_mutation.py::test_the_vectors_alone_pass_on_the_reference",
        "tests/spec/test_bm25_properties.py",
        "tests/spec/test_pruning_properties.py",
    ),
    "core/linecounts.py": ("tests/test_line_counts.py", "tests/spec/test_first_ask_properties.py"),
    # Every telemetry test but the adapters' spans, whose branches the conversation's own tests take.
    "telemetry.py": (
        "tests/test_telemetry.py",
        "tests/spec/test_telemetry_properties.py",
        "tests/test_telemetry_failures.py",
        "tests/test_telemetry_conversation.py",
        "tests/spec/test_conversation_properties.py",
        "-k",
        "not every_adapter_span",
    ),
    # The files whose tests take shell.py's branches (coverage by test), without their tests of a second or more
    # (threads, processes, real chat text, the adapters' runs) whose branches the quick ones take too.
    "shell.py": (
        "tests/test_shell_mutants.py",
        "tests/test_shell_edges.py",
        "tests/test_unsaved_and_messages.py",
        "tests/test_persistence.py::test_per_11_autosave_after_every_persisted_change",
        "tests/test_persistence.py::test_per_5_bad_document_is_a_value_error",
        "tests/test_persistence.py::TestSqliteStore::test_mw_7_a_foreign_sqlite_database_is_never_written",
        "tests/test_shared_checks_first.py",
        "tests/test_group_commit.py",
        "tests/test_telemetry_conversation.py",
        "tests/test_counted.py",
        # A change's span counts what its compaction dropped, the one reader of an Outcome's Compaction fields.
        "tests/test_telemetry.py::test_otl_2_each_change_is_a_span_with_its_counts",
        # Which compactions are automatic, and the load's and the save's spans by name.
        "tests/test_telemetry.py::test_otl_3_every_compaction_is_an_event_with_its_counts",
        "tests/test_telemetry.py::test_otl_2_sync_and_async_memories_emit_the_same_spans",
        # Where a big document is parsed (off an async memory's loop), and with the collector paused.
        "tests/test_async_edges.py::test_aio_3_a_load_of_heavy_load_entries_is_parsed_off_the_loop",
        "tests/test_persistence.py::test_per_18_a_large_load_puts_what_it_made_in_the_oldest_generation",
        # A lossy load leaves the store out of step: the next autosave is whole.
        "tests/test_incremental_sync.py::test_mw_4_after_a_lossy_load_the_first_autosave_is_a_whole_save",
        "-k",
        "not srv_5 and not threads_share_one_counter and not messages_count_the_same_through"
        " and not test_mw_6_a_shared_change_checks_its_arguments and not folders_memory_tags"
        " and not otl_9_bad_arguments and not otl_10_an_async_memory_is_tagged"
        " and not every_adapter_span and not real_chat_text and not writer_killed_mid_group"
        " and not items_read_once_copied",
    ),
    # The async tests (the property that holds the async memory to the sync one, groups, shared checks) but the
    # ones that time the loop, run the example bot, mypy (the installed package) or a killed writer's subprocess.
    "aio.py": (
        "tests/test_async_edges.py",
        "tests/test_async_engine.py",
        "tests/test_async.py",
        "tests/test_async_cancel.py",
        "tests/test_async_cancel_in_save.py",
        "tests/test_async_loops.py",
        "tests/spec/test_async_properties.py",
        "tests/test_group_commit.py",
        "tests/test_shared_checks_first.py",
        # An async memory made without a ranking takes its store's (BM-11): the one async test of that file.
        "tests/test_ranking_saved.py::test_bm_11_an_async_memory_takes_the_saved_ranking_too",
        "-k",
        "not example_bot and not mypy and not never_stalls and not writer_killed and not srv_5",
    ),
    # A real store through each kit, forked writers included (the broken stores live in one process); then the
    # kit's concurrency checks, which fail the broken stores of tests/test_store_kit_catches.py alone (its
    # first-round stores first, then the async table stores).
    "testing.py": (
        "tests/test_store_kit_suite.py",
        "tests/test_store_kit_history.py",
        "tests/test_persistence.py::TestSqliteStore",
        "tests/test_store_kit_checks.py",
        "tests/test_async_recipe.py",
        "tests/test_store_kit_catches.py",
    ),
}

#: What the copy holds: the package, the tests and the data they read (the benchmarks' chat-text workload, and
#: the guide pages a test holds equal to the code, such as the telemetry guide's attribute table).
COPIED = ("src", "tests", "spec", "benchmarks", "docs")


def work_dir(module: str, *, by_vectors: bool = False) -> Path:
    return ROOT / ".cache" / "mutation" / (("vectors__" if by_vectors else "") + module.replace("/", "__"))


def ported(module: str) -> bool:
    """Whether ``module`` is code a port must reproduce: the core, and the backend's reading of arguments."""
    return (
        module.startswith("core/") and module.endswith(".py") and (ROOT / PACKAGE / module).is_file()
    ) or module == "conformance/backend.py"


def refresh(work: Path) -> None:
    """Copy the current source and tests into ``work``, keeping mutmut's cache there."""
    work.mkdir(parents=True, exist_ok=True)
    for part in COPIED:
        shutil.rmtree(work / part, ignore_errors=True)
        shutil.copytree(ROOT / part, work / part, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")


#: Beside a ``--vectors`` cache: the digest of ``spec/`` its survivors were last run against.
SPEC_DIGEST = "spec.sha256"


def spec_digest(spec: Path) -> str:
    """A digest of every file under ``spec`` (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in spec.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(spec).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def spec_changed(work: Path) -> bool:
    """Mark the survivors in ``work``'s cache untested when ``spec/`` differs from their last run; True when it did.

    mutmut reruns a survivor only when the digest of the tests' ``.py`` files changes, and the vectors are JSON:
    without this, a new vector would never be tried against the mutants that survived the old ones.
    """
    digest, stamp, cache = spec_digest(work / "spec"), work / SPEC_DIGEST, work / ".mutmut-cache"
    changed = not stamp.exists() or stamp.read_text(encoding="utf-8") != digest
    if changed and cache.exists():
        with sqlite3.connect(cache) as db:
            db.execute(
                "UPDATE Mutant SET status = 'untested' "
                "WHERE status NOT IN ('ok_killed', 'ok_suspicious', 'bad_timeout', 'untested')"
            )
    stamp.write_text(digest, encoding="utf-8")
    return changed


def vectors_runner() -> str:
    """The command of ``--vectors``: the vectors alone, in one process, stopping at the first difference."""
    return shlex.join([sys.executable, *VECTORS_ALONE])


def runner(tests: tuple[str, ...]) -> str:
    """The command mutmut runs for each mutant: the selection, one process, a fixed seed, stopping at the first failure."""
    return shlex.join(
        [
            sys.executable,
            "tests/mutation.py",
            "--pytest",
            *tests,
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            # Plugins are not loaded on their own (PYTEST_DISABLE_PLUGIN_AUTOLOAD, set below): loading every
            # installed one takes most of a run's time. The tests need hypothesis's alone.
            "-p",
            "_hypothesis_pytestplugin",
            "-o",
            "addopts=",
            "--hypothesis-seed=1",
        ]
    )


def run_selection(args: list[str]) -> int:
    """pytest on ``args``, for mutmut: 0 when every test passes, 1 otherwise.

    mutmut 2 reads exit code 1 alone as a kill, so a mutant that breaks an import (pytest's collection error,
    code 2) would count as a survivor; any failure to pass is a kill.

    pytest runs in a process of its own, in a session of its own (``--pytest-here``), and only the code it
    reports when ``pytest.main`` returns counts. A mutant of a fork (``if pid == 0`` turned around) makes the
    test run's process do a child's work and exit, while the forked copy goes on with the tests without the
    watchdog (a thread does not survive a fork) and holds mutmut's terminal open: mutmut would wait for it
    forever and read the first exit as a pass. So a run that ends without its report is a kill, and every
    process left in its session is killed when it ends.
    """
    fd, report = tempfile.mkstemp(prefix="selection-", suffix=".code")
    os.close(fd)
    try:
        run = subprocess.Popen(
            [sys.executable, __file__, "--pytest-here", *args],
            env=dict(os.environ, SELECTION_REPORT=report, SELECTION_TEST_LIMIT=str(TEST_LIMIT)),
            start_new_session=True,
        )
        try:
            run.wait(timeout=SELECTION_LIMIT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        return 0 if Path(report).read_text(encoding="ascii") == "0" else 1
    finally:
        os.unlink(report)


def run_selection_here(args: list[str]) -> int:
    """The test run of ``run_selection``: pytest in this process, its code written where ``SELECTION_REPORT`` says."""
    import pytest

    code = int(pytest.main(args, plugins=[_Watchdog(float(os.environ["SELECTION_TEST_LIMIT"]))]))
    Path(os.environ["SELECTION_REPORT"]).write_text(str(code), encoding="ascii")
    return code


#: The longest a whole selection may take: a run past it has hung outside any one test (the watchdog's).
SELECTION_LIMIT = 600.0


#: The longest a test of a selection may take before the run ends as a failure: the slowest takes under 10 s
#: with both cores busy (the async selection's slowest, 2.5 s), so a test past three times that waits for good.
TEST_LIMIT = 30.0


class _Watchdog:
    """Ends the run, as failed, when one test takes over ``TEST_LIMIT`` seconds.

    A mutant that makes a test wait forever (a lock never released, a task
    never woken) changes what a user sees, so it is a kill. mutmut's own
    limit is ten times the whole selection's unmutated run, minutes per such
    mutant; this ends it within half a minute, with every thread's traceback.
    """

    def __init__(self, limit: float) -> None:
        self.limit = limit
        # The tracebacks go to the stderr the run began with: pytest redirects descriptor 2 while a test runs.
        self.stderr = os.fdopen(os.dup(2), "w")

    def pytest_runtest_setup(self, item: object) -> None:
        import faulthandler

        faulthandler.dump_traceback_later(self.limit, exit=True, file=self.stderr)

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        import faulthandler

        faulthandler.cancel_dump_traceback_later()

    def pytest_unconfigure(self, config: object) -> None:
        self.stderr.close()


def survivors(work: Path) -> list[tuple[int, int, str]]:
    """``(mutant id, line number, status)`` of each mutant the tests did not kill."""
    with sqlite3.connect(work / ".mutmut-cache") as db:
        return db.execute(
            "SELECT Mutant.id, Line.line_number, Mutant.status FROM Mutant JOIN Line ON Mutant.line = Line.id "
            "WHERE Mutant.status NOT IN ('ok_killed', 'ok_suspicious', 'bad_timeout') ORDER BY Line.line_number, Mutant.id"
        ).fetchall()


def untested(work: Path) -> list[int]:
    """The mutants the run left untested."""
    with sqlite3.connect(work / ".mutmut-cache") as db:
        return [row[0] for row in db.execute("SELECT id FROM Mutant WHERE status = 'untested' ORDER BY id")]


def counts(work: Path) -> tuple[int, int, int]:
    """``(killed, of them by a timeout, total)``: a mutant whose tests failed (however slowly) or hung is killed."""
    with sqlite3.connect(work / ".mutmut-cache") as db:
        rows = dict(db.execute("SELECT status, count(*) FROM Mutant GROUP BY status").fetchall())
    killed = rows.get("ok_killed", 0) + rows.get("ok_suspicious", 0) + rows.get("bad_timeout", 0)
    return killed, rows.get("bad_timeout", 0), sum(rows.values())


def change(work: Path, mutant: int, env: dict[str, str]) -> tuple[str, str]:
    """The original and the mutated text of a mutant (its diff's removed and added lines, stripped)."""
    diff = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", str(mutant)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = diff.splitlines()
    old = " ".join(line[1:].strip() for line in lines if line.startswith("-") and not line.startswith("---"))
    new = " ".join(line[1:].strip() for line in lines if line.startswith("+") and not line.startswith("+++"))
    return old.strip(), new.strip()  # a blank line beside the changed one adds nothing


def equivalents(path: Path = EQUIVALENT) -> dict[tuple[str, str, str], str]:
    """``(module, original, mutated) -> reason`` from ``path`` (``tests/mutation_equivalent.txt``)."""
    listed: dict[tuple[str, str, str], str] = {}
    if not path.exists():
        return listed
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = [line for line in block.strip().splitlines() if not line.startswith("#")]
        if not lines:
            continue
        if len(lines) != 4 or [line[:2] for line in lines] != ["MO", "- ", "+ ", "= "]:
            raise ValueError(f"{path.name}: an entry is MODULE, -, +, = lines: {block!r}")
        listed[(lines[0].removeprefix("MODULE ").strip(), lines[1][2:].strip(), lines[2][2:].strip())] = lines[3][2:]
    return listed


def record(module: str, killed: int, equivalent: int, total: int) -> None:
    """Keep ``module``'s figures from a ``--vectors`` run in ``tests/vector_mutation.json``."""
    scores = json.loads(VECTOR_SCORES.read_text(encoding="utf-8")) if VECTOR_SCORES.exists() else {}
    scores[module] = {"killed": killed, "equivalent": equivalent, "total": total}
    VECTOR_SCORES.write_text(json.dumps(dict(sorted(scores.items())), indent=1) + "\n", encoding="utf-8")


#: Under --vectors, why a survivor of a kind no vector can see is one: a protocol step answers an error by its code.
ERROR_TEXT = "an error's text: a protocol step answers an error by its code alone (PROTOCOL.md, Errors)"


def main(argv: list[str]) -> int:
    by_vectors = "--vectors" in argv
    module = next((arg for arg in argv if not arg.startswith("--")), "")
    if by_vectors and not ported(module):
        print(f"{module!r} is not code a port reproduces: core/<module>.py or conformance/backend.py", file=sys.stderr)
        return 2
    if not by_vectors and module not in SELECTION:
        print(f"no test selection for {module!r}; one of: {', '.join(SELECTION)}", file=sys.stderr)
        return 2
    work = work_dir(module, by_vectors=by_vectors)
    report_only = "--report" in argv and (work / ".mutmut-cache").exists()
    if not report_only:
        refresh(work)
        if by_vectors:
            spec_changed(work)
    env = dict(
        os.environ, PYTHONPATH=str(work / "src"), HYPOTHESIS_PROFILE="mutants", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"
    )
    env.pop("PYTEST_ADDOPTS", None)
    if by_vectors:  # tests/vectors_alone.py passes a change to an error's text at once (it cannot be seen)
        pristine = work / "pristine.py"
        shutil.copy(work / PACKAGE / module, pristine)
        env.update(MUTATED=str(work / PACKAGE / module), PRISTINE=str(pristine))

    def mutmut_run(*which: str) -> None:
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                sys.executable,
                "-m",
                "mutmut",
                "run",
                *which,
                "--paths-to-mutate",
                str(PACKAGE / module),
                "--tests-dir",
                # Under --vectors the vectors are the tests: a survivor is run again when spec/ changes.
                "tests:spec" if by_vectors else "tests",
                "--runner",
                vectors_runner() if by_vectors else runner(SELECTION[module]),
                "--test-time-multiplier",
                "4",
                "--test-time-base",
                "20",
                "--simple-output",
                "--no-progress",
            ],
            cwd=work,
            env=env,
            check=False,
        )

    if not report_only:
        mutmut_run()
        # mutmut 2 finds a mutant's cached status by its line's text alone, so a mutant of a line that repeats an
        # earlier one (a second `return False`) takes the earlier mutant's status and is never run: run each alone.
        for mutant in untested(work):
            mutmut_run(str(mutant))
    killed, timeouts, total = counts(work)
    if not total:
        # mutmut makes no mutant when the unmutated code fails its selection: that is no pass.
        print(f"\n{module}: no mutant was run (does the selection pass on the unmutated code?)", file=sys.stderr)
        return 1
    listed = equivalents() | (equivalents(VECTOR_EQUIVALENT) if by_vectors else {})
    explained, unexplained = [], []
    for mutant, line, status in survivors(work):
        old, new = change(work, mutant, env)
        reason = listed.get((module, old, new))
        if reason is None and by_vectors and error_text_only(old, new):
            reason = ERROR_TEXT
        (explained if reason is not None else unexplained).append((mutant, line, status, old, new, reason))
    if by_vectors:
        record(module, killed, len(explained), total)
    judged = " by the vectors alone" if by_vectors else ""
    print(
        f"\n{module}{judged}: {killed} / {total} killed ({timeouts} by a timeout: ten times the unmutated run), "
        f"{len(explained)} equivalent, {len(unexplained)} unexplained"
    )
    # mutmut counts lines from 0; an editor from 1.
    for mutant, line, _status, old, new, reason in explained:
        print(f"  equivalent #{mutant} line {line + 1}: {old!r} -> {new!r}: {reason}")
    for mutant, line, status, old, new, _ in unexplained:
        print(f"  SURVIVED ({status}) #{mutant} line {line + 1}:\n    - {old}\n    + {new}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pytest"]:
        sys.exit(run_selection(sys.argv[2:]))
    if sys.argv[1:2] == ["--pytest-here"]:
        sys.exit(run_selection_here(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
