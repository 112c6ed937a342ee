"""Shared fixtures: a fake clock and memories built on it, and the tests' own redis-server."""

from __future__ import annotations

import gc
import logging
import os
import sys

import pytest
from hypothesis import HealthCheck, Phase, settings

import sentinel_memory as sm
from support import FakeClock, redis_server  # noqa: F401 - a fixture, shared with the benchmarks

# The property tests run in every `make test` with the "fast" profile, which
# keeps the whole suite under four minutes on two cores (two xdist workers);
# `--hypothesis-profile=thorough` (or HYPOTHESIS_PROFILE=thorough) runs ten
# times as many examples. Deadlines are off: this machine's timings are noisy.
settings.register_profile(
    "fast",
    max_examples=300,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=3000,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# The mutation check (tests/mutants.py) wants a quick verdict, not a minimal
# example, and must not replay examples saved by another source tree.
settings.register_profile(
    "mutants",
    parent=settings.get_profile("fast"),
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make(clock):
    """``make(**options)``: a memory on the fake clock, not loading by default."""

    def build(**options):
        options.setdefault("clock", clock)
        return sm.create_memory(**options)

    return build


@pytest.fixture
def mem(make):
    return make()


def pytest_terminal_summary(terminalreporter):
    """Print the conformance run's summary line (tests/test_conformance.py) at the end of the test output."""
    module = sys.modules.get("test_conformance")
    for line in getattr(module, "SUMMARIES", []):
        terminalreporter.write_line(line)


@pytest.fixture
def redis_client(redis_server):  # noqa: F811 - the imported fixture, requested by name
    """A client of the tests' redis-server, emptied before each test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    return client


class _PendingTasks(logging.Handler):
    """Collects asyncio's "Task was destroyed but it is pending!" reports: a test that leaves one fails (AIO-4)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Task was destroyed but it is pending" in message:
            self.reports.append(message)


_PENDING_TASKS = _PendingTasks()
logging.getLogger("asyncio").addHandler(_PENDING_TASKS)


@pytest.fixture(autouse=True)
def _no_task_destroyed_pending(request):
    """Fails the test after which asyncio reports a task destroyed while pending: one left running, never awaited.

    asyncio reports it when the task is garbage collected, so the tests of a module that uses asyncio
    collect at their end, and the report is the test's own; no warning filter can turn it into an error.
    """
    yield
    if getattr(request.module, "asyncio", None) is not None:
        gc.collect()
    if _PENDING_TASKS.reports:
        reports, _PENDING_TASKS.reports[:] = list(_PENDING_TASKS.reports), []
        pytest.fail("asyncio destroyed a pending task:\n" + "\n".join(reports), pytrace=False)
