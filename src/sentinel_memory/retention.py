"""What to keep: importance first, freshness as a tiebreaker (RET-1, RET-2, CMP-1).

    freshness = max(0, 1 - age / recency_window)     age = max(0, now - updated_at)
    retention = importance + 0.1 * freshness

Freshness adds at most 0.1, so importance dominates and freshness only settles
close calls: a brand-new 0.5 (retention 0.6) beats a day-old 0.55 but loses to
a day-old 0.65. The formulas are evaluated in exactly this order in IEEE
doubles, so a port that follows them gets bit-identical scores.
"""

from __future__ import annotations

from .values import Entry, by_age

__all__ = ["FRESHNESS_WEIGHT", "by_retention", "freshness", "keep_order", "retention"]

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


def by_retention(
    entries: list[Entry], now: int | float, recency_window: int | float, *, in_age_order: bool = False
) -> list[Entry]:
    """``entries`` sorted best first: highest retention, ties newer first (CTX-1).

    The same formula as :func:`retention`, with the same operations in the
    same order (so the same doubles), written inline because context ranking
    evaluates it for every live entry on every call.

    Sorting on one float is much faster than on tuples, so the tie-break is
    done by stability: put the entries newest first, then stable-sort on
    retention alone. ``entries`` usually arrive in ``seq`` order (the core
    keeps its table that way), and then newest first is just the reverse,
    unless a clock went back. ``in_age_order`` says the caller knows they are
    in age order (:class:`~sentinel_memory.values.Shape`); otherwise they are
    sorted first.
    """
    if not in_age_order:
        entries = sorted(entries, key=by_age)
    newest_first = entries[::-1]
    scores = [
        e.importance
        + FRESHNESS_WEIGHT * (f if (f := 1 - (now - e.updated_at if now > e.updated_at else 0) / recency_window) > 0 else 0.0)
        for e in newest_first
    ]
    order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    return [newest_first[i] for i in order]
