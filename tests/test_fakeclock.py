"""The fake clock the docs and notebooks share: it reads the same time until moved, by ints or timedeltas."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sentinel_memory import create_memory
from sentinel_memory.fakeclock import DAY, HOUR, MINUTE, SECOND, START, FakeClock


def test_it_stands_still_until_advanced():
    """Two reads without an advance give the same time; advance returns and keeps the new time."""
    clock = FakeClock()
    assert clock() == clock() == START == clock.now
    assert clock.advance(MINUTE) == START + 60_000 == clock()
    assert clock.advance(timedelta(hours=1)) == START + 60_000 + HOUR
    assert clock.advance(-SECOND) == START + 60_000 + HOUR - 1_000
    assert (SECOND, MINUTE, HOUR, DAY) == (1_000, 60_000, 3_600_000, 86_400_000)


@pytest.mark.parametrize("bad", [1.5, "60000", None, True])
def test_a_bad_amount_raises_and_leaves_the_clock_alone(bad):
    """advance(1.5), advance("60000"), advance(None) or advance(True) raise TypeError and change nothing."""
    clock = FakeClock(start=10)
    with pytest.raises(TypeError, match="whole milliseconds"):
        clock.advance(bad)
    assert clock() == 10
    with pytest.raises(TypeError):
        FakeClock(start=bad)


def test_a_memory_on_it_expires_exactly_on_time():
    """TIME-1: the memory reads this clock, so a 15-minute ttl ends when the clock has moved 15 minutes."""
    clock = FakeClock()
    mem = create_memory(clock=clock)
    mem.remember("session:cart", "2 items", ttl=15 * MINUTE)
    clock.advance(15 * MINUTE - 1)
    assert mem.get("session:cart") == "2 items"
    clock.advance(1)
    assert mem.get("session:cart") is None
    assert repr(clock) == f"FakeClock(now={START + 15 * MINUTE})"
