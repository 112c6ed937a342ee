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
import math
import re
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


#: In ASCII the letters are a-z once lower-cased and the digits 0-9; nothing decomposes.
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> frozenset[str]:
    """The distinct words of ``text`` as recall compares them (REC-1).

    Plain ASCII text, the common case, takes a regular expression that says
    the same thing; everything else goes character by character.
    """
    lowered = text.lower()
    if lowered.isascii():
        return frozenset(_ASCII_WORD.findall(lowered))
    decomposed = unicodedata.normalize("NFD", lowered)
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
    groups: Iterable[tuple[float, Iterable[Entry]]],
    query_words: frozenset[str],
    now: int | float,
    recency_window: int | float,
    limit: int,
) -> list[tuple[float, Entry]]:
    """The best ``limit`` entries sharing a query word, with their scores, best first, ties newer (REC-2, REC-3).

    ``groups`` are the candidates by importance, highest importance first,
    each group newest first. :func:`score` of :func:`relevance` and
    freshness (RET-1) are written out inline, the same operations in the
    same order, so the same doubles: recall evaluates them for every match.

    Within a group the score can only fall, so once ``limit`` entries are
    held, bounds skip work without changing the result. A bound only skips
    when it is strictly below the worst score held, because an entry from a
    later group may be newer and so win a tie.

    * When even every query word and full freshness at this importance
      could not reach the worst held, neither this group nor any later one
      can: the search ends.
    * When even every query word at this importance with the current
      entry's freshness could not, no older entry of the group can: the
      rest of the group is skipped.
    * A match that could not reach it even at full freshness is not scored.
    """
    if limit <= 0:
        return []
    total = len(query_words)
    full_bonus = FRESHNESS_BONUS * 1.0
    held: list[tuple[float, int | float, int, Entry]] = []  # a min-heap: the worst held is held[0]
    worst = -math.inf  # the worst score held, once ``limit`` are held
    for importance, newest_first in groups:
        top_weight = 0.5 + importance / 2  # a relevance of 1 (1 * x is x) at this importance
        if top_weight + full_bonus < worst:
            break
        for entry in newest_first:
            found = query_words & entry.words
            if not found:
                continue
            weight = (len(found) / total) * top_weight
            if weight + full_bonus < worst:
                continue
            age = now - entry.updated_at if now > entry.updated_at else 0
            bonus = FRESHNESS_BONUS * (f if (f := 1 - age / recency_window) > 0 else 0.0)
            if top_weight + bonus < worst:
                break
            item = (weight + bonus, entry.updated_at, entry.seq, entry)  # seq is unique: entries never compared
            if len(held) < limit:
                heapq.heappush(held, item)
            elif item > held[0]:
                heapq.heapreplace(held, item)
            else:
                continue
            if len(held) == limit:
                worst = held[0][0]
    held.sort(reverse=True)
    return [(item[0], item[3]) for item in held]
