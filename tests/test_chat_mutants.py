"""What the mutation tool found the chat core's tests let through: core/chat.py and core/message.py (MSG-1, MSG-5 .. MSG-8)."""

from __future__ import annotations

import pytest

from sentinel_memory.core import chat


@pytest.mark.parametrize(
    ("role", "hint"),
    [("human", "user"), ("ai", "assistant"), ("bot", "assistant"), ("model", "assistant"), ("function", "tool")],
)
def test_msg_5_each_other_librarys_role_names_the_chat_role_to_use(role, hint):
    """MSG-5: human, ai, bot, model and function are refused naming user, assistant or tool, and a bare role is named 'role'."""
    with pytest.raises(
        ValueError, match=rf"^role must be one of .*, got '{role}' \(use '{hint}' for a {role}'s message\)$"
    ):
        chat.check_role(role)


def test_msg_5_a_role_that_is_no_str_is_a_type_error_naming_the_role():
    """MSG-5: a role that is not a str is a TypeError saying 'role must be a str' and the type it got."""
    with pytest.raises(TypeError, match=r"^role must be a str, got int$"):
        chat.check_role(5)


def test_msg_5_one_message_is_named_message():
    """MSG-5: check_message names one message 'message' in its errors, as add_message does."""
    with pytest.raises(ValueError, match=r"^message\.role is missing$"):
        chat.check_message({"content": "hi"})


def test_msg_5_a_call_without_arguments_stores_the_empty_text():
    """MSG-5: a call's arguments default to the empty text, and its type to 'function'."""
    stored = chat.check_message({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "now"}}]})
    assert stored["tool_calls"] == [{"id": "c1", "type": "function", "function": {"name": "now", "arguments": ""}}]


def nest(depth: int) -> object:
    """``depth`` lists, one in the other."""
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


def test_ent_13_a_message_is_one_container_around_its_content():
    """ENT-13, MSG-5: content parts nested to exactly MAX_DEPTH with their message are stored; one more is refused."""
    import sentinel_memory as sm

    # The message, the content list and the part are three containers: the data inside may be MAX_DEPTH - 3 deep.
    fits = [{"type": "image", "data": nest(sm.MAX_DEPTH - 3)}]
    assert chat.check_message({"role": "user", "content": fits}, "messages[0]")["content"] == fits
    deeper = [{"type": "image", "data": nest(sm.MAX_DEPTH - 2)}]
    with pytest.raises(ValueError, match=r"^messages\[0\]\.content is nested more than 100 containers deep$"):
        chat.check_message({"role": "user", "content": deeper}, "messages[0]")


def test_msg_6_a_result_answering_no_open_call_lists_every_open_call():
    """MSG-6: the NoOpenCallError lists each open call, sorted, joined by ', '."""
    with pytest.raises(
        ValueError, match=r"^messages\[0\]\.tool_call_id: 'c9' answers no open call \(open: 'c1', 'c2'\)$"
    ):
        chat.check_messages([{"role": "tool", "tool_call_id": "c9", "content": "x"}], ["c2", "c1"])


def test_msg_8_validate_request_lists_every_problem_joined_by_semicolons():
    """MSG-8: validate_request's ValueError lists each of request_problems, joined by '; '."""
    messages = [{"role": "assistant", "content": "Hi"}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    problems = chat.request_problems(messages)
    assert len(problems) == 2
    with pytest.raises(ValueError) as caught:
        chat.validate_request(messages)
    assert str(caught.value) == "not a valid chat request: " + "; ".join(problems)


class Unreadable(dict):  # type: ignore[type-arg]
    """A mapping whose own items() raises."""

    def items(self):  # type: ignore[override]
        raise RuntimeError("boom")


class Unlistable(list):  # type: ignore[type-arg]
    """A list whose own iteration raises."""

    def __iter__(self):  # type: ignore[override]
        raise RuntimeError("boom")


def c(**fields: object) -> dict:
    """A call with the id 'c' of the function 'f', with ``fields`` over it."""
    return {"id": "c", "function": {"name": "f"}, **fields}


@pytest.mark.parametrize(
    ("message", "error", "says"),
    [
        ({"role": 5, "content": "hi"}, TypeError, "messages[1].role must be a str, got int"),
        (
            {"role": "human", "content": "hi"},
            ValueError,
            "messages[1].role must be one of system, developer, user, assistant, tool, got 'human' (use 'user' for a human's message)",
        ),
        (
            {"role": "speaker", "content": "hi"},
            ValueError,
            "messages[1].role must be one of system, developer, user, assistant, tool, got 'speaker'",
        ),
        ({"content": "hi"}, ValueError, "messages[1].role is missing"),
        ("user: hi", TypeError, "messages[1] must be a dict, got str"),
        (Unreadable(role="user"), TypeError, "messages[1] cannot be read: its items() raised RuntimeError"),
        (
            {"role": "user", "content": "x", "mood": "ok"},
            ValueError,
            "messages[1] has a field 'mood' that is not one of role, content, tool_calls, tool_call_id, name",
        ),
        (
            {"role": "user", "content": "x", 5: "ok"},
            ValueError,
            "messages[1] has a field 5 that is not one of role, content, tool_calls, tool_call_id, name",
        ),
        (
            {"role": "user", "content": 5},
            TypeError,
            "messages[1].content must be a str or a list of content parts, got int",
        ),
        ({"role": "user", "content": []}, ValueError, "messages[1].content must not be an empty list"),
        (
            {"role": "user", "content": Unlistable([1])},
            TypeError,
            "messages[1].content cannot be read: its iteration raised RuntimeError",
        ),
        ({"role": "user", "content": ["x"]}, TypeError, "messages[1].content[0] must be a dict, got str"),
        (
            {"role": "user", "content": [Unreadable(type="text")]},
            TypeError,
            "messages[1].content[0] cannot be read: its items() raised RuntimeError",
        ),
        (
            {"role": "user", "content": [{"text": "x"}]},
            TypeError,
            "messages[1].content[0].type must be a str, got NoneType",
        ),
        ({"role": "user", "content": [{"type": ""}]}, ValueError, "messages[1].content[0].type must not be empty"),
        (
            {"role": "user", "content": [{"type": "text", "text": 3}]},
            TypeError,
            "messages[1].content[0].text must be a str, got int",
        ),
        (
            {"role": "user", "content": "\ud800"},
            TypeError,
            "messages[1].content holds a lone surrogate, which JSON text cannot carry",
        ),
        (
            {"role": "user"},
            ValueError,
            "messages[1].content is missing (only an assistant message with tool_calls may go without)",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": "call"},
            TypeError,
            "messages[1].tool_calls must be a list, got str",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": Unlistable([1])},
            TypeError,
            "messages[1].tool_calls cannot be read: its iteration raised RuntimeError",
        ),
        (
            {"role": "user", "content": "x", "tool_calls": [c()]},
            ValueError,
            "messages[1].tool_calls: only an assistant message calls tools, not 'user'",
        ),
        ({"role": "assistant", "tool_calls": ["call"]}, TypeError, "messages[1].tool_calls[0] must be a dict, got str"),
        (
            {"role": "assistant", "tool_calls": [c(), c()]},
            ValueError,
            "messages[1].tool_calls[1].id: two calls with the id 'c'",
        ),
        (
            {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]},
            TypeError,
            "messages[1].tool_calls[0].id must be a str, got NoneType",
        ),
        ({"role": "assistant", "tool_calls": [c(id="")]}, ValueError, "messages[1].tool_calls[0].id must not be empty"),
        (
            {"role": "assistant", "tool_calls": [c(id="\ud800")]},
            TypeError,
            "messages[1].tool_calls[0].id holds a lone surrogate, which JSON text cannot carry",
        ),
        (
            {"role": "assistant", "tool_calls": [c(type="web")]},
            ValueError,
            "messages[1].tool_calls[0].type must be 'function', got 'web'",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function="f")]},
            TypeError,
            "messages[1].tool_calls[0].function must be a dict, got str",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function={"name": "f", "x": 1})]},
            ValueError,
            "messages[1].tool_calls[0].function has a field 'x' that is not one of name, arguments",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function={"arguments": "{}"})]},
            TypeError,
            "messages[1].tool_calls[0].function.name must be a str, got NoneType",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function={"name": "\ud800"})]},
            TypeError,
            "messages[1].tool_calls[0].function.name holds a lone surrogate, which JSON text cannot carry",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function={"name": "f", "arguments": {}})]},
            TypeError,
            "messages[1].tool_calls[0].function.arguments must be a str (JSON text), got dict",
        ),
        (
            {"role": "assistant", "tool_calls": [c(function={"name": "f", "arguments": "\ud800"})]},
            TypeError,
            "messages[1].tool_calls[0].function.arguments holds a lone surrogate, which JSON text cannot carry",
        ),
        (
            {"role": "tool", "content": "x"},
            ValueError,
            "messages[1].tool_call_id is missing: a tool message answers a call by its id",
        ),
        (
            {"role": "tool", "content": "x", "tool_call_id": ""},
            ValueError,
            "messages[1].tool_call_id must not be empty",
        ),
        (
            {"role": "tool", "content": "x", "tool_call_id": "\ud800"},
            TypeError,
            "messages[1].tool_call_id holds a lone surrogate, which JSON text cannot carry",
        ),
        (
            {"role": "user", "content": "x", "tool_call_id": "c"},
            ValueError,
            "messages[1].tool_call_id: only a tool message answers a call, not 'user'",
        ),
        ({"role": "user", "content": "x", "name": ""}, ValueError, "messages[1].name must not be empty"),
        (
            {"role": "user", "content": "x", "name": "\ud800"},
            TypeError,
            "messages[1].name holds a lone surrogate, which JSON text cannot carry",
        ),
    ],
)
def test_msg_5_each_refusal_says_exactly_what_failed_and_where(message, error, says):
    """MSG-5, MSG-6, WRP-4: each refused message's error is exactly the message and field named, and what it got."""
    with pytest.raises(error) as raised:
        chat.check_messages([{"role": "user", "content": "ok"}, message], None)
    assert str(raised.value) == says
    assert chat.request_problems(
        [{"role": "user", "content": "ok"}, message, {"role": "tool", "tool_call_id": "c9", "content": "x"}]
    ) == [
        says,
        "messages[2]: tool result 'c9' answers no open call",
    ]


@pytest.mark.parametrize("messages", ["x", 5, {"role": "user", "content": "hi"}, Unlistable([1])])
def test_msg_8_messages_that_are_no_list_are_a_type_error_naming_messages(messages):
    """MSG-6, MSG-8: messages that are a str, a number, a dict or whose iteration raises are a TypeError naming 'messages'."""
    says = (
        "messages cannot be read: its iteration raised RuntimeError"
        if isinstance(messages, Unlistable)
        else f"messages must be a list of messages, got {type(messages).__name__}"
    )
    for check in (lambda: chat.check_messages(messages, None), lambda: chat.request_problems(messages)):
        with pytest.raises(TypeError) as raised:
            check()
        assert str(raised.value) == says


def asks(*ids: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [c(id=i) for i in ids]}


def answer(i: str) -> dict:
    return {"role": "tool", "tool_call_id": i, "content": "4 °C"}


@pytest.mark.parametrize(
    ("messages", "problems"),
    [
        (
            [
                {"role": "developer", "content": "d"},
                {"role": "system", "content": "s"},
                {"role": "user", "content": "u"},
            ],
            [],
        ),
        (
            [
                {"role": "system", "content": "s"},
                {"role": "assistant", "content": "a"},
                {"role": "user", "content": "u"},
            ],
            ["messages[1]: the first message after the system messages is from assistant, not the user"],
        ),
        (
            [
                {"role": "user", "content": "u"},
                asks("c1", "c2"),
                answer("c2"),
                answer("c1"),
                {"role": "user", "content": "u"},
            ],
            [],
        ),
        (
            [{"role": "user", "content": "u"}, asks("c2", "c1"), answer("c1"), {"role": "user", "content": "u"}],
            ["messages[1]: calls ['c2'] are not answered"],
        ),
        (
            [{"role": "user", "content": "u"}, asks("c2", "c1"), {"role": "assistant", "content": "a"}, asks("c3")],
            ["messages[1]: calls ['c1', 'c2'] are not answered", "messages[3]: calls ['c3'] are not answered"],
        ),
        (
            [{"role": "user", "content": "u"}, asks("c1"), answer("c1"), answer("c1"), answer("c2")],
            [
                "messages[3]: tool result 'c1' answers no open call",
                "messages[4]: tool result 'c2' answers no open call",
            ],
        ),
        (
            [{"role": "user", "content": "u"}, {"role": "assistant"}, {"role": "user"}],
            [
                "messages[1].content is missing (only an assistant message with tool_calls may go without)",
                "messages[2].content is missing (only an assistant message with tool_calls may go without)",
            ],
        ),
    ],
    ids=[
        "system-and-developer-lead",
        "assistant-first",
        "answered",
        "half-answered",
        "never-answered",
        "answered-twice",
        "two-bad",
    ],
)
def test_msg_8_request_problems_names_each_problem_once_and_reads_on(messages, problems):
    """MSG-8: each problem is named once by its message, sorted calls listed, and the messages after a problem are still read."""
    assert chat.request_problems(messages) == problems


def stored_call(i: str = "c", name: str = "f", arguments: str = "{}") -> dict:
    return {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}


VALID_STORED = [
    {"role": "user", "content": "hi"},
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "u"}}]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call("c1"), stored_call("c2")]},
    {"role": "assistant", "content": "Checking.", "tool_calls": [stored_call()], "name": "bot"},
    {"role": "tool", "content": "4 °C", "tool_call_id": "c"},
]

NOT_STORED = [
    ["role", "user", "content", "hi"],
    {"role": "user"},
    {"content": "hi"},
    {"role": "user", "content": "hi", "mood": "ok"},
    {"role": 5, "content": "hi"},
    {"role": "human", "content": "hi"},
    {"role": "user", "content": None, "tool_calls": [stored_call()]},
    {"role": "assistant", "content": None, "tool_calls": stored_call()},
    {"role": "assistant", "content": None, "tool_calls": []},
    {"role": "assistant", "content": None},
    {"role": "assistant", "content": None, "tool_calls": ["call"]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": ""}}]},
    {"role": "assistant", "content": None, "tool_calls": [{**stored_call(), "type": "web"}]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call(i=5)]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call(i="")]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call("c"), stored_call("c")]},
    {"role": "assistant", "content": None, "tool_calls": [{**stored_call(), "function": "f"}]},
    {"role": "assistant", "content": None, "tool_calls": [{**stored_call(), "function": {"name": "f"}}]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call(name=5)]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call(name="")]},
    {"role": "assistant", "content": None, "tool_calls": [stored_call(arguments=5)]},
    {"role": "user", "content": []},
    {"role": "user", "content": ["text"]},
    {"role": "user", "content": [{"text": "a"}]},
    {"role": "user", "content": [{"type": ""}]},
    {"role": "user", "content": [{"type": "text"}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": 5}]},
    {"role": "user", "content": 5},
    {"role": "tool", "content": "x"},
    {"role": "tool", "content": "x", "tool_call_id": ""},
    {"role": "tool", "content": "x", "tool_call_id": 5},
    {"role": "user", "content": "x", "tool_call_id": "c"},
    {"role": "user", "content": "x", "name": ""},
    {"role": "user", "content": "x", "name": 5},
]


@pytest.mark.parametrize("data", VALID_STORED)
def test_msg_1_a_message_in_its_stored_form_is_one(data):
    """MSG-1, MSG-5: each stored form check_message returns unchanged is a stored message."""
    assert chat.check_message(data) == data
    assert chat.is_stored_message(data)


@pytest.mark.parametrize("data", NOT_STORED)
def test_msg_1_data_off_the_stored_form_by_one_field_is_no_message(data):
    """MSG-1, MSG-5: data a field off the stored form (missing, extra, wrong type, empty, a repeated id) is no stored message."""
    assert not chat.is_stored_message(data)


@pytest.mark.parametrize(
    ("message", "body"),
    [
        ({"role": "user", "content": "hi"}, "hi"),
        ({"role": "tool", "content": "4 °C", "tool_call_id": "c"}, "4 °C"),
        (
            {
                "role": "user",
                "content": [{"type": "text", "text": "What is "}, {"type": "image"}, {"type": "text", "text": "this?"}],
            },
            "What is this?",
        ),
        ({"role": "user", "content": [{"type": "image"}]}, ""),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [stored_call("1", "weather", "{}"), stored_call("2", "time", "x")],
            },
            "weather({}) time(x)",
        ),
        (
            {"role": "assistant", "content": "Checking.", "tool_calls": [stored_call("1", "weather", "{}")]},
            "Checking. weather({})",
        ),
        ({"role": "assistant", "content": [{"type": "image"}], "tool_calls": [stored_call("1", "f", "")]}, "f()"),
    ],
)
def test_txt_4_a_message_says_its_text_then_each_call(message, body):
    """TXT-4, MSG-7: the text parts joined with nothing, then each call as name(arguments), the pieces joined by one space."""
    assert chat.body_of(message) == body
