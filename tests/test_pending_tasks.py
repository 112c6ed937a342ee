"""The suite's own check for tasks left pending (tests/pending_tasks.py, AIO-4), run against tests that strand one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = "from pending_tasks import _no_task_destroyed_pending, _no_task_destroyed_pending_in_module  # noqa: F401\n"

STRAND = """
import asyncio
import gc


async def forever():
    await asyncio.sleep(3600)


def strand():
    # a task that started and waits, on a loop closed under it: it and its sleep refer to each other, so
    # only the collector frees them, and asyncio then reports the task destroyed while pending
    loop = asyncio.new_event_loop()
    task = loop.create_task(forever())
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    return task
"""


def run_inner(tmp_path: Path, body: str) -> str:
    """Run one test module (``STRAND`` + ``body``) under the check in a fresh pytest; its report."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_inner.py").write_text(STRAND + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly", "-rfE"],
        check=False,
        cwd=tmp_path,
        env={"PYTHONPATH": str(TESTS), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr


def test_aio_4_a_task_dropped_pending_fails_the_test_that_dropped_it(tmp_path: Path) -> None:
    """AIO-4: a test that drops a pending task, even one past the youngest generation, fails at its own teardown; the next test starts clean."""
    out = run_inner(
        tmp_path,
        """
        def test_clean_before():
            pass

        def test_drops():
            strand()

        def test_clean_after():
            pass

        def test_drops_after_the_youngest_collection():
            task = strand()
            gc.collect(0)  # survived the youngest generation's collection, still referenced: now in the next
            del task
        """,
    )
    assert "4 passed, 2 errors" in out, out
    assert "ERROR at teardown of test_drops_after_the_youngest_collection _" in out, out
    assert "ERROR at teardown of test_drops _" in out, out
    assert "asyncio destroyed a pending task after this test:\nTask was destroyed but it is pending!" in out, out


def test_aio_4_a_task_promoted_before_it_was_dropped_fails_the_modules_last_test(tmp_path: Path) -> None:
    """AIO-4: a pending task the collector had promoted (past the young collection after each test) is found by the module's full collection, which names the module."""
    out = run_inner(
        tmp_path,
        """
        def test_drops_an_old_task():
            task = strand()
            gc.collect()
            gc.collect()  # survived twice, still referenced: now in the oldest generation
            del task

        def test_last():
            pass
        """,
    )
    assert "2 passed, 1 error" in out, out
    assert "ERROR at teardown of test_last _" in out, out
    assert "asyncio destroyed a pending task by a test of test_inner (found by the module's full collection):" in out, (
        out
    )


def test_aio_4_tasks_that_end_leave_no_report(tmp_path: Path) -> None:
    """AIO-4: a module whose tasks all end, or are cancelled and awaited, passes with no error."""
    out = run_inner(
        tmp_path,
        """
        def test_ends():
            asyncio.run(asyncio.sleep(0))

        def test_cancelled():
            async def main():
                task = asyncio.ensure_future(forever())
                await asyncio.sleep(0)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

            asyncio.run(main())

        import pytest
        """,
    )
    assert "2 passed in" in out and "error" not in out, out
