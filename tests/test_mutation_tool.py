"""The mutation tool's configuration cannot silently rot (tests/mutation.py, tests/mutation_equivalent.txt)."""

from __future__ import annotations

import shlex

import mutation


def test_each_selection_names_test_files_that_exist():
    """Each module's test selection is of test files of this repository, and the module exists."""
    for module, selection in mutation.SELECTION.items():
        assert (mutation.ROOT / mutation.PACKAGE / module).is_file(), module
        files = [arg.split("::")[0] for arg in selection if arg.startswith("tests/")]
        assert files and all((mutation.ROOT / name).is_file() for name in files), module


def test_each_equivalent_mutant_is_of_a_selected_module_and_its_line_is_there():
    """Each listed equivalent names a module with a selection, whose source still holds the original line, and a reason."""
    listed = mutation.equivalents()
    assert listed
    for (module, old, new), reason in listed.items():
        assert module in mutation.SELECTION and old != new and reason.strip()
        source = (mutation.ROOT / mutation.PACKAGE / module).read_text(encoding="utf-8")
        assert old in {line.strip() for line in source.splitlines()}, (module, old)


def test_the_runner_stops_at_the_first_failure_with_a_fixed_seed():
    """The command run for each mutant is pytest on the selection alone, stopping at the first failure, seeded."""
    command = shlex.split(mutation.runner(mutation.SELECTION["integrations/langchain/middleware.py"]))
    assert command[1:3] == ["-m", "pytest"] and "-x" in command and "--hypothesis-seed=1" in command
    assert command[command.index("-k") + 1] == "not overhead and not 24_tool_turns"
