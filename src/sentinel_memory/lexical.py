"""Lexical recall: same words, not same meaning (REC-1, REC-2).

Words are lower-cased (``str.lower``), NFD-normalised with every combining mark
removed (so ``česky`` matches ``CESKY``), and split on every run of characters
that are neither letters (L*) nor digits (N*). There is no stemming, no
stop-word list and no embedding: "jak se jmenuju" does not find ``user:name``.

    relevance = share of the distinct query words found in the key or data
    score     = relevance * (0.5 + importance / 2) + 0.05 * freshness
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["FRESHNESS_BONUS", "relevance", "score", "words"]

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
