"""OpenTelemetry spans, read back with the SDK's in-memory exporter (OTL-1 .. OTL-7)."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from async_support import CoroutineStore
from telemetry_support import as_data, recording, tree

import sentinel_memory as sm
from sentinel_memory import telemetry

NOW = 1_792_310_400_000
SECRET = "s3cret"


def names(exporter):
    return [span.name for span in exporter.get_finished_spans()]


def only(exporter, name):
    found = [span for span in exporter.get_finished_spans() if span.name == name]
    assert len(found) == 1, names(exporter)
    return found[0]


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout.strip()


# -- OTL-1: opt-in, and free until used -----------------------------------------------------------------


def test_otl_1_importing_the_package_imports_no_opentelemetry():
    """OTL-1, DEP-1: `import sentinel_memory` and a memory's operations import nothing of OpenTelemetry."""
    out = run_python(
        """
        import sys
        import sentinel_memory as sm
        mem = sm.create_memory(autosave=True)
        mem.remember("a", 1)
        mem.get_messages(token_budget=100)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
        """
    )
    assert out == "[]"


def test_otl_1_no_provider_means_no_spans_and_no_tracer():
    """OTL-1: without instrument() and with no global provider set, nothing is traced."""
    assert telemetry._tracer() is None
    mem = sm.create_memory(clock=lambda: NOW)
    assert telemetry.operation("remember", mem.store) is telemetry._OFF
    mem.remember("a", 1)
    assert telemetry._CURRENT.get() is None


def test_otl_1_the_global_provider_is_used_once_an_app_sets_it():
    """OTL-1: an app's `trace.set_tracer_provider` is enough; before it nothing is traced (in a process of its own)."""
    out = run_python(
        """
        import sentinel_memory as sm
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        mem = sm.create_memory(clock=lambda: 1000)
        mem.remember("before", 1)
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        mem.remember("after", 2)
        print([span.name for span in exporter.get_finished_spans()])
        """
    )
    assert out == "['sentinel_memory.remember']"


def test_otl_1_instrument_and_uninstrument():
    """OTL-1: instrument(provider) sends spans there until uninstrument(); a provider that never records costs nothing."""
    from opentelemetry.trace import NoOpTracerProvider

    mem = sm.create_memory(clock=lambda: NOW)
    with recording() as exporter:
        mem.remember("a", 1)
    mem.remember("b", 2)
    assert names(exporter) == ["sentinel_memory.remember"]
    telemetry.instrument(NoOpTracerProvider())
    try:
        assert telemetry._tracer() is None
        assert telemetry.operation("remember", mem.store) is telemetry._OFF
    finally:
        telemetry.uninstrument()


def test_otl_1_instrument_refuses_what_is_no_provider_and_changes_nothing():
    """OTL-1: instrument() of something without get_tracer raises TypeError and keeps what was set."""
    with pytest.raises(TypeError, match="TracerProvider"):
        telemetry.instrument(object())
    assert telemetry._SETTINGS.provider is None
    with recording() as exporter:
        with pytest.raises(TypeError):
            telemetry.instrument("provider")
        sm.create_memory(clock=lambda: NOW).remember("a", 1)
    assert "sentinel_memory.remember" in names(exporter)


def test_otl_1_instrument_without_opentelemetry_names_the_extra(monkeypatch):
    """OTL-1: with opentelemetry-api missing, instrument() raises ImportError naming the [otel] extra."""
    monkeypatch.setattr(telemetry._SETTINGS, "api", None)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ImportError, match=r"sentinel-memory\[otel\]"):
        telemetry.instrument(object())
    assert telemetry._SETTINGS.provider is None


# -- OTL-2, OTL-3: changes and compactions -------------------------------------------------------------


def test_otl_2_each_change_is_a_span_with_its_counts():
    """OTL-2: every change is one span whose counts are the call's: written, removed, expired, evicted, stored."""
    now = [NOW]
    mem = sm.create_memory(limit=10, clock=lambda: now[0])
    with recording() as exporter:
        mem.remember("user:name", SECRET)
        mem.add_turn("user", SECRET)
        mem.add_message({"role": "assistant", "content": SECRET})
        mem.add_messages([{"role": "user", "content": SECRET}, {"role": "assistant", "content": SECRET}])
        mem.remember("session", SECRET, ttl=10)
        now[0] += 10
        mem.forget("user:name")
        mem.forget("user:name")
        compaction = mem.compact()
        mem.cache.put("tool", SECRET)
        mem.cache.delete("tool")
        mem.cache.clear()
        mem.working.set({"task": SECRET})
        mem.working.clear()
        mem.clear()
    spans = [as_data(span) for span in exporter.get_finished_spans()]
    counts = [
        (
            span["name"].removeprefix("sentinel_memory."),
            *(
                span["attributes"][f"sentinel_memory.entries.{count}"]
                for count in ("written", "removed", "expired", "evicted", "stored")
            ),
        )
        for span in spans
    ]
    assert counts == [
        ("remember", 1, 0, 0, 0, 1),
        ("add_turn", 1, 0, 0, 0, 2),
        ("add_message", 1, 0, 0, 0, 3),
        ("add_messages", 2, 0, 0, 0, 5),
        ("remember", 1, 0, 0, 0, 6),
        ("forget", 0, 1, 0, 0, 5),
        ("forget", 0, 0, 0, 0, 5),
        ("compact", 0, 0, 1, 0, 4),
        ("cache.put", 0, 0, 0, 0, 4),
        ("cache.delete", 0, 0, 0, 0, 4),
        ("cache.clear", 0, 0, 0, 0, 4),
        ("working.set", 0, 0, 0, 0, 4),
        ("working.clear", 0, 0, 0, 0, 4),
        ("clear", 0, 4, 0, 0, 0),
    ]
    assert len(compaction.expired) == 1
    assert all(span["attributes"]["sentinel_memory.store.type"] == "MemoryStore" for span in spans)
    assert all(span["status"] == "UNSET" for span in spans)
    assert SECRET not in json.dumps(spans) and "user:name" not in json.dumps(spans)


def test_otl_3_every_compaction_is_an_event_with_its_counts():
    """OTL-3: automatic and explicit compactions are events on their change's span; nothing dropped, no event."""
    now = [NOW]
    dropped = []
    mem = sm.create_memory(limit=2, clock=lambda: now[0], on_evict=dropped.append)
    with recording() as exporter:
        mem.remember("a", 1, ttl=5)
        mem.remember("b", 2, importance=0.1)
        now[0] += 5
        mem.remember("c", 3)  # past the limit: the expired one goes
        mem.remember("d", 4, importance=0.9)  # one evicted
        mem.remember("e", 5, ttl=1)
        now[0] += 1
        explicit = mem.compact()
        mem.compact()  # drops nothing: no event
    assert len(dropped) == 3
    spans = [as_data(span) for span in exporter.get_finished_spans()]
    events = [(span["name"], span["events"]) for span in spans if span["events"]]
    automatic = [event for _, found in events for event in found if event[1]["sentinel_memory.compaction.automatic"]]
    assert [(e[1]["sentinel_memory.entries.expired"], e[1]["sentinel_memory.entries.evicted"]) for e in automatic] == [
        (len(c.expired), len(c.evicted)) for c in dropped
    ]
    assert events[-1] == (
        "sentinel_memory.compact",
        [
            (
                "sentinel_memory.compaction",
                {
                    "sentinel_memory.entries.expired": len(explicit.expired),
                    "sentinel_memory.entries.evicted": len(explicit.evicted),
                    "sentinel_memory.compaction.automatic": False,
                },
            )
        ],
    )
    assert spans[-1]["name"] == "sentinel_memory.compact" and spans[-1]["events"] == []


def test_otl_2_sync_and_async_memories_emit_the_same_spans(tmp_path):
    """OTL-2: Memory, AsyncMemory in a worker thread and AsyncMemory's native engine emit the same spans, nested alike."""

    def drive(mem):
        mem.remember("a", SECRET)
        mem.add_turn("user", SECRET)
        mem.add_messages([{"role": "assistant", "content": SECRET}, {"role": "user", "content": SECRET}])
        mem.remember("b", SECRET, importance=0.1)
        mem.forget("a")
        mem.working.set({"step": 1})
        mem.compact()
        mem.save()

    async def drive_async(mem):
        await mem.remember("a", SECRET)
        await mem.add_turn("user", SECRET)
        await mem.add_messages([{"role": "assistant", "content": SECRET}, {"role": "user", "content": SECRET}])
        await mem.remember("b", SECRET, importance=0.1)
        await mem.forget("a")
        await mem.working.set({"step": 1})
        await mem.compact()
        await mem.save()

    def reads(mem):
        mem.get_context(token_budget=50)
        mem.get_messages(token_budget=60, system="Be brief.")

    drop = ("sentinel_memory.store.type", "db.system.name")
    with recording() as exporter:
        mem = sm.create_memory(limit=3, store=sm.SqliteStore(tmp_path / "sync.db"), autosave=True, clock=lambda: NOW)
        drive(mem)
        reads(mem)
        mem.close()
    expected = tree(exporter.get_finished_spans(), drop=drop)
    assert [node["name"] for node in expected][:2] == ["sentinel_memory.load", "sentinel_memory.remember"]
    assert [child["name"] for child in expected[1]["children"]] == ["sentinel_memory.save"]

    async def threaded():
        mem = await sm.create_async_memory(
            limit=3, store=sm.SqliteStore(tmp_path / "threaded.db"), autosave=True, clock=lambda: NOW
        )
        assert mem.threaded
        await drive_async(mem)
        reads(mem)
        await mem.close()

    async def native():
        mem = await sm.create_async_memory(limit=3, store=CoroutineStore(), autosave=True, clock=lambda: NOW)
        assert not mem.threaded
        await drive_async(mem)
        reads(mem)
        await mem.close()

    for run in (threaded, native):
        with recording() as exporter:
            asyncio.run(run())
        assert tree(exporter.get_finished_spans(), drop=drop) == expected, run.__name__


def test_otl_2_a_shared_change_holds_its_reload(tmp_path):
    """OTL-2, OTL-5: with shared=True a change's span holds the reload and the save of its transaction."""
    path = tmp_path / "m.json"
    first = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=lambda: NOW)
    other = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=lambda: NOW)
    other.remember("b", 2)
    with recording() as exporter:
        first.remember("a", 1)
    (root,) = tree(exporter.get_finished_spans())
    assert root["name"] == "sentinel_memory.remember"
    assert [child["name"] for child in root["children"]] == ["sentinel_memory.load", "sentinel_memory.save"]
    assert root["attributes"]["sentinel_memory.entries.stored"] == 2
    load = root["children"][0]["attributes"]
    assert load["sentinel_memory.load.loaded"] == 1 and load["sentinel_memory.generation"] == 1


# -- OTL-4: errors -------------------------------------------------------------------------------------


def test_otl_4_a_refused_change_is_an_error_span_without_the_message():
    """OTL-4: a change that raises has status ERROR, error.type and an exception event without message; nothing changed."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.remember("a", 1)
    before = mem.state
    with recording() as exporter, pytest.raises(TypeError) as raised:
        mem.remember("a", {SECRET: {1, 2}})
    assert SECRET in str(raised.value)  # the message quotes the value: it must stay off the span
    span = as_data(only(exporter, "sentinel_memory.remember"))
    assert span["status"] == "ERROR"
    assert span["attributes"] == {"sentinel_memory.store.type": "MemoryStore", "error.type": "TypeError"}
    assert span["events"] == [("exception", {"exception.type": "TypeError"})]
    assert mem.state is before


class FailingStore(sm.MemoryStore):
    """A store whose saves fail as a full disk's would."""

    def save(self, document):
        raise OSError(28, f"No space left for {SECRET}")


def test_otl_4_a_failed_save_marks_the_save_and_its_change():
    """OTL-4, OTL-5: a save that raises is an ERROR save span inside an ERROR change span; the memory is as it was."""
    mem = sm.create_memory(store=FailingStore(), autosave=True, clock=lambda: NOW)
    with recording() as exporter, pytest.raises(OSError):
        mem.remember("a", SECRET)
    (root,) = tree(exporter.get_finished_spans())
    (save,) = root["children"]
    for span in (root, save):
        assert span["status"] == "ERROR"
        assert span["attributes"]["error.type"] == "OSError"
        assert span["events"] == [("exception", {"exception.type": "OSError"})]
    assert save["attributes"]["sentinel_memory.save.entries"] == 1
    assert "sentinel_memory.entries.stored" not in root["attributes"]
    assert len(mem) == 0
    assert SECRET not in json.dumps(root)


def test_otl_4_an_error_type_outside_builtins_is_qualified():
    """OTL-4: error.type is the exception's module and qualified name, as the SDK writes exception.type."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_turn("user", "x" * 400)
    with recording() as exporter, pytest.raises(sm.TokenBudgetError):
        mem.get_messages(token_budget=10)
    span = as_data(only(exporter, "sentinel_memory.get_messages"))
    assert span["attributes"]["error.type"] == "sentinel_memory.core.errors.TokenBudgetError"
    assert span["attributes"]["sentinel_memory.token_budget"] == 10


# -- OTL-5: loads and saves ----------------------------------------------------------------------------


def test_otl_5_loads_and_saves_say_what_they_moved(tmp_path):
    """OTL-5: a load's span has the LoadResult and the generation; a save's whether it was incremental and its counts."""
    store = sm.SqliteStore(tmp_path / "m.db")
    with recording() as exporter:
        mem = sm.create_memory(store=store, autosave=True, clock=lambda: NOW)
        mem.remember("a", 1)
        mem.forget("a")
        mem.remember("b", 2)
        mem.save()
        mem.load()
        mem.close()
    spans = [as_data(span) for span in exporter.get_finished_spans() if span.name.endswith(("load", "save"))]
    for span in spans:
        assert span["attributes"]["db.system.name"] == "sqlite"
        assert span["attributes"]["sentinel_memory.store.type"] == "SqliteStore"
    saves = [
        tuple(
            span["attributes"][f"sentinel_memory.{name}"]
            for name in ("save.incremental", "save.entries", "save.deletes", "generation")
        )
        for span in spans
        if span["name"] == "sentinel_memory.save"
    ]
    assert saves == [(True, 1, 0, 1), (True, 0, 1, 2), (True, 1, 0, 3), (False, 1, 0, 4)]
    loads = [span["attributes"] for span in spans if span["name"] == "sentinel_memory.load"]
    assert [(a["sentinel_memory.load.loaded"], a["sentinel_memory.generation"]) for a in loads] == [(0, 0), (1, 4)]


def lossy_file(folder: Path) -> Path:
    """A JSON file of four good entries and a broken one: a load drops one, and compacts two at limit=2."""
    path = folder / "m.json"
    big = sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: NOW)
    for i in range(4):
        big.remember(f"k{i}", i)
    big.save()
    document = json.loads(path.read_text())
    document["entries"].append({"key": "broken"})
    path.write_text(json.dumps(document))
    return path


def test_otl_5_a_lossy_load_and_the_preserving_save(tmp_path):
    """OTL-5: a load that dropped and compacted says how many; the save that preserves the original first says so."""
    path = lossy_file(tmp_path)
    with recording() as exporter, pytest.warns(sm.LoadWarning):
        mem = sm.create_memory(limit=2, store=sm.JsonFileStore(path), clock=lambda: NOW)
    load = as_data(only(exporter, "sentinel_memory.load"))
    assert {k: v for k, v in load["attributes"].items() if k.startswith("sentinel_memory.load.")} == {
        "sentinel_memory.load.loaded": 4,
        "sentinel_memory.load.dropped": 1,
        "sentinel_memory.load.compacted": 2,
        "sentinel_memory.load.working_dropped": False,
    }
    assert load["attributes"]["sentinel_memory.entries.stored"] == 2
    assert [name for name, attributes in load["events"]] == ["sentinel_memory.compaction"]
    assert "db.system.name" not in load["attributes"]  # a JSON file is no database
    with recording() as exporter:
        mem.save()
    save = as_data(only(exporter, "sentinel_memory.save"))
    assert save["events"] == [("sentinel_memory.preserved", {})]
    assert save["attributes"]["sentinel_memory.save.entries"] == 2


# -- OTL-6: reads --------------------------------------------------------------------------------------


def test_otl_6_reads_carry_their_budget_and_totals():
    """OTL-6: get_context and get_messages spans carry the budget, the tokens, the entries chosen and omitted."""
    mem = sm.create_memory(clock=lambda: NOW)
    for i in range(30):
        mem.remember(f"fact:{i}", f"{SECRET} fact number {i}")
        mem.add_turn("user" if i % 2 == 0 else "assistant", f"{SECRET} turn {i}")
    mem.add_message(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    with recording() as exporter:
        context = mem.get_context(token_budget=80, query=SECRET)
        messages = mem.get_messages(token_budget=120.5, query=SECRET, system=SECRET)
    spans = exporter.get_finished_spans()
    assert dict(spans[0].attributes) == {
        "sentinel_memory.store.type": "MemoryStore",
        "sentinel_memory.token_budget": 80,
        "sentinel_memory.tokens": context.tokens,
        "sentinel_memory.entries.chosen": len(context.entries),
        "sentinel_memory.entries.omitted": context.omitted,
    }
    assert dict(spans[1].attributes) == {
        "sentinel_memory.store.type": "MemoryStore",
        "sentinel_memory.token_budget": 120.5,
        "sentinel_memory.tokens": messages.tokens,
        "sentinel_memory.entries.chosen": len(messages.entries),
        "sentinel_memory.entries.omitted": messages.omitted,
        "sentinel_memory.messages": len(messages.messages),
        "sentinel_memory.entries.pending": len(messages.pending),
    }
    assert len(messages.pending) == 1 and messages.omitted > 0


def test_otl_6_a_budget_that_is_no_number_is_left_out():
    """OTL-6: a budget that is not a number is not recorded; the read's own error is."""
    mem = sm.create_memory(clock=lambda: NOW)
    with recording() as exporter, pytest.raises((TypeError, ValueError)):
        mem.get_context(token_budget=SECRET)  # type: ignore[arg-type]
    span = as_data(only(exporter, "sentinel_memory.get_context"))
    assert "sentinel_memory.token_budget" not in span["attributes"] and span["status"] == "ERROR"


# -- OTL-7: the names ----------------------------------------------------------------------------------


def test_otl_7_the_conventions_names_are_the_packages():
    """OTL-7: every name taken from the semantic conventions is the constant the installed package defines."""
    for name, where in telemetry.SEMCONV.items():
        module, constant = where.rsplit(".", 1)
        assert getattr(importlib.import_module(module), constant) == name
    from opentelemetry.semconv._incubating.attributes.db_attributes import DbSystemNameValues

    assert {"sqlite", "redis"} <= {value.value for value in DbSystemNameValues}
    assert set(telemetry._DB_SYSTEMS.values()) == {"sqlite", "redis"}


def test_otl_7_the_installed_conventions_define_no_memory_names():
    """OTL-7: the conventions this project was built against have no gen_ai memory operation or attribute, so none is used."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes

    names = [value for key, value in vars(gen_ai_attributes).items() if key.startswith("GEN_AI_")]
    operations = [value.value for value in gen_ai_attributes.GenAiOperationNameValues]
    if any("memory" in name for name in names + operations):
        pytest.skip("these conventions define memory names: telemetry.py should use them (OTL-7)")
    assert not any(name.startswith("gen_ai.") for name in telemetry.ATTRIBUTES)


def test_otl_7_every_attribute_is_listed_as_ours_or_the_conventions(tmp_path):
    """OTL-7: every attribute a span carries is in ATTRIBUTES (the project's, under sentinel_memory.) or SEMCONV."""
    mem = sm.create_memory(limit=2, store=sm.SqliteStore(tmp_path / "m.db"), autosave=True, clock=lambda: NOW)
    with recording() as exporter:
        for i in range(4):
            mem.add_turn("user", f"turn {i}")
        mem.get_messages(token_budget=100)
        mem.get_context(token_budget=100)
        mem.load()
        with pytest.raises(ValueError):
            mem.forget("")
    seen = {key for span in exporter.get_finished_spans() for key in span.attributes}
    seen |= {key for span in exporter.get_finished_spans() for event in span.events for key in event.attributes}
    assert seen <= set(telemetry.ATTRIBUTES) | set(telemetry.SEMCONV)
    assert all(key.startswith(telemetry.PREFIX) for key in telemetry.ATTRIBUTES)
    spans = {span.name.removeprefix(telemetry.PREFIX) for span in exporter.get_finished_spans()}
    assert spans <= set(telemetry.SPANS)


def test_otl_1_an_api_without_the_global_is_asked_for_its_provider(monkeypatch):
    """OTL-1: where the API keeps its global provider elsewhere, get_tracer_provider() is asked; its proxy means none."""
    from opentelemetry import trace

    monkeypatch.delattr(trace, "_TRACER_PROVIDER")
    monkeypatch.setattr(trace, "get_tracer_provider", trace.ProxyTracerProvider)
    assert telemetry._tracer() is None  # the proxy: nothing set
    with recording() as exporter:
        provider = telemetry._SETTINGS.provider
        telemetry.uninstrument()
        monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
        sm.create_memory(clock=lambda: NOW).remember("a", 1)
    assert names(exporter) == ["sentinel_memory.load", "sentinel_memory.remember"]


def test_otl_7_the_lists_name_exactly_what_the_memory_emits(tmp_path):
    """OTL-7: every operation run once emits every span of SPANS, every event of EVENTS and every attribute listed, and no other."""
    path = lossy_file(tmp_path)
    with recording() as exporter:
        with pytest.warns(sm.LoadWarning):
            lossy = sm.create_memory(limit=2, store=sm.JsonFileStore(path), clock=lambda: NOW)
        lossy.save()  # preserves the original first
        mem = sm.create_memory(limit=3, store=sm.SqliteStore(tmp_path / "m.db"), autosave=True, clock=lambda: NOW)
        telemetry.set_conversation(mem, "session-7")
        mem.remember("a", 1, ttl=1)
        mem.add_turn("user", "hello")
        mem.add_message({"role": "assistant", "content": "hi"})
        mem.add_messages([{"role": "user", "content": "more"}, {"role": "assistant", "content": "yes"}])
        mem.forget("a")
        mem.clear()
        mem.compact()
        mem.cache.put("q", "answer")
        mem.cache.delete("q")
        mem.cache.clear()
        mem.working.set({"step": 1})
        mem.working.clear()
        mem.get_context(token_budget=100)
        mem.get_messages(token_budget=100)
        mem.load()
        with pytest.raises(ValueError):
            mem.forget("")
    spans = exporter.get_finished_spans()
    assert {span.name for span in spans} == {telemetry.PREFIX + name for name in telemetry.SPANS}
    assert {event.name for span in spans for event in span.events} == set(telemetry.EVENTS) | {"exception"}
    seen = {key for span in spans for key in span.attributes}
    seen |= {key for span in spans for event in span.events for key in event.attributes}
    assert seen == set(telemetry.ATTRIBUTES) | set(telemetry.SEMCONV)


def test_otl_7_the_guide_lists_every_attribute_as_the_module_describes_it():
    """OTL-7: the telemetry guide's attribute table is ATTRIBUTES, name for name and description for description."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "telemetry.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(sentinel_memory\.[a-z_.]+)` \| (.+) \|$", page, flags=re.MULTILINE)
    assert dict(rows) == telemetry.ATTRIBUTES
    assert len(rows) == len(telemetry.ATTRIBUTES)


@pytest.mark.parametrize("kind", ["sqlite", "redis", "async-redis", "json"])
def test_otl_7_loads_and_saves_name_their_database_system(kind, tmp_path, request):
    """OTL-7: the load and save spans of SqliteStore say db.system.name sqlite, of RedisStore and AsyncRedisStore redis; a file none."""
    url = str(request.getfixturevalue("redis_server").url) if "redis" in kind else ""
    with recording() as exporter:
        if kind == "async-redis":

            async def go() -> None:
                store = sm.AsyncRedisStore(url=url, key=tmp_path.name)
                mem = await sm.create_async_memory(store=store, autosave=True, clock=lambda: NOW)
                await mem.remember("a", 1)
                await mem.close()

            asyncio.run(go())
        else:
            stores = {
                "sqlite": lambda: sm.SqliteStore(tmp_path / "m.db"),
                "json": lambda: sm.JsonFileStore(tmp_path / "m.json"),
            }
            store = stores[kind]() if kind in stores else sm.RedisStore(url=url, key=tmp_path.name)
            mem = sm.create_memory(store=store, autosave=True, clock=lambda: NOW)
            mem.remember("a", 1)
            mem.close()
    spans = [span for span in exporter.get_finished_spans() if span.name.endswith(("load", "save"))]
    assert sorted(span.name for span in spans) == ["sentinel_memory.load", "sentinel_memory.save"]
    expected = {"sqlite": "sqlite", "json": None}.get(kind, "redis")
    assert [span.attributes.get("db.system.name") for span in spans] == [expected, expected]


def test_otl_1_the_messages_of_instrument_name_what_failed(monkeypatch):
    """OTL-1: instrument() of no provider names what it got; without opentelemetry-api, the ImportError names the extra."""
    with pytest.raises(TypeError) as refused:
        telemetry.instrument(object())
    assert str(refused.value) == "tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer), got object"
    monkeypatch.setattr(telemetry._SETTINGS, "api", None)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(ImportError) as missing:
        telemetry.instrument(object())
    assert str(missing.value) == "sentinel_memory's spans need OpenTelemetry: pip install 'sentinel-memory[otel]'"


def test_otl_1_with_the_api_loaded_and_no_provider_set_the_global_is_read_not_asked(monkeypatch):
    """OTL-1: the API's global provider is read as an attribute; get_tracer_provider (which reads the environment) is not called."""
    from opentelemetry import trace

    asked: list[int] = []
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: asked.append(1))
    mem = sm.create_memory(clock=lambda: NOW)
    mem.remember("a", 1)
    mem.get_context(token_budget=50)
    assert asked == []


class CountingProvider:
    """A tracer provider that counts the tracers asked of it and names what it was asked for."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked: list[tuple[str, str | None]] = []

    def get_tracer(self, name: str, version: str | None = None, *args: Any, **kwargs: Any) -> Any:
        self.asked.append((name, version))
        return self.inner.get_tracer(name, version, *args, **kwargs)


def test_otl_1_one_tracer_per_provider_named_for_the_package_and_its_version():
    """OTL-1: a provider is asked for one tracer, "sentinel_memory" at the package's version, however many operations follow; a new provider once more."""
    from opentelemetry.sdk.trace import TracerProvider

    first, second = CountingProvider(TracerProvider()), CountingProvider(TracerProvider())
    mem = sm.create_memory(clock=lambda: NOW)
    try:
        telemetry.instrument(first)
        for i in range(3):
            mem.remember(f"k{i}", i)
        telemetry.instrument(second)
        mem.remember("k", 1)
        telemetry.instrument(first)
        mem.remember("k", 2)
    finally:
        telemetry.uninstrument()
    assert first.asked == [("sentinel_memory", sm.__version__)] * 2 and second.asked == first.asked[:1]


def test_otl_8_a_provider_whose_get_tracer_raises_is_one_warning_naming_where(caplog):
    """OTL-8: get_tracer raising is logged as "telemetry failed at get_tracer (its type)", and asked again next time."""

    class Broken:
        def get_tracer(self, *args: Any) -> Any:
            raise RuntimeError(SECRET)

    mem = sm.create_memory(clock=lambda: NOW)
    telemetry.instrument(Broken())
    try:
        with caplog.at_level("WARNING", logger="sentinel_memory"):
            mem.remember("a", 1)
            mem.remember("b", 1)
    finally:
        telemetry.uninstrument()
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("sentinel_memory", "telemetry failed at get_tracer (RuntimeError); the memory goes on without it")
    ] * 2
    assert mem.get("b") is not None
