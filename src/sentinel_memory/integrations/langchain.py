"""A LangChain chat history backed by a memory (LC-1 .. LC-6); the optional extra ``[langchain]``.

``SentinelChatMessageHistory(memory)`` is a LangChain
``BaseChatMessageHistory`` whose messages are the memory's chat turns
(MSG-1): what LangChain adds lands as ``add_messages`` of chat-completions
messages (MSG-5), so the turns, tool calls and tool results included, are
saved with the memory, survive a restart, count against its ``limit`` and
are evicted by its rules like any entry, while the facts the memory keeps
beside them stay untouched by ``clear()``. ``get_messages(token_budget)``
is the budgeted view next to LangChain's unbounded ``messages``: a valid
request by the memory's rules (MSG-2 .. MSG-9), as LangChain messages.

The package itself never imports this module, so ``import sentinel_memory``
never needs LangChain (LC-5, DEP-1); importing this module without
``langchain-core`` raises an ``ImportError`` that names the extra.

A turn keeps what the chat API takes: the role, the text, an assistant's
tool calls (id, name, arguments) and a tool result's call id. A message's
``id``, metadata and non-text content blocks are not kept (LC-2).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..core.chat import ROLES
from ..core.jsondata import is_json_text
from ..core.options import Duration
from ..core.shown import shown
from ..core.tokens import TokenizerLike
from ..core.turns import chat_message, is_turn_key, turn_number
from ..folder import MemoryFolder
from ..memory import Memory

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

__all__ = ["SentinelChatMessageHistory", "message_from_turn", "turn_from_message"]

#: LC-1: the roles read back as LangChain's own message types; any other role is a ``ChatMessage``.
_READ: dict[str, type[HumanMessage | AIMessage | SystemMessage]] = {
    "user": HumanMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
}


def message_from_turn(
    role: str,
    content: str | None,
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    tool_call_id: str | None = None,
) -> BaseMessage:
    """The LangChain message a turn reads back as (LC-1).

    A ``HumanMessage`` for ``"user"``, an ``AIMessage`` for ``"assistant"``
    (with its ``tool_calls``, each call's arguments parsed from their JSON
    text; arguments that are not a JSON object make it an invalid tool
    call, as LangChain's own parsers do), a ``SystemMessage`` for
    ``"system"``, a ``ToolMessage`` for ``"tool"`` with its ``tool_call_id``,
    and a ``ChatMessage`` carrying the role for any other role
    (``developer``, or a turn stored before roles were checked).

    Args:
        role: The turn's role.
        content: The turn's text (None on an assistant message that only calls tools).
        tool_calls: An assistant's calls in the chat-completions form. Defaults to none.
        tool_call_id: A tool result's call id. Defaults to None.

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
    """
    text = content if content is not None else ""
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
        return AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid)
    if role == "tool" and tool_call_id is not None:
        return ToolMessage(content=text, tool_call_id=tool_call_id)
    kind = _READ.get(role)
    if kind is not None:
        return kind(content=text)
    return ChatMessage(role=role, content=text)


def _from_message(message: dict[str, Any]) -> BaseMessage:
    content = message["content"]
    if isinstance(content, list):
        content = "".join(part["text"] for part in content if part.get("type") == "text")
    return message_from_turn(
        message["role"], content, tool_calls=message.get("tool_calls", ()), tool_call_id=message.get("tool_call_id")
    )


def turn_from_message(message: BaseMessage) -> dict[str, Any]:
    """The chat-completions message a LangChain message is stored as (LC-2, MSG-5).

    ``HumanMessage`` is ``"user"``, ``AIMessage`` ``"assistant"`` with its
    ``tool_calls`` (each ``{"id", "type": "function", "function": {"name",
    "arguments"}}``, the arguments as JSON text), ``SystemMessage``
    ``"system"``, ``ToolMessage`` ``"tool"`` with its ``tool_call_id``, and
    ``ChatMessage`` its own role, which must be one of the chat API's
    (MSG-5). The content is the text: a ``str`` content itself; a list of
    content blocks gives its text parts, plain strings and ``{"type":
    "text", "text": ...}`` blocks, joined with nothing between them, as
    LangChain's ``message.text`` joins them. Other blocks (images, audio,
    reasoning) are not kept. An ``AIMessage`` with calls and no text keeps
    the content None.

    Args:
        message: The LangChain message to store.

    Returns:
        A new dict: ``role`` and ``content``, and ``tool_calls`` or ``tool_call_id`` when it has them.

    Raises:
        TypeError: ``message`` is not a ``BaseMessage``; or it is a ``FunctionMessage``, an
            ``AIMessage`` with invalid tool calls, or any other message type; or its text is not
            JSON text (a lone surrogate, ENT-2).
        ValueError: A ``ChatMessage`` whose role is not one of the chat API's (MSG-5).

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> from sentinel_memory.integrations.langchain import turn_from_message
        >>> turn_from_message(HumanMessage(content=["Is it ", {"type": "text", "text": "vegan?"}]))
        {'role': 'user', 'content': 'Is it vegan?'}
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"a chat history holds LangChain messages, got {shown(message)}")
    text = _text_of(message.content)
    if not is_json_text(text):
        raise TypeError(f"a message's text must be JSON text (no lone surrogates), got {shown(text)}")
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": text}
    if isinstance(message, AIMessage):
        if message.invalid_tool_calls:
            raise TypeError(
                "an AIMessage with invalid tool calls cannot be kept: a chat API takes no call it cannot parse"
            )
        if not message.tool_calls:
            return {"role": "assistant", "content": text}
        calls = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["args"], ensure_ascii=False)},
            }
            for call in message.tool_calls
        ]
        return {"role": "assistant", "content": text or None, "tool_calls": calls}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": text}
    if isinstance(message, ToolMessage):
        return {"role": "tool", "content": text, "tool_call_id": message.tool_call_id}
    if isinstance(message, ChatMessage):
        role = message.role
        if not isinstance(role, str):
            raise TypeError(f"a ChatMessage's role must be a str, got {shown(role)}")
        if role not in ROLES:
            raise ValueError(f"a ChatMessage's role must be one of {', '.join(ROLES)}, got {shown(role)}")
        return {"role": role, "content": text}
    raise TypeError(
        f"a {type(message).__name__} cannot be kept as a chat turn: a turn is a chat-completions message "
        "(user, assistant with tool calls, system, tool with its call id, or a ChatMessage of a chat role)"
    )


def _text_of(content: Any) -> str:
    """A message content's text: the str itself, or the text parts of a list of blocks, joined (LC-2)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError(f"a message's content must be a str or a list of content blocks, got {shown(content)}")
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


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
        returns a new list of new messages.
        """
        turns = []
        for key, data in self._memory.items():  # live entries, oldest first, copies
            if is_turn_key(key):
                message = chat_message(data)
                if message is not None:
                    turns.append((turn_number(key), message))
        turns.sort(key=lambda turn: turn[0])  # stable: entries of one N stay oldest first
        return [_from_message(message) for _, message in turns]

    def get_messages(
        self,
        token_budget: int | float,
        *,
        query: str | None = None,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        system: str | None = None,
    ) -> list[BaseMessage]:
        """The budgeted view: ``memory.get_messages`` as LangChain messages (LC-6, MSG-2 .. MSG-9).

        Where ``messages`` is every turn, this is a request a chat model
        accepts within ``token_budget``: the system message (``system`` and
        the facts that fit) as a ``SystemMessage``, then whole tool-call
        units of the recent turns, from a user message on, with the newest
        question always in.

        Args:
            token_budget: The most tokens the messages may count.
            query: Rank the facts that share its words first. Defaults to None.
            tokenizer: Counts tokens, as for ``get_context``. None, the default, means the memory's.
            must_keep: Facts of at least this importance are always in. Defaults to None.
            facts_share: The share of the budget kept for facts. None, the default, means 0.5.
            system: The app's own system prompt. Defaults to None.

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
        result = self._memory.get_messages(
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            system=system,
        )
        return [_from_message(message) for message in result.messages]

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
            ValueError: messages[1].tool_call_id: 'call-1' answers no open call (open: none)
            >>> call = {"name": "weather", "args": {"city": "Brno"}, "id": "call-1"}
            >>> history.add_messages([HumanMessage("Hi"), AIMessage("", tool_calls=[call]), ToolMessage("4", tool_call_id="call-1")])
            >>> [m.type for m in history.messages]
            ['human', 'ai', 'tool']
        """
        turns = [turn_from_message(message) for message in messages]
        if not turns:
            return
        self._memory.add_messages(turns, importance=self._importance, ttl=self._ttl)

    def clear(self) -> None:
        """Forget every turn of the memory and nothing else (LC-3).

        The facts (every entry that is not a turn, MSG-1), the L0 cache and
        the L1 working memory stay. The turns are forgotten in
        one ``memory.transaction()`` (MW-6). The next turn keeps counting
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
        with self._memory.transaction():
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
