"""Chat turns on the way in: ``add_turn`` and ``add_messages`` store messages under ``chat:N`` keys (ENT-16, MSG-5 .. MSG-7).

``open_calls`` names the tool calls still waiting for their results, which a
tool message must answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .basics import _check_now
from .chat import ROLES, check_messages, check_role
from .entries import remember, remember_owned
from .expiry import is_past
from .options import Duration, number_option
from .state import MemoryState
from .turns import chat_message
from .values import (
    Compaction,
)

#: ENT-16: the keys chat turns are stored under, ``chat:1``, ``chat:2``, ...
TURN_KEY = re.compile(r"chat:([0-9]+)")


def add_turn(
    state: MemoryState,
    role: str,
    text: str,
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction, str]:
    """Remember one chat turn as the message ``{"role": role, "content": text}`` under the next ``chat:N`` key (ENT-16).

    N is one more than the largest ``chat:N`` this memory has stored or
    loaded, so turns keep counting after a restart without a key being
    invented or a counter kept by the app. A turn's importance defaults to
    0.3, below a fact's 0.5. Its line in a context reads ``chat:N: role:
    text`` (TXT-4).

    Args:
        state: The memory state to change; it is not modified.
        role: Who spoke: ``"system"``, ``"developer"``, ``"user"`` or ``"assistant"`` (MSG-5).
        text: What was said, a str.
        now: The current time, milliseconds since the epoch (a finite number).
        importance: A number in [0, 1]. Defaults to None (0.3).
        ttl: How long the turn lives, in milliseconds or a ``timedelta``. Defaults to None (no expiry).

    Returns:
        ``(state, compaction, key)``, the new state, what the remember dropped, and the key used.

    Raises:
        TypeError: ``role`` or ``text`` is not a str, or ``now`` is not a finite number.
        ValueError: ``role`` is not a chat role, or is ``"tool"`` (a result needs ``add_messages``).

    Examples:
        >>> state, dropped, key = core.add_turn(MemoryState(), "user", "Hi!", now=1000)
        >>> key, core.get(state, key, now=1000)
        ('chat:1', {'role': 'user', 'content': 'Hi!'})
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if check_role(role) == "tool":
        raise ValueError("a tool result answers a call by its id: use add_message with a tool_call_id (MSG-5)")
    state, dropped, key = _add_message(state, {"role": role, "content": text}, now=now, importance=importance, ttl=ttl)
    return state, dropped, key


def _add_message(
    state: MemoryState,
    message: dict[str, Any],
    *,
    now: int | float,
    importance: float | None,
    ttl: Duration | None,
    owned: bool = False,
) -> tuple[MemoryState, Compaction, str]:
    """Remember a message under the next ``chat:N`` key (ENT-16); ``owned``: it is ``check_messages``' own new copy."""
    number = state.turns + 1
    while f"chat:{number}" in state.entries:  # a state built by hand may hold turns past its counter
        number += 1
    key = f"chat:{number}"
    weight = number_option("turn_importance", importance)
    store = remember_owned if owned else remember
    state, dropped = store(state, key, message, now=now, importance=weight, ttl=ttl)
    return state, dropped, key


def add_messages(
    state: MemoryState,
    messages: Sequence[Mapping[str, Any]],
    *,
    now: int | float,
    importance: float | None = None,
    ttl: Duration | None = None,
) -> tuple[MemoryState, Compaction, tuple[str, ...]]:
    """Remember chat messages in the wire form as turns, in order, all or nothing (MSG-5, MSG-6).

    Every message is checked before any is stored: its fields (MSG-5) and,
    for a tool message, that its ``tool_call_id`` answers an open call of the
    assistant message before it, earlier in the batch or the newest stored
    turns (``open_calls``). Each is then remembered as ``add_turn``
    remembers, under the next ``chat:N``.

    Args:
        state: The memory state to change; it is not modified.
        messages: A list of messages: ``role``, ``content`` and, as the chat API has them,
            ``tool_calls``, ``tool_call_id`` and ``name``.
        now: The current time, milliseconds since the epoch (a finite number).
        importance: A number in [0, 1] for every message. Defaults to None (0.3).
        ttl: How long each turn lives. Defaults to None (no expiry).

    Returns:
        The new state, what the remembers dropped (a ``Compaction``) and the keys used, as a tuple.

    Raises:
        TypeError, ValueError: A message or field is bad; the error names ``messages[i]`` and
            the field, and nothing is stored.

    Examples:
        >>> call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        >>> state, _, keys = core.add_messages(
        ...     MemoryState(),
        ...     [{"role": "assistant", "content": None, "tool_calls": [call]},
        ...      {"role": "tool", "tool_call_id": "c1", "content": "4 °C"}],
        ...     now=1000,
        ... )
        >>> keys, core.context(state, now=1000, token_budget=50).text.splitlines()
        (('chat:1', 'chat:2'), ['chat:1: assistant: weather({})', 'chat:2: tool: 4 °C'])
    """
    _check_now(now)
    checked = check_messages(messages, open_calls(state, now=now))
    total = Compaction()
    keys = []
    for message in checked:
        # The checked messages are new copies no one else holds: stored as they are, not copied again (ENT-3).
        state, dropped, key = _add_message(state, message, now=now, importance=importance, ttl=ttl, owned=True)
        total += dropped
        keys.append(key)
    return state, total, tuple(keys)


def open_calls(state: MemoryState, *, now: int | float) -> frozenset[str] | None:
    """The ids of calls a tool message may answer next: the calls ``get_messages`` would find pending (MSG-6, MSG-7).

    The newest live turn that a request would send and that is not a tool
    message decides: when it is an assistant message with ``tool_calls``,
    the ids it called that no live tool message after it answers; otherwise
    None (a tool message may not come next). A turn a request never sends
    (expired, forgotten or evicted, of a role outside ``ROLES``, a tool turn
    stored without a ``tool_call_id``) neither answers nor closes a call, as
    ``get_messages`` leaves it out and keeps the unit around it whole.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch.

    Returns:
        A frozenset of call ids (empty when all are answered), or None.

    Examples:
        >>> state, _, _ = core.add_turn(MemoryState(), "user", "Hi", now=1000)
        >>> core.open_calls(state, now=1000) is None
        True
    """
    answered: set[str] = set()
    for item in reversed(state.index.split().turns):  # newest first, as get_messages walks them
        entry = item[-1]
        if is_past(entry.expires_at, now):
            continue
        message = chat_message(entry.data, owned=True)  # read only
        assert message is not None  # every turn is a message (MSG-1)
        role = message["role"]
        if role not in ROLES:
            continue
        if role == "tool":
            if "tool_call_id" in message:
                answered.add(message["tool_call_id"])
            continue
        calls = {call["id"] for call in message.get("tool_calls", ())}
        return frozenset(calls - answered) if calls else None
    return None
