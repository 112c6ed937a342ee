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
    mutants.apply(mutant, tmp_path)
    changed = (tmp_path / mutants.PACKAGE / mutant.file).read_text(encoding="utf-8")
    assert mutant.new in changed and changed != (mutants.ROOT / mutants.PACKAGE / mutant.file).read_text()


def test_there_are_at_least_eight_mutants():
    """The spec must be shown to catch at least eight distinct deliberate bugs."""
    assert len({m.name for m in mutants.MUTANTS}) >= 8 and Path(mutants.__file__).name == "mutants.py"


def test_each_mutant_names_test_files_that_exist():
    """A mutant's tests are files of this repository, so `make mutants` runs what the mutant says catches it."""
    for mutant in mutants.MUTANTS:
        assert mutant.tests, mutant.name
        for name in mutant.tests:
            assert (mutants.ROOT / name).is_file() and name.startswith("tests/"), (mutant.name, name)


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
