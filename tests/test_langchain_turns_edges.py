"""The LangChain conversions' edges: every refusal said whole, the calls read back and stored exactly, the lazy middleware (LC-1, LC-2, LC-5, INT-1)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, FunctionMessage, HumanMessage, ToolMessage

from sentinel_memory.integrations import langchain as lc


def _with(message: BaseMessage, **fields: Any) -> BaseMessage:
    """``message`` with ``fields`` set past pydantic's validation: what a caller's own subclass may hold."""
    for name, value in fields.items():
        object.__setattr__(message, name, value)
    return message


REFUSED = [
    ("hi", TypeError, "messages[2]: a chat history holds LangChain messages, got 'hi'"),
    (
        AIMessage(content="", invalid_tool_calls=[{"name": "w", "args": "{", "id": "c", "error": None}]),
        TypeError,
        "messages[2] (AIMessage) has invalid tool calls and cannot be kept: a chat API takes no call it cannot parse",
    ),
    (
        ChatMessage(role="robot", content="x"),
        ValueError,
        "messages[2] (ChatMessage): a ChatMessage's role must be one of system, developer, user, assistant, tool,"
        " got 'robot'",
    ),
    (
        _with(ChatMessage(role="user", content="x"), role=5),
        TypeError,
        "messages[2] (ChatMessage): a ChatMessage's role must be a str, got 5",
    ),
    (
        FunctionMessage(name="f", content="x"),
        TypeError,
        "messages[2] (FunctionMessage) cannot be kept as a chat turn: a turn is a chat-completions message (user,"
        " assistant with tool calls, system, tool with its call id, or a ChatMessage of a chat role)",
    ),
    (
        AIMessage(content="", tool_calls=[{"name": "w", "args": {"a": object()}, "id": "c"}]),
        TypeError,
        "messages[2] (AIMessage).tool_calls[0] ('w'): its args have no JSON form (args['a'] of type object is not"
        " JSON-serializable); pass JSON values (str, number, bool, None, lists and dicts of them)",
    ),
    (
        HumanMessage(content="\ud800"),
        TypeError,
        "messages[2] (HumanMessage): a message's text must be JSON text (no lone surrogates), got '\\ud800'",
    ),
    (
        _with(HumanMessage(content="x"), content=5),
        TypeError,
        "messages[2] (HumanMessage): a message's content must be a str or a list of content blocks, got 5",
    ),
    (
        HumanMessage(content=[{"type": ""}]),
        TypeError,
        "messages[2] (HumanMessage).content[0] is {'type': ''}: a content block is a str or a dict with a non-empty"
        " 'type' (such as {'type': 'text', 'text': ...} or {'type': 'image', 'url': ...})",
    ),
    (
        HumanMessage(content=[{"type": "text", "text": 5}]),
        TypeError,
        "messages[2] (HumanMessage).content[0]: a 'text' block's text must be a str, got 5",
    ),
    (
        HumanMessage(content=[{"type": "image", "data": b"\x00"}]),
        TypeError,
        "messages[2] (HumanMessage).content[0], the 'image' block, has no JSON form (messages[2]"
        " (HumanMessage).content[0]['data'] of type bytes is not JSON-serializable), so it cannot be kept whole;"
        " pass its data as base64 text, a URL or a provider's file id instead",
    ),
]


@pytest.mark.parametrize(("message", "error", "said"), REFUSED)
def test_lc_2_each_message_that_cannot_be_a_turn_is_refused_saying_exactly_why(message, error, said):
    """LC-2, MSG-5, INT-1: each refusal of turn_from_message, whole, naming where the message is."""
    with pytest.raises(error) as refused:
        lc.turn_from_message(message, where="messages[2]")
    assert str(refused.value) == said


def test_lc_1_content_with_no_json_form_is_refused_naming_it():
    """LC-1: message_from_turn copies its content as JSON, and a part that has none is named."""
    with pytest.raises(TypeError, match=r"^content\[0\] of type object is not JSON-serializable$"):
        lc.message_from_turn("user", [object()])


def test_lc_3_a_history_refuses_what_is_not_a_memory_by_name():
    """LC-3: SentinelChatMessageHistory takes a Memory, and says what it got otherwise."""
    with pytest.raises(TypeError, match=re.escape("memory must be a Memory (create_memory()), got 'mem'") + "$"):
        lc.SentinelChatMessageHistory("mem")  # type: ignore[arg-type]


def test_lc_2_an_assistants_calls_are_stored_with_their_arguments_as_json_text_and_no_content():
    """LC-2: an AIMessage that only calls tools is stored with content None and each call's args as JSON text, non-ASCII as it is."""
    message = AIMessage(content="", tool_calls=[{"name": "weather", "args": {"city": "Brno ž"}, "id": "c1"}])
    assert lc.turn_from_message(message) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Brno ž"}'}}
        ],
    }


def test_lc_1_calls_read_back_with_empty_arguments_as_no_args_and_others_not_an_object_as_invalid():
    """LC-1: a stored call with empty arguments reads back as args {}; one whose arguments are no JSON object is an invalid call."""
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": ""}},
        {"id": "c2", "type": "function", "function": {"name": "v", "arguments": "[1]"}},
    ]
    message = lc.message_from_turn("assistant", None, tool_calls=calls)
    assert isinstance(message, AIMessage) and message.content == ""
    assert message.tool_calls == [{"name": "w", "args": {}, "id": "c1", "type": "tool_call"}]
    assert message.invalid_tool_calls == [
        {"type": "invalid_tool_call", "id": "c2", "name": "v", "args": "[1]", "error": None}
    ]


def test_lc_1_only_an_assistant_turn_reads_back_with_calls():
    """LC-1: calls given with another role are not an AIMessage's: a tool turn reads back as its ToolMessage."""
    calls = [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]
    message = lc.message_from_turn("tool", "4 °C", tool_call_id="c1", tool_calls=calls)
    assert isinstance(message, ToolMessage) and message.tool_call_id == "c1"


def test_lc_5_the_middleware_is_an_attribute_of_the_package_and_nothing_else_is():
    """LC-5: SentinelMemoryMiddleware is imported on first use from the package; another name is an AttributeError saying so."""
    from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

    assert lc.SentinelMemoryMiddleware is SentinelMemoryMiddleware
    with pytest.raises(AttributeError) as missing:
        lc.nope  # noqa: B018
    assert str(missing.value) == "module 'sentinel_memory.integrations.langchain' has no attribute 'nope'"


def test_lc_5_the_package_without_langchain_core_says_which_extra_to_install(monkeypatch):
    """LC-5: importing the LangChain integration without langchain-core is an ImportError naming the extra."""
    from support import import_error_without

    assert import_error_without(monkeypatch, "langchain_core", "sentinel_memory.integrations.langchain") == (
        "sentinel_memory.integrations.langchain needs langchain-core; "
        "install it with: pip install 'sentinel-memory[langchain]'"
    )
