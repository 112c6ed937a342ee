"""What every transition and read starts from: the checks of ``now`` and a key, and the live view of a state.

Illegal input raises before anything is built (TIME-2, ENT-1, ENT-2); a read
sees the entries whose expiry has not come (EXP-3) and gets copies of them
(ENT-3); a transition replaces the entry table only with its index.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import attrs

from .expiry import is_past
from .index import Index
from .jsondata import copy_json
from .options import is_number
from .shown import shown
from .state import MemoryState
from .table import Table
from .values import (
    Entry,
)


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
    return tuple(map(Entry.copy, entries))


def _live_entry(state: MemoryState, key: str, now: int | float) -> Entry | None:
    entry = state.entries.get(key)
    return None if entry is None or is_past(entry.expires_at, now) else entry


_seq = operator.attrgetter("seq")
