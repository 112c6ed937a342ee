"""The BM25 ranking (BM-1 .. BM-9): Okapi BM25 over REC-1's words, stop words out, Snowball English stems.

A memory created with ``ranking="bm25"`` ranks recall, a context's query
matches and the facts of ``get_messages`` by this score instead of REC-2's
share of query words. Every number here is pinned so that a port computes
the same doubles:

    terms(text)  = Snowball English stem of each REC-1 word not in STOP_WORDS, in order
    N, avgdl     = the number of live entries ranked, and their mean term count
    idf(t)       = ln(1 + (N - df + 0.5) / (df + 0.5))        (``ln`` below, not the platform's log)
    part(t, d)   = idf(t) * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * dl / avgdl))
    score(q, d)  = the sum of part(t, d) over q's distinct terms held by d, in code point order of the terms

The natural logarithm is this module's ``ln``: a fixed sequence of IEEE
double operations (``frexp``, then a series in ``s = (m - 1) / (m + 1)``),
so the score does not depend on a platform's ``log``, which may differ in
the last bit between C libraries and JavaScript engines.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .lexical import word_sequence
from .maxscore import term_at_a_time
from .persistent import HashTable

__all__ = [
    "K1",
    "NEIGHBOUR",
    "SNOWBALL_VERSION",
    "STOP_WORDS",
    "B",
    "MissingStemmerError",
    "Postings",
    "best",
    "idf",
    "ln",
    "part",
    "query_terms",
    "ranked",
    "require_stemmer",
    "score",
    "stem",
    "terms",
]

#: BM-4: the term frequency saturation and the length normalisation.
K1 = 1.2
B = 0.75

#: BM-8: the share of a hit's score its neighbours in age order get in a context's ranking.
NEIGHBOUR = 0.5

#: BM-2: the stop words, as in ``spec/stop-words.txt`` (a test holds them equal).
STOP_WORDS: frozenset[str] = frozenset()  # filled below

#: BM-3: the Snowball release whose English algorithm the vectors pin.
SNOWBALL_VERSION = "3.1.1"

_STOP_WORDS_TEXT = """
a about above after again against ain all am an and any are aren as at be because been before being below between
both but by can couldn d did didn do does doesn doing don down during each few for from further had hadn has hasn
have haven having he her here hers herself him himself his how i if in into is isn it its itself just ll m ma me
mightn more most mustn my myself needn no nor not now o of off on once only or other our ours ourselves out over
own re s same shan she should shouldn so some such t than that the their theirs them themselves then there these
they this those through to too under until up ve very was wasn we were weren what when where which while who whom
why will with won wouldn y you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


class MissingStemmerError(ImportError):
    """The BM25 ranking needs the Snowball stemmer of the ``bm25`` extra (BM-3)."""


#: The stemmer's ``stemWords``, once loaded.
_loaded: list[Callable[[list[str]], list[str]]] = []
#: Every word stemmed so far (the stemmer is a pure function of the word).
_stems: dict[str, str] = {}


def _stemmer() -> Callable[[list[str]], list[str]]:
    if not _loaded:
        try:
            import snowballstemmer  # type: ignore[import-untyped]
        except ImportError as error:
            raise MissingStemmerError(
                'ranking="bm25" needs the Snowball stemmer: pip install "sentinel-memory[bm25]" (snowballstemmer)'
            ) from error
        _loaded.append(snowballstemmer.stemmer("english").stemWords)
    return _loaded[0]


def require_stemmer() -> None:
    """Raise ``MissingStemmerError``, naming the ``bm25`` extra, when the Snowball stemmer is not installed (BM-3)."""
    _stemmer()


def stem(word: str) -> str:
    """The Snowball English stem of one REC-1 word (BM-3)."""
    found = _stems.get(word)
    if found is None:
        found = _stems[word] = _stemmer()([word])[0]
    return found


def terms(text: str) -> list[str]:
    """The BM25 terms of ``text`` in order, repeats kept: REC-1 words, stop words out, each stemmed (BM-1..BM-3)."""
    kept = [word for word in word_sequence(text) if word not in STOP_WORDS]
    new = [word for word in kept if word not in _stems]
    if new:
        for word, stemmed in zip(new, _stemmer()(new), strict=True):
            _stems[word] = stemmed
    return list(map(_stems.__getitem__, kept))


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, in code point order: the order their parts are summed in (BM-5)."""
    return sorted(set(terms(query)))


_LN2 = 0.6931471805599453
_SQRT_HALF = 0.7071067811865476
#: 1/(2k+1) for k = 12 .. 1, the series' coefficients from the highest.
_SERIES = tuple(1.0 / (2 * k + 1) for k in range(12, 0, -1))


def ln(x: float) -> float:
    """The natural logarithm of ``x`` > 0 as BM-4 pins it, in a fixed order of IEEE double operations.

    ``x = m * 2**e`` with ``m`` in [sqrt(1/2), sqrt(2)) (by ``frexp``, exact);
    ``s = (m - 1) / (m + 1)``, ``z = s * s``; ``p = 1/25``, then for
    ``c`` in 1/23, 1/21, ..., 1/3: ``p = p * z + c``; then ``p = p * z + 1``;
    the result is ``e * LN2 + (2 * s) * p``. Within 2 ulp of the true value.
    """
    m, e = math.frexp(x)
    if m < _SQRT_HALF:
        m, e = m * 2.0, e - 1
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = _SERIES[0]
    for c in _SERIES[1:]:
        p = p * z + c
    p = p * z + 1.0
    return e * _LN2 + (2.0 * s) * p


def idf(count: int, holders: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` of ``count`` entries, ``holders`` of which hold the term (BM-4)."""
    return ln(1.0 + (count - holders + 0.5) / (holders + 0.5))


def part(idf_: float, tf: int, length: int, mean_length: float) -> float:
    """One term's part of an entry's score (BM-4), the operations in the order written there."""
    return idf_ * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * length / mean_length))


def score(query: Sequence[str], counts: Counter[str], length: int, idfs: dict[str, float], mean_length: float) -> float:
    """An entry's score: the parts of the ``query`` terms (sorted, distinct) it holds, summed in that order (BM-5)."""
    total = 0.0
    for term in query:
        tf = counts.get(term, 0)
        if tf:
            total += part(idfs[term], tf, length, mean_length)
    return total


def ranked(
    query: Sequence[str],
    live: Sequence[Any],
    now: int | float,
    recency_window: int | float,
    *,
    among: Sequence[Any] | None = None,
    neighbours: bool = False,
) -> list[tuple[float, Any]]:
    """The entries scoring above 0 with their scores, in age order: the reference (BM-5, BM-8); ``ranking.best_first`` orders them.

    ``query`` are the query's terms (``query_terms``); ``live`` every live
    entry, oldest first: N and the mean length are theirs. With ``among``,
    only those of them are ranked. With ``neighbours`` (a context's ranking,
    BM-8), an entry's score is the larger of its own and ``NEIGHBOUR`` times
    the own score of the entry just before or just after it in ``live``.
    """
    if not query or not live:
        return []
    documents = [entry.bm25_terms for entry in live]
    count = len(documents)
    total = 0
    for _, length in documents:
        total += length
    if total == 0:
        return []
    mean = total / count
    held = dict.fromkeys(query, 0)
    for counts, _ in documents:
        for term in query:
            if term in counts:
                held[term] += 1
    idfs = {term: idf(count, df) for term, df in held.items()}
    own = [score(query, counts, length, idfs, mean) if counts else 0.0 for counts, length in documents]
    values = own
    if neighbours:
        values = own.copy()
        for i, value in enumerate(own):
            if value > 0.0:
                carried = NEIGHBOUR * value
                for j in (i - 1, i + 1):
                    if 0 <= j < count and values[j] < carried:
                        values[j] = carried
    if among is None:
        scored = [(value, entry) for value, entry in zip(values, live, strict=True) if value > 0.0]
    else:
        wanted = {entry.seq for entry in among}
        scored = [
            (value, entry) for value, entry in zip(values, live, strict=True) if value > 0.0 and entry.seq in wanted
        ]
    return scored


#: The relative slack the pruned search leaves a bound, so that rounding (its sums run in another order) never prunes.
_SLACK = 1e-9
#: A change of more entries than this (or an eighth of the store) forgets the postings; the next search works them out.
_MASS_CHANGE = 64
_NOBODY: HashTable[int, Any] = HashTable()


#: A term's holders by their shape: ``(tf, length)`` -> their ``seq``s. An entry's part of the term's score
#: depends on nothing else of it (BM-4), so one part serves each shape's holders (BM-7).
Shapes = dict[tuple[int, int], tuple[int, ...]]


class Postings:
    """For each term, the stored entries holding it, by ``seq``; and the sum of their lengths (BM-1, BM-7).

    Persistent, as the index is: ``changed`` returns new postings sharing
    every untouched table. Expired entries stay until a compaction drops
    them; the search takes them out of its counts.

    A term's holders grouped by shape (``shapes``) are worked out when a
    search first reads its list, kept, and carried by small changes, so a
    search reads a common term's list a shape at a time, not an entry at a
    time.
    """

    __slots__ = ("_shapes", "lists", "total")

    lists: HashTable[str, HashTable[int, Any]]
    #: The sum of the stored entries' lengths (BM-1).
    total: int
    #: The terms whose shapes were asked, with them (see ``shapes``).
    _shapes: dict[str, Shapes]

    @classmethod
    def of(cls, entries: Iterable[Any]) -> Postings:
        """The postings of ``entries``, worked out from scratch."""
        lists: dict[str, dict[int, Any]] = {}
        total = 0
        for entry in entries:
            counts, length = entry.bm25_terms
            total += length
            seq = entry.seq
            for term in counts:
                holders = lists.get(term)
                if holders is None:
                    lists[term] = {seq: entry}
                else:
                    holders[seq] = entry
        postings = object.__new__(cls)
        postings.lists = HashTable((term, HashTable.of_dict(holders)) for term, holders in lists.items())
        postings.total = total
        postings._shapes = {}
        return postings

    def shapes(self, term: str) -> Shapes:
        """The holders of ``term`` grouped by shape, ``(tf, length)`` -> ``seq``s: made once, then carried by ``changed``."""
        found = self._shapes.get(term)
        if found is None:
            grouped: dict[tuple[int, int], list[int]] = {}
            for bucket in self.lists.get(term, _NOBODY).parts():
                for seq, entry in bucket.items():
                    counts, length = entry.bm25_terms
                    grouped.setdefault((counts[term], length), []).append(seq)
            found = self._shapes[term] = {shape: tuple(seqs) for shape, seqs in grouped.items()}
        return found

    def changed(self, removed: Sequence[Any], added: Sequence[Any], size: int) -> Postings | None:
        """The postings after a change of the index, or None for a mass change (worked out again when next asked)."""
        if len(removed) + len(added) > max(_MASS_CHANGE, size // 8):
            return None
        leaving: dict[str, list[int]] = {}
        joining: dict[str, list[tuple[int, Any]]] = {}
        total = self.total
        for entry in removed:
            counts, length = entry.bm25_terms
            total -= length
            for term in counts:
                leaving.setdefault(term, []).append(entry.seq)
        for entry in added:
            counts, length = entry.bm25_terms
            total += length
            for term in counts:
                joining.setdefault(term, []).append((entry.seq, entry))
        lists = self.lists
        moved = [
            (term, lists.get(term, _NOBODY).changed(leaving.get(term, ()), joining.get(term, ())))
            for term in leaving.keys() | joining.keys()
        ]
        postings = object.__new__(Postings)
        postings.lists = lists.changed([term for term, held in moved if not held], [pair for pair in moved if pair[1]])
        postings.total = total
        postings._shapes = _carried(self._shapes, removed, added)
        return postings


def _carried(kept: dict[str, Shapes], removed: Sequence[Any], added: Sequence[Any]) -> dict[str, Shapes]:
    """The kept shapes after a change: each kept term the change touches gets its holders moved between shapes.

    Always a new dict: the postings before the change keep theirs, and a
    term's shapes worked out later for one must not reach the other.
    """
    if not kept:
        return {}
    touched: dict[str, Shapes] = {}
    for entries, put in ((removed, False), (added, True)):
        for entry in entries:
            counts, length = entry.bm25_terms
            for term, tf in counts.items():
                shapes = touched.get(term)
                if shapes is None:
                    old = kept.get(term)
                    if old is None:
                        continue
                    shapes = touched[term] = dict(old)
                shape = (tf, length)
                seqs = shapes.get(shape, ())
                if put:
                    shapes[shape] = (*seqs, entry.seq)
                else:
                    left = tuple(seq for seq in seqs if seq != entry.seq)
                    if left:
                        shapes[shape] = left
                    else:
                        shapes.pop(shape, None)
    carried = dict(kept)
    for term, shapes in touched.items():
        if shapes:
            carried[term] = shapes
        else:
            del carried[term]
    return carried


def live_stats(
    query: Sequence[str], postings: Postings, stored: int, expired: Sequence[Any]
) -> tuple[dict[str, float], float, dict[str, int]] | None:
    """Each query term's ``idf``, the mean length and each term's holders, over the live entries (BM-4).

    None when no entry is live or no live entry has a term (nothing scores).

    ``stored`` entries are in the postings, ``expired`` of them are not
    live: N, the lengths' sum and each term's holders are the postings'
    less theirs, the same integers a count over the live entries gives, so
    the same doubles.
    """
    count = stored - len({entry.seq for entry in expired})
    total = postings.total
    for entry in expired:
        total -= entry.bm25_terms[1]
    if count <= 0 or total <= 0:
        return None
    held = {
        term: len(postings.lists.get(term, _NOBODY)) - sum(1 for entry in expired if term in entry.bm25_terms[0])
        for term in query
    }
    return {term: idf(count, df) for term, df in held.items()}, total / count, held


def best(
    query: Sequence[str],
    postings: Postings,
    stored: int,
    expired: Sequence[Any],
    limit: int,
) -> list[tuple[float, Any]]:
    """The entries scoring at least the ``limit``-th best score, each with its score, in no order (BM-5, BM-7).

    Exactly the entries that scoring every live entry would put at or above
    the ``limit``-th best score (ties at it included), with the same doubles.
    ``stored`` entries are in the postings, ``expired`` of them are not live.

    Max-score pruning, term at a time (``maxscore.term_at_a_time``): the
    terms are read rarest first (highest ``idf``), and each entry met is
    given its part (BM-4's ``part``, worked out once per shape of holder,
    ``Postings.shapes``). A term's part is below ``idf * (k1 + 1)``, so an
    entry that holds none of the terms read so far scores below the sum of
    the rest's bounds. Once ``limit`` entries are held and the ``limit``-th
    best of them is above that sum, no entry met later can make the best:
    the common terms' long lists are then only asked about the entries
    held, not read.

    An entry's parts are summed in the order its terms were read, BM-5 sums
    them in code point order. Addition of two doubles commutes, and ``0.0 +
    x`` is ``x``, so for an entry holding one or two of the terms the sum is
    BM-5's double; an entry holding three or more is summed again as BM-5 says.
    """
    if limit <= 0 or not query:
        return []
    gone = {entry.seq for entry in expired}
    stats = live_stats(query, postings, stored, expired)
    if stats is None:
        return []
    idfs, mean, held = stats
    tables: dict[str, HashTable[int, Any]] = {term: postings.lists[term] for term in query if held[term]}
    order = sorted(tables, key=idfs.__getitem__, reverse=True)
    rest = [0.0] * (len(order) + 1)
    for i in range(len(order) - 1, -1, -1):
        rest[i] = rest[i + 1] + idfs[order[i]] * (K1 + 1.0)
    partial: dict[int, float] = {}
    twice: set[int] = set()  # the entries met in two lists so far
    thrice: set[int] = set()  # ... in three or more: their sums are worked out again

    def add(parts: dict[int, float], again: set[int]) -> None:
        # ``parts`` of entries met before (``again``) and of new ones, all summed into ``partial`` at C speed.
        sums = map(operator.add, map(partial.__getitem__, again), map(parts.__getitem__, again))
        parts.update(zip(again, sums, strict=True))
        thrice.update(twice & again)
        twice.update(again)
        partial.update(parts)

    def closed(i: int) -> bool:  # the k-th best held is above what every unread term could add
        if len(partial) < limit:
            return False
        bound = rest[i] * (1.0 + _SLACK)
        return len([value for value in partial.values() if value > bound]) >= limit

    def probe(i: int) -> None:
        term, idf_, held = order[i], idfs[order[i]], partial.keys()
        parts: dict[int, float] = {}
        for (tf, length), seqs in postings.shapes(term).items():
            found = held & seqs
            if found:
                parts.update(dict.fromkeys(found, part(idf_, tf, length, mean)))
        add(parts, set(parts))

    def read(i: int) -> None:
        # A shape at a time: each shape's part once, its holders given it at C speed, then those met before summed.
        term, idf_ = order[i], idfs[order[i]]
        parts: dict[int, float] = {}
        for (tf, length), seqs in postings.shapes(term).items():
            parts.update(dict.fromkeys(seqs, part(idf_, tf, length, mean)))
        for seq in gone.intersection(parts):
            del parts[seq]
        add(parts, parts.keys() & partial.keys())

    term_at_a_time(len(order), read, probe, closed)
    if not partial:
        return []
    # The limit-th best sum (a sort in C beats a heap walked in Python here), less the slack rounding may need.
    floor = sorted(partial.values(), reverse=True)[limit - 1] * (1.0 - _SLACK) if len(partial) >= limit else -math.inf
    chosen = [seq for seq, value in partial.items() if value >= floor]
    result = []
    lists = iter(order)
    while chosen:  # each chosen entry from the first list that holds it: every one is in some list
        table = tables[next(lists)]
        found = table.having(chosen)
        for seq, entry in zip(found, table.values_of(found), strict=True):
            if seq in thrice:
                counts, length = entry.bm25_terms
                result.append((score(query, counts, length, idfs, mean), entry))
            else:
                result.append((partial[seq], entry))
        taken = set(found)
        chosen = [seq for seq in chosen if seq not in taken]
    if len(result) > limit:
        cut = heapq.nlargest(limit, (value for value, _ in result))[-1]
        result = [pair for pair in result if pair[0] >= cut]
    return result
