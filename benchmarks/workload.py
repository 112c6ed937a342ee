"""The benchmark workloads: stores of N entries of about 60 characters, in several shapes.

Building a store through N remembers would time the build, not the
operation; the entries here are what those remembers would have made.

A *shape* is how the entries' importances and ttls are spread, because
that is what the speed machinery depends on:

* ``seven``: importance from seven fixed values, no ttls (an app that
  hard-codes a few importances).
* ``continuous``: every importance its own, uniform in [0, 1] (a
  classifier's score, an LLM's rating).
* ``expiring``: continuous importances, and 30% of the entries with a ttl,
  about half of which have already expired (cart notes, reminders).
"""

from __future__ import annotations

import random

from sentinel_memory import MemoryState
from sentinel_memory.values import Config, Entry

NOW = 1_792_310_400_000
DAY = 86_400_000
WORDS = (
    "refund order status cart warehouse shipping invoice customer support ticket "
    "weather prague lunch meeting tomorrow question answer reminder allergy peanut "
    "language czech english account password reset delivery address payment card"
).split()
IMPORTANCES = [0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]
SHAPES = ("seven", "continuous", "expiring")
#: A two-word query, and one taken from a chat turn: most of its words are in no entry.
QUERIES = {"two words": "refund status", "chat turn": "what did I order last week?"}


def sentence(rng: random.Random, length: int = 60) -> str:
    """About ``length`` characters of words."""
    out = []
    while sum(len(w) + 1 for w in out) < length - 8:
        out.append(rng.choice(WORDS))
    return " ".join(out)


def make_entries(n: int, shape: str = "seven", *, seed: int = 42) -> list[Entry]:
    """``n`` entries remembered over the last two days, oldest first, importances and ttls by ``shape``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    rng = random.Random(seed)
    stamps = sorted(NOW - rng.randrange(0, 2 * DAY) for _ in range(n))
    entries = []
    for i, at in enumerate(stamps):
        importance = rng.choice(IMPORTANCES) if shape == "seven" else rng.random()
        expires_at = None
        if shape == "expiring" and rng.random() < 0.3:
            # ttls of up to two days: about half of them have run out by NOW.
            expires_at = at + rng.randrange(1, 2 * DAY)
        entries.append(
            Entry(
                key=f"chat:{i}",
                data=sentence(rng),
                importance=importance,
                created_at=at,
                updated_at=at,
                expires_at=expires_at,
                seq=i,
            )
        )
    return entries


def make_state(n: int, shape: str = "seven", *, limit: int | None = None, seed: int = 42) -> MemoryState:
    """A state of ``n`` stored entries of ``shape`` (see :func:`make_entries`)."""
    entries = make_entries(n, shape, seed=seed)
    return MemoryState(config=Config(limit=limit or max(n, 1)), entries={e.key: e for e in entries}, next_seq=n)


def live_texts(state: MemoryState, now: int = NOW) -> list[str]:
    """The rendered lines of the live entries, oldest first: what a newest-first trimmer sees."""
    return [e.line for e in state.index.live_by_age(now)]


def mass_expiry_state(n: int = 100_000, expired: int = 15_000, *, seed: int = 7) -> MemoryState:
    """A full store of ``n`` continuous-importance entries, ``expired`` of which have a ttl that ran out by NOW."""
    rng = random.Random(seed)
    entries = make_entries(n, "continuous", seed=seed)
    doomed = set(rng.sample(range(n), expired))
    entries = [
        Entry(e.key, e.data, e.importance, e.created_at, e.updated_at, NOW - 1 if i in doomed else None, e.seq)
        for i, e in enumerate(entries)
    ]
    return MemoryState(config=Config(limit=n), entries={e.key: e for e in entries}, next_seq=n)
