"""Exact top-k pruning over posting lists, term at a time (MaxScore): what both rankings' searches share (REC-7, BM-7).

A query's terms each have a posting list: the entries holding it. Each
term can add at most a known amount to an entry's score (its upper bound).
Read the lists from the one whose term adds the most and is held by the
fewest (the rarest) to the commonest. Before each list, the entries met so
far give a floor of the ``k``-th best score; an entry not met yet holds at
most the terms still unread, so its score is at most the sum of their
bounds. Once that sum is strictly below the floor, the unread terms are
*non-essential*: no entry holding only them can make the best ``k`` (an
entry of equal score could, as a tie goes to another rule, so equal is not
enough). Their long lists are then not read; each is only asked about the
entries already met.

The rankings differ only in what a term adds (REC-2: one to a count of
words; BM-4: a part of a sum) and in how the floor and the bound are worked
out; :func:`term_at_a_time` is the loop, each ranking brings its own steps.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

__all__ = ["kth_largest", "term_at_a_time"]


def term_at_a_time(
    lists: int,
    read: Callable[[int], None],
    probe: Callable[[int], None],
    closed: Callable[[int], bool],
) -> int:
    """Read the posting lists ``0 .. lists - 1`` (rarest first) until the rest are non-essential; probe those.

    ``closed(i)`` says, before list ``i``, that no entry held by none of the
    lists read so far can make the best ``k``; then ``probe(j)`` is called for
    each list ``j`` from ``i`` on (ask it about the entries met), instead of
    ``read(j)`` (take every entry it holds). Returns how many lists were read.
    """
    for i in range(lists):
        if closed(i):
            for j in range(i, lists):
                probe(j)
            return i
        read(i)
    return lists


def kth_largest(values: Iterable[float], k: int) -> float | None:
    """The ``k``-th largest of ``values``, or None when there are fewer than ``k`` (``k`` >= 1)."""
    best = heapq.nlargest(k, values)
    return best[-1] if len(best) >= k else None
