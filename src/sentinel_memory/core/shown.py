"""How an error or a warning shows a value the caller passed: briefly, whatever it is (WRP-4).

A message that prints the argument it refuses is the most useful kind, but
``repr`` of a list nested 5,000 deep raises ``RecursionError``, of an int of
5,000 digits raises ``ValueError``, and of a 10 MB string makes a 10 MB
message. So every message goes through ``shown``: ``reprlib`` with small
limits, and for an object whose own ``__repr__`` fails, its type alone.
"""

from __future__ import annotations

import reprlib

__all__ = ["shown"]


class _Brief(reprlib.Repr):
    """``reprlib`` with an int too long for ``repr`` shown by its size."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 1000:  # repr() itself refuses ints past 4,300 digits
            return f"<an int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_BRIEF = _Brief()
_BRIEF.maxlevel = 3
_BRIEF.maxlong, _BRIEF.maxstring, _BRIEF.maxother = 40, 60, 80
_BRIEF.maxdict = _BRIEF.maxlist = _BRIEF.maxtuple = _BRIEF.maxset = 6


def shown(value: object) -> str:
    """``value`` for a message: at most a few levels, items and characters; never raises."""
    try:
        return _BRIEF.repr(value)
    except Exception:  # a __repr__ of the caller's that fails, or recurses without end
        return f"<{type(value).__name__} object>"
