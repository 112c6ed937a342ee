"""The LangChain adapter, with the real langchain-core: a chat history whose messages are a memory's turns (LC-1 .. LC-5)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from datetime import timedelta

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

import sentinel_memory as sm
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory, message_from_turn, turn_from_message
from support import MINUTE, T0

SESSION = {"configurable": {"session_id": "table-7"}}
QUESTIONS = ["Hi, I'm Jakub.", "Any nuts in the risotto?", "What is my name?"]
ANSWERS = ["Welcome, Jakub!", "No nuts in the risotto.", "You are Jakub."]


def shape(messages: list[BaseMessage]) -> list[tuple[str, str, object]]:
    """What a history keeps of each message: its type, its role (ChatMessage only) and its content."""
    return [(m.type, getattr(m, "role", ""), m.content) for m in messages]


def conversation(history: SentinelChatMessageHistory) -> tuple[RunnableWithMessageHistory, list[list[BaseMessage]]]:
    """A RunnableWithMessageHistory over a fake chat model from langchain_core; ``seen`` is what the model was given."""
    seen: list[list[BaseMessage]] = []

    def record(messages: list[BaseMessage]) -> list[BaseMessage]:
        seen.append(list(messages))
        return messages

    model = GenericFakeChatModel(messages=iter([AIMessage(answer) for answer in ANSWERS]))
    with warnings.catch_warnings():  # deprecated since langchain-core 1.3.3 in favour of LangGraph, still shipped
        warnings.simplefilter("ignore", DeprecationWarning)
        chain = RunnableWithMessageHistory(RunnableLambda(record) | model, lambda session_id: history)
    return chain, seen


def test_lc_1_lc_2_a_runnable_with_message_history_runs_a_three_turn_conversation(tmp_path):
    """LC-1, LC-2, ENT-16: three turns through RunnableWithMessageHistory land as chat:1..6 with their roles; the model sees them."""
    mem = sm.create_memory(store=sm.JsonFileStore(tmp_path / "memory.json"), autosave=True, clock=lambda: T0)
    mem.remember("user:allergy", "allergic to peanuts", importance=1)
    history = SentinelChatMessageHistory(mem)
    chain, seen = conversation(history)
    replies = [chain.invoke(question, config=SESSION) for question in QUESTIONS]
    assert [reply.content for reply in replies] == ANSWERS
    assert shape(seen[2]) == [
        ("human", "", QUESTIONS[0]),
        ("ai", "", ANSWERS[0]),
        ("human", "", QUESTIONS[1]),
        ("ai", "", ANSWERS[1]),
        ("human", "", QUESTIONS[2]),
    ]
    turns = [mem[f"chat:{n}"] for n in range(1, 7)]
    assert turns == [
        {"role": role, "content": text}
        for question, answer in zip(QUESTIONS, ANSWERS, strict=True)
        for role, text in (("user", question), ("assistant", answer))
    ]
    assert [mem.get_entry(f"chat:{n}").importance for n in range(1, 7)] == [0.3] * 6
    assert [type(m) for m in history.messages] == [HumanMessage, AIMessage] * 3
    assert mem["user:allergy"] == "allergic to peanuts"  # a fact, never a message
    assert all("peanuts" not in m.content for m in history.messages)


def test_lc_1_the_turns_survive_a_restart_through_the_file_store(tmp_path):
    """LC-1, PER-3, ENT-16: a new memory on the same JsonFileStore file gives the same messages and keeps counting turns."""
    path = tmp_path / "memory.json"
    first = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path), autosave=True))
    chain, _ = conversation(first)
    for question in QUESTIONS:
        chain.invoke(question, config=SESSION)
    restarted = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path)))
    assert restarted.messages == first.messages
    assert shape(restarted.messages)[-1] == ("ai", "", ANSWERS[-1])
    restarted.add_user_message("Thanks!")
    assert restarted.memory.get("chat:7") == {"role": "user", "content": "Thanks!"}


def test_lc_1_from_folder_gives_each_session_its_own_file_across_restarts(tmp_path):
    """LC-1, FLD-2, FLD-3: from_folder opens a session's memory in a folder, autosaved; another session sees nothing of it."""
    folder = tmp_path / "sessions"
    history = SentinelChatMessageHistory.from_folder(folder, "table-7", clock=lambda: T0)
    chain, _ = conversation(history)
    for question in QUESTIONS:
        chain.invoke(question, config=SESSION)
    again = SentinelChatMessageHistory.from_folder(sm.MemoryFolder(folder), "table-7")
    assert shape(again.messages) == shape(history.messages) and len(again.messages) == 6
    assert again.memory.store.path == sm.MemoryFolder(folder).path_for("table-7")
    assert SentinelChatMessageHistory.from_folder(folder, "table-8").messages == []
    with pytest.raises(TypeError):
        SentinelChatMessageHistory.from_folder(folder, "table-7", store=sm.MemoryStore())


def test_lc_2_the_eviction_rules_apply_to_the_turns(clock):
    """LC-2, CMP-1, CMP-3, ENT-16: with limit 4 the oldest turns go first and facts of higher importance stay."""
    evicted: list[str] = []
    mem = sm.create_memory(limit=4, clock=clock, on_evict=lambda c: evicted.extend(e.key for e in c.evicted))
    mem.remember("user:name", "Jakub")  # 0.5
    mem.remember("user:allergy", "allergic to peanuts", importance=1)
    history = SentinelChatMessageHistory(mem)
    chain, seen = conversation(history)
    for question in QUESTIONS:
        clock.advance(MINUTE)
        chain.invoke(question, config=SESSION)
    assert evicted == ["chat:1", "chat:2", "chat:3", "chat:4"]
    assert mem["user:name"] == "Jakub" and mem["user:allergy"] == "allergic to peanuts"
    assert shape(history.messages) == [("human", "", QUESTIONS[2]), ("ai", "", ANSWERS[2])]
    assert shape(seen[2]) == [("human", "", QUESTIONS[1]), ("ai", "", ANSWERS[1]), ("human", "", QUESTIONS[2])]


def test_lc_2_a_history_adds_turns_with_its_own_importance_and_ttl(clock):
    """LC-2, LC-1, EXP-3: turns added with importance 0.9 outlive a 0.5 fact; with a ttl they leave messages when they expire."""
    mem = sm.create_memory(limit=2, clock=clock)
    mem.remember("note", "a fact")
    important = SentinelChatMessageHistory(mem, importance=0.9)
    important.add_messages([HumanMessage("keep me"), AIMessage("kept")])
    assert "note" not in mem and shape(important.messages) == [("human", "", "keep me"), ("ai", "", "kept")]
    brief = SentinelChatMessageHistory(sm.create_memory(clock=clock), ttl=timedelta(minutes=5))
    brief.add_user_message("soon gone")
    clock.advance(5 * MINUTE - 1)
    assert len(brief.messages) == 1
    clock.advance(1)
    assert brief.messages == [] and brief.memory.get_recent() == ()


def test_lc_2_messages_after_add_messages_are_in_order_with_roles(mem):
    """LC-2, LC-1: LangChain's expectation: messages after add_messages (and add_message, add_user/ai_message) in order, by role."""
    history = SentinelChatMessageHistory(mem)
    assert isinstance(history, BaseChatMessageHistory) and history.messages == []
    history.add_messages(
        [
            SystemMessage("You are a waiter."),
            HumanMessage("Hello"),
            AIMessage("Hi! What can I get you?"),
            ChatMessage(role="developer", content="Too eager."),
            AIMessage("", tool_calls=[{"name": "menu", "args": {}, "id": "call-1"}]),
            ToolMessage("menu: risotto", tool_call_id="call-1"),
        ]
    )
    history.add_message(HumanMessage("The risotto, please."))
    history.add_user_message("And water.")
    history.add_ai_message(AIMessage("Coming up."))
    history.add_ai_message("Anything else?")
    assert history.messages == [
        SystemMessage("You are a waiter."),
        HumanMessage("Hello"),
        AIMessage("Hi! What can I get you?"),
        ChatMessage(role="developer", content="Too eager."),
        AIMessage("", tool_calls=[{"name": "menu", "args": {}, "id": "call-1", "type": "tool_call"}]),
        ToolMessage("menu: risotto", tool_call_id="call-1"),
        HumanMessage("The risotto, please."),
        HumanMessage("And water."),
        AIMessage("Coming up."),
        AIMessage("Anything else?"),
    ]
    assert [mem[f"chat:{n}"]["role"] for n in range(1, 11)] == [
        *("system", "user", "assistant", "developer", "assistant", "tool", "user", "user", "assistant", "assistant")
    ]
    assert history.messages is not history.messages and history.messages == history.messages  # a new list each read
    assert str(history).startswith("System: You are a waiter.\nHuman: Hello\nAI: Hi!")


def test_lc_2_chunks_and_chat_messages_of_known_roles_read_back_as_their_types(mem):
    """LC-2, LC-1: a chunk is stored like its message, and ChatMessage(role="user") reads back as a HumanMessage."""
    history = SentinelChatMessageHistory(mem)
    history.add_messages([AIMessageChunk(content="streamed"), ChatMessage(role="user", content="typed")])
    assert history.messages == [AIMessage("streamed"), HumanMessage("typed")]


def test_lc_2_int_1_content_blocks_are_kept_whole_and_read_back_as_they_came(tmp_path):
    """LC-2, LC-1, INT-1: images, files, audio and reasoning blocks are kept as the turn's parts and read back equal, through a restart."""
    blocks = [
        {"type": "text", "text": "What is "},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image", "url": "https://example.com/plate.png"},
        {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"},
        {"type": "text", "text": "on this plate?"},
    ]
    reasoning = [
        {"type": "reasoning", "reasoning": "The plate holds risotto.", "id": "rs_1"},
        {"type": "text", "text": "Risotto."},
    ]
    sent = [HumanMessage(content=blocks), AIMessage(content=reasoning), SystemMessage(content=[])]
    path = tmp_path / "memory.json"
    history = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path), autosave=True))
    history.add_messages(sent)
    assert history.memory["chat:1"] == {"role": "user", "content": blocks}
    restarted = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path)))
    assert restarted.messages == [HumanMessage(content=blocks), AIMessage(content=reasoning), SystemMessage("")]
    # LangChain's own JSON round trip of what it sent gives what the history gives back.
    assert [type(m).model_validate_json(m.model_dump_json()) for m in sent[:2]] == restarted.messages[:2]
    # A plain string in a list is kept as the text block LangChain's own content_blocks reads it as.
    assert turn_from_message(HumanMessage(content=["Is it ", {"type": "text", "text": "vegan?"}])) == {
        "role": "user",
        "content": [{"type": "text", "text": "Is it "}, {"type": "text", "text": "vegan?"}],
    }
    assert HumanMessage(content=["Is it "]).content_blocks == [{"type": "text", "text": "Is it "}]


@pytest.mark.parametrize(
    ("block", "fix"),
    [
        ({"type": "image", "base64": b"\x89PNG"}, "base64 text"),
        ({"type": "file", "file": object()}, "base64 text"),
        ({"image_url": {"url": "x"}}, "non-empty 'type'"),
        ({"type": ""}, "non-empty 'type'"),
        ({"type": "text", "text": 42}, "text must be a str"),
        ({"type": "text", "text": "lone \ud800"}, "lone surrogate"),
    ],
    ids=["bytes", "object", "no-type", "empty-type", "text-not-str", "surrogate"],
)
def test_lc_2_int_1_a_block_with_no_json_form_is_refused_naming_it_and_the_fix(mem, block, fix):
    """LC-2, INT-1: a block with no JSON form raises TypeError naming the message, the block and what to pass; nothing is stored."""
    history = SentinelChatMessageHistory(mem)
    history.add_user_message("before")
    with pytest.raises(TypeError, match=r"messages\[1\] \(HumanMessage\)\.content\[1\]") as caught:
        history.add_messages([HumanMessage("first"), HumanMessage(content=["Look:", block])])
    assert fix in str(caught.value)
    assert shape(history.messages) == [("human", "", "before")]


def test_lc_2_int_1_tool_call_args_with_no_json_form_are_refused():
    """LC-2, INT-1: an AIMessage whose call's args hold bytes raises TypeError naming the call; nothing is stored."""
    mem = sm.create_memory()
    call = {"name": "upload", "args": {"data": b"\x00"}, "id": "call-1"}
    with pytest.raises(TypeError, match=r"messages\[0\] \(AIMessage\)\.tool_calls\[0\] \('upload'\).*JSON values"):
        SentinelChatMessageHistory(mem).add_messages([AIMessage("", tool_calls=[call])])
    assert list(mem) == []


def test_lc_2_lc_1_a_message_name_is_kept():
    """LC-2, LC-1, MSG-5: a message's name is the turn's name and reads back; a ToolMessage keeps its tool's name."""
    mem = sm.create_memory()
    history = SentinelChatMessageHistory(mem)
    call = {"name": "menu", "args": {}, "id": "call-1", "type": "tool_call"}
    sent = [
        HumanMessage("Hi", name="jakub"),
        AIMessage("", tool_calls=[call]),
        ToolMessage("risotto", tool_call_id="call-1", name="menu"),
    ]
    history.add_messages(sent)
    assert mem["chat:1"] == {"role": "user", "content": "Hi", "name": "jakub"}
    assert mem["chat:3"]["name"] == "menu"
    assert history.messages == sent


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (ToolMessage("42", tool_call_id="call-1"), ValueError),
        (FunctionMessage(name="lookup", content="42"), TypeError),
        (AIMessage("", tool_calls=[{"name": "", "args": {}, "id": "call-1"}]), ValueError),
        (AIMessage("", invalid_tool_calls=[{"name": "lookup", "args": "{", "id": "call-1", "error": None}]), TypeError),
        (RemoveMessage(id="m-1"), TypeError),
        ("a plain string", TypeError),
        ({"role": "user", "content": "a dict"}, TypeError),
        (HumanMessage("lone \ud800 surrogate"), TypeError),
        (ChatMessage(role="", content="no role"), ValueError),
        (ChatMessage(role="critic", content="not a chat role"), ValueError),
    ],
    ids=[
        *("orphan-tool", "function", "unnamed-call", "invalid-tool-calls", "remove", "str", "dict", "surrogate"),
        *("empty-role", "other-role"),
    ],
)
def test_lc_2_what_a_turn_cannot_keep_is_refused_and_the_batch_stores_nothing(mem, bad, error):
    """LC-2, WRP-1, MSG-6: an orphan tool result, other message types, non-messages, bad text and roles raise; nothing of the batch is stored."""
    history = SentinelChatMessageHistory(mem)
    history.add_user_message("before")
    with pytest.raises(error):
        history.add_messages([HumanMessage("first of the batch"), bad])
    assert shape(history.messages) == [("human", "", "before")]
    assert mem.add_turn("user", "next").key == "chat:2"


def test_lc_2_a_batch_is_one_transaction_so_no_other_writer_comes_between(tmp_path):
    """LC-2, MW-6, FLD-3: threads add batches through their own handles of one shared memory; each batch stays together."""
    folder = sm.MemoryFolder(tmp_path)

    def chat(name: str) -> None:
        history = SentinelChatMessageHistory(folder.open("u"))
        for i in range(15):
            history.add_messages([HumanMessage(f"{name} asks {i}"), AIMessage(f"{name} answers {i}")])

    threads = [threading.Thread(target=chat, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    contents = [m.content for m in SentinelChatMessageHistory(folder.open("u")).messages]
    assert len(contents) == 60
    pairs = [contents[i : i + 2] for i in range(0, 60, 2)]
    assert all(asks.replace("asks", "answers") == answers for asks, answers in pairs)
    assert sorted(pairs) == sorted([f"{n} asks {i}", f"{n} answers {i}"] for n in "ab" for i in range(15))


class LockCountingStore(sm.MemoryStore):
    """A MemoryStore that counts how often its lock is taken: once per transaction (MW-6)."""

    def __init__(self) -> None:
        super().__init__()
        self.locks = 0

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        self.locks += 1
        with super().lock():
            yield


def test_lc_2_lc_3_a_batch_and_a_clear_each_hold_the_store_once():
    """LC-2, LC-3, MW-6: with shared=True, add_messages of three and clear of three each take the store's lock once, not per turn."""
    store = LockCountingStore()
    history = SentinelChatMessageHistory(sm.create_memory(store=store, shared=True, autosave=True))
    history.add_messages([SystemMessage("s"), HumanMessage("h"), AIMessage("a")])
    assert store.locks == 1 and len(store.load()["entries"]) == 3
    history.clear()
    assert store.locks == 2 and store.load()["entries"] == []
    history.add_messages([])
    assert store.locks == 2


def test_lc_1_messages_show_turns_by_n_with_legacy_strings_and_skip_facts(mem):
    """LC-1, MSG-1, ENT-16: chat:N entries with a message or a legacy "role: text" are turns, by N; everything else is a fact."""
    mem.remember("chat:10", "assistant: legacy answer: with a colon")
    mem.remember("chat:2", {"role": "user", "content": "a question"})
    mem.remember("chat:007", "user: seven, stored first")
    mem.remember("chat:7", {"role": "system", "content": "seven, stored later"})
    mem.remember("chat:3", "user said hello")  # no "role: " before it: a fact (MSG-1)
    mem.remember("chat:4", ": empty role")
    mem.remember("chat:5", {"role": "user", "content": "x", "extra": 1})
    mem.remember("chat:\u0661", {"role": "user", "content": "Arabic-Indic digit"})
    mem.remember("user:chat", {"role": "user", "content": "a fact with a message's shape"})
    history = SentinelChatMessageHistory(mem)
    assert shape(history.messages) == [
        ("human", "", "a question"),
        ("human", "", "seven, stored first"),
        ("system", "", "seven, stored later"),
        ("ai", "", "legacy answer: with a colon"),
    ]
    assert history.add_messages([HumanMessage("next")]) is None and mem["chat:11"]["content"] == "next"


def test_message_from_turn_maps_roles_to_types():
    """LC-1: user, assistant, system and tool (with its id) are LangChain's own types; any other role, a ChatMessage."""
    assert message_from_turn("user", "a") == HumanMessage("a")
    assert message_from_turn("assistant", "b") == AIMessage("b")
    assert message_from_turn("system", "c") == SystemMessage("c")
    assert message_from_turn("tool", "d") == ChatMessage(role="tool", content="d")  # stored without an id
    assert message_from_turn("tool", "d", tool_call_id="c1") == ToolMessage("d", tool_call_id="c1")
    assert message_from_turn("human", "e") == ChatMessage(role="human", content="e")
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "[1"}},
    ]
    read = message_from_turn("assistant", None, tool_calls=calls)
    assert read.tool_calls == [{"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}]
    assert [(c["id"], c["args"]) for c in read.invalid_tool_calls] == [("c2", "[1")]


def test_lc_3_clear_forgets_the_turns_only(mem):
    """LC-3, MSG-1, ENT-16: clear forgets every turn; facts, a chat:N fact, the cache and the working memory stay; N counts on."""
    history = SentinelChatMessageHistory(mem)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("chat:1", "user said hello")  # a fact under a chat key (MSG-1)
    mem.cache.put("menu", "risotto")
    mem.working.set({"step": "ordering"})
    history.add_messages([HumanMessage("hi"), AIMessage("hello")])
    mem.remember("chat:9", "user: a legacy turn")
    history.clear()
    assert history.messages == []
    assert dict(mem.items()) == {"user:name": "Jakub", "chat:1": "user said hello"}
    assert mem.cache.get("menu") == "risotto" and mem.working.get() == {"step": "ordering"}
    history.add_user_message("after the clear")
    assert mem.get("chat:10") == {"role": "user", "content": "after the clear"}
    history.clear()
    history.clear()  # nothing left to forget: still fine
    assert len(mem) == 2


def test_lc_3_clear_is_saved(tmp_path):
    """LC-3, PER-3: with autosave, a cleared history stays cleared after a restart, and the facts stay."""
    path = tmp_path / "memory.json"
    history = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path), autosave=True))
    history.memory.remember("user:name", "Jakub")
    history.add_messages([HumanMessage("hi"), AIMessage("hello")])
    history.clear()
    restarted = sm.create_memory(store=sm.JsonFileStore(path))
    assert dict(restarted.items()) == {"user:name": "Jakub"}


def test_lc_4_the_async_forms_do_what_the_sync_forms_do(mem):
    """LC-4, LC-2, LC-3: aadd_messages, aget_messages and aclear give the same results and errors as the sync forms."""
    history = SentinelChatMessageHistory(mem)
    mem.remember("user:name", "Jakub")

    async def run() -> None:
        await history.aadd_messages([HumanMessage("hi"), AIMessage("hello")])
        assert await history.aget_messages() == [HumanMessage("hi"), AIMessage("hello")] == history.messages
        with pytest.raises(ValueError):
            await history.aadd_messages([HumanMessage("x"), ToolMessage("42", tool_call_id="c")])
        assert len(await history.aget_messages()) == 2
        await history.aadd_messages([])
        await history.aclear()
        assert await history.aget_messages() == []

    asyncio.run(run())
    assert dict(mem.items()) == {"user:name": "Jakub"}


def test_lc_4_a_runnable_with_message_history_runs_async(tmp_path):
    """LC-4, LC-1, LC-2: ainvoke three times through RunnableWithMessageHistory; the turns land and survive a restart."""
    path = tmp_path / "memory.json"
    history = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path), autosave=True))
    chain, seen = conversation(history)

    async def run() -> list[BaseMessage]:
        return [await chain.ainvoke(question, config=SESSION) for question in QUESTIONS]

    assert [reply.content for reply in asyncio.run(run())] == ANSWERS
    assert len(seen[2]) == 5
    restarted = SentinelChatMessageHistory(sm.create_memory(store=sm.JsonFileStore(path)))
    assert [m.content for m in restarted.messages] == [t for pair in zip(QUESTIONS, ANSWERS, strict=True) for t in pair]


def test_lc_1_a_history_needs_a_memory():
    """LC-1: anything but a Memory raises TypeError; repr names the memory."""
    with pytest.raises(TypeError):
        SentinelChatMessageHistory(sm.MemoryStore())  # type: ignore[arg-type]
    history = SentinelChatMessageHistory(sm.create_memory())
    assert repr(history).startswith("SentinelChatMessageHistory(<Memory size=0")
    assert history.memory is history.memory


def test_lc_5_importing_the_package_does_not_import_langchain():
    """LC-5, DEP-1: `import sentinel_memory` imports no langchain module; importing the adapter does."""
    code = (
        "import sys, sentinel_memory; print(any(m.split('.')[0].startswith('langchain') for m in sys.modules)); "
        "import sentinel_memory.integrations.langchain; print('langchain_core' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_lc_5_without_langchain_core_the_adapter_names_the_extra(monkeypatch):
    """LC-5: with langchain-core missing, importing sentinel_memory.integrations.langchain raises ImportError naming the [langchain] extra."""
    for name in [m for m in sys.modules if m == "langchain_core" or m.startswith("langchain_core.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "sentinel_memory.integrations.langchain")
    with pytest.raises(ImportError, match=r"sentinel-memory\[langchain\]"):
        importlib.import_module("sentinel_memory.integrations.langchain")


def test_lc_2_the_conversion_alone_refuses_another_role_and_a_lone_surrogate():
    """LC-2, MSG-5, ENT-2: turn_from_message refuses a ChatMessage of a role no chat API takes and text with a lone surrogate, naming the message, before any memory sees it."""
    with pytest.raises(ValueError, match=r"messages\[2\] \(ChatMessage\): a ChatMessage's role must be one of"):
        turn_from_message(ChatMessage(role="critic", content="not a chat role"), where="messages[2]")
    with pytest.raises(ValueError, match="got ''"):
        turn_from_message(ChatMessage(role="", content="no role"))
    with pytest.raises(TypeError, match=r"message \(HumanMessage\): a message's text must be JSON text"):
        turn_from_message(HumanMessage("lone \ud800 surrogate"))
