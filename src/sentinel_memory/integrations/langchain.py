"""A LangChain chat history backed by a memory (LC-1 .. LC-5); the optional extra ``[langchain]``.

``SentinelChatMessageHistory(memory)`` is a LangChain
``BaseChatMessageHistory`` whose messages are the memory's chat turns
(MSG-1): what LangChain adds lands as ``add_turn(role, text)``, so the
turns are saved with the memory, survive a restart, count against its
``limit`` and are evicted by its rules like any entry, while the facts the
memory keeps beside them stay untouched by ``clear()``.

The package itself never imports this module, so ``import sentinel_memory``
never needs LangChain (LC-5, DEP-1); importing this module without
``langchain-core`` raises an ``ImportError`` that names the extra.

The memory keeps a turn's role and text, nothing else (ENT-16). So a
message's ``id``, ``name``, metadata and non-text content blocks are not
kept, and tool traffic, which a chat model cannot be given back without
its call ids, is refused rather than kept in part (LC-2).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..core.jsondata import is_json_text
from ..core.options import Duration
from ..core.shown import shown
from ..core.turns import is_turn_key, message_of, turn_number
from ..folder import MemoryFolder
from ..memory import Memory

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
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


def message_from_turn(role: str, content: str) -> BaseMessage:
    """The LangChain message a turn's role and content read back as (LC-1).

    A ``HumanMessage`` for ``"user"``, an ``AIMessage`` for ``"assistant"``, a
    ``SystemMessage`` for ``"system"``, and a ``ChatMessage`` carrying the role
    for any other role (``"tool"`` included: a ``ToolMessage`` needs a
    ``tool_call_id``, which a turn does not keep).

    Args:
        role: The turn's role, as ``add_turn`` stored it.
        content: The turn's text.

    Returns:
        A new LangChain ``BaseMessage`` of the type the role reads back as.

    Examples:
        >>> from sentinel_memory.integrations.langchain import message_from_turn
        >>> message_from_turn("assistant", "Hello!").type
        'ai'
        >>> message_from_turn("critic", "Too long.").role
        'critic'
    """
    kind = _READ.get(role)
    if kind is not None:
        return kind(content=content)
    return ChatMessage(role=role, content=content)


def turn_from_message(message: BaseMessage) -> tuple[str, str]:
    """The ``(role, text)`` a LangChain message is stored as, by ``add_turn`` (LC-2).

    ``HumanMessage`` is ``"user"``, ``AIMessage`` ``"assistant"``,
    ``SystemMessage`` ``"system"`` and ``ChatMessage`` its own role. The text
    is the content when that is a ``str``; a list of content blocks gives its
    text parts, plain strings and ``{"type": "text", "text": ...}`` blocks,
    joined with nothing between them, as LangChain's ``message.text`` joins
    them. Other blocks (images, audio, reasoning) are not kept: the memory
    keeps text. A message with no text part is stored with the empty text.

    Args:
        message: The LangChain message to store.

    Returns:
        ``(role, text)``, both str.

    Raises:
        TypeError: ``message`` is not a ``BaseMessage``; or it is a ``ToolMessage``, a
            ``FunctionMessage``, an ``AIMessage`` with tool calls, or any other message type (a turn
            keeps no tool call ids, and half a tool exchange given back to a chat model is an error
            there); or its role or text is not JSON text (a lone surrogate, ENT-2).
        ValueError: A ``ChatMessage`` with an empty role (ENT-16).

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> from sentinel_memory.integrations.langchain import turn_from_message
        >>> turn_from_message(HumanMessage(content=["Is it ", {"type": "text", "text": "vegan?"}]))
        ('user', 'Is it vegan?')
    """
    if not isinstance(message, BaseMessage):
        raise TypeError(f"a chat history holds LangChain messages, got {shown(message)}")
    role: str
    if isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage):
        if message.tool_calls or message.invalid_tool_calls:
            raise TypeError(
                "an AIMessage with tool calls cannot be kept as a chat turn: a turn keeps a role and a text, "
                "not the calls; keep tool exchanges out of the history (LangGraph's checkpointers keep them)"
            )
        role = "assistant"
    elif isinstance(message, SystemMessage):
        role = "system"
    elif isinstance(message, ChatMessage):
        role = message.role
        if not isinstance(role, str):
            raise TypeError(f"a ChatMessage's role must be a str, got {shown(role)}")
        if not role:
            raise ValueError("a ChatMessage's role must not be empty")
    else:
        raise TypeError(
            f"a {type(message).__name__} cannot be kept as a chat turn: a turn keeps a role and a text "
            "(user, assistant, system, or a ChatMessage's role), not tool call ids"
        )
    text = _text_of(message.content)
    for name, value in (("role", role), ("text", text)):
        if not is_json_text(value):
            raise TypeError(f"a message's {name} must be JSON text (no lone surrogates), got {shown(value)}")
    return role, text


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
                message = message_of(data)
                if message is not None:
                    turns.append((turn_number(key), message))
        turns.sort(key=lambda turn: turn[0])  # stable: entries of one N stay oldest first
        return [message_from_turn(role, content) for _, (role, content) in turns]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store each message as the memory's next turn, in order (LC-2).

        Every message is converted first, with ``turn_from_message``, so a batch
        with one message that cannot be kept stores nothing. The turns are
        then added in one ``memory.transaction()`` (MW-6): another writer's
        turns cannot come between them. Each is one ``add_turn``, with its
        autosave and its compaction, so the memory's limit and eviction
        rules apply at once.

        Args:
            messages: The LangChain messages, oldest first.

        Raises:
            TypeError: A message the memory cannot keep (see ``turn_from_message``).
            ValueError: A ``ChatMessage`` with an empty role.

        Examples:
            >>> from langchain_core.messages import HumanMessage, ToolMessage
            >>> from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
            >>> history = SentinelChatMessageHistory(mem)
            >>> history.add_messages([HumanMessage("Hi"), ToolMessage("42", tool_call_id="call-1")])
            Traceback (most recent call last):
            TypeError: a ToolMessage cannot be kept as a chat turn: ...
            >>> history.messages
            []
        """
        turns = [turn_from_message(message) for message in messages]
        if not turns:
            return
        with self._memory.transaction():
            for role, text in turns:
                self._memory.add_turn(role, text, importance=self._importance, ttl=self._ttl)

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
            keys = [key for key, data in self._memory.items() if is_turn_key(key) and message_of(data) is not None]
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
