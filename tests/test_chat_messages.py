"""Agents' histories: whole messages with tool calls, and requests a chat API accepts (MSG-5 .. MSG-9, TXT-4, ENT-16)."""

from __future__ import annotations

import asyncio
import json

import pytest

import sentinel_memory as sm
from support import T0, RecordingStore


def call(i: int, name: str = "weather", arguments: str = '{"city":"Brno"}') -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}


def asks(*ids: int) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def answer(i: int, text: str = "4 °C") -> dict:
    return {"role": "tool", "tool_call_id": f"call_{i}", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def test_msg_5_a_message_is_stored_as_the_chat_api_has_it(mem):
    """MSG-5, MSG-6: add_message stores the wire form (None fields dropped, type defaulted) and returns the entry."""
    entry = mem.add_message(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    assert entry.key == "chat:1" and entry.importance == 0.3
    assert mem["chat:1"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    parts = [{"type": "text", "text": "What is "}, {"type": "image_url", "image_url": {"url": "https://x/a.png"}}]
    dumped = {"role": "user", "content": parts, "name": "jakub", "refusal": None, "audio": None}
    assert mem.add_message(dumped).data == {"role": "user", "content": parts, "name": "jakub"}


@pytest.mark.parametrize(
    ("message", "error", "says"),
    [
        (
            {"role": "human", "content": "hi"},
            ValueError,
            "messages[0].role must be one of system, developer, user, assistant, tool, got 'human' (use 'user'",
        ),
        ({"role": "ai", "content": "hi"}, ValueError, "(use 'assistant'"),
        ({"role": 5, "content": "hi"}, TypeError, "messages[0].role must be a str"),
        ({"content": "hi"}, ValueError, "messages[0].role is missing"),
        ({"role": "user", "content": 5}, TypeError, "messages[0].content must be a str or a list of content parts"),
        ({"role": "user", "content": []}, ValueError, "messages[0].content must not be an empty list"),
        ({"role": "user", "content": [{"text": "x"}]}, TypeError, "messages[0].content[0].type must be a str"),
        (
            {"role": "user", "content": [{"type": "text", "text": 3}]},
            TypeError,
            "messages[0].content[0].text must be a str",
        ),
        ({"role": "user"}, ValueError, "messages[0].content is missing"),
        ({"role": "user", "content": "x", "mood": "ok"}, ValueError, "messages[0] has a field 'mood'"),
        ({"role": "tool", "content": "x"}, ValueError, "messages[0].tool_call_id is missing"),
        (
            {"role": "user", "content": "x", "tool_call_id": "c"},
            ValueError,
            "messages[0].tool_call_id: only a tool message",
        ),
        (
            {"role": "user", "content": "x", "tool_calls": [call(1)]},
            ValueError,
            "messages[0].tool_calls: only an assistant",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [call(1), call(1)]},
            ValueError,
            "messages[0].tool_calls[1].id: two calls with the id 'call_1'",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f"}}]},
            TypeError,
            "messages[0].tool_calls[0].id must be a str",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "", "function": {"name": "f"}}]},
            ValueError,
            "messages[0].tool_calls[0].id must not be empty",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]},
            TypeError,
            "messages[0].tool_calls[0].function.name must be a str",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "web", "function": {"name": "f"}}],
            },
            ValueError,
            "messages[0].tool_calls[0].type must be 'function'",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
            },
            TypeError,
            "function.arguments must be a str",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": "call"},
            TypeError,
            "messages[0].tool_calls must be a list",
        ),
        ({"role": "user", "content": "\ud800"}, TypeError, "messages[0].content"),
        ("user: hi", TypeError, "messages[0] must be a dict"),
        (
            {"role": "tool", "tool_call_id": "c9", "content": "x"},
            ValueError,
            "messages[0].tool_call_id: 'c9' answers no open call",
        ),
    ],
)
def test_msg_5_bad_input_is_a_clear_error_naming_the_message_and_field_and_stores_nothing(make, message, error, says):
    """MSG-5, MSG-6, WRP-1: every refused message names messages[i] and the field; the store and the memory stay as they were."""
    store = RecordingStore()
    mem = make(store=store, autosave=True)
    mem.add_turn("user", "hi")
    before, saves = sm.core.to_document(mem.state), len(store.saves)
    with pytest.raises(error) as raised:
        mem.add_messages([message])
    assert says in str(raised.value)
    with pytest.raises(error):
        mem.add_message(message)
    assert sm.core.to_document(mem.state) == before and len(store.saves) == saves


def test_msg_6_a_batch_is_all_or_nothing_one_save_one_on_evict(make):
    """MSG-6: a bad last message stores none of the batch; a good batch is one autosave and one on_evict call."""
    store, evicted = RecordingStore(), []
    mem = make(store=store, autosave=True, limit=3, on_evict=evicted.append)
    with pytest.raises(
        ValueError, match=r"messages\[2\]\.tool_call_id: 'call_2' answers no open call \(open: 'call_1'\)"
    ):
        mem.add_messages([user("Weather?"), asks(1), answer(2)])
    assert len(mem) == 0 and store.saves == []
    entries = mem.add_messages([user("Weather?"), asks(1), answer(1), assistant("4 °C."), user("Thanks")])
    assert [e.key for e in entries] == ["chat:1", "chat:2", "chat:3", "chat:4", "chat:5"]
    assert len(store.saves) == 1 and len(evicted) == 1
    assert [e.key for e in evicted[0].evicted] == ["chat:1", "chat:2"]
    with pytest.raises(TypeError, match="messages must be a list of messages"):
        mem.add_messages(user("x"))


def test_msg_6_a_tool_result_answers_the_open_call_of_the_newest_stored_turns(mem):
    """MSG-6: a result in a later call answers an open stored call, once; a turn in between, or its call forgotten, closes them."""
    mem.add_turn("user", "Brno and Praha?")
    mem.add_message(asks(1, 2))
    assert sm.core.open_calls(mem.state, now=T0) == {"call_1", "call_2"}
    mem.add_message(answer(2))
    with pytest.raises(ValueError, match="'call_2' answers no open call"):
        mem.add_message(answer(2))  # answered already
    mem.add_message(answer(1))
    assert sm.core.open_calls(mem.state, now=T0) == frozenset()
    mem.add_message(asks(3))
    mem.forget("chat:5")
    with pytest.raises(ValueError, match="answers no open call"):
        mem.add_message(answer(3))


def test_msg_6_what_a_request_never_sends_neither_answers_nor_closes_a_call(mem, clock):
    """MSG-6, MSG-7: the open calls are get_messages' pending calls: a forgotten, expired, human or id-less tool turn after a call stands between nothing."""
    mem.add_turn("user", "Brno and Praha?")
    mem.add_message(asks(1, 2))
    mem.add_turn("assistant", "one moment", ttl=1000)
    mem.remember("chat:4", {"role": "human", "content": "stored before roles were checked"})
    mem.remember("chat:5", "tool: stored before results had ids")
    mem.add_turn("assistant", "forgotten")
    mem.forget("chat:6")
    with pytest.raises(ValueError, match="answers no open call"):
        mem.add_message(answer(1))  # the live assistant turn after the call closes it
    assert sm.core.open_calls(mem.state, now=clock.now) is None
    clock.advance(1000)  # the assistant turn expires: the call is pending again
    assert [e.key for e in mem.get_messages(token_budget=500).pending] == ["chat:2"]
    assert sm.core.open_calls(mem.state, now=clock.now) == {"call_1", "call_2"}
    mem.add_messages([answer(1), answer(2)])
    sent = mem.get_messages(token_budget=500).messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert sm.request_problems(sent) == []
    mem.add_turn("user", "thanks")
    mem.add_message(asks(3))
    mem.add_turn("user", "never mind")
    with pytest.raises(ValueError, match="answers no open call"):
        mem.add_message(answer(3))  # a user turn after the call closes it, here and in MSG-7


def test_ent_16_add_turn_takes_the_chat_roles_and_not_tool(mem):
    """ENT-16, MSG-5: add_turn refuses roles outside the chat API's with a hint, and tool (no call id); old turns of other roles still read."""
    with pytest.raises(ValueError, match=r"use 'user'"):
        mem.add_turn("human", "hi")
    with pytest.raises(ValueError, match="use add_message with a tool_call_id"):
        mem.add_turn("tool", "4 °C")
    with pytest.raises(TypeError, match="text must be a str"):
        mem.add_turn("user", 5)
    assert mem.add_turn("developer", "Answer in Czech.").key == "chat:1"
    mem.remember("chat:2", {"role": "human", "content": "stored before the check"})
    assert mem.get_context(token_budget=100, only="turns").text.endswith("chat:2: human: stored before the check")
    assert len(mem) == 2


def test_txt_4_a_tool_result_reads_as_its_content_and_a_call_as_name_arguments(mem):
    """TXT-4, MSG-7: in a context and in recall a result is its content and a call name(arguments), never their JSON."""
    mem.add_messages([user("Weather in Brno?"), asks(1), answer(1, "4 °C and rain"), assistant("Cold.")])
    text = mem.get_context(token_budget=200).text
    assert text.splitlines() == [
        "chat:1: user: Weather in Brno?",
        'chat:2: assistant: weather({"city":"Brno"})',
        "chat:3: tool: 4 °C and rain",
        "chat:4: assistant: Cold.",
    ]
    assert [hit.entry.key for hit in mem.recall("rain")] == ["chat:3"]
    assert "tool_call_id" not in text
    said = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Let me look."}],
        "tool_calls": [call(2, "menu", "{}")],
    }
    assert sm.core.chat.body_of(said) == "Let me look. menu({})"


def test_msg_7_units_are_kept_or_dropped_whole_and_a_pending_call_is_reported(mem):
    """MSG-7, MSG-8: at every budget the request is valid; an unanswered call at the end is left out and in pending."""
    mem.add_messages(
        [user("Weather in Brno?"), asks(1, 2), answer(1), answer(2, "rain all day"), assistant("Cold and wet.")]
    )
    mem.add_messages([user("And tomorrow?"), asks(3)])
    for budget in range(14, 120):
        result = mem.get_messages(token_budget=budget)
        assert sm.request_problems(result.messages) == []
        assert [e.key for e in result.pending] == ["chat:7"]
        assert result.tokens <= budget
        assert len(result.entries) + result.omitted == len(mem)
    mem.add_message(answer(3, "sunny"))
    full = mem.get_messages(token_budget=200)
    assert full.pending == () and full.messages[-1] == {"role": "tool", "content": "sunny", "tool_call_id": "call_3"}


def test_msg_7_orphans_and_calls_left_unanswered_in_the_middle_are_never_sent(mem):
    """MSG-7: the issue's add_turn("tool") history, a forgotten call and an abandoned call give a valid request."""
    mem.add_turn("user", "What's the weather?")
    mem.remember("chat:2", {"role": "tool", "content": "4 °C"})  # how a tool result was stored before messages
    mem.add_message(asks(1))
    mem.add_turn("user", "Never mind.")
    mem.add_messages([asks(2), answer(2)])
    mem.forget("chat:5")
    mem.add_turn("assistant", "OK.")
    result = mem.get_messages(token_budget=200)
    assert [m["role"] for m in result.messages] == ["user", "user", "assistant"]
    assert result.omitted == 3 and sm.request_problems(result.messages) == []


def test_msg_9_the_system_prompt_is_first_and_counted(mem):
    """MSG-2, MSG-3, MSG-9: system= opens the one system message, the facts follow a blank line, and its tokens are in the budget."""
    mem.remember("user:allergy", "allergic to peanuts")
    mem.add_turn("user", "Any nuts in the risotto?")
    result = mem.get_messages(token_budget=100, system="You are a waiter.")
    assert result.messages[0] == {"role": "system", "content": "You are a waiter.\n\nuser:allergy: allergic to peanuts"}
    assert result.tokens == sum(sm.estimate_tokens(m["content"]) + 3 for m in result.messages)
    small = mem.get_messages(token_budget=17, system="You are a waiter.")
    assert small.messages == [{"role": "system", "content": "You are a waiter."}, user("Any nuts in the risotto?")]
    with pytest.raises(sm.TokenBudgetError) as raised:
        mem.get_messages(token_budget=16, system="You are a waiter.")
    assert (raised.value.needed, raised.value.budget) == (17, 16)
    assert "the system prompt and the turns from the newest user message on need 17 tokens, 1 more" in str(raised.value)
    with pytest.raises(TypeError, match="system must be a str"):
        mem.get_messages(token_budget=100, system=["You are a waiter."])  # type: ignore[arg-type]


def test_msg_9_must_keep_facts_are_in_or_the_error_says_by_how_much(mem):
    """MSG-9, CTX-10: must-keep facts win over older turns; when they and the question cannot fit, TokenBudgetError."""
    mem.remember("user:allergy", "allergic to peanuts and to every kind of tree nut", importance=1.0)
    mem.add_turn("user", "What do you recommend?")
    mem.add_turn("assistant", "The risotto is very good today.")
    mem.add_turn("user", "Does it have nuts?")
    result = mem.get_messages(token_budget=40, must_keep=0.9, facts_share=0)
    assert "tree nut" in result.messages[0]["content"] and result.messages[-1] == user("Does it have nuts?")
    assert "tree nut" not in json.dumps(mem.get_messages(token_budget=40, facts_share=0).messages)
    with pytest.raises(
        sm.TokenBudgetError,
        match="the must-keep facts and the turns from the newest user message on need 27 tokens, 1 more than the budget of 26",
    ):
        mem.get_messages(token_budget=26, must_keep=0.9)
    with pytest.raises(ValueError, match="the system prompt, the must-keep facts"):
        mem.get_messages(token_budget=30, must_keep=0.9, system="Be brief.")


def test_msg_4_messages_are_a_new_list_of_new_dicts_every_call(mem):
    """MSG-4: the README's use works: [system] + messages, messages.append(question); nothing stored changes."""
    mem.add_messages([user("Weather?"), asks(1), answer(1)])
    first = mem.get_messages(token_budget=100)
    second = mem.get_messages(token_budget=100)
    assert type(first.messages) is list and first.messages == second.messages
    assert first.messages is not second.messages and first.messages[1] is not second.messages[1]
    first.messages.append(user("And tomorrow?"))
    first.messages[1]["tool_calls"][0]["id"] = "changed"
    assert [{"role": "developer", "content": "x"}, *second.messages][1:] == mem.get_messages(token_budget=100).messages


def test_msg_8_the_validator_names_each_problem():
    """MSG-8: request_problems lists what a chat API refuses; validate_request raises it."""
    assert sm.request_problems([]) == ["messages is empty: a chat API needs at least one message"]
    assert (
        sm.request_problems([{"role": "system", "content": "s"}, {"role": "developer", "content": "d"}, user("hi")])
        == []
    )
    assert sm.request_problems([assistant("hello"), user("hi")]) == [
        "messages[0]: the first message after the system messages is from assistant, not the user"
    ]
    assert sm.request_problems([user("hi"), asks(1), user("and?")]) == [
        "messages[1]: calls ['call_1'] are not answered"
    ]
    assert sm.request_problems([user("hi"), asks(1)]) == ["messages[1]: calls ['call_1'] are not answered"]
    assert sm.request_problems([user("hi"), asks(1), answer(1), answer(1)]) == [
        "messages[3]: tool result 'call_1' answers no open call"
    ]
    assert sm.request_problems([user("hi"), {"role": "human", "content": "x"}])[0].startswith(
        "messages[1].role must be one of"
    )
    with pytest.raises(ValueError, match="not a valid chat request: messages\\[1\\]: tool result"):
        sm.validate_request([user("hi"), answer(1)])


def test_msg_6_the_async_memory_stores_messages_the_same_way():
    """MSG-6, AIO-1: AsyncMemory.add_message(s) are the sync memory's, with the same errors."""

    async def run() -> tuple[list, sm.Messages]:
        mem = await sm.create_async_memory(store=sm.MemoryStore(), clock=lambda: T0)
        entries = await mem.add_messages([user("Weather?"), asks(1)])
        await mem.add_message(answer(1))
        with pytest.raises(ValueError, match="answers no open call"):
            await mem.add_message(answer(1))
        return entries, mem.get_messages(token_budget=100, system="Be brief.")

    entries, result = asyncio.run(run())
    assert [e.key for e in entries] == ["chat:1", "chat:2"]
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool"]


def test_msg_6_a_shared_memory_adds_a_batch_in_one_transaction(tmp_path):
    """MSG-6, MW-6: with shared=True a batch is one transaction: another writer's turn never lands inside it."""
    path = tmp_path / "m.json"
    one = sm.create_memory(store=sm.JsonFileStore(path), shared=True, autosave=True)
    two = sm.create_memory(store=sm.JsonFileStore(path), shared=True, autosave=True)
    one.add_turn("user", "first")
    two.add_messages([user("Weather?"), asks(1), answer(1)])
    one.add_turn("assistant", "last")
    again = sm.create_memory(store=sm.JsonFileStore(path))
    assert [again[f"chat:{n}"]["role"] for n in range(1, 6)] == ["user", "user", "assistant", "tool", "assistant"]


def test_msg_10_an_empty_request_is_returned_and_flagged(mem):
    """MSG-10: with no system prompt, no fact and no turn get_messages returns []; request_problems flags it."""
    empty = mem.get_messages(token_budget=100)
    assert empty.messages == [] and empty.tokens == 0 and empty.entries == ()
    assert sm.request_problems(empty.messages) == [sm.core.chat.EMPTY_REQUEST]
    with pytest.raises(ValueError, match=r"^not a valid chat request: messages is empty"):
        sm.validate_request(empty.messages)
    # One message of any kind is a request: a system prompt alone, or a fact alone.
    assert sm.request_problems(mem.get_messages(token_budget=100, system="Be brief.").messages) == []
    mem.remember("user:name", "Jakub")
    assert sm.request_problems(mem.get_messages(token_budget=100).messages) == []
    # A fact that does not fit leaves nothing to send: [] again, flagged again.
    assert mem.get_messages(token_budget=3).messages == []
    assert sm.request_problems(mem.get_messages(token_budget=3).messages) == [sm.core.chat.EMPTY_REQUEST]


def test_msg_7_parallel_results_keep_their_stored_order_in_the_request():
    """MSG-7: a unit of a call with two results sends the results in the order they were stored, whichever the cut."""
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": "weather", "arguments": "{}"}} for n in (1, 2)]
    turns = [
        {"role": "user", "content": "Weather in Brno and Praha?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "Brno: 4 °C"},
        {"role": "tool", "tool_call_id": "c2", "content": "Praha: 6 °C"},
        {"role": "assistant", "content": "Cold in both."},
    ]
    state, _, _ = sm.core.add_messages(sm.MemoryState(), turns, now=100)
    for cut in (None, "stable"):
        assert sm.core.messages(state, now=100, token_budget=1_000, cut=cut).messages == turns
