"""The mutation tool's configuration cannot silently rot (tests/mutation.py, tests/mutation_equivalent.txt)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

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
    assert command[1:3] == ["tests/mutation.py", "--pytest"] and "-x" in command and "--hypothesis-seed=1" in command
    assert command[command.index("-k") + 1] == (
        "(lc_ or langchain or middleware or srv_ or msg_18 or otl_10) and not overhead and not 24_tool_turns"
    )  # a -k expression with spaces and parentheses stays one argument


def test_a_selection_that_cannot_be_collected_is_a_kill(tmp_path):
    """A mutant that breaks an import fails the selection with 1, the one code mutmut 2 reads as a kill."""
    (tmp_path / "test_broken.py").write_text("import no_such_module_here\n\n\ndef test_x():\n    pass\n")
    (tmp_path / "test_fine.py").write_text("def test_x():\n    pass\n")
    options = ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path)]
    assert mutation.run_selection([str(tmp_path / "test_broken.py"), *options]) == 1
    assert mutation.run_selection([str(tmp_path / "test_fine.py"), *options]) == 0


def test_a_test_that_hangs_ends_the_selection_as_a_kill(tmp_path):
    """A test still running after TEST_LIMIT seconds ends the run with 1 (a kill), at once, with the tracebacks."""
    (tmp_path / "test_hangs.py").write_text("import time\n\n\ndef test_x():\n    time.sleep(600)\n")
    (tmp_path / "test_quick.py").write_text("import time\n\n\ndef test_x():\n    time.sleep(0.5)\n")
    script = (
        "import sys, mutation; mutation.TEST_LIMIT = 5.0; "
        "sys.exit(mutation.run_selection(sys.argv[1:] + ['-q', '-p', 'no:cacheprovider', '-o', 'addopts=']))"
    )
    tests = str(Path(mutation.__file__).parent)

    def selection(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / name), "--rootdir", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": tests},
            check=False,
        )

    started = time.monotonic()
    hung = selection("test_hangs.py")
    assert hung.returncode == 1 and time.monotonic() - started < 60
    assert "Timeout" in hung.stderr and "test_hangs.py" in hung.stderr
    assert selection("test_quick.py").returncode == 0


def test_a_fork_turned_around_is_a_kill_and_leaves_nothing_running(tmp_path):
    """A mutant that makes the test run's process do a forked child's work and exit 0 is a kill, at once, and the forked copy that goes on with the tests (hung here, without the watchdog) is killed with its session."""
    (tmp_path / "test_fork.py").write_text(
        "import os, threading\n\n\n"
        "def test_x():\n"
        "    pid = os.fork()\n"
        "    if pid != 0:  # turned around: the test run exits as a child would\n"
        f"        open({str(tmp_path / 'copy.pid')!r}, 'w').write(str(pid))\n"
        "        os._exit(0)\n"
        "    (lock := threading.Lock()).acquire()\n"
        "    lock.acquire()  # the forked copy waits for good\n"
    )
    started = time.monotonic()
    options = ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path)]
    assert mutation.run_selection([str(tmp_path / "test_fork.py"), *options]) == 1
    assert time.monotonic() - started < 20
    copy = int((tmp_path / "copy.pid").read_text())
    deadline = time.monotonic() + 10
    while _running(copy) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(copy)


def _running(pid: int) -> bool:
    """Whether process ``pid`` is still there and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_run_that_makes_no_mutant_fails(monkeypatch, tmp_path, capsys):
    """A selection that fails on the unmutated code leaves mutmut no mutant to run: the run exits 1, saying so."""
    monkeypatch.setattr(mutation, "work_dir", lambda module, by_vectors=False: tmp_path)
    monkeypatch.setattr(mutation, "refresh", lambda work: None)
    monkeypatch.setattr(mutation.subprocess, "run", lambda *args, **kwargs: None)
    monkeypatch.setattr(mutation, "untested", lambda work: [])
    monkeypatch.setattr(mutation, "counts", lambda work: (0, 0, 0))
    assert mutation.main(["shell.py"]) == 1
    assert "no mutant was run" in capsys.readouterr().err
