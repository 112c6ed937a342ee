"""The rankings other than REC-2's: BM25 (BM-1 .. BM-8) and the app's own scorer (BM-9).

``recall`` and a context's query call ``matches`` when the state's
``config.ranking`` is not ``"words"``; REC-2's search
(``sentinel_memory.core.lexical``) stays as it is for the default.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from . import bm25
from .values import Entry

__all__ = ["matches", "uses_words"]


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
    live = state.index.live_by_age(now)
    window = config.recency_window
    if config.ranking == "bm25":
        found = bm25.ranked(bm25.query_terms(query), live, now, window, among=among, neighbours=in_context)
        return found[:limit]
    copies = live if not state.index.containers else [entry.copy() for entry in live]
    scores = _scores(config.ranking, query, copies)
    wanted = None if among is None else {entry.seq for entry in among}
    scored = [
        (value, entry)
        for value, entry in zip(scores, live, strict=True)
        if value > 0 and (wanted is None or entry.seq in wanted)
    ]
    return bm25.best_first(scored, now, window)[:limit]


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
