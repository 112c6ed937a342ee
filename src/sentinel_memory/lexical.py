"""Lexical recall: same words, not same meaning (REC-1, REC-2).

Words are lower-cased (``str.lower``), NFD-normalised with every combining mark
removed (so ``česky`` matches ``CESKY``), and split on every run of characters
that are neither letters (L*) nor digits (N*). There is no stemming, no
stop-word list and no embedding: "jak se jmenuju" does not find ``user:name``.

    relevance = share of the distinct query words found in the key or data
    score     = relevance * (0.5 + importance / 2) + 0.05 * freshness
"""

from __future__ import annotations

import heapq
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # values imports this module for words()
    from .values import Entry

__all__ = ["FRESHNESS_BONUS", "best_matches", "relevance", "score", "words"]

#: REC-2: the most freshness can add to a recall score.
FRESHNESS_BONUS = 0.05


@lru_cache(maxsize=4096)
def _is_word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LN"


def words(text: str) -> frozenset[str]:
    """The distinct words of ``text`` as recall compares them (REC-1)."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    kept = []
    for char in decomposed:
        if unicodedata.category(char)[0] == "M":
            continue  # accents and other combining marks vanish
        # Everything else that is not a letter or digit separates words.
        kept.append(char if _is_word_char(char) else " ")
    return frozenset("".join(kept).split())


def relevance(query_words: frozenset[str], entry_words: frozenset[str]) -> float:
    """Share of the distinct query words found among the entry's words (REC-2)."""
    return len(query_words & entry_words) / len(query_words)


def score(relevance_: float, importance: float, freshness: float) -> float:
    """``relevance * (0.5 + importance / 2) + 0.05 * freshness`` (REC-2)."""
    return relevance_ * (0.5 + importance / 2) + FRESHNESS_BONUS * freshness


def best_matches(
    newest_first: Iterable[Entry],
    query_words: frozenset[str],
    now: int | float,
    recency_window: int | float,
    limit: int,
    top_importance: float,
) -> list[tuple[float, Entry]]:
    """The best ``limit`` entries sharing a query word, with their scores, best first, ties newer (REC-2, REC-3).

    :func:`score` of :func:`relevance` and freshness (RET-1) are written out
    inline, the same operations in the same order, so the same doubles:
    recall evaluates them for every match. ``newest_first`` must be in
    descending age order, and ``top_importance`` at least every importance
    among them. Then two bounds skip work without changing the result, both
    resting on this: whatever comes later is older, so it loses every tie,
    and its freshness is no higher.

    * Once ``limit`` entries are held, a match whose score could not beat
      the worst of them even at full freshness is not scored.
    * Once not even a perfect match with the top importance and the current
      entry's freshness could beat the worst held, nothing later can, and
      the search stops. In a long history that is usually soon.
    """
    if limit <= 0:
        return []
    total = len(query_words)
    top_weight = 0.5 + top_importance / 2  # a relevance of 1 times the top importance term
    full_bonus = FRESHNESS_BONUS * 1.0
    held: list[tuple[float, int | float, int, Entry]] = []  # a min-heap: the worst held is held[0]
    for entry in newest_first:
        found = query_words & entry.words
        if not found:
            continue
        weight = (len(found) / total) * (0.5 + entry.importance / 2)
        full = len(held) == limit
        if full and weight + full_bonus <= held[0][0]:
            continue
        age = now - entry.updated_at if now > entry.updated_at else 0
        bonus = FRESHNESS_BONUS * (f if (f := 1 - age / recency_window) > 0 else 0.0)
        if full and top_weight + bonus <= held[0][0]:
            break
        item = (weight + bonus, entry.updated_at, entry.seq, entry)  # seq is unique: entries never compared
        if not full:
            heapq.heappush(held, item)
        elif item > held[0]:
            heapq.heapreplace(held, item)
    held.sort(reverse=True)
    return [(item[0], item[3]) for item in held]
