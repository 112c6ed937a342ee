"""Helpers of the async tests: a store of coroutines over a MemoryStore, and store factories by kind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import sentinel_memory as sm
from sentinel_memory.core.document import working_record

#: The store kinds every async test runs on: three threaded, two native (AIO-3).
KINDS = ["memory", "json", "sqlite", "redis", "coroutines"]


class CoroutineStore:
    """A store of coroutines (AIO-3) over a shared MemoryStore: the native engine without Redis.

    Every save writes first and then takes ``delay`` seconds to answer, as
    a server's reply does: a task cancelled in between has written and not
    heard back. ``saves`` and ``changes`` record what was sent.
    """

    def __init__(self, inner: sm.MemoryStore | None = None, *, delay: float = 0.0) -> None:
        self.inner = inner if inner is not None else sm.MemoryStore()
        self.delay = delay
        self.saves: list[dict[str, Any]] = []
        self.changes: list[sm.Changes] = []
        # One lock per place, as a file's sidecar lock is: every CoroutineStore on ``inner`` takes it.
        self._lock: asyncio.Lock = self.inner.__dict__.setdefault("async_lock", asyncio.Lock())
        self.on_save: Callable[[], Any] | None = None

    def __repr__(self) -> str:
        return "CoroutineStore()"

    async def load(self) -> dict[str, Any] | None:
        await asyncio.sleep(0)
        return self.inner.load()

    async def save(self, document: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        if self.on_save is not None:
            await self.on_save()
        self.inner.save(document)
        self.saves.append(document)
        await asyncio.sleep(self.delay)

    async def save_changes(self, changes: sm.Changes) -> None:
        """A whole save of what the changes give, checked as MemoryStore checks: enough for the tests."""
        await asyncio.sleep(0)
        if self.on_save is not None:
            await self.on_save()
        document = self.inner.load() or {"version": 1, "generation": 0, "entries": []}
        entries = [e for e in document["entries"] if e["key"] not in changes.deletes]
        written = {entry.key for entry in changes.upserts}
        entries = [e for e in entries if e["key"] not in written] + [entry.to_dict() for entry in changes.upserts]
        working = document.get("working", {"data": {}, "updatedAt": None})
        if changes.working is not None:
            working = working_record(changes.working)
        self.inner.save({"version": 1, "generation": changes.generation, "entries": entries, "working": working})
        self.changes.append(changes)
        await asyncio.sleep(self.delay)

    async def generation(self) -> int:
        await asyncio.sleep(0)
        return self.inner.generation()

    async def preserve(self) -> None:
        self.inner.preserve()

    @contextlib.asynccontextmanager
    async def lock(self) -> AsyncIterator[None]:
        async with self._lock:
            yield


def scratch() -> Path:
    """A throwaway folder, in memory-backed /dev/shm where there is one, so fsync costs nothing."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="sentinel-async-", dir=base))


def store_maker(kind: str, where: Path, redis_url: str | None, *, delay: float = 0.0) -> Callable[[], Any]:
    """A function that makes a new store object on one shared place of ``kind``."""
    shared = sm.MemoryStore()
    coroutines = sm.MemoryStore()
    return {
        "memory": lambda: shared,
        "json": lambda: sm.JsonFileStore(where / "m.json"),
        "sqlite": lambda: sm.SqliteStore(where / "m.db"),
        "redis": lambda: sm.AsyncRedisStore(url=redis_url, key=where.name),
        "redis-sync": lambda: sm.RedisStore(url=redis_url, key=where.name),
        "coroutines": lambda: CoroutineStore(coroutines, delay=delay),
    }[kind]


async def stored_document(store: Any) -> dict[str, Any] | None:
    """What ``store`` holds, sync or async."""
    document = store.load()
    return await document if asyncio.iscoroutine(document) else document
