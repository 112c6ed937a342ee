"""sentinel-memory: an embedded memory for chatbots and agents.

It keeps what matters, forgets the least important things first, lets
short-lived things expire, and builds prompt context that never overflows a
token budget. The pure functions are in ``sentinel_memory.core``; most
applications use ``create_memory``.
"""

from .aio import AsyncCacheMemory, AsyncMemory, AsyncStore, AsyncWorkingMemory, create_async_memory
from .core import make_config
from .core.chat import ROLES, request_problems, validate_request
from .core.errors import (
    ConflictError,
    DamagedStoreError,
    IgnoredValueWarning,
    LoadWarning,
    LockTimeoutError,
    NoOpenCallError,
    RankingWarning,
    ReentrantCallError,
    SentinelMemoryWarning,
    StoreConnectionError,
    StoreError,
    StoreWarning,
    TokenBudgetError,
    UnsavedChangesWarning,
)
from .core.jsondata import MAX_DEPTH
from .core.options import DEFAULTS, NUMBER_RULES
from .core.state import MemoryState
from .core.tokens import LineCounter, additive, estimate_tokens, per_line, upper_bound_tokens
from .core.values import (
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
from .folder import MemoryFolder
from .memory import CacheMemory, Memory, WorkingMemory, create_memory
from .redismemories import AsyncRedisMemories, RedisMemories
from .stores.aioredis import AsyncRedisStore
from .stores.contract import MemoryStore, Store
from .stores.filestore import JsonFileStore
from .stores.jsontext import read_document, write_document
from .stores.redisstore import RedisStore
from .stores.sqlitestore import SqliteStore

__version__ = "0.1.0"

__all__ = [
    "DEFAULTS",
    "JSON",
    "MAX_DEPTH",
    "NUMBER_RULES",
    "ROLES",
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
    "NoOpenCallError",
    "RankingWarning",
    "RedisMemories",
    "RedisStore",
    "ReentrantCallError",
    "SentinelMemoryWarning",
    "SqliteStore",
    "Store",
    "StoreConnectionError",
    "StoreError",
    "StoreWarning",
    "TokenBudgetError",
    "UnsavedChangesWarning",
    "WorkingMemory",
    "additive",
    "create_async_memory",
    "create_memory",
    "default_format",
    "estimate_tokens",
    "make_config",
    "per_line",
    "read_document",
    "request_problems",
    "upper_bound_tokens",
    "validate_request",
    "write_document",
]
