"""The memory as one immutable value: [`MemoryState`][sentinel_memory.state.MemoryState]."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .index import Index
from .table import Table
from .values import CacheItem, Config, Counters, Entry, Working, frozen_mapping

__all__ = ["MemoryState"]


def _table(entries: Mapping[str, Entry] | Iterable[Entry] | None) -> Table:
    """``entries`` as a ``Table``; a table the core made is kept as it is (nobody can change it)."""
    if isinstance(entries, Table):
        return entries
    return Table(entries or {})


def _index_of(state: Any) -> Index:
    return Index.of(state.entries.values())


@attrs.frozen
class MemoryState:
    """Everything a memory holds at one moment. Build the first one with ``MemoryState()``.

    ``entries`` is a read-only ``Table`` in
    ``seq`` order; a dict of entries passed in is copied into one. ``index``
    is what the core keeps current about the entries so that no read has to
    scan them (``sentinel_memory.index``). It is worked out when a state
    is built by hand and kept current by the core's transitions; it is a
    summary, not data, so it takes no part in equality. ``turns`` is the
    largest ``N`` of a ``chat:N`` key stored since the memory began or was
    loaded, so the next chat turn gets ``N + 1`` (ENT-16).
    """

    config: Config = attrs.field(factory=Config)
    entries: Table = attrs.field(factory=Table, converter=_table)
    cache: Mapping[str, CacheItem] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    working: Working = attrs.field(factory=Working)
    counters: Counters = attrs.field(factory=Counters)
    next_seq: int = 0
    turns: int = 0
    index: Index = attrs.field(default=attrs.Factory(_index_of, takes_self=True), eq=False, repr=False)
