"""The rankings other than REC-2's: BM25 (BM-1 .. BM-8) and the app's own scorer (BM-9).

``recall`` and a context's query call ``matches`` when the state's
``config.ranking`` is not ``"words"``; REC-2's search
(``sentinel_memory.core.lexical``) stays as it is for the default.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from . import bm25
from .retention import retentions
from .values import Entry

__all__ = ["best_first", "matches", "naive", "uses_words"]

_first = operator.itemgetter(0)


def uses_words(config: Any) -> bool:
    """True when the config ranks by REC-2's share of query words, the default (BM-9)."""
    return bool(config.ranking == "words") if isinstance(config.ranking, str) else False


def matches(
    state: Any,
    query: str,
    now: int | float,
    limit: int,
    *,
    among: Sequence[Entry] | None = None,
    in_context: bool = False,
) -> list[tuple[float, Entry]]:
    """The best ``limit`` live entries for ``query`` by the state's ranking, with their scores, best first (BM-5 .. BM-9).

    ``"bm25"``: the entries scoring above 0 (BM-5), ties by retention, then
    newer (BM-6); in a context (``in_context``) a hit's neighbours in age
    follow it (BM-8). A scorer function gets the query and a copy of every
    live entry, oldest first, and returns one number per entry; the entries
    scoring above 0 are ranked by it, ties as for BM25. With ``among``, only
    those live entries are ranked.
    """
    if limit <= 0:
        return []
    config = state.config
    window = config.recency_window
    if config.ranking == "bm25":
        terms = bm25.query_terms(query)
        if among is None:
            return _best_bm25(state, terms, now, limit, in_context)
        return _among_bm25(state, terms, now, among, in_context)[:limit]
    live = state.index.live_by_age(now)
    copies = live if not state.index.containers else [entry.copy() for entry in live]
    scores = _scores(config.ranking, query, copies)
    wanted = None if among is None else {entry.seq for entry in among}
    scored = [
        (value, entry)
        for value, entry in zip(scores, live, strict=True)
        if value > 0 and (wanted is None or entry.seq in wanted)
    ]
    return best_first(scored, now, window)[:limit]


#: Up to this many hits, their neighbours are found one by one in the index; above, in the run laid out once.
_FEW = 8


def _best_bm25(
    state: Any, terms: list[str], now: int | float, limit: int, in_context: bool
) -> list[tuple[float, Entry]]:
    """The first ``limit`` of ``bm25.ranked``, found by the pruned search (BM-7).

    In a context, an entry outside the best ``limit`` own scores (ties
    included) and not next to one of them scores below the ``limit``-th of
    them, own or carried (half of a score below it): so the best ``limit``
    with neighbours are among those entries and their neighbours (BM-8).
    """
    index, window = state.index, state.config.recency_window
    postings = index.postings()
    expired = index.expired(now)
    top = bm25.best(terms, postings, len(state.entries), expired, limit)
    if not in_context or not top:
        return best_first(top, now, window)[:limit]
    own = {entry.seq: value for value, entry in top}
    entries = {entry.seq: entry for _, entry in top}
    # With ``limit`` hits or more, the ``limit``-th best own score is ``floor`` and at least ``limit`` entries rank at or
    # above it whatever their neighbours carry: a hit whose half is below ``floor`` lifts no entry into the first
    # ``limit`` (a neighbour below it stays below it; one at or above it keeps the larger own score), so its
    # neighbours are not looked up.
    floor = min(own.values()) if len(top) >= limit else 0.0
    lifting = [entry for value, entry in top if bm25.NEIGHBOUR * value >= floor]
    if len(lifting) <= _FEW:
        near = {entry.seq: index.neighbours(entry, now) for entry in lifting}
    else:  # many hits: the run laid out once, each hit's place in it found by bisection
        near = index.neighbours_of(lifting, now)
    # A neighbour that is no hit is ranked by what it carries: when it holds a query term, its own score is
    # below every hit's (the hits are every entry at or above the ``limit``-th score), and at least ``limit``
    # hits rank above it either way, so its own score never decides the first ``limit`` nor their order.
    values = dict(own)
    for seq, others in near.items():
        carried = bm25.NEIGHBOUR * own[seq]
        for other in others:
            key = other.seq
            value = values.get(key)
            if value is None:
                entries[key] = other
                values[key] = carried
            elif value < carried:
                values[key] = carried
    scored = [(values[seq], entry) for seq, entry in entries.items() if values[seq] > 0.0]
    return best_first(scored, now, window)[:limit]


def _among_bm25(
    state: Any, terms: list[str], now: int | float, among: Sequence[Entry], in_context: bool
) -> list[tuple[float, Entry]]:
    """``naive`` with ``among``, scoring only ``among`` and their neighbours (BM-5, BM-8).

    N, the mean length and each term's holders are read from the postings
    less the expired, as ``bm25.best`` reads them, so every score is the
    same double as scoring every live entry gives; a neighbour is one of
    all live entries (BM-8), found in the index.
    """
    index, window = state.index, state.config.recency_window
    if not terms or not among:
        return []
    stats = bm25.live_stats(terms, index.postings(), len(state.entries), index.expired(now))
    if stats is None:
        return []
    idfs, mean, _ = stats

    def own(entry: Entry) -> float:
        counts, length = entry.bm25_terms
        return bm25.score(terms, counts, length, idfs, mean) if counts else 0.0

    values = {entry.seq: own(entry) for entry in among}
    if in_context:
        near = (
            {entry.seq: index.neighbours(entry, now) for entry in among}
            if len(among) <= _FEW
            else index.neighbours_of(among, now)
        )
        for entry in among:
            for other in near[entry.seq]:
                carried = bm25.NEIGHBOUR * own(other)
                if values[entry.seq] < carried:
                    values[entry.seq] = carried
    scored = [(values[entry.seq], entry) for entry in among if values[entry.seq] > 0.0]
    return best_first(scored, now, window)


def best_first(
    scored: list[tuple[float, Any]], now: int | float, recency_window: int | float
) -> list[tuple[float, Any]]:
    """``(score, entry)`` pairs best score first, then higher retention (RET-1), then newer (BM-6)."""
    entries = [entry for _, entry in scored]
    keys = zip(
        map(_first, scored),
        retentions([e.importance for e in entries], [e.updated_at for e in entries], now, recency_window),
        [e.updated_at for e in entries],
        [e.seq for e in entries],
        range(len(scored)),
        strict=True,
    )
    # Tuples compared in C: score, then retention, then newer; seq is unique, so the position is never compared.
    return [scored[key[-1]] for key in sorted(keys, reverse=True)]


def naive(
    query: Sequence[str],
    live: Sequence[Entry],
    now: int | float,
    recency_window: int | float,
    *,
    among: Sequence[Entry] | None = None,
    neighbours: bool = False,
) -> list[tuple[float, Entry]]:
    """Every match scored by scoring every live entry, best first (BM-5, BM-6, BM-8): the reference ``matches`` equals."""
    scored = bm25.ranked(query, live, now, recency_window, among=among, neighbours=neighbours)
    return best_first(scored, now, recency_window)


def _scores(scorer: Any, query: str, entries: list[Entry]) -> list[float]:
    """The scorer's numbers for ``entries``, checked: one finite number per entry (BM-9)."""
    found = scorer(query, entries)
    try:
        values = list(found)
    except TypeError:
        raise TypeError(f"the ranking function must return a sequence of numbers, got {type(found).__name__}") from None
    if len(values) != len(entries):
        raise ValueError(f"the ranking function returned {len(values)} scores for {len(entries)} entries")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"the ranking function must return numbers, got a {type(value).__name__}")
        if not math.isfinite(value):
            raise ValueError(f"the ranking function must return finite numbers, got {value!r}")
    return [float(value) for value in values]
