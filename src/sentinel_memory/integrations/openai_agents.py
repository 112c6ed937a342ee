"""An OpenAI Agents SDK session backed by a memory (OAI-1 .. OAI-6); the optional extra ``[openai-agents]``.

The OpenAI Agents SDK keeps a conversation in a ``Session``: the input items
of every turn, the model's messages, reasoning items, tool calls and their
outputs, read back with ``get_items(limit)`` before each run and appended
with ``add_items`` after each step. ``SentinelSession(session_id, folder)``
is such a session over a memory (one memory per session id in a
``MemoryFolder``, or a memory passed in), so what the SDK's own sessions do
not have comes with it:

* every item comes back exactly as it came, whatever its kind (an image, a
  file, a reasoning item, a hosted tool call), through a restart (OAI-1,
  INT-1);
* ``get_items()`` can return a budgeted history: the newest whole tool
  units that fit ``token_budget``, from a user message on, counted with your
  tokenizer (OAI-3), and ``call_model_input_filter`` holds every request
  of a run to that budget (OAI-4);
* the memory's own rules: its ``limit``, eviction, expiry and safe sharing
  between processes.

Each item is kept whole, as JSON data, in the content parts of a
chat-completions message (MSG-5) that the memory can count and cut into
units (MSG-7): its text (what the model reads) beside a part
``{"type": "openai_agents_item", "item": <the item>}`` (OAI-2).

The package never imports this module, so ``import sentinel_memory`` never
needs the SDK (OAI-6, DEP-1); importing it without ``openai-agents`` raises
an ``ImportError`` that names the extra.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..core.chat import ROLES, body_of, check_message
from ..core.cut import CLEARED
from ..core.errors import TokenBudgetError
from ..core.jsondata import MAX_DEPTH, canonical_json, clone, copy_json
from ..core.options import Duration
from ..core.shown import shown
from ..core.tokens import TokenizerLike, as_tokenizer, count_tokens, estimate_tokens
from ..core.turns import chat_message, is_turn, is_turn_key, turn_number
from ..folder import MemoryFolder
from ..memory import Memory, create_memory
from ..serving import (
    ADAPTER_CUT,
    ADAPTER_LOW_MARK,
    UserMemories,
    check_reserve,
    current,
    held,
    live_turns,
    newest_turns,
    request_options,
    shared_request,
    unseen,
)

try:
    from agents.memory.session import SessionABC
    from agents.memory.session_settings import SessionSettings, resolve_session_limit
    from agents.run_config import CallModelData, ModelInputData
except ImportError as error:  # pragma: no cover - exercised by a test that hides the SDK
    raise ImportError(
        "sentinel_memory.integrations.openai_agents needs the OpenAI Agents SDK; "
        "install it with: pip install 'sentinel-memory[openai-agents]'"
    ) from error

__all__ = ["ITEM_PART", "SentinelSession", "SentinelSessions", "budget_items", "chat_messages", "items_of_turn"]

T = TypeVar("T")

#: OAI-2: the type of the content part that holds an item whole.
ITEM_PART = "openai_agents_item"

#: OAI-2: a tool call's item type and the type of the item that answers it (the SDK's pairs).
CALL_OUTPUTS: Mapping[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "tool_search_call": "tool_search_output",
}
_OUTPUTS = frozenset(CALL_OUTPUTS.values())

#: OAI-2: the roles of the items a user or an app gives; each is a turn of its own.
INPUT_ROLES = ("user", "system", "developer")

#: OAI-2: content parts whose ``text`` the model reads (and ``refusal``, whose ``refusal`` it reads).
_TEXT_PARTS = frozenset(("input_text", "output_text", "text"))

#: MSG-3: what a message adds to its text's count.
MESSAGE_TOKENS = 3


# -- items and their chat form -------------------------------------------------------------


def _checked_items(items: object) -> list[dict[str, Any]]:
    """Every item copied as JSON data, or ``TypeError`` naming the first that has no JSON form (OAI-5, INT-1)."""
    if not isinstance(items, list | tuple):
        raise TypeError(f"items must be a list of input items (dicts), got {shown(items)}")
    checked = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise TypeError(
                f"items[{i}] is a {type(item).__name__}, not an input item: pass each item as the SDK's dict "
                "(an SDK or OpenAI model object as item.model_dump(exclude_unset=True))"
            )
        kind = item.get("type", "message" if "role" in item else None)
        try:
            checked.append(copy_json(item, what=f"items[{i}]"))
            copy_json([[[item]]], what="the turn")  # a turn holds an item 3 containers deep (OAI-2, ENT-13)
        except TypeError as error:
            raise TypeError(
                f"items[{i}] (type {shown(kind)}) has no JSON form and cannot be kept whole: {error}; "
                "pass bytes as base64 text (an image or file as a data URL, file_data or a file_id)"
            ) from error
        except ValueError as error:
            raise ValueError(
                f"items[{i}] (type {shown(kind)}) is nested more than {MAX_DEPTH - 3} containers deep, "
                "the most an item kept inside a turn may be"
            ) from error
    return checked


def _kind(item: Mapping[str, Any]) -> str:
    """OAI-2: ``input`` (a user, system or developer message), ``call``, ``output`` or ``model`` (every other item)."""
    kind = item.get("type")
    if "role" in item and kind in (None, "message"):
        return "input" if item["role"] in INPUT_ROLES else "model"
    call_id = item.get("call_id")
    if isinstance(call_id, str) and call_id:
        if kind in CALL_OUTPUTS:
            return "call"
        if kind in _OUTPUTS:
            return "output"
    return "model"


def _text(item: Mapping[str, Any]) -> str:
    """The text the model reads in an item (OAI-2): a message's text parts, an output's text; others none."""
    if "role" in item:
        content = item.get("content")
    elif item.get("type") in _OUTPUTS:
        content = item.get("output")
    else:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if isinstance(part, dict):
            if part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                pieces.append(part["refusal"])
    return "".join(pieces)


def _call(item: Mapping[str, Any]) -> dict[str, Any]:
    """The chat-completions tool call of a call item (OAI-2)."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        name = item["type"]
    arguments = item.get("arguments", item.get("input"))
    if not isinstance(arguments, str):
        arguments = canonical_json(item["action"]) if "action" in item else ""
    return {"id": item["call_id"], "type": "function", "function": {"name": name, "arguments": arguments}}


def _parts(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for item in items:
        text = _text(item)
        if text:
            parts.append({"type": "text", "text": text})
        parts.append({"type": ITEM_PART, "item": item})
    return parts


def _turns(items: Sequence[dict[str, Any]], open_calls: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The chat-completions messages a run of items is kept as, in order (OAI-2).

    Consecutive model items (messages, reasoning, tool calls, hosted calls)
    are one assistant message, with every call among them as a tool call;
    an output answering an open call is a tool message; an input message
    is a message of its role; an output that answers no open call is an
    assistant message of its text, left out of every budgeted history.
    """
    messages: list[dict[str, Any]] = []
    group: list[dict[str, Any]] | None = None
    calls: list[dict[str, Any]] = []
    still_open = set(open_calls or ())
    for item in items:
        kind = _kind(item)
        if kind in ("model", "call"):
            if group is None:
                group, calls, still_open = [], [], set()
                messages.append({"role": "assistant", "content": None})
                messages[-1]["_items"] = group
            group.append(item)
            if kind == "call":
                calls.append(_call(item))
                still_open.add(item["call_id"])
            continue
        group = None
        if kind == "output" and item["call_id"] in still_open:
            still_open.discard(item["call_id"])
            messages.append({"role": "tool", "content": _parts([item]), "tool_call_id": item["call_id"]})
        elif kind == "output":
            still_open = set()
            messages.append({"role": "assistant", "content": _parts([item])})
        else:
            still_open = set()
            messages.append({"role": item["role"], "content": _parts([item])})
    for message in messages:
        members = message.pop("_items", None)
        if members is not None:
            message["content"] = _parts(members)
            found = [_call(item) for item in members if _kind(item) == "call"]
            if found:
                message["tool_calls"] = found
    return messages


def chat_messages(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions messages a list of items is kept and counted as (OAI-2, MSG-5).

    Each item is kept whole in a content part ``{"type": "openai_agents_item",
    "item": item}``, after a text part with the text the model reads in it:
    a message's text parts (``input_text``, ``output_text``, ``text``, a
    refusal's text) joined with nothing between them, a tool output's text;
    other items (reasoning, an image, a hosted tool call) add no text.
    Consecutive model items are one assistant message whose ``tool_calls``
    are their calls (``call_id``, ``name``, ``arguments``), so parallel
    calls stay one unit with their outputs (MSG-7); an output is a tool
    message with its ``call_id``; a user, system or developer message is a
    message of its role.

    Args:
        items: The SDK's input items, oldest first.

    Returns:
        A new list of new message dicts in the stored form (MSG-5).

    Raises:
        TypeError: An item that is not a dict or has no JSON form (INT-1).

    Examples:
        >>> from sentinel_memory.integrations.openai_agents import chat_messages
        >>> call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city":"Brno"}'}
        >>> [(m["role"], m.get("tool_calls", [{}])[0].get("id")) for m in chat_messages(
        ...     [{"role": "user", "content": "Weather?"}, call, {"type": "function_call_output", "call_id": "c1", "output": "4 °C"}])]
        [('user', None), ('assistant', 'c1'), ('tool', None)]
    """
    return [check_message(message) for message in _turns(_checked_items(list(items)))]


def items_of_turn(data: Any, *, owned: bool = False) -> list[dict[str, Any]]:
    """The items a turn's data holds, as they came (OAI-1); a turn not written by a session reads as items too.

    A turn this adapter stored gives the items of its ``openai_agents_item``
    parts, in order. Any other turn (MSG-1: one ``add_turn``,
    ``add_messages`` or another adapter stored) reads as the SDK's items
    of its message: a message of its role and text, each tool call a
    ``function_call``, a tool result a ``function_call_output``.

    Args:
        data: A turn entry's data.
        owned: ``data`` is the caller's own copy, which the items may share (``chat_message``'s).

    Returns:
        A new list of new item dicts; empty when ``data`` is no message.
    """
    message = chat_message(data, owned=owned)
    if message is None:
        return []
    content = message.get("content")
    if isinstance(content, list):
        kept = [
            part["item"] for part in content if part.get("type") == ITEM_PART and isinstance(part.get("item"), dict)
        ]
        if kept:
            return kept
    text = body_of({"role": message["role"], "content": content})
    if message["role"] == "tool":
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id", ""), "output": text}]
    items: list[dict[str, Any]] = []
    if text or not message.get("tool_calls"):
        items.append({"role": message["role"], "content": text})
    for call in message.get("tool_calls", ()):
        function = call["function"]
        items.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": function["name"],
                "arguments": function["arguments"],
            }
        )
    return items


def _is_orphan(message: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> bool:
    """An output kept as an assistant message: it answers no call before it (OAI-2), so no request holds it."""
    return message["role"] == "assistant" and "tool_calls" not in message and any(_kind(i) == "output" for i in items)


def budget_items(
    items: Sequence[Mapping[str, Any]],
    token_budget: int | float,
    *,
    tokenizer: TokenizerLike | None = None,
    instructions: str | None = None,
) -> list[dict[str, Any]]:
    """The newest whole units of ``items`` that fit ``token_budget`` with the instructions (OAI-4).

    The leading system and developer messages (the instructions a session
    puts first, OAI-3) and ``instructions`` (the agent's, sent as the
    system message) are always kept and counted first, each as a message
    (MSG-3); the rest is cut into units as the memory cuts turns (OAI-2,
    MSG-7) and chosen as ``get_messages`` chooses them (MSG-2, MSG-9):
    the newest units that fit, from a user message on, the newest user
    message always in. Outputs that answer no call, and calls not answered
    by the end, are left out.

    Args:
        items: The input items of a request, oldest first.
        token_budget: The most tokens the request may count.
        tokenizer: Counts tokens, as for ``get_context``. Defaults to None (the estimator).
        instructions: The system instructions sent with the items. Defaults to None.

    Returns:
        A new list of the kept items, as they came, in order.

    Raises:
        TokenBudgetError: The instructions, the leading messages and the newest user message's
            units need more than the budget (MSG-9).
        TypeError: An item that has no JSON form (INT-1), or a tokenizer that is not one.

    Examples:
        >>> from sentinel_memory.integrations.openai_agents import budget_items
        >>> items = [{"role": "user", "content": "x" * 400}, {"role": "assistant", "content": "ok"},
        ...          {"role": "user", "content": "And now?"}]
        >>> budget_items(items, 40)
        [{'role': 'user', 'content': 'And now?'}]
    """
    checked = _checked_items(list(items))
    count = as_tokenizer(tokenizer) or estimate_tokens
    lead = 0
    while lead < len(checked) and _kind(checked[lead]) == "input" and checked[lead]["role"] != "user":
        lead += 1
    fixed = [instructions] if instructions is not None else []
    fixed += [body_of(message) for message in _turns(checked[:lead])]
    room = token_budget
    for text in fixed:
        room -= count_tokens(count, text) + MESSAGE_TOKENS
    if room < 0:
        raise TokenBudgetError(token_budget - room, token_budget, "the instructions and the leading system messages")
    scratch = create_memory(limit=len(checked) + 1)  # in memory, big enough that nothing is evicted
    scratch.add_messages(_turns(checked[lead:]))
    result = scratch.get_messages(token_budget=room, tokenizer=count)
    kept = list(checked[:lead])
    for entry in result.entries:
        message = chat_message(entry.data)
        turn = items_of_turn(entry.data)
        if message is not None and not _is_orphan(message, turn):
            kept.extend(turn)
    return kept


# -- the session ---------------------------------------------------------------------------


async def _settled(work: Awaitable[T]) -> T:
    """Wait for a change to finish even when the caller is cancelled, then pass the cancellation on (OAI-6)."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as error:
            cancelled = cancelled or error
    if cancelled is not None:
        task.exception()  # retrieved, so a failure behind the cancellation is not reported as unhandled
        raise cancelled
    return task.result()


class SentinelSession(SessionABC):
    """An OpenAI Agents SDK ``Session`` whose items are a memory's turns (OAI-1 .. OAI-6).

    Pass it as ``Runner.run(agent, input, session=session)``. Every item the
    SDK adds is kept whole (OAI-1) inside a chat-completions turn the memory
    can count (OAI-2), saved with the memory, and read back by
    ``get_items``: all of them, the latest ``limit`` of them, or, with a
    ``token_budget``, the budgeted history (OAI-3). Give
    ``call_model_input_filter`` to the ``RunConfig`` to hold every request
    of a run to the same budget (OAI-4).

    Args:
        session_id: The conversation's id; with ``folder``, whose memory it is (FLD-1).
        folder: A ``MemoryFolder`` or the path of one: the session is ``folder.open(session_id,
            **options)`` (FLD-2: autosaved, shared). Give this or ``memory``.
        memory: A ``Memory`` to keep the items in instead. Defaults to None.
        token_budget: With it, ``get_items()`` (no limit) returns the budgeted history. Defaults
            to None (every item).
        tokenizer: Counts tokens for the budget. Defaults to None (the memory's).
        system: The system prompt the budgeted history starts with, counted in the budget.
            Defaults to None.
        must_keep: Facts of at least this importance are always in the budgeted history.
            Defaults to None.
        facts_share: The share of the budget kept for the memory's facts. Defaults to None (0.5).
        importance: The importance of the turns this session adds. Defaults to None (0.3).
        ttl: How long the turns this session adds live. Defaults to None (for good).
        session_settings: The SDK's ``SessionSettings`` (its ``limit`` applies when
            ``get_items`` gets none). Defaults to None.
        reserve: Tokens kept out of ``token_budget`` for what the SDK sends beside the items and
            the instructions: the tools' schemas, a margin (OAI-11). Defaults to 0.
        cut: How the budgeted history is cut (MSG-11): ``"stable"``, the default, only at marks, so
            consecutive requests share their start and a model API's prompt cache serves it; None or
            ``"newest"`` fills it newest first (INT-2).
        low_mark: With the stable cut, about the share of the budget a request fills right after a
            cut. Defaults to 0.5 (``ADAPTER_LOW_MARK``, INT-2).
        facts_at: Where the facts go in the budgeted history (MSG-12): ``"system"`` (None, the
            default) in the system item first, ``"end"`` in a system item of their own after the
            history, ``"start"`` in one right after the ``system`` prompt's.
        keep_results: Clear the outputs of the tool calls of all but the newest ``keep_results``
            turns before any turn is left out (MSG-15): each output item's ``output`` becomes
            ``"[cleared]"`` in the budgeted history, its ``call_id`` kept; the stored items keep
            theirs. None, the default, clears none.
        exclude_tools: Names of tools whose outputs are never cleared (MSG-16). Defaults to None.
        **options: More options for ``folder.open``.

    Raises:
        TypeError: ``session_id`` is not a str, neither or both of ``folder`` and ``memory`` are
            given, or ``memory`` is not a ``Memory``.

    Examples:
        >>> import asyncio
        >>> from sentinel_memory.integrations.openai_agents import SentinelSession
        >>> session = SentinelSession("chat-42", tmp / "sessions")
        >>> asyncio.run(session.add_items([{"role": "user", "content": "Hi"}]))
        >>> asyncio.run(SentinelSession("chat-42", tmp / "sessions").get_items())
        [{'role': 'user', 'content': 'Hi'}]
    """

    def __init__(
        self,
        session_id: str,
        folder: MemoryFolder | str | os.PathLike[str] | None = None,
        *,
        memory: Memory | None = None,
        token_budget: int | float | None = None,
        tokenizer: TokenizerLike | None = None,
        system: str | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        session_settings: SessionSettings | None = None,
        reserve: int | float = 0,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = None,
        exclude_tools: Sequence[str] | None = None,
        **options: Any,
    ) -> None:
        self._reserve = check_reserve(reserve, token_budget)
        self._cut = request_options(
            cut=cut, low_mark=low_mark, facts_at=facts_at, keep_results=keep_results, exclude_tools=exclude_tools
        )
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, got {shown(session_id)}")
        if (folder is None) == (memory is None):
            raise TypeError("give a folder (a MemoryFolder or a path) or a memory=, exactly one of them")
        if memory is None:
            if not isinstance(folder, MemoryFolder):
                folder = MemoryFolder(folder)  # type: ignore[arg-type]
            memory = folder.open(session_id, **options)
        elif not isinstance(memory, Memory):
            raise TypeError(f"memory must be a Memory (create_memory()), got {shown(memory)}")
        elif options:
            raise TypeError(f"options {', '.join(sorted(options))} are for a folder's memory; this one is given")
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a str, got {shown(system)}")
        if tokenizer is not None:
            as_tokenizer(tokenizer)  # a tokenizer that is not one is refused now (OPT-1), not at the first read
        self.session_id = session_id
        self.session_settings = session_settings
        self._memory = memory
        self._token_budget = token_budget
        self._tokenizer = tokenizer
        self._system = system
        self._must_keep = must_keep
        self._facts_share = facts_share
        self._importance = importance
        self._ttl = ttl
        # OAI-12: the items of each stored turn, by the identity of its data (a change stores new data),
        # as the last read found them; never given out: what leaves is a copy.
        self._known: dict[int, tuple[Any, list[dict[str, Any]]]] = {}

    @property
    def memory(self) -> Memory:
        """The memory that holds the items."""
        return self._memory

    def __repr__(self) -> str:
        return f"SentinelSession({self.session_id!r}, {self._memory!r})"

    # -- reads -----------------------------------------------------------------------------

    def _turns_now(self) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
        """The live turns, oldest first (ascending N), each with its message and its items (OAI-1)."""
        found = []
        for key, data in current(self._memory).items():  # up to date (OAI-8), live, oldest first, at one now
            if is_turn_key(key):
                # ``items()`` gave this copy of the data: the message and its items share it, copied once.
                message = chat_message(data, owned=True)
                if message is not None:
                    found.append((turn_number(key), key, message, items_of_turn(message, owned=True)))
        found.sort(key=lambda turn: turn[0])  # stable: entries of one N stay oldest first
        return [(key, message, items) for _, key, message, items in found]

    def _stored_items(self, data: Any, known: dict[int, tuple[Any, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
        """OAI-12: the items a stored turn's data holds, made once per data (by identity) and kept in ``known``."""
        hit = self._known.get(id(data))
        if hit is None or hit[0] is not data:
            hit = (data, items_of_turn(data))
        known[id(data)] = hit
        return hit[1]

    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Every item, or the latest ``limit`` of them, oldest first, as they came (OAI-1); the sync form.

        Args:
            limit: How many of the newest items. None, the default, means all; 0 none; a
                negative number all (as the SDK's SQLite session reads them).

        Returns:
            A new list of new item dicts.
        """
        known: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
        kept = [item for _, data in live_turns(current(self._memory)) for item in self._stored_items(data, known)]
        self._known = known  # the turns read now: a long-gone turn's items are not kept
        if limit is not None and limit >= 0:
            kept = kept[-limit:] if limit else []
        return [clone(item) for item in kept]  # the caller's own (OAI-12)

    def budgeted_items(self) -> list[dict[str, Any]]:
        """The budgeted history: ``memory.get_messages`` with the session's budget, as items (OAI-3).

        Returns:
            A new list: a system item when there is a system prompt or facts, then the items of
            the chosen turns, oldest first, as they came.

        Raises:
            TypeError: The session has no ``token_budget``.
            TokenBudgetError: The system prompt, the must-keep facts and the newest user message's
                turns need more than the budget (MSG-9).
        """
        if self._token_budget is None:
            raise TypeError("budgeted_items needs a session made with token_budget=")
        memory = current(self._memory)
        result = shared_request(  # read, not copied: the items given out are copies (OAI-12)
            memory,
            token_budget=self._token_budget - self._reserve,
            tokenizer=self._tokenizer,
            must_keep=self._must_keep,
            facts_share=self._facts_share,
            system=self._system,
            **self._cut,
        )
        turns = [entry for entry in result.entries if is_turn(entry.key, entry.data)]
        messages = result.messages
        extra = len(messages) - len(turns)  # the system prompt's and the facts' messages (MSG-12)
        lead = int(self._system is not None) if self._cut["facts_at"] == "end" else extra
        known: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
        out: list[dict[str, Any]] = [{"role": "system", "content": message["content"]} for message in messages[:lead]]
        for entry, sent in zip(turns, messages[lead : lead + len(turns)], strict=True):
            stored = chat_message(entry.data, owned=True)  # read only
            items = self._stored_items(entry.data, known)
            if stored is None or _is_orphan(stored, items):
                continue
            if sent.get("content") == CLEARED and stored.get("content") != CLEARED:  # MSG-15: cleared
                out.extend(
                    {**clone(item), "output": CLEARED} if _kind(item) == "output" else clone(item) for item in items
                )
            else:
                out.extend(clone(item) for item in items)
        out.extend({"role": "system", "content": message["content"]} for message in messages[lead + len(turns) :])
        self._known = known
        return out

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The conversation's items, oldest first, as they came (OAI-1, OAI-3).

        ``limit`` (or the ``session_settings``' limit) gives the latest
        ``limit`` items, as every SDK session does; without one, the
        budgeted history when the session has a ``token_budget``, else every
        item. Read in a worker thread, so the store's I/O never blocks the
        event loop (OAI-6).

        Args:
            limit: How many of the newest items. Defaults to None.

        Returns:
            A new list of new item dicts.
        """
        resolved = resolve_session_limit(limit, self.session_settings)
        if resolved is None and self._token_budget is not None:
            return await asyncio.to_thread(self.budgeted_items)
        return await asyncio.to_thread(self.items, resolved)

    # -- changes ---------------------------------------------------------------------------

    def _open_calls(self) -> set[str]:
        """The call ids a tool message may answer next, found as ``add_messages`` finds them (MSG-6).

        Walks back from the memory's newest ``chat:N`` over tool messages to
        an assistant message with calls; a missing, expired or other turn on
        the way closes them. So an output goes in as a tool message exactly
        when ``add_messages`` will take it as one (OAI-2).
        """
        state = self._memory.state
        number = state.turns
        while f"chat:{number + 1}" in state.entries:  # a state built by hand may hold turns past its counter
            number += 1
        answered: set[str] = set()
        while number > 0:
            message = chat_message(self._memory.get(f"chat:{number}"))
            if message is None or message["role"] not in ROLES:
                return set()
            if message["role"] != "tool":
                return {call["id"] for call in message.get("tool_calls", ())} - answered
            if "tool_call_id" not in message:  # a turn stored before tool results kept their call's id
                return set()
            answered.add(message["tool_call_id"])
            number -= 1
        return set()

    def add(self, items: Sequence[Any]) -> None:
        """Keep the items as the memory's next turns, in order, all or nothing (OAI-1, OAI-2, OAI-5); the sync form.

        Args:
            items: The SDK's input items, oldest first.

        Raises:
            TypeError: An item that is not a dict or has no JSON form; it is named, and nothing is stored.
            ValueError: Two calls of one model response with one ``call_id`` (MSG-5), or an item nested
                more than 97 containers deep (OAI-5); nothing is stored.
        """
        checked = _checked_items(items)
        if not checked:
            return
        with held(self._memory):
            messages = _turns(checked, self._open_calls())
            # Items the client sent again (its whole transcript as the input) are stored once (OAI-9, SRV-3).
            messages = [check_message(message) for message in messages]
            messages = messages[unseen(self._memory, messages) :]
            if messages:
                self._memory.add_messages(messages, importance=self._importance, ttl=self._ttl)

    async def add_items(self, items: list[Any]) -> None:
        """``add(items)`` in a worker thread; a cancelled caller still gets the change finished or refused whole (OAI-6).

        Args:
            items: The SDK's input items, oldest first.

        Raises:
            TypeError: As ``add`` does; checked before the worker thread starts.
            ValueError: As ``add`` does.
        """
        checked = _checked_items(items)
        if checked:
            await _settled(asyncio.to_thread(self.add, checked))

    def pop(self) -> dict[str, Any] | None:
        """Remove the newest item and return it, or None when there is none (OAI-1); the sync form."""
        with held(self._memory):
            for key, _, items in reversed(self._turns_now()):
                if not items:
                    continue
                if len(items) == 1:
                    self._memory.forget(key)
                else:  # a model response's items share a turn: keep the rest of it (OAI-2)
                    rest = check_message(_turns(items[:-1])[0])
                    self._memory.remember(key, rest, ttl=self._ttl)
                last: dict[str, Any] = items[-1]
                return last
        return None

    async def pop_item(self) -> Any:
        """``pop()`` in a worker thread (OAI-6).

        Returns:
            The newest item as it came, or None when the session is empty.
        """
        return await _settled(asyncio.to_thread(self.pop))

    def clear(self) -> None:
        """Forget every turn of the memory and nothing else: its facts stay (OAI-1); the sync form."""
        with held(self._memory):
            for key, _, _ in self._turns_now():
                self._memory.forget(key)

    async def clear_session(self) -> None:
        """``clear()`` in a worker thread (OAI-6)."""
        await _settled(asyncio.to_thread(self.clear))

    # -- every request within the budget ---------------------------------------------------

    def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """Hold a request to the session's budget: give it as ``RunConfig(call_model_input_filter=...)`` (OAI-4).

        The SDK calls it before every model call of a run with the
        instructions and the input items; it returns them with the input
        cut by ``budget_items`` to the session's ``token_budget`` (the
        instructions and the leading system items counted first, then the
        newest whole units, from a user message on). Without a budget the
        request passes unchanged.

        Args:
            data: The SDK's ``CallModelData``.

        Returns:
            A new ``ModelInputData`` with the kept items and the same instructions.

        Raises:
            TokenBudgetError: The instructions and the newest user message's units need more than
                the budget (MSG-9). The run's input the SDK stored (the memory's trailing user,
                system and developer turns, when they end the request) is forgotten first, so the
                next run's request is valid (OAI-10).
        """
        model_data = data.model_data
        if self._token_budget is None:
            return model_data
        try:
            kept = budget_items(
                model_data.input,
                self._token_budget - self._reserve,
                tokenizer=self._tokenizer or self._memory.state.config.tokenizer,
                instructions=model_data.instructions,
            )
        except TokenBudgetError:
            self._forget_refused(model_data.input)
            raise
        return ModelInputData(input=kept, instructions=model_data.instructions)  # type: ignore[arg-type]

    def _forget_refused(self, request: Sequence[Any]) -> None:
        """OAI-10: forget the refused run's input: the memory's trailing input turns, when they end the request."""
        with held(self._memory):
            keys: list[str] = []
            items: list[dict[str, Any]] = []
            for key, message in reversed(newest_turns(self._memory, len(request))):
                if message["role"] not in INPUT_ROLES:
                    break
                keys.append(key)
                items[:0] = items_of_turn(message)
            if keys and len(items) <= len(request) and list(request[len(request) - len(items) :]) == items:
                for key in keys:
                    self._memory.forget(key)


class SentinelSessions:
    """The sessions of one app's many users over a ``MemoryFolder``, and one filter for every run (OAI-7).

    A server keeps one ``Agent`` and one ``RunConfig`` for all its users and
    runs each request as ``Runner.run(agent, input, session=sessions.session(session_id),
    run_config=config)``. ``session(session_id)`` is a ``SentinelSession``
    over the folder's memory of that id, opened once and kept (SRV-1), with
    the options given here; ``call_model_input_filter`` holds every request
    of every run to ``token_budget`` (OAI-4) and reads no session, so one
    ``RunConfig`` serves every user.

    Args:
        folder: A ``MemoryFolder`` (or its path) or a ``RedisMemories``: one memory per session id.
        token_budget: As for ``SentinelSession``. Defaults to None.
        tokenizer: As for ``SentinelSession``. Defaults to None (the folder's, else the estimator).
        system: As for ``SentinelSession``. Defaults to None.
        must_keep: As for ``SentinelSession``. Defaults to None.
        facts_share: As for ``SentinelSession``. Defaults to None.
        importance: As for ``SentinelSession``. Defaults to None.
        ttl: As for ``SentinelSession``. Defaults to None.
        session_settings: As for ``SentinelSession``. Defaults to None.
        reserve: As for ``SentinelSession``. Defaults to 0.
        cut: As for ``SentinelSession``. Defaults to ``"stable"`` (``ADAPTER_CUT``).
        low_mark: As for ``SentinelSession``. Defaults to 0.5 (``ADAPTER_LOW_MARK``).
        facts_at: As for ``SentinelSession``. Defaults to None (``"system"``).
        keep_results: As for ``SentinelSession``. Defaults to None (no clearing).
        exclude_tools: As for ``SentinelSession``. Defaults to None.

    Examples:
        >>> import asyncio
        >>> from sentinel_memory.integrations.openai_agents import SentinelSessions
        >>> sessions = SentinelSessions(tmp / "sessions", token_budget=500)
        >>> asyncio.run(sessions.session("chat-1").add_items([{"role": "user", "content": "Hi"}]))
        >>> asyncio.run(sessions.session("chat-2").get_items()), sessions.session("chat-1").memory is sessions.session("chat-1").memory
        ([], True)
    """

    def __init__(
        self,
        folder: MemoryFolder | str | os.PathLike[str] | Any,
        *,
        token_budget: int | float | None = None,
        tokenizer: TokenizerLike | None = None,
        system: str | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        session_settings: SessionSettings | None = None,
        reserve: int | float = 0,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = None,
        exclude_tools: Sequence[str] | None = None,
    ) -> None:
        self._reserve = check_reserve(reserve, token_budget)
        request_options(  # refused now (INT-2), not at the first session's first read
            cut=cut, low_mark=low_mark, facts_at=facts_at, keep_results=keep_results, exclude_tools=exclude_tools
        )
        if isinstance(folder, str | os.PathLike):
            folder = MemoryFolder(folder)
        self._users = UserMemories(folder)
        if tokenizer is None and isinstance(folder, MemoryFolder):
            tokenizer = folder.options.get("tokenizer")
        if tokenizer is not None:
            as_tokenizer(tokenizer)  # refused now (OPT-1), not at the first run
        self._token_budget = token_budget
        self._tokenizer = tokenizer
        self._options: dict[str, Any] = {
            "token_budget": token_budget,
            "tokenizer": tokenizer,
            "system": system,
            "must_keep": must_keep,
            "facts_share": facts_share,
            "importance": importance,
            "ttl": ttl,
            "session_settings": session_settings,
            "reserve": reserve,
            "cut": cut,
            "low_mark": low_mark,
            "facts_at": facts_at,
            "keep_results": keep_results,
            "exclude_tools": exclude_tools,
        }

    def __repr__(self) -> str:
        return f"SentinelSessions({self._users.memories!r})"

    def session(self, session_id: str) -> SentinelSession:
        """The session of ``session_id``: a new ``SentinelSession`` over its memory, kept open (OAI-7, SRV-1).

        Args:
            session_id: The conversation's (or user's) id, any non-empty str.

        Returns:
            A ``SentinelSession`` with this object's options.

        Raises:
            TypeError: ``session_id`` is not a non-empty str.
        """
        return SentinelSession(session_id, memory=self._users.get(session_id), **self._options)

    def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """Hold a request of any session's run to ``token_budget`` (OAI-4, OAI-7); no session is read.

        Args:
            data: The SDK's ``CallModelData``.

        Returns:
            A new ``ModelInputData`` with the kept items and the same instructions, or the request
            unchanged without a budget.

        Raises:
            TokenBudgetError: The instructions and the newest user message's units need more than
                the budget (MSG-9).
        """
        model_data = data.model_data
        if self._token_budget is None:
            return model_data
        kept = budget_items(
            model_data.input,
            self._token_budget - self._reserve,
            tokenizer=self._tokenizer,
            instructions=model_data.instructions,
        )
        return ModelInputData(input=kept, instructions=model_data.instructions)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close every memory kept open (WRP-5); a later ``session`` opens its memory again."""
        self._users.close()
