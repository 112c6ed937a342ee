"""Spans tied to a user and nested under the caller's span, with the SDK's in-memory exporter (OTL-9, OTL-10)."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from telemetry_support import recording

import sentinel_memory as sm
from sentinel_memory import telemetry

NOW = 1_792_310_400_000
CONVERSATION = "gen_ai.conversation.id"


def test_otl_9_a_folders_memory_tags_every_span_with_its_users_hashed_id(tmp_path):
    """OTL-9: spans of a folder's memory carry the SHA-256 prefix of the user id, never the id."""
    folder = sm.MemoryFolder(tmp_path, clock=lambda: NOW)
    mem = folder.open("alice@example.com")
    with recording() as exporter:
        mem.add_turn("user", "Hi")
        mem.get_messages(token_budget=100)
        folder.open("bob").remember("k", 1)
    spans = exporter.get_finished_spans()
    expected = hashlib.sha256(b"alice@example.com").hexdigest()[:32]
    alice = [s for s in spans if s.attributes.get(CONVERSATION) == expected]
    assert {s.name for s in alice} >= {
        "sentinel_memory.add_turn",
        "sentinel_memory.save",
        "sentinel_memory.get_messages",
    }
    assert telemetry.conversation_id("bob") in {s.attributes.get(CONVERSATION) for s in spans}
    assert not any("alice" in str(value) for s in spans for value in s.attributes.values())


def test_otl_9_an_apps_memory_is_tagged_as_asked_and_untagged_carries_none():
    """OTL-9: set_conversation hashes by default, keeps a given id with hashed=False, and None removes the tag."""
    mem = sm.create_memory(clock=lambda: NOW)
    with recording() as exporter:
        mem.remember("a", 1)
        telemetry.set_conversation(mem, "session-7")
        mem.remember("b", 1)
        telemetry.set_conversation(mem, "session-7", hashed=False)
        mem.remember("c", 1)
        telemetry.set_conversation(mem, None)
        mem.remember("d", 1)
    tags = [s.attributes.get(CONVERSATION) for s in exporter.get_finished_spans() if s.name.endswith("remember")]
    assert tags == [None, telemetry.conversation_id("session-7"), "session-7", None]


class _Plumbed:
    """Something with a ``_plumbing`` that is no memory's: it has no ``conversation``."""

    _plumbing = object()


@pytest.mark.parametrize(("memory", "conversation"), [(object(), "x"), (None, "x"), (_Plumbed(), "x"), ("mem", 7)])
def test_otl_9_bad_arguments_are_refused(memory, conversation):
    """OTL-9: a non-memory or a non-str id raises TypeError, and conversation_id takes only a str."""
    target = sm.create_memory() if memory == "mem" else memory
    expected = (
        "a conversation's id must be a str or None, got int"
        if memory == "mem"
        else f"set_conversation needs a Memory or an AsyncMemory, got {type(memory).__name__}"
    )
    with pytest.raises(TypeError) as refused:
        telemetry.set_conversation(target, conversation)
    assert str(refused.value) == expected
    with pytest.raises(TypeError) as refused:
        telemetry.conversation_id(7)  # type: ignore[arg-type]
    assert str(refused.value) == "a conversation's id must be a str, got int"


def test_otl_9_otl_10_an_async_memory_is_tagged_and_nests_under_the_apps_span(tmp_path):
    """OTL-9, OTL-10: an AsyncMemory's spans (run in its worker thread) carry the tag and are children of the app's span."""

    async def main() -> None:
        mem = await sm.create_async_memory(store=sm.JsonFileStore(tmp_path / "m.json"), autosave=True)
        telemetry.set_conversation(mem, "u")
        with recording() as exporter:
            tracer = trace.get_tracer("app", tracer_provider=telemetry._SETTINGS.provider)
            with tracer.start_as_current_span("app.request") as app:
                await mem.remember("a", 1)
            spans = exporter.get_finished_spans()
        await mem.close()
        change = next(s for s in spans if s.name == "sentinel_memory.remember")
        save = next(s for s in spans if s.name == "sentinel_memory.save")
        assert change.parent.span_id == app.get_span_context().span_id
        assert save.parent.span_id == change.context.span_id
        assert change.attributes[CONVERSATION] == telemetry.conversation_id("u")

    asyncio.run(main())


def test_otl_10_every_adapter_span_nests_under_the_apps_span(tmp_path):
    """OTL-10: a LangChain agent, an Agents SDK run and a pydantic-ai run over a folder: every memory span has the app's span as an ancestor."""
    pytest.importorskip("langchain")
    pytest.importorskip("agents")
    pytest.importorskip("pydantic_ai")
    from agents import Agent as SdkAgent
    from agents import RunConfig, Runner
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel
    from server_support import Echo, EchoChatModel, EchoModel

    from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
    from sentinel_memory.integrations.openai_agents import SentinelSessions
    from sentinel_memory.integrations.pydantic_ai import SentinelHistory

    folder = sm.MemoryFolder(tmp_path, clock=lambda: NOW)
    lc = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, token_budget=400)])
    sessions = SentinelSessions(folder, token_budget=400)
    sdk = SdkAgent(name="a", model=EchoModel())
    history = SentinelHistory(folder, 400, user=lambda deps: deps)
    pai = Agent(FunctionModel(Echo()), capabilities=[history], deps_type=str)

    async def runs() -> None:
        await lc.ainvoke({"messages": [HumanMessage("hi")]}, context={"user_id": "lc-async"})
        config = RunConfig(tracing_disabled=True, call_model_input_filter=sessions.call_model_input_filter)
        await Runner.run(sdk, "hi", session=sessions.session("sdk"), run_config=config)
        await pai.run("hi", deps="pai")

    with recording() as exporter:
        tracer = trace.get_tracer("app", tracer_provider=telemetry._SETTINGS.provider)
        with tracer.start_as_current_span("app.request") as app:
            lc.invoke({"messages": [HumanMessage("hi")]}, context={"user_id": "lc"})
            asyncio.run(runs())
        spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    root = app.get_span_context().span_id
    mine = [s for s in spans if s.name.startswith(telemetry.PREFIX)]
    users = {s.attributes.get(CONVERSATION) for s in mine}
    assert {telemetry.conversation_id(u) for u in ("lc", "lc-async", "sdk", "pai")} <= users
    for span in mine:
        parent = span.parent
        while parent is not None and parent.span_id != root:
            parent = by_id[parent.span_id].parent if parent.span_id in by_id else None
        assert parent is not None, f"{span.name} is not under the app's span"


def test_otl_9_an_id_with_a_lone_surrogate_is_hashed_from_its_surrogatepass_bytes():
    """OTL-9: any str has an id, a lone surrogate too: the hash of its UTF-8 bytes with surrogatepass, never an error."""
    assert telemetry.conversation_id("a\ud800") == hashlib.sha256(b"a\xed\xa0\x80").hexdigest()[:32]
    assert telemetry.conversation_id("user-42") == hashlib.sha256(b"user-42").hexdigest()[:32]
