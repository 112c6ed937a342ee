"""Per-user memories in one Redis: ``RedisMemories`` and ``AsyncRedisMemories`` (RDS-1, FLD-1, AIO-5).

What ``MemoryFolder`` is for a folder of files, these are for one Redis
server: one memory per user or conversation, each on its own store, with
the store's key derived from the id as ``MemoryFolder`` derives a file name
(a readable slug and a hash of the whole id), so no id can reach another
user's keys. They open memories, so they are shells over the stores
(``sentinel_memory.stores.redisstore``, ``sentinel_memory.stores.aioredis``).

redis-py is an optional dependency (``pip install sentinel-memory[redis]``),
imported only when a client is made from a URL (DEP-1).
"""

from __future__ import annotations

from typing import Any

from .aio import AsyncMemory, create_async_memory
from .folder import file_name_for
from .memory import create_memory
from .stores.aioredis import AsyncRedisStore, _asyncio_redis, on_this_loop
from .stores.redisstore import RedisStore, _redis
from .telemetry import conversation_id

__all__ = ["AsyncRedisMemories", "RedisMemories"]


class RedisMemories:
    """One memory per user or conversation in one Redis, keyed safely from any id (RDS-1, FLD-1).

    The Redis key of a user is derived as a
    ``MemoryFolder`` derives a file name:
    a readable slug and a hash of the whole id, so no id can reach another
    user's keys.

    Args:
        client: A ``redis.Redis`` client. Give this or ``url``.
        url: A Redis URL such as ``redis://localhost:6379/0``, instead of a client. Defaults to None.
        store_options: ``idle_ttl``, ``prefix``, ``lock_timeout`` or ``lock_wait`` for every
            ``RedisStore``. Defaults to None (the store's defaults).
        **options: The ``create_memory`` options every memory gets (``autosave``, ``shared``,
            ``limit``, ...); ``open`` may override them.

    Raises:
        TypeError: Not exactly one of ``client`` and ``url`` is given, or ``store=`` is given.

    Examples:
        >>> users = RedisMemories(url="redis://localhost:6379/0", autosave=True, shared=True)
        >>> users.store("Jakub Rojíček").key
        'jakub-rojicek-42ad52fb837a7ee5'
    """

    def __init__(
        self, client: Any = None, *, url: str | None = None, store_options: dict[str, Any] | None = None, **options: Any
    ) -> None:
        if (client is None) == (url is None):
            raise TypeError("RedisMemories takes a client or a url, exactly one of them")
        if "store" in options:
            raise TypeError("RedisMemories chooses each memory's store; do not pass store=")
        self.client = client if client is not None else _redis().Redis.from_url(url)
        self.store_options = dict(store_options or {})
        self.options = options

    def key_for(self, user_id: str) -> str:
        """The memory key of ``user_id``: ``<slug>-<hash>`` as FLD-1 derives it.

        Args:
            user_id: Any string.

        Returns:
            The key, safe whatever the id holds.

        Raises:
            TypeError: ``user_id`` is not a ``str``.

        Examples:
            >>> RedisMemories(url="redis://localhost:6379/0").key_for("Jakub Rojíček")
            'jakub-rojicek-42ad52fb837a7ee5'
        """
        return file_name_for(user_id).removesuffix(".json")

    def store(self, user_id: str) -> RedisStore:
        """``user_id``'s store: a ``RedisStore`` on this client, with ``store_options``.

        Args:
            user_id: Any string.

        Returns:
            A new ``RedisStore`` whose ``key`` is ``key_for(user_id)``.

        Raises:
            TypeError: ``user_id`` is not a ``str``.

        Examples:
            >>> users = RedisMemories(url="redis://localhost:6379/0", store_options={"prefix": "bot"})
            >>> users.store("user-42").meta_key
            'bot:{user-42-6d894aa3ee802549}:meta'
        """
        return RedisStore(self.client, key=self.key_for(user_id), **self.store_options)

    def open(self, user_id: str, **options: Any) -> Any:
        """``user_id``'s memory, loaded from Redis, with these options over the shared ones.

        No example: it loads from a Redis server.

        Args:
            user_id: Any string.
            **options: ``create_memory`` options for this memory, over the ones given to the constructor.

        Returns:
            The user's ``Memory``.

        Raises:
            TypeError: ``user_id`` is not a ``str``, an option is of the wrong kind, or ``store=`` is given.
            StoreConnectionError: Redis cannot be reached.
        """
        if "store" in options:
            raise TypeError("RedisMemories chooses each memory's store; do not pass store=")
        memory = create_memory(store=self.store(user_id), **{**self.options, **options})
        memory._plumbing.conversation = conversation_id(user_id)  # its spans from now on (OTL-9)
        return memory


# -- what RedisStore and AsyncRedisStore share: arguments, answers and errors, with no I/O --


class AsyncRedisMemories:
    """One async memory per user in one Redis, keyed as ``RedisMemories`` keys them (AIO-5, RDS-1, FLD-1).

    Every memory shares this object's client; ``open`` makes the store and the
    memory. Making it does not connect.

    Args:
        client: A ``redis.asyncio.Redis`` client; give this or ``url``. Defaults to None.
        url: A Redis URL such as ``redis://localhost:6379/0``, instead of a client. Defaults to None.
        store_options: ``idle_ttl``, ``prefix``, ``lock_timeout`` or ``lock_wait`` for every store,
            as ``AsyncRedisStore`` takes them. Defaults to None (none).
        **options: The ``create_async_memory`` options every memory gets (``autosave``,
            ``shared``, ``limit``, ...); ``open`` can override them.

    Raises:
        TypeError: Not exactly one of ``client`` and ``url``, or with ``store=``.
        ImportError: redis-py is not installed (``pip install sentinel-memory[redis]``).

    Examples:
        No memory is opened here, since that needs a Redis server; making the object does not connect:

        >>> users = AsyncRedisMemories(url="redis://localhost:6379/0", autosave=True, shared=True)
        >>> users.key_for("user-42")
        'user-42-6d894aa3ee802549'

        With a server: ``mem = await users.open("user-42")``.
    """

    def __init__(
        self, client: Any = None, *, url: str | None = None, store_options: dict[str, Any] | None = None, **options: Any
    ) -> None:
        if (client is None) == (url is None):
            raise TypeError("AsyncRedisMemories takes a client or a url, exactly one of them")
        if "store" in options:
            raise TypeError("AsyncRedisMemories chooses each memory's store; do not pass store=")
        self.client = client if client is not None else _asyncio_redis().Redis.from_url(url)
        self._owns_client = client is None
        self.store_options = dict(store_options or {})
        self.options = options

    def key_for(self, user_id: str) -> str:
        """The memory key of ``user_id``: ``<slug>-<hash>`` as FLD-1 derives it, the same as ``RedisMemories.key_for``.

        Args:
            user_id: Any str: a user id, a session id, an e-mail address.

        Returns:
            The key its store uses, readable and safe, and different for different ids.

        Raises:
            TypeError: ``user_id`` is not a str.

        Examples:
            >>> AsyncRedisMemories(url="redis://localhost:6379/0").key_for("Jakub Novák")
            'jakub-novak-63ebac7956839547'
        """
        return file_name_for(user_id).removesuffix(".json")

    def store(self, user_id: str) -> AsyncRedisStore:
        """``user_id``'s store, on this object's client, with its ``store_options``.

        Args:
            user_id: Any str, as for ``key_for``.

        Returns:
            A new ``AsyncRedisStore``; it does not connect until used.

        Raises:
            TypeError: ``user_id`` is not a str.
        """
        store = AsyncRedisStore(self.client, key=self.key_for(user_id), **self.store_options)
        store.reconnects = self._owns_client  # a client made from url reconnects on each new event loop (AIO-6)
        return store

    async def open(self, user_id: str, **options: Any) -> AsyncMemory:
        """``user_id``'s memory, loaded from Redis, with these options over the shared ones.

        Args:
            user_id: Any str, as for ``key_for``.
            **options: ``create_async_memory`` options for this memory only, over the ones given
                to the constructor.

        Returns:
            The loaded ``AsyncMemory``.

        Raises:
            TypeError: ``store=`` is given, or an option of the wrong kind.
            StoreConnectionError: Redis cannot be reached.
            DamagedStoreError: Redis holds something that is not a memory under its key.
        """
        if "store" in options:
            raise TypeError("AsyncRedisMemories chooses each memory's store; do not pass store=")
        memory = await create_async_memory(store=self.store(user_id), **{**self.options, **options})
        memory._plumbing.conversation = conversation_id(user_id)  # its spans from now on (OTL-9)
        return memory

    async def close(self) -> None:
        """Close the client made from ``url``; a client passed in is the caller's (WRP-5)."""
        if self._owns_client:
            import asyncio

            on_this_loop(self.client, asyncio.get_running_loop(), may_reconnect=True, user=self)
            await self.client.aclose()
