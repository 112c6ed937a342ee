"""Long-term entries: the reads. None of them changes the state; each sees the live entries at ``now`` (EXP-3)."""

from __future__ import annotations

import itertools
from typing import Any

from .basics import _check_key, _check_now, _copies, _live_count, _live_entry
from .cache import cache_size
from .jsondata import copy_json
from .options import number_option
from .state import MemoryState
from .values import (
    Entry,
    ranking_name,
)


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


def stats(state: MemoryState, *, now: int | float) -> dict[str, int | str]:
    """``size, stored, limit, cache, compactions, expired, evicted, ranking``, in that order (CMP-6).

    ``size`` counts the live entries, ``stored`` every stored entry (expired
    ones not yet compacted too), ``cache`` the live cache items; the next three
    are counters since the memory was made, and ``ranking`` names the ranking
    as a saved document does (BM-10): ``"words"``, ``"bm25"`` or ``"function"``.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).

    Returns:
        A new dict of str to int, and ``ranking`` a str.

    Raises:
        TypeError: ``now`` is not a finite number.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> core.stats(state, now=1000)
        {'size': 1, 'stored': 1, 'limit': 1000, 'cache': 0, 'compactions': 0, 'expired': 0, 'evicted': 0, 'ranking': 'words'}
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
        "ranking": ranking_name(state.config.ranking),
    }
