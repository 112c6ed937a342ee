"""A Redis store on ``redis.asyncio``, for an ``AsyncMemory`` that never blocks its event loop (AIO-5).

``AsyncRedisStore`` is
``RedisStore`` with coroutines for
methods: the same two hashes (RDS-1), the same Lua scripts and generation
checks (RDS-2), the same lease lock with the same key and timings (RDS-3),
the same idle expiry (RDS-4) and the same errors (RDS-5, RDS-6). The
arguments, the answers and the error mapping are the very functions
``RedisStore`` uses, so a sync and an async writer can share one memory,
``shared=True`` on both sides.

redis-py is an optional dependency (``pip install sentinel-memory[redis]``),
imported only when a store is made (DEP-1).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from ..core.errors import LockTimeoutError, StoreConnectionError
from ..core.options import Duration
from ..core.values import Changes
from ..logs import logger
from .locking import DEFAULT_LOCK_WAIT
from .redisstore import (
    ScriptArguments,
    _dumps,
    _redis,
    check_outcome,
    document_of,
    generation_from,
    orig_key,
    server_of,
    store_error,
)

if TYPE_CHECKING:
    import asyncio


__all__ = ["AsyncRedisStore"]

#: The event loop each redis.asyncio client last talked on (AIO-6); a client that is collected drops out.
_CLIENT_LOOPS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_LOOPS_LOCK = threading.Lock()

#: Below this many entries a load decodes on the loop: a thread's hand-off would cost more than it saves.
_DECODE_ON_THE_LOOP = 1_000


def _asyncio_redis() -> Any:
    _redis()  # the ImportError that names the extra
    import redis.asyncio

    return redis.asyncio


class AsyncRedisStore(ScriptArguments):
    """One memory in Redis, for an ``AsyncMemory``: ``RedisStore`` on ``redis.asyncio`` (AIO-5).

    Every method that talks to Redis is a coroutine; the memory awaits them
    on the event loop, with no worker thread. Making a store does not connect:
    the first ``load`` does. ``async with store:`` closes a client made from
    ``url`` on the way out.

    Args:
        client: A ``redis.asyncio.Redis`` client; give this or ``url``. Defaults to None.
        url: A Redis URL such as ``redis://localhost:6379/0``, instead of a client; this store
            then makes the client and closes it. Defaults to None.
        key: The memory's name; the same ``key`` and ``prefix`` as a ``RedisStore`` name the same
            memory.
        idle_ttl: Delete the whole memory after this long without a save, in milliseconds or a
            ``timedelta`` (RDS-4). Defaults to None (never).
        prefix: The first part of every Redis key this store uses. Defaults to ``"sentinel-memory"``.
        lock_timeout: Seconds a ``lock()`` lease lasts if its holder dies. Defaults to 30.0.
        lock_wait: The most seconds ``lock()`` waits while another writer holds the lease, then
            ``LockTimeoutError`` (MW-8). Defaults to 30.0.

    Raises:
        TypeError: Not exactly one of ``client`` and ``url``, a ``url`` that is not a str, a key
            that is not a non-empty str, or a ``lock_wait`` that is not a number.
        ValueError: An ``idle_ttl`` that is not a duration > 0, or a ``lock_wait`` that is not a
            finite number >= 0.
        ImportError: redis-py is not installed (``pip install sentinel-memory[redis]``).

    Examples:
        No memory is opened here, since that needs a Redis server; making a store does not connect:

        >>> store = AsyncRedisStore(url="redis://localhost:6379/0", key="user-42")
        >>> store.server, store.meta_key
        ('localhost:6379/0', 'sentinel-memory:{user-42}:meta')

        With a server: ``mem = await create_async_memory(store=store, autosave=True, shared=True)``.
    """

    _unreachable = False  # the last call found the server down (LOG-3)

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        key: str,
        idle_ttl: Duration | None = None,
        prefix: str = "sentinel-memory",
        lock_timeout: float = 30.0,
        lock_wait: float = DEFAULT_LOCK_WAIT,
    ) -> None:
        self._set_up(
            client, url, key, idle_ttl, prefix, lock_timeout, lock_wait, lambda: _asyncio_redis().Redis.from_url(url)
        )
        self._holders: dict[asyncio.Task[Any], int] = {}  # the task holding the lease, and how deep
        # The holding task, as the tasks it starts see it: an AsyncMemory runs each change in a task of its own.
        self._owner: contextvars.ContextVar[asyncio.Task[Any] | None] = contextvars.ContextVar(
            f"lease-owner-{id(self)}", default=None
        )
        self._unreleased: list[tuple[Any, str]] = []  # leases a lost connection or a cancel left set (RDS-5)

    def __repr__(self) -> str:
        return f"AsyncRedisStore(key={self.key!r})"

    @property
    def server(self) -> str:
        """The server this store talks to, as ``host:port/db`` (or the socket path): what its errors name."""
        return server_of(self.client)

    async def close(self) -> None:
        """Close the client this store made from ``url`` (WRP-5); a client passed in is the caller's to close."""
        if self._owns_client:
            self._on_this_loop()  # a finished loop's connections cannot be closed from this one (AIO-6)
            await self.client.aclose()

    async def __aenter__(self) -> AsyncRedisStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    #: Whether this store may let go of its client's connections when the event loop changes (AIO-6):
    #: a client it made from ``url``, or one an ``AsyncRedisMemories`` made and lends it.
    reconnects = False
    _loop: Any = None  # the event loop this store last talked on

    def _on_this_loop(self) -> None:
        """AIO-6: a client made from ``url`` reconnects on a new event loop; a client passed in must be the loop's.

        A redis.asyncio connection belongs to the loop it was opened on, and
        scripts and tests run one ``asyncio.run`` after another. The
        connections of a loop that has finished can neither be used nor closed
        from the next one, so the pool lets go of them (the finished loop's
        sockets close when they are collected) and opens new ones here. The
        loop is kept per client, so stores sharing one client reconnect once.
        """
        import asyncio

        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._holders.clear()  # tasks of a finished loop hold nothing any more
            self._loop = loop
        on_this_loop(self.client, loop, may_reconnect=self._owns_client or self.reconnects, user=self)

    @contextlib.contextmanager
    def _talking(self, operation: str) -> Iterator[None]:
        """Every redis-py error as the documented one, exactly as ``RedisStore`` maps it (RDS-5, RDS-6)."""
        self._on_this_loop()
        try:
            yield
        except _redis().exceptions.RedisError as error:
            mapped = store_error(self, self.server, operation, error)
            if mapped is None:
                raise
            self._unreachable = isinstance(mapped, StoreConnectionError) or self._unreachable
            raise mapped from error
        if self._unreachable:  # LOG-3: the first operation through after an outage says so
            self._unreachable = False
            logger.info("%r: Redis at %s is reachable again (%s)", self, self.server, operation)

    async def load(self) -> dict[str, Any] | None:
        """The saved document, read in one ``MULTI``/``EXEC``, or None when this memory was never saved (RDS-2).

        Returns:
            The document as a dict of JSON values, or None.

        Raises:
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the command.
            DamagedStoreError: The stored hashes are not a memory.
        """
        with self._talking("load"):
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hgetall(self.meta_key)
                pipe.hvals(self.entries_key)  # the records carry their keys: no dict of 2n strings to build
                meta_raw, entries_raw = await pipe.execute()
        if len(entries_raw) < _DECODE_ON_THE_LOOP:
            return document_of(meta_raw, entries_raw, self)
        # Decoding and checking every entry is CPU work in proportion to the memory: off the loop,
        # so a big load never stalls the other tasks (AIO-5).
        import asyncio

        return await asyncio.to_thread(document_of, meta_raw, entries_raw, self)

    async def generation(self) -> int:
        """The generation the store holds now: 0 when nothing was saved (MW-1).

        Returns:
            The stored generation, an int >= 0.

        Raises:
            StoreConnectionError: Redis cannot be reached.
            DamagedStoreError: The stored generation is not a memory's.
        """
        with self._talking("generation"):
            version, generation = await self.client.hmget(self.meta_key, ["version", "generation"])
        return generation_from(version, generation, self)

    async def save(self, document: dict[str, Any]) -> None:
        """Replace the memory with ``document`` in one atomic script (RDS-2, MW-3).

        Args:
            document: The whole memory, as ``core.to_document`` writes it; a ``generation`` in it is
                checked against the stored one.

        Raises:
            ConflictError: Another writer saved first.
            DamagedStoreError: Redis holds another layout under this key; it is not overwritten.
            StoreConnectionError: Redis cannot be reached; nothing was written.
            StoreError: Redis refused the script; nothing was written.
        """
        args, declared = self.save_args(document)
        await self._run(self._save_script, args, declared)

    async def save_changes(self, changes: Changes) -> None:
        """Write only what a change touched, in one atomic script, with the same generation check (RDS-2, MW-4).

        Args:
            changes: The ``Changes`` of one change, as ``core.changes`` describes it.

        Raises:
            ConflictError: Another writer saved first.
            DamagedStoreError: Redis holds another layout under this key; it is not overwritten.
            StoreConnectionError: Redis cannot be reached; nothing was written.
            StoreError: Redis refused the script; nothing was written.
        """
        await self._run(self._changes_script, self.changes_args(changes), changes.generation)

    async def _run(self, script: Any, args: list[Any], declared: int | None) -> None:
        with self._talking("save"):
            status, value = await script(keys=[self.meta_key, self.entries_key], args=args)
        check_outcome(status, value, declared, self)

    async def preserve(self) -> None:
        """Copy the stored document to ``<prefix>:{<key>}:orig:<UTC time>`` before it is overwritten (PER-14).

        The copy expires with ``idle_ttl``, when one is set. Nothing is copied when
        nothing was saved.

        Raises:
            StoreConnectionError: Redis cannot be reached.
        """
        document = await self.load()
        if document is None:
            return
        with self._talking("preserve"):
            await self.client.set(orig_key(self.meta_key), _dumps(document), px=self.idle_ms or None)

    @contextlib.asynccontextmanager
    async def lock(self) -> AsyncIterator[None]:
        """Hold this memory alone across tasks, processes and machines (MW-2, RDS-3): ``async with store.lock():``.

        The lease of ``RedisStore.lock``: the same key, token kind and
        timings, so sync and async writers exclude each other. Re-entrant
        for the task that holds it, and for the tasks it starts meanwhile (an
        ``AsyncMemory`` runs each change in a task of its own). A lease left set because Redis was
        unreachable, or because the task asking for it was cancelled before
        Redis answered, is released by this store's next ``lock()`` (RDS-5).

        Yields:
            None, while the lease is held.

        Raises:
            StoreConnectionError: Redis cannot be reached.
            LockTimeoutError: Another writer held the lease for ``lock_wait`` seconds.
        """
        import asyncio

        task = asyncio.current_task()
        assert task is not None, "lock() is used from a task"
        owner = task if task in self._holders else self._owner.get()
        if owner is not None and self._holders.get(owner, 0):
            self._holders[owner] += 1
            try:
                yield
            finally:
                if owner in self._holders:
                    self._holders[owner] -= 1
            return
        with self._talking("lock"):
            await self._release_unreleased()
        lease = self.client.lock(self.lock_key, timeout=self.lock_timeout, sleep=0.02, thread_local=False)
        token = uuid.uuid4().hex
        try:
            with self._talking("lock"):
                acquired = await lease.acquire(blocking=True, blocking_timeout=self.lock_wait, token=token)
        except (StoreConnectionError, asyncio.CancelledError):
            self._unreleased.append((lease, token))  # Redis may have set it and not answered
            raise
        if not acquired:
            raise LockTimeoutError(self.lock_key, self.lock_wait)
        self._holders[task] = 1
        self._owner.set(task)  # tasks started from here on hold it too; ignored once it is released
        try:
            yield
        finally:
            del self._holders[task]
            try:
                with contextlib.suppress(_redis().exceptions.LockError), self._talking("lock"):
                    await lease.do_release(token)
            except (StoreConnectionError, asyncio.CancelledError):
                self._unreleased.append((lease, token))
                raise

    async def _release_unreleased(self) -> None:
        """Release, by their own tokens, the leases this store could not release (RDS-5)."""
        pending, self._unreleased = self._unreleased, []
        for at, (lease, token) in enumerate(pending):
            try:
                with contextlib.suppress(_redis().exceptions.LockError):
                    await lease.do_release(token)
            except BaseException:
                self._unreleased[:0] = pending[at:]
                raise


def on_this_loop(client: Any, loop: Any, *, may_reconnect: bool, user: object) -> None:
    """AIO-6: ready ``client`` for ``loop``: let go of a finished loop's connections, or refuse a client not ours.

    Args:
        client: A ``redis.asyncio`` client.
        loop: The running event loop.
        may_reconnect: The client was made from a URL by this library, so its pool may be reset.
        user: The store or collection using it, named by the error.

    Raises:
        RuntimeError: The client last talked on another loop and was given by the caller.
    """
    with _LOOPS_LOCK:
        last = _CLIENT_LOOPS.get(client)
        if last is loop:
            return
        if last is not None:
            if not may_reconnect:
                raise RuntimeError(
                    f"{user!r} was used on another event loop, and a redis.asyncio client belongs to the loop "
                    "it connected on: make the store with url=... (it then reconnects on each new loop), or "
                    "give each event loop a store with a client made on that loop"
                )
            client.connection_pool.reset()
        _CLIENT_LOOPS[client] = loop
