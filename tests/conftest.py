"""Shared fixtures: a fake clock and memories built on it."""

from __future__ import annotations

import pytest

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


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make(clock):
    """``make(**options)``: a memory on the fake clock, not loading by default."""

    def build(**options):
        options.setdefault("clock", clock)
        return sm.create_memory(**options)

    return build


@pytest.fixture
def mem(make):
    return make()
