"""Cancels at random points inside an AsyncMemory's transaction(), remember and save, then the steps after (AIO-4).

Run as a process of its own, ``python tests/cancel_scenario.py KIND FOLDER [REDIS_URL] SEED``, so the test
sees what a user would: the process must exit by itself, in bounded time. It prints one JSON line:
how many changes were acknowledged and lost, how many of the steps after stalled, what a second
process found, and which exceptions came out that AIO-4 does not name.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from async_support import store_maker, stored_document

import sentinel_memory as sm

#: How long any step after a cancel may take before it counts as a hang.
STEP_TIMEOUT = 10.0

#: A second process opens a memory on the same place and runs a transaction, within its lock_wait.
SECOND_PROCESS = textwrap.dedent(
    """
    import sys, asyncio
    import sentinel_memory as sm
    kind, folder, url = sys.argv[1], sys.argv[2], sys.argv[3]
    from pathlib import Path
    store = {
        "json": lambda: sm.JsonFileStore(Path(folder) / "m.json", lock_wait=5),
        "sqlite": lambda: sm.SqliteStore(Path(folder) / "m.db", lock_wait=5),
        "redis": lambda: sm.RedisStore(url=url, key=Path(folder).name, lock_wait=5),
        "redis-sync": lambda: sm.RedisStore(url=url, key=Path(folder).name, lock_wait=5),
    }[kind]()
    mem = sm.create_memory(store=store, autosave=True, shared=True)
    with mem.transaction():
        mem.remember("second-process", 1)
    print(len(mem))
    """
)


async def scenario(kind: str, folder: Path, url: str | None, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    make = store_maker(kind, folder, url)
    mem = await sm.create_async_memory(store=make(), autosave=True, shared=True, limit=100_000)
    other = await sm.create_async_memory(store=make(), autosave=True, shared=True, limit=100_000)
    acknowledged: set[str] = set()
    hangs = 0
    unexpected: list[str] = []
    cancelled = 0

    async def in_transaction(i: int) -> None:
        async with mem.transaction():
            await mem.remember(f"t{i}", i)
            acknowledged.add(f"t{i}")
            await asyncio.sleep(0)
            await mem.remember(f"u{i}", i)
            acknowledged.add(f"u{i}")

    async def remember(i: int) -> None:
        await mem.remember(f"r{i}", i)
        acknowledged.add(f"r{i}")

    async def save(i: int) -> None:
        await mem.save()

    async def step_after(work: Any) -> None:
        nonlocal hangs
        try:
            await asyncio.wait_for(work, STEP_TIMEOUT)
        except TimeoutError:
            hangs += 1
        except Exception as error:
            unexpected.append(f"{type(error).__name__}: {error}")

    for i in range(40):
        operation = rng.choice([in_transaction, in_transaction, remember, save])
        task = asyncio.ensure_future(operation(i))
        for _ in range(rng.randrange(12)):
            await asyncio.sleep(0)
        if rng.random() < 0.3:
            await asyncio.sleep(rng.random() * 0.01)
        if task.cancel():
            cancelled += 1
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception as error:
            unexpected.append(f"{type(error).__name__}: {error}")
        # The steps after: the other memory and this one change at once, and a transaction opens.
        await step_after(other.remember(f"o{i}", i))
        await step_after(mem.remember(f"m{i}", i))
        acknowledged.update({f"o{i}", f"m{i}"})
        if i % 10 == 9:
            await step_after(mem.close())

    async def one_more_transaction() -> None:
        async with mem.transaction():
            await mem.remember("last", 1)

    await step_after(one_more_transaction())
    acknowledged.add("last")
    second = None
    if kind in ("json", "sqlite", "redis", "redis-sync"):
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", SECOND_PROCESS, kind, str(folder), url or ""],
            capture_output=True,
            text=True,
            timeout=60,
        )
        second = {"returncode": done.returncode, "stderr": done.stderr[-2000:]}
    await step_after(mem.close())
    await step_after(other.close())
    document = await stored_document(make())
    stored = {entry["key"] for entry in (document or {}).get("entries", [])}
    return {
        "cancelled": cancelled,
        "acknowledged": len(acknowledged),
        "lost": sorted(acknowledged - stored),
        "hangs": hangs,
        "unexpected": unexpected,
        "second_process": second,
    }


def main() -> None:
    kind, folder, url, seed = sys.argv[1], Path(sys.argv[2]), sys.argv[3] or None, int(sys.argv[4])
    print(json.dumps(asyncio.run(scenario(kind, folder, url, seed))))


if __name__ == "__main__":
    main()
