"""A LangGraph long-term memory store over per-namespace memories (LG-1 .. LG-6): ``SentinelStore``.

LangGraph keeps long-term memory in a ``BaseStore``: items (a dict value
under a key) in namespaces (tuples of strings), with ``put``, ``get``,
``search``, ``delete`` and ``list_namespaces``, sync and async. This store
keeps each namespace as one memory of a ``MemoryFolder``, so what LangGraph's
own stores do not have comes with it:

* a bound per namespace, ``limit`` items, evicting the least important first
  (an item's ``importance`` field, 0.5 unless given) when it is reached (LG-3);
* expiry exact to the millisecond and absolute: an item lives ``ttl``
  minutes from its ``put``, or until the time its ``expires_at`` field names,
  and a read does not extend it unless asked to (LG-4);
* recall by words for ``search(query=...)``, ranked as the memory ranks them
  (REC-2), with no embeddings to configure (LG-5);
* a plain JSON file per namespace that survives restarts and is shared
  safely by several processes (``MemoryFolder``'s ``shared`` memories, MW-6).

It needs the ``[langgraph]`` extra (``pip install 'sentinel-memory[langgraph]'``);
``import sentinel_memory`` never imports it.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
    )
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sentinel_memory.integrations.langgraph needs LangGraph: pip install 'sentinel-memory[langgraph]'"
    ) from error

from ..core.jsondata import copy_json
from ..core.options import is_number
from ..core.values import Entry, Ranking
from ..folder import MemoryFolder
from ..memory import Memory, wall_clock

__all__ = ["SentinelStore"]

#: The memory that lists the namespaces; no namespace's id can be this (theirs are JSON arrays).
REGISTRY = "sentinel-memory:langgraph-namespaces"

#: Minutes, as LangGraph counts a ttl, in the memory's milliseconds.
MINUTE_MS = 60_000


def _namespace_id(namespace: tuple[str, ...]) -> str:
    """The folder's id of a namespace: its JSON array, so two namespaces never share one (LG-1)."""
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def _check_namespace(namespace: object) -> tuple[str, ...]:
    if not isinstance(namespace, tuple) or not namespace or not all(isinstance(p, str) and p for p in namespace):
        raise ValueError(f"a namespace is a non-empty tuple of non-empty strings, got {namespace!r}")
    return namespace


def _when(ms: int | float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


class SentinelStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are memories of a ``MemoryFolder`` (LG-1).

    Pass it wherever LangGraph takes a store: ``graph.compile(store=...)`` or
    ``create_agent(..., store=...)``; nodes and tools reach it as
    ``runtime.store``. Values are JSON objects; an ``importance`` in [0, 1] in
    a value ranks the item for eviction, and an ``expires_at`` (milliseconds
    since the epoch) gives it an absolute expiry.

    Args:
        path: The folder: one JSON file per namespace, and one listing them.
        limit: The most items a namespace keeps; past it the least important go first. Defaults
            to 1000.
        ttl: A ``TTLConfig``: ``default_ttl`` minutes for items put without a ttl, and
            ``refresh_on_read`` (default False: expiry is absolute). Defaults to None.
        clock: Returns the time in milliseconds since the epoch. Defaults to the wall clock.
        ranking: How ``search`` ranks items for a query (BM-9). Defaults to ``"bm25"`` (BM25 with stop
            words and English stems, so "lives" finds "live"); ``"words"`` is REC-2's share of query words.

    Examples:
        >>> store = SentinelStore(tmp / "graph-store", limit=100)
        >>> store.put(("users", "42"), "diet", {"text": "vegetarian", "importance": 0.9})
        >>> store.get(("users", "42"), "diet").value["text"]
        'vegetarian'
        >>> [item.key for item in store.search(("users",), query="vegetarian")]
        ['diet']
        >>> store.list_namespaces(prefix=("users",))
        [('users', '42')]
    """

    supports_ttl = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        limit: int | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], int | float] | None = None,
        ranking: Ranking | None = "bm25",
    ) -> None:
        self._clock = clock or wall_clock
        self.folder = MemoryFolder(path, limit=limit, clock=self._clock, autosave=True, shared=True, ranking=ranking)
        self.ttl_config = TTLConfig(refresh_on_read=False, omit_expired=True, **(ttl or {}))
        self._memories: dict[tuple[str, ...], Memory] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentinelStore({str(self.folder.path)!r})"

    # -- the memories ------------------------------------------------------------------------

    def _memory(self, namespace: tuple[str, ...]) -> Memory:
        with self._lock:
            memory = self._memories.get(namespace)
            if memory is None:
                memory = self._memories[namespace] = self.folder.open(_namespace_id(namespace))
            return memory

    def _registry(self) -> Memory:
        with self._lock:
            memory = self._memories.get(())
            if memory is None:
                memory = self._memories[()] = self.folder.open(REGISTRY, limit=10**9)
            return memory

    @staticmethod
    def _current(memory: Memory) -> Memory:
        """The memory as another process may have saved it: a transaction reloads only when it must (MW-6)."""
        with memory.transaction():
            return memory

    def _namespaces(self) -> list[tuple[str, ...]]:
        registry = self._current(self._registry())
        return [tuple(entry.data) for entry in registry.get_recent(len(registry))]

    # -- the operations ----------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's operations in order; each result in its place (LG-1 .. LG-5).

        Every operation is checked before any runs (its namespace and key, a
        put's value, ttl and ``expires_at``, a search's filter, a listing's
        conditions), so a bad one raises and nothing of the batch has
        happened (LG-1, LG-7).
        """
        ops = list(ops)
        for i, op in enumerate(ops):
            if isinstance(op, (GetOp, PutOp)):
                _check_namespace(op.namespace)
                if not isinstance(op.key, str) or not op.key:
                    raise ValueError(f"a key is a non-empty str, got {op.key!r}")
                if isinstance(op, PutOp):
                    _check_put(op, f"ops[{i}]")
            elif isinstance(op, SearchOp):
                if op.filter is not None:
                    if not isinstance(op.filter, dict):
                        raise TypeError(f"ops[{i}]: a search filter is a dict, got {type(op.filter).__name__}")
                    _check_filter(op.filter)
            elif isinstance(op, ListNamespacesOp):
                for condition in op.match_conditions or ():
                    if condition.match_type not in ("prefix", "suffix"):
                        raise ValueError(f"match_type is 'prefix' or 'suffix', got {condition.match_type!r}")
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            else:
                results.append(self._list(op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread, so the files' I/O never blocks the event loop (LG-6)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _get(self, op: GetOp) -> Item | None:
        memory = self._current(self._memory(op.namespace))
        entry = memory.get_entry(op.key)
        if entry is None:
            return None
        if op.refresh_ttl:
            entry = self._refreshed(memory, entry)
        item: Item = _item(op.namespace, entry, Item)
        return item

    def _put(self, op: PutOp) -> None:
        memory = self._memory(op.namespace)
        if op.value is None:
            memory.forget(op.key)
            return
        given = op.value.get("importance")
        # An importance outside [0, 1] is the memory's number rule: the default, with a warning (NUM-5).
        importance: float | None = given if is_number(given) else None
        ttl_ms = None
        if op.ttl is not None:
            ttl_ms = op.ttl * MINUTE_MS
        expires_at = op.value.get("expires_at")
        if expires_at is not None:
            left = expires_at - self._clock()
            if left <= 0:  # already past: the put would store nothing anyone could read (LG-4)
                memory.forget(op.key)
                return
            ttl_ms = left if ttl_ms is None else min(ttl_ms, left)
        memory.remember(
            op.key,
            dict(op.value),
            importance=importance,
            ttl=ttl_ms,
        )
        self._register(op.namespace)

    def _register(self, namespace: tuple[str, ...]) -> None:
        registry = self._registry()
        name = _namespace_id(namespace)
        if name not in self._current(registry):
            registry.remember(name, list(namespace), importance=1)

    def _refreshed(self, memory: Memory, entry: Entry) -> Entry:
        """LG-4: a read asked to refresh re-stamps an expiring item with the span it was put with."""
        if entry.expires_at is None:
            return entry
        span = entry.expires_at - entry.updated_at
        return memory.remember(entry.key, entry.data, ttl=span) if span > 0 else entry

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        found: list[tuple[float, int | float, SearchItem]] = []
        for namespace in self._namespaces():
            if namespace[: len(prefix)] != prefix:
                continue
            memory = self._current(self._memory(namespace))
            if op.query:
                scored = [(hit.score, hit.entry) for hit in memory.recall(op.query, limit=len(memory))]
            else:
                scored = [(0.0, entry) for entry in memory.get_recent(len(memory))]
            for score, hit in scored:
                data = hit.data if isinstance(hit.data, dict) else {}
                if op.filter and not all(_matches(data.get(k), v) for k, v in op.filter.items()):
                    continue
                entry = self._refreshed(memory, hit) if op.refresh_ttl else hit
                item = _item(namespace, entry, SearchItem)
                item.score = score if op.query else None
                found.append((score, entry.updated_at, item))
        # Best score first (LG-5); without a query, the newest first; ties keep the namespace order.
        found.sort(key=lambda row: (-row[0], -row[1]))
        return [item for _, _, item in found[op.offset : op.offset + op.limit]]

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [ns for ns in self._namespaces() if len(self._current(self._memory(ns)))]
        if op.match_conditions:
            namespaces = [ns for ns in namespaces if all(_match_path(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            namespaces = [ns[: op.max_depth] for ns in namespaces]
        return sorted(set(namespaces))[op.offset : op.offset + op.limit]

    def close(self) -> None:
        """Close every memory this store opened (WRP-5); nothing is lost, and a later call opens them again."""
        with self._lock:
            memories, self._memories = list(self._memories.values()), {}
        for memory in memories:
            memory.close()


def _check_put(op: PutOp, where: str) -> None:
    """A put's value, ttl and ``expires_at``, checked before any operation of its batch runs (LG-7)."""
    if op.value is None:
        return
    if not isinstance(op.value, dict):
        raise TypeError(f"{where}: a value is a dict of JSON values, got {type(op.value).__name__}")
    copy_json(op.value, what=f"{where}.value")  # TypeError / ValueError naming what has no JSON form (ENT-2)
    if op.ttl is not None and (not is_number(op.ttl) or op.ttl <= 0):
        raise ValueError(f"ttl is a number of minutes > 0, got {op.ttl!r}")
    expires_at = op.value.get("expires_at")
    if expires_at is not None and not is_number(expires_at):
        raise ValueError(f"expires_at is milliseconds since the epoch, got {expires_at!r}")


def _check_filter(wanted: Any) -> None:
    """Every operator of a search filter is one ``_matches`` knows (LG-5, LG-7)."""
    if isinstance(wanted, dict):
        unknown = [key for key in wanted if key not in _OPERATORS] if _is_operators(wanted) else []
        if unknown:
            raise ValueError(f"unsupported filter operator {unknown[0]!r}; use one of {sorted(_OPERATORS)}")
        for value in wanted.values():
            _check_filter(value)
    elif isinstance(wanted, (list, tuple)):
        for value in wanted:
            _check_filter(value)


def _item(namespace: tuple[str, ...], entry: Entry, kind: Any) -> Any:
    return kind(
        namespace=namespace,
        key=entry.key,
        value=entry.data,
        created_at=_when(entry.created_at),
        updated_at=_when(entry.updated_at),
    )


def _match_path(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A ``prefix`` or ``suffix`` condition, ``"*"`` matching any one label, as LangGraph's stores match."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:  # "suffix": batch refused any other match type before the listing ran (LG-7)
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda value, wanted: value == wanted,
    "$ne": lambda value, wanted: value != wanted,
    "$gt": lambda value, wanted: _number(value) > _number(wanted),
    "$gte": lambda value, wanted: _number(value) >= _number(wanted),
    "$lt": lambda value, wanted: _number(value) < _number(wanted),
    "$lte": lambda value, wanted: _number(value) <= _number(wanted),
}


def _number(value: Any) -> float:
    return float(value) if is_number(value) else math.nan  # NaN compares False: a non-number never matches


def _is_operators(wanted: dict[Any, Any]) -> bool:
    """Whether a filter's dict is operators (``{"$gt": 3}``), every key of which must be known, or fields to match."""
    return any(isinstance(key, str) and key.startswith("$") for key in wanted)


def _matches(value: Any, wanted: Any) -> bool:
    """A search ``filter``'s test of one field, as LangGraph's stores test it: equality, nesting, operators.

    The filter was checked before its batch ran (``_check_filter``): an operators' dict holds known operators only.
    """
    if isinstance(wanted, dict):
        if _is_operators(wanted):
            return all(_OPERATORS[key](value, operand) for key, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, list)
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)
