"""The mutation check's bugs still apply to the current source (see tests/mutants.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import mutants
import pytest


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_mutant_applies_to_current_source(mutant, tmp_path):
    """Each deliberate bug's original line appears exactly once, so `make mutants` tests what it says."""
    shutil.copytree(mutants.ROOT / "src", tmp_path / "src")
    if mutant.file.startswith("tests/"):
        shutil.copytree(mutants.ROOT / "tests", tmp_path / "tests")
    mutants.apply(mutant, tmp_path)
    changed = mutants.path_of(mutant, tmp_path).read_text(encoding="utf-8")
    assert mutant.new in changed and changed != mutants.path_of(mutant, mutants.ROOT).read_text(encoding="utf-8")


def test_there_are_at_least_eight_mutants():
    """The spec must be shown to catch at least eight distinct deliberate bugs."""
    assert len({m.name for m in mutants.MUTANTS}) >= 8 and Path(mutants.__file__).name == "mutants.py"


def test_each_mutant_names_test_files_that_exist():
    """A mutant's tests are files of this repository (or a test of one, ``file::test``), so `make mutants` runs what the mutant says catches it."""
    for mutant in mutants.MUTANTS:
        assert mutant.tests, mutant.name
        for name in mutant.tests:
            path, _, test = name.partition("::")
            assert (mutants.ROOT / path).is_file() and name.startswith("tests/"), (mutant.name, name)
            assert not test or f"def {test}(" in (mutants.ROOT / path).read_text(encoding="utf-8"), (mutant.name, name)


def test_the_stores_cli_folder_and_runner_have_mutants_of_their_own():
    """Issue 36: every store, the command line, the folder and the runner's comparison are measured by at least one mutant."""
    modules = {
        "stores/sqlitestore.py",
        "stores/filestore.py",
        "stores/redisstore.py",
        "cli.py",
        "folder.py",
        "conformance/compare.py",
        "conformance/runner.py",
    }
    assert modules <= {mutant.file for mutant in mutants.MUTANTS}


def test_the_caught_by_column_names_the_frame_and_the_test():
    """The table names a spec rule with its machine, and a plain test once, whichever folder of tests/ it is in."""
    spec = (
        "tests/spec/test_machine.py:431: in entries_match_model\n    assert x\n"
        "FAILED tests/spec/test_machine.py::TestMemoryComparison::runTest - AssertionError\n"
    )
    assert mutants.catcher(spec) == "test_machine.entries_match_model (test_machine::TestMemoryComparison::runTest)"
    plain = (
        "tests/test_cli_reads.py:80: in test_cli_2_compact\n    assert x\n"
        "FAILED tests/test_cli_reads.py::test_cli_2_compact[a b] - AssertionError\n"
    )
    assert mutants.catcher(plain) == "test_cli_reads::test_cli_2_compact"
    helper = (
        "tests/test_runner_verdicts.py:51: in test_x\n    verdicts()\ntests/test_runner_verdicts.py:40: in verdicts\n"
        "FAILED tests/test_runner_verdicts.py::test_x - KeyError\n"
    )
    assert mutants.catcher(helper) == "test_runner_verdicts.verdicts (test_runner_verdicts::test_x)"


def test_the_code_added_since_the_last_round_has_mutants_of_its_own():
    """Issue 45, issue 43: logging, the plumbing, the async engine and Redis store, LangChain (the history and the agent middleware), line counts, the fills, turns, the random mode and the kit are measured."""
    modules = {
        "logs.py",
        "shell.py",
        "aio.py",
        "stores/aioredis.py",
        "integrations/langchain/__init__.py",
        "integrations/langchain/middleware.py",
        "core/tokens.py",
        "core/prompt.py",
        "core/turns.py",
        "tests/spec/test_differential.py",
        "testing.py",
    }
    counts = {module: sum(m.file == module for m in mutants.MUTANTS) for module in modules}
    assert min(counts.values()) >= 3, counts


def test_the_report_gives_killed_over_total_per_module_and_selects_by_file():
    """`make mutants` ends with killed / total for each module, in the list's order; a part selects by name or file prefix."""
    first = mutants.MUTANTS[0]
    a = mutants.Mutant("a", "core/x.py", "", "")
    b = mutants.Mutant("b", "logs.py", "", "")
    c = mutants.Mutant("c", "core/x.py", "", "")
    assert mutants.per_module([(a, True), (b, False), (c, False)]) == [("core/x.py", 1, 2), ("logs.py", 0, 1)]
    assert {m.file for m in mutants.chosen_mutants(["stores/"])} >= {"stores/aioredis.py", "stores/filestore.py"}
    assert all(m.file.startswith("stores/") for m in mutants.chosen_mutants(["stores/"]))
    assert mutants.chosen_mutants([]) == mutants.MUTANTS
    assert [m.name for m in mutants.chosen_mutants([first.name])][:1] == [first.name]
