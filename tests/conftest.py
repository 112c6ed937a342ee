"""Shared fixtures: a fake clock and memories built on it, and the tests' own redis-server."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, Phase, settings

import sentinel_memory as sm
from pending_tasks import _no_task_destroyed_pending, _no_task_destroyed_pending_in_module  # noqa: F401 - autouse fixtures (AIO-4)
from support import FakeClock, redis_server  # noqa: F401 - a fixture, shared with the benchmarks

# The property tests run with the "fast" profile by default, the one `make test-all` (and CI) uses;
# `make test`, the everyday run, takes the "quick" profile and leaves out the tests marked slow below, to stay
# within five minutes on two cores; `--hypothesis-profile=thorough` (or HYPOTHESIS_PROFILE=thorough) runs ten
# times as many examples. Deadlines are off: this machine's timings are noisy.
settings.register_profile(
    "quick",
    max_examples=100,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
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
# A hunt (tests/mutant_hunt.py) runs the machine against a mutant: it must neither replay examples saved
# against other mutants nor save its own where the everyday runs would replay them. It shrinks what it finds.
settings.register_profile("hunt", parent=settings.get_profile("fast"), database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


#: The long tests, by the start of their ids (a folder, a file, a test): `make test` leaves them out (``-m "not
#: slow"``) and `make test-all`, which CI runs, runs them. Each takes seconds to minutes on two cores, measured
#: with pytest's --durations: every serve --bug mistake against every vector, the wheel and the sdist built and
#: tested, SIGKILL and fault-injection loops, telemetry failing at every point, the state machines, the
#: benchmarks and the executed notebooks.
SLOW = (
    "benchmarks/",
    "notebooks/",
    "tests/spec/test_damage.py::test_per_13_every_single_bit_flip",
    "tests/spec/test_damage.py::test_per_18_what_a_load_does_with_the_cycle_collector",
    "tests/spec/test_differential.py::test_the_machine_catches_a_broken_backend_and_writes_a_vector",
    "tests/spec/test_langchain_properties.py",
    "tests/spec/test_machine.py",
    "tests/test_agent_server.py",
    "tests/test_async.py::test_aio_2_the_async_example_bot_runs",
    "tests/test_async_cancel_in_save.py",
    "tests/test_async_loops.py::test_aio_3_a_big_load_never_stalls_the_loop",
    "tests/test_async_recipe.py",
    "tests/test_cache_clear.py::test_msg_15_clearing_lowers_the_agent_historys_cost",
    "tests/test_conformance.py::test_each_deliberate_bug_fails_the_run_with_a_diff",
    "tests/test_conformance.py::test_the_vectors_catch_every_deliberate_bug",
    "tests/test_docs.py::test_site_builds_strictly",
    "tests/test_durability.py::test_per_9_sigkill_loop",
    "tests/test_group_commit.py::test_per_23_mw_10_a_writer_killed_mid_group_leaves_the_old_or_the_new_document",
    "tests/test_hostile_input.py",
    "tests/test_many_writers.py::test_mw_5_eight_threads_of_mixed_calls_lose_nothing",
    "tests/test_named_errors.py::test_wrp_4_a_container_whose_own_methods_raise_is_refused_by_name",
    "tests/test_named_errors.py::test_wrp_4_a_str_whose_own_methods_raise_reads_as_its_text",
    "tests/test_random_census.py",
    "tests/test_serve_store_objects.py",
    "tests/test_site.py::test_no_raw_restructuredtext_or_escaped_pipe",
    "tests/test_site.py::test_wide_tables_fit_when_a_browser_lays_them_out",
    "tests/test_store_kit.py::test_per_2_every_vector_passes_with_a_store_from_a_factory_in_the_loop",
    "tests/test_store_kit_catches.py",
    "tests/test_store_kit_checks.py::test_per_2_a_store_with_everything_right_passes_every_check",
    "tests/test_telemetry_failures.py",
    "tests/test_wheel.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


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
