"""What travels between the runner and a backend (PROTOCOL.md).

Everything is a JSON value. Three things need a convention:

* **Numbers JSON cannot write.** The number rule (NUM-1) and the data rule
  (ENT-2) must be tested with NaN and the infinities, so a case writes them
  as ``{"$number": "NaN"}``, ``{"$number": "Infinity"}`` and
  ``{"$number": "-Infinity"}``, anywhere in its arguments or its ``now``.
* **Values the protocol returns.** An entry travels as the article's JSON
  (``key, data, importance, createdAt, updatedAt, expiresAt``), exactly as a
  saved document lists it; the other results are objects named field by field.
* **Which group an op belongs to.** That is data, ``OP_GROUPS``, so the
  runner can skip a case a backend cannot run without asking it.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Mapping
from typing import Any

from ..core.document import record
from ..core.values import Compaction, Context, Entry, Hit, LoadResult, Messages

__all__ = [
    "OP_GROUPS",
    "SPECIAL",
    "case_groups",
    "compaction",
    "context",
    "decode",
    "encode",
    "entries",
    "hits",
    "integer_digits",
    "integer_of",
    "load_result",
    "messages",
]

#: The key of the one-key object that stands for a number JSON cannot write.
SPECIAL = "$number"
_SPECIALS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

#: Every op and the capability group it needs (PROTOCOL.md, "Ops").
OP_GROUPS: Mapping[str, str] = {
    "remember": "entries",
    "add_turn": "entries",
    "add_message": "messages",
    "add_messages": "messages",
    "get": "entries",
    "has": "entries",
    "forget": "entries",
    "clear": "entries",
    "size": "entries",
    "get_recent": "entries",
    "get_messages": "messages",
    "stats": "entries",
    "compact": "compaction",
    "evictions": "compaction",
    "recall": "recall",
    "get_context": "context",
    "cache_put": "cache",
    "cache_get": "cache",
    "cache_delete": "cache",
    "cache_clear": "cache",
    "working_set": "working",
    "working_get": "working",
    "working_clear": "working",
    "save": "persistence",
    "stored": "persistence",
    "load": "persistence",
}


def decode(value: Any) -> Any:
    """``value`` with every ``{"$number": ...}`` replaced by the float it names."""
    if isinstance(value, dict):
        if len(value) == 1 and SPECIAL in value:
            name = value[SPECIAL]
            if not isinstance(name, str) or name not in _SPECIALS:
                raise ValueError(f"unknown special number {name!r}; use one of {sorted(_SPECIALS)}")
            return _SPECIALS[name]
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value


#: Python refuses to write an int of more digits than this as text unless told to (sys.set_int_max_str_digits).
_DIGITS_BITS = 4300 * 3
#: Digits converted by Python's own int() and str() at once; beyond, both are quadratic, so halves are joined.
_PIECE = 3000


def integer_of(digits: str) -> int:
    """The integer an integer literal of any length names (section 4), in time below quadratic.

    Python's ``int(text)`` takes seconds for a million digits (and refuses
    more than 4,300 unless told otherwise); splitting the digits in halves and
    joining them with one multiplication by a power of ten takes well under
    one, so a hostile literal cannot hold a backend past the runner's timeout.
    """
    negative = digits.startswith("-")
    body = digits[1:] if negative else digits
    if not body.isascii() or not body.isdigit():
        raise ValueError(f"not an integer literal: {digits[:40]!r}")
    powers: dict[int, int] = {}

    def join(text: str) -> int:
        if len(text) <= _PIECE:
            return int(text)
        low = len(text) // 2
        if low not in powers:
            powers[low] = 10**low
        return join(text[:-low]) * powers[low] + join(text[-low:])

    value = join(body)
    return -value if negative else value


_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def integer_digits(value: int) -> str:
    """The decimal digits of ``value``, in time below quadratic (``str(int)`` is quadratic in Python 3.11).

    The halves are joined in ``decimal``, whose multiplication of long
    numbers is fast, and a Decimal prints its digits in linear time.
    """
    powers: dict[int, decimal.Decimal] = {}

    def split(number: int, bits: int) -> decimal.Decimal:
        if bits <= _PIECE * 3:
            return decimal.Decimal(number)
        low = bits // 2
        if low not in powers:
            powers[low] = _EXACT.power(decimal.Decimal(2), low)
        high = number >> low
        return _EXACT.add(_EXACT.multiply(split(high, bits - low), powers[low]), split(number - (high << low), low))

    magnitude = abs(value)
    text = format(split(magnitude, magnitude.bit_length()), "f")
    return "-" + text if value < 0 else text


def encode(value: Any) -> Any:
    """``value`` as an answer can carry it (PROTOCOL.md section 4): NaN and infinities, and integers of
    more than 4,300 digits, as ``{"$number": ...}``, so that no answer is lost for a number JSON cannot write."""
    if isinstance(value, float) and not math.isfinite(value):
        return {SPECIAL: "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _DIGITS_BITS:
        digits = integer_digits(value)
        if len(digits.lstrip("-")) > 4300:
            return {SPECIAL: digits}
        return value  # 4,300 digits or fewer (but over 12,900 bits): JSON text, as section 4 says
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    return value


def case_groups(case: Mapping[str, Any]) -> set[str]:
    """The groups a case needs: those of its ops, persistence for an autosaving config, sessions for several memories,
    bm25 for a config that sets the ranking or a document that names one."""
    needed = {OP_GROUPS.get(step.get("op"), "entries") for step in case.get("steps", [])}
    if case.get("config", {}).get("autosave") is True:
        needed.add("persistence")
    if "shared" in case.get("config", {}) or any("memory" in step for step in case.get("steps", [])):
        needed.update(("sessions", "persistence"))
    if "ranking" in case.get("config", {}):  # the BM25 ranking is an option a port may leave out (BM-9)
        needed.add("bm25")
    if any(_names_ranking(step) for step in case.get("steps", [])):  # a document saved with a ranking (BM-10)
        needed.add("bm25")
    return needed


def _names_ranking(step: Mapping[str, Any]) -> bool:
    """True when a step puts a document that names a ranking into the store (BM-10, BM-11)."""
    args = step.get("args")
    document = args.get("document") if isinstance(args, dict) else None
    return isinstance(document, dict) and "ranking" in document


def entries(items: tuple[Entry, ...]) -> list[dict[str, Any]]:
    """Entries as the article's JSON, in the order given."""
    return [record(entry) for entry in items]


def hits(items: tuple[Hit, ...]) -> list[dict[str, Any]]:
    """Recall hits: ``[{"entry": ..., "score": ...}]``, best first."""
    return [{"entry": record(hit.entry), "score": hit.score} for hit in items]


def compaction(value: Compaction) -> dict[str, Any]:
    """``{"expired": [...], "evicted": [...]}``."""
    return {"expired": entries(value.expired), "evicted": entries(value.evicted)}


def context(value: Context) -> dict[str, Any]:
    """``{"text", "entries", "tokens", "omitted"}``."""
    return {"text": value.text, "entries": entries(value.entries), "tokens": value.tokens, "omitted": value.omitted}


def messages(value: Messages, *, prefix: bool = False) -> dict[str, Any]:
    """``{"messages", "entries", "tokens", "omitted", "pending"}``, and ``"prefix", "prefixTokens"`` when asked (MSG-13)."""
    out = {
        "messages": [dict(message) for message in value.messages],
        "entries": entries(value.entries),
        "tokens": value.tokens,
        "omitted": value.omitted,
        "pending": entries(value.pending),
    }
    if prefix:
        out["prefix"], out["prefixTokens"] = value.prefix, value.prefix_tokens
    return out


def load_result(value: LoadResult) -> dict[str, Any]:
    """``{"loaded", "dropped", "compacted"}``."""
    return {"loaded": value.loaded, "dropped": value.dropped, "compacted": value.compacted}
