"""Chat messages in the OpenAI chat-completions wire form: checking, storing, rendering, validating (MSG-5 .. MSG-9).

A stored turn is the message itself: ``role``, ``content`` (a str, a list of
content parts, or None on an assistant message that calls tools), an
assistant's ``tool_calls`` (each ``{"id", "type": "function", "function":
{"name", "arguments"}}``), a tool message's ``tool_call_id`` and an optional
``name``. A turn stored as ``{"role", "content"}`` before turns kept more is
such a message with nothing else (MSG-1).

``check_messages`` is what ``add_message(s)`` runs before anything is stored:
every field of every message, and that each tool message answers an open
call. ``request_problems`` is the validator of what ``get_messages`` returns
(MSG-8): a request a chat API accepts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import NoOpenCallError
from .jsondata import copy_json, read_items, read_list
from .message import FIELDS, ROLES, body_of, is_stored_message
from .shown import shown

__all__ = [
    "EMPTY_REQUEST",
    "FIELDS",
    "ROLES",
    "body_of",
    "check_message",
    "check_messages",
    "check_role",
    "is_stored_message",
    "request_problems",
    "validate_request",
]

#: MSG-10: the problem ``request_problems`` finds in a request without any message.
EMPTY_REQUEST = "messages is empty: a chat API needs at least one message"

#: Roles other libraries use for the same speakers: named in the error so the fix is obvious.
_HINTS = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant", "function": "tool"}


def check_role(role: object, where: str = "role") -> str:
    """A role of the chat API (MSG-5): ``TypeError`` for a non-str, ``ValueError`` naming the roles otherwise.

    Examples:
        >>> from sentinel_memory.core.chat import check_role
        >>> check_role("user")
        'user'
        >>> check_role("human")
        Traceback (most recent call last):
        ...
        ValueError: role must be one of system, developer, user, assistant, tool, got 'human' (use 'user' for a human's message)
    """
    if not isinstance(role, str):
        raise TypeError(f"{where} must be a str, got {type(role).__name__}")
    role = str.__str__(role)  # a str subclass's own ==, hash or str() must not run here (WRP-4)
    if role not in ROLES:
        hint = _HINTS.get(role.lower())
        more = f" (use {hint!r} for a {role.lower()}'s message)" if hint else ""
        raise ValueError(f"{where} must be one of {', '.join(ROLES)}, got {shown(role)}{more}")
    return role


def _nonempty_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{where} must not be empty")
    return value


def _fields(value: object, allowed: Sequence[str], where: str) -> dict[str, Any]:
    """The dict's fields, a None value as if absent; ``ValueError`` for a field it may not have."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict, got {type(value).__name__}")
    out: dict[str, Any] = {}
    # Read once through the caller's items(), guarded; each key compared as the plain str it holds (WRP-4).
    for key, item in read_items(value, where):
        if item is None:
            continue  # an SDK's model_dump() writes absent fields as None
        name = str.__str__(key) if isinstance(key, str) else None
        if name is None or name not in allowed:
            raise ValueError(f"{where} has a field {shown(key)} that is not one of {', '.join(allowed)}")
        out[name] = item
    return out


def _check_content(content: object, where: str) -> Any:
    if isinstance(content, str):
        return copy_json(content, what=where)  # no lone surrogate (ENT-2)
    if not isinstance(content, list | tuple):
        raise TypeError(f"{where} must be a str or a list of content parts, got {type(content).__name__}")
    parts = read_list(content, where)  # the caller's own iteration, guarded (WRP-4)
    if not parts:
        raise ValueError(f"{where} must not be an empty list")
    for i, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise TypeError(f"{where}[{i}] must be a dict, got {type(part).__name__}")
        fields = {str.__str__(k): v for k, v in read_items(part, f"{where}[{i}]") if isinstance(k, str)}
        kind = _nonempty_str(fields.get("type"), f"{where}[{i}].type")
        if str.__str__(kind) == "text" and not isinstance(fields.get("text"), str):
            raise TypeError(f"{where}[{i}].text must be a str, got {type(fields.get('text')).__name__}")
    return copy_json(content, what=where, inside=1)  # JSON data (ENT-2), copied (ENT-3), inside its message (ENT-13)


def _check_call(call: object, where: str) -> dict[str, Any]:
    fields = _fields(call, ("id", "type", "function"), where)
    call_id = _nonempty_str(fields.get("id"), f"{where}.id")
    kind = fields.get("type", "function")
    if not isinstance(kind, str) or str.__str__(kind) != "function":
        raise ValueError(f"{where}.type must be 'function', got {shown(kind)}")
    function = _fields(fields.get("function", {}), ("name", "arguments"), f"{where}.function")
    name = _nonempty_str(function.get("name"), f"{where}.function.name")
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        raise TypeError(f"{where}.function.arguments must be a str (JSON text), got {type(arguments).__name__}")
    return {
        "id": copy_json(call_id, what=f"{where}.id"),
        "type": "function",
        "function": {
            "name": copy_json(name, what=f"{where}.function.name"),
            "arguments": copy_json(arguments, what=f"{where}.function.arguments"),
        },
    }


def check_message(message: object, where: str = "message") -> dict[str, Any]:
    """One message checked field by field and copied into its stored form (MSG-5, MSG-6).

    Args:
        message: A dict in the chat-completions wire form.
        where: How errors name it, such as ``"messages[3]"``.

    Returns:
        A new dict: ``role`` and ``content`` always (``content`` None only on an assistant
        message with ``tool_calls``), then ``tool_calls``, ``tool_call_id`` and ``name`` when given.

    Raises:
        TypeError: A field of the wrong type; the message names ``where`` and the field.
        ValueError: A role outside ``ROLES``, an unknown field, an empty id or name, two calls
            with one id, ``tool_call_id`` missing on a tool message or given on another.

    Examples:
        >>> from sentinel_memory.core.chat import check_message
        >>> check_message({"role": "tool", "tool_call_id": "c1", "content": "4 °C"})
        {'role': 'tool', 'content': '4 °C', 'tool_call_id': 'c1'}
    """
    fields = _fields(message, FIELDS, where)
    if "role" not in fields:
        raise ValueError(f"{where}.role is missing")
    role = check_role(fields["role"], f"{where}.role")
    out: dict[str, Any] = {"role": role}
    calls = fields.get("tool_calls")
    if calls is not None and not isinstance(calls, list | tuple):
        raise TypeError(f"{where}.tool_calls must be a list, got {type(calls).__name__}")
    if calls is not None:
        calls = read_list(calls, f"{where}.tool_calls")  # the caller's own iteration, guarded (WRP-4)
    if calls and role != "assistant":
        raise ValueError(f"{where}.tool_calls: only an assistant message calls tools, not {role!r}")
    if "content" in fields:
        out["content"] = _check_content(fields["content"], f"{where}.content")
    elif calls:
        out["content"] = None
    else:
        raise ValueError(f"{where}.content is missing (only an assistant message with tool_calls may go without)")
    if calls:
        checked = [_check_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)]
        seen: set[str] = set()
        for i, call in enumerate(checked):
            if call["id"] in seen:
                raise ValueError(f"{where}.tool_calls[{i}].id: two calls with the id {shown(call['id'])}")
            seen.add(call["id"])
        out["tool_calls"] = checked
    if role == "tool":
        if "tool_call_id" not in fields:
            raise ValueError(f"{where}.tool_call_id is missing: a tool message answers a call by its id")
        out["tool_call_id"] = copy_json(
            _nonempty_str(fields["tool_call_id"], f"{where}.tool_call_id"), what=f"{where}.tool_call_id"
        )
    elif "tool_call_id" in fields:
        raise ValueError(f"{where}.tool_call_id: only a tool message answers a call, not {role!r}")
    if "name" in fields:
        out["name"] = copy_json(_nonempty_str(fields["name"], f"{where}.name"), what=f"{where}.name")
    return out


def check_messages(messages: object, open_calls: Iterable[str] | None) -> list[dict[str, Any]]:
    """A batch checked whole before anything is stored (MSG-6): each message, and each tool message's call.

    Args:
        messages: A list (or tuple) of messages.
        open_calls: The ids of the stored calls still unanswered when the newest stored turns
            are an assistant message with ``tool_calls`` and tool messages after it; None when
            a tool message may not come next.

    Returns:
        The messages in their stored form.

    Raises:
        TypeError, ValueError: As ``check_message``, naming ``messages[i]``.
        NoOpenCallError: A tool message's ``tool_call_id`` answers no open call (a ``ValueError``).

    Examples:
        >>> from sentinel_memory.core.chat import check_messages
        >>> check_messages([{"role": "tool", "tool_call_id": "c9", "content": "x"}], {"c1"})
        Traceback (most recent call last):
        ...
        sentinel_memory.core.errors.NoOpenCallError: messages[0].tool_call_id: 'c9' answers no open call (open: 'c1')
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, list | tuple):
        raise TypeError(f"messages must be a list of messages, got {type(messages).__name__}")
    pending = None if open_calls is None else set(open_calls)
    out = []
    for i, message in enumerate(read_list(messages, "messages")):
        where = f"messages[{i}]"
        checked = check_message(message, where)
        if checked["role"] == "tool":
            call_id = checked["tool_call_id"]
            if pending is None or call_id not in pending:
                shown_open = ", ".join(map(repr, sorted(pending))) if pending else "none"
                raise NoOpenCallError(
                    f"{where}.tool_call_id: {shown(call_id)} answers no open call (open: {shown_open})"
                )
            pending.discard(call_id)
        elif "tool_calls" in checked:
            pending = {call["id"] for call in checked["tool_calls"]}
        else:
            pending = None
        out.append(checked)
    return out


def request_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What makes ``messages`` a request a chat API refuses; empty when it is valid (MSG-8).

    The rules: every message is a valid message of a role in ``ROLES``; after
    the leading ``system``/``developer`` messages the first message is the
    user's; every tool message follows the assistant message whose
    ``tool_calls`` hold its id (only tool messages between), once; and every
    call is answered before the next message that is not a tool result; and
    there is at least one message (MSG-10: ``get_messages`` returns ``[]``
    when it has nothing to send, and a chat API refuses that).

    Args:
        messages: The messages of a request, dicts in the chat-completions form.

    Returns:
        One line per problem, naming the message; empty when the request is valid.

    Raises:
        TypeError: ``messages`` is a str, a dict or no iterable, or its own iteration raised.

    Examples:
        >>> from sentinel_memory.core.chat import request_problems
        >>> request_problems([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
        []
        >>> request_problems([{"role": "tool", "tool_call_id": "c1", "content": "4 °C"}])
        ['messages[0]: the first message after the system messages is from tool, not the user', "messages[0]: tool result 'c1' answers no open call"]
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of messages, got {type(messages).__name__}")
    listed = read_list(messages, "messages")
    if not listed:  # what get_messages returns with nothing to send (MSG-10)
        return [EMPTY_REQUEST]
    problems: list[str] = []
    pending: set[str] | None = None
    opened_at = -1
    started = False
    for i, message in enumerate(listed):
        try:
            checked = check_message(message, f"messages[{i}]")
        except (TypeError, ValueError) as error:
            problems.append(str(error))
            continue
        role = checked["role"]
        if not started and role not in ("system", "developer"):
            started = True
            if role != "user":
                problems.append(
                    f"messages[{i}]: the first message after the system messages is from {role}, not the user"
                )
        if role == "tool":
            if pending is None or checked["tool_call_id"] not in pending:
                problems.append(f"messages[{i}]: tool result {checked['tool_call_id']!r} answers no open call")
            else:
                pending.discard(checked["tool_call_id"])
            continue
        if pending:
            problems.append(f"messages[{opened_at}]: calls {sorted(pending)} are not answered")
        pending, opened_at = ({c["id"] for c in checked["tool_calls"]}, i) if "tool_calls" in checked else (None, i)
    if pending:
        problems.append(f"messages[{opened_at}]: calls {sorted(pending)} are not answered")
    return problems


def validate_request(messages: Sequence[Mapping[str, Any]]) -> None:
    """``ValueError`` listing ``request_problems(messages)`` when there are any (MSG-8).

    Args:
        messages: The messages of a request, dicts in the chat-completions form.

    Raises:
        ValueError: The request is not valid; the message lists every problem.
        TypeError: As ``request_problems``: ``messages`` cannot be read as a list.

    Examples:
        >>> from sentinel_memory.core.chat import validate_request
        >>> validate_request([{"role": "user", "content": "Hi"}])
    """
    problems = request_problems(messages)
    if problems:
        raise ValueError("not a valid chat request: " + "; ".join(problems))
