"""sentinel-memory: an embedded memory for chatbots and agents.

It keeps what matters, forgets the least important things first, lets
short-lived things expire, and builds prompt context that never overflows a
token budget. The pure functions are in ``sentinel_memory.core``; most
applications use ``create_memory``.
"""

from .aio import AsyncCacheMemory, AsyncMemory, AsyncStore, AsyncWorkingMemory, create_async_memory
from .aioredis import AsyncRedisMemories, AsyncRedisStore
from .core import make_config
from .errors import (
    ConflictError,
    DamagedStoreError,
    IgnoredValueWarning,
    LoadWarning,
    LockTimeoutError,
    ReentrantCallError,
    SentinelMemoryWarning,
    StoreConnectionError,
    StoreError,
    StoreWarning,
)
from .filestore import JsonFileStore
from .folder import MemoryFolder
from .jsondata import MAX_DEPTH
from .memory import CacheMemory, Memory, WorkingMemory, create_memory
from .options import DEFAULTS, NUMBER_RULES
from .redisstore import RedisMemories, RedisStore
from .sqlitestore import SqliteStore
from .state import MemoryState
from .stores import MemoryStore, Store
from .tokens import LineCounter, additive, estimate_tokens, per_line, upper_bound_tokens
from .values import (
    JSON,
    Changes,
    Compaction,
    Config,
    Context,
    Entry,
    Hit,
    LoadResult,
    Messages,
    default_format,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULTS",
    "JSON",
    "MAX_DEPTH",
    "NUMBER_RULES",
    "AsyncCacheMemory",
    "AsyncMemory",
    "AsyncRedisMemories",
    "AsyncRedisStore",
    "AsyncStore",
    "AsyncWorkingMemory",
    "CacheMemory",
    "Changes",
    "Compaction",
    "Config",
    "ConflictError",
    "Context",
    "DamagedStoreError",
    "Entry",
    "Hit",
    "IgnoredValueWarning",
    "JsonFileStore",
    "LineCounter",
    "LoadResult",
    "LoadWarning",
    "LockTimeoutError",
    "Memory",
    "MemoryFolder",
    "MemoryState",
    "MemoryStore",
    "Messages",
    "RedisMemories",
    "RedisStore",
    "ReentrantCallError",
    "SentinelMemoryWarning",
    "SqliteStore",
    "Store",
    "StoreConnectionError",
    "StoreError",
    "StoreWarning",
    "WorkingMemory",
    "additive",
    "create_async_memory",
    "create_memory",
    "default_format",
    "estimate_tokens",
    "make_config",
    "per_line",
    "upper_bound_tokens",
]
