"""Each stored line's count by one ``LineCounter``, kept with the index: a counted fill without a pass over every line (CTX-12).

The counted fill (CTX-12) walks the ranking on per-line counts. Read
literally, it counts every live line on every call: to know the smallest
line (which bounds how many lines a budget holds) and which lines fit the
room left at the end. A ``LineCounter`` remembers each line's count, so the
tokenizer runs once per line, but looking every line up again is still a
pass over the whole memory per context: at 10,000 entries, most of a bot's
turn.

``LineCounts`` keeps, for one counter, every stored entry's default line
count (``key: data``, CTX-3) in count order, the way the index keeps
``line_units`` for the estimator. A change of the entries carries it to the
next index: a removed entry leaves it, an added one waits in ``pending``
and is counted, with the others waiting, when a fill next asks. Many
changes between two fills (more than ``PENDING_MOST``) drop it; the next
fill counts afresh. A count that is not a whole number >= 0 is kept aside
(``odd``); while one is stored, the fill takes its pass over every line, as
CTX-8 needs to know whether every live count is whole.

The counts are the counter's own (deterministic, as any tokenizer for a
budget must be), so they change no result, only the time it takes;
``LineCounter.clear`` (a tokenizer that changed how it counts) starts a new
generation, and counts of an older one are never used.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeGuard

from .persistent import HashTable, SortedRun
from .tokens import LineCounter
from .values import Entry

__all__ = ["KEPT", "PENDING_MOST", "LineCounts", "LiveCounts"]

#: How many counters' counts one index keeps (a memory's own, and one a call passes); the oldest goes first.
KEPT = 2

#: Past this many entries added or removed before a fill asks again, the counts are dropped and worked out afresh.
PENDING_MOST = 64

_seq = operator.attrgetter("seq")
_line = operator.attrgetter("line")


def _whole(count: object) -> TypeGuard[int]:
    """A count the running total can add exactly: an int >= 0, not a bool (CTX-8)."""
    return type(count) is int and count >= 0


class LineCounts:
    """Every stored entry's default line count by one ``LineCounter``, in count order; made by ``of`` and ``changed``."""

    __slots__ = ("by_count", "by_seq", "counter", "generation", "odd", "pending")

    #: The counter the counts are its, and its generation when they were made.
    counter: LineCounter
    generation: int
    #: ``(count, seq, entry)`` of every counted entry whose count is whole, by count.
    by_count: SortedRun[tuple[int, int, Entry]]
    #: Every counted entry's count, by ``seq``.
    by_seq: HashTable[int, Any]
    #: How many counted entries have a count that is not whole (then the counts are not used).
    odd: int
    #: The entries added since and not counted yet, in the order they were added.
    pending: tuple[Entry, ...]

    @classmethod
    def of(cls, counter: LineCounter, entries: Sequence[Entry]) -> LineCounts:
        """The counts of ``entries``' default lines: the ones the counter has not seen are counted now."""
        counts = counter.measure_many(list(map(_line, entries)))
        whole = [(count, entry.seq, entry) for count, entry in zip(counts, entries, strict=True) if _whole(count)]
        return cls._made(
            counter,
            counter.generation,
            HashTable.of_dict(dict(zip(map(_seq, entries), counts, strict=True))),
            SortedRun.of_sorted(sorted(whole, key=operator.itemgetter(0, 1))),
            len(entries) - len(whole),
            (),
        )

    @classmethod
    def _made(
        cls,
        counter: LineCounter,
        generation: int,
        by_seq: HashTable[int, Any],
        by_count: SortedRun[tuple[int, int, Entry]],
        odd: int,
        pending: tuple[Entry, ...],
    ) -> LineCounts:
        """The counts from their parts (the one place that sets every field)."""
        made = object.__new__(cls)
        made.counter, made.generation, made.by_seq, made.by_count = counter, generation, by_seq, by_count
        made.odd, made.pending = odd, pending
        return made

    def usable(self, counter: LineCounter) -> bool:
        """Whether these are ``counter``'s counts as it counts now (the same object, no ``clear`` since)."""
        return self.counter is counter and self.generation == counter.generation

    def counted(self) -> LineCounts:
        """These counts with the pending entries counted too (the counter counts only the lines it has not seen)."""
        if not self.pending:
            return self
        entries = self.pending
        counts = self.counter.measure_many(list(map(_line, entries)))
        whole = [(count, entry.seq, entry) for count, entry in zip(counts, entries, strict=True) if _whole(count)]
        return self._made(
            self.counter,
            self.generation,
            self.by_seq.changed((), zip(map(_seq, entries), counts, strict=True)),
            self.by_count.changed((), whole),
            self.odd + len(entries) - len(whole),
            (),
        )

    def changed(self, removed: Sequence[Entry], added: Sequence[Entry]) -> LineCounts | None:
        """The counts after a change of the stored entries, or None when too many changes wait to be counted."""
        if len(self.pending) + len(removed) + len(added) > PENDING_MOST:
            return None
        waiting = {entry.seq for entry in self.pending}
        gone = [entry for entry in removed if entry.seq not in waiting]
        left = {entry.seq for entry in removed} & waiting
        counts = [self.by_seq[entry.seq] for entry in gone]
        whole = [(count, entry.seq, entry) for count, entry in zip(counts, gone, strict=True) if _whole(count)]
        return self._made(
            self.counter,
            self.generation,
            self.by_seq.changed(map(_seq, gone)) if gone else self.by_seq,
            self.by_count.changed(whole) if whole else self.by_count,
            self.odd - (len(gone) - len(whole)),
            tuple(entry for entry in self.pending if entry.seq not in left) + tuple(added),
        )

    def least(self) -> int:
        """No counted line counts fewer tokens than this; 0 when none is counted. Expired entries count too: a bound."""
        first = self.by_count.first()
        return 0 if first is None else first[0]

    def sizes(self, entries: Iterable[Entry]) -> list[int]:
        """The counts of ``entries``' lines, each a counted, whole one."""
        return list(map(self.by_seq.__getitem__, map(_seq, entries)))

    def within(self, count: int) -> list[tuple[int, int, Entry]]:
        """The counted entries, expired ones too, whose lines count at most ``count`` tokens, fewest first."""
        return self.by_count.below((count + 1,))

    def count_within(self, count: int) -> int:
        """How many counted entries, expired ones too, have lines of at most ``count`` tokens."""
        return self.by_count.count_below((count + 1,))


class LiveCounts:
    """``LineCounts`` read at one moment: what the counted fill asks of them, the expired entries left out (EXP-3)."""

    __slots__ = ("_counts", "_live")

    def __init__(self, counts: LineCounts, live: Callable[[list[tuple[int, int, Entry]]], Iterator[Entry]]) -> None:
        self._counts, self._live = counts, live

    def least(self) -> int:
        """No live line counts fewer tokens than this (a bound: expired lines count too)."""
        return self._counts.least()

    def sizes(self, entries: Iterable[Entry]) -> list[int]:
        """The counts of the live ``entries``' lines."""
        return self._counts.sizes(entries)

    def within(self, count: int) -> list[Entry]:
        """The live entries whose lines count at most ``count`` tokens, fewest first."""
        return list(self._live(self._counts.within(count)))

    def count_within(self, count: int) -> int:
        """How many entries' lines count at most ``count`` tokens, expired ones too: a bound of the live ones."""
        return self._counts.count_within(count)
