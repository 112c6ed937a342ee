"""The L1 working memory: one small dict for the task in progress, which resets when idle (L1-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .basics import _check_now
from .jsondata import copy_json
from .state import MemoryState
from .values import (
    Working,
)


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
