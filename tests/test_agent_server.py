"""The adapters on a real server: one agent for many users, histories sent again, shared reads, whole batches (SRV-1 .. SRV-3, LC-9 .. LC-11, OAI-7 .. OAI-9, PAI-7 .. PAI-9, LG-7)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
import threading
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("agents")
pytest.importorskip("pydantic_ai")

from agent_support import ScriptedToolModel, request_tokens
from agents import Agent as SdkAgent
from agents import RunConfig, Runner
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import PutOp
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from server_support import SEEN, Echo, EchoChatModel, EchoModel, SlowEchoChatModel, SlowEchoModel, slow_echo

import sentinel_memory as sm
from sentinel_memory.core.chat import request_problems
from sentinel_memory.core.turns import resent_count
from sentinel_memory.folder import file_name_for
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory, turn_from_message
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
from sentinel_memory.integrations.langgraph import SentinelStore
from sentinel_memory.integrations.openai_agents import SentinelSession, SentinelSessions, chat_messages
from sentinel_memory.integrations.pydantic_ai import SentinelHistory
from sentinel_memory.serving import UserMemories

USERS = [f"user-{n:02d}" for n in range(50)]
BUDGET = 400


def users_in(text: str) -> set[str]:
    """The user ids a request's text mentions."""
    return set(re.findall(r"user-\d\d", text))


def seeded(folder: sm.MemoryFolder) -> None:
    """Each user's memory holds a secret that must be in each of that user's requests (and nobody else's)."""
    for user in USERS:
        folder.open(user).remember("secret", f"the code of {user} is {user}-secret", importance=1.0)


def check_memories(folder: sm.MemoryFolder, turns: int) -> None:
    """Each user's memory holds its secret and ``turns`` turns, all of its own."""
    for user in USERS:
        memory = folder.open(user)
        chat = [data for key, data in memory.items() if key.startswith("chat:")]
        assert len(chat) == turns, (user, chat)
        assert users_in(repr(dict(memory.items()))) == {user}


# -- LangChain ------------------------------------------------------------------------------------------


def test_lc_9_srv_1_one_agent_serves_50_users_from_threads_and_tasks_and_nothing_crosses(tmp_path):
    """LC-9, SRV-1: one agent over a folder, 50 users by context user_id (threads) and thread_id (tasks): every request and memory holds its own user only."""
    folder = sm.MemoryFolder(tmp_path)
    seeded(folder)
    SEEN.clear()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, BUDGET, must_keep=0.9)])

    def by_context(user: str) -> None:
        for n in range(2):
            ask = {"messages": [{"role": "user", "content": f"question {n} from {user}"}]}
            agent.invoke(ask, context={"user_id": user})

    async def by_thread(user: str) -> None:
        for n in range(2):
            ask = {"messages": [{"role": "user", "content": f"question {n} from {user}"}]}
            await agent.ainvoke(ask, config={"configurable": {"thread_id": user}})

    threads = [threading.Thread(target=by_context, args=(user,)) for user in USERS[:25]]
    for thread in threads:
        thread.start()

    async def tasks() -> None:
        await asyncio.gather(*(by_thread(user) for user in USERS[25:]))

    asyncio.run(tasks())
    for thread in threads:
        thread.join()
    assert len(SEEN) == 100
    for request in SEEN:
        text = " ".join(message.text for message in request)
        [user] = users_in(text)
        assert f"{user}-secret" in text  # the must-keep fact of this user, never another's
    check_memories(folder, 4)


def test_lc_9_a_run_that_names_no_user_is_refused_and_stores_nothing(tmp_path):
    """LC-9: with a folder, a run with no user_id in its context and no thread_id raises ValueError naming what to pass; user= picks another field."""
    folder = sm.MemoryFolder(tmp_path)
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, BUDGET)])
    with pytest.raises(ValueError) as refused:
        agent.invoke({"messages": [{"role": "user", "content": "Hi"}]})
    assert str(refused.value) == (
        "this middleware serves a folder's users, and the run names none (got None): invoke with "
        "context={'user_id': ...} or config={'configurable': {'thread_id': ...}}, or give user="
    )
    assert not list(tmp_path.iterdir())
    picked = SentinelMemoryMiddleware(folder, BUDGET, user=lambda runtime: runtime.context["tenant"])
    agent = create_agent(EchoChatModel(), middleware=[picked])
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}]}, context={"tenant": "acme"})
    assert folder.open("acme")["chat:1"] == {"role": "user", "content": "Hi"}
    with pytest.raises(TypeError, match="user="):
        SentinelMemoryMiddleware(sm.create_memory(), BUDGET, user=lambda runtime: "x")
    with pytest.raises(TypeError, match="memory_for"):
        _ = picked.memory


def test_lc_9_a_context_object_names_its_user_by_its_user_id_attribute(tmp_path):
    """LC-9: a run's context that is an object, not a dict, names its user by its user_id attribute."""

    @dataclasses.dataclass
    class Context:
        user_id: str

    folder = sm.MemoryFolder(tmp_path)
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, BUDGET)], context_schema=Context)
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}]}, context=Context("user-07"))
    assert folder.open("user-07")["chat:1"] == {"role": "user", "content": "Hi"}
    assert [path.name for path in tmp_path.glob("*.json")] == [file_name_for("user-07")]


def test_lc_9_a_one_memory_middleware_and_a_folder_one_refuse_the_others_call_whole(tmp_path):
    """LC-9: user= on a middleware of one memory, and .memory on a middleware of a folder, raise TypeError saying why."""
    with pytest.raises(TypeError) as refused:
        SentinelMemoryMiddleware(sm.create_memory(), BUDGET, user=lambda runtime: "x")
    assert str(refused.value) == "user= picks each run's memory from a folder; this middleware has one memory"
    with pytest.raises(TypeError) as refused:
        _ = SentinelMemoryMiddleware(sm.MemoryFolder(tmp_path), BUDGET).memory
    assert str(refused.value) == "this middleware serves a folder's users: memory_for(runtime) is a run's memory"


@pytest.mark.parametrize(("named", "shown"), [(42, "42"), ("", "''")])
def test_lc_9_a_user_that_is_no_str_or_is_empty_is_refused_and_stores_nothing(tmp_path, named, shown):
    """LC-9: a run whose user= gives a non-str or an empty str raises ValueError showing what it got; nothing is stored."""
    folder = sm.MemoryFolder(tmp_path)
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, BUDGET, user=lambda _: named)])
    with pytest.raises(ValueError, match=re.escape(f"and the run names none (got {shown}): invoke with")):
        agent.invoke({"messages": [{"role": "user", "content": "Hi"}]})
    assert not list(tmp_path.iterdir())


def test_lc_10_a_run_of_a_transcript_already_stored_stores_only_the_answer():
    """LC-10, SRV-3: a run given only messages the memory holds as its newest turns stores none of them again; the new answer is stored."""
    answers = itertools.count(1)

    class Numbered(EchoChatModel):
        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(f"answer {next(answers)}"))])

    memory = sm.create_memory()
    agent = create_agent(Numbered(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)])
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}]})
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "answer 1"}]})
    stored = [message["content"] for message in memory.get_messages(token_budget=BUDGET).messages]
    assert stored == ["Hi", "answer 1", "answer 2"]


def test_lc_10_srv_3_a_history_sent_again_is_stored_once_and_a_real_repeat_still_is(tmp_path):
    """LC-10, SRV-3: invoking with the whole transcript each time stores each message once; the model sees each question once; a repeated question alone is stored."""
    memory = sm.create_memory()
    SEEN.clear()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)])
    transcript: list[BaseMessage] = []
    for n in range(3):
        transcript.append(HumanMessage(f"Q{n}"))
        transcript = list(agent.invoke({"messages": transcript})["messages"])
    said = [data["content"] for key, data in memory.items()]
    assert said == ["Q0", "ok: Q0", "Q1", "ok: Q1", "Q2", "ok: Q2"]
    assert [m.text for m in SEEN[-1]] == ["Q0", "ok: Q0", "Q1", "ok: Q1", "Q2"]
    agent.invoke({"messages": [HumanMessage("Q2")]})  # the user really asks again
    assert [data["content"] for _, data in memory.items()][-2:] == ["Q2", "ok: Q2"]
    assert len(memory) == 8


def test_lc_11_srv_2_history_reads_see_what_another_object_added():
    """LC-11, SRV-2: .messages and .get_messages of one history see turns another history over the same shared store added."""
    store = sm.MemoryStore()
    first = SentinelChatMessageHistory(sm.create_memory(store=store, autosave=True, shared=True))
    second = SentinelChatMessageHistory(sm.create_memory(store=store, autosave=True, shared=True))
    first.add_messages([HumanMessage("Any nuts?")])
    assert [m.text for m in second.messages] == ["Any nuts?"]
    assert [m.text for m in second.get_messages(200)] == ["Any nuts?"]


# -- OpenAI Agents SDK --------------------------------------------------------------------------------------


def test_oai_7_srv_1_one_agent_and_run_config_serve_50_sessions_and_nothing_crosses(tmp_path):
    """OAI-7, SRV-1: SentinelSessions over a folder, one Agent and one RunConfig, 50 sessions from tasks and threads: no request or memory holds another user's."""
    folder = sm.MemoryFolder(tmp_path)
    seeded(folder)
    model = EchoModel()
    agent = SdkAgent(name="a", instructions="Be brief.", model=model)
    sessions = SentinelSessions(folder, token_budget=BUDGET, must_keep=0.9)
    config = RunConfig(call_model_input_filter=sessions.call_model_input_filter)

    async def one(user: str) -> None:
        for n in range(2):
            await Runner.run(agent, f"question {n} from {user}", session=sessions.session(user), run_config=config)

    async def many(users: list[str]) -> None:
        await asyncio.gather(*(one(user) for user in users))

    threads = [threading.Thread(target=asyncio.run, args=(many(USERS[k : k + 5]),)) for k in range(0, 25, 5)]
    for thread in threads:
        thread.start()
    asyncio.run(many(USERS[25:]))
    for thread in threads:
        thread.join()
    assert len(model.requests) == 100
    for request in model.requests:
        [user] = users_in(request)
        assert f"{user}-secret" in request
    check_memories(folder, 4)
    assert sessions.session("user-01").memory is sessions.session("user-01").memory


def test_oai_8_srv_2_get_items_sees_what_another_session_added(tmp_path):
    """OAI-8, SRV-2: a session's get_items (all, limit=, budgeted) sees what another session on the same folder added after it was made."""
    question = {"role": "user", "content": "Any nuts?"}
    first = SentinelSession("chat-1", tmp_path)
    second = SentinelSession("chat-1", tmp_path, token_budget=200)
    third = SentinelSession("chat-1", tmp_path)
    asyncio.run(first.add_items([question]))
    assert asyncio.run(second.get_items()) == [question]
    assert asyncio.run(third.get_items()) == [question]
    assert asyncio.run(third.get_items(limit=1)) == [question]


def test_oai_9_srv_3_items_sent_again_are_stored_once_and_a_real_repeat_still_is(tmp_path):
    """OAI-9, SRV-3: a batch that starts with the session's newest items (a transcript sent again) stores only what follows; the same question asked again alone is stored."""
    session = SentinelSession("chat-1", tmp_path)
    q0, q1 = {"role": "user", "content": "Q0"}, {"role": "user", "content": "Q1"}
    a0 = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "A0", "annotations": []}],
    }
    session.add([q0])
    session.add([a0])
    session.add([q0, a0, q1])
    assert session.items() == [q0, a0, q1]
    session.add([a0])  # a new answer equal to the first one: it does not lead with the newest item
    session.add([q1])  # asked again
    assert session.items() == [q0, a0, q1, a0, q1]


# -- pydantic-ai --------------------------------------------------------------------------------------------


def test_pai_7_srv_1_one_agent_serves_50_users_by_their_deps_and_nothing_crosses(tmp_path):
    """PAI-7, SRV-1: one Agent with one SentinelHistory over a folder, 50 users by deps from threads and tasks: no request or memory holds another user's."""
    folder = sm.MemoryFolder(tmp_path)
    seeded(folder)
    script = Echo()
    agent = Agent(FunctionModel(script), capabilities=[SentinelHistory(folder, BUDGET, must_keep=0.9)])

    def by_thread(user: str) -> None:
        for n in range(2):
            agent.run_sync(f"question {n} from {user}", deps={"user_id": user})

    async def by_task(user: str) -> None:
        for n in range(2):
            await agent.run(f"question {n} from {user}", deps=user)

    threads = [threading.Thread(target=by_thread, args=(user,)) for user in USERS[:25]]
    for thread in threads:
        thread.start()

    async def tasks() -> None:
        await asyncio.gather(*(by_task(user) for user in USERS[25:]))

    asyncio.run(tasks())
    for thread in threads:
        thread.join()
    assert len(script.requests) == 100
    for request in script.requests:
        [user] = users_in(request)
        assert f"{user}-secret" in request
    check_memories(folder, 4)
    with pytest.raises(ValueError, match="user_id"):
        agent.run_sync("Hi")
    with pytest.raises(TypeError, match="user="):
        SentinelHistory(sm.create_memory(), BUDGET, user=lambda deps: "x")


def test_pai_8_srv_3_a_message_history_sent_again_is_stored_once(mem):
    """PAI-8, SRV-3: a run given its earlier messages again (read back from their JSON) stores only the new ones; a question asked again is stored."""
    script = Echo()
    agent = Agent(FunctionModel(script), capabilities=[SentinelHistory(mem, BUDGET)])
    first = agent.run_sync("Q0")
    again = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first.all_messages()))
    second = agent.run_sync("Q1", message_history=again)
    said = [data["content"][0]["text"] for key, data in mem.items()]
    assert said == ["Q0", "ok: Q0", "Q1", "ok: Q1"]
    again = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(second.all_messages()))
    agent.run_sync("Q1", message_history=again)
    assert [data["content"][0]["text"] for key, data in mem.items()][-2:] == ["Q1", "ok: Q1"]
    assert len(mem) == 6


def test_pai_9_srv_2_load_and_view_see_what_another_history_added(tmp_path):
    """PAI-9, SRV-2: a history's load and view see the messages another history over the same folder stored after it was made."""
    first = SentinelHistory.from_folder(tmp_path, "u", BUDGET)
    second = SentinelHistory.from_folder(tmp_path, "u", BUDGET)
    first.record([ModelRequest(parts=[UserPromptPart("Any nuts?")])])
    assert [m.parts[0].content for m in second.load()] == ["Any nuts?"]
    assert [m.parts[0].content for m in second.view()] == ["Any nuts?"]


# -- LangGraph ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        PutOp(("u",), "b", "not a dict"),  # type: ignore[arg-type]
        PutOp(("u",), "b", {"x": float("nan")}),
        PutOp(("u",), "b", {"x": 1}, ttl=-1),
        PutOp(("u",), "b", {"expires_at": "soon"}),
    ],
)
def test_lg_7_a_batch_is_checked_whole_before_anything_is_stored(tmp_path, bad):
    """LG-7: a batch whose later put is bad (not a dict, not JSON, a bad ttl or expires_at) raises and stores nothing of the batch; the next batch works."""
    store = SentinelStore(tmp_path)
    with pytest.raises((TypeError, ValueError)):
        store.batch([PutOp(("u",), "a", {"v": 1}), bad])
    assert store.get(("u",), "a") is None
    store.batch([PutOp(("u",), "a", {"v": 1})])
    assert store.get(("u",), "a").value == {"v": 1}


def test_lg_7_a_bad_search_filter_is_refused_before_the_puts_before_it(tmp_path):
    """LG-7: an unknown filter operator in a later search refuses the batch before its put runs."""
    from langgraph.store.base import SearchOp

    store = SentinelStore(tmp_path)
    with pytest.raises(ValueError, match="operator"):
        store.batch([PutOp(("u",), "a", {"v": 1}), SearchOp(("u",), filter={"v": {"$near": 1}})])
    assert store.get(("u",), "a") is None


# -- the pieces -----------------------------------------------------------------------------------------


def test_srv_3_resent_count_boundaries():
    """SRV-3: resent_count is the longest lead of new equal to the end of stored: all, some, none, and an older repeat is none."""
    a, b, c = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}
    assert resent_count([a, b], [a, b, c]) == 2
    assert resent_count([a, b], [b, c]) == 1
    assert resent_count([a, b], [a]) == 0  # an older message asked again
    assert resent_count([a, b], [a, b]) == 2  # exactly the stored conversation
    assert resent_count([], [a]) == 0
    assert resent_count([a], []) == 0
    assert resent_count([a, b, a, b], [a, b, a, b, c]) == 4  # the longest lead, not the shortest


def test_srv_1_user_memories_keep_one_memory_per_user_and_close_the_oldest(tmp_path):
    """SRV-1: one memory per user id while open; past keep the least recently used is closed and reopened from its store; bad ids and sources are refused."""
    users = UserMemories(sm.MemoryFolder(tmp_path), keep=2)
    alice = users.get("alice")
    alice.remember("name", "Alice")
    assert users.get("alice") is alice
    bob = users.get("bob")
    bob.remember("name", "Bob")
    assert users.get("alice") is alice  # two kept open: both still are
    users.get("carol")  # bob is the least recently used: closed
    assert users.get("alice") is alice
    again = users.get("bob")
    assert again is not bob and again["name"] == "Bob"
    with pytest.raises(TypeError, match="non-empty str"):
        users.get("")
    with pytest.raises(TypeError, match="open a memory per user"):
        UserMemories(sm.create_memory())
    with pytest.raises(TypeError, match="keep"):
        UserMemories(sm.MemoryFolder(tmp_path), keep=0)


# -- overlapping and failed runs ---------------------------------------------------------------------------


def request_of(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """A LangChain request in the chat form MSG-8 checks."""
    return [turn_from_message(message) for message in messages]


def test_lc_12_srv_4_overlapping_runs_of_one_user_each_see_their_own_question_last(tmp_path):
    """LC-12, SRV-4: eight runs of one user at once: each request's newest user message is its own run's question, and the next request is valid."""
    memory = sm.MemoryFolder(tmp_path).open("u")
    SEEN.clear()
    agent = create_agent(SlowEchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)])
    answers: dict[str, str] = {}

    def run(n: int) -> None:
        answers[f"q{n}"] = agent.invoke({"messages": [HumanMessage(f"q{n}")]})["messages"][-1].text

    threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {f"q{n}": f"ok: q{n}" for n in range(8)}
    agent.invoke({"messages": [HumanMessage("after")]})
    assert request_problems(request_of(SEEN[-1])) == []
    assert SEEN[-1][-1].text == "after"


def test_lc_12_a_failed_run_stores_nothing_of_itself_and_the_next_request_is_clean(tmp_path):
    """LC-12: a run refused by the budget, and a run whose tool raises, leave the memory as before them; the next run's request has no dangling question."""
    from langchain_core.tools import tool

    memory = sm.MemoryFolder(tmp_path).open("u")
    SEEN.clear()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, 60)])
    agent.invoke({"messages": [HumanMessage("Hi")]})
    before = dict(memory.items())
    with pytest.raises(sm.TokenBudgetError):
        agent.invoke({"messages": [HumanMessage("long " * 100)]})
    assert dict(memory.items()) == before

    @tool
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError("the weather service is down")

    calling = ScriptedToolModel(script=lambda turn: [("broken", {"city": "Brno"})] if turn == 0 else [])
    agent_with_tool = create_agent(calling, tools=[broken], middleware=[SentinelMemoryMiddleware(memory, 400)])
    with pytest.raises(RuntimeError, match="down"):
        agent_with_tool.invoke({"messages": [HumanMessage("Weather?")]})
    assert dict(memory.items()) == before
    agent.invoke({"messages": [HumanMessage("Again")]})
    assert [m.text for m in SEEN[-1]] == ["Hi", "ok: Hi", "Again"]


def test_lc_12_a_failed_run_of_a_folders_user_forgets_its_turns_in_that_users_memory(tmp_path):
    """LC-12, LC-9: with a folder, a run refused by the budget forgets what it stored from its user's memory."""
    folder = sm.MemoryFolder(tmp_path)
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(folder, 60)])
    agent.invoke({"messages": [HumanMessage("Hi")]}, context={"user_id": "u"})
    before = dict(folder.open("u").items())
    with pytest.raises(sm.TokenBudgetError):
        agent.invoke({"messages": [HumanMessage("long " * 100)]}, context={"user_id": "u"})
    assert dict(folder.open("u").items()) == before


def test_lc_12_srv_4_a_runs_question_is_last_though_another_run_stored_one_before_its_model_call():
    """LC-12, SRV-4, LC-8: when another run of the memory stores a question between this run's record and its model
    call, the model still gets this run's question last, the other one before it; only the answer is stored after."""
    from langchain.agents.middleware import AgentMiddleware

    memory = sm.create_memory()

    class Interloper(AgentMiddleware[Any, Any, Any]):
        def before_model(self, state: Any, runtime: Any) -> None:
            memory.add_turn("user", "a question of another run")

    SEEN.clear()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, BUDGET), Interloper()])
    agent.invoke({"messages": [HumanMessage("Hi")]})
    assert [m.text for m in SEEN[-1]] == ["a question of another run", "Hi"]
    # LC-8: the answer is recorded alone; the question the run recorded before is not stored again after the other
    stored = [message["content"] for message in memory.get_messages(token_budget=BUDGET).messages]
    assert stored == ["Hi", "a question of another run", "ok: Hi"]


def test_lc_14_a_model_call_reads_only_the_turns_the_last_one_did_not(monkeypatch):
    """LC-14, MSG-18: each stored turn is read into its LangChain message once: the next call reads only the new turns."""
    from sentinel_memory.integrations.langchain import middleware as module

    reads: list[str] = []
    real = module.message_from_turn

    def counted(role: str, content: Any, **fields: Any) -> Any:
        reads.append(content if isinstance(content, str) else repr(content))
        return real(role, content, **fields)

    monkeypatch.setattr(module, "message_from_turn", counted)
    memory = sm.create_memory()
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)])
    agent.invoke({"messages": [HumanMessage("Hi")]})
    assert reads == ["Hi"]
    agent.invoke({"messages": [HumanMessage("And now?")]})
    assert reads == ["Hi", "ok: Hi", "And now?"]


def test_pai_10_srv_4_overlapping_runs_of_one_user_run_one_at_a_time(mem):
    """PAI-10, SRV-4: six runs of one memory at once run one at a time: each answers its own question, and the memory holds each question followed by its answer."""
    agent = Agent(FunctionModel(slow_echo), capabilities=[SentinelHistory(mem, BUDGET)])

    async def runs() -> list[Any]:
        return await asyncio.gather(*(agent.run(f"q{n}") for n in range(6)))

    results = asyncio.run(runs())
    assert [result.output for result in results] == [f"ok: q{n}" for n in range(6)]
    said = [data["content"][0]["text"] for _, data in mem.items()]
    assert all(said[k + 1] == f"ok: {said[k]}" for k in range(0, len(said), 2))


def test_pai_10_a_failed_run_stores_nothing_of_itself(mem):
    """PAI-10: a run refused by the budget, and a run whose tool raises, leave the memory as before them; the next run works from there."""
    agent = Agent(FunctionModel(Echo()), capabilities=[SentinelHistory(mem, 60)])
    agent.run_sync("Hi")
    before = dict(mem.items())
    with pytest.raises(sm.TokenBudgetError):
        agent.run_sync("long " * 100)
    assert dict(mem.items()) == before

    def call_then_answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("broken", {"city": "Brno"}, tool_call_id="c1")])

    failing = Agent(FunctionModel(call_then_answer), capabilities=[SentinelHistory(mem, 400)])

    @failing.tool_plain
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError("the weather service is down")

    with pytest.raises(RuntimeError, match="down"):
        failing.run_sync("Weather?")
    assert dict(mem.items()) == before
    agent.run_sync("Again")
    assert [data["content"][0]["text"] for _, data in mem.items()] == ["Hi", "ok: Hi", "Again", "ok: Again"]


def test_oai_10_srv_4_overlapping_and_failed_runs_leave_every_next_request_valid():
    """OAI-10, SRV-4: six runs of one session at once each see their own question last; after a run refused by the budget the next request is valid and ends with its question."""
    memory = sm.create_memory()
    model = SlowEchoModel()
    agent = SdkAgent(name="a", model=model)

    async def runs() -> list[Any]:
        return await asyncio.gather(
            *(Runner.run(agent, f"q{n}", session=SentinelSession("s", memory=memory)) for n in range(6))
        )

    assert [result.final_output for result in asyncio.run(runs())] == [f"ok: q{n}" for n in range(6)]
    session = SentinelSession("s", memory=memory, token_budget=120)
    config = RunConfig(call_model_input_filter=session.call_model_input_filter)
    with pytest.raises(sm.TokenBudgetError):
        asyncio.run(Runner.run(agent, "long " * 200, session=session, run_config=config))
    asyncio.run(Runner.run(agent, "next", session=session, run_config=config))
    last = model.last_input
    assert request_problems(chat_messages(last)) == []
    assert last[-1] == {"role": "user", "content": "next"}


# -- what the framework sends beside the messages -----------------------------------------------------------


def test_lc_13_the_tools_schemas_and_the_reserve_are_counted_in_the_budget():
    """LC-13: with a tool and a reserve, the request's messages, the tools' schemas and the reserve together fit the budget, which the messages alone once filled."""
    import json

    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    @tool
    def weather(city: str, unit: str = "celsius") -> str:
        """The weather in a city, in the unit asked for, with the wind and the chance of rain."""
        return "4 °C"

    memory = sm.create_memory()
    memory.add_messages([{"role": ("user", "assistant")[i % 2], "content": f"message {i} " * 6} for i in range(60)])
    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(
        model,
        tools=[weather],
        middleware=[SentinelMemoryMiddleware(memory, 300, reserve=20)],
    )
    agent.invoke({"messages": [HumanMessage("And now?")]})
    schemas = sm.estimate_tokens(json.dumps([convert_to_openai_tool(weather)], ensure_ascii=False, sort_keys=True))
    sent = request_tokens(model.seen[-1], sm.estimate_tokens)
    assert schemas > 20 and sent + schemas + 20 <= 300
    assert sent > 300 - schemas - 20 - 40  # the rest of the budget is used, not wasted


def test_lc_7_a_stored_turns_name_reaches_the_model():
    """LC-7, LC-2: a stored message's name is its LangChain message's name in the model's request."""
    memory = sm.create_memory()
    memory.add_message({"role": "user", "content": "I am Alice.", "name": "alice"})
    memory.add_message({"role": "assistant", "content": "Hello Alice."})
    SEEN.clear()
    create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)]).invoke(
        {"messages": [HumanMessage("Hi")]}
    )
    assert [(m.text, m.name) for m in SEEN[-1]] == [("I am Alice.", "alice"), ("Hello Alice.", None), ("Hi", None)]


def test_lc_13_the_tools_are_counted_as_json_with_sorted_keys_and_no_ascii_escapes():
    """LC-13: the tools' schemas are counted, by the middleware's tokenizer, as json.dumps(..., ensure_ascii=False, sort_keys=True) of their OpenAI form."""
    import json

    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    @tool
    def weather(city: str) -> str:
        """Počasí ve městě: the weather in a city."""
        return "4 °C"

    counted: list[str] = []

    def tokenizer(text: str) -> int:
        counted.append(text)
        return sm.estimate_tokens(text)

    model = ScriptedToolModel(script=lambda turn: [])
    middleware = SentinelMemoryMiddleware(sm.create_memory(), 300, tokenizer=tokenizer)
    create_agent(model, tools=[weather], middleware=[middleware]).invoke({"messages": [HumanMessage("Hi")]})
    assert json.dumps([convert_to_openai_tool(weather)], ensure_ascii=False, sort_keys=True) in counted


def test_lc_13_tools_and_a_reserve_over_the_budget_leave_the_messages_a_budget_of_0():
    """LC-13: when the reserve and the tools' schemas take the whole budget, the messages get 0 tokens (not less), and the budget error says so."""
    from langchain_core.tools import tool

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "4 °C"

    model = ScriptedToolModel(script=lambda turn: [])
    agent = create_agent(
        model, tools=[weather], middleware=[SentinelMemoryMiddleware(sm.create_memory(), 30, reserve=30)]
    )
    with pytest.raises(sm.TokenBudgetError) as refused:
        agent.invoke({"messages": [HumanMessage("Hi")]})
    assert refused.value.budget == 0 and str(refused.value).endswith("more than the budget of 0")


@pytest.mark.parametrize(
    ("reserve", "error"),
    [(-1, ValueError), (float("nan"), ValueError), (True, TypeError), ("5", TypeError), (301, ValueError)],
)
def test_lc_13_pai_11_oai_11_a_bad_reserve_is_refused_at_construction(reserve, error):
    """LC-13, PAI-11, OAI-11: a reserve that is negative, NaN, a bool, not a number or over the budget is refused by every adapter; the budget itself is allowed."""
    with pytest.raises(error, match="reserve"):
        SentinelMemoryMiddleware(sm.create_memory(), 300, reserve=reserve)
    with pytest.raises(error, match="reserve"):
        SentinelHistory(sm.create_memory(), 300, reserve=reserve)
    with pytest.raises(error, match="reserve"):
        SentinelSession("s", memory=sm.create_memory(), token_budget=300, reserve=reserve)
    SentinelMemoryMiddleware(sm.create_memory(), 300, reserve=300)
    SentinelHistory(sm.create_memory(), 300, reserve=300)
    SentinelSession("s", memory=sm.create_memory(), token_budget=300, reserve=300)


def test_pai_11_oai_11_the_reserve_comes_off_the_messages_budget(mem):
    """PAI-11, OAI-11: with a reserve, the pydantic-ai view and the session's budgeted history and filter count at most the budget less the reserve."""
    from sentinel_memory.core import MESSAGE_TOKENS
    from sentinel_memory.core.chat import body_of

    mem.add_messages([{"role": ("user", "assistant")[i % 2], "content": f"message {i} " * 6} for i in range(40)])

    def counted(chat: list[dict[str, Any]]) -> int:
        return sum(sm.estimate_tokens(body_of(m)) + MESSAGE_TOKENS for m in chat)

    history = SentinelHistory(mem, 200, reserve=80)
    assert len(history.view()) == len(mem.get_messages(token_budget=120).messages)
    assert len(history.view()) < len(mem.get_messages(token_budget=200).messages)
    session = SentinelSession("s", memory=mem, token_budget=200, reserve=80)
    assert counted(chat_messages(session.budgeted_items())) <= 120
    items = session.items()
    from agents.run_config import CallModelData, ModelInputData

    data = CallModelData(model_data=ModelInputData(input=items, instructions=None), agent=None, context=None)  # type: ignore[arg-type]
    assert counted(chat_messages(session.call_model_input_filter(data).input)) <= 120


def test_lc_8_lc_10_two_checkpointed_threads_over_one_memory_record_each_message_once():
    """LC-8, LC-10: two checkpointed threads taking turns over one memory: the ids, not the place, keep a thread's earlier messages from being stored again."""
    from langgraph.checkpoint.memory import InMemorySaver

    memory = sm.create_memory()
    agent = create_agent(
        EchoChatModel(), checkpointer=InMemorySaver(), middleware=[SentinelMemoryMiddleware(memory, BUDGET)]
    )
    for n in range(2):
        for thread in ("x", "y"):
            agent.invoke({"messages": [HumanMessage(f"q{n} {thread}")]}, config={"configurable": {"thread_id": thread}})
    said = [data["content"] for _, data in memory.items()]
    assert said == [f"{text}" for n in range(2) for t in ("x", "y") for text in (f"q{n} {t}", f"ok: q{n} {t}")]
