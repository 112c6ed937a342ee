"""Lexical recall: same words, not same meaning (REC-1, REC-2).

Words are lower-cased (``str.lower``), NFD-normalised with every combining mark
removed (so ``česky`` matches ``CESKY``), and split on every run of characters
that are neither letters (L*) nor digits (N*). There is no stemming, no
stop-word list and no embedding: "jak se jmenuju" does not find ``user:name``.

    relevance = share of the distinct query words found in the key or data
    score     = relevance * (0.5 + importance / 2) + 0.05 * freshness
"""

from __future__ import annotations

import bisect
import heapq
import math
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
    importances: Iterable[float],
) -> list[tuple[float, Entry]]:
    """The best ``limit`` entries sharing a query word, with their scores, best first, ties newer (REC-2, REC-3).

    :func:`score` of :func:`relevance` and freshness (RET-1) are written out
    inline, the same operations in the same order, so the same doubles:
    recall evaluates them for every match. ``newest_first`` must be in
    descending age order, and ``importances`` must include every importance
    among them. Then three bounds skip work without changing the result,
    all resting on this: whatever comes later is older, so it loses every
    tie, and its freshness is no higher. Once ``limit`` entries are held:

    * an entry whose importance could not beat the worst held even with
      every query word and full freshness is not even looked at;
    * a match whose score could not beat the worst held at full freshness
      is not scored;
    * once not even a perfect match with the top importance and the current
      entry's freshness could beat the worst held, nothing later can, and
      the search stops. In a long history that is usually soon.
    """
    if limit <= 0:
        return []
    total = len(query_words)
    full_bonus = FRESHNESS_BONUS * 1.0
    levels = sorted(set(importances))
    # The best score each importance allows: relevance 1 (1 * x is x) and full freshness.
    ceilings = [(0.5 + level / 2) + full_bonus for level in levels]
    top_weight = 0.5 + levels[-1] / 2 if levels else 0.0
    cut = -math.inf  # importances below it cannot beat the worst held
    held: list[tuple[float, int | float, int, Entry]] = []  # a min-heap: the worst held is held[0]
    for entry in newest_first:
        if entry.importance < cut or query_words.isdisjoint(entry.words):
            continue
        weight = (len(query_words & entry.words) / total) * (0.5 + entry.importance / 2)
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
        else:
            continue
        if len(held) == limit:
            hopeless = bisect.bisect_right(ceilings, held[0][0])
            if hopeless == len(levels):
                break  # no importance can beat the worst held any more
            cut = levels[hopeless]
    held.sort(reverse=True)
    return [(item[0], item[3]) for item in held]
