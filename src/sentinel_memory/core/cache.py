"""The L0 cache: scratch values with a ttl, never persisted (L0-*)."""

from __future__ import annotations

from typing import Any

import attrs

from .basics import _check_key, _check_now
from .expiry import deadline, is_past
from .jsondata import copy_json
from .options import Duration
from .state import MemoryState
from .values import (
    CacheItem,
    frozen_mapping,
)


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
