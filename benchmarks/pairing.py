"""Timing this library and a peer back to back, in turns of order: the ratios the reports print."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any


def paired(
    benchmark: Any, own: Callable[[], object], peer: Callable[[], object], *, rounds: int, warmup: int
) -> list[float]:
    """Time ``own`` and ``peer`` back to back in every round, swapping which goes first; return the rounds' ratios.

    Both meet the same moments of a shared machine, and each runs after the
    other, caches full of the other's data. ``warmup`` rounds run first and
    are not counted. The medians of the ratios and of both times go into
    ``benchmark.extra_info`` (``ratio``, ``own``, ``peer``); with the
    benchmarks disabled (a smoke run) there is one round and no warm-up.
    """
    ratios: list[float] = []
    own_times: list[float] = []
    peer_times: list[float] = []
    swap = itertools.cycle([False, True])

    def timed(function: Callable[[], object]) -> float:
        start = time.perf_counter()
        function()
        return time.perf_counter() - start

    def one_round() -> None:
        if next(swap):
            theirs, ours = timed(peer), timed(own)
        else:
            ours, theirs = timed(own), timed(peer)
        ratios.append(ours / theirs)
        own_times.append(ours)
        peer_times.append(theirs)

    for _ in range(0 if benchmark.disabled else warmup):  # both past their first calls; not counted
        one_round()
    for kept in (ratios, own_times, peer_times):
        kept.clear()
    benchmark.pedantic(one_round, rounds=1 if benchmark.disabled else rounds)
    benchmark.extra_info.update(
        ratio=statistics.median(ratios), own=statistics.median(own_times), peer=statistics.median(peer_times)
    )
    return ratios
