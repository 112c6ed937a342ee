"""What "the same result" means (PROTOCOL.md, "Comparing results").

Results are JSON values. Two are equal when they have the same type and:

* numbers: the same double value, whatever their text (``1e-7`` and
  ``1e-07``, ``5`` and ``5.0``), because the retention and recall formulas
  are pinned to IEEE double order. A relative tolerance may be claimed
  explicitly; it is zero unless a run asks for more. An expected integer
  literal (a timestamp, a count, an int in the data) is the exact integer it
  is: the answer must hold that integer, as an int or an integral double,
  and no tolerance applies, so ``9007199254740993`` never equals the
  ``9007199254740992`` a port of doubles rounds it to.
* arrays: the same length and equal items in the same order;
* objects: the same keys, equal values (key order is not compared);
* strings, booleans and null: identical. A boolean is never a number.

``first_difference`` says where two values part, as a JSONPath-like
string, so a failure report points at the field instead of two screens of JSON.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["equal", "first_difference"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_number(a: float, b: float, tolerance: float) -> bool:
    if isinstance(a, int):  # the expected literal is an integer: exact, whatever the tolerance
        if isinstance(b, int):
            return a == b
        return math.isfinite(b) and b.is_integer() and int(b) == a
    try:
        x, y = float(a), float(b)
    except OverflowError:  # an integer beyond any double is compared exactly
        return a == b
    if x == y:
        return True
    return tolerance > 0 and math.isfinite(x) and math.isfinite(y) and abs(x - y) <= tolerance * max(abs(x), abs(y))


def first_difference(expected: Any, got: Any, tolerance: float = 0.0, path: str = "$") -> str | None:
    """The path of the first place ``got`` differs from ``expected``, or None when they are equal."""
    if _is_number(expected) and _is_number(got):
        return None if _same_number(expected, got, tolerance) else path
    if type(expected) is not type(got):
        return path
    if isinstance(expected, list):
        for index, (a, b) in enumerate(zip(expected, got, strict=False)):  # the lengths are compared after
            found = first_difference(a, b, tolerance, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(expected) == len(got) else f"{path} (length {len(expected)} != {len(got)})"
    if isinstance(expected, dict):
        if set(expected) != set(got):
            missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
            return f"{path} (missing keys {missing}, extra keys {extra})"
        for key in expected:
            found = first_difference(expected[key], got[key], tolerance, f"{path}.{key}")
            if found is not None:
                return found
        return None
    return None if expected == got else path


def equal(expected: Any, got: Any, tolerance: float = 0.0) -> bool:
    """Whether ``got`` is the same JSON value as ``expected`` by the rules above."""
    return first_difference(expected, got, tolerance) is None
