"""What a chat turn is, and the message it is (ENT-16, TXT-4, MSG-1).

A turn is an entry under a ``chat:N`` key (ASCII digits only) whose data
is a message, ``{"role": str, "content": str}``, as ``add_turn`` stores
it, or a string ``"role: content"``, as turns were stored before they kept
their structure. Everything else is a fact, whatever its key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .chat import is_stored_message
from .jsondata import as_message, clone

__all__ = [
    "LEGACY_ROLES",
    "MAX_TURN_DIGITS",
    "chat_message",
    "is_turn",
    "is_turn_key",
    "message_of",
    "resent_count",
    "turn_number",
]

#: ENT-16: the most digits the N of a ``chat:N`` turn key has; a longer run of digits is an ordinary key.
MAX_TURN_DIGITS = 4000

#: MSG-1: the roles a turn stored as one string ``"role: content"`` may have; "Reminder: buy milk" is no turn.
LEGACY_ROLES = frozenset({"user", "assistant", "system", "tool"})


def is_turn_key(key: str) -> bool:
    """``chat:N`` with N of ASCII digits only (ENT-16).

    Args:
        key: An entry's key.

    Returns:
        Whether the key is a turn's key.

    Examples:
        >>> from sentinel_memory.core.turns import is_turn_key
        >>> is_turn_key("chat:7"), is_turn_key("chat:seven"), is_turn_key("chat:")
        (True, False, False)
    """
    tail = key[5:]
    return key.startswith("chat:") and len(tail) <= MAX_TURN_DIGITS and tail.isascii() and tail.isdigit()


def turn_number(key: str) -> int:
    """The N of a ``chat:N`` key.

    Args:
        key: A key for which ``is_turn_key`` is True.

    Returns:
        N, an int (``chat:007`` is 7).

    Examples:
        >>> from sentinel_memory.core.turns import turn_number
        >>> turn_number("chat:007")
        7
    """
    return int(key[5:])


def message_of(data: Any) -> tuple[str, str] | None:
    """``(role, content)`` of a turn's data: a message, or a legacy ``"role: content"`` string; else None (MSG-1).

    Args:
        data: An entry's data.

    Returns:
        ``(role, content)``, or None when the data is no message.

    Examples:
        >>> from sentinel_memory.core.turns import message_of
        >>> message_of({"role": "user", "content": "Hi"}), message_of("assistant: Hello"), message_of(42)
        (('user', 'Hi'), ('assistant', 'Hello'), None)
    """
    message = as_message(data)
    if message is not None:
        return message
    if isinstance(data, str):
        role, found, content = data.partition(": ")
        if found and role in LEGACY_ROLES:
            return role, content
    return None


def chat_message(data: Any, *, owned: bool = False) -> dict[str, Any] | None:
    """A new dict of the message a turn's data is: the stored message itself, or ``role`` and ``content`` (MSG-1).

    Args:
        data: An entry's data.
        owned: ``data`` is the caller's own copy (from ``items()``, say): a stored message is returned
            as it is, not copied again. Defaults to False.

    Returns:
        The message (a new dict, or ``data`` itself when ``owned``), or None when the data is no message.

    Examples:
        >>> from sentinel_memory.core.turns import chat_message
        >>> chat_message("user: Hi"), chat_message({"role": "tool", "content": "4", "tool_call_id": "c1"})
        ({'role': 'user', 'content': 'Hi'}, {'role': 'tool', 'content': '4', 'tool_call_id': 'c1'})
    """
    if type(data) is dict:
        if len(data) == 2:
            role, content = data.get("role"), data.get("content")
            if type(role) is str and role and type(content) is str:
                return {"role": role, "content": content}  # the common turn, at once (TXT-4)
        if is_stored_message(data):
            message: dict[str, Any] = data if owned else clone(data)
            return message
    found = message_of(data)
    return None if found is None else {"role": found[0], "content": found[1]}


def is_turn(key: str, data: Any) -> bool:
    """An entry is a turn when its key is ``chat:N`` and its data is a message (MSG-1).

    Args:
        key: The entry's key.
        data: The entry's data.

    Returns:
        Whether the entry is a chat turn; every other entry is a fact.

    Examples:
        >>> from sentinel_memory.core.turns import is_turn
        >>> is_turn("chat:1", {"role": "user", "content": "Hi"}), is_turn("chat:1", 42)
        (True, False)
    """
    return is_turn_key(key) and message_of(data) is not None


def resent_count(stored: Sequence[Any], new: Sequence[Any]) -> int:
    """How many of the leading ``new`` messages are the ``stored`` conversation's newest, sent again (SRV-3).

    The largest ``k`` such that ``new[:k]`` equals the last ``k`` of
    ``stored``, message by message (equal as JSON): a client that sends its
    whole transcript, or the tail of it, with its new message. A message
    that only repeats an older one (the user saying "yes" twice) is new:
    what leads ``new`` must end exactly where ``stored`` ends.

    Args:
        stored: The stored conversation's messages, oldest first (its newest ones suffice).
        new: The messages about to be stored, oldest first.

    Returns:
        ``k``, 0 when ``new`` does not start with the end of ``stored``.

    Examples:
        >>> from sentinel_memory.core.turns import resent_count
        >>> q0, a0, q1 = ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
        ...               {"role": "user", "content": "Bye"})
        >>> resent_count([q0, a0], [q0, a0, q1]), resent_count([q0, a0], [q0]), resent_count([q0], [q0, a0])
        (2, 0, 1)
    """
    most = min(len(stored), len(new))
    for k in range(most, 0, -1):
        if new[k - 1] == stored[-1] and list(new[:k]) == list(stored[len(stored) - k :]):
            return k
    return 0
