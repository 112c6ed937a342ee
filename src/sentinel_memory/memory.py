"""The thin stateful wrapper: a clock, a store and callbacks around the pure core (WRP-1, WRP-2).

Each method reads the clock once (TIME-1), calls one function of
:mod:`sentinel_memory.core`, and then does the side effects the core may not
do, in this order:

1. ``on_evict(compaction)`` when an automatic compaction dropped something;
2. ``store.save(document)`` when autosave is on and the change is persisted;
3. only then does the memory hold the new state.

If any step raises, the memory keeps its old state: a call that raises leaves
the memory as it was (an archive may have seen the dropped entries already,
which can repeat them later but never loses them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from . import core
from .options import is_number, require_bool, require_callable
from .stores import MemoryStore, Store, check_store
from .tokens import Tokenizer
from .values import Compaction, Context, Entry, Hit, LoadResult, MemoryState

__all__ = ["CacheMemory", "Memory", "WorkingMemory", "create_memory", "wall_clock"]


#: The Compaction of a change that dropped nothing.
NOTHING_DROPPED = Compaction()


def wall_clock() -> int:
    """Milliseconds since the epoch, as integers (TIME-1)."""
    return time.time_ns() // 1_000_000


class Memory:
    """A memory with a current state, a clock, a store and an optional ``on_evict``.

    Create one with :func:`create_memory`.
    """

    def __init__(
        self,
        state: MemoryState,
        *,
        store: Store,
        clock: Callable[[], int | float],
        autosave: bool,
        on_evict: Callable[[Compaction], Any] | None,
    ) -> None:
        self._state = state
        self._store = store
        self._clock = clock
        self._autosave = autosave
        self._on_evict = on_evict
        self.cache = CacheMemory(self)
        self.working = WorkingMemory(self)

    # -- the plumbing every method shares ---------------------------------

    @property
    def state(self) -> MemoryState:
        """The current immutable state, for inspection or the pure functions."""
        return self._state

    @property
    def store(self) -> Store:
        return self._store

    def _now(self) -> int | float:
        """Read the clock once for one operation (TIME-1)."""
        now = self._clock()
        if not is_number(now):
            raise TypeError(f"clock must return a finite number of milliseconds, got {now!r}")
        return now

    def _commit(self, state: MemoryState, dropped: Compaction = NOTHING_DROPPED, *, persist: bool = True) -> None:
        """Side effects, then the new state (WRP-1, PER-11); ``persist=False`` for what is never saved (L0-2)."""
        if dropped and self._on_evict is not None:
            self._on_evict(dropped)
        if persist and self._autosave:
            self._store.save(core.to_document(state))
        self._state = state

    # -- entries -----------------------------------------------------------

    def remember(self, key: str, data: Any, *, importance: object = None, ttl: object = None) -> Entry:
        """Store ``data`` under ``key`` and return a copy of the stored entry (ENT-12)."""
        state, dropped = core.remember(self._state, key, data, now=self._now(), importance=importance, ttl=ttl)
        self._commit(state, dropped)
        return core.remembered(state, dropped, key)

    def get(self, key: str, default: Any = None) -> Any:
        return core.get(self._state, key, now=self._now(), default=default)

    def has(self, key: str) -> bool:
        return core.has(self._state, key, now=self._now())

    def forget(self, key: str) -> bool:
        state, removed = core.forget(self._state, key, now=self._now())
        if removed:
            self._commit(state)
        return removed

    def clear(self) -> None:
        """Remove every entry; the cache and working memory have their own ``clear``."""
        self._commit(core.clear(self._state))

    def size(self) -> int:
        return core.size(self._state, now=self._now())

    def get_recent(self, n: object = None) -> tuple[Entry, ...]:
        return core.get_recent(self._state, n, now=self._now())

    def recall(self, query: str, *, limit: object = None) -> tuple[Hit, ...]:
        return core.recall(self._state, query, now=self._now(), limit=limit)

    def compact(self) -> Compaction:
        """Compact now and return what was dropped; ``on_evict`` is for automatic runs only (CMP-3)."""
        state, dropped = core.compact(self._state, now=self._now())
        self._commit(state, persist=bool(dropped))
        return dropped

    def get_context(
        self,
        *,
        token_budget: int | float,
        query: str | None = None,
        tokenizer: Tokenizer | None = None,
        format: Callable[[Entry], str] | None = None,
        separator: str | None = None,
    ) -> Context:
        return core.context(
            self._state,
            now=self._now(),
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            format=format,
            separator=separator,
        )

    def stats(self) -> dict[str, int]:
        return core.stats(self._state, now=self._now())

    # -- persistence -------------------------------------------------------

    def save(self) -> None:
        self._store.save(core.to_document(self._state))

    def load(self) -> LoadResult:
        """Replace entries and working memory with the store's content (PER-3)."""
        document = self._store.load()
        state, result, dropped = core.from_document(self._state, document, now=self._now())
        self._commit(state, dropped, persist=bool(dropped))
        return result

    # -- Python conveniences -----------------------------------------------

    def __len__(self) -> int:
        return self.size()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and self.has(key)

    def __repr__(self) -> str:
        return f"<Memory size={len(self._state.entries)} limit={self._state.config.limit} store={self._store!r}>"


class CacheMemory:
    """L0: scratch values with a ttl, never persisted (L0-1 .. L0-4)."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def put(self, key: str, value: Any, *, ttl: object = None) -> None:
        m = self._memory
        m._commit(core.cache_put(m._state, key, value, now=m._now(), ttl=ttl), persist=False)

    def get(self, key: str, default: Any = None) -> Any:
        m = self._memory
        return core.cache_get(m._state, key, now=m._now(), default=default)

    def delete(self, key: str) -> bool:
        m = self._memory
        state, removed = core.cache_delete(m._state, key, now=m._now())
        m._commit(state, persist=False)
        return removed

    def clear(self) -> None:
        m = self._memory
        m._commit(core.cache_clear(m._state), persist=False)


class WorkingMemory:
    """L1: a small dict for the task in progress, reset when idle, persisted (L1-1 .. L1-4)."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def set(self, patch: dict[str, Any]) -> None:
        m = self._memory
        m._commit(core.working_set(m._state, patch, now=m._now()))

    def get(self) -> dict[str, Any]:
        m = self._memory
        return core.working_get(m._state, now=m._now())

    def clear(self) -> None:
        m = self._memory
        m._commit(core.working_clear(m._state))


def create_memory(
    *,
    limit: object = None,
    store: Store | None = None,
    autosave: bool = False,
    clock: Callable[[], int | float] | None = None,
    recency_window: object = None,
    tokenizer: Tokenizer | None = None,
    on_evict: Callable[[Compaction], Any] | None = None,
    working_ttl: object = None,
    cache_ttl: object = None,
    load: bool = True,
) -> Memory:
    """A new :class:`Memory`, loaded from its store unless ``load=False`` (OPT-1, PER-2, PER-3).

    Numeric options follow the number rule; options of the wrong kind (a
    tokenizer, clock or ``on_evict`` that is not callable, a store without
    ``load``/``save``, a non-bool ``autosave`` or ``load``) raise ``TypeError``.
    """
    require_bool("autosave", autosave)
    require_bool("load", load)
    require_callable("clock", clock, optional=True)
    require_callable("on_evict", on_evict, optional=True)
    if store is None:
        store = MemoryStore()
    check_store(store)
    config = core.make_config(
        limit=limit,
        recency_window=recency_window,
        working_ttl=working_ttl,
        cache_ttl=cache_ttl,
        tokenizer=tokenizer,
    )
    memory = Memory(
        MemoryState(config=config),
        store=store,
        clock=clock or wall_clock,
        autosave=autosave,
        on_evict=on_evict,
    )
    if load:
        memory.load()
    return memory
