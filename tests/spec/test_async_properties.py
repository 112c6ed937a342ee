"""Async tasks as properties: random interleavings and cancellations against one memory doing the changes in turn (AIO-1 .. AIO-5)."""

from __future__ import annotations

import asyncio
import collections
import contextvars
import shutil
import threading

from async_support import scratch, store_maker, stored_document
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm

from .strategies import json_data

T0 = 1_792_310_400_000

#: The operation a task is running, as the clock sees it: each change reads the clock once (TIME-1).
RUNNING: contextvars.ContextVar[int | None] = contextvars.ContextVar("running", default=None)

changes = st.one_of(
    st.tuples(
        st.just("remember"),
        st.sampled_from("abcdef"),
        json_data,
        st.sampled_from([None, 0.1, 0.5, 0.9]),
        st.sampled_from([None, 10, 50]),
    ),
    st.tuples(st.just("add_turn"), st.sampled_from(["user", "assistant"]), st.text(max_size=5)),
    st.tuples(st.just("forget"), st.sampled_from("abcdef")),
    st.tuples(st.just("working"), st.integers(0, 9)),
    st.tuples(st.just("compact")),
)

tasks = st.lists(
    st.tuples(
        st.integers(0, 1),  # which writer
        changes,
        st.integers(0, 3),  # loop turns before asking
        # cancelled after this many loop turns, or this many seconds, or never
        st.one_of(st.none(), st.integers(0, 6), st.floats(0, 0.004)),
    ),
    min_size=1,
    max_size=10,
)


async def apply_async(mem: sm.AsyncMemory, change: tuple) -> None:
    kind = change[0]
    if kind == "remember":
        _, key, data, importance, ttl = change
        await mem.remember(key, data, importance=importance, ttl=ttl)
    elif kind == "add_turn":
        await mem.add_turn(change[1], change[2])
    elif kind == "forget":
        await mem.forget(change[1])
    elif kind == "working":
        await mem.working.set({"step": change[1]})
    else:
        await mem.compact()


def apply_sync(mem: sm.Memory, change: tuple) -> None:
    kind = change[0]
    if kind == "remember":
        _, key, data, importance, ttl = change
        mem.remember(key, data, importance=importance, ttl=ttl)
    elif kind == "add_turn":
        mem.add_turn(change[1], change[2])
    elif kind == "forget":
        mem.forget(change[1])
    elif kind == "working":
        mem.working.set({"step": change[1]})
    else:
        mem.compact()


def fields(mem) -> list[tuple]:
    return [(e.key, e.data, e.importance, e.expires_at) for e in mem.get_recent(10**6)]


@settings(max_examples=60, deadline=None)
@given(
    plan=tasks,
    kind=st.sampled_from(["memory", "json", "sqlite", "redis", "coroutines", "redis-mixed"]),
    writers=st.sampled_from([1, 2]),
    limit=st.integers(2, 5),
)
def test_aio_1_aio_2_aio_3_aio_4_aio_5_concurrent_tasks_end_as_one_memory_doing_their_changes_in_turn(
    plan, kind, writers, limit, redis_server
):
    """AIO-1, AIO-2, AIO-3, AIO-4, AIO-5, MW-6, WRP-1: tasks on one or two (shared) AsyncMemory objects, interleaved and cancelled at random.

    Every change that read the clock ran whole (AIO-4) and the others never
    ran; replaying those, in the order they read the clock, on one sync
    memory gives what the store holds, and what ``on_evict`` heard. One
    writer holds exactly what its store holds. ``on_evict`` runs in the
    memory's worker thread for a sync store and on the loop for a store of
    coroutines (AIO-3). "redis-mixed" puts an AsyncRedisStore writer and a
    sync RedisStore writer on one key (AIO-5).
    """
    where = scratch()
    try:
        url = redis_server.url
        makers = {
            name: store_maker(name, where, url, delay=0.001)
            for name in ("memory", "json", "sqlite", "redis", "coroutines")
        }
        sync_redis = store_maker("redis-sync", where, url)

        def store(who: int):
            if kind == "redis-mixed":
                return makers["redis"]() if who == 0 else sync_redis()
            return makers[kind]()

        log: list[tuple[int | None, int]] = []  # (operation, now) of every clock read
        guard = threading.Lock()

        def clock() -> int:
            with guard:
                now = T0 + 10 * len(log)
                log.append((RUNNING.get(), now))
                return now

        heard: list[str] = []
        threads: list[tuple[bool, bool]] = []  # (threaded memory, on_evict ran on the loop's thread)

        async def main() -> tuple[list[sm.AsyncMemory], object]:
            loop_thread = threading.get_ident()
            memories = []
            for who in range(writers):

                def on_evict(compaction, who=who):
                    heard.extend(e.key for e in compaction.expired + compaction.evicted)
                    threads.append((memories[who].threaded, threading.get_ident() == loop_thread))

                memories.append(
                    await sm.create_async_memory(
                        store=store(who),
                        autosave=True,
                        shared=writers > 1,
                        limit=limit,
                        clock=clock,
                        on_evict=on_evict,
                    )
                )

            async def one(index: int, who: int, change: tuple, delay: int) -> None:
                RUNNING.set(index)
                for _ in range(delay):
                    await asyncio.sleep(0)
                await apply_async(memories[who % writers], change)

            async def cancel_later(task: asyncio.Task, after: float) -> None:
                if isinstance(after, float):
                    await asyncio.sleep(after)
                for _ in range(after if isinstance(after, int) else 0):
                    await asyncio.sleep(0)
                task.cancel()

            running = []
            for index, (who, change, delay, cancel) in enumerate(plan):
                task = asyncio.create_task(one(index, who, change, delay))
                running.append(task)
                if cancel is not None:
                    running.append(asyncio.create_task(cancel_later(task, cancel)))
            results = await asyncio.gather(*running, return_exceptions=True)
            assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results), results
            document = await stored_document(memories[0].store)
            for mem in memories:
                await mem.close()
            return memories, document

        memories, document = asyncio.run(main())

        # The changes that ran, in the order they read the clock, each with the now it read.
        last_read: dict[int, int] = {}
        order: list[int] = []
        for index, now in log:
            if index is not None:
                if index not in last_read:
                    order.append(index)
                last_read[index] = now
        order.sort(key=lambda index: last_read[index])
        model_now = [T0]
        model_heard: list[str] = []
        model = sm.create_memory(
            autosave=True,
            limit=limit,
            clock=lambda: model_now[0],
            on_evict=lambda c: model_heard.extend(e.key for e in c.expired + c.evicted),
        )
        for index in order:
            model_now[0] = last_read[index]
            apply_sync(model, plan[index][1])

        final_now = T0 + 10 * len(log)
        final = sm.create_memory(store=sm.MemoryStore(), load=False, limit=limit, clock=lambda: final_now)
        if document is not None:
            final.store.save({k: v for k, v in document.items() if k != "generation"})
            final.load()
        model_now[0] = final_now
        assert fields(final) == fields(model) and final.working.get() == model.working.get()
        assert collections.Counter(heard) == collections.Counter(model_heard)
        if writers == 1:
            expected = sm.core.to_document(memories[0].state, generation=memories[0].generation)
            assert document == (expected if memories[0].generation else None)
        for threaded, on_loop in threads:
            assert threaded != on_loop
        assert [m.threaded for m in memories] == [
            kind in ("memory", "json", "sqlite") or (kind == "redis-mixed" and who == 1) for who in range(writers)
        ]
    finally:
        shutil.rmtree(where, ignore_errors=True)


@settings(max_examples=15, deadline=None)
@given(
    kind=st.sampled_from(["memory", "coroutines", "json"]),
    loops=st.lists(st.tuples(st.integers(1, 4), st.booleans()), min_size=1, max_size=4),
)
def test_aio_6_one_event_loop_after_another_loses_nothing(kind, loops):
    """AIO-6, AIO-2: changes from several asyncio.run calls in turn on one AsyncMemory, contended or in a transaction, all land, with no error, and a fresh memory loads them."""
    folder = scratch()
    try:
        store = store_maker(kind, folder, None)()
        mem = asyncio.run(sm.create_async_memory(store=store, autosave=True, shared=True))
        written: list[str] = []

        async def one_loop(number: int, tasks: int, in_transaction: bool) -> None:
            keys = [f"l{number}-t{task}" for task in range(tasks)]
            if in_transaction:
                async with mem.transaction():
                    for key in keys:
                        await mem.remember(key, number)
            else:
                await asyncio.gather(*(mem.remember(key, number) for key in keys))
            written.extend(keys)

        for number, (tasks, in_transaction) in enumerate(loops):
            asyncio.run(one_loop(number, tasks, in_transaction))
        assert sorted(mem) == sorted(written)
        again = asyncio.run(sm.create_async_memory(store=store))
        assert sorted(again) == sorted(written)
        asyncio.run(mem.close())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=15, deadline=None)
@given(writers=st.integers(2, 4), pauses=st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_aio_7_racing_first_saves_of_the_recipe_acknowledge_one(writers, pauses):
    """AIO-7, MW-3: however many store objects race the first save of an empty memory, by the recipe exactly one is acknowledged and stored."""
    from test_async_recipe import AsyncRecipeStore

    folder = scratch()

    async def race() -> tuple[list[object], dict]:
        stores = [AsyncRecipeStore(folder / "m.db", key="raced") for _ in range(writers)]

        async def first_save(i: int) -> None:
            for _ in range(pauses[i]):
                await asyncio.sleep(0)
            document = {"version": 1, "generation": 1, "entries": [], "working": {"data": {"by": i}, "updatedAt": 1}}
            await stores[i].save(document)

        outcomes = await asyncio.gather(*(first_save(i) for i in range(writers)), return_exceptions=True)
        return outcomes, await stores[0].load()

    try:
        outcomes, final = asyncio.run(race())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    won = [i for i, outcome in enumerate(outcomes) if outcome is None]
    assert len(won) == 1 and all(isinstance(o, sm.ConflictError) for o in outcomes if o is not None), outcomes
    assert final["generation"] == 1 and final["working"]["data"] == {"by": won[0]}
