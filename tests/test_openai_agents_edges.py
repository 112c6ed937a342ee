"""The Agents SDK session's edges: an empty turn, a second output of an answered call, the filter's tokenizer, output_text, every kind of tool call, the refusals (OAI-1 .. OAI-6)."""

from __future__ import annotations

import pytest
from agents import Agent
from agents.run_config import CallModelData, ModelInputData

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.openai_agents import (
    SentinelSession,
    SentinelSessions,
    budget_items,
    chat_messages,
    items_of_turn,
)
from support import import_error_without

CALL = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "4 °C"}


def test_oai_1_a_turn_with_empty_text_reads_as_one_item():
    """OAI-1: a turn stored with empty text (add_turn("user", "")) gives back one message item of that empty text."""
    mem = sm.create_memory()
    mem.add_turn("user", "")
    assert SentinelSession("s", memory=mem).items() == [{"role": "user", "content": ""}]


def test_oai_2_a_second_output_of_an_answered_call_is_kept_as_an_orphan_and_never_sent():
    """OAI-2: an output for a call already answered is kept whole as an assistant message, read back, and left out of the budgeted history."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem, token_budget=500)
    session.add([{"role": "user", "content": "Weather?"}, CALL])
    session.add([OUTPUT])
    session.add([OUTPUT])
    assert [(key, data["role"]) for key, data in mem.items()] == [
        ("chat:1", "user"),
        ("chat:2", "assistant"),
        ("chat:3", "tool"),
        ("chat:4", "assistant"),
    ]
    assert session.items() == [{"role": "user", "content": "Weather?"}, CALL, OUTPUT, OUTPUT]
    assert session.budgeted_items() == [{"role": "user", "content": "Weather?"}, CALL, OUTPUT]
    session.add([{"role": "user", "content": "Thanks"}])  # the step after: the conversation goes on
    assert session.items()[-1] == {"role": "user", "content": "Thanks"}


def chars(text: str) -> int:
    return len(text)


def test_oai_4_the_request_filter_counts_with_the_memorys_tokenizer():
    """OAI-4: without a tokenizer of its own the session's filter counts with the memory's, not the estimator."""
    items = [
        {"role": "user", "content": "What is the weather like in Brno today?"},
        {"role": "assistant", "content": "Four degrees and rain."},
        {"role": "user", "content": "And tomorrow?"},
    ]
    budget = 60
    by_memory = budget_items(items, budget, tokenizer=chars, instructions="Rules.")
    assert by_memory != budget_items(items, budget, instructions="Rules.")  # the estimator keeps more
    session = SentinelSession("s", memory=sm.create_memory(tokenizer=chars), token_budget=budget)
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions="Rules."), agent=Agent(name="a"), context=None
    )
    assert session.call_model_input_filter(data).input == by_memory == [items[-1]]


def test_oai_2_an_assistants_output_text_is_counted():
    """OAI-2, TXT-4: an assistant message's output_text parts are the text its turn reads as and is counted by."""
    item = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "It is 4 °C."}]}
    (message,) = chat_messages([item])
    assert body_of(message) == "It is 4 °C."
    assert message["content"][0] == {"type": "text", "text": "It is 4 °C."}


#: The SDK's tool call item types and the output item type that answers each (OAI-2), as the SDK names them.
SDK_CALLS = [
    ("function_call", "function_call_output"),
    ("custom_tool_call", "custom_tool_call_output"),
    ("computer_call", "computer_call_output"),
    ("local_shell_call", "local_shell_call_output"),
    ("shell_call", "shell_call_output"),
    ("apply_patch_call", "apply_patch_call_output"),
    ("tool_search_call", "tool_search_output"),
]


@pytest.mark.parametrize(("call_type", "output_type"), SDK_CALLS)
def test_oai_2_every_kind_of_tool_call_is_a_call_its_output_answers(call_type, output_type):
    """OAI-2, MSG-7: each SDK call item is an assistant tool call (named by its type when it has no name) and its output a tool message."""
    call = {"type": call_type, "call_id": "c9", "action": {"do": "x"}}
    output = {"type": output_type, "call_id": "c9", "output": "done"}
    asked, answered = chat_messages([call, output])
    assert asked["role"] == "assistant" and [c["id"] for c in asked["tool_calls"]] == ["c9"]
    assert asked["tool_calls"][0]["function"] == {"name": call_type, "arguments": '{"do":"x"}'}
    assert (answered["role"], answered["tool_call_id"], body_of(answered)) == ("tool", "c9", "done")


def test_oai_5_items_that_are_not_a_list_are_refused_saying_what_to_pass():
    """OAI-5: add() with items that are not a list is a TypeError naming what was given."""
    with pytest.raises(TypeError) as refused:
        SentinelSession("s", memory=sm.create_memory()).add("hello")  # type: ignore[arg-type]
    assert str(refused.value) == "items must be a list of input items (dicts), got 'hello'"


def test_oai_6_the_session_module_without_the_sdk_says_which_extra_to_install(monkeypatch):
    """OAI-6: importing the adapter without the Agents SDK is an ImportError naming the extra."""
    assert import_error_without(monkeypatch, "agents", "sentinel_memory.integrations.openai_agents") == (
        "sentinel_memory.integrations.openai_agents needs the OpenAI Agents SDK; "
        "install it with: pip install 'sentinel-memory[openai-agents]'"
    )


def test_oai_5_an_item_that_cannot_be_kept_is_refused_naming_it_and_what_to_pass():
    """OAI-5, INT-1: an item that is not a dict, one with no JSON form and one nested too deep are each refused by name, nothing stored."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem)
    deep: object = "x"
    for _ in range(98):
        deep = [deep]
    refusals = [
        (
            [5],
            TypeError,
            "items[0] is a int, not an input item: pass each item as the SDK's dict "
            "(an SDK or OpenAI model object as item.model_dump(exclude_unset=True))",
        ),
        (
            [{"role": "user", "content": "ok"}, {"role": "user", "content": b"x"}],
            TypeError,
            "items[1] (type 'message') has no JSON form and cannot be kept whole: items[1]['content'] of type bytes "
            "is not JSON-serializable; pass bytes as base64 text (an image or file as a data URL, file_data or a file_id)",
        ),
        (
            [{"role": "user", "content": deep}],
            ValueError,
            "items[0] (type 'message') is nested more than 97 containers deep, the most an item kept inside a turn may be",
        ),
    ]
    for items, kind, said in refusals:
        with pytest.raises(kind) as refused:
            session.add(items)
        assert str(refused.value) == said
    assert len(mem) == 0


def test_oai_2_items_the_model_made_without_a_call_are_kept_whole_with_no_text():
    """OAI-2: reasoning, an item with neither type nor role, and a call whose call_id is empty or not a str are model items: an assistant message of the item alone, no text, no tool call."""
    items = [
        {"type": "reasoning", "id": "r", "summary": [{"type": "summary_text", "text": "think"}]},
        {"id": "r1", "summary": []},
        {"type": "function_call", "call_id": 5, "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"},
    ]
    for item in items:
        assert chat_messages([item]) == [
            {"role": "assistant", "content": [{"type": "openai_agents_item", "item": item}]}
        ]


def test_oai_2_an_output_that_is_not_text_answers_its_call_with_no_text():
    """OAI-2: an output whose output is neither text nor content parts (a dict) is the call's tool message, kept whole, with no text."""
    output = {"type": "function_call_output", "call_id": "c1", "output": {"temp": 4}}
    _, answered = chat_messages([CALL, output])
    assert answered == {
        "role": "tool",
        "content": [{"type": "openai_agents_item", "item": output}],
        "tool_call_id": "c1",
    }


def test_oai_2_a_messages_text_is_its_text_parts_and_refusals_and_the_item_follows_whole():
    """OAI-2: a message's text is its input_text, output_text and text parts and its refusals' text, joined as they are (other parts add none); the item follows whole in an openai_agents_item part."""
    item = {
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "It is "},
            {"type": "reasoning_text", "text": "hidden"},
            {"type": "refusal", "refusal": "not that"},
            {"type": "refusal"},
            {"type": "input_text", "refusal": "no"},
            {"type": "input_text", "text": " but "},
            {"type": "text", "text": "this"},
        ],
    }
    (message,) = chat_messages([item])
    assert message["content"] == [
        {"type": "text", "text": "It is not that but this"},
        {"type": "openai_agents_item", "item": item},
    ]


def test_oai_2_a_calls_name_and_arguments_are_its_own_or_else_its_type_and_input():
    """OAI-2: a call's tool call takes its name and arguments; without a name (empty or not a str) its type, a custom call's input as its arguments, none as empty ones."""
    calls = [
        (
            {"type": "function_call", "call_id": "a", "name": "weather", "arguments": '{"city":"Brno"}'},
            "weather",
            '{"city":"Brno"}',
        ),
        ({"type": "function_call", "call_id": "b", "name": "", "arguments": "{}"}, "function_call", "{}"),
        ({"type": "function_call", "call_id": "c", "name": 5, "arguments": "{}"}, "function_call", "{}"),
        ({"type": "custom_tool_call", "call_id": "d", "name": "grep", "input": "needle"}, "grep", "needle"),
        ({"type": "computer_call", "call_id": "e"}, "computer_call", ""),
    ]
    for call, name, arguments in calls:
        (asked,) = chat_messages([call])
        assert asked["tool_calls"] == [
            {"id": call["call_id"], "type": "function", "function": {"name": name, "arguments": arguments}}
        ]


def test_oai_2_an_output_after_a_users_message_answers_no_open_call():
    """OAI-2, MSG-6: a user's message between a call and its output closes the call, so the output (and one more) is kept as an assistant message, not a tool one."""
    messages = chat_messages([CALL, {"role": "user", "content": "wait"}, OUTPUT, OUTPUT])
    roles = [(m["role"], m.get("tool_call_id")) for m in messages]
    assert roles == [("assistant", None), ("user", None), ("assistant", None), ("assistant", None)]


def test_oai_1_the_items_of_a_turn_are_the_callers_own():
    """OAI-1: items_of_turn gives new items: changing them changes neither the turn's data nor the memory."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem)
    session.add([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
    data = mem.get("chat:1")
    (item,) = items_of_turn(data)
    item["content"][0]["text"] = "changed"
    assert data == mem.get("chat:1") and items_of_turn(data)[0]["content"][0]["text"] == "hi"


def test_oai_1_a_text_part_holding_an_item_key_reads_as_its_text():
    """OAI-1: only an openai_agents_item part gives its item; a text part that happens to hold an "item" dict reads as its text."""
    data = {"role": "user", "content": [{"type": "text", "text": "hi", "item": {"role": "user", "content": "no"}}]}
    assert items_of_turn(data) == [{"role": "user", "content": "hi"}]


def test_oai_1_a_tool_turn_without_a_call_id_reads_as_an_output_of_call_id_empty():
    """OAI-1: a tool turn stored before results kept their call's id reads as a function_call_output whose call_id is ""."""
    assert items_of_turn({"role": "tool", "content": "r"}) == [
        {"type": "function_call_output", "call_id": "", "output": "r"}
    ]


@pytest.mark.parametrize("content", [None, ""])
def test_oai_1_a_call_without_text_gives_no_message_item(content):
    """OAI-1: an assistant turn of tool calls and no text gives the calls alone, with no empty message item before them."""
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    assert items_of_turn({"role": "assistant", "content": content, "tool_calls": [call]}) == [CALL]


def test_oai_4_every_leading_instruction_is_kept_first_and_a_history_of_them_alone_is_kept():
    """OAI-4: two leading system and developer messages are kept first, before the units; items that are all such messages come back whole."""
    system, developer = {"role": "system", "content": "a"}, {"role": "developer", "content": "b"}
    question = {"role": "user", "content": "q"}
    assert budget_items([system, developer, question], 100) == [system, developer, question]
    assert budget_items([system, developer], 100) == [system, developer]


def test_oai_4_instructions_that_fill_the_budget_exactly_leave_the_question_to_refuse():
    """OAI-4, MSG-9: instructions counting exactly the budget leave room 0 (the question's units are refused); one token less and they are."""
    counted = sm.estimate_tokens("Be brief.") + 3  # MESSAGE_TOKENS
    with pytest.raises(sm.TokenBudgetError, match=r"^the turns from the newest user message on need 4 tokens"):
        budget_items([{"role": "user", "content": "Hi"}], counted, instructions="Be brief.")
    with pytest.raises(
        sm.TokenBudgetError, match=r"^the instructions and the leading system messages need 6 tokens, 1 more"
    ):
        budget_items([{"role": "user", "content": "Hi"}], counted - 1, instructions="Be brief.")


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((5,), {"memory": "m"}, "session_id must be a str, got 5"),
        (("s",), {}, "give a folder (a MemoryFolder or a path) or a memory=, exactly one of them"),
        (
            ("s", "folder"),
            {"memory": "m"},
            "give a folder (a MemoryFolder or a path) or a memory=, exactly one of them",
        ),
        (("s",), {"memory": "m"}, "memory must be a Memory (create_memory()), got 'm'"),
        (("s",), {"memory": None, "system": 5}, "system must be a str, got 5"),
        (
            ("s",),
            {"memory": None, "limit": 3, "ttl_default": 1},
            "options limit, ttl_default are for a folder's memory; this one is given",
        ),
    ],
)
def test_oai_3_a_session_that_cannot_be_made_says_exactly_why(args, kwargs, message):
    """OAI-3: each refusal of SentinelSession's arguments is a TypeError whose whole message names what failed."""
    if "memory" in kwargs and kwargs["memory"] is None:
        kwargs = {**kwargs, "memory": sm.create_memory()}
    with pytest.raises(TypeError) as refused:
        SentinelSession(*args, **kwargs)
    assert str(refused.value) == message


def test_oai_4_a_session_without_a_budget_says_budgeted_items_needs_one():
    """OAI-4: budgeted_items on a session made without token_budget raises TypeError saying so, whole."""
    with pytest.raises(TypeError) as refused:
        SentinelSession("s", memory=sm.create_memory()).budgeted_items()
    assert str(refused.value) == "budgeted_items needs a session made with token_budget="


def test_oai_1_pop_after_eleven_turns_takes_the_newest_by_number():
    """OAI-1: pop() takes the newest turn by N, chat:11 (numbers, not their keys' text: "chat:9" sorts after it)."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem)
    said = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(11)]
    session.add(said)
    assert [key for key, _ in mem.items()][-2:] == ["chat:10", "chat:11"]
    assert session.pop() == said[-1]
    assert session.items() == said[:-1]


def test_oai_12_a_kept_read_whose_data_is_another_object_is_read_again():
    """OAI-12: items kept under a data's identity are reused only for that very object; another object at that id is read anew."""
    session = SentinelSession("s", memory=sm.create_memory(), token_budget=500)
    said = [{"role": "user", "content": "Weather?"}, CALL, OUTPUT, {"role": "assistant", "content": "4 °C"}]
    session.add(said)
    assert session.budgeted_items() == said
    # What a freed object's id, reused by new data, would leave behind: other objects under the same ids.
    session._known = {key: (object(), [{"role": "user", "content": "stale"}]) for key in session._known}
    assert session.budgeted_items() == said


def test_oai_2_an_output_answers_a_call_stored_past_the_turn_counter():
    """OAI-2, MSG-6: in a state whose turns run past its counter (built by hand), an output still answers the newest call."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem)
    session.add([{"role": "user", "content": "Weather?"}, CALL])
    mem._state = sm.MemoryState(entries=list(mem.state.entries.values()), turns=1, config=mem.state.config)
    assert mem.state.turns == 1 and "chat:2" in mem.state.entries
    session.add([OUTPUT])
    assert [(key, data["role"]) for key, data in mem.items()] == [
        ("chat:1", "user"),
        ("chat:2", "assistant"),
        ("chat:3", "tool"),
    ]
    assert session.items() == [{"role": "user", "content": "Weather?"}, CALL, OUTPUT]


@pytest.mark.parametrize(
    ("facts_share", "must_keep", "facts"),
    [(0.0, None, False), (0.0, 0.9, True), (None, None, True)],
)
def test_oai_3_the_sessions_facts_share_and_must_keep_reach_its_history(facts_share, must_keep, facts):
    """OAI-3: facts_share=0 leaves the facts out of the budgeted history; must_keep=0.9 brings the important one back."""
    mem = sm.create_memory()
    mem.remember("user:name", "The user is Jakub.", importance=1)
    session = SentinelSession("s", memory=mem, token_budget=300, facts_share=facts_share, must_keep=must_keep)
    session.add([{"role": "user", "content": "hi"}])
    fact = [{"role": "system", "content": "user:name: The user is Jakub."}] if facts else []
    assert session.budgeted_items() == [*fact, {"role": "user", "content": "hi"}]


def test_oai_3_the_sessions_turns_take_its_importance_and_ttl():
    """OAI-3: a session made with importance=0.9 and ttl=60 s stores its turns at that importance, expiring 60 s after."""
    mem = sm.create_memory()
    SentinelSession("s", memory=mem, importance=0.9, ttl=60_000).add([{"role": "user", "content": "hi"}])
    entry = mem.state.entries["chat:1"]
    assert (entry.importance, entry.expires_at - entry.created_at) == (0.9, 60_000)


ITEMS = [
    {"role": "user", "content": "What is the weather like in Brno today?"},
    {"role": "assistant", "content": "Four degrees and rain."},
    {"role": "user", "content": "And tomorrow?"},
]


def filtered(sessions: SentinelSessions) -> list:
    data = CallModelData(
        model_data=ModelInputData(input=ITEMS, instructions="Rules."), agent=Agent(name="a"), context=None
    )
    return sessions.call_model_input_filter(data).input


@pytest.mark.parametrize(
    ("options", "kept"),
    [
        ({"token_budget": 92}, 3),  # by characters (the folder's tokenizer), 92 holds all three; no reserve by default
        ({"token_budget": 92, "reserve": 2}, 1),  # 90 holds the question alone
        ({"token_budget": 92, "reserve": 2, "tokenizer": sm.estimate_tokens}, 3),  # the estimator counts fewer
        ({}, 3),  # no budget: the request as it came
    ],
)
def test_oai_7_the_sessions_filter_counts_with_the_folders_tokenizer_less_the_reserve(tmp_path, options, kept):
    """OAI-7, OAI-4, PAI-11: SentinelSessions' filter holds a request to token_budget - reserve, counted by its tokenizer or the folder's."""
    sessions = SentinelSessions(sm.MemoryFolder(tmp_path, tokenizer=chars), **options)
    try:
        assert filtered(sessions) == ITEMS[-kept:]
    finally:
        sessions.close()


def test_oai_7_sessions_show_their_folders_memories(tmp_path):
    """OAI-7: repr(SentinelSessions) is SentinelSessions(<its memories>)."""
    sessions = SentinelSessions(tmp_path)
    try:
        assert repr(sessions) == f"SentinelSessions({sessions._users.memories!r})"
        assert repr(sessions).startswith("SentinelSessions(") and repr(sessions).endswith(")")
    finally:
        sessions.close()


@pytest.mark.parametrize("question", [[], [{"role": "user", "content": "Weather?"}]])
def test_oai_2_parallel_calls_answered_one_add_at_a_time_are_tool_turns(question):
    """OAI-2, MSG-6: two calls of one response, their outputs added one at a time: the second still answers its call.

    With no question first the walk back ends at chat:1; after one, it steps from the tool turn to the call's turn.
    """
    first, second = {**CALL, "call_id": "c1"}, {**CALL, "call_id": "c2"}
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem)
    session.add([*question, first, second])
    session.add([{**OUTPUT, "call_id": "c1"}])
    session.add([{**OUTPUT, "call_id": "c2"}])
    assert [data["role"] for _, data in mem.items()] == [*(["user"] if question else []), "assistant", "tool", "tool"]


def refused(session: SentinelSession, request: list) -> None:
    """The session's filter refuses ``request`` (a budget of 5 tokens)."""
    data = CallModelData(
        model_data=ModelInputData(input=request, instructions=None), agent=Agent(name="a"), context=None
    )
    with pytest.raises(sm.TokenBudgetError):
        session.call_model_input_filter(data)


@pytest.mark.parametrize(
    ("stored", "request_", "left"),
    [
        ([{"role": "user", "content": "long " * 20}], None, []),  # the request is exactly the run's input
        ([{"role": "user", "content": "one " * 20}, {"role": "user", "content": "two " * 20}], None, []),  # two inputs
        ([{"role": "user", "content": "kept " * 20}], [{"role": "assistant", "content": "x " * 20}], ["user"]),
    ],
)
def test_oai_10_a_refused_run_forgets_exactly_the_input_that_ends_its_request(stored, request_, left):
    """OAI-10: a run the budget refuses forgets its trailing input turns when they end the request (one or two), and nothing when they do not."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem, token_budget=5)
    session.add(stored)
    refused(session, stored if request_ is None else [*stored, *request_])
    assert [data["role"] for _, data in mem.items()] == left


def test_oai_7_sessions_refuse_a_tokenizer_that_is_not_one_when_made(tmp_path):
    """OAI-7, OPT-1: SentinelSessions(tokenizer=5) raises TypeError when made, not at its first run."""
    with pytest.raises(TypeError):
        SentinelSessions(tmp_path, tokenizer=5)
