"""The suite's check that no test leaves an asyncio task pending for good (AIO-4), as two autouse fixtures.

asyncio reports "Task was destroyed but it is pending!" when such a task is garbage collected, so the check
collects garbage after the tests of a module that uses asyncio and fails on a report; no warning filter can
turn the report into an error. It collects in two steps because a full collection walks every object the
run holds (hypothesis, the frameworks, the tokenizers' tables), which cost most of the suite's time when it
ran after every test:

- after each test, the young generations only: a task the test dropped is young unless the test lived long
  enough to promote it, and then the report names the test;
- after each module, a full collection, which finds a task that was promoted; the report then names the
  module, whose last test errors at teardown.

``tests/conftest.py`` imports both fixtures; ``tests/test_pending_tasks.py`` runs each step against a test
that strands a task.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from typing import Any

import pytest


class PendingTasks(logging.Handler):
    """Collects asyncio's "Task was destroyed but it is pending!" reports."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Task was destroyed but it is pending" in message:
            self.reports.append(message)

    def fail_on_reports(self, after: str) -> None:
        """Fail (once per report) if asyncio reported a task destroyed while pending since the last call."""
        if self.reports:
            reports, self.reports[:] = list(self.reports), []
            pytest.fail(f"asyncio destroyed a pending task {after}:\n" + "\n".join(reports), pytrace=False)


PENDING_TASKS = PendingTasks()
logging.getLogger("asyncio").addHandler(PENDING_TASKS)

#: The generations collected after each test: 0 and 1, the objects made since the last full collection.
YOUNG = 1


def _uses_asyncio(module: Any) -> bool:
    return getattr(module, "asyncio", None) is not None


@pytest.fixture(autouse=True)
def _no_task_destroyed_pending(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test after which asyncio reports a task destroyed while pending: one left running, never awaited."""
    yield
    if _uses_asyncio(request.module):
        gc.collect(YOUNG)
    PENDING_TASKS.fail_on_reports("after this test")


@pytest.fixture(autouse=True, scope="module")
def _no_task_destroyed_pending_in_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the module's last test (at teardown) if a full collection finds a pending task one of its tests left."""
    yield
    if _uses_asyncio(request.module):
        gc.collect()
    PENDING_TASKS.fail_on_reports(f"by a test of {request.module.__name__} (found by the module's full collection)")
