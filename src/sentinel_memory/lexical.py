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
import itertools
import math
import operator
import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Protocol, TypeVar

__all__ = ["FRESHNESS_BONUS", "Recallable", "best_matches", "relevance", "score", "words"]

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


#: Matches of one importance skipped one by one before the walk jumps past the rest of them.
_SKIP_BEFORE_JUMP = 16
_words = operator.attrgetter("words")


def _sharing_a_word(entries: Iterator[R], query_words: frozenset[str]) -> Iterator[R]:
    """The entries that share a word with the query, lazily and without a Python-level loop."""
    walked, looked_at = itertools.tee(entries)
    return itertools.compress(walked, map(operator.not_, map(query_words.isdisjoint, map(_words, looked_at))))


class Recallable(Protocol):
    """What recall reads of an entry ([`Entry`][sentinel_memory.values.Entry] has it)."""

    @property
    def words(self) -> frozenset[str]: ...
    @property
    def importance(self) -> float: ...
    @property
    def updated_at(self) -> int | float: ...
    @property
    def seq(self) -> int: ...


R = TypeVar("R", bound=Recallable)


def best_matches(
    walk: Callable[[float | None], Iterator[R]],
    query_words: frozenset[str],
    reach: int,
    now: int | float,
    recency_window: int | float,
    limit: int,
) -> list[tuple[float, R]]:
    """The best ``limit`` entries sharing a query word, with their scores, best first, ties newer (REC-2, REC-3).

    ``walk(None)`` yields the candidates by importance, highest first, each
    importance newest first; ``walk(v)`` yields only those of importance
    below ``v``. ``reach`` is how many of the query words any candidate can
    hold at most (the words no stored entry has cannot match). ``score``
    of ``relevance`` and freshness (RET-1) are written out inline, the
    same operations in the same order, so the same doubles: recall
    evaluates them for every match.

    Within one importance the score can only fall, so once ``limit``
    entries are held, bounds skip work without changing the result. A bound
    only skips when it is strictly below the worst score held, because an
    entry of lower importance may be newer and so win a tie. The best weight
    an importance allows is ``reach`` matched words at that importance.

    * When even the best weight and full freshness at this importance could
      not reach the worst held, no entry of this or any lower importance can:
      the search ends.
    * When even the best weight with the current entry's freshness could
      not, no older entry of the same importance can: the rest of this
      importance is skipped (after a few, by asking ``walk`` for the next
      lower importance).
    * A match that could not reach it even at full freshness is not scored.

    Entries that share no word with the query are filtered out at C speed
    before this loop sees them.
    """
    if limit <= 0 or reach <= 0:
        return []
    total = len(query_words)
    full_bonus = FRESHNESS_BONUS * 1.0
    held: list[tuple[float, int | float, int, R]] = []  # a min-heap: the worst held is held[0]
    worst = -math.inf  # the worst score held, once ``limit`` are held
    candidates = _sharing_a_word(walk(None), query_words)
    importance: float | None = None
    skipping, skipped = None, 0
    top_weight = best_weight = 0.0
    push, replace, bonus_weight = heapq.heappush, heapq.heapreplace, FRESHNESS_BONUS  # locals: this loop is hot
    while (entry := next(candidates, None)) is not None:
        if entry.importance == skipping:
            skipped += 1
            if skipped == _SKIP_BEFORE_JUMP:
                candidates = _sharing_a_word(walk(skipping), query_words)
            continue
        if entry.importance != importance:
            importance = entry.importance
            top_weight = 0.5 + importance / 2  # a relevance of 1 (1 * x is x) at this importance
            best_weight = (reach / total) * top_weight
            if best_weight + full_bonus < worst:
                break
        weight = (len(query_words & entry.words) / total) * top_weight
        if weight + full_bonus < worst:
            continue
        updated_at = entry.updated_at
        age = now - updated_at if now > updated_at else 0
        bonus = bonus_weight * (f if (f := 1 - age / recency_window) > 0 else 0.0)
        if best_weight + bonus < worst:
            skipping, skipped = importance, 0
            continue
        item = (weight + bonus, updated_at, entry.seq, entry)  # seq is unique: entries never compared
        if len(held) < limit:
            push(held, item)
        elif item > held[0]:
            replace(held, item)
        else:
            continue
        if len(held) == limit:
            worst = held[0][0]
    held.sort(reverse=True)
    return [(item[0], item[3]) for item in held]
