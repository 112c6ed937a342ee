"""A memory document as text: written one way, read strictly (PER-4, PER-13).

Python's ``json`` module is lenient where a memory must not be. Reading a
saved file here is strict, and every way a file can be damaged gives one
error, ``DamagedStoreError``, naming the file
and the problem:

* bytes that are not UTF-8, or that start with a byte order mark;
* text that is not JSON, including ``NaN`` and ``Infinity`` literals and
  numbers with more digits than Python will convert;
* an object with the same key twice anywhere (``json`` would keep the last
  one silently, so a repeated ``"entries": []`` could empty a memory);
* a top-level value that is not an object (``null`` is not "nothing saved":
  a missing file is);
* nesting deeper than ``MAX_TEXT_DEPTH``, found by a scan that does not
  recurse, so a file of a hundred thousand ``[`` is an error, not a crash.

Whether the object is a memory document (its version, its list of entries)
is ``sentinel_memory.core.document.problem``'s question, asked by the store.
"""

from __future__ import annotations

import _thread
import itertools
import json
import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

from ..core.document import problem
from ..core.errors import DamagedStoreError
from ..core.jsondata import MAX_DEPTH

__all__ = [
    "MAX_TEXT_DEPTH",
    "dumps",
    "json_text",
    "loads",
    "own_text",
    "read_document",
    "with_stack_room",
    "write_document",
]

#: The deepest nesting a saved file may have. A document is three levels
#: (document, entries, entry) around data of at most MAX_DEPTH; deeper data
#: written by other software is read, and its entry dropped and counted.
MAX_TEXT_DEPTH = 4 * MAX_DEPTH

T = TypeVar("T")


def dumps(document: dict[str, Any]) -> bytes:
    """The UTF-8 text a file store writes; raises ValueError for NaN or infinity, before any file is touched.

    One top-level field a line and one entry a line, so a file reads and
    diffs entry by entry. Each line is written by ``json``'s C encoder: an
    ``indent`` would make ``json`` fall back to its Python encoder, several
    times slower on every save.
    """
    if not isinstance(document, dict) or not all(isinstance(key, str) for key in document):
        # json's own rules (and errors) for what is no object or has keys that are not str
        return json_text(document, indent=1).encode("utf-8")
    fields = []
    for key, value in document.items():
        if key == "entries" and isinstance(value, list) and value:
            text = "[\n" + ",\n".join(json_text(entry) for entry in value) + "\n]"
        else:
            text = json_text(value)
        fields.append(f"{json_text(key)}: {text}")
    return ("{\n" + ",\n".join(fields) + "\n}").encode("utf-8")


def json_text(value: Any, **options: Any) -> str:
    """Strict JSON text of what a store writes (no NaN, non-ASCII as it is), or ValueError (WRP-4).

    ``json`` recurses, so a document nested deeper than the stack allows
    would raise ``RecursionError``; every store says ValueError instead, as
    for a circular one, and writes nothing.
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    except RecursionError:
        raise ValueError("the document is nested too deep to be written as JSON") from None


def own_text(text: str) -> Any:
    """``json.loads(text)`` of JSON a store wrote itself, from any call depth (PER-17).

    The decoder recurses once per nesting level, so a caller with little
    stack left would get ``RecursionError``: the text is then parsed on a
    fresh thread's stack. Trying where the caller is first costs nothing on
    the usual path. Text the store did not write is read with ``loads``.
    """
    try:
        return json.loads(text)
    except RecursionError:
        return with_stack_room(sys.getrecursionlimit(), json.loads, text)


def loads(raw: bytes, location: object) -> dict[str, Any]:
    """Parse a saved file's bytes into its top-level object, or raise DamagedStoreError (PER-13)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise DamagedStoreError("starts with a byte order mark; a memory file is UTF-8 without one", location)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DamagedStoreError(f"is not UTF-8 text (byte {error.start})", location) from None
    depth = _nesting(raw)
    if depth > MAX_TEXT_DEPTH:
        raise DamagedStoreError(f"is nested {depth} levels deep, more than {MAX_TEXT_DEPTH}", location)
    try:
        value = with_stack_room(depth + 50, _parse, text)
    except json.JSONDecodeError as error:
        raise DamagedStoreError(
            f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}", location
        ) from None
    except ValueError as error:  # NaN, a repeated key, an int with too many digits
        raise DamagedStoreError(f"is not valid JSON: {error}", location) from None
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise DamagedStoreError(f"holds a top-level {kind}, not a memory document object", location)
    return value


def read_document(text: str | bytes, location: object = None) -> dict[str, Any]:
    """A stored memory document read as strictly as the built-in stores read theirs (PER-13, PER-5).

    For a store of your own that keeps the document as text (a column, a
    value, an object in a bucket): damage is then what the built-in stores
    call damage, and ``load`` and ``save`` raise what they raise.

    Args:
        text: The stored text, as ``str`` or as UTF-8 bytes.
        location: Where it came from (a key, a row, a path), for the error. Defaults to None.

    Returns:
        The document, a dict of JSON values.

    Raises:
        DamagedStoreError: The text is not UTF-8, starts with a byte order mark, is not strict JSON
            (``NaN``, a repeated key, an integer literal of more than 4,300 digits), is nested deeper
            than ``MAX_TEXT_DEPTH``, or is no memory document (not an object, another version,
            entries that are no list, a bad generation).

    Examples:
        >>> read_document('{"version": 1, "generation": 2, "entries": []}')["generation"]
        2
        >>> read_document('{"version": 1, "entries": [], "entries": []}', "user-42")
        Traceback (most recent call last):
        ...
        sentinel_memory.core.errors.DamagedStoreError: user-42: is not valid JSON: the key 'entries' appears twice in one object
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    document = loads(raw, location)
    found = problem(document)
    if found is not None:
        raise DamagedStoreError(found, location)
    return document


def write_document(document: dict[str, Any]) -> str:
    """The strict JSON text of a document, as the built-in stores write it (no NaN, non-ASCII as it is, WRP-4).

    Args:
        document: The memory document a ``save`` was given.

    Returns:
        Its text, which ``read_document`` reads back as it was.

    Raises:
        ValueError: The document holds NaN or an infinity, or is nested too deep to write; nothing was written.
        TypeError: The document holds something that is not JSON.

    Examples:
        >>> write_document({"version": 1, "entries": [{"key": "ü"}]})
        '{"version": 1, "entries": [{"key": "ü"}]}'
    """
    return json_text(document)


def _parse(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_repeats, parse_constant=_no_constants)


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"the key {repeated!r} appears twice in one object")
    return result


def _no_constants(name: str) -> Any:
    # JSON has no NaN or Infinity; Python's parser would accept them.
    raise ValueError(f"{name} is not a JSON value")


#: An escape is a backslash and the character after it; an escaped quote ends no string.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
#: Every byte but brackets and quotes. UTF-8 never uses an ASCII byte inside a longer character.
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'[]{}"'))
#: How many rounds of dropping empty bracket pairs are tried before the depth is counted bracket by bracket.
_QUICK_ROUNDS = 8
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _nesting(raw: bytes) -> int:
    """An upper bound of the deepest bracket nesting outside strings, found without recursion.

    Exact unless the quick way below settles it first, and then at most
    ``2 * _QUICK_ROUNDS``: a file too deep is always reported with its depth.

    Byte operations that run in C do all the work: drop escapes, keep only
    brackets and quotes, and drop what lies between each pair of quotes.

    """
    structure = _ESCAPE.sub(b"", raw).translate(None, _NOT_STRUCTURE)
    # Most strings hold no bracket, so their quotes are now adjacent: drop
    # those pairs first. Dropping a closing quote and the next opening one
    # instead merges two strings with nothing between them, which leaves
    # what lies outside strings as it was.
    outside = b"".join(structure.replace(b'""', b"").split(b'"')[::2])
    # A file of shallow objects (a memory: entries of a few levels) is
    # balanced pairs of brackets. A round drops every empty ``{}`` and then
    # every empty ``[]``, at most two levels; when a few rounds leave
    # nothing, twice their number bounds the depth, without a Python step
    # per bracket.
    rest = outside
    for rounds in range(_QUICK_ROUNDS):
        if not rest:
            return 2 * rounds
        rest = rest.replace(b"{}", b"").replace(b"[]", b"")
    return max(itertools.accumulate(map(_STEP.__getitem__, outside)), default=0)


def _stack_depth() -> int:
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def with_stack_room(needed: int, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, on a fresh thread's stack when the caller's has fewer than ``needed`` frames left.

    Parsing and checking a document recurse once per nesting level. Running
    them where there is room makes a load work the same from any call
    depth; a fresh thread starts with the whole recursion limit.
    """
    if _stack_depth() + needed < sys.getrecursionlimit():
        return function(*args)
    outcome: list[Any] = []
    # The low-level thread API: a few frames short of the limit, threading.Thread's own Python
    # frames (an Event, a Condition) would be the ones to overflow.
    finished = _thread.allocate_lock()
    finished.acquire()

    def run() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # handed to the caller's thread as it is
            outcome.append((False, error))
        finally:
            finished.release()

    _thread.start_new_thread(run, ())
    finished.acquire()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
