"""Helpers shared by the example tests: time constants and a fake clock."""

from __future__ import annotations

import sentinel_memory as sm

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR

#: A fixed starting time (2026-10-17T00:00:00Z, the article's createdAt).
T0 = 1_792_310_400_000


class FakeClock:
    """An injected clock that only moves when told to, and counts its reads."""

    def __init__(self, start: int = T0) -> None:
        self.now = start
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.now

    def advance(self, ms: int | float) -> None:
        self.now += ms


class RecordingStore(sm.MemoryStore):
    """A MemoryStore that keeps every document it was asked to save, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[dict] = []

    def save(self, document: dict) -> None:
        self.saves.append(document)
        super().save(document)
