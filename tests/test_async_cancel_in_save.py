"""AIO-4 with every cancel landing inside a save: the change runs to its end, is held and stored, and the next one too."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from async_support import KINDS, CoroutineStore, scratch, stored_document

import sentinel_memory as sm

#: How long a save of the signalling stores takes: a cancel that lands while it runs lands inside the save.
PAUSE = 0.02


def signalling(cls: type) -> type:
    """``cls`` whose saves set ``started`` as they begin and then take ``PAUSE`` seconds before they write."""
    asynchronous = asyncio.iscoroutinefunction(cls.save)
    started = threading.Event()  # a threaded store saves in a worker thread: the loop polls it

    if asynchronous:

        class Async(cls):  # type: ignore[misc, valid-type]
            async def save(self, document: Any) -> None:
                started.set()
                await asyncio.sleep(PAUSE)
                await super().save(document)

            async def save_changes(self, changes: Any) -> None:
                started.set()
                await asyncio.sleep(PAUSE)
                await super().save_changes(changes)

        made: type = Async
    else:

        class Sync(cls):  # type: ignore[misc, valid-type]
            def save(self, document: Any) -> None:
                started.set()
                time.sleep(PAUSE)
                super().save(document)

        if hasattr(cls, "save_changes"):

            def save_changes(self: Any, changes: Any) -> None:
                started.set()
                time.sleep(PAUSE)
                super(Sync, self).save_changes(changes)

            Sync.save_changes = save_changes  # type: ignore[attr-defined]
        made = Sync
    made.started = started  # type: ignore[attr-defined]
    made.__name__ = made.__qualname__ = cls.__name__
    return made


def signalling_store(kind: str, folder: Path, url: str | None) -> Any:
    if kind == "memory":
        return signalling(sm.MemoryStore)()
    if kind == "json":
        return signalling(sm.JsonFileStore)(folder / "m.json")
    if kind == "sqlite":
        return signalling(sm.SqliteStore)(folder / "m.db")
    if kind == "redis":
        return signalling(sm.AsyncRedisStore)(url=url, key=folder.name)
    if kind == "redis-sync":
        return signalling(sm.RedisStore)(url=url, key=folder.name)
    return signalling(CoroutineStore)()


ROUNDS = 12


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
@pytest.mark.parametrize("kind", [*KINDS, "redis-sync"])
def test_aio_4_a_cancel_inside_a_save_keeps_the_change_and_the_next_one(kind, shared, request):
    """AIO-4: every one of 12 cancels lands inside an autosave; each change is kept and stored, the task ends
    CancelledError, and the next change is stored after it."""
    url = request.getfixturevalue("redis_server").url if kind.startswith("redis") else None
    folder = scratch()

    async def run() -> tuple[int, list[str], list[str], list[str]]:
        store = signalling_store(kind, folder, url)
        started = type(store).started
        mem = await sm.create_async_memory(store=store, autosave=True, shared=shared, limit=100_000)
        inside = 0
        for i in range(ROUNDS):
            started.clear()
            task = asyncio.ensure_future(mem.add_messages([{"role": "user", "content": f"W{i}"}]))
            while not started.is_set() and not task.done():
                await asyncio.sleep(0.0005)
            assert not task.done(), "the save takes PAUSE seconds: the cancel below lands inside it"
            inside += 1
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task  # it ran to its end first (AIO-4), then ended with CancelledError
            await mem.add_turn("user", f"next {i}")  # the step after
        held = [mem[key]["content"] for key in mem.keys()]
        await mem.close()
        # A MemoryStore and a CoroutineStore hold their document in the object: read that one.
        reader = store if kind in ("memory", "coroutines") else signalling_store(kind, folder, url)
        document = await stored_document(reader)
        stored = [entry["data"]["content"] for entry in document["entries"]]
        return inside, held, stored, [f"{w}" for i in range(ROUNDS) for w in (f"W{i}", f"next {i}")]

    try:
        inside, held, stored, expected = asyncio.run(run())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert inside == ROUNDS  # every cancel landed inside a save
    assert held == expected and stored == expected
