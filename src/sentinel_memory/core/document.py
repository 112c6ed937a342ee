"""The saved document: what a store holds, and how a loaded one is checked (PER-1, PER-5 .. PER-7, PER-12).

::

    {"version": 1, "generation": n, "ranking": "bm25",
     "entries": [{"key": ..., "data": ..., "importance": ...,
                  "createdAt": ..., "updatedAt": ..., "expiresAt": ... | null}, ...],
     "working": {"data": {...}, "updatedAt": ... | null}}

Entries are listed oldest first and a load restores that order. Expired
entries that are still stored are saved too; a load keeps them invisible
until the next compaction reports them. ``ranking`` names the memory's
ranking when it is not the article's (BM-10): a document without one was
ranked by words.

Loading is strict about the *document* and forgiving about *entries*: a
document that is not an object, has no list of entries or an unknown version
raises ``DamagedStoreError`` (a ``ValueError``),
since silently starting from zero would be amnesia that looks like success.
A single invalid entry (importance 2, an empty key, ``expiresAt: "soon"``,
data nested too deep) is dropped and counted, not repaired.
"""

from __future__ import annotations

import math
import operator
from itertools import repeat
from typing import Any

import attrs

from .errors import DamagedStoreError
from .jsondata import clone, copy_json, is_json_text
from .options import is_number
from .shown import shown
from .state import MemoryState
from .values import RANKINGS, Entry, LoadResult, Working, ranking_name

_key = operator.attrgetter("key")

__all__ = [
    "VERSION",
    "declared_generation",
    "dump",
    "generation_of",
    "parse",
    "problem",
    "ranking_name",
    "ranking_problem",
    "record",
    "saved_ranking",
    "working_record",
]

#: PER-1: the only document version this release reads and writes.
VERSION = 1


def dump(state: MemoryState, *, generation: int | None = None) -> dict[str, Any]:
    """The document for ``state``: entries oldest first, working memory, as fresh copies (PER-1, PER-12).

    With ``generation``, the document carries it right after the version
    (MW-1), where a store can read it without parsing the rest.
    """
    document: dict[str, Any] = {"version": VERSION}
    if generation is not None:
        document["generation"] = generation
    ranking = ranking_name(state.config.ranking)
    if ranking != "words":
        document["ranking"] = ranking
    document["entries"] = [record(e) for e in state.index.all_by_age()]
    document["working"] = working_record(state.working)
    return document


def saved_ranking(document: object) -> object:
    """The ranking a loaded document was saved with (BM-10): its ``ranking``, ``"words"`` when it has none."""
    return document.get("ranking", "words") if isinstance(document, dict) else "words"


def ranking_problem(saved: object, ranking: object) -> str | None:
    """What a load under ``ranking`` of a document saved with ``saved`` warns, or None when they agree (BM-11).

    ``saved`` is ``saved_ranking``'s value, ``ranking`` the memory's after
    the load (a name or the app's function).
    """
    name = ranking_name(ranking)
    if saved == name:
        return None
    if saved == "function":
        why = "the app's own ranking function, which a document cannot hold"
    elif isinstance(saved, str) and saved in RANKINGS:
        why = f"ranking {saved!r}"
    else:
        why = f"a ranking this release does not know, {shown(saved)}"
    return (
        f"was saved with {why}; this memory ranks by {name!r}, and its next save stores {name!r}. "
        f"Pass create_memory(ranking=...) to choose the ranking"
    )


def record(entry: Entry) -> dict[str, Any]:
    """One entry as the article's JSON, with its own copy of the data (PER-1)."""
    return entry.to_dict()


def working_record(working: Working) -> dict[str, Any]:
    """The working memory as saved (PER-1, L1-4)."""
    return {"data": clone(dict(working.data)), "updatedAt": working.updated_at}


def declared_generation(document: object) -> int | None:
    """The generation a document to be saved declares, or None when it declares none (MW-3: then no check)."""
    return generation_of(document) if isinstance(document, dict) and "generation" in document else None


def generation_of(document: object) -> int:
    """A document's generation: 0 when it has none, or is no document (MW-1)."""
    value = _whole(document.get("generation", 0) if isinstance(document, dict) else 0)
    return value if value is not None and value >= 0 else 0


def _whole(value: object) -> int | None:
    """``value`` as an int when it is a whole number (``2`` or ``2.0``: JSON cannot tell them apart), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def parse(document: object, *, first_seq: int) -> tuple[list[Entry], Working, LoadResult]:
    """Check a loaded document; return its valid entries in file order (PER-5 .. PER-7).

    ``None`` (nothing stored yet) is an empty memory. The entries kept get
    sequence numbers ``first_seq, first_seq + 1, ...`` in file order, with
    no gaps where dropped ones stood (PER-19), so a state loaded from a
    damaged document is the state its clean entries alone would load to. A
    key that appears twice keeps its later entry and counts the earlier one
    as dropped.
    """
    if document is None:
        return [], Working(), LoadResult(loaded=0, dropped=0)
    found = problem(document)
    if found is not None:
        raise DamagedStoreError(found)
    assert isinstance(document, dict)  # problem() said so
    working, working_dropped = _working(document.get("working"))
    raw_entries = document["entries"]

    checked = _checked(raw_entries, first_seq)
    # Every entry valid and no key twice. Asked with ``is not``, not ``in``:
    # an Entry's ``==`` is Python code, which ``in`` would call once per entry.
    if all(map(operator.is_not, checked, repeat(None))) and len(set(map(_key, checked))) == len(checked):
        entries: list[Entry] = checked  # type: ignore[assignment]  # no None in it
        return entries, working, LoadResult(loaded=len(entries), dropped=0, working_dropped=working_dropped)
    by_key: dict[str, Entry] = {}
    dropped = 0
    for entry in checked:
        if entry is None:
            dropped += 1
            continue
        if entry.key in by_key:
            dropped += 1  # the earlier duplicate
            del by_key[entry.key]
        by_key[entry.key] = entry
    # Renumbered: the kept entries had their positions among *all* raw
    # entries, and the next remember's seq (first_seq + len(entries)) must
    # be above every one of them (PER-19).
    entries = [attrs.evolve(entry, seq=seq) for seq, entry in enumerate(by_key.values(), first_seq)]
    return entries, working, LoadResult(loaded=len(entries), dropped=dropped, working_dropped=working_dropped)


def _checked(raws: list[Any], first_seq: int) -> list[Entry | None]:
    """Each raw entry as an entry, or None where it is invalid (PER-6), in file order.

    All of them are checked together first; when some are invalid, each
    half is checked again, so the valid stretches of a damaged document
    still take the C-speed check.
    """
    entries = _all_valid(raws, first_seq)
    if entries is not None:
        return list(entries)
    if len(raws) == 1:
        return [None]
    half = len(raws) // 2
    return _checked(raws[:half], first_seq) + _checked(raws[half:], first_seq + half)


def problem(document: object) -> str | None:
    """What makes ``document`` not a memory document, or None when it is one (PER-5).

    The store that read it adds where it came from; see
    [`DamagedStoreError`][sentinel_memory.core.errors.DamagedStoreError].
    """
    if not isinstance(document, dict):
        return f"a memory document must be a JSON object, got {type(document).__name__}"
    version = document.get("version")
    if isinstance(version, bool) or version != VERSION:
        return f"unknown memory document version {shown(version)}; this release reads version {VERSION}"
    if not isinstance(document.get("entries"), list):
        return "a memory document needs a list of entries"
    generation = _whole(document.get("generation", 0))
    if generation is None or generation < 0:
        return f"a memory document's generation must be a whole number >= 0, got {shown(document.get('generation'))}"
    return None


def _all_valid(raws: list[Any], first_seq: int) -> list[Entry] | None:
    """Every entry, when all of them are valid (PER-6); else None.

    The checks are made a field at a time over all entries, at C speed: a
    saved memory is almost always valid throughout, and a load of 100,000
    entries should not pay a Python-level check per field.
    """
    if set(map(type, raws)) - {dict}:
        return None
    get: Any = dict.get  # the columns are Any: checked below
    count = len(raws)
    keys: list[Any] = list(map(get, raws, repeat("key")))
    if set(map(type, keys)) - {str} or not all(keys):
        return None
    if not all(map(operator.contains, raws, repeat("data"))):
        return None
    importances: list[Any] = list(map(get, raws, repeat("importance")))
    created = list(map(get, raws, repeat("createdAt")))
    updated = list(map(get, raws, repeat("updatedAt")))
    expires = list(map(get, raws, repeat("expiresAt")))
    if not (_numbers(importances) and _numbers(created) and _numbers(updated)):
        return None
    if not _numbers([value for value in expires if value is not None]):
        return None
    if raws and not (0 <= min(importances) and max(importances) <= 1):
        return None
    data = list(map(operator.getitem, raws, repeat("data")))
    texts = [value for value in data if type(value) is str]
    if not (is_json_text("".join(keys)) and is_json_text("".join(texts))):
        return None
    if len(texts) < count:  # dicts, lists and scalars: checked and copied one by one
        try:
            data = [value if type(value) is str else copy_json(value) for value in data]
        except (TypeError, ValueError):
            return None
    return Entry.many(keys, data, importances, created, updated, expires, first_seq)


def _numbers(column: list[Any]) -> bool:
    """True when every value is a plain int or float that is finite as a double (NUM-1), as ``is_number`` says."""
    if set(map(type, column)) - {int, float}:
        return False
    try:
        return all(map(math.isfinite, column))
    except OverflowError:  # an int beyond the double range
        return False


def _working(raw: object) -> tuple[Working, bool]:
    """The saved working memory, and whether a damaged one was dropped for the empty one (PER-7, PER-20).

    Nothing saved (no ``working``, or null) and the empty working memory
    (``{"data": {}, "updatedAt": null}``, never set or cleared) drop nothing.
    """
    if raw is None:
        return Working(), False
    if not isinstance(raw, dict):
        return Working(), True
    data, updated_at = raw.get("data"), raw.get("updatedAt")
    if isinstance(data, dict) and not data and not is_number(updated_at):  # nothing to lose, whatever its time says
        return Working(), False
    if not isinstance(data, dict):
        return Working(), True
    try:
        data = copy_json(data)
    except (TypeError, ValueError):
        return Working(), True
    # updatedAt null means never set or cleared, which only an empty dict
    # matches; anything else inconsistent loads as the empty working memory.
    if not is_number(updated_at):
        return Working(), True
    return Working(data, updated_at), False
