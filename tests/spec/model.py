"""A deliberately simple model of sentinel-memory, written for clarity, not speed.

The state machines drive the real memory and this model side by side and
compare them after every step. The model shares no code with the library
except the text rendering of JSON data (it has its own example and property
tests); the words, retention, expiry, ranking, the greedy fill and the
number rule are re-stated here from spec/RULES.md in the plainest Python
possible.
"""

from __future__ import annotations

import copy
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from sentinel_memory.core.jsondata import text_of

DAY = 86_400_000


def words(text: str) -> frozenset[str]:
    """REC-1 restated, one character at a time: lower, NFD, drop marks, split on what is not L* or N*."""
    kept = []
    for char in unicodedata.normalize("NFD", text.lower()):
        category = unicodedata.category(char)
        if category.startswith("M"):
            continue
        kept.append(char if category[0] in "LN" else " ")
    return frozenset("".join(kept).split())


def model_estimate(text: str) -> int:
    """TOK-1 restated: UTF-16 code units over four, rounded up."""
    return math.ceil(len(text.encode("utf-16-le")) // 2 / 4)


def is_num(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def valid_importance(value: Any) -> bool:
    return is_num(value) and 0 <= value <= 1


def valid_positive(value: Any) -> bool:
    return is_num(value) and value > 0


def valid_count(value: Any) -> bool:
    return is_num(value) and value >= 0 and float(value).is_integer()


@dataclass
class ModelEntry:
    key: str
    data: Any
    importance: float
    created_at: float
    updated_at: float
    expires_at: float | None
    seq: int

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def text(self) -> str:
        return text_of(self.data)

    def words(self) -> frozenset[str]:
        return words(self.key) | words(self.text())


@dataclass
class Model:
    limit: int = 1000
    recency_window: float = DAY
    working_ttl: float = 3_600_000
    cache_ttl: float = 300_000
    entries: dict[str, ModelEntry] = field(default_factory=dict)
    cache: dict[str, tuple[Any, float]] = field(default_factory=dict)
    working: dict[str, Any] = field(default_factory=dict)
    working_at: float | None = None
    seq: int = 0
    compactions: int = 0
    expired: int = 0
    evicted: int = 0

    # -- reads -------------------------------------------------------------

    def live(self, now: float) -> list[ModelEntry]:
        return [e for e in self.entries.values() if not e.expired(now)]

    def freshness(self, e: ModelEntry, now: float) -> float:
        age = now - e.updated_at
        if age < 0:
            age = 0
        return max(0, 1 - age / self.recency_window)

    def retention(self, e: ModelEntry, now: float) -> float:
        return e.importance + 0.1 * self.freshness(e, now)

    def score(self, e: ModelEntry, query_words: frozenset[str], now: float) -> float:
        found = len([w for w in query_words if w in e.words()])
        relevance = found / len(query_words)
        return relevance * (0.5 + e.importance / 2) + 0.05 * self.freshness(e, now)

    def has(self, key: str, now: float) -> bool:
        e = self.entries.get(key)
        return e is not None and not e.expired(now)

    def get(self, key: str, now: float) -> Any:
        e = self.entries.get(key)
        return None if e is None or e.expired(now) else copy.deepcopy(e.data)

    def recent(self, n: Any, now: float) -> list[str]:
        n = int(n) if valid_count(n) else 10
        newest = sorted(self.live(now), key=lambda e: (e.updated_at, e.seq), reverse=True)
        return [e.key for e in newest[:n]]

    def recall(self, query: str, limit: Any, now: float) -> list[tuple[str, float]]:
        limit = int(limit) if valid_count(limit) else 10
        query_words = words(query)
        if not query_words:
            return []
        hits = []
        for e in self.live(now):
            if query_words & e.words():
                hits.append((self.score(e, query_words, now), e.updated_at, e.seq, e.key))
        hits.sort(reverse=True)
        return [(key, s) for s, _, _, key in hits[:limit]]

    def ranking(self, query: str | None, now: float, must_keep: float | None = None) -> list[ModelEntry]:
        query_words = words(query) if query else frozenset()
        live = self.live(now)
        if must_keep is not None:  # CTX-10: the must-keep entries first, by retention, then the usual ranking
            kept = [e for e in live if e.importance >= must_keep]
            kept.sort(key=lambda e: (self.retention(e, now), e.updated_at, e.seq), reverse=True)
            rest = [e for e in self.ranking(query, now) if e.importance < must_keep]
            return kept + rest
        matching = [e for e in live if query_words & e.words()]
        others = [e for e in live if not query_words & e.words()]
        matching.sort(key=lambda e: (self.score(e, query_words, now), e.updated_at, e.seq), reverse=True)
        others.sort(key=lambda e: (self.retention(e, now), e.updated_at, e.seq), reverse=True)
        return matching + others

    def context(self, budget, query, tokenizer, fmt, separator, now, must_keep=None) -> tuple[str, list[str]]:
        """The naive greedy fill: re-render and re-count the whole text for every candidate."""
        chosen: list[ModelEntry] = []
        for candidate in self.ranking(query, now, must_keep):
            trial = sorted(chosen + [candidate], key=lambda e: (e.updated_at, e.seq))
            text = separator.join(fmt(e) for e in trial)
            if tokenizer(text) <= budget:
                chosen = trial
        return separator.join(fmt(e) for e in chosen), [e.key for e in chosen]

    def context_counted(self, budget, query, tokenizer, fmt, separator, now, must_keep=None) -> tuple[str, list[str]]:
        """The counted fill (CTX-12), restated: sum the line counts, count the joined text, drop the last pick while over."""
        ranked = self.ranking(query, now, must_keep)
        counts = [tokenizer(fmt(e)) for e in ranked]
        gap = tokenizer(separator)
        if any(type(c) is not int or c < 0 for c in [gap, *counts]):
            return self.context(budget, query, tokenizer, fmt, separator, now, must_keep)
        count_of = {e.key: c for e, c in zip(ranked, counts, strict=True)}
        picks: list[ModelEntry] = []
        for entry in ranked:
            # The selection with the candidate: its lines' counts and one separator between each two.
            if sum(count_of[p.key] for p in picks) + gap * len(picks) + count_of[entry.key] <= budget:
                picks.append(entry)
        while picks:
            chosen = sorted(picks, key=lambda e: (e.updated_at, e.seq))
            text = separator.join(fmt(e) for e in chosen)
            if tokenizer(text) <= budget:
                return text, [e.key for e in chosen]
            picks.pop()
        return "", []

    def stats(self, now: float) -> dict[str, int | str]:
        return {
            "size": len(self.live(now)),
            "stored": len(self.entries),
            "limit": self.limit,
            "cache": len([1 for _, at in self.cache.values() if now < at]),
            "compactions": self.compactions,
            "expired": self.expired,
            "evicted": self.evicted,
            "ranking": "words",  # the machine's memories are made with the default ranking (BM-10)
        }

    # -- transitions ---------------------------------------------------------

    def remember(self, key, data, importance, ttl, now) -> tuple[list[str], list[str]]:
        """Returns the keys reported as (expired, evicted)."""
        reported_expired = []
        old = self.entries.get(key)
        if old is not None and old.expired(now):
            reported_expired.append(key)
            self.expired += 1
            del self.entries[key]
            old = None
        if valid_importance(importance):
            weight = importance
        elif old is not None:
            weight = old.importance
        else:
            weight = 0.5
        self.entries[key] = ModelEntry(
            key=key,
            data=copy.deepcopy(list(data) if isinstance(data, tuple) else data),
            importance=weight,
            created_at=old.created_at if old is not None else now,
            updated_at=now,
            expires_at=now + ttl if valid_positive(ttl) else None,
            seq=self.seq,
        )
        self.seq += 1
        if len(self.entries) > self.limit:
            expired, evicted = self.compact(now)
            return reported_expired + expired, evicted
        return reported_expired, []

    def compact(self, now: float) -> tuple[list[str], list[str]]:
        """Drop expired, then one lowest-retention entry at a time while over the limit."""
        self.compactions += 1
        expired = sorted((e for e in self.entries.values() if e.expired(now)), key=lambda e: (e.updated_at, e.seq))
        for e in expired:
            del self.entries[e.key]
        evicted = []
        while len(self.live(now)) > self.limit:
            victim = min(self.live(now), key=lambda e: (self.retention(e, now), e.updated_at, e.seq))
            del self.entries[victim.key]
            evicted.append(victim.key)
        self.expired += len(expired)
        self.evicted += len(evicted)
        return [e.key for e in expired], evicted

    def forget(self, key: str, now: float) -> bool:
        e = self.entries.get(key)
        if e is None or e.expired(now):
            return False
        del self.entries[key]
        return True

    def clear(self) -> None:
        self.entries = {}

    def cache_put(self, key, value, ttl, now) -> None:
        self.cache = {k: v for k, v in self.cache.items() if now < v[1]}
        self.cache[key] = (copy.deepcopy(value), now + (ttl if valid_positive(ttl) else self.cache_ttl))

    def cache_get(self, key, now) -> Any:
        item = self.cache.get(key)
        return None if item is None or now >= item[1] else copy.deepcopy(item[0])

    def cache_delete(self, key, now) -> bool:
        item = self.cache.pop(key, None)
        return item is not None and now < item[1]

    def working_idle(self, now) -> bool:
        return self.working_at is not None and now - self.working_at >= self.working_ttl

    def working_get(self, now) -> dict:
        return {} if self.working_idle(now) else copy.deepcopy(self.working)

    def working_set(self, patch, now) -> None:
        base = {} if self.working_idle(now) else self.working
        self.working = {**base, **copy.deepcopy(patch)}
        self.working_at = now

    def working_clear(self) -> None:
        self.working, self.working_at = {}, None
