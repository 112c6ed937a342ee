"""How many of ``serve --bug``'s injected bugs the random mode finds on its own: ``make random-report``.

    python tests/random_mode_report.py [--thorough | --cases N --steps N] [NAME-PART ...]

The default size is the random test's own (``DEFAULT_CASES`` cases of up to
``DEFAULT_STEPS`` steps); ``--thorough`` is the porting guide's thorough run.

Runs the differential machine of ``tests/spec/test_differential.py`` against
a backend with each deliberate bug, with a fixed budget of examples and a
fixed seed, and prints one row per bug: found or not, and in how many
seconds. The vectors must catch every bug (the tests insist); this measures
the other net, the one that finds what nobody wrote down.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from spec.test_differential import (
    DEFAULT_CASES,
    DEFAULT_STEPS,
    SERVE,
    THOROUGH_CASES,
    THOROUGH_STEPS,
    Differential,
)

from sentinel_memory.conformance.bugs import BUGS
from sentinel_memory.conformance.runner import BackendError, Subprocess


def finds(bug: str, cases: int = DEFAULT_CASES, steps: int = DEFAULT_STEPS) -> bool:
    """Whether the machine, against a backend with ``bug``, fails within the budget."""

    class Broken(Differential):
        command: ClassVar[list[str]] = [*SERVE, "--bug", bug]
        process: ClassVar[Subprocess | None] = None

    try:
        run_state_machine_as_test(
            Broken,
            settings=settings(
                max_examples=cases,
                stateful_step_count=steps,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
                deadline=None,
                # Found or not is all this measures: a failure is not shrunk (that alone took minutes).
                phases=[Phase.explicit, Phase.generate],
            ),
        )
        return False
    except (AssertionError, BackendError):  # a backend that dies where the reference answers is found too
        return True
    except ExceptionGroup as group:  # several distinct failures: found, when one of them is a difference
        return group.subgroup((AssertionError, BackendError)) is not None
    finally:
        if Broken.process is not None:
            Broken.process.stop()


def main(argv: list[str]) -> int:
    cases, steps, names = DEFAULT_CASES, DEFAULT_STEPS, []
    words = iter(argv)
    for word in words:
        if word == "--thorough":
            cases, steps = THOROUGH_CASES, THOROUGH_STEPS
        elif word == "--cases":
            cases = int(next(words))
        elif word == "--steps":
            steps = int(next(words))
        else:
            names.append(word)
    chosen = [name for name in sorted(BUGS) if not names or any(part in name for part in names)]
    found = 0
    print(f"| bug | found by {cases} random cases of up to {steps} steps | seconds |")
    print("|---|---|---:|")
    for name in chosen:
        started = time.perf_counter()
        hit = finds(name, cases, steps)
        found += hit
        print(f"| {name} | {'yes' if hit else 'no'} | {time.perf_counter() - started:.1f} |", flush=True)
    print(
        f"\nthe random mode found {found} of {len(chosen)} injected bugs on its own ({cases} cases of up to {steps} steps)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
