"""What an entry may hold, how it is copied and how it is written as text (ENT-2, ENT-3, TXT-1..3).

Entry data is strict JSON: ``None``, ``bool``, ``int``, finite ``float``,
``str``, ``list``/``tuple`` and ``dict`` with ``str`` keys. Python's ``json``
module is more lenient than JSON itself (it writes ``NaN`` and ``Infinity``);
such values are rejected on the way in with ``TypeError``, deliberately unlike
``JSON.stringify``, which would quietly turn NaN into ``null``.

When data is not a string, the context renders it as its canonical JSON text
by RFC 8785 (JCS): no whitespace, object keys sorted by UTF-16 code units,
numbers written the way ECMAScript writes them. JCS is a published standard,
so every port renders the same text and counts the same tokens.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .message import body_of, is_stored_message
from .shown import shown

__all__ = [
    "MAX_DEPTH",
    "canonical_json",
    "clone",
    "copy_json",
    "fits_double",
    "is_json_text",
    "read_items",
    "read_list",
    "text_of",
]

#: ENT-13: how many containers deep a value may be nested. JSON parsers
#: recurse (CPython's at most about a thousand levels, serde_json's 128), so
#: a memory accepts only what it can always read back, in every port.
MAX_DEPTH = 100


#: Every int strictly between its negative and it converts to a finite double (``fits_double``): 2**1023.
_SAFE_INT = 2**1023


def fits_double(value: int) -> bool:
    """True when an int converts to a finite double: what every JSON reader can hold as a number (ENT-2, NUM-1)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def is_json_text(value: str) -> bool:
    """True when a str can be written as JSON text: it holds no lone surrogate (ENT-2)."""
    if value.isascii():
        return True
    # UTF-8 cannot encode a surrogate, and it can encode every other code
    # point: the C encoder finds one several times faster than a search.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text(value: str, what: object) -> str:
    # A lone surrogate cannot be written as UTF-8, so the JSON file could
    # not hold it; refuse it here instead of failing later at save time.
    if not is_json_text(value):
        raise TypeError(f"{what} holds a lone surrogate, which JSON text cannot carry")
    return value


def copy_json(value: Any, *, what: str = "data", inside: int = 0) -> Any:
    """Check that ``value`` is strict JSON and return a deep copy of it (ENT-2, ENT-3).

    Tuples come back as lists, int and float subclasses as plain ``int`` and
    ``float``. Anything else (a set, a date, NaN, an int too large for a
    double, a dict with a non-str key, a circular structure) raises
    ``TypeError``; a value nested more than [`MAX_DEPTH`][sentinel_memory.core.jsondata.MAX_DEPTH] containers deep
    raises ``ValueError`` (ENT-13), counting the ``inside`` containers the
    value will be stored in (a message's content is inside the message). Either
    way the caller has changed nothing yet.
    """
    if type(value) is str:  # the usual data: nothing to copy, only the check
        return _check_text(value, what)
    return _copy(value, what, set(), (what, MAX_DEPTH - inside))


def read_items(value: Any, where: object) -> list[tuple[Any, Any]]:
    """A mapping's ``items()`` as a list; ``TypeError`` naming ``where`` when its own ``items()`` raises (WRP-4)."""
    try:
        return list(value.items())
    except Exception as error:
        raise TypeError(f"{where} cannot be read: its items() raised {type(error).__name__}") from error


def read_list(value: Any, where: object) -> list[Any]:
    """A list's or a tuple's items as a new list; ``TypeError`` naming ``where`` when its own iteration raises (WRP-4)."""
    try:
        return list(value)
    except Exception as error:
        raise TypeError(f"{where} cannot be read: its iteration raised {type(error).__name__}") from error


class _At:
    """Where a value sits inside the data, ``where[key]``, written out only when an error names it (ENT-2)."""

    __slots__ = ("key", "outer")

    def __init__(self, outer: object, key: str | int) -> None:
        self.outer, self.key = outer, key

    def __str__(self) -> str:
        return f"{self.outer}[{shown(self.key) if isinstance(self.key, str) else self.key}]"


def _copy(value: Any, where: Any, open_containers: set[int], root: tuple[str, int]) -> Any:
    # ``open_containers`` holds the containers being copied, outermost first,
    # so its size is the current depth.
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):  # a subclass as the plain str it holds, never through its own methods (WRP-4)
        return _check_text(str.__str__(value), where)
    if isinstance(value, bool):  # a bool subclass is still not a number
        return bool(value)
    if isinstance(value, int):
        if not fits_double(value):
            raise TypeError(f"{where} is an int too large for a JSON number (beyond the double range)")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"{where} is {shown(value)}, which is not JSON")
        return float(value)
    if isinstance(value, (list, tuple, dict)):
        marker = id(value)
        if marker in open_containers:
            raise TypeError(f"{where} contains itself; JSON cannot be circular")
        if len(open_containers) >= root[1]:
            # The value the caller named (``data``, ``messages[3].content``), not the part found too deep.
            raise ValueError(f"{root[0]} is nested more than {MAX_DEPTH} containers deep")
        open_containers.add(marker)
        try:
            keyed = isinstance(value, dict)
            pairs = read_items(value, where) if keyed else enumerate(read_list(value, where))
            keys: list[str] = []
            made: list[Any] = []
            for at, item in pairs:  # a dict's keys and values, or a list's places and items
                if keyed:
                    if type(at) is str and at.isascii():  # the usual key: a plain str, JSON text as it is
                        keys.append(at)
                    elif not isinstance(at, str):
                        raise TypeError(f"{where} has a key {shown(at)} that is not a str")
                    else:  # a str subclass's own methods never run (WRP-4)
                        keys.append(_check_text(str.__str__(at), where))
                kind = type(item)
                if (
                    (kind is str and item.isascii())
                    or kind is bool
                    or item is None
                    or (kind is int and -_SAFE_INT < item < _SAFE_INT)
                    or (kind is float and item - item == 0.0)
                ):  # the usual values, JSON as they are (a finite float, an int a double holds): nothing to name
                    made.append(item)
                else:
                    made.append(_copy(item, _At(where, keys[-1] if keyed else at), open_containers, root))
            return dict(zip(keys, made, strict=True)) if keyed else made
        finally:
            open_containers.discard(marker)
    raise TypeError(f"{where} of type {type(value).__name__} is not JSON-serializable")


def clone(value: Any) -> Any:
    """A deep copy of data that ``copy_json`` already checked: dicts and lists rebuilt, the rest shared (ENT-3).

    Checked data holds only immutable scalars besides its containers, so
    there is nothing to validate again on the way out. A container is
    copied at C speed, and only the containers inside it are copied again:
    a message's ``{"role", "content"}`` costs one ``dict.copy``.
    """
    if type(value) is dict:
        copied = value.copy()
        for key, item in value.items():
            if type(item) is dict or type(item) is list:
                copied[key] = clone(item)
        return copied
    if type(value) is list:
        items = value.copy()
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                items[i] = clone(item)
        return items
    return value


def text_of(data: Any) -> str:
    """The text an entry's data renders as: a str as is, a message as ``role: content`` (TXT-4), anything else as JCS (TXT-1)."""
    if isinstance(data, str):
        return data
    message = as_message(data)
    if message is not None:
        return f"{message[0]}: {message[1]}"
    return canonical_json(data)


def as_message(data: Any) -> tuple[str, str] | None:
    """``(role, text)`` when ``data`` is a chat message (TXT-4); else None.

    ``{"role": str, "content": str}`` and nothing else, the role not empty;
    or a message in its stored form (MSG-5), whose text is its content's
    text and its calls (MSG-7).
    """
    if type(data) is dict:
        if len(data) == 2:
            role, content = data.get("role"), data.get("content")
            if type(role) is str and role and type(content) is str:
                return role, content
        if "role" in data and "content" in data:
            if is_stored_message(data):
                return data["role"], body_of(data)
    return None


def canonical_json(value: Any) -> str:
    """RFC 8785 canonical JSON of already-checked data (TXT-1, TXT-2, TXT-3)."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, int):
        # TXT-3: ints keep their exact digits, also beyond 2**53 where a
        # JavaScript number would have rounded; JCS only speaks of doubles.
        out.append(str(value))
    elif isinstance(value, float):
        out.append(ecmascript_number(value))
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        out.append("{")
        # JCS sorts member names by their UTF-16 code units; the big-endian
        # encoding compares byte-wise in exactly that order.
        for i, key in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(_quote(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f]')


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _quote(text: str) -> str:
    """A JSON string the way ``JSON.stringify`` writes it: non-ASCII as is."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def ecmascript_number(value: float) -> str:
    """``Number.prototype.toString()`` of a finite double (TXT-2).

    Python's ``repr`` already yields the shortest digits that round-trip,
    which is what ECMAScript asks for; only the layout differs
    (Python ``1e+16`` is ECMAScript ``10000000000000000``, ``1e-07`` is
    ``1e-7`` and ``100.0`` is ``100``).
    """
    if value == 0:
        return "0"  # also -0.0, as in JavaScript
    if value < 0:
        return "-" + ecmascript_number(-value)
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    stripped = digits.rstrip("0")
    # value == int(digits) * 10 ** (exp - len(fraction)); with k significant
    # digits, ECMAScript's n is the position of the decimal point.
    k = len(stripped)
    n = len(digits) + int(exponent or 0) - len(fraction)
    digits = stripped
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(e)}"
