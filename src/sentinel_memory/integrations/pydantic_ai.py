"""A pydantic-ai message history kept in a memory, within a token budget (PAI-1 .. PAI-6); the extra ``[pydantic-ai]``.

``SentinelHistory(memory, token_budget)`` is a pydantic-ai capability: give
it to ``Agent(capabilities=[...])`` and before each model request it stores
the run's new messages in the memory as chat turns, exactly once, and gives
the model the memory's budgeted history instead of the run's own: the app's
system prompt and the facts that fit (the must-keep ones always), then the
newest whole tool-call units from a user message on (MSG-2 .. MSG-9). So a
conversation of any length costs at most ``token_budget`` tokens of
messages per request, survives a restart (the next run of a new history over
the same memory carries on), and every request a chat API receives is valid.

Each pydantic-ai message is kept whole (INT-1): its JSON by pydantic-ai's own
``ModelMessagesTypeAdapter`` rides in its turns' content parts, beside the
text the budget counts, and comes back equal to the original after that JSON
round trip: thinking parts, images by URL, files as base64 included.

The package itself never imports this module, so ``import sentinel_memory``
never needs pydantic-ai (PAI-6, DEP-1); importing this module without
``pydantic-ai-slim`` raises an ``ImportError`` that names the extra.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import datetime
import enum
import functools
import hashlib
import itertools
import json
import operator
import os
import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, cast

from ..core.chat import check_message
from ..core.options import Duration
from ..core.shown import shown
from ..core.tokens import TokenizerLike
from ..core.turns import chat_message, is_turn_key, turn_number
from ..folder import MemoryFolder
from ..memory import Memory
from ..serving import (
    ADAPTER_CUT,
    ADAPTER_KEEP_RESULTS,
    ADAPTER_LOW_MARK,
    UserMemories,
    check_reserve,
    current,
    held,
    is_memories,
    request_options,
    shared_request,
    unseen,
)

try:
    import anyio
    import anyio.to_thread
    from pydantic import TypeAdapter
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import (
        CompactionPart,
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        RetryFeedbackPart,
        RetryPromptPart,
        SystemPromptPart,
        TextContent,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as error:  # pragma: no cover - exercised by a test that hides pydantic-ai
    raise ImportError(
        "sentinel_memory.integrations.pydantic_ai needs pydantic-ai; install it with: "
        "pip install 'sentinel-memory[pydantic-ai]'"
    ) from error

__all__ = ["PART_TYPE", "SentinelHistory", "messages_from_turns", "turns_from_messages"]

#: PAI-2: the ``type`` of the content part that carries a pydantic-ai message's JSON in its turns.
PART_TYPE = "pydantic-ai"

_ANY_PART: TypeAdapter[Any] = TypeAdapter(Any)

#: PAI-10: the keys of the turns the current run stored, by memory, forgotten when the run fails.
_RUN: ContextVar[list[tuple[Memory, str]] | None] = ContextVar("sentinel_memory_pydantic_ai_run", default=None)

#: PAI-1: how many known messages a history keeps references to before it drops those of messages gone.
KNOWN_LEAST = 1024

#: PAI-10: how long a run waits between looks at a busy memory's run lock, in seconds.
RUN_LOCK_POLL = 0.002
_TURN_PLACE = re.compile(r"messages\[(\d+)\]")


#: PAI-2: the request parts that speak to the model (a question, a system prompt, a retry's feedback, a summary).
_SPEAKING = (UserPromptPart, SystemPromptPart, RetryFeedbackPart, RetryPromptPart, CompactionPart)


def _is_answer(part: Any) -> bool:
    """A request part that answers a tool call: a tool's return, or a retry prompt sent back for a call."""
    return isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None)


def _texts(part: Any) -> list[str]:
    """The text a request or response part shows the model, as PAI-2 counts it."""
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return [part.content]
        return [
            item if isinstance(item, str) else item.content
            for item in part.content
            if isinstance(item, str | TextContent)
        ]
    if isinstance(part, ToolReturnPart):
        return [part.model_response_str()]
    if isinstance(part, RetryPromptPart | RetryFeedbackPart):
        return [part.model_response()]
    content = getattr(part, "content", None)
    return [content] if isinstance(content, str) else []


def _dump(message: Any, where: str) -> dict[str, Any]:
    """A message's JSON by pydantic-ai's own serializer, or ``TypeError`` naming the part that has none (INT-1)."""
    try:
        dumped: dict[str, Any] = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    except Exception as error:  # pydantic's serialization errors have no common public base
        for j, part in enumerate(message.parts):
            try:
                _ANY_PART.dump_python(part, mode="json")
            except Exception:
                raise TypeError(
                    f"{where}.parts[{j}] (a {type(part).__name__}) has no JSON form and cannot be kept: "
                    "give the part JSON data (text, numbers, lists, dicts, a pydantic model, a dataclass), "
                    "or a file as BinaryContent or by URL"
                ) from error
        raise TypeError(f"{where} (a {type(message).__name__}) has no JSON form and cannot be kept: {error}") from error
    return dumped


def _turn(
    role: str,
    texts: list[str],
    head: dict[str, Any],
    parts: list[dict[str, Any]],
    at: list[int],
    **fields: Any,
) -> dict[str, Any]:
    carried = {"type": PART_TYPE, "message": {**head, "parts": parts}, "at": at}
    content = [{"type": "text", "text": text} for text in texts if text] + [carried]
    return {"role": role, "content": content, **fields}


def turns_from_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The chat-completions turns pydantic-ai messages are stored as, each message whole (PAI-2, INT-1).

    A ``ModelResponse`` is one ``assistant`` turn: its text parts as text,
    its ``ToolCallPart`` s as ``tool_calls`` (the arguments as JSON text).
    A ``ModelRequest`` is one ``tool`` turn per part that answers a call (a
    ``ToolReturnPart``, a retry prompt for a call), in order, and one more
    turn for its other parts: ``system`` when they are all
    ``SystemPromptPart`` s, else ``user``, their text as text parts; when the
    request answers calls and none of its other parts speaks (only
    pydantic-ai's own records), they ride in the last ``tool`` turn. Every
    turn also carries a content part ``{"type": "pydantic-ai", "message":
    ..., "at": [...], "turn": [k, n, id]}``: the message's JSON by
    ``ModelMessagesTypeAdapter`` with the parts of that turn, their places in
    the message, and the turn's place among the message's turns with the
    message's id (a digest of its JSON), so the message comes back whole
    (``messages_from_turns``).

    Args:
        messages: ``ModelRequest`` and ``ModelResponse`` objects, oldest first.

    Returns:
        A new list of chat-completions messages (MSG-5), checked field by field.

    Raises:
        TypeError: An item that is not a ``ModelRequest`` or ``ModelResponse``, or a part with no
            JSON form; the error names ``messages[i]`` (and ``.parts[j]``) and what to pass instead.
        ValueError: A turn the chat form refuses (an empty or repeated tool call id), named as
            ``messages[i]``.

    Examples:
        >>> from pydantic_ai.messages import ModelRequest, UserPromptPart
        >>> from sentinel_memory.integrations.pydantic_ai import turns_from_messages
        >>> [turn] = turns_from_messages([ModelRequest(parts=[UserPromptPart("Any nuts?")])])
        >>> turn["role"], turn["content"][0], turn["content"][1]["type"]
        ('user', {'type': 'text', 'text': 'Any nuts?'}, 'pydantic-ai')
    """
    if not isinstance(messages, list | tuple):
        raise TypeError(f"messages must be a list of pydantic-ai messages, got {shown(messages)}")
    turns, origins = _turns(list(enumerate(messages)))
    _check_turns(turns, origins)
    return turns


def _check_turns(turns: list[dict[str, Any]], origins: list[str]) -> None:
    """Each turn checked as the chat form checks it (MSG-5), the first it refuses named by the message it came from."""
    for turn, origin in zip(turns, origins, strict=True):
        try:
            check_message(turn, origin)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{error}; this pydantic-ai message cannot be kept as a chat turn") from None


def _turns(numbered: list[tuple[int, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The turns of the messages (PAI-2), unchecked, each named by its place in the caller's list, and each turn's origin.

    They are checked by the memory that stores them (``record``), or by
    ``_check_turns`` (``turns_from_messages``): not twice.
    """
    turns: list[dict[str, Any]] = []
    origins: list[str] = []
    for i, message in numbered:
        where = f"messages[{i}]"
        if not isinstance(message, ModelRequest | ModelResponse):
            raise TypeError(
                f"{where} must be a pydantic-ai ModelRequest or ModelResponse, got {shown(message)}: "
                "pass the messages of a run (result.all_messages()) or ModelMessagesTypeAdapter.validate_json(...)"
            )
        head = _dump(message, where)
        parts = head.pop("parts")
        made: list[dict[str, Any]] = []
        if isinstance(message, ModelResponse):
            calls = [
                {
                    "id": part.tool_call_id,
                    "type": "function",
                    "function": {"name": part.tool_name, "arguments": part.args_as_json_str()},
                }
                for part in message.parts
                if isinstance(part, ToolCallPart)
            ]
            texts = [part.content for part in message.parts if isinstance(part, TextPart)]
            extra = {"tool_calls": calls} if calls else {}
            made.append(_turn("assistant", texts, head, parts, list(range(len(parts))), **extra))
        else:
            request_parts: list[Any] = list(message.parts)
            rest = [j for j, part in enumerate(request_parts) if not _is_answer(part)]
            for j, part in enumerate(request_parts):
                if _is_answer(part):
                    made.append(_turn("tool", _texts(part), head, [parts[j]], [j], tool_call_id=part.tool_call_id))
            speaks = any(isinstance(request_parts[j], _SPEAKING) for j in rest)
            if made and rest and not speaks:
                last = made[-1]["content"][-1]
                at = sorted(last["at"] + rest)
                last["message"]["parts"] = [parts[j] for j in at]
                last["at"] = at
                made[-1]["content"][-1:-1] = [
                    {"type": "text", "text": text} for j in rest for text in _texts(message.parts[j]) if text
                ]
            elif rest or not made:
                every_system = bool(rest) and all(isinstance(message.parts[j], SystemPromptPart) for j in rest)
                texts = [text for j in rest for text in _texts(message.parts[j])]
                made.append(_turn("system" if every_system else "user", texts, head, [parts[j] for j in rest], rest))
        # PAI-2: which message a turn belongs to, so turns of two equal-looking messages never merge.
        digest = hashlib.sha256(json.dumps([head, parts], sort_keys=True).encode()).hexdigest()[:16]
        for k, turn in enumerate(made):
            turn["content"][-1]["turn"] = [k, len(made), digest]
            origins.append(f"{where} (a {type(message).__name__}), its chat turn {k}")
        turns.extend(made)
    return turns, origins


def _carried(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, list) and content:
        last = content[-1]
        if isinstance(last, dict) and last.get("type") == PART_TYPE and isinstance(last.get("message"), dict):
            return last
    return None


def _plain_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if part.get("type") == "text")
    return ""


def _foreign(message: dict[str, Any], names: dict[str, str]) -> ModelMessage:
    """A turn another writer stored (no pydantic-ai JSON) as the pydantic-ai message it reads as (PAI-3)."""
    role, text = message["role"], _plain_text(message)
    if role == "assistant":
        response_parts: list[Any] = [TextPart(text)] if text else []
        for call in message.get("tool_calls", ()):
            names[call["id"]] = call["function"]["name"]
            response_parts.append(
                ToolCallPart(call["function"]["name"], call["function"]["arguments"], tool_call_id=call["id"])
            )
        return ModelResponse(parts=response_parts)
    if role == "tool":
        call_id = message["tool_call_id"]
        return ModelRequest(parts=[ToolReturnPart(names.get(call_id, "tool"), text, tool_call_id=call_id)])
    if role in ("system", "developer"):
        return ModelRequest(parts=[SystemPromptPart(text)])
    return ModelRequest(parts=[UserPromptPart(text)])


def messages_from_turns(turns: Sequence[dict[str, Any]]) -> list[ModelMessage]:
    """The pydantic-ai messages chat turns read back as (PAI-3): each stored message whole, as it came.

    Consecutive turns of one stored message (the same id in ``"turn": [k, n, id]``,
    ``k`` counting on by one) become that message again, its parts
    in their places; when all its turns are there it equals the original
    after pydantic-ai's JSON round trip (INT-1). A turn without the
    ``pydantic-ai`` part (stored by another adapter or ``add_message``) reads
    as a ``ModelRequest`` of a ``UserPromptPart`` (``user``), a
    ``SystemPromptPart`` (``system``, ``developer``) or a ``ToolReturnPart``
    (``tool``, named after its call), or a ``ModelResponse`` of its text and
    ``ToolCallPart`` s (``assistant``).

    Args:
        turns: Chat-completions messages, oldest first, such as ``memory.get_messages(...).messages``.

    Returns:
        A new list of new pydantic-ai messages.

    Examples:
        >>> from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart, UserPromptPart
        >>> from sentinel_memory.integrations.pydantic_ai import messages_from_turns, turns_from_messages
        >>> said = [ModelRequest(parts=[UserPromptPart("Hi")]), ModelResponse(parts=[ThinkingPart("greet"), TextPart("Hello!")])]
        >>> [type(m).__name__ for m in messages_from_turns(turns_from_messages(said))]
        ['ModelRequest', 'ModelResponse']
        >>> messages_from_turns([{"role": "user", "content": "Hi"}])[0].parts[0].content
        'Hi'
    """
    return _read(turns)


#: PAI-12: a group of turns read into one message, by the identities of its turns' data, and what copies the
#: message (None for a turn read alone, without the pydantic-ai part: read anew each time).
_Slot = tuple[tuple[int, ...], Callable[[], Any] | None]


class _Seen:
    """PAI-12: a memory's last view as read: its turns' data (held, so no other data takes their ids) and its slots.

    The slots are the groups of turns in order, each with the copier of its
    validated message; ``offsets`` says where each starts among the turns,
    ``starts`` which slot a turn starts, and ``alone`` which slots are turns
    read alone. It is never changed: the next view makes a new one.
    """

    __slots__ = ("alone", "offsets", "slots", "starts", "turns")

    def __init__(self, turns: tuple[dict[str, Any], ...], slots: list[_Slot]) -> None:
        self.turns, self.slots = turns, slots
        keys = list(map(_FIRST, slots))
        self.offsets = [0, *itertools.accumulate(map(len, keys))]
        self.starts = dict(zip(map(_FIRST, keys), itertools.count()))
        self.alone = list(itertools.compress(itertools.count(), map(operator.is_, map(_COPIER, slots), _NONE)))


#: A slot's key, and a key's first turn id; a slot's copier.
_FIRST, _COPIER = operator.itemgetter(0), operator.itemgetter(1)
_NONE = itertools.repeat(None)
_NOTHING = _Seen((), [])


def _grouped(turns: Sequence[dict[str, Any]]) -> list[Any]:
    """The turns' slots (PAI-3): (the message read from a turn without the part, the turn), or a group [its carried parts, k, id, turns]."""
    slots: list[Any] = []
    names: dict[str, str] = {}
    group: list[Any] | None = None
    # The names of the calls a foreign tool turn answers, gathered only when there is one (PAI-3).
    naming = any(message["role"] == "tool" and _carried(message) is None for message in turns)
    for message in turns:
        carried = _carried(message)
        if carried is None:
            slots.append((_foreign(message, names), message))
            group = None
            continue
        place = carried.get("turn", [0, 1, ""])
        if group is not None and place[0] == group[1] + 1 and group[2] == place[2]:
            group[1] = place[0]
            group[0].append(carried)
            group[3].append(message)
        else:
            group = [[carried], place[0], place[2], [message]]
            slots.append(group)
        if naming:
            for part in carried["message"]["parts"]:
                if isinstance(part, dict) and part.get("part_kind") == "tool-call":
                    names[part["tool_call_id"]] = part["tool_name"]
    return slots


def _read(turns: Sequence[dict[str, Any]]) -> list[ModelMessage]:
    """``messages_from_turns``: every group validated, in one validation (a request's view is hundreds of messages)."""
    slots = _grouped(turns)
    rebuilt = iter(ModelMessagesTypeAdapter.validate_python([_whole(slot[0]) for slot in slots if type(slot) is list]))
    return [next(rebuilt) if type(slot) is list else slot[0] for slot in slots]


def _read_seen(turns: Sequence[dict[str, Any]], seen: _Seen) -> tuple[list[ModelMessage], _Seen]:
    """``messages_from_turns`` of the memory's own turns, each group validated once across views (PAI-12).

    The turns that start with a run of the last view's turns, one by one the
    same data, take that run's slots as they were, up to the last slot that
    ends before the first turn that differs (a slot ending right before a
    new turn may gain it) and before the first turn read alone (its call's
    name comes from the turns before it). The rest are grouped here; a group
    of turns the last view read is found by its turns' identities, the
    others are validated together. What is returned is a new copy of every
    message, with the view to keep for the next call.
    """
    reused: list[_Slot] = []
    start = at = end = 0
    before = seen.turns
    found = seen.starts.get(id(turns[0])) if turns else None
    if found is not None:
        at = found
        first = seen.offsets[at]
        same = min(len(turns), len(before) - first)
        alike = list(map(operator.is_, turns[:same], before[first : first + same]))
        if False in alike:
            same = alike.index(False)
        limit = first + same if same == len(turns) else first + same - 1  # the ends a reused slot may have
        end = bisect.bisect_right(seen.offsets, limit) - 1
        lone = bisect.bisect_left(seen.alone, at)
        if lone < len(seen.alone):
            end = min(end, seen.alone[lone])
        if end > at:
            reused, start = seen.slots[at:end], seen.offsets[end] - first
    rest = turns[start:]
    if start and any(message["role"] == "tool" and _carried(message) is None for message in rest):
        reused, rest = [], turns  # a foreign result's call may be named in the run: read every turn
    # The groups the rest may meet again, by their turns' ids: a kept slot holds its turns, so no other data can
    # take their ids meanwhile; a reused one's turns are not among the rest.
    known = dict(itertools.chain(seen.slots[:at], seen.slots[end:])) if reused else dict(seen.slots)
    slots = _grouped(rest)
    made: list[_Slot] = []
    new = []
    for slot in slots:
        if type(slot) is not list:
            continue
        held = slot[3]
        key = (id(held[0]),) if len(held) == 1 else tuple(map(id, held))
        copier = known.get(key)
        if copier is None:
            new.append((key, slot))
        slot.append(key)
        slot.append(copier)
    if new:  # one validation for every group not met before
        validated = ModelMessagesTypeAdapter.validate_python([_whole(slot[0]) for _, slot in new])
        for (_, slot), message in zip(new, validated, strict=True):
            slot[5] = _copier(message)
    out = [copier() for _, copier in reused]  # type: ignore[misc]  # a reused slot is never one read alone
    for slot in slots:
        if type(slot) is list:
            made.append((slot[4], slot[5]))
            out.append(slot[5]())
        else:
            made.append(((id(slot[1]),), None))
            out.append(slot[0])
    return out, _Seen(tuple(turns), reused + made)


def _whole(carried: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of one stored message from its turns' carried parts, each part in its place (PAI-3)."""
    placed: dict[int, Any] = {}
    for one in carried:
        for j, part in zip(one["at"], one["message"]["parts"], strict=True):
            placed[j] = part
    head = {key: value for key, value in carried[0]["message"].items() if key != "parts"}
    return {**head, "parts": [placed[j] for j in sorted(placed)]}


#: PAI-12: values a copy shares: they never change.
_IMMUTABLE = frozenset((str, int, float, bool, type(None), bytes, datetime.datetime, datetime.date, datetime.timedelta))
#: PAI-12: whether a type is a dataclass whose fields are its ``__dict__``, copied field by field.
_PLAIN: dict[type, bool] = {}


def _copier(value: Any) -> Callable[[], Any]:
    """What makes a new copy of ``value`` each call, as deep as it can change: dataclasses, lists, dicts (PAI-12).

    The parts that never change (str, numbers, None, times, enums) are
    shared; the rest is found once, here, so each copy only rebuilds them.
    """
    kind = type(value)
    if kind in _IMMUTABLE:
        return lambda: value
    if kind is list:
        items = [_copier(item) for item in value]
        if len(items) == 1:  # a message of one part, the most common
            only = items[0]
            return lambda: [only()]
        return lambda: [make() for make in items]
    if kind is dict:
        pairs = [(key, _copier(item)) for key, item in value.items()]
        return lambda: {key: make() for key, make in pairs}
    plain = _PLAIN.get(kind)
    if plain is None:
        plain = _PLAIN[kind] = dataclasses.is_dataclass(kind) and "__slots__" not in kind.__dict__
    if not plain:
        if isinstance(value, enum.Enum):
            return lambda: value
        return lambda: copy.deepcopy(value)
    fields = dict(value.__dict__)
    changing = [(name, _copier(item)) for name, item in fields.items() if type(item) not in _IMMUTABLE]

    new = object.__new__

    def made() -> Any:
        copied = new(kind)
        held = copied.__dict__
        held.update(fields)
        for name, make in changing:
            held[name] = make()
        return copied

    def made_flat() -> Any:  # a dataclass of values that never change: its fields are shared as they are
        copied = new(kind)
        copied.__dict__.update(fields)
        return copied

    return made if changing else made_flat


def _forget_run(stored: Sequence[tuple[Memory, str]]) -> None:
    """PAI-10: forget the turns a failed run stored, each memory's in one transaction."""
    memories: dict[int, tuple[Memory, list[str]]] = {}
    for memory, key in stored:
        memories.setdefault(id(memory), (memory, []))[1].append(key)
    for memory, keys in memories.values():
        with held(memory):
            for key in keys:
                memory.forget(key)


def _question(messages: Sequence[Any]) -> str | None:
    """The newest user prompt's text among the messages, the query the facts are ranked by (PAI-4)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return "\n".join(_texts(part))
    return None


class SentinelHistory(AbstractCapability[Any]):
    """A pydantic-ai capability whose model requests read a memory's budgeted history (PAI-1 .. PAI-5).

    Before each model request it stores the run's messages it has not seen
    (``record``) and replaces the request's messages with the memory's
    budgeted view (``view``); after the run it stores the run's last
    messages (the final answer). The run's own history
    (``result.all_messages()``) is left as pydantic-ai made it.

    One agent serves many users when ``memory`` is a ``MemoryFolder`` (or a
    ``RedisMemories``): each run's memory is the folder's memory of the
    user its deps name (PAI-7): ``user(deps)`` when ``user`` is given, else
    the deps' ``user_id`` (a dict key or an attribute), else the deps
    themselves when they are a str. History the app sends again with
    ``message_history`` (read back from its own JSON, say) is recognised by
    its place and stored once (PAI-8, SRV-3).

    Args:
        memory: The ``Memory`` that holds the conversation (and whatever facts it holds), or a
            ``MemoryFolder`` / ``RedisMemories`` whose memory of each run's user is used (PAI-7).
        token_budget: The most tokens each request's messages may count (MSG-3).
        tokenizer: Counts tokens, as for ``get_messages``. None, the default, means the memory's.
        must_keep: Facts of at least this importance are in every request. Defaults to None.
        facts_share: The share of the budget kept for facts. None, the default, means 0.5.
        system: The app's own system prompt, first in every request. Defaults to None.
        importance: The importance of the turns stored, in [0, 1]. None, the default, means 0.3.
        ttl: How long the turns stored live. Defaults to None (for good).
        user: With a folder, the user id of a run from its deps (PAI-7). Defaults to None: the
            deps' ``user_id``, or the deps when they are a str.
        reserve: Tokens kept out of ``token_budget`` for what pydantic-ai sends beside the messages:
            the agent's ``instructions`` and the tools' definitions (PAI-11). Defaults to 0.
        cut: How each request's history is cut (MSG-11): ``"stable"``, the default, only at marks, so
            consecutive requests share their start and a model API's prompt cache serves it; None or
            ``"newest"`` fills it newest first (INT-2).
        low_mark: With the stable cut, about the share of the budget a request fills right after a cut.
            Defaults to 0.5 (``ADAPTER_LOW_MARK``, INT-2).
        facts_at: Where the facts go: ``"system"`` (None, the default), ``"end"`` or ``"start"`` (MSG-12).
        keep_results: Clear the tool results of all but the newest ``keep_results`` turns before any turn
            is left out (MSG-15). Defaults to None (``ADAPTER_KEEP_RESULTS``, INT-2): none cleared.
        exclude_tools: Names of tools whose results are never cleared (MSG-16).

    Raises:
        TypeError: ``memory`` is not a ``Memory``, a ``MemoryFolder`` or a ``RedisMemories``; or
            ``user`` is given with a single memory.

    Examples:
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from sentinel_memory.integrations.pydantic_ai import SentinelHistory
        >>> history = SentinelHistory(mem, token_budget=500, system="You are a waiter.")
        >>> agent = Agent(TestModel(custom_output_text="No nuts."), capabilities=[history])
        >>> agent.run_sync("Any nuts in the risotto?").output
        'No nuts.'
        >>> [m["role"] for m in mem.get_messages(token_budget=500).messages]
        ['user', 'assistant']
    """

    def __init__(
        self,
        memory: Memory | MemoryFolder | Any,
        token_budget: int | float,
        *,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        system: str | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        user: Callable[[Any], str] | None = None,
        reserve: int | float = 0,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = ADAPTER_KEEP_RESULTS,
        exclude_tools: Sequence[str] | None = None,
    ) -> None:
        self._reserve = check_reserve(reserve, token_budget)
        self._options = request_options(
            cut=cut, low_mark=low_mark, facts_at=facts_at, keep_results=keep_results, exclude_tools=exclude_tools
        )
        self._users: UserMemories | None = None
        if is_memories(memory):
            self._users = UserMemories(memory)
        elif not isinstance(memory, Memory):
            raise TypeError(
                "memory must be a Memory (create_memory()) or a MemoryFolder / RedisMemories for one agent "
                f"of many users, got {shown(memory)}"
            )
        elif user is not None:
            raise TypeError("user= picks each run's memory from a folder; this history has one memory")
        self._memory = memory
        self._user = user
        self._budget = token_budget
        self._tokenizer = tokenizer
        self._must_keep = must_keep
        self._facts_share = facts_share
        self._system = system
        self._importance = importance
        self._ttl = ttl
        # PAI-1: the messages already stored or given out, by identity, so each is stored once;
        # weak, so a finished run's messages are not kept alive by the history.
        self._known: dict[int, weakref.ref[Any]] = {}
        self._prune_at = KNOWN_LEAST  # PAI-1: the size at which the references to messages gone are dropped
        self._lock = threading.Lock()
        # PAI-10: one run at a time per memory; a lock lives while its memory does.
        self._run_locks: weakref.WeakKeyDictionary[Memory, threading.Lock] = weakref.WeakKeyDictionary()
        # PAI-12: each memory's last request, validated, by the identities of its turns' data.
        self._read_known: weakref.WeakKeyDictionary[Memory, _Seen] = weakref.WeakKeyDictionary()

    @classmethod
    def from_folder(
        cls,
        folder: MemoryFolder | str | os.PathLike[str],
        user_id: str,
        token_budget: int | float,
        *,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        system: str | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = ADAPTER_KEEP_RESULTS,
        exclude_tools: Sequence[str] | None = None,
        **options: Any,
    ) -> SentinelHistory:
        """The history of ``user_id``'s memory in a folder, ``MemoryFolder(folder).open(user_id, **options)`` (FLD-2, PAI-5).

        Args:
            folder: A ``MemoryFolder``, or the path of one.
            user_id: Whose conversation: any str (FLD-1).
            token_budget: As for the constructor.
            tokenizer: As for the constructor.
            must_keep: As for the constructor.
            facts_share: As for the constructor.
            system: As for the constructor.
            importance: As for the constructor.
            ttl: As for the constructor.
            cut: As for the constructor.
            low_mark: As for the constructor.
            facts_at: As for the constructor.
            keep_results: As for the constructor.
            exclude_tools: As for the constructor.
            **options: More options for the memory, as ``MemoryFolder.open`` takes them.

        Returns:
            A new history over that memory.
        """
        if not isinstance(folder, MemoryFolder):
            folder = MemoryFolder(folder)
        return cls(
            folder.open(user_id, **options),
            token_budget,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            system=system,
            importance=importance,
            ttl=ttl,
            cut=cut,
            low_mark=low_mark,
            facts_at=facts_at,
            keep_results=keep_results,
            exclude_tools=exclude_tools,
        )

    @property
    def memory(self) -> Memory:
        """The memory that holds the conversation.

        Raises:
            TypeError: The history serves many users: use ``memory_for(deps)``.
        """
        if self._users is not None:
            raise TypeError("this history serves a folder's users: memory_for(deps) is a run's memory")
        return cast("Memory", self._memory)

    def memory_for(self, deps: Any) -> Memory:
        """The memory of a run with these deps: the one memory given, or the folder's memory of its user (PAI-7).

        Args:
            deps: The run's deps (``agent.run(..., deps=...)``).

        Returns:
            The run's ``Memory``.

        Raises:
            ValueError: The history serves a folder's users and the deps name none.
        """
        if self._users is None:
            return cast("Memory", self._memory)
        if self._user is not None:
            found: object = self._user(deps)
        elif isinstance(deps, str):
            found = deps
        else:
            found = deps.get("user_id") if isinstance(deps, Mapping) else getattr(deps, "user_id", None)
        if not isinstance(found, str) or not found:
            raise ValueError(
                f"this history serves a folder's users, and the run's deps name none (got {shown(found)}): run with "
                "deps={'user_id': ...} (or deps with a user_id attribute, or a str), or give user="
            )
        return self._users.get(found)

    def __repr__(self) -> str:
        return f"SentinelHistory({self._memory!r}, token_budget={self._budget!r})"

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """None: the capability holds a memory, so an agent spec (YAML, JSON) cannot name it."""
        return None

    def _remember(self, messages: Sequence[Any]) -> None:
        """PAI-1: the messages known from now on, by identity, each by a weak reference (under ``_lock``)."""
        known = self._known
        for message in messages:
            known[id(message)] = weakref.ref(message)
        if len(known) > self._prune_at:  # the references to messages gone go, so what is kept stays bounded
            for key in [key for key, ref in known.items() if ref() is None]:
                del known[key]
            self._prune_at = max(KNOWN_LEAST, 2 * len(known))

    def _is_known(self, message: Any) -> bool:
        """PAI-1: whether this very message was stored or given out (an id taken again by another is not it)."""
        ref = self._known.get(id(message))
        return ref is not None and ref() is message

    def record(self, messages: Sequence[Any], *, deps: Any = None) -> list[ModelMessage]:
        """Store the messages this history has not stored or given out yet, in order, all or nothing (PAI-1).

        Which are new goes by identity: a message object this history stored,
        or gave out from ``view``, ``process`` or ``load``, is not stored again.
        The new ones are converted (``turns_from_messages``) and stored with
        one ``memory.add_messages`` (MSG-6): one change, one autosave. Those
        leading them that equal the memory's newest turns (a history sent
        again) are not stored again (PAI-8, SRV-3).

        Args:
            messages: pydantic-ai messages, oldest first (a run's ``all_messages()``, say).
            deps: With a folder, the run's deps, which name the user (PAI-7). Defaults to None.

        Returns:
            The messages it stored, a new list.

        Raises:
            TypeError: An item that is not a pydantic-ai message, or a part with no JSON form (INT-1).
            ValueError: A tool return that answers no open call (MSG-6), or a turn the chat form
                refuses; nothing is stored.
        """
        if not isinstance(messages, list | tuple):
            raise TypeError(f"messages must be a list of pydantic-ai messages, got {shown(messages)}")
        with self._lock:
            numbered = [(i, message) for i, message in enumerate(messages) if not self._is_known(message)]
            turns, origins = _turns(numbered)
            if turns:
                memory = self.memory_for(deps)
                skip = 0
                stored = []
                try:
                    with held(memory):  # the newest turns compared are the ones the batch follows
                        skip = unseen(memory, turns)
                        if turns[skip:]:
                            stored = memory.add_messages(turns[skip:], importance=self._importance, ttl=self._ttl)
                except (TypeError, ValueError) as error:
                    _check_turns(turns, origins)  # a turn the chat form refuses, named as turns_from_messages names it
                    # Else the memory refused the batch (a result answering no call): name the messages it came from.
                    said = _TURN_PLACE.sub(lambda found: origins[skip + int(found[1])], str(error))
                    raise type(error)(said) from error
                run = _RUN.get()
                if run is not None:  # PAI-10: forgotten again if the run fails; only once saved (SRV-5)
                    run.extend((memory, entry.key) for entry in stored)
            new = [message for _, message in numbered]
            self._remember(new)
        return new

    def view(self, query: str | None = None, *, deps: Any = None) -> list[ModelMessage]:
        """The memory's budgeted history as pydantic-ai messages (PAI-3, PAI-4, MSG-2 .. MSG-9).

        ``memory.get_messages`` with the history's budget, tokenizer,
        ``must_keep``, ``facts_share`` and ``system``: the system message (the
        app's prompt and the facts that fit) as a ``ModelRequest`` of one
        ``SystemPromptPart``, then the turns read back with
        ``messages_from_turns``.

        Args:
            query: Rank the facts that share its words first. Defaults to None.
            deps: With a folder, the run's deps, which name the user (PAI-7). Defaults to None.

        Returns:
            A new list of new pydantic-ai messages.

        Raises:
            TokenBudgetError: The budget cannot hold the system prompt, the must-keep facts and
                the newest question (MSG-9).
        """
        memory = current(self.memory_for(deps))
        result = shared_request(  # read, not copied: the messages given out are new (PAI-12)
            memory,
            token_budget=self._budget - self._reserve,
            query=query,
            tokenizer=self._tokenizer,
            must_keep=self._must_keep,
            facts_share=self._facts_share,
            system=self._system,
            **self._options,
        )
        chat = result.messages
        out: list[ModelMessage] = []
        if chat and chat[0]["role"] == "system":
            out.append(ModelRequest(parts=[SystemPromptPart(chat[0]["content"])]))
            chat = chat[1:]
        with self._lock:
            seen = self._read_known.get(memory, _NOTHING)  # never changed: views may run at once
        read, seen = _read_seen(chat, seen)
        out.extend(read)
        with self._lock:
            self._read_known[memory] = seen
            self._remember(out)
        return out

    def process(self, messages: Sequence[Any], *, deps: Any = None) -> list[ModelMessage]:
        """``record(messages)``, then ``view`` ranked by the newest user prompt: a history processor (PAI-4).

        Give it to pydantic-ai's ``ProcessHistory`` when you want the
        processor alone; pydantic-ai then runs it in a worker thread. The
        capability itself calls ``aprocess`` before each model request.

        Args:
            messages: The request's messages, as pydantic-ai gives them to a history processor.
            deps: With a folder, the run's deps, which name the user (PAI-7). Defaults to None.

        Returns:
            The budgeted history, a new list of new pydantic-ai messages.

        Raises:
            TypeError: As ``record`` does.
            ValueError: As ``record`` does.
            TokenBudgetError: As ``view`` does.
        """
        self.record(messages, deps=deps)
        return self.view(query=_question(messages), deps=deps)

    async def aprocess(self, messages: Sequence[Any], *, deps: Any = None) -> list[ModelMessage]:
        """``process(messages)`` in a worker thread, so the store's I/O never blocks the event loop (PAI-4).

        Args:
            messages: The request's messages.
            deps: With a folder, the run's deps (PAI-7). Defaults to None.

        Returns:
            What ``process`` returns.
        """
        return await anyio.to_thread.run_sync(functools.partial(self.process, list(messages), deps=deps))

    async def arecord(self, messages: Sequence[Any], *, deps: Any = None) -> list[ModelMessage]:
        """``record(messages)`` in a worker thread, so the store's I/O never blocks the event loop (PAI-1).

        Args:
            messages: pydantic-ai messages, oldest first.
            deps: With a folder, the run's deps (PAI-7). Defaults to None.

        Returns:
            What ``record`` returns.
        """
        return await anyio.to_thread.run_sync(functools.partial(self.record, list(messages), deps=deps))

    def load(self, limit: int | None = None, *, deps: Any = None) -> list[ModelMessage]:
        """Every stored message, read back from the turns, oldest first, unbudgeted (PAI-5).

        The turns (MSG-1) in ascending ``N``, read back with
        ``messages_from_turns``: what the app stored, each message whole, also
        after a restart. Give the result to ``agent.run(message_history=...)``
        or show it; the history knows these objects and does not store them again.

        Args:
            limit: Only the newest this many messages. Defaults to None (all).
            deps: With a folder, the deps that name the user (PAI-7). Defaults to None.

        Returns:
            A new list of new pydantic-ai messages.
        """
        found = []
        for key, data in current(self.memory_for(deps)).items():
            if is_turn_key(key):
                message = chat_message(data)
                if message is not None:
                    found.append((turn_number(key), message))
        found.sort(key=lambda turn: turn[0])
        out = messages_from_turns([message for _, message in found])
        if limit is not None:
            out = out[len(out) - limit :] if limit > 0 else []
        with self._lock:
            self._remember(out)
        return out

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        """Store the run's new messages and send the model the memory's budgeted history instead (PAI-1, PAI-4).

        Only the request's messages change; the run's own history
        (``ctx.messages``) stays as pydantic-ai keeps it.

        Args:
            ctx: The run's context (pydantic-ai's ``RunContext``).
            request_context: The request about to be sent (pydantic-ai's ``ModelRequestContext``).

        Returns:
            ``request_context``, its ``messages`` the memory's budgeted history.
        """
        request_context.messages = await self.aprocess(request_context.messages, deps=ctx.deps)
        return request_context

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        """Run one memory's runs one at a time; a run that fails forgets the turns it stored (PAI-10).

        A run of a memory another run is using waits for it (so its question
        is the newest in every request it makes). When the run raises or is
        cancelled, the turns it stored (its question, its tool calls and their
        results) are forgotten in one transaction before the error goes on,
        so the memory is as before the run and the next request starts clean.

        Args:
            ctx: The run's context (pydantic-ai's ``RunContext``).
            handler: Runs the rest of the run.

        Returns:
            What ``handler`` returns.

        Raises:
            ValueError: The history serves a folder's users and the deps name none (PAI-7).
        """
        memory = self.memory_for(ctx.deps)
        with self._lock:
            lock = self._run_locks.setdefault(memory, threading.Lock())
        while not lock.acquire(blocking=False):  # polled, so a cancelled wait never holds the lock
            await anyio.sleep(RUN_LOCK_POLL)
        stored: list[tuple[Memory, str]] = []
        token = _RUN.set(stored)
        try:
            return await handler()
        except BaseException:
            if stored:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(_forget_run, stored)
            raise
        finally:
            _RUN.reset(token)
            lock.release()

    async def after_run(self, ctx: Any, *, result: Any) -> Any:
        """Store what the run added after its last model request: the final answer (PAI-1).

        Args:
            ctx: The run's context (pydantic-ai's ``RunContext``).
            result: The run's result, whose ``all_messages()`` are recorded.

        Returns:
            ``result``, unchanged.
        """
        await self.arecord(result.all_messages(), deps=ctx.deps)
        return result
