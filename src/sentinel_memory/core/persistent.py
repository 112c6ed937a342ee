"""Persistent containers: a change copies what it touches and shares the rest.

A transition never changes the state it was given (the functional core), yet
copying a table of 100,000 entries on every ``remember`` would cost far more
than the remember itself. The two containers here are cut into chunks of a
few hundred items. A change copies the chunks it touches and the short tuple
that lists the chunks, and shares every other chunk with the version it came
from. So a change costs about ``O(chunk size + n / chunk size)`` pointer
copies, a few microseconds at any size this library is used at, and every
old version stays valid and unchanged.

* ``SortedRun`` keeps items in ascending order: an ordered index.
* ``HashTable`` maps keys to values: a dict in buckets chosen by hash.

Neither knows anything about memories; ``sentinel_memory.core.index`` says what
they hold.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from . import bitsets

__all__ = ["CHUNK", "HashTable", "SortedRun"]

T = TypeVar("T", bound=tuple[Any, ...])  # items are tuples: ordered, their id second to last
K = TypeVar("K")
V = TypeVar("V")

#: Items per chunk of a ``SortedRun`` when it is built; a chunk splits at twice this.
CHUNK = 256


class SortedRun(Generic[T]):
    """Distinct items in ascending order, persistent: every change returns a new run.

    Items are tuples, totally ordered and distinct, whose second-to-last
    field tells them apart (it is hashable and unique). The index stores
    tuples whose last two fields are a unique sequence number and the entry,
    so two items never compare their entries.
    """

    __slots__ = ("_chunks", "_lasts", "_size")

    _chunks: tuple[tuple[T, ...], ...]
    _lasts: tuple[T, ...]
    _size: int

    def __init__(self, items: Iterable[T] = ()) -> None:
        """A run of ``items``, in any order (items already in order sort in linear time)."""
        ordered = sorted(items)
        self._set(_chunked(ordered), len(ordered))

    @classmethod
    def of_sorted(cls, items: list[T]) -> SortedRun[T]:
        """A run of ``items``, which the caller has just sorted: they are not checked again."""
        return cls._of_chunks(_chunked(items), len(items))

    def _set(self, chunks: tuple[tuple[T, ...], ...], size: int) -> None:
        self._chunks = chunks
        self._lasts = tuple(map(_last, chunks))
        self._size = size

    @classmethod
    def _of_chunks(cls, chunks: tuple[tuple[T, ...], ...], size: int) -> SortedRun[T]:
        run = object.__new__(cls)
        run._set(chunks, size)
        return run

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        """Ascending."""
        return itertools.chain.from_iterable(self._chunks)

    def __reversed__(self) -> Iterator[T]:
        """Descending."""
        return itertools.chain.from_iterable(map(reversed, reversed(self._chunks)))

    def __repr__(self) -> str:
        return f"SortedRun(size={self._size}, chunks={len(self._chunks)})"

    def first(self) -> T | None:
        """The smallest item, or None when the run is empty."""
        return self._chunks[0][0] if self._chunks else None

    def last(self) -> T | None:
        """The largest item, or None when the run is empty."""
        return self._chunks[-1][-1] if self._chunks else None

    def ceiling(self, probe: Any) -> T | None:
        """The smallest item ``>= probe``, or None."""
        at = bisect.bisect_left(self._lasts, probe)
        if at == len(self._chunks):
            return None
        chunk = self._chunks[at]
        return chunk[bisect.bisect_left(chunk, probe)]

    def next_few(self, probe: Any, most: int) -> tuple[T, ...]:
        """Up to ``most`` of the smallest items ``>= probe``, ascending; fewer at the end of a chunk, none past the run.

        A search that reads a few items at a time takes them here, sliced at
        C speed, instead of one ``ceiling`` each.
        """
        at = bisect.bisect_left(self._lasts, probe)
        if at == len(self._chunks):
            return ()
        chunk = self._chunks[at]
        start = bisect.bisect_left(chunk, probe)
        return chunk[start : start + most]

    def at(self, position: int) -> T:
        """The item at ``position`` (0 is the smallest); IndexError outside the run."""
        if not 0 <= position < self._size:
            raise IndexError("position outside the run")
        for chunk in self._chunks:
            if position < len(chunk):
                return chunk[position]
            position -= len(chunk)
        raise AssertionError("unreachable")

    def from_(self, probe: Any) -> list[T]:
        """Every item ``>= probe``, ascending."""
        at = bisect.bisect_left(self._lasts, probe)
        if at == len(self._chunks):
            return []
        chunk = self._chunks[at]
        items = list(chunk[bisect.bisect_left(chunk, probe) :])
        items.extend(itertools.chain.from_iterable(self._chunks[at + 1 :]))
        return items

    def descending_below(self, probe: Any) -> Iterator[T]:
        """The items ``< probe``, descending."""
        at = bisect.bisect_left(self._lasts, probe)
        head: tuple[T, ...] = ()
        if at < len(self._chunks):
            chunk = self._chunks[at]
            head = chunk[: bisect.bisect_left(chunk, probe)]
        return itertools.chain(
            reversed(head), itertools.chain.from_iterable(map(reversed, reversed(self._chunks[:at])))
        )

    def below(self, probe: Any) -> list[T]:
        """Every item ``< probe``, ascending."""
        at = bisect.bisect_left(self._lasts, probe)
        items = list(itertools.chain.from_iterable(self._chunks[:at]))
        if at < len(self._chunks):
            chunk = self._chunks[at]
            items.extend(chunk[: bisect.bisect_left(chunk, probe)])
        return items

    def count_below(self, probe: Any) -> int:
        """How many items are ``< probe``."""
        at = bisect.bisect_left(self._lasts, probe)
        count = sum(map(len, self._chunks[:at]))
        if at < len(self._chunks):
            count += bisect.bisect_left(self._chunks[at], probe)
        return count

    def changed(
        self, removed: Iterable[T] = (), added: Iterable[T] = (), *, removed_ids: set[Any] | None = None
    ) -> SortedRun[T]:
        """A new run without ``removed`` (each must be present) and with ``added`` (each must be absent).

        Only the chunks that lose or gain an item are copied. Each chunk
        holds the items between its predecessor's last and its own last, so
        the chunk of an item is found by bisecting the lasts of the run as it
        was; removals and additions then go to that chunk's copy.

        When more items leave than there are chunks (a mass expiry), one
        pass over the whole run by id beats a search for each. A caller that
        has the removed items' ids passes them as ``removed_ids``; then, in
        that case, ``removed`` is not even read.
        """
        if removed_ids is not None and len(removed_ids) > len(self._chunks):
            return self._without_ids(removed_ids).changed((), added)
        removed = list(removed)
        if len(removed) > len(self._chunks):
            ids = {item[-2] for item in removed}
            if len(ids) != len(removed):
                raise ValueError("item removed twice")
            return self._without_ids(ids).changed((), added)
        chunks = list(self._chunks)
        lasts = self._lasts
        copies: dict[int, list[T]] = {}

        def chunk_of(item: T) -> list[T]:
            at = min(bisect.bisect_left(lasts, item), len(chunks) - 1)
            own = copies.get(at)
            if own is None:
                own = copies[at] = list(chunks[at])
            return own

        if removed:
            if not chunks:
                raise ValueError("item not in the run")
            by_chunk: dict[int, list[T]] = {}
            for item in removed:
                by_chunk.setdefault(min(bisect.bisect_left(lasts, item), len(chunks) - 1), []).append(item)
            for at, items in by_chunk.items():
                own = copies[at] = list(chunks[at])
                places = set()
                for item in items:
                    place = bisect.bisect_left(own, item)
                    if place == len(own) or not _same(own[place], item):
                        raise ValueError("item not in the run")
                    places.add(place)
                if len(places) != len(items):
                    raise ValueError("item removed twice")
                if len(places) == 1:
                    del own[places.pop()]
                else:
                    own[:] = [item for place, item in enumerate(own) if place not in places]
        size = self._size - len(removed)
        for item in added:
            if not chunks:
                chunks.append(())
            own = chunk_of(item)
            place = bisect.bisect_left(own, item)
            if place < len(own) and _same(own[place], item):
                raise ValueError("item already in the run")
            own.insert(place, item)
            size += 1
        for at in sorted(copies, reverse=True):
            own = copies[at]
            if not own:
                del chunks[at]
            elif len(own) > 2 * CHUNK:
                half = len(own) // 2
                chunks[at : at + 1] = [tuple(own[:half]), tuple(own[half:])]
            else:
                chunks[at] = tuple(own)
        return SortedRun._of_chunks(tuple(chunks), size)

    def _without_ids(self, ids: set[Any]) -> SortedRun[T]:
        """A new run without the items whose id (second-to-last field) is in ``ids``, each of which must be present."""
        kept = [item for item in itertools.chain.from_iterable(self._chunks) if item[-2] not in ids]
        if len(kept) != self._size - len(ids):
            raise ValueError("item not in the run")
        return SortedRun._of_chunks(_chunked(kept), len(kept))

    def without_below(self, probe: Any) -> SortedRun[T]:
        """A new run without the items ``< probe``: whole chunks go at once."""
        at = bisect.bisect_left(self._lasts, probe)
        if at == len(self._chunks):
            return SortedRun()
        chunk = self._chunks[at]
        cut = bisect.bisect_left(chunk, probe)
        head = (chunk[cut:],) if cut else (chunk,)
        rest = self._chunks[at + 1 :]
        return SortedRun._of_chunks(head + rest, len(chunk) - cut + sum(map(len, rest)))


_last = operator.itemgetter(-1)


def _chunked(items: list[T]) -> tuple[tuple[T, ...], ...]:
    """Sorted ``items`` cut into chunks of ``CHUNK``."""
    return tuple(tuple(items[i : i + CHUNK]) for i in range(0, len(items), CHUNK))


def _same(a: Any, b: Any) -> bool:
    """Items are equal; for the index's tuples, their unique sequence numbers decide before any entry is compared."""
    return bool(a == b)


class HashTable(Mapping[K, V]):
    """A mapping, persistent: ``changed`` returns a new table and shares every untouched bucket.

    Keys go to one of a power-of-two number of buckets by hash. The number
    of buckets doubles as the table grows, so buckets stay small and a
    change copies little; a doubling rebuilds once, and is paid for by the
    changes that filled the table. Iteration order is the buckets' and is
    not meaningful.
    """

    __slots__ = ("_bits", "_buckets", "_size")

    #: Keys per bucket, on average, before the buckets double.
    PER_BUCKET = 32
    #: A change of more keys than this drops the kept bit set (see ``bits``) instead of carrying it.
    BITS_CARRIED = 64

    _buckets: tuple[dict[K, V], ...]
    _size: int
    #: The keys as a bit set, once ``bits`` was asked (None until then).
    _bits: int | None

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        pairs = dict(items)
        count = 1
        while count * self.PER_BUCKET < len(pairs):
            count *= 2
        buckets: list[dict[K, V]] = [{} for _ in range(count)]
        mask = count - 1
        for key, value in pairs.items():
            buckets[hash(key) & mask][key] = value
        self._buckets = tuple(buckets)
        self._size = len(pairs)
        self._bits = None

    @classmethod
    def of_dict(cls, pairs: dict[K, V]) -> HashTable[K, V]:
        """A table of ``pairs``, which it then owns: a small dict becomes its one bucket as it is."""
        if len(pairs) <= cls.PER_BUCKET:
            return cls._of_buckets((pairs,), len(pairs))
        return cls(pairs)

    @classmethod
    def _of_buckets(cls, buckets: tuple[dict[K, V], ...], size: int) -> HashTable[K, V]:
        table = object.__new__(cls)
        table._buckets, table._size, table._bits = buckets, size, None
        return table

    def __getitem__(self, key: K) -> V:
        buckets = self._buckets
        return buckets[hash(key) & (len(buckets) - 1)][key]

    def get(self, key: K, default: Any = None) -> Any:
        buckets = self._buckets
        return buckets[hash(key) & (len(buckets) - 1)].get(key, default)

    def __contains__(self, key: object) -> bool:
        buckets = self._buckets
        return key in buckets[hash(key) & (len(buckets) - 1)]

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[K]:
        return itertools.chain.from_iterable(self._buckets)

    def __repr__(self) -> str:
        return f"HashTable(size={self._size}, buckets={len(self._buckets)})"

    def parts(self) -> tuple[Mapping[K, V], ...]:
        """The buckets, together every pair once: ``dict.update`` and ``Counter`` take them at C speed."""
        return self._buckets

    def having(self, keys: Iterable[K]) -> list[K]:
        """The ``keys`` the table holds, in their order: a membership test each, at C speed."""
        keys = list(keys)
        return list(itertools.compress(keys, map(operator.contains, self._homes(keys), keys)))

    def values_of(self, keys: Iterable[K]) -> list[V]:
        """The values of ``keys``, in their order, each of which the table must hold (``KeyError``): at C speed."""
        keys = list(keys)
        return list(map(dict.__getitem__, self._homes(keys), keys))

    def _homes(self, keys: list[K]) -> Iterator[dict[K, V]]:
        """The bucket each of ``keys`` belongs in, in their order, at C speed: what ``having`` and ``values_of`` ask."""
        buckets = self._buckets
        return map(buckets.__getitem__, map(operator.and_, map(hash, keys), itertools.repeat(len(buckets) - 1)))

    def bits(self) -> int:
        """The keys as one bit set (``bitsets``; the keys must be ints >= 0): made once, then carried by ``changed``.

        The counts of a query's words per entry are worked out from their
        lists' bit sets (REC-7); a list a change touches keeps its set by
        setting and clearing the bits of the keys changed, so a query after
        a change does not lay out the common words' lists again.
        """
        bits = self._bits
        if bits is None:
            bits = self._bits = bitsets.bits_of(self)  # type: ignore[arg-type]  # int keys: the caller's word
        return bits

    def changed(self, removed: Iterable[K] = (), put: Iterable[tuple[K, V]] = ()) -> HashTable[K, V]:
        """A new table without the keys ``removed`` (absent ones are ignored), then with the pairs ``put``.

        Each bucket a change touches is copied once, on its first touch. A
        bit set made by ``bits`` is carried when the change is small.
        """
        bits = self._bits
        if bits is not None:
            removed, put = list(removed), list(put)
            if len(removed) + len(put) > self.BITS_CARRIED:
                bits = None
            else:
                for key in removed:
                    bits &= ~(1 << key)  # type: ignore[operator]  # int keys, as bits() was asked
                for key, _ in put:
                    bits |= 1 << key  # type: ignore[operator]
        table = self._changed(removed, put)
        table._bits = bits
        return table

    def _changed(self, removed: Iterable[K], put: Iterable[tuple[K, V]]) -> HashTable[K, V]:
        old = self._buckets
        mask = len(old) - 1
        copies: dict[int, dict[K, V]] = {}  # bucket number -> its copy
        for key in removed:
            at = hash(key) & mask
            bucket = copies.get(at)
            if bucket is None:
                bucket = copies[at] = old[at].copy()
            bucket.pop(key, None)
        for key, value in put:
            at = hash(key) & mask
            bucket = copies.get(at)
            if bucket is None:
                bucket = copies[at] = old[at].copy()
            bucket[key] = value
        buckets = list(old)
        size = self._size
        for at, bucket in copies.items():
            size += len(bucket) - len(old[at])
            buckets[at] = bucket
        if size > len(buckets) * self.PER_BUCKET:
            return HashTable(itertools.chain.from_iterable(bucket.items() for bucket in buckets))
        return HashTable._of_buckets(tuple(buckets), size)
