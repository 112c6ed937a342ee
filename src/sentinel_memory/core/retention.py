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
from collections.abc import Iterable, Sequence

from .values import Entry, by_age

__all__ = [
    "FRESHNESS_WEIGHT",
    "by_retention",
    "freshness",
    "keep_order",
    "ranking",
    "retention",
    "retentions",
    "scored_ranking",
]

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


def keep_order(entry: Entry, now: int | float, recency_window: int | float) -> tuple[float, int | float, int]:
    """Sort key that puts the entry to evict first: lowest retention, then older (CMP-1)."""
    return (retention(entry, now, recency_window), entry.updated_at, entry.seq)


def ranking(
    importances: Sequence[float],
    updated: Sequence[int | float],
    now: int | float,
    recency_window: int | float,
) -> list[int]:
    """Best retention first, ties newer first (CTX-1), as positions in the columns given.

    The columns describe entries in age order: ``importances`` and
    ``updated`` (``updated_at``) of each. The context asks
    ``ranking_start`` for the start of this
    ranking first, and for all of it only when the budget still has room.

    Sorting on one float is much faster than on tuples, so the tie-break is
    done by stability: lay the scores out in age order, sort them ascending
    (equal scores keep older first), and reverse the result (best first,
    equal scores newer first).
    """
    return scored_ranking(importances, updated, now, recency_window)[0]


def scored_ranking(
    importances: Sequence[float], updated: Sequence[int | float], now: int | float, recency_window: int | float
) -> tuple[list[int], list[float]]:
    """``ranking`` and the retention of each entry, by position in the columns given."""
    scores = _scores(importances, updated, now, recency_window)
    return _best_first(scores), scores


def _best_first(scores: list[float]) -> list[int]:
    order = sorted(range(len(scores)), key=scores.__getitem__)
    order.reverse()
    return order


def _scores(
    importances: Sequence[float], updated: Sequence[int | float], now: int | float, recency_window: int | float
) -> list[float]:
    """``retention`` of each entry, arranged for speed: the same operations, so the same doubles.

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


def retentions(
    importances: Iterable[float], updated: Iterable[int | float], now: int | float, recency_window: int | float
) -> list[float]:
    """``retention`` of each entry, in any order, written out: the same operations in the same order, so the same doubles.

    For the indexes' searches, which score many entries at once: one
    comprehension, without a call per entry. ``_scores`` is faster when the
    columns are in age order.
    """
    weight = FRESHNESS_WEIGHT
    return [
        importance + weight * (f if (f := 1 - (now - at if now > at else 0) / recency_window) > 0 else 0.0)
        for importance, at in zip(importances, updated, strict=True)
    ]


def by_retention(
    entries: Iterable[Entry], now: int | float, recency_window: int | float, *, in_age_order: bool = False
) -> list[Entry]:
    """``entries`` sorted best first: highest retention, ties newer first (CTX-1).

    ``ranking`` as entries. ``in_age_order`` says the caller knows they
    already are in age order (``live_by_age``);
    otherwise they are sorted first.
    """
    entries = list(entries) if in_age_order else sorted(entries, key=by_age)
    importances = [entry.importance for entry in entries]
    updated = [entry.updated_at for entry in entries]
    return [entries[i] for i in ranking(importances, updated, now, recency_window)]
