"""Lexical recall: same words, not same meaning (REC-1, REC-2).

Words are lower-cased (``str.lower``), NFD-normalised with every combining mark
removed (so ``česky`` matches ``CESKY``), and split on every run of characters
that are neither letters (L*) nor digits (N*), all by Unicode 14.0.0
(``unicode14``), whatever the Python's own version. There is no stemming, no
stop-word list and no embedding: "jak se jmenuju" does not find ``user:name``.

    relevance = share of the distinct query words found in the key or data
    score     = relevance * (0.5 + importance / 2) + 0.05 * freshness
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from functools import lru_cache
from itertools import repeat
from typing import Protocol, TypeVar

from . import bitsets, unicode14
from .maxscore import kth_largest, term_at_a_time

__all__ = [
    "FRESHNESS_BONUS",
    "Recallable",
    "best_holders",
    "best_matches",
    "holding",
    "ranked",
    "relevance",
    "score",
    "walked",
    "word_sequence",
    "words",
]

#: REC-2: the most freshness can add to a recall score.
FRESHNESS_BONUS = 0.05


@lru_cache(maxsize=4096)
def _kept_as(char: str) -> str:
    """What ``char`` of NFD text becomes in a word: itself (L*, N*), nothing (M*: marks), or a space (REC-1)."""
    kind = unicodedata.category(char)[0]
    return "" if kind == "M" else char if kind in "LN" else " "


#: In ASCII the letters are a-z once lower-cased and the digits 0-9; nothing decomposes.
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> frozenset[str]:
    """The distinct words of ``text`` as recall compares them (REC-1).

    Plain ASCII text, the common case, takes a regular expression that says
    the same thing. Other text is rewritten by ``str.translate`` with a table
    of its distinct characters: accents and other combining marks vanish,
    letters and digits stay, everything else separates words. So the cost is
    linear in the text at C speed, plus one look-up per distinct character: a
    message of megabytes from a user cannot stall a server.
    """
    return frozenset(word_sequence(text))


def word_sequence(text: str) -> list[str]:
    """The words of ``text`` in their order, repeats kept: what ``words`` makes distinct (REC-1, BM-1)."""
    lowered = text.lower()
    if lowered.isascii():
        return _ASCII_WORD.findall(lowered)
    if not unicode14.runtime_is_reference:
        # A later Unicode knows code points 14.0.0 leaves unassigned; REC-1 reads them as separators,
        # so they become spaces before lower() can map them, or count them as cased for Final_Sigma.
        lowered = text.translate({ord(c): " " for c in set(text) if not unicode14.assigned(ord(c))}).lower()
    decomposed = unicodedata.normalize("NFD", lowered)
    table = {ord(char): _kept_as(char) for char in set(decomposed)}
    return decomposed.translate(table).split()


def relevance(query_words: frozenset[str], entry_words: frozenset[str]) -> float:
    """Share of the distinct query words found among the entry's words (REC-2)."""
    return len(query_words & entry_words) / len(query_words)


def score(relevance_: float, importance: float, freshness: float) -> float:
    """``relevance * (0.5 + importance / 2) + 0.05 * freshness`` (REC-2)."""
    return relevance_ * (0.5 + importance / 2) + FRESHNESS_BONUS * freshness


def ranked(
    query_words: frozenset[str], live: Iterable[R], now: int | float, recency_window: int | float
) -> list[tuple[float, R]]:
    """Every entry of ``live`` sharing a query word, with its score, best first, ties newer first: the reference (REC-7).

    REC-2 and REC-3 read literally: every entry is scored, none is pruned.
    The searches (``best_matches``, ``best_holders``) return exactly the
    start of this list, entries, order and scores (REC-7).
    """
    scored = []
    for entry in live:
        if query_words.isdisjoint(entry.words):
            continue
        at = entry.updated_at
        fresh = 1 - (now - at if now > at else 0) / recency_window
        value = score(relevance(query_words, entry.words), entry.importance, fresh if fresh > 0 else 0.0)
        scored.append((value, entry))
    scored.sort(key=lambda pair: (pair[0], pair[1].updated_at, pair[1].seq), reverse=True)
    return scored


#: The first block the walk scores at once (or ``limit``, if fewer); each next is twice as big, up to ``_BLOCK``.
_FIRST_BLOCK = 32
_BLOCK = 512
#: The search by holders scores every candidate when there are at most this many times ``limit`` of them.
_SCORE_ALL = 2
_words = operator.attrgetter("words")
_importance = operator.attrgetter("importance")
_updated = operator.attrgetter("updated_at")
_age = operator.attrgetter("updated_at", "seq")
_seq = operator.attrgetter("seq")


class Recallable(Protocol):
    """What recall reads of an entry ([`Entry`][sentinel_memory.core.values.Entry] has it)."""

    @property
    def words(self) -> frozenset[str]: ...
    @property
    def importance(self) -> float: ...
    @property
    def updated_at(self) -> int | float: ...
    @property
    def seq(self) -> int: ...


R = TypeVar("R", bound=Recallable)
R_co = TypeVar("R_co", bound=Recallable, covariant=True)


def holding(entries: Sequence[R], texts: Sequence[str], wanted: Iterable[str]) -> dict[str, dict[int, R]]:
    """For each ``wanted`` word, the ``entries`` whose words include it, by ``seq`` (REC-1): found by searching their text.

    ``texts[i]`` is what ``entries[i]``'s words come from, its key and the
    text of its data joined by a space. Finding them by asking each entry
    for its words would split every text into words first, most of the
    work for words nobody asks about. An ASCII text's words are the runs
    of ``[a-z0-9]`` in it lower-cased, so such a text holds such a word
    exactly when the word occurs in the lower-cased text with no letter or
    digit on either side: one substring test per text, at C speed, and
    the exact test only where the substring is found. Every other text,
    and every other word, is asked of the entry's own words.
    """
    plain = list(map(str.isascii, texts))
    ascii_entries = list(itertools.compress(entries, plain))
    lowered = list(map(str.lower, itertools.compress(texts, plain)))
    others = list(itertools.compress(entries, map(operator.not_, plain)))
    found: dict[str, dict[int, R]] = {}
    for word in wanted:
        holders: dict[int, R] = {}
        near = list(map(operator.contains, lowered, repeat(word))) if _ASCII_WORD.fullmatch(word) else []
        # Only a word some text contains is compiled: compiling costs microseconds per character, and
        # a query's word may be megabytes long (its cost must stay linear and small, REC-1).
        if any(near):
            # The word first, so that the regex engine looks for it as a literal;
            # then neither the character before it nor the one after is a letter or digit.
            alone = re.compile(f"{word}(?<![a-z0-9]{word})(?![a-z0-9])")
            lines = list(itertools.compress(lowered, near))
            held = list(itertools.compress(itertools.compress(ascii_entries, near), map(alone.search, lines)))
            holders = dict(zip(map(_seq, held), held, strict=True))
        holders.update((entry.seq, entry) for entry in others if word in entry.words)
        found[word] = holders
    return found


def best_matches(
    walk: Callable[[float | None], Iterator[R]],
    query_words: frozenset[str],
    reachable: frozenset[str],
    now: int | float,
    recency_window: int | float,
    limit: int,
    *,
    seq_is_age: bool,
    holders: Mapping[str, Holding[R]] | None = None,
) -> list[tuple[float, R]]:
    """The best ``limit`` entries sharing a query word, with their scores, best first, ties newer (REC-2, REC-3).

    ``walked`` with no limit on how many entries it reads: see there.
    """
    found = walked(walk, query_words, reachable, now, recency_window, limit, seq_is_age=seq_is_age, holders=holders)
    assert found is not None  # no limit: the walk always ends
    return found


def walked(
    walk: Callable[[float | None], Iterator[R]],
    query_words: frozenset[str],
    reachable: frozenset[str],
    now: int | float,
    recency_window: int | float,
    limit: int,
    *,
    seq_is_age: bool,
    holders: Mapping[str, Holding[R]] | None = None,
    give_up: int | None = None,
) -> list[tuple[float, R]] | None:
    """The best ``limit`` entries sharing a query word, found by a walk by importance; None once it has read more than ``give_up``.

    ``walk(None)`` yields the candidates by importance, highest first, each
    importance newest first; ``walk(v)`` yields only those of importance
    below ``v``. ``reachable`` are the query words a candidate may hold: a
    superset of those any of them does (a word no stored entry has cannot
    match), so that only they are looked for. Scores are worked out by
    ``_scores``: the same doubles as ``score``. ``holders``, when given,
    are the entries holding each reachable word (found without working out
    every entry's words, see [`holding`][sentinel_memory.core.lexical.holding]):
    then the walk asks them, and no entry's words are worked out.

    The walk is read in blocks, and each block is worked on at C speed:
    how many query words each entry holds, then the score of only those
    entries that could still make the best ``limit``. Once ``limit`` scores
    are held, the ``limit``-th best of them, ``worst``, bounds the rest;
    a bound skips only when it is strictly below ``worst``, because an entry
    of lower importance may be newer and so win a tie:

    * A score is at most every reachable word matched at the block's highest
      importance plus full freshness. When that cannot reach ``worst``, no
      entry of this or any lower importance can: the search ends.
    * When every entry of a block has one importance, none is fresher than
      the block's first (newest). When even that cannot reach ``worst``, no
      older entry of that importance can: the walk jumps below it.
    * Within a block, an entry holding too few query words to reach
      ``worst`` at the block's best is not scored.

    Nothing here depends on how many distinct importances there are.
    When no entry holds most of the query words, the bounds stop little:
    with ``give_up``, the walk stops (None) once it has read more than that
    many entries, so that the caller can search the holders instead.
    """
    reach = len(reachable)
    if limit <= 0 or reach <= 0:
        return []
    total, window, weight = len(query_words), recency_window, FRESHNESS_BONUS
    full_bonus = weight * 1.0
    share = reach / total  # the best relevance any candidate can have
    held: list[R] = []
    scores: list[float] = []
    worst = -math.inf  # once ``limit`` are held, the ``limit``-th best score held
    tables = None if holders is None else [holders[word] for word in reachable]
    candidates, size = walk(None), min(limit, _FIRST_BLOCK)
    read = 0
    while block := list(itertools.islice(candidates, size)):
        size = min(2 * size, _BLOCK)
        read += len(block)
        if give_up is not None and read > give_up:
            return None
        top = block[0].importance
        top_weight = 0.5 + top / 2  # a relevance of 1 (1 * x is x) at this importance
        if share * top_weight + full_bonus < worst:
            break
        bonus = full_bonus
        if block[-1].importance == top:
            at = block[0].updated_at
            age = now - at if now > at else 0
            bonus = weight * (f if (f := 1 - age / window) > 0 else 0.0)
            if share * top_weight + bonus < worst:
                candidates = walk(top)  # the rest of this importance is older still
                continue
        least = 1  # the fewest query words that can reach ``worst`` in this block
        while least <= reach and (least / total) * top_weight + bonus < worst:
            least += 1
        counts: list[int] = [0] * len(block)
        # A membership test per reachable word beats building intersections.
        if tables is None:
            held_words = list(map(_words, block))
            for word in reachable:
                counts = list(map(operator.add, counts, map(operator.contains, held_words, itertools.repeat(word))))
        else:
            seqs = list(map(_seq, block))
            for table in tables:
                present = set(table.having(seqs))
                counts = list(map(operator.add, counts, map(present.__contains__, seqs)))
        enough = list(map(operator.ge, counts, itertools.repeat(least)))
        found = list(itertools.compress(block, enough))
        if not found:
            continue
        relevances = map(operator.truediv, itertools.compress(counts, enough), repeat(total))
        scored = _scores(relevances, map(_importance, found), map(_updated, found), now, window)
        held += found
        scores += scored
        worst = _keep_best(held, scores, limit)
    return _best_first(held, scores, limit, seq_is_age=seq_is_age)


#: A group's listing (``_scored_groups``): its entries; those updated at or before the moment given (when one is) may be left out.
Listing = Callable[[int | float | None], list[R]]


class Holding(Protocol[R_co]):
    """The entries that hold one word, by ``seq`` ([`HashTable`][sentinel_memory.core.persistent.HashTable] has it)."""

    def parts(self) -> tuple[Mapping[int, R_co], ...]: ...
    def having(self, keys: Iterable[int]) -> list[int]: ...
    def values_of(self, keys: Iterable[int]) -> Sequence[R_co]: ...
    def bits(self) -> int: ...
    def __len__(self) -> int: ...


def best_holders(
    holders: Mapping[str, Holding[R]],
    total: int,
    now: int | float,
    recency_window: int | float,
    limit: int,
    *,
    left_out: Set[int],
    seq_is_age: bool,
    top_importance: float = 1.0,
    span: int | None = None,
    first_after: Callable[[int | float], int | None] | None = None,
) -> list[tuple[float, R]]:
    """What ``best_matches`` returns, found from the entries that hold each query word instead of a walk.

    ``holders`` maps each query word some stored entry may hold to the
    entries holding it, by ``seq`` (in parts, read at C speed); ``total``
    is the number of distinct query words; entries whose ``seq`` is in
    ``left_out`` (the expired) are not candidates. ``seq_is_age`` says that
    ``seq`` order is age order; no candidate's importance is above
    ``top_importance``.

    The candidates are grouped by how many query words they hold, most
    first. Within a group the relevance is one number, so the scores are
    worked out a column at a time, the formula's operations in its order
    (so the same doubles). Once ``limit`` scores are held, the
    ``limit``-th best of them, ``worst``, bounds the rest: a group whose
    relevance at importance 1 with full freshness cannot reach it is
    skipped, and within a group only the entries whose importance can
    reach it are scored (with ``seq_is_age`` a group lists its entries
    oldest first, and each band of age needs the importance that reaches
    ``worst`` with the most freshness the band can add, none for an entry a
    whole window old). Every step is a C-speed pass over the
    candidates: this is the faster search when the store is small for the
    ``limit`` (a context's). When the entries holding every query word are
    enough, and no entry holding one word fewer could reach the worst of
    them, nothing else is counted at all (a recall's best few). The words
    are counted rarest first, and once enough candidates are sure to beat
    every entry holding only the common rest, their own words are asked
    about it (``_counted``). When nearly every candidate is wanted, bounds would
    skip little, and every candidate is scored at once (``_all_scored``).

    With ``span`` (every ``seq`` is below it, and the caller found it small
    enough for sets of bits of that width: ``_counted_in_bits``), the
    postings are many and several words are asked, how many words each
    entry holds is worked out for every entry at once from the lists'
    bit sets, and the groups are listed from them, most words first, each
    without the entries too old to matter (``first_after``, which gives
    the lowest ``seq`` of an entry updated after a moment).
    """
    if limit <= 0 or not holders:
        return []
    if len(holders) > 1:
        # The entries holding every query word often are the best few on
        # their own: then nothing else needs counting. They are among the
        # holders of the rarest word.
        rarest, *others = sorted(holders.values(), key=len)
        common = set(itertools.chain.from_iterable(rarest.parts())) - left_out if len(rarest) >= limit else set()
        for other in others:
            if not common:
                break
            if 8 * len(common) < len(other):  # few left: ask the other of each
                common = set(other.having(common))
            else:
                common.intersection_update(itertools.chain.from_iterable(other.parts()))
        if len(common) >= limit:
            entries: dict[int, R] = {}
            for part in rarest.parts():
                entries.update(part)
            top = _scored_groups(
                [(len(holders), lambda since: list(map(entries.__getitem__, common)))],
                total,
                now,
                recency_window,
                limit,
            )
            if top is not None:
                return _best_first(*top, limit, seq_is_age=seq_is_age)
    if span is not None and len(holders) > 1 and _in_bits(sum(map(len, holders.values()))):
        by_count = _counted_in_bits(holders, left_out, span, first_after if seq_is_age else None)
        scored = _scored_groups(by_count, total, now, recency_window, limit, complete=True, oldest_first=seq_is_age)
        assert scored is not None  # all the groups: nothing is left to decide
        return _best_first(*scored, limit, seq_is_age=seq_is_age)
    found: dict[int, R] = {}
    counts: Mapping[int, int] | None = None
    if len(holders) == 1:  # every candidate holds the one word
        (only,) = holders.values()
        for part in only.parts():
            found.update(part)
        seqs = list(found) if not left_out else list(found.keys() - left_out)
    else:
        counts = _counted(holders, found, total, limit, left_out, 0.5 + top_importance / 2)
        seqs = list(counts.keys() - left_out) if left_out else list(counts)
    if len(seqs) <= _SCORE_ALL * limit:
        return _all_scored(found, seqs, counts, total, now, recency_window, limit, seq_is_age=seq_is_age)
    groups: list[tuple[int, Listing[R]]]

    def listed(part: list[int]) -> Listing[R]:
        def entries(since: int | float | None) -> list[R]:
            if seq_is_age:
                part.sort()  # so the group lists its entries oldest first
            return list(map(found.__getitem__, part))

        return entries

    if counts is None:
        groups = [(1, listed(seqs))]
    else:
        # The group holding the fewest words is usually the largest, and
        # once the others are scored it often cannot matter: it is split off
        # in one pass and sorted only if it is listed. The rest, sorted by
        # count, are slices.
        held = list(map(counts.__getitem__, seqs))
        fewest = min(held)
        more = list(itertools.compress(seqs, map(operator.ne, held, repeat(fewest))))
        more.sort(key=counts.__getitem__)
        more_held = list(map(counts.__getitem__, more))
        groups = [
            (count, listed(more[bisect.bisect_left(more_held, count) : bisect.bisect_right(more_held, count)]))
            for count in sorted(set(more_held), reverse=True)
        ]
        groups.append((fewest, listed(list(itertools.compress(seqs, map(operator.eq, held, repeat(fewest)))))))
    scored = _scored_groups(groups, total, now, recency_window, limit, complete=True, oldest_first=seq_is_age)
    assert scored is not None  # all the groups: nothing is left to decide
    # One group, listed oldest first, stays in age order: the bounds only leave entries out.
    return _best_first(*scored, limit, seq_is_age=seq_is_age, in_age_order=seq_is_age and len(groups) == 1)


#: Above this many postings (entries holding a query word, counted once per word), with a ``span``, they are counted in bits.
_BIT_POSTINGS = 2_048
#: A list whose entries are at least one in this many of the ``span`` keeps its bit set (``HashTable.bits``).
_KEPT_DENSITY = 32


def _in_bits(postings: int) -> bool:
    """True when a query's ``postings`` are enough to count in bits rather than one by one: a matter of cost (REC-7)."""
    return postings > _BIT_POSTINGS


def _counted_in_bits(
    holders: Mapping[str, Holding[R]],
    left_out: Set[int],
    span: int,
    first_after: Callable[[int | float], int | None] | None = None,
) -> list[tuple[int, Listing[R]]]:
    """The live holders grouped by how many query words each holds, most first, each group listed oldest ``seq`` first.

    What ``_counted`` finds for every candidate, worked out for all entries
    at once: each list is a set of bits by ``seq`` (``bitsets``), and the
    counts are their bit-sliced sum, so the cost is a few operations per
    list over ints ``span`` bits wide, however common the words. A list
    whose entries are dense in the span keeps its set between queries
    (``HashTable.bits``, carried by each change); a sparse one is laid out
    for the query alone, in a step per entry it holds. The expired
    (``left_out``) are taken out of the counts. A group is listed only when
    ``_scored_groups`` asks for it: its ``seq`` set is one ``&`` per plane
    away, and each entry is looked up in the commonest list holding it.
    With ``first_after`` (``seq`` order is age order, and it gives the
    lowest ``seq`` of an entry updated after a moment, None when none is),
    a listing that may leave out the entries updated at or before a moment
    leaves out every lower ``seq`` before looking any up.
    """
    tables = sorted(holders.values(), key=len, reverse=True)  # the commonest first: most entries found in it
    sets = [
        table.bits()
        if len(table) * _KEPT_DENSITY >= span
        else bitsets.bits_of(itertools.chain.from_iterable(table.parts()))
        for table in tables
    ]
    planes = bitsets.planes_of(sets)
    if left_out:
        live = ~bitsets.bits_of(left_out)
        planes = [plane & live for plane in planes]

    def listed(count: int) -> Listing[R]:
        def entries(since: int | float | None) -> list[R]:
            group = bitsets.with_count(planes, count)
            if since is not None and first_after is not None:
                first = first_after(since)
                group = 0 if first is None else group >> first << first
            rest = group
            found: dict[int, R] = {}
            for table, bits in zip(tables, sets, strict=True):
                if not rest:
                    break
                mine = rest & bits
                if mine:
                    seqs = bitsets.members(mine)
                    found.update(zip(seqs, table.values_of(seqs), strict=True))
                    rest ^= mine
            return list(map(found.__getitem__, bitsets.members(group)))

        return entries

    return [(count, listed(count)) for count in range(len(tables), 0, -1)]


def _counted(
    holders: Mapping[str, Holding[R]],
    found: dict[int, R],
    total: int,
    limit: int,
    left_out: Set[int],
    top_weight: float = 1.0,
) -> Mapping[int, int]:
    """How many query words each candidate that may make the best ``limit`` holds, by ``seq``; ``found`` gets them.

    MaxScore over REC-2 (``maxscore.term_at_a_time``, REC-7): the words'
    holders are read rarest first, and each word a candidate holds adds one
    to its count. An entry held by none of the lists read so far holds at
    most the ``rest`` unread words, so it scores at most
    ``score(rest / total, top, 1)`` (the highest stored importance, whose
    ``0.5 + top / 2`` is ``top_weight``, and freshness at its most:
    ``_unseen_bound``). The floor is the ``limit``-th best of the live
    candidates' scores without their freshness, at the words counted so far
    (``_floor``): a score never falls as the count grows, nor when
    freshness (>= 0) is added. Once the bound is strictly below the floor,
    the unread words are non-essential: their lists are not read, only
    asked about the candidates that can still reach the floor holding every
    unread word; the others are dropped (they score below it).
    """
    order = sorted(holders.values(), key=len)  # the rarest first
    counts: Counter[int] = Counter()
    met: list[int] = []  # the candidates the unread lists are asked about, once closed

    def read(i: int) -> None:
        parts = order[i].parts()
        for part in parts:
            found.update(part)
        counts.update(itertools.chain.from_iterable(parts))

    def closed(i: int) -> bool:
        rest = len(order) - i
        if not i or len(counts) < limit or not _worth_closing(sum(map(len, order[i:])), len(counts)):
            return False
        bound = _unseen_bound(rest, total, top_weight)
        floor = _floor(counts, found, total, limit, left_out, above=bound)
        if floor is None or not bound < floor:
            return False
        # A candidate holding ``held`` counted words scores at most score((held + rest) / total, top, 1).
        need = next(held for held in itertools.count(1) if _unseen_bound(held + rest, total, top_weight) >= floor)
        met.extend(itertools.compress(counts.keys(), map(operator.ge, counts.values(), repeat(need))))
        kept = {seq: counts[seq] for seq in met}
        counts.clear()
        counts.update(kept)
        return True

    def probe(i: int) -> None:
        counts.update(order[i].having(met))

    term_at_a_time(len(order), read, probe, closed)
    return counts


def _worth_closing(unread: int, met: int) -> bool:
    """True when the ``unread`` lists hold at least as many postings as the candidates ``met``.

    Only then can asking them about each candidate cost less than reading
    them, so only then is the floor worked out. A matter of cost, never of
    the result (REC-7).
    """
    return unread >= met


def _unseen_bound(held: int, total: int, top_weight: float = 1.0) -> float:
    """The most an entry holding at most ``held`` of ``total`` query words can score: ``score(held / total, top, 1)`` (REC-7).

    ``top_weight`` is ``0.5 + top / 2`` of an importance ``top`` no
    candidate's is above (1.0 for importance 1, exactly), and freshness is
    at most 1; each IEEE operation of the score never falls as its operands
    grow, so no such entry scores above this.
    """
    return held / total * top_weight + FRESHNESS_BONUS * 1.0


def _floor(
    counts: Mapping[int, int], found: Mapping[int, R], total: int, limit: int, left_out: Set[int], *, above: float
) -> float | None:
    """A floor of the ``limit``-th best final score: the ``limit``-th best live ``count / total * (0.5 + importance / 2)``.

    Each is a real entry's score at fewer or as many words and without its
    freshness, so at most its final score; the ``limit``-th best of them is
    at most the final ``limit``-th best. Only the candidates whose count
    could put them ``above`` are worked out (the others are at most it);
    None when fewer than ``limit`` of them are live.
    """
    fewest = next((held for held in range(1, total + 1) if held / total * 1.0 > above), None)
    if fewest is None:
        return None
    seqs = list(itertools.compress(counts.keys(), map(operator.ge, counts.values(), repeat(fewest))))
    if left_out:
        seqs = [seq for seq in seqs if seq not in left_out]
    if len(seqs) < limit:
        return None
    ratios = map(operator.truediv, map(counts.__getitem__, seqs), repeat(total))
    weights = map(
        operator.add, repeat(0.5), map(operator.truediv, map(_importance, map(found.__getitem__, seqs)), repeat(2))
    )
    return kth_largest(map(operator.mul, ratios, weights), limit)


def _all_scored(
    found: Mapping[int, R],
    seqs: list[int],
    counts: Mapping[int, int] | None,
    total: int,
    now: int | float,
    recency_window: int | float,
    limit: int,
    *,
    seq_is_age: bool,
) -> list[tuple[float, R]]:
    """The best ``limit`` of the entries ``found[seq]`` for ``seqs``, each holding ``counts[seq]`` query words (or one).

    When nearly every candidate is wanted (a context's ranking in a small
    store), bounds would skip little: every candidate is scored, with the
    formula's operations in its order, and one stable sort of the
    candidates laid out oldest first puts them best first.
    """
    if seq_is_age:
        seqs.sort()
        entries = list(map(found.__getitem__, seqs))
    else:
        entries = sorted(map(found.__getitem__, seqs), key=_age)
    relevances = (
        repeat(1 / total)
        if counts is None
        else map(operator.truediv, map(counts.__getitem__, map(_seq, entries)), repeat(total))
    )
    importances, updated = map(_importance, entries), map(_updated, entries)
    scores = _scores(relevances, importances, updated, now, recency_window, in_age_order=True)
    return _best_first(entries, scores, limit, seq_is_age=seq_is_age, in_age_order=True)


def _scored_groups(
    groups: list[tuple[int, Listing[R]]],
    total: int,
    now: int | float,
    recency_window: int | float,
    limit: int,
    *,
    complete: bool = False,
    oldest_first: bool = False,
) -> tuple[list[R], list[float]] | None:
    """The entries of ``groups`` (most query words held first) that can make the best ``limit``, with their scores.

    A group is a number of query words held and a function listing the
    entries that hold that many, called only when the group can matter
    (and told the latest moment at or before which none can: with the
    most importance, 1, and the most freshness left then, they score below
    the ``limit``-th best held, so a listing may leave them out);
    ``oldest_first`` says that it lists them in age order, so that the
    entries of each band of age (see :func:`_freshness_caps`) are a slice,
    held to the bound with the most freshness that their band can add.

    Without ``complete`` the groups are only the first of all: None when an
    entry holding one word fewer could still make the best ``limit``.
    """
    weight, window = FRESHNESS_BONUS, recency_window
    full_bonus = weight * 1.0
    kept: list[R] = []
    scores: list[float] = []
    worst = -math.inf
    caps = _freshness_caps(now, window) if oldest_first else []
    for words_held, listed in groups:
        ratio = words_held / total  # the relevance of every entry in the group
        if ratio * 1.0 + full_bonus < worst:  # importance is at most 1
            continue
        since = None
        if worst > -math.inf:
            for moment, cap in caps:  # oldest first: the caps only grow
                if not ratio * 1.0 + cap < worst:
                    break
                since = moment
        group = listed(since)
        importances = list(map(_importance, group))
        # A score is at least its weight. So with fewer than ``limit`` kept,
        # the kept and the best weights of this group bound the ``limit``-th
        # best score from below before any is worked out.
        wanted = limit - len(kept) if worst == -math.inf else limit
        bound = worst
        if len(group) >= wanted:
            floor = ratio * (0.5 + sorted(importances)[-wanted] / 2)
            bound = max(worst, min(floor, min(scores, default=math.inf)))
        if bound > -math.inf:
            # ratio * (0.5 + importance / 2) + full_bonus >= bound needs at least this importance;
            # the margin keeps every entry that rounding could let through.
            can: list[bool] = []
            start = 0
            for moment, cap in caps:
                # The older entries lead the group, and freshness can add less to
                # them: ratio * (0.5 + importance / 2) + cap >= bound.
                end = bisect.bisect_right(group, moment, key=_updated, lo=start)
                least = 2 * ((bound - cap) / ratio - 0.5) - 1e-6
                can += map(operator.ge, importances[start:end], repeat(least))
                start = end
            least = 2 * ((bound - full_bonus) / ratio - 0.5) - 1e-6
            can += map(operator.ge, importances[start:], repeat(least))
            group, importances = list(itertools.compress(group, can)), list(itertools.compress(importances, can))
        scored = _scores(repeat(ratio), importances, map(_updated, group), now, window, in_age_order=oldest_first)
        if worst > -math.inf:  # only the entries that can still make the best ``limit``
            can = list(map(operator.ge, scored, repeat(worst)))
            group, scored = list(itertools.compress(group, can)), list(itertools.compress(scored, can))
        kept += group
        scores += scored
        worst = _keep_best(kept, scores, limit)
    if not complete and (groups[-1][0] - 1) / total * 1.0 + full_bonus >= worst:
        return None
    return kept, scores


def _freshness_caps(now: int | float, recency_window: int | float, bands: int = 8) -> list[tuple[int, float]]:
    """Moments, oldest first, each with the most ``FRESHNESS_BONUS * freshness`` of an entry updated at or before it (RET-1).

    The moments split the last window into ``bands`` bands of age. Freshness
    never falls as ``updated_at`` grows, and each cap is the scorer's own
    formula at its moment, so it bounds every older entry's exactly. With
    integer milliseconds the moments are integers and every step is exact;
    with a float clock or window there are no bands (every entry may have
    all of the bonus), as rounding could then break the bound.
    """
    if not (type(now) is int and type(recency_window) is int):
        return []
    weight = FRESHNESS_BONUS
    caps = []
    for band in range(bands, 0, -1):
        at = now - recency_window * band // bands
        f = 1 - (now - at if now > at else 0) / recency_window
        caps.append((at, weight * (f if f > 0 else 0.0)))
    return caps


def _scores(
    relevances: Iterable[float],
    importances: Iterable[float],
    updated: Iterable[int | float],
    now: int | float,
    recency_window: int | float,
    *,
    in_age_order: bool = False,
) -> list[float]:
    """``score`` of each entry, its freshness (RET-1) written out: the same operations in the same order, so the same doubles.

    The searches work out many scores at once; one comprehension does it
    without a call per entry. ``importances`` and ``updated`` set the length.
    ``in_age_order`` says the entries are oldest first: then the stale ones
    (freshness 0) lead, found by bisection, and their score is the
    relevance term alone. That term is positive (a relevance above 0 times
    at least 0.5), and adding ``FRESHNESS_BONUS * 0.0`` to a positive
    number leaves it as it is.
    """
    weight, window = FRESHNESS_BONUS, recency_window
    scores: list[float] = []
    if in_age_order:
        importances, updated, relevances = list(importances), list(updated), iter(relevances)

        def fresh(at: int | float) -> bool:
            return at >= now or 1 - (now - at) / window > 0

        stale = bisect.bisect_left(updated, True, key=fresh)
        # The lists first: zip stops at the stale end without taking one relevance too many.
        stale_ones = zip(importances[:stale], relevances, strict=False)
        scores = [relevance * (0.5 + importance / 2) for importance, relevance in stale_ones]
        importances, updated = importances[stale:], updated[stale:]
    scores += [
        relevance * (0.5 + importance / 2)
        + weight * (f if (f := 1 - (now - at if now > at else 0) / window) > 0 else 0.0)
        for relevance, importance, at in zip(relevances, importances, updated, strict=False)
    ]
    return scores


def _best_first(
    held: list[R], scores: list[float], limit: int, *, seq_is_age: bool, in_age_order: bool = False
) -> list[tuple[float, R]]:
    """The best ``limit`` of ``held`` with their scores, best first, equal scores newer first (REC-3).

    Laid out oldest first (``in_age_order`` says ``held`` already is), a
    stable sort by score keeps equal scores oldest first; reversed, that is
    best first and newer first.
    """
    order: list[int] | range = range(len(held))
    if not in_age_order:
        ages = list(map(_seq if seq_is_age else _age, held))
        order = sorted(order, key=ages.__getitem__)
    order = sorted(order, key=scores.__getitem__)
    order.reverse()
    return [(scores[i], held[i]) for i in order[:limit]]


def _keep_best(held: list[R], scores: list[float], limit: int) -> float:
    """The ``limit``-th best score held (-inf while fewer are held); drops, in place, entries below it."""
    if len(held) < limit:
        return -math.inf
    worst = sorted(scores)[-limit]
    if len(held) > 2 * limit:  # drop what can no longer make it, keeping the order
        keep = list(map(operator.ge, scores, repeat(worst)))
        held[:] = itertools.compress(held, keep)
        scores[:] = itertools.compress(scores, keep)
    return worst
