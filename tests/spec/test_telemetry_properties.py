"""Telemetry as properties: for random operation sequences, the spans say what the calls returned, in counts, and never the data; failing telemetry changes nothing (OTL-1 .. OTL-8)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from async_support import CoroutineStore
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_support import as_data, recording, tree
from test_telemetry_failures import POINTS, Counter

import sentinel_memory as sm
from sentinel_memory import telemetry

T0 = 1_792_310_400_000
#: In every key, text and value the operations write: it must never reach a span.
SECRET = "S3CR3T"

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.integers(0, 5),
            st.sampled_from([None, 0.1, 0.9]),
            st.sampled_from([None, 5, 50]),
        ),
        st.tuples(st.just("add_turn"), st.sampled_from(["user", "assistant"])),
        st.tuples(st.just("add_messages"), st.integers(0, 3)),
        st.tuples(st.just("forget"), st.integers(0, 5)),
        st.tuples(st.just("clear")),
        st.tuples(st.just("compact")),
        st.tuples(st.just("advance"), st.sampled_from([1, 10, 60])),
        st.tuples(st.just("cache.put"), st.integers(0, 2)),
        st.tuples(st.just("working.set"), st.integers(0, 9)),
        st.tuples(st.just("get_context"), st.sampled_from([0, 5, 40, 400])),
        st.tuples(st.just("get_messages"), st.sampled_from([3, 30, 300])),
        st.tuples(st.just("load")),
        st.tuples(st.just("bad")),
    ),
    max_size=14,
)


def call(mem: Any, op: tuple[Any, ...], now: list[int]) -> Any:
    """Run one operation on a sync memory; returns its result or the exception it raised."""
    kind = op[0]
    try:
        if kind == "remember":
            return mem.remember(f"k{SECRET}{op[1]}", f"{SECRET} {op[1]}", importance=op[2], ttl=op[3])
        if kind == "add_turn":
            return mem.add_turn(op[1], f"{SECRET} said")
        if kind == "add_messages":
            return mem.add_messages([{"role": "user", "content": f"{SECRET} {i}"} for i in range(op[1])])
        if kind == "forget":
            return mem.forget(f"k{SECRET}{op[1]}")
        if kind == "clear":
            return mem.clear()
        if kind == "compact":
            return mem.compact()
        if kind == "advance":
            now[0] += op[1]
            return None
        if kind == "cache.put":
            return mem.cache.put(f"c{SECRET}{op[1]}", SECRET)
        if kind == "working.set":
            return mem.working.set({SECRET: op[1]})
        if kind == "get_context":
            return mem.get_context(token_budget=op[1], query=SECRET)
        if kind == "get_messages":
            return mem.get_messages(token_budget=op[1], system=SECRET)
        if kind == "load":
            return mem.load()
        return mem.remember(f"k{SECRET}", {SECRET: object()})  # not JSON: refused, nothing changes
    except (TypeError, ValueError) as error:
        return error


def span_name(op: tuple[Any, ...]) -> str | None:
    kind = op[0]
    if kind == "advance":
        return None
    return telemetry.PREFIX + ("remember" if kind == "bad" else kind)


@settings(max_examples=150, deadline=None)
@given(ops=operations, limit=st.integers(1, 4), autosave=st.booleans())
def test_otl_2_spans_count_what_the_calls_did_and_never_hold_data(ops, limit, autosave):
    """OTL-2, OTL-3, OTL-4, OTL-5, OTL-6, OTL-7: each call is one span whose counts are its result's, the compaction events are on_evict's and compact()'s, errors are typed, and no key, text or value is on any span."""
    now = [T0]
    evicted: list[sm.Compaction] = []
    store = sm.MemoryStore()
    with recording() as exporter:
        mem = sm.create_memory(
            limit=limit, store=store, autosave=autosave, clock=lambda: now[0], on_evict=evicted.append
        )
        exporter.clear()
        for op in ops:
            before = mem.state
            evicted.clear()
            result = call(mem, op, now)
            spans = exporter.get_finished_spans()
            exporter.clear()
            name = span_name(op)
            if name is None:
                assert spans == ()
                continue
            roots = [span for span in spans if span.parent is None]
            assert [span.name for span in roots] == [name]
            data = as_data(roots[0])
            attributes = data["attributes"]
            text = json.dumps([as_data(span) for span in spans])
            assert SECRET not in text
            # OTL-7: nothing outside the two lists of names.
            for span in spans:
                keys = set(span.attributes) | {k for event in span.events for k in event.attributes}
                assert keys <= set(telemetry.ATTRIBUTES) | set(telemetry.SEMCONV)
                assert span.name.removeprefix(telemetry.PREFIX) in telemetry.SPANS
            if isinstance(result, Exception):  # OTL-4
                assert data["status"] == "ERROR"
                kind = type(result)
                qualified = (
                    kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
                )
                assert attributes["error.type"] == qualified
                assert data["events"] == [("exception", {"exception.type": qualified})]
                assert mem.state is before
                continue
            assert data["status"] == "UNSET"
            stored = mem.stats()["stored"]
            if name.endswith(("get_context", "get_messages")):  # OTL-6
                assert attributes["sentinel_memory.token_budget"] == op[1]
                assert attributes["sentinel_memory.tokens"] == result.tokens
                assert attributes["sentinel_memory.entries.chosen"] == len(result.entries)
                assert attributes["sentinel_memory.entries.omitted"] == result.omitted
                if name.endswith("get_messages"):
                    assert attributes["sentinel_memory.messages"] == len(result.messages)
                    assert attributes["sentinel_memory.entries.pending"] == len(result.pending)
                continue
            if name.endswith("load"):  # OTL-5
                assert attributes["sentinel_memory.load.loaded"] == result.loaded
                assert attributes["sentinel_memory.load.compacted"] == result.compacted
                assert attributes["sentinel_memory.entries.stored"] == stored
                continue
            # OTL-2: a change's counts.
            written = {"remember": 1, "add_turn": 1, "add_messages": op[1] if op[0] == "add_messages" else 0}
            assert attributes["sentinel_memory.entries.written"] == written.get(op[0], 0)
            removed = {"forget": int(result is True), "clear": len(before.entries)}.get(op[0], 0)
            assert attributes["sentinel_memory.entries.removed"] == removed
            assert attributes["sentinel_memory.entries.stored"] == stored
            # OTL-3: the events are what on_evict heard, then what compact() returned.
            compactions = [*evicted, *([result] if op[0] == "compact" and result else [])]
            events = [event for event in data["events"] if event[0] == "sentinel_memory.compaction"]
            assert [
                (e[1]["sentinel_memory.entries.expired"], e[1]["sentinel_memory.entries.evicted"]) for e in events
            ] == [(len(c.expired), len(c.evicted)) for c in compactions]
            assert attributes["sentinel_memory.entries.expired"] == sum(len(c.expired) for c in compactions)
            assert attributes["sentinel_memory.entries.evicted"] == sum(len(c.evicted) for c in compactions)
            # OTL-5: an autosave is a save span inside the change's.
            saves = [span for span in spans if span.name == "sentinel_memory.save"]
            persisted = not (
                op[0] == "cache.put" or (op[0] == "compact" and not result) or (op[0] == "forget" and not result)
            )
            assert len(saves) == (1 if autosave and persisted else 0)
            assert all(span.parent.span_id == roots[0].context.span_id for span in saves)


@settings(max_examples=80, deadline=None)
@given(ops=operations, limit=st.integers(1, 4))
def test_otl_1_telemetry_changes_nothing_and_costs_nothing_unset(ops, limit):
    """OTL-1, OTL-4: the same calls, traced and not, return the same and leave the same memory; untraced, no span is made."""

    def run() -> tuple[list[str], dict[str, Any] | None, int]:
        now = [T0]
        store = sm.MemoryStore()
        mem = sm.create_memory(limit=limit, store=store, autosave=True, clock=lambda: now[0])
        results = []
        for op in ops:
            result = call(mem, op, now)
            results.append(repr(result) if not isinstance(result, Exception) else type(result).__name__)
            assert telemetry._CURRENT.get() is None
        return results, store.load(), len(mem.state.entries)

    untraced = run()
    assert telemetry._tracer() is None
    with recording() as exporter:
        traced = run()
    assert traced == untraced
    assert len(exporter.get_finished_spans()) >= len([op for op in ops if op[0] != "advance"])


def drive_sync(mem: Any, ops: list[tuple[Any, ...]], now: list[int]) -> None:
    for op in ops:
        call(mem, op, now)


async def drive_async(mem: Any, ops: list[tuple[Any, ...]], now: list[int]) -> None:
    for op in ops:
        kind = op[0]
        try:
            if kind == "remember":
                await mem.remember(f"k{SECRET}{op[1]}", f"{SECRET} {op[1]}", importance=op[2], ttl=op[3])
            elif kind == "add_turn":
                await mem.add_turn(op[1], f"{SECRET} said")
            elif kind == "add_messages":
                await mem.add_messages([{"role": "user", "content": f"{SECRET} {i}"} for i in range(op[1])])
            elif kind == "forget":
                await mem.forget(f"k{SECRET}{op[1]}")
            elif kind == "clear":
                await mem.clear()
            elif kind == "compact":
                await mem.compact()
            elif kind == "advance":
                now[0] += op[1]
            elif kind == "cache.put":
                await mem.cache.put(f"c{SECRET}{op[1]}", SECRET)
            elif kind == "working.set":
                await mem.working.set({SECRET: op[1]})
            elif kind == "get_context":
                mem.get_context(token_budget=op[1], query=SECRET)
            elif kind == "get_messages":
                mem.get_messages(token_budget=op[1], system=SECRET)
            elif kind == "load":
                await mem.load()
            else:
                await mem.remember(f"k{SECRET}", {SECRET: object()})
        except (TypeError, ValueError):
            pass


@settings(max_examples=40, deadline=None)
@given(ops=operations, limit=st.integers(1, 4))
def test_otl_2_sync_and_async_memories_emit_the_same_spans(ops, limit):
    """OTL-2, OTL-5: Memory and AsyncMemory on both engines emit the same span trees for the same calls."""
    save_details = ("sentinel_memory.save.incremental", "sentinel_memory.save.entries", "sentinel_memory.save.deletes")
    drop = ("sentinel_memory.store.type", *save_details)

    def sync_tree() -> list[Any]:
        now = [T0]
        with recording() as exporter:
            mem = sm.create_memory(limit=limit, store=sm.MemoryStore(), autosave=True, clock=lambda: now[0])
            drive_sync(mem, ops, now)
        return tree(exporter.get_finished_spans(), drop=drop)

    def async_tree(make_store: Any) -> list[Any]:
        now = [T0]

        async def main() -> None:
            mem = await sm.create_async_memory(limit=limit, store=make_store(), autosave=True, clock=lambda: now[0])
            await drive_async(mem, ops, now)
            await mem.close()

        with recording() as exporter:
            asyncio.run(main())
        return tree(exporter.get_finished_spans(), drop=drop)

    expected = sync_tree()
    assert async_tree(sm.MemoryStore) == expected
    assert async_tree(CoroutineStore) == expected


def _outcome(value: Any) -> Any:
    """A result as comparable data: an exception by its type and message."""
    return (type(value).__name__, str(value)) if isinstance(value, Exception) else value


@settings(max_examples=100, deadline=None)
@given(
    ops=operations,
    limit=st.integers(1, 4),
    autosave=st.booleans(),
    point=st.sampled_from(sorted(POINTS)),
)
def test_otl_8_telemetry_that_fails_anywhere_changes_no_result_and_no_document(ops, limit, autosave, point):
    """OTL-8: for random operations and any failing telemetry point, every result, the state and the store's document are as with no provider."""

    def run(provider: Any) -> tuple[list[Any], Any, Any]:
        now = [T0]
        store = sm.MemoryStore()
        if provider is not None:
            telemetry.instrument(provider)
        try:
            mem = sm.create_memory(limit=limit, store=store, autosave=autosave, clock=lambda: now[0])
            results = [_outcome(call(mem, op, now)) for op in ops]
            assert telemetry._CURRENT.get() is None
        finally:
            telemetry.uninstrument()
        return results, mem.state, store.load()

    assert run(POINTS[point](Counter())) == run(None)
