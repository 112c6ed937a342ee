"""The LangChain adapters over a memory (LC-1 .. LC-8); the optional extra ``[langchain]``.

Two ways in. ``SentinelMemoryMiddleware`` (module
``sentinel_memory.integrations.langchain.middleware``, also importable from
here when ``langchain`` is installed) is an agent middleware for LangChain
v1's ``create_agent``: before each model call it replaces the model's input
with the memory's budgeted request and records the new messages as turns
(LC-7, LC-8). ``SentinelChatMessageHistory(memory)`` is the LangChain
``BaseChatMessageHistory`` of older code, for ``RunnableWithMessageHistory``
(which langchain-core 1.x marks deprecated): what LangChain adds lands as
``add_messages`` of chat-completions messages (MSG-5), so the turns, tool
calls and tool results included, are saved with the memory, survive a
restart, count against its ``limit`` and are evicted by its rules like any
entry, while the facts the memory keeps beside them stay untouched by
``clear()``. ``get_messages(token_budget)`` is the budgeted view next to
LangChain's unbounded ``messages``: a valid request by the memory's rules
(MSG-2 .. MSG-9), as LangChain messages.

The package itself never imports this module, so ``import sentinel_memory``
never needs LangChain (LC-5, DEP-1); this module needs ``langchain-core``
alone (importing it without raises an ``ImportError`` that names the extra),
the middleware ``langchain`` too.

A turn keeps what the chat API takes: the role, the content (a str, or the
message's content blocks whole, INT-1), an assistant's tool calls (id, name,
arguments), a tool result's call id and the message's ``name``. A block with
no JSON form is refused (LC-2). A message's ``id``, metadata
(``additional_kwargs``, ``response_metadata``, ``usage_metadata``) and a
``ToolMessage``'s ``artifact`` and ``status`` are LangChain's bookkeeping
around the message, which a chat API is not sent, and are not kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ...core.chat import ROLES
from ...core.jsondata import copy_json, is_json_text
from ...core.options import Duration
from ...core.shown import shown
from ...core.tokens import TokenizerLike
from ...core.turns import chat_message, is_turn_key, turn_number
from ...folder import MemoryFolder
from ...memory import Memory
from ...serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK, current, held

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.runnables.config import run_in_executor
except ImportError as error:  # pragma: no cover - exercised by a test that hides langchain-core
    raise ImportError(
        "sentinel_memory.integrations.langchain needs langchain-core; install it with: pip install 'sentinel-memory[langchain]'"
    ) from error

__all__ = [
    "SentinelChatMessageHistory",
    "SentinelMemoryMiddleware",
    "message_from_turn",
    "messages_from_turns",
    "turn_from_message",
    "turns_from_messages",
]


def __getattr__(name: str) -> Any:
    """``SentinelMemoryMiddleware``, imported on first use, so this module needs langchain-core alone (LC-5)."""
    if name == "SentinelMemoryMiddleware":
        from .middleware import SentinelMemoryMiddleware

        return SentinelMemoryMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: LC-1: the roles read back as LangChain's own message types; any other role is a ``ChatMessage``.
_READ: dict[str, type[HumanMessage | AIMessage | SystemMessage]] = {
    "user": HumanMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
}


def message_from_turn(
    role: str,
    content: str | list[Any] | None,
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    tool_call_id: str | None = None,
    name: str | None = None,
) -> BaseMessage:
    """The LangChain message a turn reads back as (LC-1).

    A ``HumanMessage`` for ``"user"``, an ``AIMessage`` for ``"assistant"``
    (with its ``tool_calls``, each call's arguments parsed from their JSON
    text; arguments that are not a JSON object make it an invalid tool
    call, as LangChain's own parsers do), a ``SystemMessage`` for
    ``"system"``, a ``ToolMessage`` for ``"tool"`` with its ``tool_call_id``,
    and a ``ChatMessage`` carrying the role for any other role
    (``developer``, or a turn stored before roles were checked). A list of
    content parts is the message's content as it is (INT-1), a copy.

    Args:
        role: The turn's role.
        content: The turn's content: a str, a list of content parts, or None on an
            assistant message that only calls tools (read back as ``""``).
        tool_calls: An assistant's calls in the chat-completions form. Defaults to none.
        tool_call_id: A tool result's call id. Defaults to None.
        name: The message's ``name``. Defaults to None.

    Returns:
        A new LangChain ``BaseMessage`` of the type the role reads back as.

    Examples:
        >>> from sentinel_memory.integrations.langchain import message_from_turn
        >>> message_from_turn("assistant", "Hello!").type
        'ai'
        >>> message_from_turn("tool", "4 °C", tool_call_id="call_1").tool_call_id
        'call_1'
        >>> message_from_turn("developer", "Answer in Czech.").role
        'developer'
        >>> message_from_turn("user", [{"type": "image", "url": "https://x/plate.png"}]).content
        [{'type': 'image', 'url': 'https://x/plate.png'}]
    """
    body: str | list[Any] = "" if content is None else copy_json(content, what="content")
    if role == "assistant" and tool_calls:
        calls, invalid = [], []
        for call in tool_calls:
            function = call["function"]
            try:
                args = json.loads(function["arguments"] or "{}")
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append({"name": function["name"], "args": args, "id": call["id"], "type": "tool_call"})
            else:
                invalid.append(
                    {
                        "name": function["name"],
                        "args": function["arguments"],
                        "id": call["id"],
                        "error": None,
                        "type": "invalid_tool_call",
                    }
                )
        return AIMessage(content=body, tool_calls=calls, invalid_tool_calls=invalid, name=name)
    if role == "tool" and tool_call_id is not None:
        return ToolMessage(content=body, tool_call_id=tool_call_id, name=name)
    kind = _READ.get(role)
    if kind is not None:
        return kind(content=body, name=name)
    return ChatMessage(role=role, content=body, name=name)


def messages_from_turns(turns: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """Chat-completions messages (MSG-5, such as a ``get_messages`` result's) as new LangChain messages (LC-1).

    Args:
        turns: The messages in their stored form (MSG-5), each read back with ``message_from_turn``.

    Returns:
        A new list of new LangChain messages, in order.

    Examples:
        >>> from sentinel_memory.integrations.langchain import messages_from_turns
        >>> [m.type for m in messages_from_turns([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])]
        ['system', 'human']
    """
    return [
        message_from_turn(
            turn["role"],
            turn.get("content"),
            tool_calls=turn.get("tool_calls", ()),
            tool_call_id=turn.get("tool_call_id"),
            name=turn.get("name"),
        )
        for turn in turns
    ]


def turn_from_message(message: BaseMessage, *, where: str = "message") -> dict[str, Any]:
    """The chat-completions message a LangChain message is stored as (LC-2, MSG-5, INT-1).

    ``HumanMessage`` is ``"user"``, ``AIMessage`` ``"assistant"`` with its
    ``tool_calls`` (each ``{"id", "type": "function", "function": {"name",
    "arguments"}}``, the arguments as JSON text), ``SystemMessage``
    ``"system"``, ``ToolMessage`` ``"tool"`` with its ``tool_call_id``, and
    ``ChatMessage`` its own role, which must be one of the chat API's
    (MSG-5); the message's ``name`` when it has one. The content is a
    ``str`` content itself, or its list of content blocks whole (INT-1):
    each block a JSON object with a ``type`` (an image, a file, audio, a
    reasoning item, any provider's block), kept as it is, and a plain
    string in the list as the text block LangChain's own ``content_blocks``
    reads it as; an empty list is the empty text. A block with no JSON form
    (bytes, an object) is refused, naming the block and what to pass. An
    ``AIMessage`` with calls and no content keeps the content None.

    Args:
        message: The LangChain message to store.
        where: How errors name it, such as ``"messages[3]"``. Defaults to ``"message"``.

    Returns:
        A new dict: ``role`` and ``content``, and ``tool_calls``, ``tool_call_id`` or ``name``
        when it has them.

    Raises:
        TypeError: ``message`` is not a ``BaseMessage``; or it is a ``FunctionMessage``, an
            ``AIMessage`` with invalid tool calls, or any other message type; or its text is not
            JSON text (a lone surrogate, ENT-2); or a content block or a call's arguments have no
            JSON form, or a block is not an object with a ``type``.
        ValueError: A ``ChatMessage`` whose role is not one of the chat API's (MSG-5).

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> from sentinel_memory.integrations.langchain import turn_from_message
        >>> turn_from_message(HumanMessage(content=["Is it vegan?", {"type": "image", "url": "https://x/a.png"}]))
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Is it vegan?'}, {'type': 'image', 'url': 'https://x/a.png'}]}
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"{where}: a chat history holds LangChain messages, got {shown(message)}")
    what = f"{where} ({type(message).__name__})"
    content = _content_of(message.content, what)
    turn: dict[str, Any]
    if isinstance(message, HumanMessage):
        turn = {"role": "user", "content": content}
    elif isinstance(message, AIMessage):
        if message.invalid_tool_calls:
            raise TypeError(
                f"{what} has invalid tool calls and cannot be kept: a chat API takes no call it cannot parse"
            )
        if not message.tool_calls:
            turn = {"role": "assistant", "content": content}
        else:
            turn = {"role": "assistant", "content": content or None, "tool_calls": _calls(message, what)}
    elif isinstance(message, SystemMessage):
        turn = {"role": "system", "content": content}
    elif isinstance(message, ToolMessage):
        turn = {"role": "tool", "content": content, "tool_call_id": message.tool_call_id}
    elif isinstance(message, ChatMessage):
        role = message.role
        if not isinstance(role, str):
            raise TypeError(f"{what}: a ChatMessage's role must be a str, got {shown(role)}")
        if role not in ROLES:
            raise ValueError(f"{what}: a ChatMessage's role must be one of {', '.join(ROLES)}, got {shown(role)}")
        turn = {"role": role, "content": content}
    else:
        raise TypeError(
            f"{what} cannot be kept as a chat turn: a turn is a chat-completions message "
            "(user, assistant with tool calls, system, tool with its call id, or a ChatMessage of a chat role)"
        )
    if message.name is not None:
        turn["name"] = message.name
    return turn


def turns_from_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Each message as ``turn_from_message`` stores it, errors naming ``messages[i]`` (LC-2).

    Args:
        messages: The LangChain messages, oldest first.

    Returns:
        A new list of chat-completions messages (MSG-5), in order.

    Raises:
        TypeError, ValueError: As ``turn_from_message``, naming ``messages[i]``.

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> from sentinel_memory.integrations.langchain import turns_from_messages
        >>> turns_from_messages([HumanMessage("Hi", name="jakub")])
        [{'role': 'user', 'content': 'Hi', 'name': 'jakub'}]
    """
    return [turn_from_message(message, where=f"messages[{i}]") for i, message in enumerate(messages)]


def _calls(message: AIMessage, what: str) -> list[dict[str, Any]]:
    """An AIMessage's tool calls in the chat-completions form, the arguments as JSON text (LC-2)."""
    calls = []
    for i, call in enumerate(message.tool_calls):
        try:
            arguments = json.dumps(copy_json(call["args"], what="args"), ensure_ascii=False)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{what}.tool_calls[{i}] ({shown(call['name'])}): its args have no JSON form ({error}); "
                "pass JSON values (str, number, bool, None, lists and dicts of them)"
            ) from error
        calls.append({"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": arguments}})
    return calls


def _content_of(content: Any, what: str) -> str | list[dict[str, Any]]:
    """A message's content as a turn keeps it: a str itself, a list of blocks whole (LC-2, INT-1)."""
    if isinstance(content, str):
        if not is_json_text(content):
            raise TypeError(f"{what}: a message's text must be JSON text (no lone surrogates), got {shown(content)}")
        return content
    if not isinstance(content, list):
        raise TypeError(f"{what}: a message's content must be a str or a list of content blocks, got {shown(content)}")
    if not content:
        return ""  # a chat API takes no empty list of parts; LangChain reads both as no text
    parts: list[dict[str, Any]] = []
    for j, item in enumerate(content):
        where = f"{what}.content[{j}]"
        # A plain string is the text block LangChain's content_blocks reads it as.
        block = {"type": "text", "text": item} if isinstance(item, str) else item
        if not isinstance(block, dict) or not isinstance(block.get("type"), str) or not block["type"]:
            raise TypeError(
                f"{where} is {shown(block)}: a content block is a str or a dict with a non-empty 'type' "
                "(such as {'type': 'text', 'text': ...} or {'type': 'image', 'url': ...})"
            )
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise TypeError(f"{where}: a 'text' block's text must be a str, got {shown(block.get('text'))}")
        try:
            parts.append(copy_json(block, what=where))
        except TypeError as error:
            raise TypeError(
                f"{where}, the {shown(block['type'])} block, has no JSON form ({error}), so it cannot be kept "
                "whole; pass its data as base64 text, a URL or a provider's file id instead"
            ) from error
    return parts


class SentinelChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history whose messages are a memory's chat turns (LC-1 .. LC-4).

    ``messages`` reads the memory's live turns (MSG-1), oldest first;
    ``add_messages`` stores each message with ``memory.add_turn`` (importance
    0.3 unless given here, ENT-16); ``clear`` forgets the turns and keeps
    every fact. The memory's own rules apply to the turns: they are saved to
    its store, evicted when it is over its ``limit`` (lowest retention first,
    so before facts of higher importance) and expire with ``ttl``.

    Give it to ``RunnableWithMessageHistory`` from a factory, one memory per
    session, for instance with ``SentinelChatMessageHistory.from_folder``.

    Args:
        memory: The ``Memory`` that holds the turns (and whatever facts it holds).
        importance: The importance of the turns this history adds, in [0, 1].
            Defaults to None (the turn default, 0.3, ENT-16).
        ttl: How long the turns this history adds live, in milliseconds or a ``timedelta``.
            Defaults to None (for good).

    Raises:
        TypeError: ``memory`` is not a ``Memory``.

    Examples:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
        >>> history = SentinelChatMessageHistory(mem)
        >>> history.add_messages([HumanMessage("Any nuts in the risotto?"), AIMessage("No nuts.")])
        >>> [m.type for m in history.messages], mem["chat:1"]
        (['human', 'ai'], {'role': 'user', 'content': 'Any nuts in the risotto?'})
    """

    def __init__(self, memory: Memory, *, importance: float | None = None, ttl: Duration | None = None) -> None:
        if not isinstance(memory, Memory):
            raise TypeError(f"memory must be a Memory (create_memory()), got {shown(memory)}")
        super().__init__()
        self._memory = memory
        self._importance = importance
        self._ttl = ttl

    @classmethod
    def from_folder(
        cls,
        folder: MemoryFolder | str | os.PathLike[str],
        user_id: str,
        *,
        importance: float | None = None,
        ttl: Duration | None = None,
        **options: Any,
    ) -> SentinelChatMessageHistory:
        """The history of ``user_id``'s memory in a folder, ``MemoryFolder(folder).open(user_id, **options)`` (FLD-2).

        The memory autosaves and is shared (FLD-3), so a factory that opens it
        per request, in several threads or processes, loses no turn.

        Args:
            folder: A ``MemoryFolder``, or the path of one (a str or path-like).
            user_id: Whose memory: any str (a session id, a user id), FLD-1.
            importance: The importance of the turns this history adds, as for the constructor.
                Defaults to None (0.3).
            ttl: How long the turns this history adds live, as for the constructor.
                Defaults to None (for good).
            **options: More options for the memory, as ``MemoryFolder.open`` takes them.

        Returns:
            A new history over that memory.

        Raises:
            TypeError: ``user_id`` is not a ``str``, or ``store=`` is given.

        Examples:
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> SentinelChatMessageHistory.from_folder(tmp / "sessions", "session-42").add_user_message("Hello")
            >>> [m.content for m in SentinelChatMessageHistory.from_folder(tmp / "sessions", "session-42").messages]
            ['Hello']
        """
        if not isinstance(folder, MemoryFolder):
            folder = MemoryFolder(folder)
        return cls(folder.open(user_id, **options), importance=importance, ttl=ttl)

    @property
    def memory(self) -> Memory:
        """The memory that holds the turns."""
        return self._memory

    def __repr__(self) -> str:
        return f"SentinelChatMessageHistory({self._memory!r})"

    # The base class declares ``messages`` as an attribute; here it is a read of the memory.
    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The memory's live turns as LangChain messages, oldest first (LC-1).

        A turn is a live entry under ``chat:N`` whose data is a message, or a
        legacy string ``"role: text"`` (MSG-1); entries of every other kind
        are facts and not shown. The turns are ordered by ``N`` (entries of
        one ``N``, ``chat:7`` and ``chat:007``, older first) and read back by
        role with ``message_from_turn``. All are read at one ``now``; each read
        returns a new list of new messages. A shared memory (a folder's) is
        brought up to date first, so what another object or process added is
        there (LC-11, SRV-2).
        """
        turns = []
        for key, data in current(self._memory).items():  # live entries, oldest first, copies
            if is_turn_key(key):
                message = chat_message(data)
                if message is not None:
                    turns.append((turn_number(key), message))
        turns.sort(key=lambda turn: turn[0])  # stable: entries of one N stay oldest first
        return messages_from_turns([message for _, message in turns])

    def get_messages(
        self,
        token_budget: int | float,
        *,
        query: str | None = None,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        system: str | None = None,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = ADAPTER_KEEP_RESULTS,
        exclude_tools: Sequence[str] | None = None,
    ) -> list[BaseMessage]:
        """The budgeted view: ``memory.get_messages`` as LangChain messages (LC-6, MSG-2 .. MSG-9).

        Where ``messages`` is every turn, this is a request a chat model
        accepts within ``token_budget``: the system message (``system`` and
        the facts that fit) as a ``SystemMessage``, then whole tool-call
        units of the recent turns, from a user message on, with the newest
        question always in. A shared memory is brought up to date first (LC-11).

        Args:
            token_budget: The most tokens the messages may count.
            query: Rank the facts that share its words first. Defaults to None.
            tokenizer: Counts tokens, as for ``get_context``. None, the default, means the memory's.
            must_keep: Facts of at least this importance are always in. Defaults to None.
            facts_share: The share of the budget kept for facts. None, the default, means 0.5.
            system: The app's own system prompt. Defaults to None.
            cut: ``"stable"``, the default, cuts the history only at marks, so consecutive requests
                share their start (MSG-11); None or ``"newest"`` fills it newest first (INT-2).
            low_mark: The stable cut's low mark, as for ``get_messages``. Defaults to 0.5
                (``ADAPTER_LOW_MARK``, INT-2).
            facts_at: Where the facts go, ``"system"``, ``"end"`` or ``"start"`` (MSG-12). Defaults to None.
            keep_results: Clear the tool results of all but the newest turns before any is left out
                (MSG-15). Defaults to None (``ADAPTER_KEEP_RESULTS``, INT-2): none cleared.
            exclude_tools: Names of tools whose results are never cleared (MSG-16). Defaults to None.

        Returns:
            A new list of new LangChain messages.

        Raises:
            TokenBudgetError: The budget cannot hold the system prompt, the must-keep facts and
                the newest question (MSG-9).

        Examples:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> history = SentinelChatMessageHistory(mem)
            >>> history.add_messages([AIMessage("Welcome!"), HumanMessage("Any nuts in the risotto?")])
            >>> [m.type for m in history.get_messages(100, system="You are a waiter.")]
            ['system', 'human']
        """
        result = current(self._memory).get_messages(
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            system=system,
            cut=cut,
            low_mark=low_mark,
            facts_at=facts_at,
            keep_results=keep_results,
            exclude_tools=exclude_tools,
        )
        return messages_from_turns(result.messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store the messages as the memory's next turns, in order, all or nothing (LC-2).

        Every message is converted first, with ``turn_from_message``, and the
        batch is one ``memory.add_messages`` (MSG-6): checked whole (a
        ``ToolMessage`` must answer an open call), then stored in one change
        (one transaction, one autosave), so another writer's turns cannot come
        between them and the memory's limit and eviction rules apply at once.

        Args:
            messages: The LangChain messages, oldest first.

        Raises:
            TypeError: A message the memory cannot keep (see ``turn_from_message``).
            ValueError: A ``ChatMessage`` of a role outside the chat API's, or a ``ToolMessage``
                that answers no open call (MSG-6).

        Examples:
            >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> history = SentinelChatMessageHistory(mem)
            >>> history.add_messages([HumanMessage("Hi"), ToolMessage("42", tool_call_id="call-1")])
            Traceback (most recent call last):
            sentinel_memory.core.errors.NoOpenCallError: messages[1].tool_call_id: 'call-1' answers no open call (open: none)
            >>> call = {"name": "weather", "args": {"city": "Brno"}, "id": "call-1"}
            >>> history.add_messages([HumanMessage("Hi"), AIMessage("", tool_calls=[call]), ToolMessage("4", tool_call_id="call-1")])
            >>> [m.type for m in history.messages]
            ['human', 'ai', 'tool']
        """
        turns = turns_from_messages(messages)
        if not turns:
            return
        self._memory.add_messages(turns, importance=self._importance, ttl=self._ttl)

    def clear(self) -> None:
        """Forget every turn of the memory and nothing else (LC-3).

        The facts (every entry that is not a turn, MSG-1), the L0 cache and
        the L1 working memory stay. The turns are forgotten in
        one transaction saved once (MW-6, MW-10). The next turn keeps counting
        from the largest ``chat:N`` this memory has held (ENT-16).

        Examples:
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> history = SentinelChatMessageHistory(mem)
            >>> _ = mem.remember("user:name", "Jakub")
            >>> history.add_user_message("Hi")
            >>> history.clear()
            >>> history.messages, list(mem)
            ([], ['user:name'])
        """
        with held(self._memory):
            keys = [key for key, data in self._memory.items() if is_turn_key(key) and chat_message(data) is not None]
            for key in keys:
                self._memory.forget(key)

    async def aget_messages(self) -> list[BaseMessage]:
        """``messages``, read in LangChain's executor so a store's I/O never blocks the event loop (LC-4).

        Returns:
            What ``messages`` returns, a new list of the turns as LangChain messages, oldest first.
        """
        return await run_in_executor(None, lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """``add_messages(messages)``, run in LangChain's executor (LC-4).

        Args:
            messages: The LangChain messages, oldest first.

        Raises:
            TypeError: As ``add_messages`` does.
            ValueError: As ``add_messages`` does.

        Examples:
            >>> import asyncio
            >>> from langchain_core.messages import HumanMessage
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> history = SentinelChatMessageHistory(mem)
            >>> asyncio.run(history.aadd_messages([HumanMessage("Hi")]))
            >>> [m.content for m in asyncio.run(history.aget_messages())]
            ['Hi']
        """
        await run_in_executor(None, self.add_messages, messages)

    async def aclear(self) -> None:
        """``clear()``, run in LangChain's executor (LC-4)."""
        await run_in_executor(None, self.clear)
