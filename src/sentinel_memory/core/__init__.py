"""The functional core: every transition and every read, as pure functions.

Theory of operation
===================

A memory is one immutable value, a ``MemoryState``. It holds three
memories of different lifetimes, taken from the layered memory of the agent
this library descends from:

* **entries**, the long-term memory: ``key -> Entry`` with an importance in
  [0, 1], timestamps and an optional expiry. It is bounded by ``limit``.
* **L0 cache**: scratch values with a short ttl, never persisted.
* **L1 working memory**: one small dict for the task in progress, which
  resets once nobody has set it for ``working_ttl``.

Every function here takes the state and the current time ``now``
(milliseconds since the epoch) and returns a *new* state, or a value read
from it. Nothing in this module reads a clock, touches a file or calls back;
the stateful ``Memory`` does those things around
these calls. Because of that, any sequence of operations can be replayed
exactly: same states, same times, same results, on every machine and in
every port.

Three ideas carry the whole design:

**Visibility is a function of time.** An entry with ``expires_at = T`` is
visible at ``T - 1`` and invisible at ``T`` on every read path (EXP-2, EXP-3).
No read ever changes the state, so expiry is not an event that has to
happen: an expired entry simply stops being returned. It is physically
removed later, by ``compact``, ``clear`` or a new ``remember`` of its key,
and each of those says what it removed.

**Importance first, freshness as a tiebreaker.** When ``remember`` pushes
the stored count over ``limit``, ``compact`` runs: expired entries go, then
the entries of lowest ``retention = importance + 0.1 * freshness`` until the
live count fits (CMP-1). Freshness adds at most 0.1, so it only settles close
calls. Nothing disappears unreported: every transition that drops entries
returns them, next to the new state, as a ``Compaction``.

**Order is explicit.** Every remember stamps a sequence number, so "newer"
(the larger ``(updated_at, seq)``, ENT-6) is defined even within one
millisecond, and every tie in every ranking goes to the newer entry.

**Speed sits behind one seam: the index.** Every rule here is stated over
"every live entry", and the functions read that way. Where reading it
literally would scan the table, they ask ``state.index``
(``sentinel_memory.core.index``) instead: the lowest retention, the expired
entries, the start of a ranking, the entries by importance, the entries
that hold a word. Each of its
answers is, by construction and by property test, what the scan would have
found; ``sentinel_memory.core.retention``, ``sentinel_memory.core.lexical`` and
``sentinel_memory.core.prompt.fill_naive`` keep the reference formulas it is
compared with.

Illegal input raises before anything is built (a bad key, data that is not
JSON, a bad token budget); the state passed in is never changed, so "raised"
always means "nothing happened". A numeric *option* that is out of range is
not illegal: it falls back to its documented default (the number rule,
``sentinel_memory.core.options``).

What this package holds
=======================

Everything a port must reproduce, and nothing else. This module holds the
transitions and reads; beside it, each module holds one part of the rules:

* ``values`` and ``state``: the immutable values (``Entry``, ``Config``,
  ``MemoryState``, the results) and how a state is put together;
* ``retention``, ``lexical`` (with ``unicode14``), ``prompt`` and ``tokens``:
  the reference formulas for ranking, recall, the context fill and counting;
* ``index``, ``table`` and ``persistent``: the seam where speed lives,
  equal to the formulas by property test;
* ``expiry``, ``turns``, ``options``: visibility in time, chat turns, the
  number rule;
* ``document``: the saved document, written and checked; ``jsondata``: what
  counts as JSON data; ``errors`` and ``shown``: what is raised and how a bad
  value is named in its message.

What it may import: the standard library's pure modules and ``attrs``. Not
the shells (``memory``, ``aio``, ``folder``, ``cli``, ``shell``, ``logs``),
the stores, the integrations or the conformance suite, and no module that
does I/O, reads a clock, logs, or runs threads or an event loop (``os``,
``io``, ``time``, ``logging``, ``asyncio``, ``socket``, ``sqlite3``, ...). The
import contracts in ``pyproject.toml`` check this in CI. One exception is
stated there: ``tokens``' ``LineCounter`` keeps a lock around its memo of line
counts, because the memo is shared by threads; the memo never changes a
count, so results stay a function of the arguments.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

import attrs

from . import document as _document
from .chat import ROLES, body_of, check_messages, check_role, request_problems, validate_request
from .cut import CUTS, FACTS_AT, check_choice
from .cut import plan as cut_plan
from .errors import TokenBudgetError
from .expiry import deadline, is_past
from .index import Index
from .jsondata import copy_json
from .lexical import best_holders, best_matches, words
from .options import Duration, is_number, number_option, require_callable
from .prompt import fill, render_default
from .retention import by_retention
from .shown import shown
from .state import MemoryState, largest_turn
from .table import Table
from .tokens import LineCounter, TokenizerLike, as_tokenizer, count_tokens
from .turns import chat_message
from .values import (
    CacheItem,
    Changes,
    Compaction,
    Config,
    Context,
    Counters,
    Entry,
    Hit,
    LoadResult,
    Messages,
    Working,
    by_age,
    by_importance,
    frozen_mapping,
    sorted_by_age,
)

__all__ = [
    "TURN_KEY",
    "add_messages",
    "add_turn",
    "cache_clear",
    "cache_delete",
    "cache_get",
    "cache_put",
    "cache_size",
    "changes",
    "clear",
    "compact",
    "context",
    "forget",
    "from_document",
    "get",
    "get_entry",
    "get_recent",
    "has",
    "live_items",
    "make_config",
    "messages",
    "open_calls",
    "recall",
    "remember",
    "remembered",
    "request_problems",
    "size",
    "stats",
    "to_document",
    "validate_request",
    "working_clear",
    "working_get",
    "working_set",
]


# ---------------------------------------------------------------------------
# Checks shared by every function: illegal input raises, and nothing happened.


def _check_now(now: object) -> None:
    """TIME-2: ``now`` is a finite number of milliseconds."""
    if not is_number(now):
        raise TypeError(f"now must be a finite number of milliseconds, got {shown(now)}")


def _check_key(key: object) -> str:
    """ENT-1: a key is a non-empty str."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise ValueError("key must not be empty")
    checked: str = copy_json(key, what="key")  # a lone surrogate is no key either (ENT-2)
    return checked


def make_config(
    *,
    limit: int | None = None,
    recency_window: Duration | None = None,
    working_ttl: Duration | None = None,
    cache_ttl: Duration | None = None,
    tokenizer: TokenizerLike | None = None,
) -> Config:
    """A ``Config`` from raw options: numbers by the number rule, a tokenizer as its count (NUM-1, NUM-3, OPT-1, CTX-9).

    A numeric option that is None, not a finite number or out of its range
    falls back to its documented default (``DEFAULTS``), with an
    ``IgnoredValueWarning`` when a value was given. Pass the result as
    ``MemoryState(config=...)`` to start a state for the pure functions.

    Args:
        limit: The most entries kept before compaction evicts, an integer >= 1. Defaults to None (1000).
        recency_window: How long freshness takes to fade, in milliseconds or a ``timedelta``.
            Defaults to None (one day).
        working_ttl: How long the working memory lives without a set, in milliseconds or a ``timedelta``.
            Defaults to None (one hour).
        cache_ttl: How long a cache item lives when ``cache_put`` gives no ttl, in milliseconds or a
            ``timedelta``. Defaults to None (five minutes).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with ``encode(text)``.
            Defaults to None (``estimate_tokens``).

    Returns:
        A frozen ``Config``.

    Raises:
        TypeError: The tokenizer is neither callable nor has ``encode``.

    Examples:
        >>> config = core.make_config(limit=2)
        >>> config.limit, config.cache_ttl
        (2, 300000)
        >>> core.size(MemoryState(config=config), now=1000)
        0
    """
    counter = as_tokenizer(tokenizer)
    return Config(
        limit=number_option("limit", limit),
        recency_window=number_option("recency_window", recency_window),
        working_ttl=number_option("working_ttl", working_ttl),
        cache_ttl=number_option("cache_ttl", cache_ttl),
        tokenizer=counter if counter is not None else Config().tokenizer,
    )


def _with_entries(state: MemoryState, entries: Table, index: Index, **changes: Any) -> MemoryState:
    """The one way a transition replaces the entry table: always with its index, and in one step with
    the other ``changes`` (a new ``next_seq`` must come with the entries it is above, ENT-17)."""
    return attrs.evolve(state, entries=entries, index=index, **changes)


def _live_count(state: MemoryState, now: int | float) -> int:
    """EXP-3: how many entries every read path sees at ``now``."""
    return len(state.entries) - state.index.expired_count(now)


def _copies(state: MemoryState, entries: Iterable[Entry]) -> tuple[Entry, ...]:
    """ENT-3: entries on their way out. Only dict and list data need copying, and often there is none."""
    if not state.index.containers:
        return tuple(entries)
    return tuple(e.copy() for e in entries)


def _live_entry(state: MemoryState, key: str, now: int | float) -> Entry | None:
    entry = state.entries.get(key)
    return None if entry is None or is_past(entry.expires_at, now) else entry


# ---------------------------------------------------------------------------
# Long-term entries: transitions.


def remember(
    state: MemoryState,
    key: str,
    data: Any,
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction]:
    """Store ``data`` under ``key``; compact when over ``limit`` (ENT-4, ENT-5, EXP-4, CMP-3).

    An overwrite keeps ``created_at`` and the old importance unless a valid
    new one is given. Overwriting an *expired* key is an insert: the old entry
    is reported as expired, so it does not vanish unreported. The returned
    ``Compaction`` holds everything this call dropped, possibly including the
    new entry itself (CMP-4); ``remembered`` finds the stored entry.

    Args:
        state: The memory state to change; it is not modified.
        key: A non-empty str.
        data: Any JSON value; it is copied.
        now: The current time, milliseconds since the epoch (a finite number).
        importance: A number in [0, 1]. Defaults to None (0.5 for a new key, the old importance
            for an overwrite).
        ttl: How long the entry lives, in milliseconds or a ``timedelta``. Defaults to None (no expiry).

    Returns:
        ``(state, compaction)``, the new state and what this call dropped.

    Raises:
        TypeError: ``now`` is not a finite number, the key is not a str, or ``data`` is not JSON.
        ValueError: The key is empty, or ``data`` is nested too deep.

    Examples:
        >>> state, dropped = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> core.get(state, "user:name", now=1000), bool(dropped)
        ('Jakub', False)
    """
    _check_now(now)
    key = _check_key(key)
    data = copy_json(data)
    old = state.entries.get(key)
    replaced = Compaction()
    if old is not None and is_past(old.expires_at, now):
        replaced, old = Compaction(expired=(old.copy(),)), None
    if old is None:
        created_at, weight = now, number_option("importance", importance)
    else:
        created_at, weight = (
            old.created_at,
            number_option("importance", importance, old.importance, instead="the entry's importance"),
        )
    entry = Entry(
        key=key,
        data=data,
        importance=weight,
        created_at=created_at,
        updated_at=now,
        expires_at=deadline(now, ttl),
        seq=state.next_seq,
    )
    previous = state.entries.get(key)
    gone = [] if previous is None else [previous]
    entries = state.entries.changed(gone, [entry])
    index = state.index.changed(gone, [entry])
    counters = attrs.evolve(state.counters, expired=state.counters.expired + len(replaced.expired))
    dropped = Compaction()
    if len(entries) > state.config.limit:
        entries, index, dropped, counters = _compact_table(entries, index, counters, state.config, now)
    state = _with_entries(
        state,
        entries,
        index,
        next_seq=state.next_seq + 1,
        counters=counters,
        turns=max(state.turns, largest_turn((key,))),
    )
    return state, replaced + dropped


#: ENT-16: the keys chat turns are stored under, ``chat:1``, ``chat:2``, ...
TURN_KEY = re.compile(r"chat:([0-9]+)")


def add_turn(
    state: MemoryState,
    role: str,
    text: str,
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction, str]:
    """Remember one chat turn as the message ``{"role": role, "content": text}`` under the next ``chat:N`` key (ENT-16).

    N is one more than the largest ``chat:N`` this memory has stored or
    loaded, so turns keep counting after a restart without a key being
    invented or a counter kept by the app. A turn's importance defaults to
    0.3, below a fact's 0.5. Its line in a context reads ``chat:N: role:
    text`` (TXT-4).

    Args:
        state: The memory state to change; it is not modified.
        role: Who spoke: ``"system"``, ``"developer"``, ``"user"`` or ``"assistant"`` (MSG-5).
        text: What was said, a str.
        now: The current time, milliseconds since the epoch (a finite number).
        importance: A number in [0, 1]. Defaults to None (0.3).
        ttl: How long the turn lives, in milliseconds or a ``timedelta``. Defaults to None (no expiry).

    Returns:
        ``(state, compaction, key)``, the new state, what the remember dropped, and the key used.

    Raises:
        TypeError: ``role`` or ``text`` is not a str, or ``now`` is not a finite number.
        ValueError: ``role`` is not a chat role, or is ``"tool"`` (a result needs ``add_messages``).

    Examples:
        >>> state, dropped, key = core.add_turn(MemoryState(), "user", "Hi!", now=1000)
        >>> key, core.get(state, key, now=1000)
        ('chat:1', {'role': 'user', 'content': 'Hi!'})
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if check_role(role) == "tool":
        raise ValueError("a tool result answers a call by its id: use add_message with a tool_call_id (MSG-5)")
    state, dropped, key = _add_message(state, {"role": role, "content": text}, now=now, importance=importance, ttl=ttl)
    return state, dropped, key


def _add_message(
    state: MemoryState,
    message: dict[str, Any],
    *,
    now: int | float,
    importance: float | None,
    ttl: Duration | None,
) -> tuple[MemoryState, Compaction, str]:
    """Remember a checked message under the next ``chat:N`` key (ENT-16)."""
    number = state.turns + 1
    while f"chat:{number}" in state.entries:  # a state built by hand may hold turns past its counter
        number += 1
    key = f"chat:{number}"
    weight = number_option("turn_importance", importance)
    state, dropped = remember(state, key, message, now=now, importance=weight, ttl=ttl)
    return state, dropped, key


def add_messages(
    state: MemoryState,
    messages: Sequence[Mapping[str, Any]],
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction, tuple[str, ...]]:
    """Remember chat messages in the wire form as turns, in order, all or nothing (MSG-5, MSG-6).

    Every message is checked before any is stored: its fields (MSG-5) and,
    for a tool message, that its ``tool_call_id`` answers an open call of the
    assistant message before it, earlier in the batch or the newest stored
    turns (``open_calls``). Each is then remembered as ``add_turn``
    remembers, under the next ``chat:N``.

    Args:
        state: The memory state to change; it is not modified.
        messages: A list of messages: ``role``, ``content`` and, as the chat API has them,
            ``tool_calls``, ``tool_call_id`` and ``name``.
        now: The current time, milliseconds since the epoch (a finite number).
        importance: A number in [0, 1] for every message. Defaults to None (0.3).
        ttl: How long each turn lives. Defaults to None (no expiry).

    Returns:
        The new state, what the remembers dropped (a ``Compaction``) and the keys used, as a tuple.

    Raises:
        TypeError, ValueError: A message or field is bad; the error names ``messages[i]`` and
            the field, and nothing is stored.

    Examples:
        >>> call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        >>> state, _, keys = core.add_messages(
        ...     MemoryState(),
        ...     [{"role": "assistant", "content": None, "tool_calls": [call]},
        ...      {"role": "tool", "tool_call_id": "c1", "content": "4 °C"}],
        ...     now=1000,
        ... )
        >>> keys, core.context(state, now=1000, token_budget=50).text.splitlines()
        (('chat:1', 'chat:2'), ['chat:1: assistant: weather({})', 'chat:2: tool: 4 °C'])
    """
    _check_now(now)
    checked = check_messages(messages, open_calls(state, now=now))
    total = Compaction()
    keys = []
    for message in checked:
        state, dropped, key = _add_message(state, message, now=now, importance=importance, ttl=ttl)
        total += dropped
        keys.append(key)
    return state, total, tuple(keys)


def open_calls(state: MemoryState, *, now: int | float) -> frozenset[str] | None:
    """The ids of calls a tool message may answer next: the newest turns' open calls (MSG-6).

    When the newest live turns are an assistant message with ``tool_calls``
    and tool messages answering it, the ids it called that are not answered
    yet; otherwise None (a tool message may not come next). A turn evicted or
    expired in between closes the calls.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch.

    Returns:
        A frozenset of call ids (empty when all are answered), or None.

    Examples:
        >>> state, _, _ = core.add_turn(MemoryState(), "user", "Hi", now=1000)
        >>> core.open_calls(state, now=1000) is None
        True
    """
    number = state.turns
    while f"chat:{number + 1}" in state.entries:  # a state built by hand may hold turns past its counter
        number += 1
    answered: set[str] = set()
    while number > 0:
        entry = _live_entry(state, f"chat:{number}", now)
        message = None if entry is None else chat_message(entry.data)
        if message is None or message["role"] not in ROLES:
            return None
        if message["role"] == "tool":
            if "tool_call_id" not in message:
                return None
            answered.add(message["tool_call_id"])
            number -= 1
            continue
        calls = {call["id"] for call in message.get("tool_calls", ())}
        return frozenset(calls - answered) if calls else None
    return None


def remembered(state: MemoryState, compaction: Compaction, key: str) -> Entry:
    """A copy of the entry a ``remember`` of ``key`` just stored, kept, evicted or expired on arrival (ENT-12).

    A ttl so small that ``now + ttl == now`` in doubles makes an entry that
    is expired at once; a compaction in the same call then reports it as
    expired. The newest entry of ``key`` in the compaction is this call's.

    Args:
        state: The state the ``remember`` returned.
        compaction: The ``Compaction`` the ``remember`` returned.
        key: The key that was remembered.

    Returns:
        A copy of the ``Entry`` stored by that call.

    Examples:
        >>> state, dropped = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> core.remembered(state, dropped, "user:name").importance
        0.5
    """
    key = str.__str__(key)  # a str subclass's own hash or == must not run here (WRP-4)
    entry = state.entries.get(key)
    if entry is None:
        entry = max((e for e in compaction.expired + compaction.evicted if e.key == key), key=_seq)
    copied: Entry = entry.copy()
    return copied


_seq = operator.attrgetter("seq")


def compact(state: MemoryState, *, now: int | float) -> tuple[MemoryState, Compaction]:
    """Drop expired entries, then the lowest retention until ``limit`` fits (CMP-1, CMP-2, CMP-5).

    Ties in retention evict the older entry. Every run is counted, also one
    that drops nothing.

    Args:
        state: The memory state to compact; it is not modified.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        ``(state, compaction)``, the new state and the entries dropped, expired and evicted.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "otp", "123456", now=1000, ttl=60_000)
        >>> state, dropped = core.compact(state, now=61_000)
        >>> [entry.key for entry in dropped.expired], core.stats(state, now=61_000)["compactions"]
        (['otp'], 1)
    """
    _check_now(now)
    entries, index, dropped, counters = _compact_table(state.entries, state.index, state.counters, state.config, now)
    return _with_entries(state, entries, index, counters=counters), dropped


def _compact_table(
    entries: Table, index: Index, counters: Counters, config: Config, now: int | float
) -> tuple[Table, Index, Compaction, Counters]:
    """``compact`` on a table and its index: the new ones, what went, and the new counters.

    The index finds the expired entries as a prefix of its expiry order and
    the lowest retention among the lowest importances
    (``lowest_retention``), so dropping k
    entries costs about ``O(k log n)``.
    """
    containers = index.containers  # ENT-3: only dict and list data need copying on the way out
    expired = index.expired(now)
    if expired:
        entries = entries.changed(expired)
        index = index.changed(expired, expired_at=now)
        # CMP-2: oldest first, also if the clock went back.
        expired = sorted_by_age(expired, seq_is_age=index.in_order)
    evicted = index.lowest_retention(len(entries) - config.limit, now, config.recency_window)
    if evicted:
        entries = entries.changed(evicted)
        index = index.changed(evicted)
    counters = Counters(
        compactions=counters.compactions + 1,
        expired=counters.expired + len(expired),
        evicted=counters.evicted + len(evicted),
    )
    copies = (lambda entries: tuple(e.copy() for e in entries)) if containers else tuple
    dropped = Compaction(copies(expired), copies(evicted))
    return entries, index, dropped, counters


def forget(state: MemoryState, key: str, *, now: int | float) -> tuple[MemoryState, bool]:
    """Remove a live entry; ``True`` when one was removed (ENT-8, EXP-5).

    An expired entry is already gone as far as any reader can tell, so
    forgetting it returns False and changes nothing; compaction will report
    it.

    Args:
        state: The memory state to change; it is not modified.
        key: The key to remove, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        ``(state, removed)``, the new state and whether a live entry was removed.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, removed = core.forget(state, "user:name", now=1000)
        >>> removed, core.size(state, now=1000)
        (True, 0)
    """
    _check_now(now)
    key = _check_key(key)
    if _live_entry(state, key, now) is None:
        return state, False
    gone = [state.entries[key]]
    return _with_entries(state, state.entries.changed(gone), state.index.changed(gone)), True


def clear(state: MemoryState) -> MemoryState:
    """Remove every entry, expired ones too; cache and working memory stay (ENT-9).

    Args:
        state: The memory state to clear; it is not modified.

    Returns:
        The new state, with no entries.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> core.size(core.clear(state), now=1000)
        0
    """
    return _with_entries(state, Table(), Index.of(()))


# ---------------------------------------------------------------------------
# Long-term entries: reads. None of them changes the state.


def get(state: MemoryState, key: str, *, now: int | float, default: Any = None) -> Any:
    """A copy of the live entry's data, else ``default`` (ENT-7, EXP-3).

    Args:
        state: The memory state to read.
        key: The key to look up, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).
        default: What to return when there is no live entry. Defaults to None.

    Returns:
        A copy of the data, or ``default``.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "otp", "123456", now=1000, ttl=60_000)
        >>> core.get(state, "otp", now=60_999), core.get(state, "otp", now=61_000, default="gone")
        ('123456', 'gone')
    """
    _check_now(now)
    entry = _live_entry(state, _check_key(key), now)
    return default if entry is None else copy_json(entry.data)


def get_entry(state: MemoryState, key: str, *, now: int | float, default: Any = None) -> Any:
    """A copy of the live ``Entry`` under ``key``, else ``default`` (ENT-15).

    Args:
        state: The memory state to read.
        key: The key to look up, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).
        default: What to return when there is no live entry. Defaults to None.

    Returns:
        A copy of the ``Entry``, or ``default``.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000, importance=0.9)
        >>> entry = core.get_entry(state, "user:name", now=2000)
        >>> entry.data, entry.importance, entry.created_at
        ('Jakub', 0.9, 1000)
    """
    _check_now(now)
    entry = _live_entry(state, _check_key(key), now)
    return default if entry is None else entry.copy()


def live_items(state: MemoryState, *, now: int | float) -> list[tuple[str, Any]]:
    """``(key, copy of data)`` for every live entry, oldest first, all at one ``now`` (ENT-15).

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        A new list of ``(key, data)`` pairs.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> state, _ = core.remember(state, "b", 2, now=2000)
        >>> core.live_items(state, now=2000)
        [('a', 1), ('b', 2)]
    """
    _check_now(now)
    return [(entry.key, entry.copy().data) for entry in state.index.live_by_age(now)]


def has(state: MemoryState, key: str, *, now: int | float) -> bool:
    """True when ``key`` has a live entry (ENT-7, EXP-3).

    Args:
        state: The memory state to read.
        key: The key to look up, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        Whether a live entry is stored under ``key``.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "otp", "123456", now=1000, ttl=60_000)
        >>> core.has(state, "otp", now=60_999), core.has(state, "otp", now=61_000)
        (True, False)
    """
    _check_now(now)
    return _live_entry(state, _check_key(key), now) is not None


def size(state: MemoryState, *, now: int | float) -> int:
    """The number of live entries (ENT-11, EXP-3).

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        How many entries every read sees at ``now``; expired ones still stored do not count.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "otp", "123456", now=1000, ttl=60_000)
        >>> core.size(state, now=1000), core.size(state, now=61_000)
        (1, 0)
    """
    _check_now(now)
    return _live_count(state, now)


def get_recent(state: MemoryState, n: int | None = None, *, now: int | float) -> tuple[Entry, ...]:
    """The ``n`` newest live entries, newest first, as copies (ENT-10).

    Args:
        state: The memory state to read.
        n: How many entries, an integer >= 0. Defaults to None (10).
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        A tuple of ``Entry`` copies, newest first.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> state, _ = core.remember(state, "b", 2, now=2000)
        >>> [entry.key for entry in core.get_recent(state, 1, now=2000)]
        ['b']
    """
    _check_now(now)
    count = number_option("recent_n", n)
    return _copies(state, itertools.islice(state.index.newest_first(now), min(count, len(state.entries))))


def stats(state: MemoryState, *, now: int | float) -> dict[str, int]:
    """``size, stored, limit, cache, compactions, expired, evicted``, in that order (CMP-6).

    ``size`` counts the live entries, ``stored`` every stored entry (expired
    ones not yet compacted too), ``cache`` the live cache items; the last three
    are counters since the memory was made.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        A new dict of str to int.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> core.stats(state, now=1000)
        {'size': 1, 'stored': 1, 'limit': 1000, 'cache': 0, 'compactions': 0, 'expired': 0, 'evicted': 0}
    """
    _check_now(now)
    return {
        "size": size(state, now=now),
        "stored": len(state.entries),
        "limit": state.config.limit,
        "cache": cache_size(state, now=now),
        "compactions": state.counters.compactions,
        "expired": state.counters.expired,
        "evicted": state.counters.evicted,
    }


# ---------------------------------------------------------------------------
# Recall and context.


def _query_words(query: object, *, optional: bool = False) -> frozenset[str]:
    """REC-4: a query is a str (context also takes None); its words per REC-1."""
    if query is None and optional:
        return frozenset()
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    return words(query)


def _matches(
    state: MemoryState, query_words: frozenset[str], now: int | float, limit: int, among: Sequence[Entry] | None = None
) -> list[tuple[float, Entry]]:
    """The best ``limit`` live entries sharing a query word, best first (REC-2, REC-3).

    A query word no stored entry holds cannot raise any score. In a store
    that is small for the ``limit`` (a context's ranking), every entry
    holding a query word is scored (``best_holders``); otherwise
    ``best_matches`` walks the index by importance and stops early. With
    ``among``, only those live entries are looked at.
    """
    index, window = state.index, state.config.recency_window
    reachable = _reachable(index, query_words)
    if among is not None:
        ordered = sorted(among, key=by_importance, reverse=True)  # by importance, each newest first

        def walk_among(below: float | None) -> Iterator[Entry]:
            return iter(ordered) if below is None else (e for e in ordered if e.importance < below)

        return best_matches(walk_among, query_words, reachable, now, window, limit, seq_is_age=index.in_order)
    if _by_holders(len(state.entries), limit):
        holders = {word: index.holders(word) for word in sorted(reachable)}
        left_out = index.expired_seqs(now) or frozenset()
        return best_holders(holders, len(query_words), now, window, limit, left_out=left_out, seq_is_age=index.in_order)

    def walk(below: float | None) -> Iterator[Entry]:
        return index.by_importance_desc(now, below)

    return best_matches(
        walk,
        query_words,
        reachable,
        now,
        window,
        limit,
        seq_is_age=index.in_order,
        holders=index.searched_holders(reachable),
    )


def _by_holders(stored: int, limit: int) -> bool:
    """True when scoring every holder of a query word is the faster search: the store is small for the ``limit``."""
    return stored <= 2_048 + 32 * limit


def _reachable(index: Index, query_words: frozenset[str]) -> frozenset[str]:
    """The query words some stored entry may hold: no entry matches more of them (REC-2)."""
    return index.may_hold(query_words)


def recall(state: MemoryState, query: str, *, now: int | float, limit: int | None = None) -> tuple[Hit, ...]:
    """Lexical search: the best ``limit`` live entries sharing a word with ``query`` (REC-1..REC-4).

    Words are lower-cased runs of letters and digits, accents removed, found
    in an entry's key or data; the score is the share of the query's words an
    entry holds, weighted by its importance, plus a little for freshness
    (``sentinel_memory.core.lexical``). Ties go to the newer entry.

    Args:
        state: The memory state to read.
        query: The words to look for, a str.
        now: The current time, milliseconds since the epoch (a finite number).
        limit: The most hits, an integer >= 0. Defaults to None (10).

    Returns:
        A tuple of ``Hit`` (a copy of the ``entry`` and its ``score``), best first; empty for a query
        without words.

    Raises:
        TypeError: ``query`` is not a str, or ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:allergy", "peanuts", now=1000)
        >>> [hit.entry.key for hit in core.recall(state, "Peanuts?", now=1000)]
        ['user:allergy']
    """
    _check_now(now)
    query_words = _query_words(query)
    count = number_option("recall_limit", limit)
    if not query_words:
        return ()
    found = _matches(state, query_words, now, count)
    copies = _copies(state, [entry for _, entry in found])
    return tuple(Hit(entry, value) for entry, (value, _) in zip(copies, found, strict=True))


def _check_budget(token_budget: object) -> None:
    """CTX-5: the budget is a finite number >= 0; guessing would be harmful."""
    if not is_number(token_budget) or token_budget < 0:  # type: ignore[operator]
        raise ValueError(f"token_budget must be a finite number >= 0, got {shown(token_budget)}")


def context(
    state: MemoryState,
    *,
    now: int | float,
    token_budget: int | float,
    query: str | None = None,
    tokenizer: TokenizerLike | None = None,
    format: Callable[[Entry], str] | None = None,
    separator: str | None = None,
    must_keep: float | None = None,
    only: Literal["facts", "turns"] | None = None,
) -> Context:
    """Prompt text of the best live entries that fits ``token_budget`` (CTX-1 .. CTX-11).

    Ranking: entries matching ``query`` by recall score, then the rest by
    retention; with ``must_keep``, the entries of at least that importance
    come before both. The greedy fill and rendering are in
    ``sentinel_memory.core.prompt``. ``only="facts"`` or ``only="turns"`` takes
    only the entries of that kind (CTX-11, MSG-1); the rest count neither as
    chosen nor as omitted.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).
        token_budget: The most tokens the text may count, a finite number >= 0.
        query: Rank the entries that share its words first. Defaults to None (no query).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with
            ``encode(text)``. Defaults to None (the state's tokenizer).
        format: Renders one entry (a copy) as its line, a function ``(entry) -> str``.
            Defaults to None (``default_format``, ``key: data``).
        separator: Put between lines. Defaults to None (a newline).
        must_keep: Entries of at least this importance, in [0, 1], come first. Defaults to None.
        only: ``"facts"`` or ``"turns"``: only entries of that kind. Defaults to None (every entry).

    Returns:
        A ``Context`` with ``text``, the ``entries`` in it, its ``tokens`` and how many live
        entries were ``omitted``.

    Raises:
        ValueError: The budget is not a finite number >= 0, or ``only`` is not one of its two values.
        TypeError: ``now`` is not a finite number; the query, separator or ``only`` is not a str;
            the tokenizer or format is not callable or returned the wrong kind of value.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, _, _ = core.add_turn(state, "user", "Hi!", now=1000)
        >>> core.context(state, now=1000, token_budget=50, only="facts").text
        'user:name: Jakub'
    """
    _check_now(now)
    _check_budget(token_budget)
    query_words = _query_words(query, optional=True)
    counter = as_tokenizer(tokenizer)
    require_callable("format", format, optional=True)
    keep = number_option("must_keep", must_keep)
    if separator is None:
        separator = "\n"
    elif not isinstance(separator, str):
        raise TypeError(f"separator must be a str, got {type(separator).__name__}")
    if only is not None:
        # Checked last, as it comes last in the signature: the order the protocol's table lists (CTX-11).
        return context(
            _of_kind(state, only),
            now=now,
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            format=format,
            separator=separator,
            must_keep=keep,  # the checked value: a bad one is warned about once
        )
    counting = counter or state.config.tokenizer
    render = _renderer(format) if format is not None else render_default

    index, window = state.index, state.config.recency_window
    count = _live_count(state, now)
    live: list[Entry] = []

    def oldest_first() -> list[Entry]:
        if not live:
            live.extend(index.live_by_age(now))
        return live

    def by_retention_start(at_least: int | None) -> list[Entry] | None:
        return None if at_least is None else index.ranking_start(at_least, now, window)

    def rank(at_least: int | None) -> list[Entry]:
        """The live entries: query matches first, then the rest by retention (CTX-1).

        With ``at_least``, possibly only the first ``at_least`` or more.
        """
        if not query_words:
            start = by_retention_start(at_least)
            return start if start is not None else by_retention(oldest_first(), now, window, in_age_order=True)
        matched = [entry for _, entry in _matches(state, query_words, now, count if at_least is None else at_least)]
        if at_least is not None and len(matched) >= at_least:
            return matched
        # Fewer than asked for: these are all the matches. The first
        # ``at_least`` of the retention ranking hold at least the rest's first.
        taken = {entry.seq for entry in matched}
        start = by_retention_start(at_least)
        if start is None:
            start = by_retention(oldest_first(), now, window, in_age_order=True)
        return matched + [entry for entry in start if entry.seq not in taken]

    def rank_among(some: Sequence[Entry]) -> list[Entry]:
        """``some`` live entries in the order ``rank`` gives them: matches by score first, then by retention."""
        matched = (
            [entry for _, entry in _matches(state, query_words, now, len(some), among=some)] if query_words else []
        )
        taken = {entry.seq for entry in matched}
        return matched + by_retention([e for e in some if e.seq not in taken], now, window)

    ranking: Callable[[int | None], list[Entry]] = rank
    ranking_among: Callable[[Sequence[Entry]], list[Entry]] = rank_among
    if keep is not None:
        ranking, ranking_among = _kept_first(keep, oldest_first, rank, rank_among, now, window)
    text, chosen, tokens = fill(
        count,
        oldest_first,
        ranking,
        token_budget=token_budget,
        tokenizer=counting,
        render=render,
        separator=separator,
        least_units=index.least_units(),
        rank_among=ranking_among,
        lines_within=lambda units: index.lines_within(units, now),
        seq_is_age=index.in_order,
    )
    return Context(text=text, entries=_copies(state, chosen), tokens=tokens, omitted=count - len(chosen))


#: CTX-11: the kinds of entry a context may be restricted to.
KINDS = ("facts", "turns")


def _of_kind(state: MemoryState, only: object) -> MemoryState:
    """The state with only the entries of one kind (CTX-11, MSG-1): turns, or facts (everything else).

    The facts' state is the index's split, kept current by every change;
    the turns' is made for the one call, a pass over the turns.
    """
    if not isinstance(only, str):
        raise TypeError(f"only must be a str, one of {KINDS}, got {type(only).__name__}")
    only = str.__str__(only)  # a str subclass's own == must not run here (WRP-4)
    if only not in KINDS:
        raise ValueError(f"only must be one of {KINDS}, got {shown(only)}")
    if only == "facts":
        return _facts_of(state)
    kept = [item[-1] for item in state.index.split().turns]
    return MemoryState(config=state.config, entries=sorted(kept, key=_seq), next_seq=state.next_seq, turns=state.turns)


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
) -> Messages:
    """A valid chat request within ``token_budget``: the system message, then whole units of turns (MSG-2 .. MSG-13).

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
            cuts it only at marks, so consecutive requests share their start (MSG-10).
        low_mark: With ``cut="stable"``, about the share of the budget a request fills right after
            the history is cut, in [0, 1]. Defaults to None (0.5).
        facts_at: ``"system"`` (the default) puts the facts in the system message after ``system``;
            ``"end"`` puts them in a system message of their own after the history (MSG-11).

    Returns:
        A ``Messages`` with the ``messages`` (a new list of new dicts in the chat-completions form),
        the ``entries`` used, their ``tokens``, how many live entries were ``omitted``, and the
        ``pending`` turns of an unanswered call at the end.

    Raises:
        ValueError: The budget is not a finite number >= 0.
        TokenBudgetError: The system prompt, the must-keep facts and the turns from the newest
            user message on count more than the budget (a ``ValueError``).
        TypeError: ``now`` is not a finite number, the query or ``system`` is not a str, or the
            tokenizer is not callable or returned something other than a number >= 0.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, _, _ = core.add_turn(state, "user", "Hi!", now=1000)
        >>> core.messages(state, now=1000, token_budget=50, system="Be brief.").messages
        [{'role': 'system', 'content': 'Be brief.\\n\\nuser:name: Jakub'}, {'role': 'user', 'content': 'Hi!'}]
    """
    _check_now(now)
    _check_budget(token_budget)
    _query_words(query, optional=True)  # a bad query is refused even when no fact needs it (REC-4)
    if system is not None and not isinstance(system, str):
        raise TypeError(f"system must be a str, got {type(system).__name__}")
    counting = as_tokenizer(tokenizer) or state.config.tokenizer
    # A tokenizer counted line by line remembers each message's count (CTX-12); the count is the same.
    per_message = counting.measure if isinstance(counting, LineCounter) else counting
    share = number_option("facts_share", facts_share)
    keep = number_option("must_keep", must_keep)
    facts = _facts_of(state)
    # The turns newest first, cut into units as the walk reaches them (MSG-7): a call no further back than
    # the budget reaches is never looked at, nor sorted.
    newest = _NewestUnits(state, now, lambda m: count_tokens(per_message, body_of(m)) + MESSAGE_TOKENS)
    # MSG-9: the history starts at a user message; the units from the newest one on are always in.
    must, required = newest.through_newest_user()
    own = 0 if system is None else count_tokens(per_message, system) + MESSAGE_TOKENS
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
    if how != "newest" or where != "system":
        return _planned(
            state,
            now,
            newest,
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
        )

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
            # Counted as step 2 gives the facts room: the prompt, the separator and the facts' text apart.
            text = "\n".join(map(render_default, sorted_by_age(kept)))
            facts_cost = count_tokens(counting, text) + MESSAGE_TOKENS
            if system is not None:
                facts_cost += count_tokens(per_message, system) + count_tokens(per_message, SYSTEM_SEPARATOR)
            what = "the system prompt, the must-keep facts" if system is not None else "the must-keep facts"
            raise TokenBudgetError(
                max(facts_cost + required, math.floor(token_budget) + 1),
                token_budget,
                what + " and the turns from the newest user message on",
            )
    taken_units = newest.units[:taken][::-1]  # oldest first
    chosen_units = _from_a_user(taken_units)
    for _, cost in taken_units[: len(taken_units) - len(chosen_units)]:
        spent -= cost
    out = [] if content is None else [{"role": "system", "content": content}]
    used = [] if chosen is None or not chosen.entries else list(chosen.entries)
    said = [pair for unit, _ in chosen_units for pair in unit]
    out.extend(message for _, message in said)
    used.extend(_copies(state, [entry for entry, _ in said]))
    newest.get(0)  # the pending calls are known once the walk has passed the newest message
    facts_in = chosen is not None and bool(chosen.entries)
    return Messages(
        messages=out,
        entries=tuple(used),
        tokens=head + spent,
        omitted=_live_count(state, now) - len(used),
        pending=_copies(state, newest.pending),
        prefix=0 if facts_in else len(out),
        prefix_tokens=0 if facts_in else head + spent,
    )


def _planned(
    state: MemoryState,
    now: int | float,
    newest: _NewestUnits,
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
) -> Messages:
    """MSG-10 .. MSG-13: the request of a stable cut or of the facts at the end (``cut.plan``)."""
    facts = _facts_of(state)
    seqs = {e.seq for e in kept}
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
    )
    if not got.complete:
        text = "\n".join(map(render_default, sorted_by_age(kept)))
        facts_cost = count_tokens(counting, text) + MESSAGE_TOKENS
        if system is not None:
            facts_cost += count_tokens(per_message, system)
            facts_cost += MESSAGE_TOKENS if where == "end" else count_tokens(per_message, SYSTEM_SEPARATOR)
        what = "the system prompt, the must-keep facts" if system is not None else "the must-keep facts"
        raise TokenBudgetError(
            max(facts_cost + required, math.floor(token_budget) + 1),
            token_budget,
            what + " and the turns from the newest user message on",
        )
    units = _from_a_user(newest.units[: got.taken][::-1])
    said = [pair for unit, _ in units for pair in unit]
    out = [] if got.system is None else [{"role": "system", "content": got.system}]
    out.extend(message for _, message in said)
    turns = _copies(state, [entry for entry, _ in said])
    picked = () if got.chosen is None or not got.chosen.entries else tuple(got.chosen.entries)
    stable, stable_tokens = len(out), got.head + got.spent
    if got.facts is not None and where == "start":
        out.insert(len(out) - len(said), {"role": "system", "content": got.facts})
        stable, stable_tokens = len(out) - len(said) - 1, got.head
    elif got.facts is not None:
        out.append({"role": "system", "content": got.facts})
    elif picked:
        stable, stable_tokens = 0, 0  # the facts are in the system message, the first
    newest.get(0)  # the pending calls are known once the walk has passed the newest message
    used = turns + picked if where == "end" else picked + turns
    return Messages(
        messages=out,
        entries=used,
        tokens=got.head + got.spent + got.facts_cost,
        omitted=_live_count(state, now) - len(used),
        pending=_copies(state, newest.pending),
        prefix=stable,
        prefix_tokens=stable_tokens,
    )


#: MSG-2: between the app's system prompt and the facts in the one system message.
SYSTEM_SEPARATOR = "\n\n"


def _facts_of(state: MemoryState) -> MemoryState:
    """The state of the facts alone (MSG-1, CTX-11), from the index's split: kept current, never rebuilt per call."""
    split = state.index.split()
    return MemoryState(
        config=state.config,
        entries=split.facts,
        next_seq=state.next_seq,
        turns=state.turns,
        index=split.facts_index,
    )


_Unit = tuple[list[tuple[Entry, dict[str, Any]]], int | float]


def _from_a_user(units: list[_Unit]) -> list[_Unit]:
    """The units, oldest first, from the first that opens with a user message on (MSG-9)."""
    while units and units[0][0][0][1]["role"] != "user":
        units = units[1:]
    return units


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

    def __init__(self, state: MemoryState, now: int | float, cost: Callable[[dict[str, Any]], int | float]) -> None:
        split = state.index.split()
        self._now, self._cost = now, cost
        self._items = reversed(split.turns)
        oldest = next((item for item in split.users if not is_past(item[-1].expires_at, now)), None)
        newest = next((item for item in reversed(split.users) if not is_past(item[-1].expires_at, now)), None)
        self._oldest_user = None if oldest is None else oldest[:3]
        self._newest_user = None if newest is None else newest[-1]
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

    def _step(self) -> None:
        for item in self._items:
            entry = item[-1]
            if is_past(entry.expires_at, self._now):
                continue
            candidate = self._oldest_user is not None and item[:3] >= self._oldest_user
            if not candidate and self._met:
                break  # older than the oldest user turn: no unit from here on, and pending is known
            message = chat_message(entry.data)
            assert message is not None  # every turn is a message (MSG-1)
            role = message["role"]
            if role not in ROLES:
                continue
            if role == "tool":
                self._waiting.append((entry, message))
                continue
            waiting, self._waiting = self._waiting[::-1], []
            first, self._met = not self._met, True
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
                self.units.append((unit, sum(self._cost(m) for _, m in unit)))
                return
        else:
            self._done = True
            return
        self._done = True


def _kept_first(
    keep: float,
    oldest_first: Callable[[], list[Entry]],
    rank: Callable[[int | None], list[Entry]],
    rank_among: Callable[[Sequence[Entry]], list[Entry]],
    now: int | float,
    window: int | float,
) -> tuple[Callable[[int | None], list[Entry]], Callable[[Sequence[Entry]], list[Entry]]]:
    """CTX-10: the ranking with every entry of importance >= ``keep`` first, by retention, then the usual order."""

    def kept(entries: Sequence[Entry]) -> list[Entry]:
        return by_retention([e for e in entries if e.importance >= keep], now, window)

    def ranked(_: int | None) -> list[Entry]:
        first = kept(oldest_first())
        return first + [e for e in rank(None) if e.importance < keep]

    def ranked_among(some: Sequence[Entry]) -> list[Entry]:
        return kept(some) + rank_among([e for e in some if e.importance < keep])

    return ranked, ranked_among


def _renderer(format: Callable[[Entry], str]) -> Callable[[Entry], str]:
    """CTX-3: ``format`` sees a copy of each entry and must return a str."""

    def render(entry: Entry) -> str:
        line = format(entry.copy())
        if not isinstance(line, str):
            raise TypeError(f"format must return a str, got {type(line).__name__}")
        return line

    return render


# ---------------------------------------------------------------------------
# L0 cache: scratch values with a ttl, never persisted.


def cache_put(
    state: MemoryState, key: str, value: Any, *, now: int | float, ttl: Duration | None = None
) -> MemoryState:
    """Store a scratch value until ``now + ttl`` (default ``cache_ttl``) (L0-1, L0-3).

    Items already expired are dropped on the way, so the cache does not grow
    with dead scratch values (L0-4).

    Args:
        state: The memory state to change; it is not modified.
        key: The item's key, a non-empty str.
        value: Any JSON value; it is copied.
        now: The current time, milliseconds since the epoch (a finite number).
        ttl: How long the item lives, in milliseconds or a ``timedelta``.
            Defaults to None (the config's ``cache_ttl``).

    Returns:
        The new state.

    Raises:
        TypeError: The key is not a str, ``value`` is not JSON, or ``now`` is not a finite number.
        ValueError: The key is empty, or ``value`` is nested too deep.

    Examples:
        >>> state = core.cache_put(MemoryState(), "draft", "Hel", now=1000, ttl=5_000)
        >>> core.cache_get(state, "draft", now=5_999), core.cache_get(state, "draft", now=6_000)
        ('Hel', None)
    """
    _check_now(now)
    key = _check_key(key)
    expires_at = deadline(now, ttl, default=state.config.cache_ttl)
    assert expires_at is not None  # the fallback, cache_ttl, is always a number (NUM-3)
    item = CacheItem(copy_json(value, what="value"), expires_at)
    cache = {k: v for k, v in state.cache.items() if not is_past(v.expires_at, now)}
    cache[key] = item
    return attrs.evolve(state, cache=frozen_mapping(cache))


def _live_item(state: MemoryState, key: str, now: int | float) -> CacheItem | None:
    item = state.cache.get(key)
    return None if item is None or is_past(item.expires_at, now) else item


def cache_get(state: MemoryState, key: str, *, now: int | float, default: Any = None) -> Any:
    """A copy of a live scratch value, else ``default`` (L0-1, L0-3).

    Args:
        state: The memory state to read.
        key: The item's key, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).
        default: What to return when there is no live item. Defaults to None.

    Returns:
        A copy of the value, or ``default``.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state = core.cache_put(MemoryState(), "draft", "Hel", now=1000)
        >>> core.cache_get(state, "draft", now=1000), core.cache_get(state, "other", now=1000, default="-")
        ('Hel', '-')
    """
    _check_now(now)
    item = _live_item(state, _check_key(key), now)
    return default if item is None else copy_json(item.value)


def cache_delete(state: MemoryState, key: str, *, now: int | float) -> tuple[MemoryState, bool]:
    """Remove a scratch value; ``True`` when a live one was removed (L0-2).

    Args:
        state: The memory state to change; it is not modified.
        key: The item's key, a non-empty str.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        ``(state, removed)``, the new state and whether a live item was removed.

    Raises:
        TypeError: The key is not a str, or ``now`` is not a finite number.
        ValueError: The key is empty.

    Examples:
        >>> state = core.cache_put(MemoryState(), "draft", "Hel", now=1000)
        >>> state, removed = core.cache_delete(state, "draft", now=1000)
        >>> removed, core.cache_size(state, now=1000)
        (True, 0)
    """
    _check_now(now)
    key = _check_key(key)
    if key not in state.cache:
        return state, False
    was_live = _live_item(state, key, now) is not None
    cache = dict(state.cache)
    del cache[key]
    return attrs.evolve(state, cache=frozen_mapping(cache)), was_live


def cache_clear(state: MemoryState) -> MemoryState:
    """Empty the L0 cache (L0-2).

    Args:
        state: The memory state to change; it is not modified.

    Returns:
        The new state, with an empty cache.

    Examples:
        >>> state = core.cache_put(MemoryState(), "draft", "Hel", now=1000)
        >>> core.cache_size(core.cache_clear(state), now=1000)
        0
    """
    return attrs.evolve(state, cache=frozen_mapping())


def cache_size(state: MemoryState, *, now: int | float) -> int:
    """The number of live scratch values, ``stats()['cache']`` (L0-2).

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        How many cache items are live at ``now``.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state = core.cache_put(MemoryState(), "draft", "Hel", now=1000, ttl=5_000)
        >>> core.cache_size(state, now=1000), core.cache_size(state, now=6_000)
        (1, 0)
    """
    _check_now(now)
    return sum(1 for item in state.cache.values() if not is_past(item.expires_at, now))


# ---------------------------------------------------------------------------
# L1 working memory: one small dict that resets when idle.


def _working_idle(state: MemoryState, now: int | float) -> bool:
    """L1-2: idle once ``working_ttl`` has passed since the last set."""
    updated_at = state.working.updated_at
    # Written as the rule states it (not as a deadline), so fractional
    # times round exactly as in every port.
    return updated_at is not None and now - updated_at >= state.config.working_ttl


def working_set(state: MemoryState, patch: Mapping[str, Any], *, now: int | float) -> MemoryState:
    """Shallow-merge ``patch`` into the working memory, or into ``{}`` once idle (L1-1, L1-2).

    Args:
        state: The memory state to change; it is not modified.
        patch: A dict of JSON values; it is copied, and its keys replace the same keys.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        The new state, with the working memory's idle clock restarted at ``now``.

    Raises:
        TypeError: ``patch`` is not a dict of JSON values, or ``now`` is not a finite number.

    Examples:
        >>> state = core.working_set(MemoryState(), {"step": 1, "topic": "risotto"}, now=1000)
        >>> core.working_get(core.working_set(state, {"step": 2}, now=2000), now=2000)
        {'step': 2, 'topic': 'risotto'}
    """
    _check_now(now)
    if not isinstance(patch, dict):
        raise TypeError(f"working memory patch must be a dict, got {type(patch).__name__}")
    patch = copy_json(patch, what="patch")
    base = {} if _working_idle(state, now) else state.working.data
    return attrs.evolve(state, working=Working({**base, **patch}, now))


def working_get(state: MemoryState, *, now: int | float) -> dict[str, Any]:
    """A copy of the working memory, or ``{}`` once idle (L1-2).

    The working memory is idle once ``working_ttl`` (an hour by default) has
    passed since its last set.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        A new dict.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state = core.working_set(MemoryState(), {"step": 1}, now=1000)
        >>> core.working_get(state, now=1000), core.working_get(state, now=1000 + 3_600_000)
        ({'step': 1}, {})
    """
    _check_now(now)
    return {} if _working_idle(state, now) else copy_json(dict(state.working.data))


def working_clear(state: MemoryState) -> MemoryState:
    """Empty the working memory and forget when it was set (L1-3).

    Args:
        state: The memory state to change; it is not modified.

    Returns:
        The new state, with an empty working memory.

    Examples:
        >>> state = core.working_set(MemoryState(), {"step": 1}, now=1000)
        >>> core.working_get(core.working_clear(state), now=1000)
        {}
    """
    return attrs.evolve(state, working=Working())


# ---------------------------------------------------------------------------
# Persistence, as values: the document a store saves and loads.


def to_document(state: MemoryState, *, generation: int | None = None) -> dict[str, Any]:
    """The JSON document ``save()`` writes (PER-1, PER-12, MW-1); see ``sentinel_memory.core.document``.

    It holds the entries (expired ones not yet compacted too) and the working
    memory; the cache, the counters and the config are not saved.

    Args:
        state: The memory state to write out.
        generation: The generation to stamp on the document (MW-1). Defaults to None (none stamped).

    Returns:
        A new dict of JSON values.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> document = core.to_document(state)
        >>> document["version"], [entry["key"] for entry in document["entries"]]
        (1, ['user:name'])
    """
    return _document.dump(state, generation=generation)


def changes(before: MemoryState, after: MemoryState, keys: Iterable[str], *, generation: int = 0) -> Changes:
    """What a store must write to turn ``before`` into ``after`` (MW-4).

    ``keys`` are the keys the change may have touched (the one remembered or
    forgotten, and every key its compaction dropped); only they are looked
    at, so describing a change costs nothing per stored entry. An entry is
    rewritten when it is not the very same value as before.

    Args:
        before: The state the store holds.
        after: The state to save.
        keys: The keys the change may have touched.
        generation: The generation the change is saved as (MW-1). Defaults to 0.

    Returns:
        A ``Changes`` with the entries to write (``upserts``), the keys to delete (``deletes``),
        the new working memory (None when unchanged) and the ``generation``.

    Examples:
        >>> before, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> after, _ = core.remember(before, "b", 2, now=2000)
        >>> delta = core.changes(before, after, ["b"], generation=2)
        >>> [entry.key for entry in delta.upserts], delta.deletes, delta.generation
        (['b'], (), 2)
    """
    upserts, deletes = [], []
    for key in dict.fromkeys(keys):
        entry = after.entries.get(key)
        if entry is None:
            if key in before.entries:
                deletes.append(key)
        elif before.entries.get(key) is not entry:
            upserts.append(entry)
    upserts.sort(key=by_age)
    working = None if after.working is before.working else after.working
    return Changes(tuple(upserts), tuple(deletes), working, generation)


def from_document(
    state: MemoryState, document: object, *, now: int | float
) -> tuple[MemoryState, LoadResult, Compaction]:
    """Replace entries and working memory with a loaded document (PER-3 .. PER-8).

    The cache, the counters and the config stay. Invalid entries are dropped
    and counted, not raised. A store that holds more than ``limit`` is
    compacted like any automatic compaction, and what that dropped comes back
    as the ``Compaction``.

    Args:
        state: The memory state to load into; it is not modified.
        document: The loaded document, as ``to_document`` writes it; None for an empty store.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        ``(state, result, compaction)``, the new state, the ``LoadResult`` (counts of loaded,
        dropped and compacted entries) and what the compaction dropped.

    Raises:
        TypeError: ``now`` is not a finite number.
        DamagedStoreError: The document is not a memory (not a dict, an unknown version, ...).

    Examples:
        >>> saved, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, result, dropped = core.from_document(MemoryState(), core.to_document(saved), now=2000)
        >>> core.get(state, "user:name", now=2000), result.loaded, result.dropped
        ('Jakub', 1, 0)
    """
    _check_now(now)
    entries, working, result = _document.parse(document, first_seq=state.next_seq)
    state = _with_entries(
        state,
        Table(entries),
        Index.of(entries),
        working=working,
        next_seq=state.next_seq + len(entries),
        turns=max(state.turns, largest_turn(entry.key for entry in entries)),
    )
    dropped = Compaction()
    if len(entries) > state.config.limit:
        state, dropped = compact(state, now=now)
        result = attrs.evolve(result, compacted=len(dropped.expired) + len(dropped.evicted))
    return state, result, dropped
