"""The memory as one immutable value: ``MemoryState``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .index import Index
from .table import Table
from .turns import MAX_TURN_DIGITS
from .values import CacheItem, Config, Counters, Entry, Working, frozen_mapping

__all__ = ["MAX_TURN_DIGITS", "MemoryState", "largest_turn"]


def _table(entries: Mapping[str, Entry] | Iterable[Entry] | None) -> Table:
    """``entries`` as a ``Table``; a table the core made is kept as it is (nobody can change it)."""
    if isinstance(entries, Table):
        return entries
    values = list(entries.values() if isinstance(entries, Mapping) else entries or ())
    if not all(isinstance(entry, Entry) for entry in values):
        raise TypeError("entries must be a mapping of Entry values or an iterable of Entry")
    return Table(values)


def _index_of(state: Any) -> Index:
    return Index.of(state.entries.values())


def largest_turn(keys: Iterable[str]) -> int:
    """The largest N of the ``chat:N`` keys among ``keys``, or 0 (ENT-16); a load asks this of every key.

    A step at a time over all the keys, at C speed: the tails after
    ``chat:`` that are ASCII digits only.

    Args:
        keys: Entry keys.

    Returns:
        The largest ``N``, or 0 when no key is a ``chat:N``.

    Examples:
        >>> from sentinel_memory.core.state import largest_turn
        >>> largest_turn(["chat:2", "chat:10", "chat:x", "user:name"])
        10
    """
    # At most MAX_TURN_DIGITS digits: Python reads no longer int from text, and N + 1 must still be written.
    tails = [key[5:] for key in keys if key.startswith("chat:") and len(key) <= 5 + MAX_TURN_DIGITS]
    return max(map(int, filter(str.isdigit, filter(str.isascii, tails))), default=0)


def _next_seq_of(state: Any) -> int:
    """One above the largest seq stored, or 0 (ENT-17): what a state built by hand starts counting from."""
    last: int = state.entries.last_seq()
    return last + 1


def _turns_of(state: Any) -> int:
    return largest_turn(state.entries)


def _above_every_seq(state: Any, attribute: Any, next_seq: int) -> None:
    """ENT-17: the next remember's seq must be new, or two entries would share one and no order could hold."""
    if not isinstance(next_seq, int) or isinstance(next_seq, bool):
        raise TypeError(f"next_seq must be an int, got {type(next_seq).__name__}")
    last = state.entries.last_seq()
    if next_seq <= last:
        raise ValueError(f"next_seq must be above every stored seq, got {next_seq}; the largest stored seq is {last}")


@attrs.frozen
class MemoryState:
    """Everything a memory holds at one moment. Build the first one with ``MemoryState()``.

    ``entries`` is a read-only ``Table`` in
    ``seq`` order; a dict of entries passed in is copied into one. ``index``
    is what the core keeps current about the entries so that no read has to
    scan them (``sentinel_memory.core.index``). It is worked out when a state
    is built by hand and kept current by the core's transitions; it is a
    summary, not data, so it takes no part in equality. ``turns`` is the
    largest ``N`` of a ``chat:N`` key stored since the memory began or was
    loaded, so the next chat turn gets ``N + 1`` (ENT-16).

    A state built by hand from entries counts on from them (ENT-17):
    ``next_seq`` defaults to one above the largest stored seq and ``turns``
    to the largest stored turn; a ``next_seq`` that is not above every
    stored seq raises ``ValueError``, since the next remember would then
    reuse one.

    Attributes:
        config: The ``Config``: the options, each through the number rule. Defaults to ``Config()``.
        entries: Every stored ``Entry``, expired ones included, in ``seq`` order; given as a dict
            of entries or an iterable of them. Defaults to none.
        cache: The L0 cache: key to ``CacheItem``. Defaults to empty.
        working: The L1 working memory, a ``Working``. Defaults to empty.
        counters: The ``Counters`` behind ``stats()``. Defaults to zeros.
        next_seq: The ``seq`` the next remember gets. Defaults to one above the largest stored.
        turns: The largest ``N`` of a ``chat:N`` key so far. Defaults to the largest stored.
        index: The summary the core keeps current for fast reads; worked out when not given.

    Raises:
        TypeError: ``entries`` holds something other than ``Entry`` values, or ``next_seq`` is
            not an int.
        ValueError: ``next_seq`` is not above every stored seq.

    Examples:
        >>> mem.remember("user:name", "Jakub").key
        'user:name'
        >>> state = mem.state
        >>> list(state.entries), state.next_seq, state.config.limit
        (['user:name'], 1, 1000)
        >>> MemoryState(entries=state.entries.values()).next_seq
        1
    """

    config: Config = attrs.field(factory=Config)
    entries: Table = attrs.field(factory=Table, converter=_table)
    cache: Mapping[str, CacheItem] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    working: Working = attrs.field(factory=Working)
    counters: Counters = attrs.field(factory=Counters)
    next_seq: int = attrs.field(default=attrs.Factory(_next_seq_of, takes_self=True), validator=_above_every_seq)
    turns: int = attrs.field(default=attrs.Factory(_turns_of, takes_self=True))
    index: Index = attrs.field(default=attrs.Factory(_index_of, takes_self=True), eq=False, repr=False)
