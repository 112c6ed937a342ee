"""The stores a protocol backend can run its cases on besides its own: a Redis server, or any store in the loop.

``serve --store URL`` runs every case on a
[`RedisStore`][sentinel_memory.stores.redisstore.RedisStore] (``RedisProtocolStore``),
``serve --store module:factory`` on the stores a factory makes
(``FactoryProtocolStore``, through ``SyncOverAsync`` for an async one): the
vectors then check a store's behaviour with the library's (PER-2). None of
this reads a step's arguments; ``backend`` does, and runs each case on the
store it is given.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from ..core.document import declared_generation, generation_of, problem
from ..core.errors import DamagedStoreError
from ..stores.contract import is_async_store
from ..stores.generations import check_generation
from ..stores.jsontext import loads
from ..stores.redisstore import RedisStore, entry_fields
from .backend import ProtocolStore

__all__ = [
    "FactoryProtocolStore",
    "RedisProtocolStore",
    "SyncOverAsync",
    "factory_stores",
    "redis_stores",
    "store_factory",
]


def redis_stores(url: str) -> Callable[[], RedisProtocolStore]:
    """A maker of one ``RedisProtocolStore`` per case on the server at ``url``, each under a key of its own."""
    cases = itertools.count()
    return lambda: RedisProtocolStore(url, f"conformance-{os.getpid()}-{next(cases)}")


def factory_stores(factory: Callable[..., Any]) -> Callable[[], FactoryProtocolStore]:
    """A maker of one ``FactoryProtocolStore`` per case over the stores ``factory`` makes."""
    return lambda: FactoryProtocolStore(factory)


class RedisProtocolStore(ProtocolStore):
    """The protocol store with a [`RedisStore`][sentinel_memory.stores.redisstore.RedisStore] in the loop (``serve --store URL``).

    Every document the Redis layout can hold lives in Redis: what the memory
    saves (whole or incrementally, with Redis's own generation check) and
    every valid document a case puts there, which the memory then loads from
    Redis. What the layout cannot hold, because it is not a memory document
    at all (damaged text, an unknown version) or because its entries cannot
    be fields of one hash (an entry that is not an object, a key that is not a
    string, a key twice), is held beside Redis as the text a file would hold,
    so those cases still check the library's reading rules.
    """

    def __init__(self, url: str, key: str) -> None:
        super().__init__()
        self.redis = RedisStore(url=url, key=key)

    def __repr__(self) -> str:
        return "<the protocol store in Redis>"

    def put(self, raw: bytes | None) -> None:
        self.close()
        self.raw = None
        if raw is None:
            return
        document = _as_redis_document(raw)
        if document is None:
            self.raw = raw
        else:
            _write_as_is(self.redis, document)

    def load(self) -> dict[str, Any] | None:
        return super().load() if self.raw is not None else self.redis.load()

    def save(self, document: dict[str, Any]) -> None:
        if self.raw is not None:
            check_generation(self, declared_generation(document), super().generation())
            self.raw = None
            _write_as_is(self.redis, document)
        else:
            self.redis.save(document)

    def save_changes(self, changes: Any) -> None:
        # Only a memory in step with the store sends changes, and content held beside Redis always loses entries.
        assert self.raw is None, "a memory cannot be in step with content Redis does not hold"
        self.redis.save_changes(changes)

    def generation(self) -> int:
        return super().generation() if self.raw is not None else self.redis.generation()

    def held(self) -> Any:
        return super().held() if self.raw is not None else self.redis.load()

    def close(self) -> None:
        self.redis.client.delete(self.redis.meta_key, self.redis.entries_key)


class FactoryProtocolStore(ProtocolStore):
    """The protocol store with any store in the loop (``serve --store module:factory``).

    ``factory()`` makes a new, empty store: one for each case, and a new one
    whenever a case puts a document into the store behind the memory's back.
    Every document such a store can hold lives in it, and the memory loads it
    from there and saves into it (whole, or with ``save_changes`` when the
    store has it), under its ``lock`` and with its ``generation`` and
    ``preserve`` when it has them. A store starts at generation 0 and takes
    only the next generation, so a document put there with generation *g* is
    written with generation 1 and the store's generations are read *g* - 1
    higher (and written that much lower); the store never sees the
    difference. What no store can hold (damaged text, an unknown version, an
    entry that is not an object, a key twice) is held beside it as the text
    a file would hold, as ``RedisProtocolStore`` does.

    When the factory takes an argument, ``factory(store)`` opens another
    store object on the same data, and each memory of a case (the sessions
    group) gets one of its own (``for_memory``): two memories then reach the
    data as two processes would.
    """

    def __init__(self, factory: Callable[..., Any]) -> None:
        super().__init__()
        self.factory = factory
        self.reopens = _takes_a_store(factory)
        self.inner: Any = factory()
        self.epoch = 0  # counts the inner stores made: each memory's own object follows the current one
        self.offset = 0  # the protocol's generation less the inner store's
        # What a case put there, as it put it, until the memory saves: a store may normalise a
        # document it holds (add the empty working memory, say), which is no difference a memory sees.
        self.shown: Any = None
        self.views: list[_MemoryView] = []

    def __repr__(self) -> str:
        return f"<the protocol store in {self.inner!r}>"

    def for_memory(self, number: int) -> Any:
        """The store memory ``number`` of the case uses: this one for the first, its own object for the others."""
        if number == 1 or not self.reopens:
            return self
        view = _MemoryView(self)
        self.views.append(view)
        return view

    def _fresh(self, document: dict[str, Any] | None) -> None:
        _close(self.inner)
        self.inner, self.offset, self.raw, self.shown = self.factory(), 0, None, None
        self.epoch += 1
        if document is None:
            return
        if "generation" in document:
            self.offset = generation_of(document) - 1
            document = {**document, "generation": 1}
        self.inner.save(document)

    def put(self, raw: bytes | None) -> None:
        if raw is None:
            self._fresh(None)
            return
        document = _as_redis_document(raw)
        try:
            if document is None:
                raise ValueError("no store holds this")
            self._fresh(document)
            self.shown = json.loads(raw)
        except Exception:  # the store cannot hold it (SQLite refuses an entry without updatedAt, say)
            self._fresh(None)
            self.raw = raw

    def _shifted(self, document: dict[str, Any] | None, by: int) -> dict[str, Any] | None:
        if document is None or "generation" not in document:
            return document
        return {**document, "generation": document["generation"] + by}

    # Each call goes to ``inner``: this store's own object, or a memory's (``_MemoryView``).

    def load_in(self, inner: Any) -> dict[str, Any] | None:
        return ProtocolStore.load(self) if self.raw is not None else self._shifted(inner.load(), self.offset)

    def save_in(self, inner: Any, document: dict[str, Any]) -> None:
        if self.raw is not None:
            check_generation(self, declared_generation(document), ProtocolStore.generation(self))
            self._fresh(document)
        else:
            shifted = self._shifted(document, -self.offset)
            assert shifted is not None
            inner.save(shifted)
            self.shown = None

    def save_changes_in(self, inner: Any, changes: Any) -> None:
        assert self.raw is None, "a memory cannot be in step with content the store does not hold"
        inner.save_changes(attrs.evolve(changes, generation=changes.generation - self.offset))
        self.shown = None

    def generation_in(self, inner: Any) -> int:
        if self.raw is not None:
            return ProtocolStore.generation(self)
        generation = getattr(inner, "generation", None)
        if callable(generation):  # through the store under test, as a memory reads it (MW-6)
            return int(generation()) + self.offset
        return generation_of(self.load_in(inner))

    def optional_in(self, inner: Any, name: str) -> Any:
        """``inner``'s ``save_changes``, ``lock`` or ``preserve``, as the memory calls it; AttributeError when it has none."""
        method = getattr(inner, name, None)
        if not callable(method):
            raise AttributeError(name)
        if name == "save_changes":
            return lambda changes: self.save_changes_in(inner, changes)
        if name == "preserve":
            # Content held beside the store is no content of the store's to keep.
            return lambda: None if self.raw is not None else method()
        return method

    def load(self) -> dict[str, Any] | None:
        return self.load_in(self.inner)

    def save(self, document: dict[str, Any]) -> None:
        self.save_in(self.inner, document)

    def generation(self) -> int:
        return self.generation_in(self.inner)

    def __getattr__(self, name: str) -> Any:
        # The optional methods only when the store has them, so a memory without them does without.
        if name in ("save_changes", "lock", "preserve") and "inner" in self.__dict__:
            return self.optional_in(self.__dict__["inner"], name)
        raise AttributeError(name)

    def held(self) -> Any:
        if self.raw is not None:
            return super().held()
        return self.shown if self.shown is not None else self.load()

    def close(self) -> None:
        for view in self.views:
            view.close()
        _close(self.__dict__.get("inner"))


class _MemoryView:
    """Memory N's own store object on the case's data (``FactoryProtocolStore.for_memory``)."""

    def __init__(self, main: FactoryProtocolStore) -> None:
        self.main = main
        self.epoch = -1
        self.inner: Any = None

    def __repr__(self) -> str:
        return f"<another object on {self.main!r}>"

    def _own(self) -> Any:
        if self.epoch != self.main.epoch:  # the case put a new document there: open the new store
            _close(self.inner)
            self.inner, self.epoch = self.main.factory(self.main.inner), self.main.epoch
        return self.inner

    def load(self) -> dict[str, Any] | None:
        return self.main.load_in(self._own())

    def save(self, document: dict[str, Any]) -> None:
        self.main.save_in(self._own(), document)

    def generation(self) -> int:
        return self.main.generation_in(self._own())

    def __getattr__(self, name: str) -> Any:
        if name in ("save_changes", "lock", "preserve"):
            return self.main.optional_in(self._own(), name)
        raise AttributeError(name)

    def close(self) -> None:
        _close(self.inner)
        self.inner = None
        self.epoch = -1


def _close(store: Any) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


def _takes_a_store(factory: Callable[..., Any]) -> bool:
    """Whether ``factory(store)`` opens another object on ``store``'s data (it takes a positional argument)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)


def store_factory(spec: str) -> Callable[[], Any]:
    """The factory named ``module:function`` (``serve --store``), imported; ``TypeError`` when it is not callable.

    An async store (its ``load`` a coroutine function, AIO-3) the factory makes is driven through
    ``SyncOverAsync``: the vectors run with it as with any store (PER-2).
    """
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ValueError(f"--store must be a Redis URL or module:factory, got {spec!r}")
    factory: Callable[..., Any] = getattr(importlib.import_module(module_name), name)
    if not callable(factory):
        raise TypeError(f"{spec} is not callable")

    @functools.wraps(factory)  # the signature too: whether the factory reopens (_takes_a_store)
    def made(*args: Any) -> Any:
        store = factory(*(arg.store if isinstance(arg, SyncOverAsync) else arg for arg in args))
        return SyncOverAsync(store) if is_async_store(store) else store

    return made


class _Loop:
    """One event loop in a thread of its own, for every async store of the process: each stays on one loop (AIO-6)."""

    loop: Any = None
    guard = threading.Lock()

    @classmethod
    def run(cls, coroutine: Any) -> Any:
        import asyncio

        with cls.guard:
            if cls.loop is None:
                cls.loop = asyncio.new_event_loop()
                threading.Thread(target=cls.loop.run_forever, name="sentinel-memory-async-stores", daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coroutine, cls.loop).result()


class SyncOverAsync:
    """An async store (AIO-3) as a sync one, for the protocol backend: each call awaited on one event loop.

    ``lock()`` is entered and left by one task of its own, which holds it while the ``with`` block
    runs, as an ``AsyncMemory``'s transaction holds it; ``save`` and the other calls run in tasks of
    their own meanwhile, as an ``AsyncMemory``'s changes do. The optional methods are there only when
    the store has them.
    """

    def __init__(self, store: Any) -> None:
        self.store = store

    def __repr__(self) -> str:
        return repr(self.store)

    def _call(self, name: str, *args: Any) -> Any:
        async def call() -> Any:
            result = getattr(self.store, name)(*args)
            return await result if inspect.isawaitable(result) else result

        return _Loop.run(call())

    def load(self) -> Any:
        return self._call("load")

    def save(self, document: dict[str, Any]) -> None:
        self._call("save", document)

    def __getattr__(self, name: str) -> Any:
        if name in ("save_changes", "generation", "preserve", "close") and callable(getattr(self.store, name, None)):
            return lambda *args: self._call(name, *args)
        if name == "lock" and callable(getattr(self.store, "lock", None)):
            return self._lock
        raise AttributeError(name)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        import asyncio

        entered: Any = None
        release: Any = None

        async def hold(ready: Any) -> None:
            nonlocal release
            release = asyncio.Event()
            async with self.store.lock():
                ready.set_result(None)
                await release.wait()

        async def start() -> Any:
            ready = asyncio.get_running_loop().create_future()
            task = asyncio.ensure_future(hold(ready))
            await asyncio.wait([ready, task], return_when=asyncio.FIRST_COMPLETED)
            if not ready.done():
                task.result()  # the lock() raised: LockTimeoutError, a lost connection
            return task

        entered = _Loop.run(start())
        try:
            yield
        finally:

            async def leave() -> None:
                release.set()
                await entered

            _Loop.run(leave())


def _as_redis_document(raw: bytes) -> dict[str, Any] | None:
    """The document in ``raw`` when the Redis layout can hold it as it is, else None."""
    try:
        document = loads(raw, "the protocol store")
    except DamagedStoreError:
        return None
    if problem(document) is not None:
        return None
    entries = document["entries"]
    keys = [entry.get("key") if isinstance(entry, dict) else None for entry in entries]
    if not all(isinstance(key, str) for key in keys) or len(set(keys)) != len(keys):
        return None
    return document


def _write_as_is(store: Any, document: dict[str, Any]) -> None:
    """Write ``document`` into the Redis layout exactly as it is, fields it lacks left out (RDS-1)."""

    client = store.client
    pipe = client.pipeline(transaction=True)
    pipe.delete(store.meta_key, store.entries_key)
    for key, value in entry_fields(document["entries"]):
        pipe.hset(store.entries_key, key, value)
    meta = {"version": "1", "next_ord": str(len(document["entries"]))}
    if "generation" in document:
        meta["generation"] = str(generation_of(document))  # 2.0 is 2 (MW-1)
    if "working" in document:
        meta["working"] = json.dumps(document["working"], ensure_ascii=False, allow_nan=False)
    if "ranking" in document:  # as a whole save names it (BM-10)
        meta["ranking"] = json.dumps(document["ranking"], ensure_ascii=False, allow_nan=False)
    pipe.hset(store.meta_key, mapping=meta)
    pipe.execute()
