"""Persistence, as values: the document a store saves and loads, and the changes between two states (PER-*)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from . import document as _document
from .basics import _check_now, _with_entries
from .bm25 import MissingStemmerError
from .entries import compact
from .index import Index
from .state import MemoryState, largest_turn
from .table import Table
from .values import (
    RANKINGS,
    Changes,
    Compaction,
    LoadResult,
    by_age,
)


def to_document(state: MemoryState, *, generation: int | None = None) -> dict[str, Any]:
    """The JSON document ``save()`` writes (PER-1, PER-12, MW-1); see ``sentinel_memory.core.document``.

    It holds the entries (expired ones not yet compacted too), the working
    memory and the ranking's name when it is not ``"words"`` (BM-10); the
    cache, the counters and the rest of the config are not saved.

    Args:
        state: The memory state to write out.
        generation: The generation to stamp on the document (MW-1). Defaults to None (none stamped).

    Returns:
        A new dict of JSON values.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> document = core.to_document(state)
        >>> document["version"], [entry["key"] for entry in document["entries"]]
        (1, ['user:name'])
    """
    return _document.dump(state, generation=generation)


def changes(before: MemoryState, after: MemoryState, keys: Iterable[str], *, generation: int = 0) -> Changes:
    """What a store must write to turn ``before`` into ``after`` (MW-4).

    ``keys`` are the keys the change may have touched (the one remembered or
    forgotten, and every key its compaction dropped); only they are looked
    at, so describing a change costs nothing per stored entry. An entry is
    rewritten when it is not the very same value as before.

    Args:
        before: The state the store holds.
        after: The state to save.
        keys: The keys the change may have touched.
        generation: The generation the change is saved as (MW-1). Defaults to 0.

    Returns:
        A ``Changes`` with the entries to write (``upserts``), the keys to delete (``deletes``),
        the new working memory (None when unchanged) and the ``generation``.

    Examples:
        >>> before, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> after, _ = core.remember(before, "b", 2, now=2000)
        >>> delta = core.changes(before, after, ["b"], generation=2)
        >>> [entry.key for entry in delta.upserts], delta.deletes, delta.generation
        (['b'], (), 2)
    """
    upserts, deletes = [], []
    for key in dict.fromkeys(keys):
        entry = after.entries.get(key)
        if entry is None:
            if key in before.entries:
                deletes.append(key)
        elif before.entries.get(key) is not entry:
            upserts.append(entry)
    upserts.sort(key=by_age)
    working = None if after.working is before.working else after.working
    return Changes(tuple(upserts), tuple(deletes), working, generation)


def from_document(
    state: MemoryState, document: object, *, now: int | float, adopt: bool = False
) -> tuple[MemoryState, LoadResult, Compaction]:
    """Replace entries and working memory with a loaded document (PER-3 .. PER-8, BM-11).

    The cache, the counters and the config stay; with ``adopt`` (a memory
    made without a ``ranking``), the config takes the document's ranking,
    ``"words"`` when it names none or one no name can bring back (the app's
    function, an unknown name). Invalid entries are dropped
    and counted, not raised. A store that holds more than ``limit`` is
    compacted like any automatic compaction, and what that dropped comes back
    as the ``Compaction``.

    Args:
        state: The memory state to load into; it is not modified.
        document: The loaded document, as ``to_document`` writes it; None for an empty store.
        now: The current time, milliseconds since the epoch (a finite number).
        adopt: Rank by the document's ranking (BM-11). Defaults to False (the config's stays).

    Returns:
        ``(state, result, compaction)``, the new state, the ``LoadResult`` (counts of loaded,
        dropped and compacted entries) and what the compaction dropped.

    Raises:
        TypeError: ``now`` is not a finite number.
        DamagedStoreError: The document is not a memory (not a dict, an unknown version, ...).
        MissingStemmerError: With ``adopt``, the document was saved with ``"bm25"`` and the Snowball
            stemmer (the ``bm25`` extra) is not installed.

    Examples:
        >>> saved, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, result, dropped = core.from_document(MemoryState(), core.to_document(saved), now=2000)
        >>> core.get(state, "user:name", now=2000), result.loaded, result.dropped
        ('Jakub', 1, 0)
    """
    _check_now(now)
    entries, working, result = _document.parse(document, first_seq=state.next_seq)
    if adopt:
        state = _adopted(state, _document.saved_ranking(document))
    state = _with_entries(
        state,
        Table(entries),
        Index.of(entries),
        working=working,
        next_seq=state.next_seq + len(entries),
        turns=max(state.turns, largest_turn(entry.key for entry in entries)),
    )
    dropped = Compaction()
    if len(entries) > state.config.limit:
        state, dropped = compact(state, now=now)
        result = attrs.evolve(result, compacted=len(dropped.expired) + len(dropped.evicted))
    return state, result, dropped


def _adopted(state: MemoryState, saved: object) -> MemoryState:
    """``state`` ranked by the ranking a document was saved with, when a name can bring it back, else by words (BM-11)."""
    ranking = saved if isinstance(saved, str) and saved in RANKINGS else "words"
    if state.config.ranking == ranking:
        return state
    try:
        config = attrs.evolve(state.config, ranking=ranking)
    except MissingStemmerError as error:
        raise MissingStemmerError(
            f'the memory was saved with ranking="bm25"; {error}, or pass ranking="words" to rank it by words'
        ) from error
    return attrs.evolve(state, config=config)
