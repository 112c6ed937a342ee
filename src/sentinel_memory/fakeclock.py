"""A clock that moves only when told to, for examples, notebooks and tests.

A memory reads the time from its ``clock`` (TIME-1). With the wall clock, an example that
waits for a ttl to run out would have to sleep, and its printed times would differ on every
run. ``FakeClock`` stands still until ``advance`` moves it, so every run prints the same thing:

    >>> from sentinel_memory import create_memory
    >>> from sentinel_memory.fakeclock import FakeClock, MINUTE
    >>> clock = FakeClock()
    >>> mem = create_memory(clock=clock)
    >>> _ = mem.remember("session:cart", "2 items", ttl=15 * MINUTE)
    >>> _ = clock.advance(15 * MINUTE)
    >>> mem.get("session:cart") is None
    True

It imports only the standard library, so it needs no test framework.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["DAY", "HOUR", "MINUTE", "SECOND", "START", "FakeClock"]

#: Milliseconds in a second, a minute, an hour and a day: the unit of every time in the library.
SECOND = 1_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

#: Where a ``FakeClock`` starts unless told otherwise (2026-10-18 08:00 UTC), in milliseconds since the epoch.
START = 1_792_310_400_000


def _milliseconds(value: object, what: str) -> int:
    """``value`` as whole milliseconds: an int (not a bool) or a ``timedelta``."""
    if isinstance(value, timedelta):
        return value // timedelta(milliseconds=1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be whole milliseconds (an int) or a timedelta, not {type(value).__name__}")
    return value


class FakeClock:
    """A clock for a memory's ``clock=`` that reads the same time until ``advance`` moves it.

    Args:
        start: The time it starts at, in milliseconds since the epoch (or a ``timedelta`` since
            it). Defaults to ``START``.

    Raises:
        TypeError: ``start`` is not an int.

    Example:
        >>> from sentinel_memory.fakeclock import MINUTE, FakeClock
        >>> clock = FakeClock(start=0)
        >>> clock.advance(MINUTE)
        60000
        >>> clock()
        60000
    """

    def __init__(self, start: int | timedelta = START) -> None:
        #: The time it reads now; an example may also set it, e.g. to one millisecond before a deadline.
        self.now = _milliseconds(start, "start")

    def __call__(self) -> int:
        """The time now, in milliseconds since the epoch; what a memory reads.

        Returns:
            The current time of this clock.
        """
        return self.now

    def advance(self, by: int | timedelta) -> int:
        """Move the clock forward (or back, with a negative amount).

        Args:
            by: How far: milliseconds, or a ``datetime.timedelta``.

        Returns:
            The new time.

        Raises:
            TypeError: ``by`` is neither an int nor a ``timedelta``; the clock is unchanged.
        """
        self.now += _milliseconds(by, "by")
        return self.now

    def __repr__(self) -> str:
        return f"FakeClock(now={self.now})"
