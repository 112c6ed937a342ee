"""What to keep: importance first, freshness as a tiebreaker (RET-1, RET-2, CMP-1).

    freshness = max(0, 1 - age / recency_window)     age = max(0, now - updated_at)
    retention = importance + 0.1 * freshness

Freshness adds at most 0.1, so importance dominates and freshness only settles
close calls: a brand-new 0.5 (retention 0.6) beats a day-old 0.55 but loses to
a day-old 0.65. The formulas are evaluated in exactly this order in IEEE
doubles, so a port that follows them gets bit-identical scores.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence

from .values import Entry, by_age

__all__ = ["FRESHNESS_WEIGHT", "by_retention", "freshness", "keep_order", "ranking", "retention"]

#: RET-2: the most freshness can add to an entry's importance.
FRESHNESS_WEIGHT = 0.1


def freshness(entry: Entry, now: int | float, recency_window: int | float) -> float:
    """1.0 for an entry updated now, falling linearly to 0 over ``recency_window`` (RET-1).

    An entry updated "in the future" (a clock that went back) has age 0, so
    freshness never exceeds 1 and never adds more than its documented cap.
    """
    age = max(0, now - entry.updated_at)
    return max(0.0, 1 - age / recency_window)


def retention(entry: Entry, now: int | float, recency_window: int | float) -> float:
    """``importance + 0.1 * freshness`` (RET-2)."""
    return entry.importance + FRESHNESS_WEIGHT * freshness(entry, now, recency_window)


def keep_order(entry: Entry, now: int | float, recency_window: int | float) -> tuple:
    """Sort key that puts the entry to evict first: lowest retention, then older (CMP-1)."""
    return (retention(entry, now, recency_window), entry.updated_at, entry.seq)


def ranking(
    importances: Sequence[float],
    updated: Sequence[int | float],
    now: int | float,
    recency_window: int | float,
    *,
    at_least: int | None = None,
    counts: Mapping[float, int] | None = None,
) -> list[int]:
    """Best retention first, ties newer first (CTX-1), as positions in the columns given.

    The columns describe entries in age order: ``importances`` and
    ``updated`` (``updated_at``) of each. With ``at_least``, possibly only
    the start of the ranking: its first ``at_least`` positions or more (see
    :func:`_leading`); ``counts`` are how many entries have each importance,
    when the caller knows (too high a count only makes the start shorter).
    The greedy fill rarely walks further, and then asks for the rest.

    Sorting on one float is much faster than on tuples, so the tie-break is
    done by stability: lay the scores out in age order, sort them ascending
    (equal scores keep older first), and reverse the result (best first,
    equal scores newer first).
    """
    if at_least is not None and at_least < len(importances):
        leading = _leading(importances, updated, now, recency_window, at_least, counts or collections.Counter(importances))
        if leading is not None:
            return leading
    return _best_first(_scores(importances, updated, now, recency_window))


def _best_first(scores: list[float]) -> list[int]:
    order = sorted(range(len(scores)), key=scores.__getitem__)
    order.reverse()
    return order


def _scores(
    importances: Sequence[float], updated: Sequence[int | float], now: int | float, recency_window: int | float
) -> list[float]:
    """:func:`retention` of each entry, arranged for speed: the same operations, so the same doubles.

    Freshness depends on ``updated_at`` alone, which age order sorts, so the
    formula's three cases are three runs of the columns, found by
    bisection: *stale* (freshness 0, so retention is exactly the importance,
    no arithmetic needed), *fresh* (the full formula) and *present* (updated
    at or after ``now``: age 0, freshness 1).
    """

    def not_stale(at: int | float) -> bool:
        return at >= now or 1 - (now - at) / recency_window > 0

    stale_end = bisect.bisect_left(updated, True, key=not_stale)
    present = bisect.bisect_left(updated, now, lo=stale_end)
    weight, full = FRESHNESS_WEIGHT, FRESHNESS_WEIGHT * 1.0
    scores = list(importances[:stale_end])  # + weight * 0.0 leaves them unchanged
    scores += [
        importance + weight * (1 - (now - at) / recency_window)
        for importance, at in zip(importances[stale_end:present], updated[stale_end:present], strict=True)
    ]
    scores += [importance + full for importance in importances[present:]]
    return scores


def _leading(
    importances: Sequence[float],
    updated: Sequence[int | float],
    now: int | float,
    recency_window: int | float,
    at_least: int,
    counts: Mapping[float, int],
) -> list[int] | None:
    """The start of :func:`ranking`, ``at_least`` positions or more, scoring only entries that can be in it.

    Retention lies between the importance and the importance plus the full
    freshness weight. So take the highest importance ``level`` that at least
    ``at_least`` entries reach: the ranking starts with exactly the entries
    that score ``>= level`` (there are enough of them), and an entry whose
    importance plus the full weight is below ``level`` cannot be one of them.
    None when no importance can be left out.
    """
    reached = 0
    for level in sorted(counts, reverse=True):
        reached += counts[level]
        if reached >= at_least:
            break
    full = FRESHNESS_WEIGHT * 1.0
    # Importance + full weight grows with importance, so the ones that can reach form a top range.
    lowest = min(value for value in counts if value + full >= level)
    if lowest <= min(counts):
        return None
    positions = list(itertools.compress(range(len(importances)), map(operator.ge, importances, itertools.repeat(lowest))))
    scores = _scores(
        list(map(importances.__getitem__, positions)), list(map(updated.__getitem__, positions)), now, recency_window
    )
    order = _best_first(scores)
    # Best first, so the scores >= level are a prefix of ``order``.
    cut = bisect.bisect_right(order, -level, key=lambda i: -scores[i])
    return [positions[i] for i in order[:cut]]


def by_retention(
    entries: Iterable[Entry], now: int | float, recency_window: int | float, *, in_age_order: bool = False
) -> list[Entry]:
    """``entries`` sorted best first: highest retention, ties newer first (CTX-1).

    :func:`ranking` as entries. ``in_age_order`` says the caller knows they
    already are in age order (:class:`~sentinel_memory.values.Shape`);
    otherwise they are sorted first.
    """
    entries = list(entries) if in_age_order else sorted(entries, key=by_age)
    importances = [entry.importance for entry in entries]
    updated = [entry.updated_at for entry in entries]
    return [entries[i] for i in ranking(importances, updated, now, recency_window)]
