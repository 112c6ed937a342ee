"""The immutable values the core passes around.

Every class here is a frozen attrs class: a transition never changes a value,
it builds a new one with :func:`attrs.evolve`. Containers inside a
:class:`MemoryState` are read-only mappings and tuples, so code that holds an
old state keeps seeing exactly that state.

The one thing attrs cannot freeze is an entry's JSON ``data`` (a dict stays a
dict). The core therefore copies data on the way in and hands out copies on
every way out (ENT-3): what a caller receives is never what the state holds.
"""

from __future__ import annotations

import functools
import operator
import types
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .jsondata import clone, copy_json, text_of
from .lexical import words
from .tokens import Tokenizer, estimate_tokens, utf16_len

__all__ = [
    "CacheItem",
    "Changes",
    "Columns",
    "Compaction",
    "Config",
    "Context",
    "Counters",
    "Entry",
    "Hit",
    "LoadResult",
    "MemoryState",
    "Shape",
    "Working",
    "by_age",
    "default_format",
    "frozen_mapping",
]


def frozen_mapping(items: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only view: how states hold their tables.

    A view the core already made is kept as it is (nobody else holds its
    dict); anything else is copied first, so a caller's dict never leaks in.
    """
    if isinstance(items, types.MappingProxyType):
        return items
    return types.MappingProxyType(dict(items or {}))


@attrs.frozen
class Entry:
    """One long-term memory, as the article's JSON plus its order number.

    ``seq`` grows with every remember (ENT-6), so "newer" is the larger
    ``(updated_at, seq)`` even when two writes share a millisecond.
    ``text`` and ``words`` are derived once per entry version.
    """

    key: str
    data: Any
    importance: float
    created_at: int | float
    updated_at: int | float
    expires_at: int | float | None
    seq: int

    @functools.cached_property
    def text(self) -> str:
        """The data as the context renders it (TXT-1), computed once per entry version."""
        return text_of(self.data)

    @functools.cached_property
    def line(self) -> str:
        """The entry rendered by :func:`default_format`, computed once per entry version (CTX-3)."""
        return default_format(self)

    @functools.cached_property
    def line_units(self) -> int:
        """UTF-16 length of :attr:`line`, what the estimator's fast fill sums (CTX-8).

        Summed from the parts of ``key: text``, so that measuring every entry
        (a load does) does not also build and keep every line.
        """
        return utf16_len(self.key) + 2 + utf16_len(self.text)

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """The recall words of key and text together (REC-1), computed once per entry version."""
        return words(self.key) | words(self.text)

    @property
    def order(self) -> tuple[int | float, int]:
        """The sort key of age: larger is newer (ENT-6)."""
        return (self.updated_at, self.seq)

    @property
    def holds_container(self) -> bool:
        """True when ``data`` is a dict or a list: the only data a reader could change (ENT-3)."""
        return isinstance(self.data, (dict, list))

    def copy(self) -> Entry:
        """The same entry with its own copy of ``data`` (ENT-3).

        An entry is frozen, so when its data is immutable too (a str, a
        number, a bool or None) the entry itself is already a safe copy.
        """
        if not self.holds_container:
            return self
        return attrs.evolve(self, data=clone(self.data))


#: Sort key for age order, oldest first: ascending ``(updated_at, seq)`` (ENT-6).
by_age = operator.attrgetter("order")


def default_format(entry: Entry) -> str:
    """``key: text``, the default line of a context (CTX-3)."""
    return f"{entry.key}: {entry.text}"


@attrs.frozen
class CacheItem:
    """An L0 scratch value and the moment it expires (L0-1)."""

    value: Any
    expires_at: int | float


@attrs.frozen
class Working:
    """L1 working memory: a small dict and when it was last set (L1-1..L1-3).

    ``updated_at`` is None after a clear or when nothing was ever set.
    """

    data: Mapping[str, Any] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    updated_at: int | float | None = None


@attrs.frozen
class Counters:
    """Running totals for ``stats()`` (CMP-5)."""

    compactions: int = 0
    expired: int = 0
    evicted: int = 0


@attrs.frozen
class Config:
    """The options that shape behaviour, each already through the number rule (NUM-3)."""

    limit: int = 1000
    recency_window: int | float = 86_400_000
    working_ttl: int | float = 3_600_000
    cache_ttl: int | float = 300_000
    tokenizer: Tokenizer = estimate_tokens


_key = operator.attrgetter("key")
_importance = operator.attrgetter("importance")
_updated_at = operator.attrgetter("updated_at")
_line_units = operator.attrgetter("line_units")


@attrs.frozen
class Columns:
    """The entry table read by column, in table order: what context ranking reads of every entry.

    Fetching one attribute of each of a thousand entries costs about as much
    as the arithmetic done with it, while copying a list costs a small
    fraction of that. So the transitions keep these lists next to the table,
    and a context call reads numbers from them instead of attributes from
    entries. The lists are never changed once a shape holds them: a
    transition changes its own copies (:class:`ShapeDraft`).

    ``units`` is :attr:`Entry.line_units`: what the estimator's fast fill
    sums for the default format (CTX-8).
    """

    keys: list[str] = attrs.field(factory=list)
    importances: list[float] = attrs.field(factory=list)
    updated: list[int | float] = attrs.field(factory=list)
    units: list[int] = attrs.field(factory=list)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Columns:
        """The columns of ``entries``, in the order given."""
        entries = list(entries)
        return cls(
            list(map(_key, entries)),
            list(map(_importance, entries)),
            list(map(_updated_at, entries)),
            list(map(_line_units, entries)),
        )


@attrs.frozen
class Shape:
    """What every transition keeps current about a state's entries, so no read has to scan for it.

    It is a summary, not data: two states with equal entries are equal
    whatever their shapes say. ``groups``, ``containers`` and ``columns``
    are exact; the other facts are allowed to be conservative.

    * ``groups``: for each importance, the keys of the stored entries that
      have it, in table order. Apps use a handful of importances, so there
      are few groups, and a transition copies only the groups it changes.
    * ``expiry_floor``: no stored entry expires before this moment (None:
      none has an expiry). After a removal it may be too low, never too high.
    * ``in_order``: the table's order (ascending ``seq``) is also age order,
      ascending ``(updated_at, seq)``. It holds as long as the clock never
      went back; False only means "sort to be sure".
    * ``latest``: no stored entry was updated after this moment.
    * ``containers``: how many stored entries have a dict or a list as data,
      the only data that has to be copied on the way out (ENT-3). At 0 a
      read hands out the stored entries themselves, which are frozen.
    * ``columns``: the table by column (:class:`Columns`).
    """

    groups: Mapping[float, list[str]] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    expiry_floor: int | float | None = None
    in_order: bool = True
    latest: int | float | None = None
    containers: int = 0
    columns: Columns = attrs.field(factory=Columns)

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Shape:
        """The shape of a table, worked out from scratch in one pass per fact."""
        entries = list(entries)
        groups: dict[float, list[str]] = {}
        for entry in entries:
            groups.setdefault(entry.importance, []).append(entry.key)
        return cls(
            groups=groups,
            expiry_floor=min((e.expires_at for e in entries if e.expires_at is not None), default=None),
            in_order=all(a.order < b.order for a, b in zip(entries, entries[1:], strict=False)),
            latest=max((e.updated_at for e in entries), default=None),
            containers=sum(1 for e in entries if e.holds_container),
            columns=Columns.of(entries),
        )

    @property
    def counts(self) -> dict[float, int]:
        """How many stored entries have each importance."""
        return {importance: len(keys) for importance, keys in self.groups.items()}

    def draft(self) -> ShapeDraft:
        """A copy to change in place during one transition, then :meth:`ShapeDraft.freeze`."""
        return ShapeDraft(self)


class ShapeDraft:
    """A :class:`Shape` being changed by one transition.

    Like the transition's own copy of the entry table, it holds its own
    copies of everything, changes them in place, and hands them to a new
    frozen shape at the end. So a transition copies each column once,
    however many entries it adds and removes. Appends to the columns wait
    until :meth:`freeze`, after the removals, so a list never has to grow
    past the size it was copied at.
    """

    def __init__(self, shape: Shape) -> None:
        self.groups = dict(shape.groups)  # the lists are still the shape's: copied before a change
        self.own: set[float] = set()
        self.expiry_floor = shape.expiry_floor
        self.in_order = shape.in_order
        self.latest = shape.latest
        self.containers = shape.containers
        self.columns = [column.copy() for column in attrs.astuple(shape.columns, recurse=False)]
        self.appended: list[Entry] = []

    def add(self, entry: Entry) -> None:
        """Append ``entry`` (the newest ``seq``) to the table."""
        self._group(entry.importance).append(entry.key)
        if entry.expires_at is not None:
            floor = self.expiry_floor
            self.expiry_floor = entry.expires_at if floor is None else min(floor, entry.expires_at)
        self.in_order = self.in_order and (self.latest is None or entry.updated_at >= self.latest)
        self.latest = entry.updated_at if self.latest is None else max(self.latest, entry.updated_at)
        self.containers += entry.holds_container
        self.appended.append(entry)

    def remove(self, entries: Iterable[Entry]) -> None:
        """Remove ``entries``, which must all be in the table; the floor and latest stay safe bounds."""
        entries = list(entries)
        gone = {entry.key for entry in entries}
        for importance in {entry.importance for entry in entries}:
            group = self._group(importance)
            leaving = [entry.key for entry in entries if entry.importance == importance]
            if len(leaving) == 1:
                group.remove(leaving[0])
            else:
                group[:] = [key for key in group if key not in gone]
            if not group:
                del self.groups[importance]
                self.own.discard(importance)
        self.containers -= sum(entry.holds_container for entry in entries)
        # An entry added by this same transition is not in the columns yet.
        stored = gone - {entry.key for entry in self.appended}
        self.appended = [entry for entry in self.appended if entry.key not in gone]
        keys = self.columns[0]
        if len(stored) == 1:
            # One removal (an overwrite, an eviction, a forget): find it, then close the gap.
            at = keys.index(next(iter(stored)))
            for column in self.columns:
                del column[at]
        elif stored:
            kept = [i for i, key in enumerate(keys) if key not in stored]
            self.columns = [list(map(column.__getitem__, kept)) for column in self.columns]

    def _group(self, importance: float) -> list[str]:
        """The draft's own list of keys with ``importance``, copied from the shape on first use."""
        if importance not in self.own:
            self.own.add(importance)
            self.groups[importance] = list(self.groups.get(importance, ()))
        return self.groups[importance]

    def freeze(self) -> Shape:
        """The finished shape; the draft must not be used afterwards."""
        for entry in self.appended:
            for column, value in zip(
                self.columns, (entry.key, entry.importance, entry.updated_at, entry.line_units), strict=True
            ):
                column.append(value)
        return Shape(
            groups=self.groups,
            expiry_floor=self.expiry_floor,
            in_order=self.in_order,
            latest=self.latest,
            containers=self.containers,
            columns=Columns(*self.columns),
        )


def _shape_of(state: MemoryState) -> Shape:
    return Shape.of(state.entries.values())


@attrs.frozen
class MemoryState:
    """Everything a memory holds at one moment. Build the first one with ``MemoryState()``.

    ``entries`` is kept in ``seq`` order. ``shape`` summarises it (see
    :class:`Shape`); it is worked out when a state is built by hand and kept
    current by the core's transitions.
    """

    config: Config = attrs.field(factory=Config)
    entries: Mapping[str, Entry] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    cache: Mapping[str, CacheItem] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    working: Working = attrs.field(factory=Working)
    counters: Counters = attrs.field(factory=Counters)
    next_seq: int = 0
    shape: Shape = attrs.field(default=attrs.Factory(_shape_of, takes_self=True), eq=False, repr=False)


@attrs.frozen
class Compaction:
    """What a transition dropped: ``expired`` and ``evicted`` entries, as copies (CMP-2)."""

    expired: tuple[Entry, ...] = ()
    evicted: tuple[Entry, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.expired or self.evicted)

    def __add__(self, other: Compaction) -> Compaction:
        return Compaction(self.expired + other.expired, self.evicted + other.evicted)


@attrs.frozen
class Hit:
    """A recall result: a copy of the entry and its score (REC-2)."""

    entry: Entry
    score: float


@attrs.frozen
class Context:
    """What ``context`` returns (CTX-4, CTX-6).

    ``entries`` are in render order (oldest first); ``tokens`` is the
    tokenizer's count of ``text`` itself; ``omitted`` is how many live
    entries did not fit.
    """

    text: str
    entries: tuple[Entry, ...]
    tokens: int | float
    omitted: int


@attrs.frozen
class LoadResult:
    """What a load did with the stored entries (PER-6, PER-8, PER-14).

    ``loaded`` entries were valid, ``dropped`` were invalid and left out, and
    ``compacted`` of the loaded ones were compacted away at once because the
    store held more than ``limit``. Anything dropped or compacted is
    :attr:`lost` from the store at its next save.
    """

    loaded: int
    dropped: int
    compacted: int = 0

    @property
    def lost(self) -> int:
        """How many stored entries the next save will no longer hold: ``dropped + compacted``."""
        return self.dropped + self.compacted



@attrs.frozen
class Changes:
    """What one change did to the persisted part of a memory, for a store that saves incrementally (MW-4).

    ``upserts`` are the entries written or rewritten, oldest first;
    ``deletes`` the keys removed; ``working`` the new working memory, or None
    when it did not change. ``generation`` is the generation the store holds
    after applying them (MW-1).
    """

    upserts: tuple[Entry, ...] = ()
    deletes: tuple[str, ...] = ()
    working: Working | None = None
    generation: int = 0
