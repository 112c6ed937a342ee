"""Per-call time of ``Memory.remember`` and ``Memory.get_context`` for the source tree on ``PYTHONPATH``.

Compares two trees in one sitting: run it once per tree, alternating, and
keep the best of each (the machine's other load only ever adds time)::

    PYTHONPATH=OLD/src python benchmarks/shell_speed.py
    PYTHONPATH=NEW/src python benchmarks/shell_speed.py

It prints one JSON line: microseconds of this process's CPU time per call, the best batch of
``--repeat`` (CPU time, so that other processes on a busy machine add less noise).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import sentinel_memory as sm


def per_call(function: Callable[[int], object], calls: int, repeat: int) -> float:
    """The best of ``repeat`` batches of ``calls`` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time_ns()
        for i in range(calls):
            function(i)
        best = min(best, (time.process_time_ns() - start) / calls / 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--calls", type=int, default=200, help="get_context calls a batch (remember: ten times as many)"
    )
    args = parser.parse_args()
    clock = [1_792_310_400_000]
    mem = sm.create_memory(limit=10**7, clock=lambda: clock[0])
    for i in range(args.entries):
        mem.remember(f"fact:{i}", f"the user said thing number {i} about topic {i % 37}", importance=(i % 10) / 10)
    counter = iter(range(10**9))

    def remember(i: int) -> None:
        mem.remember(f"new:{next(counter)}", "a new fact about the weather", importance=0.5)

    def remember_overwrite(i: int) -> None:
        mem.remember(f"fact:{i % args.entries}", f"changed {i}", importance=0.4)

    # The contexts first, over the entries made above; then the remembers, which add entries.
    results = {
        "get_context (budget 500)": per_call(lambda i: mem.get_context(token_budget=500), args.calls, args.repeat),
        "get_context (budget 500, query)": per_call(
            lambda i: mem.get_context(token_budget=500, query=f"topic {i % 37}"), args.calls, args.repeat
        ),
        "remember (new key)": per_call(remember, args.calls * 10, args.repeat),
        "remember (overwrite)": per_call(remember_overwrite, args.calls * 10, args.repeat),
    }
    print(json.dumps({name: round(us, 2) for name, us in results.items()}))


if __name__ == "__main__":
    main()
