"""What the framework adapters share to serve many users from one agent (SRV-1 .. SRV-3).

A server keeps one agent (one LangChain agent, one pydantic-ai ``Agent``,
one Agents SDK ``RunConfig``) for all its users and tells them apart by what
each call carries: a thread id, a session id, the run's context or deps. An
adapter given a ``MemoryFolder`` (or ``RedisMemories``, anything whose
``open(user_id)`` returns a ``Memory``) picks the memory of each call from
that id through ``UserMemories``: opened once, kept while used, shared
(FLD-3), so several processes on one folder lose nothing.

The other pieces are what every adapter needs around a memory that others
change: ``current`` brings a shared memory up to date before a read (SRV-2),
``stored_tail`` and ``unseen`` tell a history the client sent again from
what is new (SRV-3), and ``UserMemories.run_lock`` runs one user's runs one
at a time (SRV-4).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import core
from .core.cut import CUTS, FACTS_AT, check_choice
from .core.expiry import is_past
from .core.jsondata import clone
from .core.options import is_number
from .core.request import _tool_names
from .core.shown import shown
from .core.turns import chat_message, resent_count
from .core.values import Messages
from .memory import Memory

__all__ = [
    "UserMemories",
    "check_reserve",
    "current",
    "held",
    "is_memories",
    "live_turns",
    "newest_turns",
    "run_view",
    "shared_request",
    "stored_tail",
    "unseen",
]

#: INT-2: the cut the LangChain middleware, ``SentinelHistory`` and ``SentinelChatMessageHistory.get_messages``
#: make unless told otherwise: at marks (MSG-11), so consecutive model calls share their start.
ADAPTER_CUT = "stable"
#: INT-2: their low mark (MSG-11) unless told otherwise.
ADAPTER_LOW_MARK = 0.5
#: INT-2: the middleware's and ``SentinelHistory``'s ``keep_results`` (MSG-15) unless told otherwise.
ADAPTER_KEEP_RESULTS: int | None = None

#: SRV-1: how many users' memories a ``UserMemories`` keeps open unless told otherwise.
KEEP_OPEN = 1024


def is_memories(source: object) -> bool:
    """Whether ``source`` opens per-user memories: it has a callable ``open`` and is no ``Memory`` (SRV-1).

    Args:
        source: What an adapter was given.

    Returns:
        True for a ``MemoryFolder``, a ``RedisMemories`` or any object with ``open(user_id)``.
    """
    return not isinstance(source, Memory) and callable(getattr(source, "open", None))


class UserMemories:
    """The memory of each user id, opened from ``memories`` on first use and kept (SRV-1).

    At most ``keep`` memories stay open, the least recently used closed
    first; a user whose memory was closed gets it opened again, from its
    store, so nothing is lost. Thread-safe.

    Args:
        memories: A ``MemoryFolder``, a ``RedisMemories``, or anything whose ``open(user_id)``
            returns a ``Memory``.
        keep: How many memories stay open. Defaults to 1024.

    Raises:
        TypeError: ``memories`` has no ``open``, or ``keep`` is not an int >= 1.

    Examples:
        >>> from sentinel_memory import MemoryFolder
        >>> from sentinel_memory.serving import UserMemories
        >>> users = UserMemories(MemoryFolder(tmp / "users"))
        >>> users.get("alice") is users.get("alice"), users.get("alice") is users.get("bob")
        (True, False)
    """

    def __init__(self, memories: Any, *, keep: int = KEEP_OPEN) -> None:
        if not is_memories(memories):
            raise TypeError(
                f"memories must open a memory per user (a MemoryFolder, RedisMemories), got {shown(memories)}"
            )
        if type(keep) is not int or keep < 1:
            raise TypeError(f"keep must be an int >= 1, got {shown(keep)}")
        self.memories = memories
        self._keep = keep
        self._open: OrderedDict[str, Memory] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"UserMemories({self.memories!r})"

    def get(self, user_id: str) -> Memory:
        """``user_id``'s memory: the one kept open, or ``memories.open(user_id)`` (SRV-1).

        Args:
            user_id: Whose memory: any non-empty str.

        Returns:
            The user's ``Memory``; the same object while it stays open.

        Raises:
            TypeError: ``user_id`` is not a non-empty str.
        """
        if not isinstance(user_id, str) or not user_id:
            raise TypeError(f"a user id must be a non-empty str, got {shown(user_id)}")
        with self._lock:
            memory = self._open.get(user_id)
            if memory is not None:
                self._open.move_to_end(user_id)
                return memory
        opened = self.memories.open(user_id)
        if not isinstance(opened, Memory):
            raise TypeError(f"{self.memories!r}.open({user_id!r}) returned {shown(opened)}, not a Memory")
        closing: list[Memory] = []
        with self._lock:
            memory = self._open.setdefault(user_id, opened)
            self._open.move_to_end(user_id)
            while len(self._open) > self._keep:
                closing.append(self._open.popitem(last=False)[1])
        if memory is not opened:
            closing.append(opened)  # another thread opened it first: one memory per user
        for extra in closing:
            extra.close()
        return memory

    def close(self) -> None:
        """Close every memory kept open (WRP-5); a later ``get`` opens them again."""
        with self._lock:
            memories = list(self._open.values())
            self._open.clear()
        for memory in memories:
            memory.close()


def current(memory: Memory) -> Memory:
    """``memory``, reloaded first when it is shared and another writer saved since it last looked (SRV-2, MW-6).

    A memory that is not shared is its own only writer, and is read as it is.

    Args:
        memory: The memory about to be read.

    Returns:
        ``memory``.
    """
    if memory._plumbing.shared:
        with memory.transaction():
            pass
    return memory


@contextlib.contextmanager
def held(memory: Memory) -> Iterator[Memory]:
    """``memory`` held for one adapter step: a transaction (MW-6) whose changes are one save, a group (MW-10, SRV-5).

    What an adapter reads and changes in one step (the newest turns it
    compares, the turns it stores or forgets) sees every other writer's
    saved changes, and is saved once at the end; a step that raises stores
    nothing.

    Args:
        memory: The memory the step changes.

    Yields:
        ``memory``.
    """
    with memory.transaction(), memory.group():
        yield memory


def newest_turns(memory: Memory, count: int) -> list[tuple[str, dict[str, Any]]]:
    """The newest ``count`` live turns of ``memory`` (``chat:N`` keys), oldest first, with their messages (SRV-3, MSG-1).

    Walks back from the largest ``N`` the memory has stored, so it reads
    only the turns it returns (and the numbers of turns gone since).

    Args:
        memory: The memory.
        count: How many of the newest turns, >= 0.

    Returns:
        A new list of at most ``count`` pairs ``(key, message)``, each message a new copy.
    """
    return [(key, clone(message)) for key, message in _newest_turns(memory, count)]


def _newest_turns(memory: Memory, count: int) -> list[tuple[str, dict[str, Any]]]:
    """``newest_turns`` with each message as the memory holds it (MSG-18): read it, never change it."""
    state = memory.state
    entries = state.entries
    now = memory._now()
    number = state.turns
    while f"chat:{number + 1}" in entries:  # a state built by hand may hold turns past its counter
        number += 1
    found: list[tuple[str, dict[str, Any]]] = []
    while number > 0 and len(found) < count:
        key = f"chat:{number}"
        entry = entries.get(key)
        if entry is not None and not is_past(entry.expires_at, now):
            message = chat_message(entry.data, owned=True)  # read only
            if message is not None:
                found.append((key, message))
        number -= 1
    found.reverse()
    return found


def live_turns(memory: Memory) -> list[tuple[str, Any]]:
    """Every live turn of ``memory`` in ascending ``N`` (of one ``N``, oldest first), with its data (MSG-1, MSG-18).

    The data is the memory's own, not a copy: read it, never change it, and
    copy what leaves the adapter. Nothing is copied, so an adapter that keeps
    what it made of a turn (by the data's identity: a change stores new data)
    reads a long conversation without converting every turn again.

    Args:
        memory: The memory, brought up to date by the caller when it is shared (``current``).

    Returns:
        A new list of ``(key, data)`` pairs.
    """
    now = memory._now()
    return [
        (item[-1].key, item[-1].data)
        for item in memory.state.index.split().turns
        if not is_past(item[-1].expires_at, now)
    ]


def stored_tail(memory: Memory, count: int) -> list[dict[str, Any]]:
    """The messages of the newest ``count`` live turns of ``memory``, oldest first (SRV-3, MSG-1).

    Args:
        memory: The memory.
        count: How many of the newest turns, >= 0.

    Returns:
        A new list of at most ``count`` message dicts.
    """
    return [message for _, message in newest_turns(memory, count)]


def unseen(memory: Memory, turns: Sequence[Mapping[str, Any]]) -> int:
    """How many of ``turns`` lead with the memory's newest turns, sent again (SRV-3): ``resent_count`` on the tail.

    Args:
        memory: The memory the turns are about to be stored in.
        turns: The new turns, in the stored form (MSG-5), oldest first.

    Returns:
        How many of the leading ``turns`` are already the memory's newest turns; store the rest.
    """
    return resent_count([message for _, message in _newest_turns(memory, len(turns))], turns)  # compared only


def run_view(memory: Memory, run: Sequence[str], *, shared: bool = False, **options: Any) -> Messages:
    """``memory.get_messages(**options)`` as the run that stored the turns ``run`` sees it: its turns last (SRV-4).

    When the memory's newest turns are the run's own, this is
    ``get_messages`` itself. When another run of the same memory stored
    turns after some of this run's (two requests of one user at once), the
    request is built from the memory with the run's turns moved after
    everything else, in their order, at this moment; the memory is not
    changed. So a run's own question is the newest user message of each of
    its requests, and its tool calls are followed by their results.

    Args:
        memory: The memory.
        run: The keys of the turns this run stored, in order.
        shared: The messages and entries as the memory holds them (``shared_request``), for an adapter
            that copies what it hands out. Defaults to False (``get_messages``' own copies).
        **options: ``get_messages``' keyword arguments (``token_budget``, ``query``, ...).

    Returns:
        A ``Messages``, as ``get_messages`` returns.

    Raises:
        TokenBudgetError: As ``get_messages``.
    """
    if not run or [key for key, _ in _newest_turns(memory, len(run))] == list(run):
        return shared_request(memory, **options) if shared else memory.get_messages(**options)
    now = memory._now()
    state = memory.state
    moved = []
    for key in run:
        entry = core.get_entry(state, key, now=now)
        message = None if entry is None else chat_message(entry.data)
        if message is not None:
            state, _ = core.forget(state, key, now=now)
            moved.append(message)
    state, _, _ = core.add_messages(state, moved, now=now)
    return (core.shared_messages if shared else core.messages)(state, now=now, **options)


def shared_request(memory: Memory, **options: Any) -> Messages:
    """``memory.get_messages(**options)`` without its copies, for an adapter that copies what it hands out (MSG-18).

    A message of a stored turn may be the turn's data itself, and the
    entries are the memory's own: read them, never change them. An adapter
    converts them to its framework's objects (new ones each call) or copies
    them before they leave it, so what it returns is the caller's to change,
    as ``get_messages``' result is.

    Args:
        memory: The memory, brought up to date by the caller when it is shared (``current``).
        **options: ``get_messages``' keyword arguments.

    Returns:
        A ``Messages`` whose messages and entries may be the memory's own.

    Raises:
        TokenBudgetError: As ``get_messages``.
    """
    return memory._messages(core.shared_messages, **options)


def check_reserve(reserve: object, token_budget: object) -> int | float:
    """``reserve``, checked: a finite number >= 0 of tokens, at most ``token_budget`` (LC-13, PAI-11, OAI-11).

    Args:
        reserve: The tokens an adapter keeps for what the framework sends beside the messages.
        token_budget: The request's whole budget (None: no budget, any reserve).

    Returns:
        ``reserve``.

    Raises:
        TypeError: ``reserve`` is not a number (a bool is not one).
        ValueError: ``reserve`` is negative, not finite, or more than ``token_budget``.
    """
    if isinstance(reserve, bool) or not isinstance(reserve, int | float):
        raise TypeError(f"reserve must be a number of tokens, got {shown(reserve)}")
    if not is_number(reserve) or reserve < 0:
        raise ValueError(f"reserve must be a finite number of tokens >= 0, got {shown(reserve)}")
    if is_number(token_budget) and reserve > token_budget:  # type: ignore[operator]
        raise ValueError(f"reserve ({reserve}) is more than the token_budget ({token_budget})")
    return reserve


def request_options(
    *,
    cut: str | None,
    low_mark: float | None,
    facts_at: str | None,
    keep_results: int | None,
    exclude_tools: Sequence[str] | None,
) -> dict[str, Any]:
    """The options of ``get_messages`` an adapter passes on to each request, checked at once (INT-2).

    Args:
        cut: ``"stable"`` or ``"newest"`` (MSG-11); None is ``get_messages``' default, ``"newest"``.
        low_mark: The stable cut's low mark (MSG-11).
        facts_at: Where the facts go (MSG-12).
        keep_results: Clear the tool results of all but the newest units before any turn is left out (MSG-15).
        exclude_tools: Names of tools whose results are never cleared (MSG-16).

    Returns:
        The keyword arguments for ``get_messages``.

    Raises:
        TypeError: ``cut`` or ``facts_at`` is not a str, or ``exclude_tools`` not a list or tuple of str.
        ValueError: ``cut`` or ``facts_at`` is not one of its names.
    """
    check_choice("cut", cut, CUTS)
    check_choice("facts_at", facts_at, FACTS_AT)
    names = None if exclude_tools is None else sorted(_tool_names(exclude_tools))
    return {
        "cut": cut,
        "low_mark": low_mark,
        "facts_at": facts_at,
        "keep_results": keep_results,
        "exclude_tools": names,
    }
