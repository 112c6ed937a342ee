"""The number rule and every documented default (NUM-1 .. NUM-4, OPT-1, OPT-2).

A numeric option that is not a finite number in range is *ignored* and the
documented default is used instead. It is never clamped: ``importance=1.5``
becomes 0.5 (the default), not 1.0. A pipeline that sends garbage then gets a
value that can be looked up in the README, never a plausible number nobody
chose.

The ranges are data (:data:`NUMBER_RULES`), so the documentation can render
them as a table and a port can copy them as they are.
"""

from __future__ import annotations

import math
import types
from typing import Any

import attrs

from .jsondata import fits_double
from .tokens import estimate_tokens
from .values import default_format

__all__ = [
    "DEFAULTS",
    "NUMBER_RULES",
    "NumberRule",
    "is_number",
    "number_option",
    "require_bool",
    "require_callable",
]


@attrs.frozen
class NumberRule:
    """The accepted range of one numeric option and the default used otherwise.

    ``minimum`` is inclusive unless ``exclusive_minimum`` is set; ``maximum``
    (when given) is inclusive. ``integer`` options accept ints and integral
    floats (``5.0`` counts as ``5``, NUM-2).
    """

    default: int | float | None
    minimum: int | float
    exclusive_minimum: bool = False
    maximum: int | float | None = None
    integer: bool = False

    def describe(self) -> str:
        """The range in words, as the docs show it."""
        low = f"> {self.minimum}" if self.exclusive_minimum else f">= {self.minimum}"
        high = f" and <= {self.maximum}" if self.maximum is not None else ""
        kind = "integer" if self.integer else "number"
        return f"{kind} {low}{high}"


#: NUM-3: every numeric option, its range and its default.
NUMBER_RULES: types.MappingProxyType[str, NumberRule] = types.MappingProxyType(
    {
        "importance": NumberRule(default=0.5, minimum=0, maximum=1),
        "ttl": NumberRule(default=None, minimum=0, exclusive_minimum=True),
        "limit": NumberRule(default=1000, minimum=1, integer=True),
        "recency_window": NumberRule(default=86_400_000, minimum=0, exclusive_minimum=True),
        "working_ttl": NumberRule(default=3_600_000, minimum=0, exclusive_minimum=True),
        "cache_ttl": NumberRule(default=300_000, minimum=0, exclusive_minimum=True),
        "recall_limit": NumberRule(default=10, minimum=0, integer=True),
        "recent_n": NumberRule(default=10, minimum=0, integer=True),
    }
)


def is_number(value: object) -> bool:
    """True for an int or float that is finite as a double; bool is not a number (NUM-1).

    An int too large for a double (``10**400``) is not a number here: it
    could not be saved as one, nor compared with a time without overflowing.
    """
    kind = type(value)  # plain floats and ints first: a load asks this of every entry
    if kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    if kind is int:
        return fits_double(value)  # type: ignore[arg-type]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return fits_double(value)
    return math.isfinite(value)


def number_option(name: str, value: object, default: Any = ...) -> Any:
    """Apply the number rule for option ``name`` (NUM-1, NUM-2, NUM-3).

    Returns ``value`` when it is a finite number in the option's range (an
    integral float becomes an ``int`` where an integer is wanted), otherwise
    the documented default, or ``default`` when the caller passes one (an
    overwrite keeps the old importance, NUM-4).
    """
    rule = NUMBER_RULES[name]
    fallback = rule.default if default is ... else default
    if not is_number(value):
        return fallback
    if rule.integer:
        if isinstance(value, float):
            if not value.is_integer():
                return fallback
            value = int(value)
    if rule.exclusive_minimum:
        if not value > rule.minimum:
            return fallback
    elif not value >= rule.minimum:
        return fallback
    if rule.maximum is not None and not value <= rule.maximum:
        return fallback
    return value


def require_callable(name: str, value: object, *, optional: bool = False) -> None:
    """Raise TypeError unless ``value`` is callable (or None when optional) (OPT-1)."""
    if value is None and optional:
        return
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")


def require_bool(name: str, value: object) -> None:
    """Raise TypeError unless ``value`` is a bool (OPT-1)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")


#: OPT-2: every documented default in one read-only mapping.
DEFAULTS: types.MappingProxyType[str, Any] = types.MappingProxyType(
    {
        **{name: rule.default for name, rule in NUMBER_RULES.items()},
        "separator": "\n",
        "format": default_format,
        "tokenizer": estimate_tokens,
        "autosave": False,
        "load": True,
    }
)
