"""What to keep: importance first, freshness as a tiebreaker (RET-1, RET-2, CMP-1).

    freshness = max(0, 1 - age / recency_window)     age = max(0, now - updated_at)
    retention = importance + 0.1 * freshness

Freshness adds at most 0.1, so importance dominates and freshness only settles
close calls: a brand-new 0.5 (retention 0.6) beats a day-old 0.55 but loses to
a day-old 0.65. The formulas are evaluated in exactly this order in IEEE
doubles, so a port that follows them gets bit-identical scores.
"""

from __future__ import annotations

from .values import Entry

__all__ = ["FRESHNESS_WEIGHT", "freshness", "retention", "keep_order"]

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
