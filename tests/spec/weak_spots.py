"""Where the vectors are thin, and how much more often the random mode goes there (PROTOCOL section 12).

The fixed vectors pin what someone thought of; the random mode finds what
nobody did, but only where it sends steps. This module counts, in
``spec/vectors``, the cases that reach each *weak spot*: a kind of op
sequence that the vectors met rarely and ports got wrong (open calls
answered in a later step or after a reload, two memories on one store,
numbers beyond a double's exact integers, messages with their optional
fields, the prompt-cache options of ``get_messages``). The differential
machine's ``weak_spot`` rule then picks a spot with a weight that falls as
the vectors' count rises (``weights``): a spot the vectors reach in few
cases is sent far more often than one they reach in many. Adding vectors
for a spot lowers its weight on the next run; nothing here is tuned by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sentinel_memory.conformance.vectors import load_all

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"

#: A spot's weight is ``ceil(SCALE / (1 + cases))``, at least 1: a spot no vector reaches gets ``SCALE``.
SCALE = 64

#: The get_messages arguments of the prompt cache (MSG-11 .. MSG-16).
CACHE_OPTIONS = ("cut", "low_mark", "facts_at", "keep_results", "exclude_tools")
#: The optional fields of a chat message (MSG-5), beside role and content.
OPTIONAL_FIELDS = ("name", "tool_calls", "tool_call_id")


def cases(folder: Path = VECTORS) -> Iterator[dict[str, Any]]:
    """Every case of every vector file in ``folder``, as the runner reads them."""
    return (case for _, case in load_all(folder))


def _messages(step: dict[str, Any]) -> list[Any]:
    """The messages a step stores: ``add_message``'s one, ``add_messages``' list."""
    args = step.get("args") or {}
    if step.get("op") == "add_message":
        return [args.get("message")]
    if step.get("op") == "add_messages" and isinstance(args.get("messages"), list):
        return list(args["messages"])
    return []


def _calls(message: Any) -> list[str]:
    """The ids of an assistant message's calls."""
    if not isinstance(message, dict) or not isinstance(message.get("tool_calls"), list):
        return []
    return [call["id"] for call in message["tool_calls"] if isinstance(call, dict) and isinstance(call.get("id"), str)]


def _answers(message: Any) -> str | None:
    """The call a tool message answers."""
    if isinstance(message, dict) and message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
        return message["tool_call_id"]
    return None


def answered_later(case: dict[str, Any], *, reloaded: bool) -> bool:
    """A call answered by a later step than its own (``reloaded``: with a load or another memory's step between)."""
    called: dict[str, tuple[int, bool]] = {}  # id -> (the step that stored the call, a reload since)
    for number, step in enumerate(case.get("steps", [])):
        if step.get("op") == "load" or step.get("memory", 1) != 1:
            called = {ident: (at, True) for ident, (at, _) in called.items()}
        for message in _messages(step):
            answer = _answers(message)
            if answer in called and called[answer][0] < number and (called[answer][1] or not reloaded):
                return True
            for ident in _calls(message):
                called[ident] = (number, False)
    return False


def two_memories(case: dict[str, Any]) -> bool:
    """A shared config, or a step on a second memory (section 8)."""
    return (case.get("config") or {}).get("shared") is True or any(
        step.get("memory", 1) != 1 for step in case.get("steps", [])
    )


def _big(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > 2**53
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) > 2**53
    if isinstance(value, dict):
        return any(_big(v) for v in value.values())
    if isinstance(value, list):
        return any(_big(v) for v in value)
    return False


def big_numbers(case: dict[str, Any]) -> bool:
    """A number beyond a double's exact integers in an argument or a step's now (NUM-1, TIME-1)."""
    return any(_big(step.get("args")) or _big(step.get("now")) for step in case.get("steps", []))


def full_messages(case: dict[str, Any]) -> bool:
    """A stored message with a ``name`` and content parts, or with a null optional field (MSG-5)."""
    for step in case.get("steps", []):
        for message in _messages(step):
            if not isinstance(message, dict):
                continue
            if "name" in message and isinstance(message.get("content"), list):
                return True
            if any(field in message and message[field] is None for field in OPTIONAL_FIELDS):
                return True
    return False


def cache_options(case: dict[str, Any]) -> bool:
    """A ``get_messages`` given the prompt-cache options (MSG-11 .. MSG-16), twice or more in the case (MSG-17's memo)."""
    asked = [
        step
        for step in case.get("steps", [])
        if step.get("op") == "get_messages" and any(name in (step.get("args") or {}) for name in CACHE_OPTIONS)
    ]
    return len(asked) >= 2


#: The weak spots, each with the test of a case that reaches it. The machine has a generator for each.
SPOTS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "answered-later": lambda case: answered_later(case, reloaded=False),
    "answered-after-reload": lambda case: answered_later(case, reloaded=True),
    "two-memories": two_memories,
    "big-numbers": big_numbers,
    "full-messages": full_messages,
    "cache-options": cache_options,
}


def census(folder: Path = VECTORS) -> dict[str, int]:
    """How many vector cases reach each weak spot."""
    counts = dict.fromkeys(SPOTS, 0)
    for case in cases(folder):
        for spot, reaches in SPOTS.items():
            counts[spot] += bool(reaches(case))
    return counts


def weights(counts: dict[str, int]) -> dict[str, int]:
    """Each spot's weight: ``ceil(SCALE / (1 + cases))``, at least 1."""
    return {spot: max(1, math.ceil(SCALE / (1 + count))) for spot, count in counts.items()}


def weighted(counts: dict[str, int]) -> list[str]:
    """The spots, each repeated by its weight, for ``sampled_from``: the thinnest spot first (hypothesis shrinks toward it)."""
    ranked = sorted(weights(counts).items(), key=lambda item: (-item[1], item[0]))
    return [spot for spot, weight in ranked for _ in range(weight)]
