"""Long-term entries: the transitions that store, compact and drop them (ENT-*, CMP-*).

``remember`` stores an entry and compacts when the live count is over the
limit; ``compact`` drops the expired entries, then the lowest retention
(CMP-1); ``forget`` and ``clear`` drop on request. Each returns the new state
and what it dropped, so nothing disappears unreported.
"""

from __future__ import annotations

from typing import Any

import attrs

from .basics import _check_key, _check_now, _live_entry, _seq, _with_entries
from .expiry import deadline, is_past
from .index import Index
from .jsondata import copy_json
from .options import Duration, number_option
from .state import MemoryState, largest_turn
from .table import Table
from .values import (
    Compaction,
    Config,
    Counters,
    Entry,
    sorted_by_age,
)


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
    return remember_owned(state, key, copy_json(data), now=now, importance=importance, ttl=ttl)


def remember_owned(
    state: MemoryState,
    key: str,
    data: Any,
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction]:
    """``remember`` of data already checked and copied, which nothing else holds: kept as it is (ENT-3).

    For a caller that made ``data`` itself from checked input (``add_messages``
    stores the messages ``check_messages`` built): copying it again would
    change nothing. ``key`` is checked already too; ``now`` is checked here.
    """
    _check_now(now)
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
