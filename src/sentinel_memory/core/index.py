"""The index: what every transition keeps current so that no read has to scan.

The rules (``sentinel_memory.core``) are stated over "every live entry":
evict the lowest retention, drop what has expired, rank everything for a
context, score every match for recall. Read literally, each of those scans
the whole table. The index keeps the entries in the three orders those rules
ask about, so each of them reads only the few entries that can matter:

* ``by_importance``: ascending ``(importance, updated_at, seq)``. Retention
  is the importance plus at most 0.1 of freshness, so the entry to evict is
  among the lowest importances, and the start of a context ranking among the
  highest. Within one importance, older means less fresh, so the first entry
  of each importance is that importance's weakest (CMP-1) and walking
  downwards gives each importance newest first (REC-3).
* ``by_age``: ascending ``(updated_at, seq)``, the order a context renders
  in and ``get_recent`` counts back from (ENT-6).
* ``by_expiry``: ascending ``(expires_at, seq)`` of the entries with a ttl.
  The expired ones are always a prefix (EXP-2), so finding them costs
  ``O(k + log n)`` and dropping them from every order about
  ``O(k log n)``; once k is more than the number of chunks, one pass over
  each order by ``seq`` is cheaper and is taken instead. None of it depends
  on how many distinct importances there are.

Chat turns and facts are also kept apart (``Index.split``, MSG-1), once a
read has asked for them: the turns by ``(N, updated_at, seq)``, the user
turns among them, and the facts as a ``Table`` with an ``Index`` of their
own. ``get_messages`` walks the turns newest first only as far as its
budget reaches and builds the facts' context on their own index, so it
neither sorts the turns nor indexes the facts per call; every change moves
only the entries it touches from one side to the other.

Each order is a ``SortedRun`` of tuples
that end in ``seq`` (unique) and the entry. A transition asks for a new index
with ``Index.changed``; the old one stays valid, sharing all but a few
chunks.

Four facts are worked out only when a read first needs them, then kept up
to date by the transitions that follow: the recall words the stored entries
hold (``Index.held_words``, which bounds what a query can match), a lower
bound of the line measures (``Index.least_units``, which bounds how many
lines a budget can hold), for every word the entries that hold it
(``Index.holders``, so that a query in a small store looks only at those),
and the entries by line measure (``Index.lines_within``, so that the little
room a fill leaves is offered only the lines that fit it). The first two
are bounds, so a removal leaves them as they are and costs nothing; the
word set is worked out afresh once as many entries have left it as remain.
The other two are exact: a change moves only the entries it touches, and a
mass change (an expiry overnight) forgets them until the next read.
Working them out for a freshly loaded memory of 100,000 entries would
double the load, and many memories never recall. The cache changes no
result, only the time it takes.

A memory that is loaded, asked once and dropped (a stateless server, or a
process that has just seen another process's save) should not pay for
facts that only later queries use. So the line bound is first read from
the lengths of the key and data strings, without rendering a line, and the
first few queries search the entries' text for their own words
(``lexical.holding``) instead of working out the holders of every word;
the words so found are kept current like the rest. Only a memory that goes
on being asked works out every word's holders, once.

Every method returns exactly what the reference formulas of
``sentinel_memory.core.retention`` and ``sentinel_memory.core.lexical`` would, and
the property tests hold them to it.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .bm25 import Postings
from .lexical import holding
from .linecounts import KEPT, LineCounts, LiveCounts
from .persistent import HashTable, SortedRun
from .retention import FRESHNESS_WEIGHT, keep_order, retentions, scored_ranking
from .table import Table
from .tokens import LineCounter
from .turns import chat_message, is_turn
from .unitmemo import UnitMemo, carried
from .values import Entry, by_age

__all__ = ["Index", "Split"]

#: A probe above every ``(updated_at, seq, ...)`` that follows a given first field.
_AFTER = (math.inf,)
_entry = operator.itemgetter(-1)
_id = operator.itemgetter(-2)
_first, _second = operator.itemgetter(0), operator.itemgetter(1)
#: ``(updated_at, seq, entry)`` of a ``by_importance`` item.
_age_order = operator.itemgetter(1, 2, 3)
_words = operator.attrgetter("words")
_seq = operator.attrgetter("seq")
_importance = operator.attrgetter("importance")
_updated = operator.attrgetter("updated_at")
_units = operator.attrgetter("line_units")
_key = operator.attrgetter("key")
_data = operator.attrgetter("data")

#: Up to this many candidates per entry asked for, the start of a ranking ranks every candidate.
_RANK_ALL_UP_TO = 4
#: The most items the search for one victim scores at once; it reads 1, 2, 4, ... up to this.
_LOOK_AHEAD = 64
#: A change of more entries than this (or an eighth of the store) forgets the holders worked out.
_MASS_CHANGE = 64
#: A word no stored entry holds.
_NOBODY: HashTable[int, Entry] = HashTable()
#: No word's holders searched for yet.
_NO_WORDS: HashTable[str, HashTable[int, Entry]] = HashTable()
#: How many times a line of indexes searches the entries' text for query words
#: (see ``Index.holders``) before it works out the holders of every word instead.
_SEARCHES = 4


def _importance_item(entry: Entry) -> tuple[float, int | float, int, Entry]:
    return (entry.importance, entry.updated_at, entry.seq, entry)


def _age_item(entry: Entry) -> tuple[int | float, int, Entry]:
    return (entry.updated_at, entry.seq, entry)


def _importance_items(entries: list[Entry]) -> list[tuple[float, int | float, int, Entry]]:
    """``_importance_item`` of each entry, the tuples made in C."""
    return list(zip(map(_importance, entries), map(_updated, entries), map(_seq, entries), entries, strict=True))


def _age_items(entries: list[Entry]) -> list[tuple[int | float, int, Entry]]:
    """``_age_item`` of each entry, the tuples made in C."""
    return list(zip(map(_updated, entries), map(_seq, entries), entries, strict=True))


def _units_items(entries: Iterable[Entry]) -> list[tuple[int, int, Entry]]:
    """``(line_units, seq, entry)`` of each entry: the order ``Index.lines_within`` reads."""
    return [(e.line_units, e.seq, e) for e in entries]


def _expiry_items(entries: Iterable[Entry]) -> list[tuple[int | float, int, Entry]]:
    return [(e.expires_at, e.seq, e) for e in entries if e.expires_at is not None]


def _keys_and_texts(entries: list[Entry]) -> tuple[list[str], list[str]]:
    """The key and the text (TXT-1) of each entry; a str is its own text, so most entries are not asked to work it out."""
    keys = list(map(_key, entries))
    texts = [
        data if type(data) is str else entry.text for entry, data in zip(entries, map(_data, entries), strict=True)
    ]
    return keys, texts


class Index:
    """The orders and counts of one state's entries. Build one with ``of``, change it with ``changed``."""

    __slots__ = (
        "_bm25",
        "_by_units",
        "_counts_asked",
        "_expired_kept",
        "_held_words",
        "_holders",
        "_least_units",
        "_line_counts",
        "_live_view",
        "_searches",
        "_skipped",
        "_some_holders",
        "_split",
        "_words_left",
        "by_age",
        "by_expiry",
        "by_importance",
        "containers",
        "in_order",
    )

    by_importance: SortedRun[tuple[float, int | float, int, Entry]]
    by_age: SortedRun[tuple[int | float, int, Entry]]
    by_expiry: SortedRun[tuple[int | float, int, Entry]]
    #: How many stored entries hold a dict or a list, the only data copied on the way out (ENT-3).
    containers: int
    #: ``seq`` order is also age order (true unless a clock went back); False only means "sort by age to be sure".
    in_order: bool
    _held_words: HashTable[str, bool] | None
    _words_left: int
    _holders: HashTable[str, HashTable[int, Entry]] | None
    _some_holders: HashTable[str, HashTable[int, Entry]]
    _searches: int
    _least_units: int | None
    _by_units: SortedRun[tuple[int, int, Entry]] | None
    #: Each stored line's count by the counters a counted fill used last (CTX-12), newest first.
    _line_counts: tuple[LineCounts, ...]
    #: Whether a counted fill asked this line of indexes for line counts yet (see ``line_counts``).
    _counts_asked: bool
    #: ``(count, their seqs)`` of the entries expired at the last moment asked about.
    _expired_kept: tuple[int, frozenset[int]] | None
    #: ``(count of expired, by_importance without them)``, once made.
    _live_view: tuple[int, SortedRun[tuple[float, int | float, int, Entry]]] | None
    #: How many items the walks that skipped expired entries have passed, towards making ``_live_view``.
    _skipped: int
    #: The turns and the facts kept apart (MSG-1), once a read has asked: see ``split``.
    _split: Split | None
    #: The BM25 postings (BM-7), once a search has asked: see ``postings``.
    _bm25: Postings | None

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Index:
        """The index of ``entries`` (in ``seq`` order), worked out from scratch."""
        entries = list(entries)
        index = object.__new__(cls)
        # In seq order already, so in age order exactly when no updated_at goes back.
        updated = list(map(_updated, entries))
        index.in_order = all(map(operator.le, updated, itertools.islice(updated, 1, None)))
        by_age_ = entries if index.in_order else sorted(entries, key=by_age)
        # A stable sort by importance of the age order is (importance, updated_at, seq) order:
        # a sort on one number instead of on triples.
        by_importance_ = sorted(by_age_, key=_importance)
        # Made in their sorted order, so that walking them walks memory in order too.
        index.by_importance = SortedRun.of_sorted(_importance_items(by_importance_))
        index.by_age = SortedRun.of_sorted(_age_items(by_age_))
        index.by_expiry = SortedRun(_expiry_items(entries))
        index.containers = sum(isinstance(e.data, (dict, list)) for e in entries)
        index._held_words, index._words_left = None, 0
        index._holders = None
        index._some_holders, index._searches = _NO_WORDS, 0
        index._least_units = None
        index._by_units = None
        index._line_counts, index._counts_asked = (), False
        index._expired_kept, index._live_view, index._skipped = None, None, 0
        index._split = None
        index._bm25 = None
        return index

    def changed(
        self, removed: Sequence[Entry] = (), added: Sequence[Entry] = (), *, expired_at: int | float | None = None
    ) -> Index:
        """A new index without ``removed`` (each indexed) and with ``added``.

        ``expired_at`` says that ``removed`` are exactly the entries expired
        at that moment, which then leave ``by_expiry`` as a prefix.
        """
        index = object.__new__(Index)
        gone = set(map(_seq, removed))  # lets a run drop many at once without their items
        index.by_importance = self.by_importance.changed(
            map(_importance_item, removed), map(_importance_item, added), removed_ids=gone
        )
        index.by_age = self.by_age.changed(map(_age_item, removed), map(_age_item, added), removed_ids=gone)
        if expired_at is not None:
            index.by_expiry = self.by_expiry.without_below((expired_at,) + _AFTER).changed((), _expiry_items(added))
        else:
            index.by_expiry = self.by_expiry.changed(_expiry_items(removed), _expiry_items(added))
        leaving = sum(e.holds_container for e in removed) if self.containers else 0
        index.containers = self.containers - leaving + sum(e.holds_container for e in added)
        # An added entry has the newest seq, so the order holds when it is also the newest by age.
        # Several at once is not a case transitions have: say "sort to be sure".
        newest = index.by_age.last()
        index.in_order = self.in_order and (
            not added or (len(added) == 1 and newest is not None and newest[-1] is added[0])
        )
        index._held_words, index._words_left = None, 0
        if self._held_words is not None:
            left = self._words_left + len(removed)
            # Removing costs nothing: the set may keep words no entry holds any
            # more, until as many entries have left as remain; then it is
            # worked out afresh on its next use. So each removal pays O(1).
            if left <= len(index.by_age):
                held = self._held_words
                new = {word for entry in added for word in entry.words if word not in held}
                index._held_words = held.changed((), dict.fromkeys(new, True).items()) if new else held
                index._words_left = left
        index._holders = self._holders_after(self._holders, removed, added, len(index.by_age))
        some = self._holders_after(self._some_holders, removed, added, len(index.by_age), every_word=False)
        index._some_holders, index._searches = _NO_WORDS if some is None else some, self._searches
        least = self._least_units
        index._least_units = None if least is None else min(itertools.chain((least,), map(_units, added)))
        by_units, size = self._by_units, len(index.by_age)
        if by_units is None or len(removed) + len(added) > max(_MASS_CHANGE, size // 8):
            index._by_units = None  # worked out again on its next use
        else:
            index._by_units = by_units.changed(_units_items(removed), _units_items(added), removed_ids=gone)
        carried = (counts.changed(removed, added) for counts in self._line_counts)
        index._line_counts = tuple(counts for counts in carried if counts is not None)
        index._counts_asked = self._counts_asked
        # The new index's own, worked out when asked.
        index._expired_kept, index._live_view, index._skipped = None, None, 0
        index._split = None if self._split is None else self._split.changed(removed, added, expired_at)
        index._bm25 = None if self._bm25 is None else self._bm25.changed(removed, added, len(index.by_age))
        return index

    def postings(self) -> Postings:
        """The BM25 postings of the stored entries (BM-7): worked out on first use, then kept current by ``changed``."""
        if self._bm25 is None:
            self._bm25 = Postings.of(map(_entry, self.by_age))
        return self._bm25

    def neighbours(self, entry: Entry, now: int | float) -> list[Entry]:
        """The live entries just before and just after ``entry`` in age order, those that exist (BM-8, ENT-6)."""
        expired = self.expired_seqs(now) or frozenset()
        found = []
        for item in self.by_age.descending_below((entry.updated_at, entry.seq)):
            if item[-2] not in expired:
                found.append(item[-1])
                break
        probe: tuple[Any, ...] = (entry.updated_at, entry.seq + 1)
        after = self.by_age.ceiling(probe)
        while after is not None:
            if after[-2] not in expired:
                found.append(after[-1])
                break
            after = self.by_age.ceiling((after[0], after[1] + 1))
        return found

    def neighbours_of(self, entries: Iterable[Entry], now: int | float) -> dict[int, list[Entry]]:
        """``neighbours`` of each of the live ``entries``, by ``seq``: one pass over the run, then a bisection each.

        The run's items are laid out in one list (at C speed); each entry's
        place in it is found by bisecting on ``(updated_at, seq)``, and the
        nearest live items on either side are its neighbours.
        """
        expired = self.expired_seqs(now) or frozenset()
        items = list(self.by_age)
        found: dict[int, list[Entry]] = {}
        for entry in entries:
            at = bisect.bisect_left(items, (entry.updated_at, entry.seq))
            near = []
            before = at - 1
            while before >= 0 and items[before][-2] in expired:
                before -= 1
            if before >= 0:
                near.append(items[before][-1])
            after = at + 1
            while after < len(items) and items[after][-2] in expired:
                after += 1
            if after < len(items):
                near.append(items[after][-1])
            found[entry.seq] = near
        return found

    def split(self) -> Split:
        """The turns and the facts kept apart (MSG-1): worked out on first use, then kept current by ``changed``.

        ``get_messages`` walks the turns newest first and builds the facts'
        context, and a context of one kind (CTX-11) reads one of them, so
        none of them sorts the turns or builds an index of the facts per call.
        """
        if self._split is None:
            self._split = Split.of(map(_entry, self.by_age))
        return self._split

    @staticmethod
    def _holders_after(
        known: HashTable[str, HashTable[int, Entry]] | None,
        removed: Sequence[Entry],
        added: Sequence[Entry],
        size: int,
        *,
        every_word: bool = True,
    ) -> HashTable[str, HashTable[int, Entry]] | None:
        """``known`` holders after a change: only the words the change touches move.

        With ``every_word``, ``known`` has every word some entry holds, and
        a word nobody holds any more leaves it; otherwise it has the words
        searched for so far, and keeps each (nobody holding it is worth
        knowing too) but learns no other. A mass removal (an expiry
        overnight) would touch most of them; then they are forgotten, and
        worked out again on their next use.
        """
        if known is None or len(removed) + len(added) > max(_MASS_CHANGE, size // 8):
            return None
        if not every_word and not known:
            return known  # nothing searched for: no entry's words are needed
        leaving: dict[str, list[int]] = {}
        joining: dict[str, list[tuple[int, Entry]]] = {}
        for entry in removed:
            for word in entry.words:
                leaving.setdefault(word, []).append(entry.seq)
        for entry in added:
            for word in entry.words:
                joining.setdefault(word, []).append((entry.seq, entry))
        touched = leaving.keys() | joining.keys()
        if not every_word:
            touched = set(known.having(touched))
            if not touched:
                return known
        moved = [
            (word, known.get(word, _NOBODY).changed(leaving.get(word, ()), joining.get(word, ()))) for word in touched
        ]
        if not every_word:
            return known.changed((), moved)
        return known.changed([word for word, holders in moved if not holders], [pair for pair in moved if pair[1]])

    # -- facts worked out on first use -------------------------------------

    def held_words(self) -> HashTable[str, bool]:
        """Every recall word a stored entry holds (REC-1), and possibly words that left with removed entries.

        A superset is all recall needs: a query word outside it cannot match.
        """
        if self._held_words is None:
            self._held_words = HashTable(
                dict.fromkeys(itertools.chain.from_iterable(map(_words, map(_entry, self.by_age))), True)
            )
            self._words_left = 0
        return self._held_words

    def may_hold(self, wanted: Iterable[str]) -> frozenset[str]:
        """The ``wanted`` words some stored entry may hold (REC-1): no stored entry holds any of the others.

        Exact when the holders are known, searched for (see ``holders``) or
        all worked out; otherwise read from ``held_words``, a superset.
        """
        wanted = set(wanted)
        if self._holders is not None:
            return frozenset(self._holders.having(wanted))
        if self._searches < _SEARCHES or not wanted - set(self._some_holders.having(wanted)):
            return frozenset(word for word, holders in self._searched(wanted).items() if holders)
        held = self.held_words()
        return frozenset(held.having(wanted))

    def holders(self, word: str) -> HashTable[int, Entry]:
        """The stored entries whose recall words include ``word``, expired ones too, by ``seq`` (REC-1).

        A query after a load asks for a few words, and splitting every
        entry's text into words would cost many times what it then reads.
        So the first few times (``_SEARCHES``, counted along the line of
        indexes that transitions make from one another) the words asked
        for are searched for in the entries' text
        ([`holding`][sentinel_memory.core.lexical.holding]); after that, the
        holders of every word are worked out together, by one pass over the
        entries. Either way, the transitions that follow keep what was
        worked out up to date.
        """
        if self._holders is None:
            known = self._some_holders.get(word)
            if known is not None:
                return known  # type: ignore[no-any-return]  # get is typed loosely
            if self._searches < _SEARCHES:
                return self._searched({word})[word]
            by_word: dict[str, dict[int, Entry]] = {}
            for entry in map(_entry, self.by_age):
                seq = entry.seq
                for held in entry.words:
                    holding = by_word.get(held)
                    if holding is None:
                        by_word[held] = {seq: entry}
                    else:
                        holding[seq] = entry
            self._holders = HashTable((held, HashTable.of_dict(holding)) for held, holding in by_word.items())
            self._some_holders = _NO_WORDS
        return self._holders.get(word, _NOBODY)  # type: ignore[no-any-return]  # get is typed loosely

    def searched_holders(self, wanted: Iterable[str]) -> dict[str, HashTable[int, Entry]] | None:
        """The holders of each ``wanted`` word while they are searched for (see ``holders``), else None.

        Then the entries' own words are probably not worked out yet (after
        a load, none are), and asking the holders costs less than working
        them out.
        """
        if self._holders is not None or self._searches >= _SEARCHES:
            return None
        return self._searched(set(wanted))

    def _searched(self, wanted: set[str]) -> dict[str, HashTable[int, Entry]]:
        """The holders of each ``wanted`` word, those not searched for yet found by one search of the text."""
        some = self._some_holders
        known = {word: some[word] for word in some.having(wanted)}
        missing = wanted - known.keys()
        if missing:
            entries = list(map(_entry, self.by_age))
            keys, texts = _keys_and_texts(entries)
            found = holding(entries, list(map(" ".join, zip(keys, texts, strict=True))), missing)
            fresh = [(word, HashTable.of_dict(holders)) for word, holders in found.items()]
            self._some_holders = self._some_holders.changed((), fresh)
            self._searches += 1
            known.update(fresh)
        return known

    def lines_within(self, units: int, now: int | float) -> list[Entry]:
        """The live entries whose default line measures at most ``units`` UTF-16 units (CTX-8), shortest first.

        What the fill asks when the budget has a little room left: usually
        a few of the shortest lines, not every entry.
        """
        return list(self._live(self._units_run().below((units + 1,)), now))

    def units_count_within(self, units: int) -> int:
        """How many stored entries, expired ones too, have a default line of at most ``units`` UTF-16 units (CTX-8).

        An upper bound of the live ones, for the fill to weigh what a walk
        would cost; built as ``lines_within`` builds its order.
        """
        return self._units_run().count_below((units + 1,))

    def _units_run(self) -> SortedRun[tuple[int, int, Entry]]:
        """Every stored entry by its default line's length in UTF-16 units (CTX-8), built on first use and carried after."""
        if self._by_units is None:
            self._by_units = SortedRun.of_sorted(sorted(_units_items(list(map(_entry, self.by_age)))))
        return self._by_units

    def line_counts(self, counter: LineCounter, now: int | float) -> LiveCounts | None:
        """Each stored entry's default line count by ``counter``, read at ``now`` (CTX-12; see ``linecounts``).

        None when a stored line's count is not a whole number >= 0 or could
        not be made (the fill's pass then counts the live lines only), and the
        first time a line of indexes is asked: a memory asked once (a
        stateless server, a context of one kind made for one call) should
        not pay for sorting every count, a pass costs less. From the second
        ask on, every stored line is counted and sorted once; each change
        carries the counts, and the entries added since are counted when
        next asked.
        """
        kept = self._line_counts
        found = next((counts for counts in kept if counts.usable(counter)), None)
        if found is None and not self._counts_asked:
            self._counts_asked = True
            return None
        try:
            counts = LineCounts.of(counter, self.all_by_age()) if found is None else found.counted()
        except Exception:
            # An expired line's count may fail: the pass counts the live lines only, and raises
            # what counting them raises, as the fill always did.
            return None
        self._line_counts = (counts, *(other for other in kept if other is not found))[:KEPT]
        return None if counts.odd else LiveCounts(counts, lambda items: self._live(items, now))

    def least_units(self) -> int:
        """No stored entry's default line measures fewer UTF-16 units than this (CTX-8); 0 when empty.

        A bound, not the minimum: removing the shortest line leaves it as it was.
        Worked out on first use without measuring every line (after a load,
        no line has been): a str's length in code points is at most its
        UTF-16 length, and the same for BMP text, so each line is bounded by
        ``len(key) + 2 + len(text)``.
        """
        if self._least_units is None:
            keys, texts = _keys_and_texts(list(map(_entry, self.by_age)))
            lengths = map(operator.add, map(len, keys), map(len, texts))
            self._least_units = min(lengths) + 2 if keys else 0
        return self._least_units

    # -- expiry -------------------------------------------------------------

    def none_expired(self, now: int | float) -> bool:
        """True when no stored entry has expired at ``now`` (EXP-2)."""
        first = self.by_expiry.first()
        return first is None or now < first[0]

    def expired(self, now: int | float) -> list[Entry]:
        """The stored entries expired at ``now``, soonest deadline first (EXP-2)."""
        return list(map(_entry, self.by_expiry.below((now,) + _AFTER)))

    def expired_count(self, now: int | float) -> int:
        """How many stored entries have expired at ``now``."""
        return self.by_expiry.count_below((now,) + _AFTER)

    def expired_seqs(self, now: int | float) -> frozenset[int] | None:
        """The ``seq`` of every stored entry expired at ``now``; None when there is none (EXP-2).

        The expired at ``now`` are a prefix of ``by_expiry``, so its length
        tells two moments apart: an equal count is the same entries. The
        last answer is kept for the next read at such a moment.
        """
        bound = (now,) + _AFTER
        count = self.by_expiry.count_below(bound)
        if not count:
            return None
        kept = self._expired_kept
        if kept is None or kept[0] != count:
            kept = self._expired_kept = (count, frozenset(map(_id, self.by_expiry.below(bound))))
        return kept[1]

    def _live_by_importance(
        self, now: int | float, *, may_make: bool = False
    ) -> tuple[SortedRun[tuple[float, int | float, int, Entry]], frozenset[int] | None]:
        """A run of the live entries by importance to walk, and the ``seq`` a walk of it must still skip (EXP-3).

        Skipping an expired entry costs a walk a Python step per item it
        passes. Making ``by_importance`` without the expired instead reads
        all of it when many have expired (a memory just loaded), which a
        stateless server, reading once, would pay for nothing. So the walks
        skip them, and those of ``ranking_start`` (one per context) count
        the items they pass; once that count reaches the size of the run, a
        walk that ``may_make`` the live run makes it, as a renter buys once
        the rent paid has reached the price. Every walk at a moment with as
        many expired then reads it as it is, and a moment with more expired
        takes only the newly expired out of it. Readers on several threads
        may each make it; they make the same, and the last one is kept.
        """
        expired = self.expired_seqs(now)
        if not expired:
            return self.by_importance, None
        count, view = len(expired), self._live_view
        if view is not None and view[0] == count:
            return view[1], None
        if not may_make or self._skipped < len(self.by_importance):
            return self.by_importance, expired
        if view is not None and view[0] < count:
            since, run = self.by_expiry.below((now,) + _AFTER)[view[0] :], view[1]
        else:
            since, run = self.by_expiry.below((now,) + _AFTER), self.by_importance
        run = run.changed(map(_importance_item, map(_entry, since)), removed_ids=set(map(_id, since)))
        self._live_view = (count, run)
        return run, None

    def _live(self, items: Iterable[tuple[Any, ...]], now: int | float) -> Iterator[Entry]:
        """The entries of index ``items``, without the expired ones (told apart by ``seq``), lazily."""
        expired = self.expired_seqs(now)
        if not expired:
            return map(_entry, items)
        if isinstance(items, (list, SortedRun)):  # walked twice, to tell them apart at C speed
            return itertools.compress(
                map(_entry, items), map(operator.not_, map(expired.__contains__, map(_id, items)))
            )
        return (item[-1] for item in items if item[-2] not in expired)

    # -- reads ---------------------------------------------------------------

    def all_by_age(self) -> list[Entry]:
        """Every stored entry, expired ones too, oldest first (ENT-6, PER-1)."""
        return list(map(_entry, self.by_age))

    def live_by_age(self, now: int | float) -> list[Entry]:
        """The live entries, oldest first (EXP-3, ENT-6)."""
        return list(self._live(self.by_age, now))

    def newest_first(self, now: int | float) -> Iterator[Entry]:
        """The live entries, newest first (ENT-10)."""
        return self._live(reversed(self.by_age), now)

    def by_importance_desc(self, now: int | float, below: float | None = None) -> Iterator[Entry]:
        """The live entries by importance, highest first, each importance newest first (REC-3).

        With ``below``, only those of lower importance than that.
        """
        run, skip = self._live_by_importance(now)
        items = reversed(run) if below is None else run.descending_below((below, -math.inf))
        return map(_entry, items) if skip is None else self._live(items, now)  # the run still holds the expired

    def lowest_retention(self, count: int, now: int | float, window: int | float) -> list[Entry]:
        """The ``count`` entries to evict, lowest retention first, ties older first (CMP-1).

        The index must hold no expired entry (a compaction drops those first).
        Retention is at least the importance, so once the importances passed
        exceed the ``count``-th lowest retention found, nothing further can
        enter. For one victim, the lowest importances are scored a few at a
        time, and past the last importance each few reach, the walk jumps over
        that importance's later (fresher, so stronger) entries.
        """
        if count <= 0:
            return []
        run = self.by_importance
        if count == 1:
            # A few items at a time, more each step (a classifier's scores
            # can put hundreds of fresh entries below the victim's retention).
            best: tuple[Any, ...] | None = None  # (retention, updated_at, seq, entry)
            items, most = run.next_few((-math.inf,), 1), 1
            while items and (best is None or items[0][0] <= best[0]):
                scores = retentions(map(_first, items), map(_second, items), now, window)
                low = min(scores)
                if best is None or low <= best[0]:
                    # Equal retentions: the older goes first, by (updated_at, seq).
                    lowest = itertools.compress(items, map(operator.eq, scores, itertools.repeat(low)))
                    found = (low, *min(map(_age_order, lowest)))
                    if best is None or found < best:
                        best = found
                most = min(2 * most, _LOOK_AHEAD)
                items = run.next_few((items[-1][0],) + _AFTER, most)
            return [] if best is None else [_entry(best)]
        # A max-heap of the ``count`` lowest so far, by negated keep_order; seq is unique.
        held: list[tuple[Any, ...]] = []
        for item in run:
            if len(held) == count and item[0] > -held[0][0]:
                break
            retention_, updated_at, seq = keep_order(item[-1], now, window)
            negated = (-retention_, -updated_at, -seq, item[-1])
            if len(held) < count:
                heapq.heappush(held, negated)
            elif negated > held[0]:
                heapq.heapreplace(held, negated)
        return [negated[-1] for negated in sorted(held, reverse=True)]

    def ranking_start(self, at_least: int, now: int | float, window: int | float) -> list[Entry] | None:
        """The start of the retention ranking (CTX-1): its first ``at_least`` or more live entries.

        None when the start would be every live entry; then rank them all.

        Retention lies between the importance and the importance plus the
        full freshness weight. Let ``level`` be the importance of the
        ``at_least``-th live entry from the top: at least ``at_least``
        entries score ``>= level``, so the ranking starts with exactly the
        entries that do, and only an entry whose importance plus the full
        weight reaches ``level`` can be one of them. Those are a top range of
        ``by_importance``; only they are scored, and of them only the first
        ``at_least`` by the ranking are returned (with many equal
        importances, thousands can reach ``level``).
        """
        full = FRESHNESS_WEIGHT * 1.0
        if at_least <= 0:
            return []
        run, skip = self._live_by_importance(now, may_make=True)
        if skip is None:
            if at_least >= len(run):
                return None
            level = run.at(len(run) - at_least)[0]
            # Everything from twice the weight below is a superset; bisect for the exact range.
            near = run.from_((level - 2 * full,))
            start = bisect.bisect_left(near, True, key=lambda item: item[0] + full >= level)
            if start == 0 and len(near) == len(run):
                return None
            near = near[start:]
        else:
            # One walk down the live items: the first at_least set the level,
            # and the walk goes on while an item can still reach it.
            walk = (item for item in reversed(run) if item[-2] not in skip)
            near = list(itertools.islice(walk, at_least))
            if len(near) < at_least:
                self._skipped += len(run)  # walked through
                return None
            level = near[-1][0]
            near += itertools.takewhile(lambda item: item[0] + full >= level, walk)
            self._skipped += len(run) - run.count_below(near[-1])  # the items from the top down to the last read
            if len(near) == len(run) - len(skip):  # every live entry
                return None
        age = _seq if self.in_order else by_age
        if len(near) <= _RANK_ALL_UP_TO * at_least:
            # In age order, the ranking's tie-break (newer first) is a stable sort's.
            # The items carry importance and updated_at: read there, not from the entries.
            near.sort(key=_id if self.in_order else _age_order)
            order, scores = scored_ranking(list(map(_first, near)), list(map(_second, near)), now, window)
            # Best first, so the scores >= level are a prefix.
            cut = bisect.bisect_left(order, True, key=lambda i: scores[i] < level)
            return list(map(_entry, map(near.__getitem__, order[:cut])))
        candidates = list(map(_entry, near))
        # Many candidates (many equal importances): score them all, keep the first at_least.
        scores = retentions(map(_first, near), map(_second, near), now, window)
        # Every entry that can score >= level is a candidate, so the at_least-th best
        # score here is the at_least-th best of all. Above it, everything is in; at
        # it, the newest, as many as are still wanted (ties go to the newer entry).
        threshold = sorted(scores)[-at_least]
        positions = range(len(candidates))
        above = list(itertools.compress(positions, map(operator.gt, scores, itertools.repeat(threshold))))
        tied = itertools.compress(candidates, map(operator.eq, scores, itertools.repeat(threshold)))
        newest_tied = sorted(tied, key=age)[len(above) - at_least :]  # fewer than at_least are above it
        chosen = [candidates[i] for i in above] + newest_tied
        chosen_scores = [scores[i] for i in above] + [threshold] * len(newest_tied)
        # Laid out oldest first, a stable sort by score keeps equal scores oldest
        # first; reversed, that is best first and newer first (CTX-1).
        ages = list(map(age, chosen))
        order = sorted(range(len(chosen)), key=ages.__getitem__)
        order.sort(key=chosen_scores.__getitem__)
        order.reverse()
        return [chosen[i] for i in order]


def _turn_item(entry: Entry) -> tuple[int, int | float, int, Entry]:
    """``(N, updated_at, seq, entry)``: the order of turns, by N and, of one N, by age (MSG-2)."""
    return (int(entry.key[5:]), entry.updated_at, entry.seq, entry)


class Split:
    """A state's turns apart from its facts (MSG-1): the turns by ``(N, age)``, the user turns, the facts' table and index.

    Made once from the entries (``of``), then changed with the index
    (``changed``), each change touching only the entries it moves.
    """

    __slots__ = ("facts", "facts_index", "memos", "turns", "users", "views")

    turns: SortedRun[tuple[int, int | float, int, Entry]]
    users: SortedRun[tuple[int, int | float, int, Entry]]
    facts: Table
    facts_index: Index
    #: MSG-17: the units' counts the stable cut remembers, per tokenizer (``core.unitmemo``); filled by
    #: ``get_messages``, carried by the changes that leave them as they were.
    memos: dict[Any, UnitMemo]
    #: MSG-18: each turn's message and its text, by the entry's ``seq``, as the request's walk read them, then
    #: the counter (and its generation) and the count last taken of it when that counter keeps counts, and the
    #: entry it was made of: a memo of what follows from the frozen entry alone, filled on first read and
    #: handed from split to split (a removed turn's dropped), so a request reads and counts each stored turn
    #: once, not once per call. Splits made from one another share it, and two of them may give one ``seq`` to
    #: different entries (a state changed, then the change left), so a view is used only for its own entry.
    views: dict[int, tuple[dict[str, Any], str, Any, int, int | float, Entry]]

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Split:
        """The split of ``entries``, worked out from scratch."""
        turns, users, facts = [], [], []
        for entry in entries:
            if is_turn(entry.key, entry.data):
                item = _turn_item(entry)
                turns.append(item)
                if chat_message(entry.data, owned=True)["role"] == "user":  # type: ignore[index]
                    users.append(item)
            else:
                facts.append(entry)
        split = object.__new__(cls)
        split.turns = SortedRun.of_sorted(sorted(turns))
        split.users = SortedRun.of_sorted(sorted(users))
        facts.sort(key=_seq)
        split.facts = Table(facts)
        split.facts_index = Index.of(facts)
        split.memos = {}
        split.views = {}
        return split

    def changed(self, removed: Sequence[Entry], added: Sequence[Entry], expired_at: int | float | None) -> Split:
        """The split after the index's change: each moved entry goes to its side."""

        def sides(entries: Sequence[Entry]) -> tuple[list[Entry], list[Entry], list[Entry]]:
            turns, users, facts = [], [], []
            for entry in entries:
                if is_turn(entry.key, entry.data):
                    turns.append(entry)
                    if chat_message(entry.data, owned=True)["role"] == "user":  # type: ignore[index]
                        users.append(entry)
                else:
                    facts.append(entry)
            return turns, users, facts

        old_turns, old_users, old_facts = sides(removed)
        new_turns, new_users, new_facts = sides(added)
        split = object.__new__(Split)
        split.turns = self.turns.changed(
            map(_turn_item, old_turns), map(_turn_item, new_turns), removed_ids=set(map(_seq, old_turns))
        )
        split.users = self.users.changed(
            map(_turn_item, old_users), map(_turn_item, new_users), removed_ids=set(map(_seq, old_users))
        )
        gone = [_turn_item(entry)[:3] for entry in old_turns]
        split.memos = carried(
            self.memos,
            gone,
            [_turn_item(entry)[:3] for entry in new_turns],
            self.turns.count_below(max(gone)) if gone else 0,
        )
        if old_facts or new_facts:
            split.facts = self.facts.changed(old_facts, new_facts)
            split.facts_index = self.facts_index.changed(old_facts, new_facts, expired_at=expired_at)
        else:
            split.facts, split.facts_index = self.facts, self.facts_index
        split.views = self.views
        for entry in old_turns:
            self.views.pop(entry.seq, None)
        return split
