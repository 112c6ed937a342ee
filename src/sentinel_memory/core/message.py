"""A chat message in its stored form: the fields and roles it may have, and what it says as text (MSG-1, MSG-5, MSG-7, TXT-4).

The bottom of the chat rules: ``jsondata`` renders a stored message as text
with ``body_of``, and ``chat`` checks a message on its way in against the
same fields and roles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FIELDS", "ROLES", "body_of", "is_stored_message"]

#: MSG-5: the roles of the chat API; every other role is refused on the way in.
ROLES = ("system", "developer", "user", "assistant", "tool")

#: MSG-5: the fields a message may have.
FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name")


def is_stored_message(data: Any) -> bool:
    """Whether ``data`` is a message in its stored form (MSG-1): what ``check_message`` returns for it.

    Read on every turn a request walks, so it checks the form field by field
    without copying; it agrees with ``check_message(data) == data`` for any
    data a memory holds (JSON data, ENT-2), which a property test holds it to.
    """
    if type(data) is not dict or "role" not in data or "content" not in data or not data.keys() <= _FIELD_SET:
        return False
    role = data["role"]
    if type(role) is not str or role not in ROLES:
        return False
    calls = data.get("tool_calls")
    if "tool_calls" in data:
        if role != "assistant" or type(calls) is not list or not calls or not _stored_calls(calls):
            return False
    content = data["content"]
    if content is None:
        if calls is None:
            return False
    elif type(content) is list:
        if not content or not all(_stored_part(part) for part in content):
            return False
    elif type(content) is not str:
        return False
    if role == "tool":
        call_id = data.get("tool_call_id")
        if type(call_id) is not str or not call_id:
            return False
    elif "tool_call_id" in data:
        return False
    return "name" not in data or (type(data["name"]) is str and bool(data["name"]))


_FIELD_SET = frozenset(FIELDS)
_CALL_KEYS = frozenset(("id", "type", "function"))
_FUNCTION_KEYS = frozenset(("name", "arguments"))


def _stored_calls(calls: list[Any]) -> bool:
    ids: set[str] = set()
    for call in calls:
        if type(call) is not dict or call.keys() != _CALL_KEYS or call["type"] != "function":
            return False
        call_id, function = call["id"], call["function"]
        if type(call_id) is not str or not call_id or call_id in ids:
            return False
        ids.add(call_id)
        if type(function) is not dict or function.keys() != _FUNCTION_KEYS:
            return False
        if type(function["name"]) is not str or not function["name"] or type(function["arguments"]) is not str:
            return False
    return True


def _stored_part(part: Any) -> bool:
    if type(part) is not dict or type(part.get("type")) is not str or not part["type"]:
        return False
    return part["type"] != "text" or type(part.get("text")) is str


def body_of(message: Mapping[str, Any]) -> str:
    """What a message says, as text (TXT-4, MSG-7): its content's text, then each call as ``name(arguments)``.

    A list of content parts gives its text parts joined with nothing between
    them; other parts (an image) give nothing. A tool result is its content.

    Examples:
        >>> from sentinel_memory.core.chat import body_of
        >>> call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Brno"}'}}
        >>> body_of({"role": "assistant", "content": None, "tool_calls": [call]})
        'weather({"city":"Brno"})'
    """
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(part["text"] for part in content if part.get("type") == "text")
    else:
        text = ""
    calls = [f"{call['function']['name']}({call['function']['arguments']})" for call in message.get("tool_calls", ())]
    return " ".join([text, *calls]) if text and calls else text or " ".join(calls)
