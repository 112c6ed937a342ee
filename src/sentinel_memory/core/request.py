"""The chat request ``get_messages`` builds: facts in a system message, then the newest whole units of the history (MSG-1 .. MSG-9)."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from .basics import _check_now, _copies, _live_count
from .chat import ROLES, body_of
from .cut import CUTS, FACTS_AT, check_choice, clear_unit
from .cut import plan as cut_plan
from .errors import TokenBudgetError
from .expiry import is_past
from .jsondata import clone, is_json_text
from .options import number_option
from .prompt import render_default
from .search import _query_words
from .state import MemoryState
from .tokens import LineCounter, TokenizerLike, as_tokenizer, count_tokens, estimate_tokens
from .turns import chat_message
from .unitmemo import Key, UnitMemo, empty, kept
from .values import (
    Context,
    Entry,
    Messages,
    sorted_by_age,
)
from .window import _check_budget, _facts_of, context

#: MSG-3: what every message adds to a prompt beyond its content, in tokens: the role and the
#: delimiters of the chat format (``<|start|>role<|message|>content<|end|>`` is 3 for OpenAI's models).
MESSAGE_TOKENS = 3


def messages(
    state: MemoryState,
    *,
    now: int | float,
    token_budget: int | float,
    query: str | None = None,
    tokenizer: TokenizerLike | None = None,
    must_keep: float | None = None,
    facts_share: float | None = None,
    system: str | None = None,
    cut: str | None = None,
    low_mark: float | None = None,
    facts_at: str | None = None,
    keep_results: int | None = None,
    exclude_tools: Sequence[str] | None = None,
) -> Messages:
    """A valid chat request within ``token_budget``: the system message, then whole units of turns (MSG-2 .. MSG-9).

    The turns are cut into units (MSG-7): an assistant message with
    ``tool_calls`` and the tool messages answering all its calls are one
    unit, every other message a unit of its own; a call left unanswered in
    the middle, an orphan tool result and a role outside the chat API's are
    left out, and an unanswered call at the end is left out and reported as
    ``pending``. The history starts at a user message, and the units from the
    newest user message on are always in (MSG-9). The first message is the
    system message: ``system`` (the app's instructions, counted in the
    budget) and the facts (CTX-1 .. CTX-10, with ``query`` and
    ``must_keep``) after it. Turns are taken newest first, unit by unit,
    from all but ``facts_share`` of the budget; the facts get what the turns
    leave; older units take what the facts leave over.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).
        token_budget: The most tokens the messages may count, a finite number >= 0.
        query: Rank the facts that share its words first. Defaults to None (no query).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with
            ``encode(text)``. Defaults to None (the state's tokenizer).
        must_keep: Facts of at least this importance, in [0, 1], are always in. Defaults to None.
        facts_share: The share of the budget, in [0, 1], kept for facts while there are any.
            Defaults to None (0.5).
        system: The app's own system prompt, the start of the system message. Defaults to None.
        cut: ``"newest"`` (the default) fills the history newest first to the budget; ``"stable"``
            cuts it only at marks, so consecutive requests share their start (MSG-11).
        low_mark: With ``cut="stable"``, about the share of the budget a request fills right after
            the history is cut, in [0, 1]. Defaults to None (0.5).
        facts_at: ``"system"`` (the default) puts the facts in the system message after ``system``;
            ``"end"`` in a system message of their own after the history, ``"start"`` right after
            the app's system message (MSG-12).
        keep_results: When the history does not fit whole, clear the tool results of every unit
            but the newest ``keep_results`` (an integer >= 0) before any unit is left out: each
            becomes ``"[cleared]"``, its call and id kept (MSG-15). Defaults to None (no clearing).
        exclude_tools: Names of tools whose results are never cleared. Defaults to None (none).

    The messages and the turn entries are the caller's own copies (ENT-3, MSG-18).

    Returns:
        A ``Messages`` with the ``messages`` (a new list of new dicts in the chat-completions form),
        the ``entries`` used, their ``tokens``, how many live entries were ``omitted``, and the
        ``pending`` turns of an unanswered call at the end.

    Raises:
        ValueError: The budget is not a finite number >= 0.
        TokenBudgetError: The system prompt, the must-keep facts and the turns from the newest
            user message on count more than the budget (a ``ValueError``).
        TypeError: ``now`` is not a finite number, the query or ``system`` is not a str, the
            tokenizer is not callable or returned something other than a number >= 0, or
            ``exclude_tools`` is not a list or tuple of str.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, _, _ = core.add_turn(state, "user", "Hi!", now=1000)
        >>> core.messages(state, now=1000, token_budget=50, system="Be brief.").messages
        [{'role': 'system', 'content': 'Be brief.\\n\\nuser:name: Jakub'}, {'role': 'user', 'content': 'Hi!'}]
    """
    return handed_out(
        state,
        shared_messages(
            state,
            now=now,
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            system=system,
            cut=cut,
            low_mark=low_mark,
            facts_at=facts_at,
            keep_results=keep_results,
            exclude_tools=exclude_tools,
        ),
    )


def handed_out(state: MemoryState, result: Messages) -> Messages:
    """A ``shared_messages`` result as ``messages`` returns it: every message and every turn entry a copy (MSG-18)."""
    return attrs.evolve(
        result,
        messages=[clone(message) for message in result.messages],
        entries=_copies(state, result.entries),
        pending=_copies(state, result.pending),
    )


def shared_messages(
    state: MemoryState,
    *,
    now: int | float,
    token_budget: int | float,
    query: str | None = None,
    tokenizer: TokenizerLike | None = None,
    must_keep: float | None = None,
    facts_share: float | None = None,
    system: str | None = None,
    cut: str | None = None,
    low_mark: float | None = None,
    facts_at: str | None = None,
    keep_results: int | None = None,
    exclude_tools: Sequence[str] | None = None,
) -> Messages:
    """``messages``' request as the state holds it, for a caller that copies what it hands out (MSG-18).

    The same request as ``messages`` (which calls it), but a message of a
    stored turn may be the turn's data itself, and the entries are the
    state's own: read them, never change them, and copy what leaves you.
    """
    _check_now(now)
    _check_budget(token_budget)
    _query_words(query, optional=True)  # a bad query is refused even when no fact needs it (REC-4)
    if system is not None:
        if not isinstance(system, str):
            raise TypeError(f"system must be a str, got {type(system).__name__}")
        system = str.__str__(system)  # a str subclass's own methods never run (WRP-4)
        if not is_json_text(system):  # no request can carry it, nor any tokenizer count it (ENT-2)
            raise TypeError("system holds a lone surrogate, which no chat request can carry")
    counting = as_tokenizer(tokenizer) or state.config.tokenizer
    # A tokenizer counted line by line remembers each message's count (CTX-12); the count is the same.
    per_message = counting.measure if isinstance(counting, LineCounter) else counting
    share = number_option("facts_share", facts_share)
    keep = number_option("must_keep", must_keep)
    recent = number_option("keep_results", keep_results)
    excluded = _tool_names(exclude_tools)
    facts = _facts_of(state)

    def message_cost(message: dict[str, Any]) -> int | float:
        return count_tokens(per_message, body_of(message)) + MESSAGE_TOKENS

    # The turns newest first, cut into units as the walk reaches them (MSG-7): a call no further back than
    # the budget reaches is never looked at, nor sorted.
    def body_cost(body: str) -> int | float:  # a message's count from its text, as message_cost counts it
        return count_tokens(per_message, body) + MESSAGE_TOKENS

    newest = _NewestUnits(state, now, message_cost, body_cost, counted=_counted_by(counting))
    # MSG-9: the history starts at a user message; the units from the newest one on are always in.
    must, required = newest.through_newest_user()
    own = count_tokens(per_message, system) + MESSAGE_TOKENS if system is not None else 0
    units: _NewestUnits | _Cleared = newest
    if recent is not None and own + required > token_budget:
        # MSG-15: the units that are always in do not fit whole: clear their older results first.
        units = _Cleared(newest, recent, excluded, message_cost)
        required = units.total(must)
    if own + required > token_budget:
        what = (
            "the system prompt and the turns from the newest user message on"
            if system is not None
            else ("the turns from the newest user message on")
        )
        raise TokenBudgetError(own + required, token_budget, what)
    how = check_choice("cut", cut, CUTS)
    where = check_choice("facts_at", facts_at, FACTS_AT)
    low = number_option("low_mark", low_mark)
    kept: list[Entry] = []
    if keep is not None:
        kept = list(itertools.takewhile(lambda e: e.importance >= keep, facts.index.by_importance_desc(now)))

    def attempt(units: _NewestUnits | _Cleared, required: int | float) -> tuple[Messages, bool]:
        """The request over ``units``, and whether the newest-first fill took every unit."""
        if how != "newest" or where != "system":
            return _planned(
                state,
                now,
                units,
                must,
                required,
                token_budget,
                query,
                counting,
                per_message,
                keep,
                kept,
                share,
                system,
                how,
                where,
                low,
                None if recent is None else excluded,
            )
        return _newest(
            state, now, units, must, required, token_budget, query, counting, per_message, keep, kept, share, system
        )

    if recent is None:
        return attempt(units, required)[0]
    if isinstance(units, _NewestUnits):
        memo = None if how != "stable" else _memo(state, now, counting, message_cost, body_cost, excluded, newest)
        whole = None if memo is None else _memo_whole(memo, newest)
        # MSG-17: when the units alone count more than the budget, the fill cannot take them all: clear at once.
        if whole is None or whole <= token_budget:
            try:
                result, full = attempt(units, required)
                if full:
                    return result
            except TokenBudgetError:
                pass  # the must-keep facts do not fit beside the whole results: clear them, then judge
        units = _Cleared(newest, recent, excluded, message_cost)
        required = units.total(must)
    return units.with_prefix(attempt(units, required)[0])


def _must_keep_refused(
    kept: list[Entry],
    counting: Any,
    per_message: Any,
    system: str | None,
    joined: int | float,
    required: int | float,
    token_budget: int | float,
) -> TokenBudgetError:
    """MSG-2, MSG-9: the error of must-keep facts that do not fit beside the turns that are always in.

    Counted as the fill gives the facts room: the facts' text in a message, and with a system prompt the prompt and
    what joins the facts to it (``joined``: the separator, or a message of their own at the end), apart.
    """
    text = "\n".join(map(render_default, sorted_by_age(kept)))
    facts_cost = count_tokens(counting, text) + MESSAGE_TOKENS
    if system is not None:
        facts_cost += count_tokens(per_message, system) + joined
    what = "the system prompt, the must-keep facts" if system is not None else "the must-keep facts"
    return TokenBudgetError(
        max(facts_cost + required, math.floor(token_budget) + 1),
        token_budget,
        what + " and the turns from the newest user message on",
    )


def _newest(
    state: MemoryState,
    now: int | float,
    newest: _NewestUnits | _Cleared,
    must: int,
    required: int | float,
    token_budget: int | float,
    query: str | None,
    counting: Any,
    per_message: Any,
    keep: float | None,
    kept: list[Entry],
    share: float,
    system: str | None,
) -> tuple[Messages, bool]:
    """MSG-2: the request of the newest-first fill with the facts in the system message, and whether it took every unit."""
    facts = _facts_of(state)
    own = 0 if system is None else count_tokens(per_message, system) + MESSAGE_TOKENS

    def head_of(chosen: Context | None) -> tuple[str | None, int | float]:
        """The system message's content and cost: the app's prompt, then the facts' text."""
        text = chosen.text if chosen is not None and chosen.entries else None
        if system is None:
            return text, (0 if text is None else chosen.tokens + MESSAGE_TOKENS)  # type: ignore[union-attr]
        content = system if text is None else system + SYSTEM_SEPARATOR + text
        return content, count_tokens(per_message, content) + MESSAGE_TOKENS

    def build(reserve: int | float) -> tuple[int, int | float, str | None, int | float, Context | None]:
        taken, spent = must, required

        def walk(fixed: int | float, room: int | float) -> None:
            """Older units on from the oldest taken, until one does not fit (no gaps: a conversation reads in order)."""
            nonlocal taken, spent
            while (unit := newest.get(taken)) is not None and fixed + spent + unit[1] <= room:
                spent += unit[1]
                taken += 1

        walk(own, token_budget - reserve)
        chosen: Context | None = None
        left = token_budget - spent - MESSAGE_TOKENS
        if system is not None:
            left -= count_tokens(per_message, system) + count_tokens(per_message, SYSTEM_SEPARATOR)
        while left >= 0 and count_tokens(counting, "") <= left:
            chosen = context(facts, now=now, token_budget=left, query=query, tokenizer=counting, must_keep=keep)
            content, head = head_of(chosen)
            over = spent + head - token_budget
            if over <= 0 or not chosen.entries:
                break
            left -= over  # the prompt and the facts joined count more than their parts: give the facts less
            chosen = None
        content, head = head_of(chosen)
        walk(head, token_budget)  # what the facts left over goes to older units
        return taken, spent, content, head, chosen

    reserve = math.floor(token_budget * share) if _live_count(facts, now) else 0
    taken, spent, content, head, chosen = build(reserve)
    got = set() if chosen is None else {e.seq for e in chosen.entries}
    if any(e.seq not in got for e in kept):
        taken, spent, content, head, chosen = build(token_budget)  # the must-keep facts first, then older turns
        got = set() if chosen is None else {e.seq for e in chosen.entries}
        if any(e.seq not in got for e in kept):
            separator = count_tokens(per_message, SYSTEM_SEPARATOR)
            raise _must_keep_refused(kept, counting, per_message, system, separator, required, token_budget)
    taken_units = newest.units[:taken][::-1]  # oldest first
    chosen_units = _from_a_user(taken_units)
    for _, cost in taken_units[: len(taken_units) - len(chosen_units)]:
        spent -= cost
    out = [] if content is None else [{"role": "system", "content": content}]
    used = [] if chosen is None or not chosen.entries else list(chosen.entries)
    said = [pair for unit, _ in chosen_units for pair in unit]
    out.extend(message for _, message in said)
    used.extend(entry for entry, _ in said)
    newest.get(0)  # the pending calls are known once the walk has passed the newest message
    facts_in = chosen is not None and bool(chosen.entries)
    return Messages(
        messages=out,
        entries=tuple(used),
        tokens=head + spent,
        omitted=_live_count(state, now) - len(used),
        pending=tuple(newest.pending),
        prefix=0 if facts_in else len(out),
        prefix_tokens=0 if facts_in else head + spent,
    ), newest.get(taken) is None


def _planned(
    state: MemoryState,
    now: int | float,
    newest: _NewestUnits | _Cleared,
    must: int,
    required: int | float,
    token_budget: int | float,
    query: str | None,
    counting: Any,
    per_message: Any,
    keep: float | None,
    kept: list[Entry],
    share: float,
    system: str | None,
    how: str,
    where: str,
    low: float,
    excluded: frozenset[str] | None,
) -> tuple[Messages, bool]:
    """MSG-11 .. MSG-14: the request of a stable cut or of the facts elsewhere (``cut.plan``), and ``Plan.full``.

    ``excluded`` is the clearing's excluded tools when the call clears (None otherwise): with the
    counting, what the memo of MSG-17 is kept under.
    """
    facts = _facts_of(state)
    seqs = {e.seq for e in kept}
    walk = newest if isinstance(newest, _NewestUnits) else newest.walk
    keep_whole = newest.keep if isinstance(newest, _Cleared) else None

    def memo_cut(must: int, taken: int, step: int) -> int | None:
        """MSG-17: the stable cut from the memo of every unit's count, or None for the reference's."""
        memo = _memo(state, now, counting, walk.cost, walk.text_cost, excluded, walk)
        return _memo_taken(memo, newest, walk.oldest_user, keep_whole, must, taken, step)

    got = cut_plan(
        unit=newest.get,
        must=must,
        required=required,
        token_budget=token_budget,
        reserve=math.floor(token_budget * share) if _live_count(facts, now) else 0,
        system=system,
        count=lambda text: count_tokens(per_message, text),
        empty=count_tokens(counting, ""),
        choose=lambda left: context(facts, now=now, token_budget=left, query=query, tokenizer=counting, must_keep=keep),
        has_all=lambda chosen: seqs <= (set() if chosen is None else {e.seq for e in chosen.entries}),
        cut=how,
        facts_at=where,
        low_mark=low,
        message_tokens=MESSAGE_TOKENS,
        separator=SYSTEM_SEPARATOR,
        memo_cut=memo_cut,
    )
    if not got.complete:
        joined = MESSAGE_TOKENS if where == "end" else count_tokens(per_message, SYSTEM_SEPARATOR)
        raise _must_keep_refused(kept, counting, per_message, system, joined, required, token_budget)
    taken_units = newest.units[: got.taken][::-1]  # oldest first
    units = _from_a_user(taken_units)
    spent = got.spent - sum(cost for _, cost in taken_units[: len(taken_units) - len(units)])  # MSG-9's drop
    said = [pair for unit, _ in units for pair in unit]
    out = [] if got.system is None else [{"role": "system", "content": got.system}]
    out.extend(message for _, message in said)
    turns = tuple(entry for entry, _ in said)
    picked = () if got.chosen is None or not got.chosen.entries else tuple(got.chosen.entries)
    stable, stable_tokens = len(out), got.head + spent
    if got.facts is not None and where == "start":
        out.insert(len(out) - len(said), {"role": "system", "content": got.facts})
        stable, stable_tokens = len(out) - len(said) - 1, got.head
    elif got.facts is not None:
        out.append({"role": "system", "content": got.facts})
    elif picked:
        stable, stable_tokens = 0, 0  # the facts are in the system message, the first
    newest.get(0)  # the pending calls are known once the walk has passed the newest message
    waiting = tuple(newest.pending)
    used = turns + picked if where == "end" else picked + turns
    return Messages(
        messages=out,
        entries=used,
        tokens=got.head + spent + got.facts_cost,
        omitted=_live_count(state, now) - len(used),
        pending=waiting,
        prefix=stable,
        prefix_tokens=stable_tokens,
    ), got.full


#: MSG-2: between the app's system prompt and the facts in the one system message.
SYSTEM_SEPARATOR = "\n\n"


_Unit = tuple[list[tuple[Entry, dict[str, Any]]], int | float]


def _from_a_user(units: list[_Unit]) -> list[_Unit]:
    """The units, oldest first, from the first that opens with a user message on (MSG-9)."""
    while units and units[0][0][0][1]["role"] != "user":
        units = units[1:]
    return units


def _tool_names(names: object) -> frozenset[str]:
    """MSG-15: ``exclude_tools`` as a set of names; None is none; a list or tuple of str, else ``TypeError``."""
    if names is None:
        return frozenset()
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"exclude_tools must be a list or tuple of tool names, got {type(names).__name__}")
    items = list.__iter__(names) if isinstance(names, list) else tuple.__iter__(names)  # never its own (WRP-4)
    out: set[str] = set()
    for index, name in enumerate(items):
        if not isinstance(name, str):
            raise TypeError(f"exclude_tools[{index}] must be a str, got {type(name).__name__}")
        out.add(str.__str__(name))
    return frozenset(out)


class _Cleared:
    """MSG-15: the units of a ``_NewestUnits``, every one but the newest ``keep`` with its tool results cleared."""

    def __init__(
        self,
        newest: _NewestUnits,
        keep: int,
        excluded: frozenset[str],
        cost: Callable[[dict[str, Any]], int | float],
    ) -> None:
        self._newest, self._keep, self._excluded, self._cost = newest, keep, excluded, cost
        self.units: list[_Unit] = []

    @property
    def walk(self) -> _NewestUnits:
        """The units whole, as the walk cuts them."""
        return self._newest

    @property
    def keep(self) -> int:
        """How many of the newest units are sent whole."""
        return self._keep

    @property
    def pending(self) -> list[Entry]:
        """The turns of the calls unanswered at the end, as the units they come from say (MSG-7)."""
        return self._newest.pending

    def get(self, at: int) -> _Unit | None:
        """The unit ``at`` places back from the newest, its results cleared when ``at >= keep``; None past the oldest."""
        while len(self.units) <= at:
            got = self._newest.get(len(self.units))
            if got is None:
                return None
            whole = len(self.units) < self._keep
            self.units.append(got if whole else clear_unit(got, self._excluded, self._cost))
        return self.units[at]

    def total(self, count: int) -> int | float:
        """What the newest ``count`` units cost together, cleared as they are here."""
        return sum(unit[1] for unit in (self.get(at) for at in range(count)) if unit is not None)

    def with_prefix(self, result: Messages) -> Messages:
        """MSG-13 with MSG-15: the prefix ends before the oldest unit of the request a later one clears.

        The newest ``keep`` units are whole; when one of them holds a result a
        later request clears (a unit more and it is past ``keep``), the
        messages from it on are not repeated, so the prefix stops before it.
        """
        sent = {entry.seq for entry in result.entries}
        later = [
            at
            for at, unit in enumerate(self.units[: self._keep])
            if unit[0][0][0].seq in sent and clear_unit(unit, self._excluded, self._cost) is not unit
        ]
        if not later:
            return result
        last = self.units[0][0][-1][1]
        end = next(at for at, message in enumerate(result.messages) if message is last) + 1
        start = end - sum(len(unit[0]) for unit in self.units[: max(later) + 1])
        if start >= result.prefix:
            return result
        dropped = sum(self._cost(message) for message in result.messages[start : result.prefix])
        return attrs.evolve(result, prefix=start, prefix_tokens=result.prefix_tokens - dropped)


#: MSG-18: a turn's view (``Split.views``): its message, its text, the counter and generation its count was
#: taken under, the count, and the entry it was made of.
View = tuple[dict[str, Any], str, Any, int, int | float, Entry]
#: MSG-18: what a view holds as its counter before a counter that keeps counts counted it.
_UNCOUNTED = object()
#: MSG-18: the counter of a walk whose counter keeps no counts: no view holds it, so every count is taken anew.
_NO_COUNTER = object()


def _counted_by(counting: Any) -> tuple[Any, int] | None:
    """MSG-18: what a turn's count is kept under in its view, or None when counts are not kept.

    Only for the estimator, which is a pure function of the text, and a
    ``LineCounter`` (per ``clear`` generation), which keeps every line's
    count itself (CTX-14); a count by any other function is taken anew on
    every request, as it always was.
    """
    if counting is estimate_tokens:
        return (counting, 0)
    if isinstance(counting, LineCounter):
        return (counting, counting.generation)
    return None


class _NewestUnits:
    """The units of MSG-7 newest first, cut as a walk asks for them, and the pending calls.

    The reference cuts every live turn into units oldest first: an assistant
    message with ``tool_calls`` and the tool messages after it that answer
    all its calls (each once) are one unit, every other message one; a tool
    message answering no open call, calls left unanswered when another
    message follows, and roles outside ``ROLES`` are left out; calls open
    at the end are pending. Walking back gives the same units: tool
    messages wait in a buffer until the message before them; a message with
    calls takes those that answer it, in order, and is a unit when all are
    answered; every other message makes the waiting ones orphans. Units
    older than the oldest user turn are never candidates (MSG-9), so the
    walk stops there; each unit comes with its cost.
    """

    def __init__(
        self,
        state: MemoryState,
        now: int | float,
        cost: Callable[[dict[str, Any]], int | float],
        text_cost: Callable[[str], int | float],
        since: Key | tuple[()] | None = None,
        counted: tuple[Any, int] | None = None,
    ) -> None:
        split = state.index.split()
        self._now, self.cost, self.text_cost, self._views = now, cost, text_cost, split.views
        #: MSG-18: the counter (and its generation) each turn's count is kept under in its view; with no counter
        #: that keeps counts, a mark no view holds.
        self._counter: Any
        self._generation: int
        self._counter, self._generation = (_NO_COUNTER, 0) if counted is None else counted
        self._keeps = counted is not None
        oldest = next((item for item in split.users if not is_past(item[-1].expires_at, now)), None)
        newest = next((item for item in reversed(split.users) if not is_past(item[-1].expires_at, now)), None)
        self.oldest_user: Key | None = None if oldest is None else oldest[:3]
        self._newest_user = None if newest is None else newest[-1]
        self.read: list[tuple[int, int | float, int, Entry]] | None = None
        if since is None:
            self._items: Iterator[tuple[int, int | float, int, Entry]] = reversed(split.turns)
            self._every = False
        else:  # MSG-17: every unit opening at ``since`` or after, older than the oldest user turn too
            self.read = split.turns.from_(since)  # () comes before every key: every turn
            self._items = reversed(self.read)
            self._every = True
        #: The key of the newest message met that is not a tool result (MSG-17's frontier).
        self.frontier: Key | None = None
        self.units: list[_Unit] = []
        self.pending: list[Entry] = []
        self._waiting: list[tuple[Entry, dict[str, Any]]] = []  # tool messages after the message met last
        self._met = False  # a message of ROLES that is not a tool's has been met (the newest decides pending)
        self._done = False

    def get(self, at: int) -> _Unit | None:
        """The unit ``at`` places back from the newest (0 the newest), or None when there are no more."""
        while len(self.units) <= at and not self._done:
            self._step()
        return self.units[at] if at < len(self.units) else None

    def through_newest_user(self) -> tuple[int, int | float]:
        """How many units there are from the newest user message on, and what they cost together."""
        if self._newest_user is None:
            return 0, 0
        count = 0
        total_: int | float = 0
        while (unit := self.get(count)) is not None:
            count, total_ = count + 1, total_ + unit[1]
            if unit[0][0][0] is self._newest_user:
                break
        return count, total_

    def _count(self, seq: int, view: View) -> int | float:
        """A turn's count (``text_cost`` of its text), kept in its view for the next request by this counter (MSG-18)."""
        if view[2] is self._counter and view[3] == self._generation:
            return view[4]
        cost = self.text_cost(view[1])
        if self._keeps:  # a whole new view: another thread reading this one sees the old or the new
            self._views[seq] = (view[0], view[1], self._counter, self._generation, cost, view[5])
        return cost

    def _view(self, entry: Entry) -> View:
        """``entry``'s view: the one kept under its ``seq`` when it was made of this very entry, else a new one.

        A view is kept by ``seq``, and the views are shared by every state
        made from one another, so two states made from one (a request built
        on a changed copy of the memory's state, a change undone) may each
        give the same ``seq`` to an entry of its own: the entry itself,
        kept in the view, tells whose it is (MSG-18).
        """
        view = self._views.get(entry.seq)
        if view is None or view[5] is not entry:
            message = chat_message(entry.data, owned=True)  # read only: copied on the way out (MSG-18)
            assert message is not None  # every turn is a message (MSG-1)
            view = self._views[entry.seq] = (message, body_of(message), _UNCOUNTED, 0, 0, entry)
        return view

    def _step(self) -> None:
        now, views, every, oldest_user = self._now, self._views, self._every, self.oldest_user
        for item in self._items:
            entry = item[-1]
            if entry.expires_at is not None and now >= entry.expires_at:  # is_past (EXP-2), inline: once a turn
                continue
            # ``item`` is ``(N, updated_at, seq, entry)``: it compares as its key ``item[:3]`` does (the key decides).
            candidate = every or (oldest_user is not None and item >= oldest_user)
            if not candidate and self._met:
                break  # older than the oldest user turn: no unit from here on, and pending is known
            view = views.get(entry.seq)
            if view is None or view[5] is not entry:
                view = self._view(entry)
            message = view[0]
            role = message["role"]
            if role not in ROLES:
                continue
            if role == "tool":
                self._waiting.append((entry, message))
                continue
            if self._waiting:
                waiting, self._waiting = self._waiting[::-1], []
            else:
                waiting = self._waiting  # none waits: nothing to turn round
            first, self._met = not self._met, True
            if first:
                self.frontier = item[:3]
            unit = [(entry, message)]
            if message.get("tool_calls"):
                open_calls = {call["id"] for call in message["tool_calls"]}
                for answer in waiting:
                    if not open_calls:
                        break
                    if answer[1].get("tool_call_id") in open_calls:
                        unit.append(answer)
                        open_calls.discard(answer[1]["tool_call_id"])
                if open_calls:
                    if first:
                        self.pending = [e for e, _ in unit]
                    continue
            if candidate:
                if len(unit) == 1:  # a message alone, the most common unit: its view and count are at hand
                    if view[2] is self._counter and view[3] == self._generation:
                        self.units.append((unit, view[4]))
                    else:
                        self.units.append((unit, self._count(entry.seq, view)))
                else:
                    self.units.append((unit, sum(self._count(e.seq, self._view(e)) for e, _ in unit)))
                return
        else:
            self._done = True
            return
        self._done = True


def _memo(
    state: MemoryState,
    now: int | float,
    counting: Any,
    cost: Callable[[dict[str, Any]], int | float],
    text_cost: Callable[[str], int | float],
    excluded: frozenset[str] | None,
    fill: _NewestUnits | None = None,
) -> UnitMemo:
    """MSG-17: the memo of every unit's count for ``counting`` (and ``excluded``), brought up to the turns at ``now``.

    Taken from the state's split when one is kept there and still valid,
    read on from its frontier when turns were added, built from every turn
    otherwise; kept there for the next request. The units from the frontier
    on are those the request's own walk (``fill``) has read, when it reaches
    past the frontier: they are not read twice.
    """
    split = state.index.split()
    generation = counting.generation if isinstance(counting, LineCounter) else 0  # a cleared one counts anew
    key = (counting, generation, excluded)
    memo = split.memos.get(key)
    newest = split.turns.last()
    if memo is None or not memo.valid_at(now):
        memo = empty()
    elif memo.drop is None and (newest[:3] if newest is not None else None) == memo.last:
        return memo
    since: Key | tuple[()] = () if memo.frontier is None else memo.frontier
    got: list[_Unit] | None = None
    if fill is not None and memo.frontier is not None:
        at = 0
        while (unit := fill.get(at)) is not None and _turn_key(unit[0][0][0]) >= memo.frontier:
            at += 1
        if unit is not None:  # the walk is past the frontier: the units from it on are these
            got, frontier, read = fill.units[:at], fill.frontier, split.turns.from_(since)
    if got is None:
        walk = _NewestUnits(state, now, cost, text_cost, since=since, counted=_counted_by(counting))
        while walk.get(len(walk.units)) is not None:
            pass
        got, frontier, read = walk.units, walk.frontier, walk.read or []
    units = [
        (
            _turn_key(unit[0][0][0]),
            unit[0][0][1]["role"] == "user",
            unit[1],
            unit[1] if excluded is None else clear_unit(unit, excluded, cost)[1],
        )
        for unit in reversed(got)
    ]
    memo = memo.extended(
        units,
        None if newest is None else newest[:3],
        frontier if frontier is not None else memo.frontier,
        ((item[-1].expires_at, is_past(item[-1].expires_at, now)) for item in read),
    )
    kept(split.memos, key, memo)
    return memo


def _turn_key(entry: Entry) -> Key:
    """A turn's place in the turns' order: ``(N, updated_at, seq)`` (MSG-2, the index's ``Split``)."""
    return (int(entry.key[5:]), entry.updated_at, entry.seq)


def _memo_taken(
    memo: UnitMemo,
    units: _NewestUnits | _Cleared,
    oldest_user: Key | None,
    keep: int | None,
    must: int,
    taken: int,
    step: int,
) -> int | None:
    """MSG-17: what ``cut.stable_taken`` gives, from the memo and the units the fill read; None when they disagree.

    The units ``must .. taken - 1`` (read by the fill) are checked against
    the memo, their first turns one by one and their count together (a unit's
    first turn fixes its messages, so its count; a unit whose results the
    memo put elsewhere would change the total); the marks among them follow
    from the memo's running sums: the tokens before a unit, counted from the
    oldest user turn's unit, and those before the next older unit that opens
    with a user message. With ``keep`` the units older than the newest
    ``keep`` count cleared (MSG-15).
    """
    if taken <= must:
        return taken
    if not memo.exact or oldest_user is None:
        return None
    heads, n = memo.heads, memo.size
    first = bisect.bisect_left(heads, oldest_user, 0, n)
    if first == n or heads[first] != oldest_user:
        return None
    count = n - first
    if (units.get(taken) is None) != (taken >= count):
        return None
    if taken >= count:
        return taken
    whole, cleared = memo.whole, memo.cleared
    bound = 0 if keep is None else max(0, n - keep)  # the units before it count cleared

    def before(j: int) -> int | float:
        """The counts of the units before ``j``, from the oldest unit (cleared ones as cleared)."""
        cut = min(j, bound)
        return cleared[cut] + whole[j] - whole[cut]

    origin = before(first)
    read = units.units[must:taken]  # newest first, as the fill read them
    # A unit's first turn is the memo's when their seqs are one: a seq names one entry, so one key (MSG-2).
    if len(read) != taken - must or [unit[0][0][0].seq for unit in read] != [
        head[2] for head in heads[n - taken : n - must][::-1]
    ]:
        return None
    if sum(unit[1] for unit in read) != before(n - must) - before(n - taken):
        return None
    for at in range(taken - 1, must - 1, -1):  # the oldest taken unit first
        j = n - 1 - at
        if not memo.users[j]:
            continue
        older = memo.before_user[j]
        if (
            step == 0
            or older < first
            or math.floor((before(j) - origin) / step) > math.floor((before(older) - origin) / step)
        ):
            return at + 1
    return must


def _memo_whole(memo: UnitMemo, walk: _NewestUnits) -> int | float | None:
    """MSG-17: what every unit from the oldest user turn's on counts whole, from the memo; None when it cannot say.

    The memo's oldest unit of the history must open with the oldest live user
    message and its newest with the newest unit the walk reads.
    """
    oldest_user = walk.oldest_user
    newest = walk.get(0)
    if not memo.exact or oldest_user is None or newest is None:
        return None
    heads, n = memo.heads, memo.size
    first = bisect.bisect_left(heads, oldest_user, 0, n)
    if first == n or heads[first] != oldest_user or heads[n - 1] != _turn_key(newest[0][0][0]):
        return None
    return memo.whole[n] - memo.whole[first]
