"""Where a budgeted history starts and where its facts go, so that consecutive requests share a prefix (MSG-11 .. MSG-14).

A chat API's prompt cache serves a request's leading tokens when an earlier
request began with exactly the same ones. ``get_messages`` fills the history
newest first to the budget, so its first turn moves on nearly every request
(``cut="newest"``). The stable cut (``cut="stable"``) moves it only at
*marks*: the units (MSG-7) that open with a user message and start a new
stride of ``floor(token_budget * (1 - low_mark))`` tokens, counting the
tokens of the units before them from the oldest unit of the history. The
history starts at the oldest mark among the units the newest-first fill
takes, so it stays put while the conversation grows, until the budget
pushes the fill past that mark; then it jumps one stride on, down to about
``low_mark`` of the budget, and stays again. Everything here is computed
from the memory's turns and the call's arguments: two processes over one
memory, a restart and a port build the same request.

The facts go in their own system message after the history
(``facts_at="end"``), so a new question that picks other facts changes only
the request's last messages; ``facts_at="system"`` keeps them in the system
message after the app's prompt.

With ``keep_results``, a request that cannot hold every unit first clears
the tool results of all but its newest ``keep_results`` units
(``clear_unit``, MSG-15): each becomes ``CLEARED``, its call and its
``tool_call_id`` kept, so the history shrinks before any turn is dropped.
Which results are cleared follows from the units alone, so consecutive
requests clear the same ones and differ only where a unit has just aged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .shown import shown

__all__ = [
    "CLEARED",
    "CUTS",
    "FACTS_AT",
    "Plan",
    "check_choice",
    "clear_unit",
    "marks",
    "plan",
    "stable_taken",
    "stride",
]

#: MSG-11: how the history is cut: the newest units that fit, or at marks.
CUTS = ("newest", "stable")

#: MSG-12: where the facts go: in the system message after the app's prompt, in their own system message at
#: the end, or in their own system message right after the app's prompt.
FACTS_AT = ("system", "end", "start")

#: MSG-15: the content of a cleared tool result (the text LangChain's ``ClearToolUsesEdit`` puts by default).
CLEARED = "[cleared]"


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices`` (None gives the first); ``TypeError``/``ValueError`` naming them.

    Examples:
        >>> check_choice("cut", None, CUTS), check_choice("cut", "stable", CUTS)
        ('newest', 'stable')
        >>> check_choice("cut", "old", CUTS)
        Traceback (most recent call last):
        ...
        ValueError: cut must be one of ('newest', 'stable'), got 'old'
    """
    if value is None:
        return choices[0]
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {choices}, got {type(value).__name__}")
    value = str.__str__(value)  # a str subclass's own == must not run here (WRP-4)
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {shown(value)}")
    return value


def stride(token_budget: int | float, low_mark: float) -> int:
    """MSG-11: the tokens between two marks, ``floor(token_budget * (1 - low_mark))`` (0: every user unit is a mark).

    Examples:
        >>> stride(1000, 0.5), stride(1001, 0.5), stride(1000, 1)
        (500, 500, 0)
    """
    return max(0, math.floor(token_budget * (1 - low_mark)))


def marks(costs: Sequence[int | float], users: Sequence[bool], step: int) -> list[bool]:
    """MSG-11: which units, oldest first, are marks.

    A unit is a mark when it opens with a user message and either no older
    unit does, or the tokens before it (the sum of the costs of every older
    unit) divided by ``step`` and floored exceed the same for the next older
    unit that opens with a user message. With ``step`` 0 every such unit is
    a mark.

    Examples:
        >>> marks([10, 10, 10, 10], [True, False, True, False], 15)
        [True, False, True, False]
        >>> marks([5, 5, 5, 5], [True, True, True, True], 12)
        [True, False, False, True]
    """
    out: list[bool] = []
    before: int | float = 0
    last: int | None = None  # the stride of the newest user unit met so far
    for cost, user in zip(costs, users, strict=True):
        mark = False
        if user:
            here = 0 if step == 0 else math.floor(before / step)
            mark = step == 0 or last is None or here > last
            last = here
        out.append(mark)
        before += cost
    return out


def stable_taken(unit: Callable[[int], tuple[int | float, bool] | None], must: int, taken: int, step: int) -> int:
    """MSG-11: how many units, newest first, the stable cut keeps, from the ``taken`` of the newest-first fill.

    ``unit(i)`` is the cost of the unit ``i`` places back from the newest and
    whether it opens with a user message (None past the oldest); the first
    ``must`` units are always in. The cut is the oldest mark among the units
    ``must .. taken - 1`` (so every unit from it on is in), or none of them
    when no mark is among them. Every unit of the history is read once:
    the marks depend on the tokens before each unit.

    Examples:
        >>> costs = [(10, True), (10, False), (10, True), (10, False), (10, True)]
        >>> stable_taken(lambda i: costs[i] if i < len(costs) else None, 1, 5, 15)
        5
        >>> stable_taken(lambda i: costs[i] if i < len(costs) else None, 1, 4, 15)
        3
    """
    if taken <= must:
        return taken
    newest_first: list[tuple[int | float, bool]] = []
    while (got := unit(len(newest_first))) is not None:
        newest_first.append(got)
    if taken >= len(newest_first):
        return taken  # every unit is in: nothing is cut
    oldest_first = newest_first[::-1]
    flags = marks([c for c, _ in oldest_first], [u for _, u in oldest_first], step)
    count = len(newest_first)
    for at in range(taken - 1, must - 1, -1):  # the oldest taken unit first
        if flags[count - 1 - at]:
            return at + 1
    return must


def clear_unit(
    unit: tuple[list[tuple[Any, dict[str, Any]]], int | float],
    excluded: frozenset[str],
    cost: Callable[[dict[str, Any]], int | float],
) -> tuple[list[tuple[Any, dict[str, Any]]], int | float]:
    """MSG-15: ``unit`` with each tool result cleared, and its new cost.

    A tool message becomes a new dict whose ``content`` is ``CLEARED``
    (every other field kept) when the call it answers names no tool of
    ``excluded`` and the cleared message counts fewer tokens than it does
    (``cost``); the unit's other messages, and its entries, are the same
    objects. A unit without tool calls is returned as it is.

    Examples:
        >>> call = {"role": "assistant", "content": None,
        ...         "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}]}
        >>> size = lambda m: len(m["content"] or "")
        >>> unit = ([(1, call), (2, {"role": "tool", "tool_call_id": "c", "content": "a long result"})], 13)
        >>> clear_unit(unit, frozenset(), size)[0][1], clear_unit(unit, frozenset(), size)[1]
        ((2, {'role': 'tool', 'tool_call_id': 'c', 'content': '[cleared]'}), 9)
        >>> clear_unit(unit, frozenset({"f"}), size) is unit
        True
    """
    pairs, _ = unit
    calls = pairs[0][1].get("tool_calls")
    if not calls:
        return unit
    names = {call["id"]: call["function"]["name"] for call in calls}
    out: list[tuple[Any, dict[str, Any]]] = []
    changed = False
    for entry, message in pairs:
        sent = message
        if message["role"] == "tool" and names.get(message["tool_call_id"]) not in excluded:
            cleared = {**message, "content": CLEARED}
            if cost(cleared) < cost(message):
                sent, changed = cleared, True
        out.append((entry, sent))
    if not changed:
        return unit
    return out, sum(cost(message) for _, message in out)


class Plan(NamedTuple):
    """What ``plan`` chose: the units kept newest first, their cost, the system message, the facts and their message.

    ``full`` is True when the newest-first fill took every unit (before any cut back to a mark).
    """

    taken: int
    spent: int | float
    system: str | None
    head: int | float
    chosen: Any
    facts: str | None
    facts_cost: int | float
    complete: bool
    full: bool


def plan(
    *,
    unit: Callable[[int], tuple[Any, int | float] | None],
    must: int,
    required: int | float,
    token_budget: int | float,
    reserve: int | float,
    system: str | None,
    count: Callable[[str], int | float],
    empty: int | float,
    choose: Callable[[int | float], Any],
    has_all: Callable[[Any], bool],
    cut: str,
    facts_at: str,
    low_mark: float,
    message_tokens: int,
    separator: str,
    memo_cut: Callable[[int, int, int], int | None] | None = None,
) -> Plan:
    """MSG-11, MSG-12: the facts first, within ``reserve``, then the history's units within what is left.

    ``unit(i)`` is the unit ``i`` places back from the newest and its cost
    (MSG-7); the first ``must`` of them (costing ``required``) are always in.
    ``choose(left)`` picks the facts within ``left`` tokens (a ``Context``),
    ``has_all`` says whether a pick holds every must-keep fact. The facts'
    room is ``min(reserve, token_budget - own - required)``; when a
    must-keep fact is missing, ``token_budget - own - required``, and
    ``complete`` is False when one is missing even then. With
    ``facts_at="end"`` the facts are their own message (``tokens + message_tokens``);
    with ``"system"`` they follow ``system`` and ``separator`` in the
    system message, which counts as a whole. Then the units on from ``must``
    are taken newest first while the request stays within the budget, with
    no gaps; with ``cut="stable"`` the history is cut back to a mark
    (``stable_taken``, or ``memo_cut(must, taken, stride)`` when it gives
    the same from a memo, MSG-17, and is not None).
    """
    own = 0 if system is None else count(system) + message_tokens

    def pick(room: int | float) -> tuple[Any, str | None, int | float, str | None, int | float]:
        """The facts within ``room`` tokens: (pick, system message, its cost, facts message, its cost)."""
        chosen: Any = None
        if facts_at != "system":
            left = room - message_tokens
            if left >= 0 and empty <= left:
                chosen = choose(left)
            if chosen is None or not chosen.entries:
                return chosen, system, own, None, 0
            return chosen, system, own, chosen.text, chosen.tokens + message_tokens
        left = room - message_tokens if system is None else room - count(separator)
        while left >= 0 and empty <= left:
            chosen = choose(left)
            if not chosen.entries:
                break
            content = chosen.text if system is None else system + separator + chosen.text
            over = count(content) + message_tokens - own - room
            if over <= 0:
                return chosen, content, count(content) + message_tokens, None, 0
            left -= over  # the prompt and the facts joined count more than their parts: give the facts less
            chosen = None
        return chosen, system, own, None, 0

    most = token_budget - own - required
    chosen, content, head, facts, facts_cost = pick(min(reserve, most))
    complete = has_all(chosen)
    if not complete and reserve < most:
        chosen, content, head, facts, facts_cost = pick(most)
        complete = has_all(chosen)
    fixed = head + facts_cost
    taken, spent = must, required
    while (got := unit(taken)) is not None and fixed + spent + got[1] <= token_budget:
        spent += got[1]
        taken += 1
    full = got is None
    if cut == "stable":
        step = stride(token_budget, low_mark)
        kept = None if memo_cut is None else memo_cut(must, taken, step)  # MSG-17: the same, from a memo
        if kept is None:
            kept = stable_taken(
                lambda i: None if (u := unit(i)) is None else (u[1], u[0][0][1]["role"] == "user"),
                must,
                taken,
                step,
            )
        while taken > kept:
            taken -= 1
            got = unit(taken)
            assert got is not None
            spent -= got[1]
    return Plan(taken, spent, content, head, chosen, facts, facts_cost, complete, full)
