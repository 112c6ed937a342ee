"""The number rule and every documented default (NUM-1 .. NUM-4, OPT-1, OPT-2).

A numeric option that is not a finite number in range is *ignored* and the
documented default is used instead. It is never clamped: ``importance=1.5``
becomes 0.5 (the default), not 1.0. A pipeline that sends garbage then gets a
value that can be looked up in the README, never a plausible number nobody
chose.

The ranges are data (``NUMBER_RULES``), so the documentation can render
them as a table and a port can copy them as they are.

Two Python conveniences sit on top (NUM-5, NUM-6): an ignored value is not
silent, it emits an ``IgnoredValueWarning``
naming the option, the value and what was used instead; and every duration
also accepts a ``datetime.timedelta``, converted exactly to
milliseconds, so ``ttl=timedelta(minutes=15)`` means what it says.
"""

from __future__ import annotations

import contextlib
import math
import sys
import types
import warnings
from datetime import timedelta
from typing import Any

import attrs

from .errors import IgnoredValueWarning
from .jsondata import fits_double
from .shown import shown
from .tokens import estimate_tokens
from .values import default_format

__all__ = [
    "DEFAULTS",
    "NUMBER_RULES",
    "Duration",
    "NumberRule",
    "is_number",
    "milliseconds",
    "number_option",
    "require_bool",
    "require_callable",
]


@attrs.frozen
class NumberRule:
    """The accepted range of one numeric option and the default used otherwise.

    ``minimum`` is inclusive unless ``exclusive_minimum`` is set; ``maximum``
    (when given) is inclusive. ``integer`` options accept ints and integral
    floats (``5.0`` counts as ``5``, NUM-2). A ``duration`` is milliseconds
    and also accepts a ``datetime.timedelta`` (NUM-6).

    Attributes:
        default: The value used when the given one is not in range; None for "none" (a ttl).
        minimum: The lowest value accepted.
        exclusive_minimum: ``minimum`` itself is not accepted. Defaults to False.
        maximum: The highest value accepted, or None for no bound. Defaults to None.
        integer: Only whole numbers are accepted. Defaults to False.
        duration: Milliseconds, or a ``datetime.timedelta``. Defaults to False.
        none_means: What a ``default`` of None means, as the warning says it. Defaults to ``"no expiry"``.

    Examples:
        >>> NUMBER_RULES["limit"].default, NUMBER_RULES["limit"].describe()
        (1000, 'integer >= 1')
    """

    default: int | float | None
    minimum: int | float
    exclusive_minimum: bool = False
    maximum: int | float | None = None
    integer: bool = False
    duration: bool = False
    #: What a ``default`` of None means for this option, in the warning's words (NUM-5).
    none_means: str = "no expiry"

    def describe(self) -> str:
        """The range in words, as the docs show it.

        Returns:
            For example ``"number >= 0 and <= 1"`` or ``"number > 0 (ms, or a timedelta)"``.

        Examples:
            >>> NUMBER_RULES["ttl"].describe()
            'number > 0 (ms, or a timedelta)'
        """
        low = f"> {self.minimum}" if self.exclusive_minimum else f">= {self.minimum}"
        high = f" and <= {self.maximum}" if self.maximum is not None else ""
        kind = "integer" if self.integer else "number"
        also = " (ms, or a timedelta)" if self.duration else ""
        return f"{kind} {low}{high}{also}"


#: A duration: milliseconds, or a ``datetime.timedelta`` (NUM-6).
Duration = int | float | timedelta

#: NUM-3: every numeric option, its range and its default.
NUMBER_RULES: types.MappingProxyType[str, NumberRule] = types.MappingProxyType(
    {
        "importance": NumberRule(default=0.5, minimum=0, maximum=1),
        # ENT-16: a chat turn matters less than a fact by default (see the rule for why).
        "turn_importance": NumberRule(default=0.3, minimum=0, maximum=1),
        "ttl": NumberRule(default=None, minimum=0, exclusive_minimum=True, duration=True),
        "limit": NumberRule(default=1000, minimum=1, integer=True),
        "recency_window": NumberRule(default=86_400_000, minimum=0, exclusive_minimum=True, duration=True),
        "working_ttl": NumberRule(default=3_600_000, minimum=0, exclusive_minimum=True, duration=True),
        "cache_ttl": NumberRule(default=300_000, minimum=0, exclusive_minimum=True, duration=True),
        "recall_limit": NumberRule(default=10, minimum=0, integer=True),
        "recent_n": NumberRule(default=10, minimum=0, integer=True),
        "must_keep": NumberRule(default=None, minimum=0, maximum=1, none_means="no must-keep facts"),
        "facts_share": NumberRule(default=0.5, minimum=0, maximum=1),
        "low_mark": NumberRule(default=0.5, minimum=0, maximum=1),
        "keep_results": NumberRule(default=None, minimum=0, integer=True, none_means="no tool result cleared"),
    }
)


def is_number(value: object) -> bool:
    """True for an int or float that is finite as a double; bool is not a number (NUM-1).

    An int too large for a double (``10**400``) is not a number here: it
    could not be saved as one, nor compared with a time without overflowing.

    Args:
        value: Anything.

    Returns:
        True when ``value`` is a number by the number rule.

    Examples:
        >>> from sentinel_memory.core.options import is_number
        >>> is_number(1.5), is_number(float("nan")), is_number(True), is_number(10**400)
        (True, False, False, False)
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


#: How the warning names an option whose rule is named differently from its argument.
_ARGUMENT = {
    "turn_importance": "add_turn importance",
    "recall_limit": "recall limit",
    "recent_n": "get_recent n",
    "must_keep": "get_context must_keep",
    "facts_share": "get_messages facts_share",
    "low_mark": "get_messages low_mark",
    "keep_results": "get_messages keep_results",
}

_ONE_MS = timedelta(milliseconds=1)


def milliseconds(duration: timedelta) -> int | float:
    """A timedelta in milliseconds, exactly: an int when it is whole milliseconds (NUM-6).

    ``timedelta`` counts whole microseconds, so a duration with a part of a
    millisecond becomes the float nearest to it (``timedelta(microseconds=1500)``
    is ``1.5``).

    Args:
        duration: The duration to convert.

    Returns:
        The milliseconds, an ``int`` when whole.

    Examples:
        >>> from datetime import timedelta
        >>> from sentinel_memory.core.options import milliseconds
        >>> milliseconds(timedelta(minutes=15)), milliseconds(timedelta(microseconds=1500))
        (900000, 1.5)
    """
    if duration % _ONE_MS:
        return duration / _ONE_MS
    return duration // _ONE_MS


def number_option(
    name: str, value: object, default: Any = ..., *, quiet: tuple[object, ...] = (), instead: str = "the default"
) -> Any:
    """Apply the number rule for option ``name`` (NUM-1 .. NUM-6).

    A value that is given (not None) and ignored emits ``IgnoredValueWarning``,
    unless it is one of ``quiet``, the values documented to mean the default
    (an entry's ``ttl=0`` means "no expiry").

    Args:
        name: The option's name in ``NUMBER_RULES``.
        value: The value given.
        default: What to use instead of an ignored value. Defaults to the rule's documented
            default (an overwrite passes the old importance, NUM-4).
        quiet: Values that mean the default and are ignored without a warning. Defaults to ``()``.
        instead: How the warning names what was used. Defaults to ``"the default"``.

    Returns:
        ``value`` when it is a finite number in the option's range (an integral float becomes an
        ``int`` where an integer is wanted; a timedelta becomes milliseconds where a duration is
        wanted), otherwise the default.

    Raises:
        KeyError: ``name`` is not an option in ``NUMBER_RULES``.

    Examples:
        >>> from sentinel_memory.core.options import number_option
        >>> number_option("limit", 5.0), number_option("ttl", 0, quiet=(0,))
        (5, None)
    """
    rule = NUMBER_RULES[name]
    fallback = rule.default if default is ... else default
    if rule.duration and isinstance(value, timedelta):
        converted = milliseconds(value)
        return _checked(rule, converted, fallback, name, value, quiet, instead)
    return _checked(rule, value, fallback, name, value, quiet, instead)


def _checked(
    rule: NumberRule, value: object, fallback: Any, name: str, given: object, quiet: tuple[object, ...], instead: str
) -> Any:
    if _in_range(rule, value):
        return int(value) if rule.integer else value  # type: ignore[call-overload]
    if given is not None and not (is_number(value) and any(value == q for q in quiet)):
        _warn_ignored(name, given, rule, fallback, instead)
    return fallback


def _in_range(rule: NumberRule, value: object) -> bool:
    if not is_number(value):
        return False
    number: int | float = value  # type: ignore[assignment]
    if rule.integer and isinstance(number, float) and not number.is_integer():
        return False
    if rule.exclusive_minimum:
        if not number > rule.minimum:
            return False
    elif not number >= rule.minimum:
        return False
    return rule.maximum is None or number <= rule.maximum


def _warn_ignored(name: str, value: object, rule: NumberRule, used: Any, instead: str) -> None:
    meaning = rule.none_means if used is None else repr(used)
    wanted = rule.describe()
    article = "an" if wanted[0] in "aeiou" else "a"
    warnings.warn(
        IgnoredValueWarning(
            f"{_ARGUMENT.get(name, name)}={shown(value)} is not {article} {wanted}; using {instead} ({meaning}). "
            "Numbers are never clamped or converted (the number rule)."
        ),
        stacklevel=_caller_level(),
    )


#: The folder of the whole package (``sentinel_memory/``), by string: the core reads no file system.
_PACKAGE = __file__[: -len("core/options.py")]


#: contextlib's own file: its frames sit between a ``with`` and a package's context manager.
_CONTEXTLIB = contextlib.__file__


def _caller_level() -> int:
    """The stacklevel of the first frame outside this package, so the warning points at the caller's line.

    Frames of ``contextlib`` count as the package's: a warning from inside a
    ``with mem.transaction():`` points at the ``with``, not at contextlib.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE) or frame.f_code.co_filename == _CONTEXTLIB
    ):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def require_callable(name: str, value: object, *, optional: bool = False) -> None:
    """Raise TypeError unless ``value`` is callable (or None when optional) (OPT-1).

    Args:
        name: The option's name, for the message.
        value: The value given.
        optional: None is accepted too. Defaults to False.

    Raises:
        TypeError: ``value`` is not callable (and not an accepted None).
    """
    if value is None and optional:
        return
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")


def require_bool(name: str, value: object) -> None:
    """Raise TypeError unless ``value`` is a bool (OPT-1).

    Args:
        name: The option's name, for the message.
        value: The value given.

    Raises:
        TypeError: ``value`` is not a ``bool``.
    """
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
