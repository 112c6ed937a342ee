"""Recall: the live entries that share a query's words, best first (REC-1 .. REC-6).

The ranking asks the index for the entries holding the query's words
(``lexical.best_matches`` and ``best_holders``); what it finds is what the
scan of every live entry would have found.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence

from .basics import _check_now, _copies
from .index import Index
from .lexical import best_holders, best_matches, walked, words
from .options import number_option
from .ranking import matches, uses_words
from .state import MemoryState
from .values import (
    Entry,
    Hit,
    by_importance,
)


def _query_words(query: object, *, optional: bool = False) -> frozenset[str]:
    """REC-4: a query is a str (context also takes None); its words per REC-1."""
    if query is None and optional:
        return frozenset()
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    return words(query)


def _matches(
    state: MemoryState, query_words: frozenset[str], now: int | float, limit: int, among: Sequence[Entry] | None = None
) -> list[tuple[float, Entry]]:
    """The best ``limit`` live entries sharing a query word, best first (REC-2, REC-3).

    A query word no stored entry holds cannot raise any score. In a store
    that is small for the ``limit`` (a context's ranking), every entry
    holding a query word is scored (``best_holders``); otherwise the walk
    by importance (``walked``) goes first when the holders are many
    (``_walk_budget``), and the holders are searched with MaxScore when it
    gives up. Every way returns the start of ``lexical.ranked`` (REC-7).
    With ``among``, only those live entries are looked at.
    """
    index, window = state.index, state.config.recency_window
    reachable = _reachable(index, query_words)
    if among is not None:
        ordered = sorted(among, key=by_importance, reverse=True)  # by importance, each newest first

        def walk_among(below: float | None) -> Iterator[Entry]:
            return iter(ordered) if below is None else (e for e in ordered if e.importance < below)

        return best_matches(walk_among, query_words, reachable, now, window, limit, seq_is_age=index.in_order)
    holders = {word: index.holders(word) for word in sorted(reachable)}
    if not _by_holders(len(state.entries), limit):
        run = index.by_importance
        highest = run.last()
        top_band = 0 if highest is None else len(run) - run.count_below((highest[0],))
        budget = _walk_budget(sum(map(len, holders.values())), top_band=top_band)
        if budget is None or budget > 0:

            def walk(below: float | None) -> Iterator[Entry]:
                return index.by_importance_desc(now, below)

            found = walked(
                walk,
                query_words,
                reachable,
                now,
                window,
                limit,
                seq_is_age=index.in_order,
                holders=holders,
                give_up=budget,
            )
            if found is not None:
                return found
    left_out = index.expired_seqs(now) or frozenset()
    return best_holders(
        holders,
        len(query_words),
        now,
        window,
        limit,
        left_out=left_out,
        seq_is_age=index.in_order,
        top_importance=_top_importance(index),
        span=_bit_span(state),
        first_after=functools.partial(_first_after, index),
    )


def _first_after(index: Index, moment: int | float) -> int | None:
    """The ``seq`` of the oldest stored entry updated after ``moment`` (None when none is): in age order, the first."""
    item = index.by_age.ceiling((moment, math.inf))
    return None if item is None else item[1]


#: The postings are counted in bits when every seq is below this many times the stored entries (64 at least).
_DENSE = 8


def _bit_span(state: MemoryState) -> int | None:
    """The width of the holders' bit sets (one above the largest stored ``seq``), or None when too wide to pay (REC-7).

    A set of bits by ``seq`` costs its width in every operation, and
    ``seq`` grows with every change: after much churn the stored entries are
    few for the width, and counting their postings one by one costs less.
    A state built by hand may hold a negative ``seq``, which no set of bits
    holds: then too they are counted one by one.
    """
    span = state.entries.last_seq() + 1
    return span if span <= _DENSE * max(64, len(state.entries)) and state.entries.first_seq() >= 0 else None


def _top_importance(index: Index) -> float:
    """The highest importance of a stored entry, expired ones too (1.0 when none is): a bound of every live one's."""
    highest = index.by_importance.last()
    return 1.0 if highest is None else highest[0]


def _by_holders(stored: int, limit: int) -> bool:
    """True when scoring every holder of a query word is the faster search: the store is small for the ``limit``."""
    return stored <= 2_048 + 32 * limit


#: Up to this many postings (entries holding a reachable query word, counted once per word), the holders are searched.
_FEW_POSTINGS = 8_192


def _walk_budget(postings: int, *, top_band: int = 0) -> int | None:
    """How many entries the walk by importance may read before the search of the holders takes over (REC-7).

    0: none, the holders are searched at once; None: the walk reads to its
    end. The search of the holders (MaxScore, ``best_holders``) costs about
    what its ``postings`` are, read at C speed; the walk costs more per
    entry, but when the query's words are common among the most important
    entries its first blocks hold the best few and it ends at once. So up
    to ``_FEW_POSTINGS`` postings the holders are searched; above, the walk
    goes first and gives up after half as many entries. Within a band of
    one importance the walk's bounds stop it only once ``limit`` entries
    hold every reachable word, so when more entries than that share the
    highest importance (``top_band``: a memory of turns alone, say) the
    walk would give up: the holders are searched at once.
    """
    if postings <= _FEW_POSTINGS:
        return 0
    budget = postings // 2
    return 0 if top_band > budget else budget


def _reachable(index: Index, query_words: frozenset[str]) -> frozenset[str]:
    """The query words some stored entry may hold: no entry matches more of them (REC-2)."""
    return index.may_hold(query_words)


def recall(state: MemoryState, query: str, *, now: int | float, limit: int | None = None) -> tuple[Hit, ...]:
    """Lexical search: the best ``limit`` live entries sharing a word with ``query`` (REC-1..REC-4).

    Words are lower-cased runs of letters and digits, accents removed, found
    in an entry's key or data; the score is the share of the query's words an
    entry holds, weighted by its importance, plus a little for freshness
    (``sentinel_memory.core.lexical``). Ties go to the newer entry.

    Args:
        state: The memory state to read.
        query: The words to look for, a str.
        now: The current time, milliseconds since the epoch (a finite number).
        limit: The most hits, an integer >= 0. Defaults to None (10).

    Returns:
        A tuple of ``Hit`` (a copy of the ``entry`` and its ``score``), best first; empty for a query
        without words.

    Raises:
        TypeError: ``query`` is not a str, or ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:allergy", "peanuts", now=1000)
        >>> [hit.entry.key for hit in core.recall(state, "Peanuts?", now=1000)]
        ['user:allergy']
    """
    _check_now(now)
    query_words = _query_words(query)
    count = number_option("recall_limit", limit)
    if not query_words:
        return ()
    if not uses_words(state.config):  # BM-9
        found = matches(state, query, now, count)
    else:
        found = _matches(state, query_words, now, count)
    copies = _copies(state, [entry for _, entry in found])
    return tuple(Hit(entry, value) for entry, (value, _) in zip(copies, found, strict=True))
