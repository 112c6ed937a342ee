"""Stores: where a memory's document lives between runs, and the contract every store keeps.

This package is the plug-in seam. A store is any object with ``load()`` and
``save(document)`` (``Store``, PER-2), optionally ``lock()``,
``generation()``, ``save_changes(changes)`` and ``preserve()``; async stores
have the same methods as coroutines (``AsyncStore``, AIO-3). What it holds:

* ``contract``: the ``Store`` and ``AsyncStore`` protocols, ``check_store`` and
  ``MemoryStore`` (a store in the process's memory);
* ``generations``: the generation check a store makes under its lock (MW-3);
* ``jsontext``: the strict reading and the writing of stored JSON text (PER-5, PER-17);
* ``locking``: the lock waits every locking store shares (MW-8);
* one module per store: ``filestore`` (``JsonFileStore``), ``sqlitestore``
  (``SqliteStore``), ``redisstore`` (``RedisStore``) and ``aioredis``
  (``AsyncRedisStore``).

The per-user collections that open memories on these stores
(``MemoryFolder``, ``RedisMemories``) are shells, outside this package.

A store may import the functional core (``sentinel_memory.core``: the
document format, the errors) and the library's logger
(``sentinel_memory.logs``), and nothing of the shells that drive it
(``memory``, ``aio``, ``folder``, ``cli``) or of the integrations; the import
contracts in ``pyproject.toml`` check this. The redis client is imported only
when a Redis store is made, so ``import sentinel_memory`` needs attrs alone.
A store written elsewhere is checked with ``sentinel_memory.testing.StoreSuite``.
"""

from .aioredis import AsyncRedisStore
from .contract import AsyncStore, MemoryStore, Store, check_store, is_async_store
from .filestore import JsonFileStore
from .jsontext import read_document, write_document
from .redisstore import RedisStore
from .sqlitestore import SqliteStore

__all__ = [
    "AsyncRedisStore",
    "AsyncStore",
    "JsonFileStore",
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "Store",
    "check_store",
    "is_async_store",
    "read_document",
    "write_document",
]
