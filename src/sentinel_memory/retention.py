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
from collections.abc import Iterable, Sequence

from .values import Entry, by_age

__all__ = ["FRESHNESS_WEIGHT", "by_retention", "freshness", "keep_order", "ranking", "retention"]

#: RET-2: the most freshness can add to an entry's importance.
FRESHNESS_WEIGHT = 0.1

_importance = operator.attrgetter("importance")


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
    entries: Sequence[Entry], now: int | float, recency_window: int | float, *, at_least: int | None = None
) -> list[int]:
    """Positions in ``entries``, which must be in age order, best retention first, ties newer first (CTX-1).

    With ``at_least``, possibly only the start of that ranking: its first
    ``at_least`` positions or more (see :func:`_leading`). The greedy fill
    rarely walks further, and then asks for the rest.

    Sorting on one float is much faster than on tuples, so the tie-break is
    done by stability: lay the scores out in age order, sort them ascending
    (equal scores keep older first), and reverse the result (best first,
    equal scores newer first).
    """
    if at_least is not None and at_least < len(entries):
        leading = _leading(entries, now, recency_window, at_least)
        if leading is not None:
            return leading
    return _best_first(_scores(entries, now, recency_window))


def _best_first(scores: list[float]) -> list[int]:
    order = sorted(range(len(scores)), key=scores.__getitem__)
    order.reverse()
    return order


def _scores(entries: Sequence[Entry], now: int | float, recency_window: int | float) -> list[float]:
    """:func:`retention` of every entry (in age order), arranged for speed: the same operations, so the same doubles.

    Freshness depends on ``updated_at`` alone, which age order sorts, so the
    formula's three cases are three runs of ``entries``, found by bisection:
    *stale* (freshness 0, so retention is exactly the importance, no
    arithmetic needed), *fresh* (the full formula) and *present* (updated at
    or after ``now``: age 0, freshness 1).
    """

    def not_stale(entry: Entry) -> bool:
        return entry.updated_at >= now or 1 - (now - entry.updated_at) / recency_window > 0

    stale_end = bisect.bisect_left(entries, True, key=not_stale)
    present = bisect.bisect_left(entries, True, lo=stale_end, key=lambda entry: entry.updated_at >= now)
    weight, full = FRESHNESS_WEIGHT, FRESHNESS_WEIGHT * 1.0
    scores = list(map(_importance, entries[:stale_end]))  # + weight * 0.0 leaves them unchanged
    scores += [e.importance + weight * (1 - (now - e.updated_at) / recency_window) for e in entries[stale_end:present]]
    scores += [e.importance + full for e in entries[present:]]
    return scores


def _leading(entries: Sequence[Entry], now: int | float, recency_window: int | float, at_least: int) -> list[int] | None:
    """The start of :func:`ranking`, ``at_least`` positions or more, scoring only entries that can be in it.

    Retention lies between the importance and the importance plus the full
    freshness weight. So take the highest importance ``level`` that at least
    ``at_least`` entries reach: the ranking starts with exactly the entries
    that score ``>= level`` (there are enough of them), and an entry whose
    importance plus the full weight is below ``level`` cannot be one of them.
    None when no importance can be left out.
    """
    importances = list(map(_importance, entries))
    counts = collections.Counter(importances)
    reached = 0
    for level in sorted(counts, reverse=True):
        reached += counts[level]
        if reached >= at_least:
            break
    full = FRESHNESS_WEIGHT * 1.0
    can_reach = {value for value in counts if value + full >= level}
    if len(can_reach) == len(counts):
        return None
    positions = list(itertools.compress(range(len(entries)), map(can_reach.__contains__, importances)))
    scores = _scores([entries[i] for i in positions], now, recency_window)
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
    return [entries[i] for i in ranking(entries, now, recency_window)]
