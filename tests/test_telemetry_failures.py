"""Telemetry is an observer: whatever a provider, sampler, processor or exporter raises, the memory goes on (OTL-8)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Sampler

import sentinel_memory as sm
from sentinel_memory import telemetry

NOW = 1_792_310_400_000


class Broken(RuntimeError):
    """What the broken telemetry raises."""


class Counter:
    """How many times the broken telemetry raised into the memory."""

    def __init__(self) -> None:
        self.raised = 0

    def fail(self, where: str) -> None:
        self.raised += 1
        raise Broken(f"telemetry broke at {where}")


class RaisingSampler(Sampler):
    """A sampler that raises at every span start."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter

    def should_sample(self, *args: Any, **kwargs: Any) -> Any:
        self.counter.fail("should_sample")

    def get_description(self) -> str:
        return "raising"


class RaisingProcessor:
    """A span processor that raises at ``on_start`` or ``on_end`` of the spans ``which`` picks."""

    def __init__(self, counter: Counter, hook: str, which: Callable[[str], bool] = lambda name: True) -> None:
        self.counter, self.hook, self.which = counter, hook, which

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.hook == "on_start" and self.which(span.name):
            self.counter.fail("on_start")

    def _on_ending(self, span: Any) -> None:
        return None

    def on_end(self, span: Any) -> None:
        if self.hook == "on_end" and self.which(span.name):
            self.counter.fail("on_end")

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class RaisingExporter(SpanExporter):
    """An exporter that raises at every export (the SDK's SimpleSpanProcessor catches and logs it)."""

    def __init__(self) -> None:
        self.exports = 0

    def export(self, spans: Any) -> SpanExportResult:
        self.exports += 1
        raise Broken("exporter down")

    def shutdown(self) -> None:
        return None


class BrokenSpan:
    """A real SDK span whose ``methods`` raise."""

    def __init__(self, span: Any, counter: Counter, methods: tuple[str, ...]) -> None:
        self._span, self._counter, self._methods = span, counter, methods

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._span, name)
        if name in self._methods:

            def failing(*args: Any, **kwargs: Any) -> Any:
                attribute(*args, **kwargs)  # the SDK span still does its part, then the call raises
                self._counter.fail(name)

            return failing
        return attribute


class BrokenTracer:
    def __init__(self, tracer: Any, counter: Counter, methods: tuple[str, ...]) -> None:
        self._tracer, self._counter, self._methods = tracer, counter, methods

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        if "start_span" in self._methods:
            self._counter.fail("start_span")
        return BrokenSpan(self._tracer.start_span(*args, **kwargs), self._counter, self._methods)


class BrokenProvider:
    """A TracerProvider whose tracers or spans raise at ``methods`` (``get_tracer`` raises at once)."""

    def __init__(self, counter: Counter, methods: tuple[str, ...]) -> None:
        self._provider, self._counter, self._methods = TracerProvider(), counter, methods

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        if "get_tracer" in self._methods:
            self._counter.fail("get_tracer")
        return BrokenTracer(self._provider.get_tracer(*args, **kwargs), self._counter, self._methods)


#: Where each point's failures may be logged ("telemetry failed at <where>"): the step of the span that raised. The
#: scenario has a call that raises, whose span is then marked as failed ("error"), asking is_recording and setting
#: error.type on the way; an event is added only where a load compacted (the stores that keep a damaged entry).
WHERE: dict[str, set[str]] = {
    "get_tracer": {"get_tracer"},
    "start_span": {"start"},
    "sampler": {"start"},
    "on_start": {"start"},
    "on_end": {"end"},
    "on_end_of_save": {"end"},
    "on_end_of_change": {"end"},
    "exporter": set(),  # the SDK's processor logs an exporter's failure itself and raises nothing
    "is_recording": {"is_recording", "error"},
    "attributes": {"set_attributes", "error"},
    "event": {"add_event", "error"},
    "status": {"error"},
    "end": {"end"},
}


def _sdk(counter: Counter, *processors: Any, sampler: Any = None) -> Any:
    provider = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


#: Each point where telemetry can fail: a provider built to fail there.
POINTS: dict[str, Callable[[Counter], Any]] = {
    "get_tracer": lambda c: BrokenProvider(c, ("get_tracer",)),
    "start_span": lambda c: BrokenProvider(c, ("start_span",)),
    "sampler": lambda c: _sdk(c, sampler=RaisingSampler(c)),
    "on_start": lambda c: _sdk(c, RaisingProcessor(c, "on_start")),
    "on_end": lambda c: _sdk(c, RaisingProcessor(c, "on_end")),
    "on_end_of_save": lambda c: _sdk(c, RaisingProcessor(c, "on_end", lambda name: name == "sentinel_memory.save")),
    "on_end_of_change": lambda c: _sdk(c, RaisingProcessor(c, "on_end", lambda name: name != "sentinel_memory.save")),
    "exporter": lambda c: _sdk(c, SimpleSpanProcessor(RaisingExporter())),
    "is_recording": lambda c: BrokenProvider(c, ("is_recording",)),
    "attributes": lambda c: BrokenProvider(c, ("set_attribute", "set_attributes")),
    "event": lambda c: BrokenProvider(c, ("add_event",)),
    "status": lambda c: BrokenProvider(c, ("set_status",)),
    "end": lambda c: BrokenProvider(c, ("end",)),
}

STORES = ("json", "sqlite", "redis")


def make_store(kind: str, where: Any, url: str | None, *, native: bool = False) -> Any:
    if kind == "json":
        return sm.JsonFileStore(where / "m.json")
    if kind == "sqlite":
        return sm.SqliteStore(where / "m.db")
    assert url is not None
    if native:
        return sm.AsyncRedisStore(url=url, key=where.name)
    return sm.RedisStore(url=url, key=where.name)


def stored(kind: str, where: Any, url: str | None) -> Any:
    """What the store holds, read by a store object of its own: the document and, for JSON, the file's bytes."""
    store = make_store(kind, where, url)
    try:
        document = store.load()
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
    raw = (where / "m.json").read_bytes() if kind == "json" else None
    return document, raw


W1 = [{"role": "user", "content": "W1"}]
BAD = {"a": {1, 2}}  # a set is no JSON value: remember refuses it, an ERROR span with an exception event


def run_sync(mem: Any) -> list[Any]:
    """Every kind of span and event: changes with autosave, an eviction, a refused change, reads, a save."""
    out: list[Any] = [mem.add_messages(W1)]
    out.append(mem.remember("a", 1, importance=0.9))
    out.append(mem.remember("b", 2, importance=0.1))  # limit 3: the least important goes (a compaction event)
    with pytest.raises(TypeError) as refused:
        mem.remember("c", BAD)
    out.append(str(refused.value))
    out.append(mem.get_messages(token_budget=200, system="Be brief."))
    out.append(mem.get_context(token_budget=200))
    mem.save()
    out.append(mem.state)
    return out


async def run_async(mem: Any) -> list[Any]:
    """``run_sync`` on an AsyncMemory."""
    out: list[Any] = [await mem.add_messages(W1)]
    out.append(await mem.remember("a", 1, importance=0.9))
    out.append(await mem.remember("b", 2, importance=0.1))
    with pytest.raises(TypeError) as refused:
        await mem.remember("c", BAD)
    out.append(str(refused.value))
    out.append(mem.get_messages(token_budget=200, system="Be brief."))
    out.append(mem.get_context(token_budget=200))
    await mem.save()
    out.append(mem.state)
    return out


def drive(shell: str, kind: str, where: Any, url: str | None) -> tuple[list[Any], Any]:
    """The scenario on a new memory over a new store; its results and the memory's state after the next change."""
    if shell == "sync":
        mem = sm.create_memory(limit=3, store=make_store(kind, where, url), autosave=True, clock=lambda: NOW)
        try:
            return run_sync(mem), None
        finally:
            mem.close()

    async def go() -> list[Any]:
        store = make_store(kind, where, url, native=shell == "native")
        mem = await sm.create_async_memory(limit=3, store=store, autosave=True, clock=lambda: NOW)
        try:
            return await run_async(mem)
        finally:
            await mem.close()

    return asyncio.run(go()), None


SHELLS = ("sync", "threaded", "native")


def cases() -> list[Any]:
    out = []
    for point in POINTS:
        for shell in SHELLS:
            for kind in STORES:
                if shell == "native" and kind != "redis":
                    continue  # the one built-in async store
                out.append(pytest.param(point, shell, kind, id=f"{point}-{shell}-{kind}"))
    return out


@pytest.fixture
def redis_url(request: Any) -> str | None:
    if "redis" not in request.node.callspec.id.split("-"):
        return None
    server = request.getfixturevalue("redis_server")
    return str(server.url)


@pytest.mark.parametrize(("point", "shell", "kind"), cases())
def test_otl_8_telemetry_that_fails_changes_nothing(point, shell, kind, tmp_path, redis_url, caplog):
    """OTL-8: a failure at each telemetry point leaves the results, the memory, the store and the context as without it."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "traced").mkdir()
    expected, _ = drive(shell, kind, tmp_path / "plain", redis_url)
    expected_store = stored(kind, tmp_path / "plain", redis_url)

    counter = Counter()
    provider = POINTS[point](counter)
    app = TracerProvider().get_tracer("app")
    telemetry.instrument(provider)
    caplog.set_level(logging.WARNING, logger="sentinel_memory")
    try:
        with app.start_as_current_span("request") as request_span:
            got, _ = drive(shell, kind, tmp_path / "traced", redis_url)
            assert trace.get_current_span() is request_span  # the app's context is its own again
    finally:
        telemetry.uninstrument()
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert telemetry._CURRENT.get() is None
    assert got == expected
    # the document is the same; a JSON file is byte for byte the same
    assert stored(kind, tmp_path / "traced", redis_url) == expected_store
    ours = [r for r in caplog.records if r.name == "sentinel_memory" and "telemetry" in r.getMessage()]
    assert len(ours) == counter.raised  # each failure logged once
    assert {re.match(r"telemetry failed at (\w+) ", r.getMessage())[1] for r in ours} <= WHERE[point]
    if point != "exporter":
        assert counter.raised > 0


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
@pytest.mark.parametrize("kind", STORES)
def test_otl_8_a_save_span_that_fails_to_end_loses_no_write(kind, shared, tmp_path, redis_url):
    """OTL-8: on_end raising for the save span: add_messages returns, holds W1, and the next change keeps W1 stored."""
    counter = Counter()
    telemetry.instrument(
        _sdk(counter, RaisingProcessor(counter, "on_end", lambda name: name == "sentinel_memory.save"))
    )
    try:
        mem = sm.create_memory(
            store=make_store(kind, tmp_path, redis_url), autosave=True, shared=shared, clock=lambda: NOW
        )
        (entry,) = mem.add_messages(W1)
        assert list(mem.keys()) == [entry.key]  # held
    finally:
        telemetry.uninstrument()
    assert counter.raised == 1  # the save span only
    mem.add_turn("user", "next")
    mem.close()
    document, _ = stored(kind, tmp_path, redis_url)
    contents = [e["data"] for e in document["entries"]]
    assert contents == [W1[0], {"role": "user", "content": "next"}]
    assert entry.key == document["entries"][0]["key"]


def grouped_sync(mem: Any) -> list[Any]:
    """Changes and reads in one ``group()`` block, its one save at the end; then the memory's state."""
    out: list[Any] = []
    with mem.group():
        out.append(mem.add_messages(W1))
        out.append(mem.remember("a", 1, importance=0.9))
        out.append(mem.get_messages(token_budget=200))
        out.append(mem.add_turn("assistant", "W2"))
    out.append(mem.state)
    return out


async def grouped_async(mem: Any) -> list[Any]:
    """``grouped_sync`` on an AsyncMemory."""
    out: list[Any] = []
    async with mem.group():
        out.append(await mem.add_messages(W1))
        out.append(await mem.remember("a", 1, importance=0.9))
        out.append(mem.get_messages(token_budget=200))
        out.append(await mem.add_turn("assistant", "W2"))
    out.append(mem.state)
    return out


def drive_group(shell: str, where: Any) -> list[Any]:
    """``grouped_sync`` (or its async twin) on a new autosaved memory over a new JSON file."""
    if shell == "sync":
        mem = sm.create_memory(store=sm.JsonFileStore(where / "m.json"), autosave=True, clock=lambda: NOW)
        try:
            return grouped_sync(mem)
        finally:
            mem.close()

    async def go() -> list[Any]:
        mem = await sm.create_async_memory(store=sm.JsonFileStore(where / "m.json"), autosave=True, clock=lambda: NOW)
        try:
            return await grouped_async(mem)
        finally:
            await mem.close()

    return asyncio.run(go())


#: The processors that raise in a group: at its one save's end (one failure), or at every span in and after it.
GROUP_POINTS = {
    "save_end": lambda c: RaisingProcessor(c, "on_end", lambda name: name == "sentinel_memory.save"),
    "every_start": lambda c: RaisingProcessor(c, "on_start"),
    "every_end": lambda c: RaisingProcessor(c, "on_end"),
}


@pytest.mark.parametrize("shell", ["sync", "async"])
@pytest.mark.parametrize("point", list(GROUP_POINTS))
def test_otl_8_mw_10_a_span_processor_that_raises_in_a_group_changes_nothing(point, shell, tmp_path, caplog):
    """OTL-8, MW-10: a processor raising in a group() block and at its one save: same results, state and file, each failure one WARNING."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "traced").mkdir()
    expected = drive_group(shell, tmp_path / "plain")
    counter = Counter()
    telemetry.instrument(_sdk(counter, GROUP_POINTS[point](counter)))
    caplog.set_level(logging.WARNING, logger="sentinel_memory")
    try:
        got = drive_group(shell, tmp_path / "traced")
    finally:
        telemetry.uninstrument()
    assert got == expected
    assert (tmp_path / "traced" / "m.json").read_bytes() == (tmp_path / "plain" / "m.json").read_bytes()
    warnings = [r for r in caplog.records if r.name == "sentinel_memory" and r.levelno == logging.WARNING]
    assert len(warnings) == counter.raised and all("telemetry" in r.getMessage() for r in warnings)
    if point == "save_end":
        assert counter.raised == 1  # the group's one save, and so one WARNING
    else:
        assert counter.raised > 1
    document = json.loads((tmp_path / "traced" / "m.json").read_text())
    assert [e["key"] for e in document["entries"]] == ["chat:1", "a", "chat:2"]


def test_otl_8_a_context_that_cannot_be_attached_is_logged_at_attach(monkeypatch, caplog):
    """OTL-8: the span made current raising at attach is one WARNING "at attach"; the change is stored and its span ends."""
    from opentelemetry import context

    def attach(*args: Any) -> Any:
        raise RuntimeError("no context today")

    monkeypatch.setattr(context, "attach", attach)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    mem = sm.create_memory(clock=lambda: NOW)
    telemetry.instrument(provider)
    caplog.set_level(logging.WARNING, logger="sentinel_memory")
    try:
        assert mem.remember("a", 1).key == "a"
    finally:
        telemetry.uninstrument()
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("sentinel_memory", "telemetry failed at attach (RuntimeError); the memory goes on without it")
    ]  # and nothing detached that was never attached
    assert [span.name for span in exporter.get_finished_spans()] == ["sentinel_memory.remember"]
    assert telemetry._CURRENT.get() is None
