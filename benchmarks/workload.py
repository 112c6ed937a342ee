"""The benchmark workload: stores of N entries of about 60 characters, built directly.

Building a store through N remembers would time the build, not the
operation; the entries here are what those remembers would have made.
"""

from __future__ import annotations

import random

from sentinel_memory import MemoryState
from sentinel_memory.values import Config, Entry

NOW = 1_792_310_400_000
WORDS = (
    "refund order status cart warehouse shipping invoice customer support ticket "
    "weather prague lunch meeting tomorrow question answer reminder allergy peanut "
    "language czech english account password reset delivery address payment card"
).split()
IMPORTANCES = [0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]


def sentence(rng: random.Random, length: int = 60) -> str:
    """About ``length`` characters of words."""
    out = []
    while sum(len(w) + 1 for w in out) < length - 8:
        out.append(rng.choice(WORDS))
    return " ".join(out)


def make_state(n: int, *, limit: int | None = None, seed: int = 42) -> MemoryState:
    """``n`` live entries spread over the last two days, importance from a handful of values."""
    rng = random.Random(seed)
    # Remembered over the last two days, oldest first, as a live store would be.
    stamps = sorted(NOW - rng.randrange(0, 2 * 86_400_000) for _ in range(n))
    entries = {}
    for i, at in enumerate(stamps):
        entries[f"chat:{i}"] = Entry(
            key=f"chat:{i}",
            data=sentence(rng),
            importance=rng.choice(IMPORTANCES),
            created_at=at,
            updated_at=at,
            expires_at=None,
            seq=i,
        )
    return MemoryState(config=Config(limit=limit or max(n, 1)), entries=entries, next_seq=n)


def texts_of(state: MemoryState) -> list[str]:
    """The rendered lines of a state, oldest first: what a newest-first trimmer sees."""
    return [e.line for e in sorted(state.entries.values(), key=lambda e: e.order)]

