"""The entry table: ``key -> Entry``, read-only, in ``seq`` order (ENT-6).

A ``Table`` is what ``MemoryState.entries`` holds. It reads like any
mapping, iterates oldest remember first, and cannot be changed: a
transition asks ``Table.changed`` for a new table, which shares all but
a few chunks with the old one (``sentinel_memory.core.persistent``). So a
remember into a memory of 100,000 entries does not copy 100,000 entries.
"""

from __future__ import annotations

import operator
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from .persistent import HashTable, SortedRun
from .values import Entry

__all__ = ["Table"]

_entry = operator.itemgetter(-1)
_key = operator.attrgetter("key")
_seq = operator.attrgetter("seq")


def _seq_item(entry: Entry) -> tuple[int, Entry]:
    return (entry.seq, entry)


class Table(Mapping[str, Entry]):
    """Entries by key, iterated in ``seq`` order. Build one from a mapping or from entries."""

    __slots__ = ("_by_key", "_by_seq")

    _by_key: HashTable[str, Entry]
    _by_seq: SortedRun[tuple[int, Entry]]

    def __init__(self, entries: Mapping[str, Entry] | Iterable[Entry] = ()) -> None:
        values = list(entries.values() if isinstance(entries, Mapping) else entries)
        self._by_key = HashTable(zip(map(_key, values), values, strict=True))
        try:
            self._by_seq = SortedRun(zip(map(_seq, values), values, strict=True))
        except TypeError:  # two equal seqs, so the sort compared their entries (ENT-17)
            raise ValueError("a table holds one entry per seq") from None
        if len(self._by_key) != len(self._by_seq):
            raise ValueError("a table holds one entry per key")

    @classmethod
    def _of(cls, by_key: HashTable[str, Entry], by_seq: SortedRun[tuple[int, Entry]]) -> Table:
        table = object.__new__(cls)
        table._by_key, table._by_seq = by_key, by_seq
        return table

    def __getitem__(self, key: str) -> Entry:
        return self._by_key[key]

    def last_seq(self) -> int:
        """The largest seq stored, or -1 when the table is empty."""
        last = self._by_seq.last()
        return -1 if last is None else last[0]

    def first_seq(self) -> int:
        """The smallest seq stored, or 0 when the table is empty."""
        first = self._by_seq.first()
        return 0 if first is None else first[0]

    def get(self, key: str, default: Any = None) -> Any:
        """The entry stored under ``key``, expired or not, else ``default``."""
        return self._by_key.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[str]:
        return map(_key, self._entries())

    def _entries(self) -> Iterator[Entry]:
        return map(_entry, self._by_seq)

    def keys(self) -> KeysView[str]:
        """The keys in ``seq`` order."""
        return _Keys(self)

    def values(self) -> ValuesView[Entry]:
        """The entries in ``seq`` order."""
        return _Values(self)

    def items(self) -> ItemsView[str, Entry]:
        """``(key, entry)`` pairs in ``seq`` order."""
        return _Items(self)

    def __repr__(self) -> str:
        return f"Table({dict(self.items())!r})"

    def changed(self, removed: Iterable[Entry] = (), added: Iterable[Entry] = ()) -> Table:
        """A new table without ``removed`` (each stored) and with ``added`` (whose keys are then free)."""
        removed, added = list(removed), list(added)
        by_key = self._by_key.changed(map(_key, removed), [(entry.key, entry) for entry in added])
        gone = set(map(_seq, removed))
        by_seq = self._by_seq.changed(map(_seq_item, removed), map(_seq_item, added), removed_ids=gone)
        if len(by_key) != len(by_seq):
            raise ValueError("a table holds one entry per key")
        return Table._of(by_key, by_seq)


class _Keys(KeysView[str]):
    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self._table = table

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)


class _Values(ValuesView[Entry]):
    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self._table = table

    def __iter__(self) -> Iterator[Entry]:
        return self._table._entries()


class _Items(ItemsView[str, Entry]):
    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self._table = table

    def __iter__(self) -> Iterator[tuple[str, Entry]]:
        return ((entry.key, entry) for entry in self._table._entries())
