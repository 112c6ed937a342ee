"""One agent for many users, against plain restatements (SRV-1 .. SRV-3, LC-9 .. LC-11, OAI-7 .. OAI-9, PAI-7 .. PAI-9, LG-7).

Each property drives the real framework over the echoing stub models of
``server_support``: runs of a few users interleaved in any order, clients
that send any tail of their transcript again, readers and writers on one
folder, batches with a bad operation anywhere.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("agents")
pytest.importorskip("pydantic_ai")

from agent_support import ScriptedToolModel, request_tokens
from agents import Agent as SdkAgent
from agents import RunConfig, Runner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.store.base import PutOp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart
from pydantic_ai.models.function import FunctionModel
from server_support import Echo, EchoChatModel, EchoModel

import sentinel_memory as sm
from sentinel_memory.core.turns import resent_count
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.langgraph import SentinelStore
from sentinel_memory.integrations.openai_agents import SentinelSession, SentinelSessions
from sentinel_memory.integrations.pydantic_ai import SentinelHistory
from sentinel_memory.serving import run_view

SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
USERS = ["ann", "bob", "cyd"]
RUNS = st.lists(st.sampled_from(USERS), min_size=1, max_size=6)


def said(memory: sm.Memory) -> list[str]:
    """The text of each turn, oldest first."""
    out = []
    for key, data in memory.items():
        if key.startswith("chat:"):
            content = data["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def expected(runs: list[str], user: str) -> list[str]:
    """A user's conversation: each of its questions, numbered by run, with the echo's answer."""
    out = []
    for n, who in enumerate(runs):
        if who == user:
            out += [f"q{n} {who}", f"ok: q{n} {who}"]
    return out


@given(st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"), max_size=6))
def test_srv_3_resent_count_is_the_longest_lead_equal_to_the_end(stored, new):
    """SRV-3: resent_count is the largest k with new[:k] == stored[-k:], restated by trying every k."""
    plain = max([k for k in range(min(len(stored), len(new)) + 1) if k == 0 or new[:k] == stored[-k:]])
    assert resent_count(stored, new) == plain


@SLOW
@given(RUNS)
def test_lc_9_srv_1_langchain_users_in_any_order_keep_their_own_conversation(runs):
    """LC-9, SRV-1: runs of a few users through one agent over a folder, in any order: each memory is exactly its user's conversation."""
    with tempfile.TemporaryDirectory() as path:
        folder = sm.MemoryFolder(path)
        agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, 400)])
        for n, user in enumerate(runs):
            agent.invoke({"messages": [HumanMessage(f"q{n} {user}")]}, context={"user_id": user})
        for user in USERS:
            assert said(folder.open(user)) == expected(runs, user)


@SLOW
@given(RUNS)
def test_oai_7_srv_1_sdk_sessions_in_any_order_keep_their_own_conversation(runs):
    """OAI-7, SRV-1: runs of a few sessions through one Agent and one RunConfig, in any order: each memory is exactly its session's conversation."""
    with tempfile.TemporaryDirectory() as path:
        folder = sm.MemoryFolder(path)
        sessions = SentinelSessions(folder, token_budget=400)
        agent = SdkAgent(name="a", model=EchoModel())
        config = RunConfig(call_model_input_filter=sessions.call_model_input_filter)

        async def run_all() -> None:
            for n, user in enumerate(runs):
                await Runner.run(agent, f"q{n} {user}", session=sessions.session(user), run_config=config)

        asyncio.run(run_all())
        for user in USERS:
            items = SentinelSession(user, folder).items()
            texts = [i["content"] if isinstance(i["content"], str) else i["content"][0]["text"] for i in items]
            assert texts == expected(runs, user)


@SLOW
@given(RUNS)
def test_pai_7_srv_1_pydantic_ai_users_in_any_order_keep_their_own_conversation(runs):
    """PAI-7, SRV-1: runs of a few users' deps through one Agent over a folder, in any order: each memory is exactly its user's conversation."""
    with tempfile.TemporaryDirectory() as path:
        folder = sm.MemoryFolder(path)
        agent = Agent(FunctionModel(Echo()), capabilities=[SentinelHistory(folder, 400)])
        for n, user in enumerate(runs):
            agent.run_sync(f"q{n} {user}", deps={"user_id": user})
        for user in USERS:
            assert said(folder.open(user)) == expected(runs, user)


@SLOW
@given(st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=5))
def test_lc_10_srv_3_a_client_resending_any_tail_of_its_transcript_stores_each_message_once(tails):
    """LC-10, SRV-3: a client that sends any tail of its transcript with each new question leaves the memory equal to the transcript."""
    memory = sm.create_memory()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, 400)])
    transcript: list[Any] = []
    for n, tail in enumerate(tails):
        sent = (transcript[len(transcript) - tail :] if tail else []) + [HumanMessage(f"q{n}")]
        reply = agent.invoke({"messages": sent})["messages"][-1]
        transcript += [HumanMessage(f"q{n}"), reply]
    assert said(memory) == [m.text for m in transcript]


@SLOW
@given(st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=5))
def test_oai_9_srv_3_items_resending_any_tail_are_stored_once(tails):
    """OAI-9, SRV-3: batches that lead with any tail of the stored items, then a new question and its answer, leave every item stored once."""
    session = SentinelSession("s", memory=sm.create_memory())
    transcript: list[dict[str, Any]] = []
    for n, tail in enumerate(tails):
        question = {"role": "user", "content": f"q{n}"}
        session.add((transcript[len(transcript) - tail :] if tail else []) + [question])
        answer = {"role": "assistant", "content": f"a{n}"}
        session.add([answer])
        transcript += [question, answer]
    assert session.items() == transcript


@SLOW
@given(st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=4))
def test_pai_8_srv_3_a_message_history_resent_in_any_tail_is_stored_once(tails):
    """PAI-8, SRV-3: runs given any tail of the earlier messages again, read back from JSON, leave each message stored once."""
    memory = sm.create_memory()
    agent = Agent(FunctionModel(Echo()), capabilities=[SentinelHistory(memory, 400)])
    everything: list[Any] = []
    for n, tail in enumerate(tails):
        # A tail that starts at a request, as pydantic-ai accepts a message_history.
        starts = [k for k in range(len(everything)) if isinstance(everything[k], ModelRequest)]
        cut = [k for k in starts if len(everything) - k <= tail]
        history = everything[cut[0] :] if cut else []
        history = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))
        result = agent.run_sync(f"q{n}", message_history=history or None)
        everything += result.new_messages()
    assert said(memory) == [text for n in range(len(tails)) for text in (f"q{n}", f"ok: q{n}")]


@SLOW
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["write", "read"])), min_size=1, max_size=8))
def test_lc_11_oai_8_pai_9_srv_2_reads_see_every_write_of_the_other_object(steps):
    """LC-11, OAI-8, PAI-9, SRV-2: two adapters of each kind on one folder, writes and reads through either in any order: every read holds every write."""
    with tempfile.TemporaryDirectory() as path:
        folder = sm.MemoryFolder(path)
        histories = [SentinelChatMessageHistory(folder.open("lc")) for _ in range(2)]
        sessions = [SentinelSession("oai", folder) for _ in range(2)]
        pais = [SentinelHistory(folder.open("pai"), 400) for _ in range(2)]
        written: list[str] = []
        for which, step in steps:
            k = int(which)
            if step == "write":
                text = f"m{len(written)}"
                written.append(text)
                histories[k].add_messages([HumanMessage(text)])
                sessions[k].add([{"role": "user", "content": text}])
                pais[k].record([ModelRequest(parts=[UserPromptPart(text)])])
            else:
                assert [m.text for m in histories[k].messages] == written
                assert [i["content"] for i in asyncio.run(sessions[k].get_items())] == written
                assert [m.parts[0].content for m in pais[k].load()] == written


BAD = [
    PutOp(("u",), "bad", "not a dict"),  # type: ignore[arg-type]
    PutOp(("u",), "bad", {"x": float("inf")}),
    PutOp(("u",), "bad", {"x": 1}, ttl=0),
    PutOp(("u",), "bad", {"expires_at": "soon"}),
]


@SLOW
@given(st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=4), st.sampled_from(BAD))
def test_lg_7_a_bad_put_anywhere_in_a_batch_stores_nothing_of_it(before, after, bad):
    """LG-7: good puts around one bad put, anywhere in the batch: it raises and the store holds nothing of the batch."""
    with tempfile.TemporaryDirectory() as path:
        store = SentinelStore(path)
        ops = [PutOp(("u",), f"k{i}", {"v": i}) for i in range(before)]
        ops += [bad] + [PutOp(("u",), f"k{i}", {"v": i}) for i in range(before, before + after)]
        with pytest.raises((TypeError, ValueError)):
            store.batch(ops)
        assert store.search(("u",)) == []


TEXTS = st.text(alphabet="abc ", min_size=1, max_size=12)


@given(st.lists(TEXTS, max_size=4), st.lists(TEXTS, min_size=1, max_size=3), st.lists(TEXTS, max_size=3))
def test_srv_4_run_view_is_the_request_of_the_memory_with_the_runs_turns_moved_last(history, run, others):
    """SRV-4: run_view of a memory where other turns came between the run's equals get_messages of the memory stored in the moved order."""
    user = [{"role": "user", "content": text} for text in ["start", *history]]
    mine = [{"role": "user", "content": f"mine {text}"} for text in run]
    theirs = [{"role": "assistant", "content": f"theirs {text}"} for text in others]
    interleaved = sm.create_memory(clock=lambda: 1000)
    interleaved.add_messages(user)
    keys = [interleaved.add_message(mine[0]).key]
    if theirs:
        interleaved.add_messages(theirs)
    if mine[1:]:
        keys += [entry.key for entry in interleaved.add_messages(mine[1:])]
    moved = sm.create_memory(clock=lambda: 1000)
    moved.add_messages(user + theirs + mine)
    got = run_view(interleaved, keys, token_budget=10_000).messages
    assert got == moved.get_messages(token_budget=10_000).messages
    assert got[-1] == mine[-1]


@SLOW
@given(st.lists(st.booleans(), min_size=1, max_size=5))
def test_lc_12_pai_10_oai_10_failed_runs_store_nothing_and_the_rest_is_the_conversation(fails):
    """LC-12, PAI-10, OAI-10: runs refused by the budget among runs that succeed: each memory holds exactly the successful runs' turns, and the next request is valid."""
    lc, pai, oai = sm.create_memory(), sm.create_memory(), sm.create_memory()
    lc_agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(lc, 80)])
    pai_agent = Agent(FunctionModel(Echo()), capabilities=[SentinelHistory(pai, 80)])
    session = SentinelSession("s", memory=oai, token_budget=80)
    sdk_agent = SdkAgent(name="a", model=EchoModel())
    config = RunConfig(call_model_input_filter=session.call_model_input_filter)
    kept: list[str] = []
    for n, fail in enumerate(fails):
        question = "long " * 100 if fail else f"q{n}"
        outcomes = []
        for run in (
            lambda q: lc_agent.invoke({"messages": [HumanMessage(q)]}),
            lambda q: pai_agent.run_sync(q),
            lambda q: asyncio.run(Runner.run(sdk_agent, q, session=session, run_config=config)),
        ):
            try:
                run(question)
                outcomes.append(True)
            except sm.TokenBudgetError:
                outcomes.append(False)
        assert outcomes == [not fail] * 3
        if not fail:
            kept += [question, f"ok: {question}"]
    assert said(lc) == kept and said(pai) == kept
    texts = [i["content"] if isinstance(i["content"], str) else i["content"][0]["text"] for i in session.items()]
    assert texts == kept


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=40, max_value=400), st.data())
def test_lc_13_pai_11_oai_11_messages_and_reserve_fit_the_budget(budget, data):
    """LC-13, PAI-11, OAI-11, INT-2: for any budget and reserve up to it, each adapter's messages count at most the budget less the reserve, or the call is refused."""
    from sentinel_memory.core import MESSAGE_TOKENS
    from sentinel_memory.core.chat import body_of
    from sentinel_memory.integrations.openai_agents import chat_messages
    from sentinel_memory.serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK

    reserve = data.draw(st.integers(min_value=0, max_value=budget))
    memory = sm.create_memory()
    memory.add_messages([{"role": ("user", "assistant")[i % 2], "content": f"m{i} " * 5} for i in range(30)])

    def counted(chat: list[dict[str, Any]]) -> int:
        return sum(sm.estimate_tokens(body_of(m)) + MESSAGE_TOKENS for m in chat)

    try:
        kept = len(SentinelHistory(memory, budget, reserve=reserve).view())
    except sm.TokenBudgetError:
        kept = None
    try:
        expected_messages = memory.get_messages(
            token_budget=budget - reserve, cut=ADAPTER_CUT, low_mark=ADAPTER_LOW_MARK, keep_results=ADAPTER_KEEP_RESULTS
        ).messages  # the history's defaults (INT-2)
    except sm.TokenBudgetError:
        assert kept is None
    else:
        assert kept == len(expected_messages) and counted(expected_messages) <= budget - reserve
    session = SentinelSession("s", memory=memory, token_budget=budget, reserve=reserve)
    try:
        assert counted(chat_messages(session.budgeted_items())) <= budget - reserve
    except sm.TokenBudgetError:
        assert kept is None

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    schemas = sm.estimate_tokens(json.dumps([convert_to_openai_tool(lookup)], ensure_ascii=False, sort_keys=True))
    model = ScriptedToolModel(script=lambda turn: [])
    middleware = SentinelMemoryMiddleware(memory, budget, reserve=reserve)
    try:
        create_agent(model, tools=[lookup], middleware=[middleware]).invoke({"messages": [HumanMessage("q")]})
    except sm.TokenBudgetError:
        assert budget - reserve - schemas < counted([{"role": "user", "content": "q"}])
    else:
        assert request_tokens(model.seen[-1], sm.estimate_tokens) + schemas + reserve <= budget
