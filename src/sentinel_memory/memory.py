"""The thin stateful wrapper: a clock, a store and callbacks around the pure core (WRP-1 .. WRP-3, MW-1 .. MW-6).

Each method reads the clock once (TIME-1), calls one function of
``sentinel_memory.core``, and then does the side effects the core may not
do, in this order:

1. ``on_evict(compaction)`` when an automatic compaction dropped something;
2. the store saves, when autosave is on and the change is persisted: the
   whole document, or only what changed when the store can take that (MW-4);
3. only then does the memory hold the new state.

If any step raises, the memory keeps its old state: a call that raises leaves
the memory as it was (an archive may have seen the dropped entries already,
which can repeat them later but never loses them).

While steps 1 and 2 run, the memory is in the middle of a change. A change
asked for then, from ``on_evict`` or the store on the same thread, would be
overwritten by step 3, so it raises ``ReentrantCallError`` instead
(WRP-3); reads are fine and see the state before the change.

**Threads** (MW-5). A change holds the memory's lock from reading the state
to keeping the new one, so changes from many threads apply one at a time and
none is lost; ``on_evict`` and the store see them one at a time, in the order
they are kept. Reads take no lock: they see the last kept state.

**Processes** (MW-1 .. MW-3, MW-6). Every saved document carries a
generation, one more than the one before. A memory remembers the generation
it last loaded or saved, and a store refuses a save that does not follow the
generation it holds (``ConflictError``): two processes can no longer
overwrite each other's changes silently. ``Memory.transaction`` holds
the store's lock, reloads when someone else saved since, and keeps the lock
while the block changes and saves; ``create_memory(shared=True)`` makes
every change such a transaction.

A load that drops entries says so (PER-14): a ``LoadWarning``, the
result kept as ``Memory.last_load``, and the store's ``preserve()``
called before the next save overwrites the original.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

from . import core, shell, telemetry
from .core.options import Duration, _caller_level, require_bool, require_callable
from .core.state import MemoryState
from .core.tokens import TokenizerLike
from .core.values import JSON, Compaction, Entry, LoadResult, Ranking
from .reading import Reads
from .shell import Counters
from .stores.contract import MemoryStore, Store, check_store, is_async_store

__all__ = ["CacheMemory", "Memory", "WorkingMemory", "create_memory", "wall_clock"]


#: The type of a ``default`` that ``get`` hands back when there is no live value.
T = TypeVar("T")


def wall_clock() -> int:
    """Milliseconds since the epoch, as integers (TIME-1): the clock a memory uses unless given one.

    Returns:
        The current time in whole milliseconds since 1970-01-01 UTC.

    Examples:
        >>> from sentinel_memory.memory import wall_clock
        >>> wall_clock() > 1_700_000_000_000
        True
    """
    return time.time_ns() // 1_000_000


class Memory(Reads[JSON]):
    """A memory with a current state, a clock, a store and an optional ``on_evict``.

    Create one with ``create_memory``, which checks the options; the
    constructor takes them as they are. A memory is safe to share between
    threads. It is also a read-only ``Mapping`` of the live keys to their
    data: ``mem["user:name"]``, ``list(mem)``, ``mem.items()`` (ENT-15).
    ``mem.cache`` is its ``CacheMemory`` and ``mem.working`` its
    ``WorkingMemory``.

    Args:
        state: The ``MemoryState`` it starts from.
        store: Where it loads from and saves to.
        clock: Returns the time in milliseconds since the epoch, read once per call (TIME-1).
        autosave: Save after every change that is persisted.
        on_evict: Called with the ``Compaction`` of every automatic compaction that dropped
            something, or None.
        shared: Make every persisted change a ``Memory.transaction`` of its own (MW-6).
            Defaults to False.

    Examples:
        >>> mem.remember("user:name", "Jakub").key
        'user:name'
        >>> mem["user:name"], "user:name" in mem, len(mem)
        ('Jakub', True, 1)
    """

    def __init__(
        self,
        state: MemoryState,
        *,
        store: Store,
        clock: Callable[[], int | float],
        autosave: bool,
        on_evict: Callable[[Compaction], Any] | None,
        shared: bool = False,
    ) -> None:
        # Everything the memory keeps between calls, and every step of a change, is the
        # plumbing's, shared with the async memory; this class drives it (sentinel_memory.shell).
        self._plumbing = shell.Plumbing(
            state, store=store, clock=clock, autosave=autosave, on_evict=on_evict, shared=shared
        )
        self._counters = Counters()  # the line counts of the tokenizer objects passed per call (CTX-12)
        self._lock = threading.RLock()
        self._defer_warnings = False  # AsyncMemory emits them on its loop's thread instead (AIO-3)
        self.cache = CacheMemory(self)
        self.working = WorkingMemory(self)

    # -- the plumbing every method shares ---------------------------------

    @property
    def _state(self) -> MemoryState:
        return self._plumbing.state

    @_state.setter
    def _state(self, state: MemoryState) -> None:
        # Replacing the state whole, by hand (tests do, to read one state at another moment).
        self._plumbing.state = state

    @property
    def store(self) -> Store:
        """The store this memory loads from and saves to."""
        store: Store = self._plumbing.store
        return store

    _store = store

    @property
    def _autosave(self) -> bool:
        return self._plumbing.autosave

    def _now(self) -> int | float:
        """Read the clock once for one operation (TIME-1)."""
        return self._plumbing.now()

    def _run(self, steps: shell.Steps[T]) -> T:
        """Drive one plumbing operation: make each store call it yields, here, and send back the result.

        A call that raises is thrown back into the operation where it asked,
        so its ``finally`` and "nothing happened" rules run as written. A
        heavy call (a load) runs with the cycle collector paused (PER-18).
        The warnings it leaves are emitted at the caller's line, even when it
        raises (PER-14, PER-21).
        """
        try:
            return self._drive(steps)
        finally:
            if not self._defer_warnings:
                self._flush()

    def _flush(self) -> None:
        for warning in self._plumbing.take_warnings():
            warnings.warn(warning, stacklevel=_caller_level())

    @staticmethod
    def _drive(steps: shell.Steps[T]) -> T:
        driven = shell.Driven(steps)
        while (call := driven.call) is not None:
            driven.settle(*_outcome(call))
        return driven.value

    def _begin(self) -> MemoryState:
        """The state a change starts from; refused from inside this memory's own side effects (WRP-3)."""
        self._plumbing.refuse_reentry(threading.get_ident())
        return self._plumbing.state

    def _change(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """One change of ``shell.STEPS``, holding the memory (WRP-3, MW-5, MW-6).

        In shared mode a persisted change is a transaction of its own: the
        store is locked and the state brought up to date first.
        """
        with self._lock:
            self._begin()
            plumbing = self._plumbing
            with telemetry.operation(
                name, plumbing.store, conversation=plumbing.conversation
            ):  # the change's span, the reload's inside (OTL-2)
                if plumbing.needs_transaction(name):
                    # Now and the arguments are checked before the store is locked or read (section 3 of the
                    # protocol), and a change refused after the reload leaves the memory as it was (WRP-1).
                    rehearsal = plumbing.rehearse(name, args, kwargs)
                    before = plumbing.snapshot()
                    try:
                        with self.transaction():
                            return self._run(plumbing.change(name, args, kwargs, threading.get_ident(), rehearsal))
                    except BaseException:
                        plumbing.restore(before)
                        raise
                return self._run(plumbing.change(name, args, kwargs, threading.get_ident()))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Memory]:
        """Hold the store for a read-modify-write across threads and processes (MW-6).

        The block runs with the store's lock held (for a file: its sidecar
        lock). First, when someone else saved the store since this memory
        last loaded or saved it, the memory reloads. Changes in the block
        save as usual (with autosave), under the same lock, so they cannot
        conflict. Blocks may nest; only the outermost takes the lock.

        Yields:
            This memory, brought up to date with the store.

        Raises:
            ConflictError: The store moved on while this memory has changes it has not saved
                (autosave off); a reload would lose them.
            LockTimeoutError: Another writer held the store's lock for longer than its ``lock_wait``.

        Examples:
            >>> with mem.transaction():
            ...     count = mem.get("visits", 0)
            ...     mem.remember("visits", count + 1).data
            1
        """
        plumbing = self._plumbing
        with self._lock:
            self._begin()
            if plumbing.transactions:
                plumbing.transactions += 1
                try:
                    yield self
                finally:
                    plumbing.transactions -= 1
                return
            lock = getattr(plumbing.store, "lock", None)
            with lock() if callable(lock) else contextlib.nullcontext():
                self._run(plumbing.refresh(threading.get_ident()))
                plumbing.transactions += 1
                try:
                    yield self
                finally:
                    plumbing.transactions -= 1

    @contextlib.contextmanager
    def group(self) -> Iterator[Memory]:
        """Make the block's changes one save, at its end; a block that raises keeps none of them (MW-10).

        With autosave, the persisted changes in the block save nothing each:
        the memory saves once when the block ends (only the changes, when the
        store takes them, MW-4). If the block raises, or that save does, the
        memory goes back to what it held when the block began, which is what
        the store holds: a group that raises leaves the memory and its store
        as they were (``on_evict`` may have heard of a compaction in it, as of
        any change that raised, WRP-1). A ``save()`` or a load inside the
        block makes what came before it stored, and a raise goes back no
        further. Other threads' changes wait for the block, as for a
        transaction; with ``shared=True`` the block is a transaction (MW-6):
        the store stays locked until its one save, so no other process's
        change comes in between or is lost. Groups nest; the outermost saves.

        Yields:
            This memory.

        Raises:
            ConflictError: As ``transaction()``, with ``shared=True``; or the group's save conflicted.
            LockTimeoutError: As ``transaction()``, with ``shared=True``.

        Examples:
            >>> with mem.group():
            ...     mem.add_turn("user", "What is on the menu?").key
            ...     mem.remember("topic", "menu").key
            'chat:1'
            'topic'
        """
        plumbing = self._plumbing
        with self._lock:
            self._begin()
            with self.transaction() if plumbing.shared else contextlib.nullcontext():
                plumbing.begin_group()
                try:
                    yield self
                except BaseException:
                    self._run(plumbing.end_group(False))
                    raise
                self._run(plumbing.end_group(True))

    # -- entries -----------------------------------------------------------

    def remember(self, key: str, data: Any, *, importance: float | None = None, ttl: Duration | None = None) -> Entry:
        """Store ``data`` under ``key`` and return a copy of the stored entry (ENT-1 .. ENT-6, NUM-4).

        A new key starts with importance 0.5 unless given; an existing key keeps
        its ``created_at`` and its importance unless a valid new one is given.
        When the memory holds more than ``limit`` entries, the expired ones go
        first, then the least important (``on_evict`` hears about it), and the
        entry just stored can be the one that goes.

        Args:
            key: A non-empty string.
            data: Any JSON value (``None``, bool, int, float, str, list, dict with string keys),
                copied on the way in.
            importance: A number in [0, 1]. Anything else is ignored with an
                ``IgnoredValueWarning``. None, the default, means 0.5 for a new key, the old importance for
                an existing one.
            ttl: How long the entry lives: milliseconds, or a ``datetime.timedelta``. None or 0
                means it never expires. Defaults to None.

        Returns:
            A copy of the stored ``Entry``, also when this very call evicted it.

        Raises:
            TypeError: The key is not a string or the data is not JSON.
            ValueError: The key is empty or the data is nested deeper than ``MAX_DEPTH``.

        Examples:
            >>> from datetime import timedelta
            >>> entry = mem.remember("session:cart", "2 items in the cart", ttl=timedelta(minutes=15))
            >>> entry.expires_at - entry.created_at, entry.importance
            (900000, 0.5)
        """
        entry: Entry = self._change("remember", key, data, importance=importance, ttl=ttl)
        return entry

    def add_turn(self, role: str, text: str, *, importance: float | None = None, ttl: Duration | None = None) -> Entry:
        """Remember one chat turn under the next ``chat:N`` key, as ``{"role": role, "content": text}`` (ENT-16).

        No key to invent and no counter to keep: ``N`` continues from the
        largest ``chat:N`` the memory holds, also after a restart. A turn's
        importance is 0.3 unless given, below a fact's 0.5. In a context its
        line reads ``chat:N: role: text`` (TXT-4), and ``get_messages`` hands
        it back as a message.

        Args:
            role: Who said it: ``"user"``, ``"assistant"``, ``"system"`` or ``"developer"``; a tool
                result needs its call's id, so it goes in with ``add_message``.
            text: What was said.
            importance: A number in [0, 1]. None, the default, means 0.3.
            ttl: How long the turn lives: milliseconds or a ``datetime.timedelta``. Defaults to
                None (for good).

        Returns:
            A copy of the stored ``Entry``, whose ``key`` is the next turn key, ``chat`` and a number.

        Raises:
            TypeError: ``role`` or ``text`` is not a string.
            ValueError: ``role`` is not one of the chat API's (the error names them, MSG-5).

        Examples:
            >>> mem.add_turn("user", "I'm allergic to peanuts").key
            'chat:1'
            >>> mem["chat:1"]
            {'role': 'user', 'content': "I'm allergic to peanuts"}
        """
        entry: Entry = self._change("add_turn", role, text, importance=importance, ttl=ttl)
        return entry

    def add_message(
        self, message: Mapping[str, Any], *, importance: float | None = None, ttl: Duration | None = None
    ) -> Entry:
        """Remember one chat message in the chat-completions form as the next turn (MSG-5, MSG-6).

        The message is what a chat API takes and returns: ``role`` (``system``,
        ``developer``, ``user``, ``assistant`` or ``tool``), ``content`` (a
        string or a list of content parts), an assistant's ``tool_calls``, a
        tool message's ``tool_call_id`` and an optional ``name``. It is stored
        as it is under the next ``chat:N`` key, as ``add_turn`` stores a turn;
        a tool message must answer an open call of the assistant message
        before it.

        Args:
            message: The message, a dict.
            importance: A number in [0, 1]. None, the default, means 0.3.
            ttl: How long the turn lives: milliseconds or a ``datetime.timedelta``. Defaults to None.

        Returns:
            A copy of the stored ``Entry``.

        Raises:
            TypeError: A field has the wrong type (the error names it).
            ValueError: A role outside the chat API's, an unknown or missing field, two calls with
                one id, or a tool message that answers no open call; nothing is stored.
        """
        entry: Entry = self._change("add_message", message, importance=importance, ttl=ttl)
        return entry

    def add_messages(
        self, messages: Sequence[Mapping[str, Any]], *, importance: float | None = None, ttl: Duration | None = None
    ) -> list[Entry]:
        """Remember chat messages in the chat-completions form as turns, in order, all or nothing (MSG-5, MSG-6).

        Every message is checked before any is stored, as ``add_message``
        checks one; then they are stored in one change: one transaction with
        ``shared=True``, one autosave, one ``on_evict`` call.

        Args:
            messages: A list of message dicts.
            importance: A number in [0, 1] for each. None, the default, means 0.3.
            ttl: How long each turn lives. Defaults to None.

        Returns:
            A list of copies of the stored ``Entry`` objects, in order.

        Raises:
            TypeError, ValueError: A message or field is bad; the error names ``messages[i]`` and
                the field, and nothing is stored.
        """
        entries: list[Entry] = self._change("add_messages", messages, importance=importance, ttl=ttl)
        return entries

    def forget(self, key: str) -> bool:
        """Remove the live entry under ``key`` (ENT-8).

        Args:
            key: A non-empty string.

        Returns:
            True when an entry was removed; False, and nothing changes, when there was none
            (an expired entry stays for the next compaction to report).

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> mem.remember("user:name", "Jakub").key
            'user:name'
            >>> mem.forget("user:name"), mem.forget("user:name")
            (True, False)
        """
        removed: bool = self._change("forget", key)
        return removed

    def clear(self) -> None:
        """Remove every entry; the cache and working memory have their own ``clear``.

        Examples:
            >>> mem.remember("user:name", "Jakub").key
            'user:name'
            >>> mem.clear()
            >>> len(mem)
            0
        """
        self._change("clear")

    def compact(self) -> Compaction:
        """Compact now and return what was dropped; ``on_evict`` is for automatic runs only (CMP-3).

        Returns:
            A ``Compaction`` with the ``expired`` and the ``evicted`` entries, as copies.

        Examples:
            >>> now = [0]
            >>> clocked = create_memory(clock=lambda: now[0])
            >>> entry = clocked.remember("session:cart", "2 items", ttl=1000)
            >>> now[0] = 5000
            >>> [entry.key for entry in clocked.compact().expired]
            ['session:cart']
        """
        dropped: Compaction = self._change("compact")
        return dropped

    # -- persistence -------------------------------------------------------

    def save(self) -> None:
        """Save the whole memory as the next generation (PER-1, MW-3).

        With ``autosave`` off, this is how changes reach the store.

        Raises:
            ConflictError: Someone else saved the store since this memory last loaded or saved it.
            LockTimeoutError: Another writer held the store's lock for longer than its ``lock_wait``.
            OSError: The store could not write (a full disk, an unreachable server).

        Examples:
            >>> store = JsonFileStore(tmp / "memory.json")
            >>> kept = create_memory(store=store)
            >>> kept.remember("user:name", "Jakub").key
            'user:name'
            >>> kept.save()
            >>> create_memory(store=store)["user:name"]
            'Jakub'
        """
        with self._lock:
            self._run(self._plumbing.save_all())

    def load(self) -> LoadResult:
        """Replace entries and working memory with the store's content (PER-3, PER-14, PER-18).

        Invalid stored entries are dropped, and a store holding more than ``limit``
        entries is compacted at once; either way a ``LoadWarning`` says so, the
        result is kept as ``last_load``, and the store's ``preserve()`` is called
        before the next save overwrites what was dropped.

        Returns:
            A ``LoadResult`` with how many entries were ``loaded``, ``dropped`` and ``compacted``.

        Raises:
            DamagedStoreError: The store holds something that is not a memory document.
            OSError: The store could not be read.

        Examples:
            >>> store = MemoryStore()
            >>> create_memory(store=store, autosave=True).remember("user:name", "Jakub").key
            'user:name'
            >>> mem2 = create_memory(store=store, load=False)
            >>> mem2.load().loaded
            1
        """
        with self._lock:
            self._begin()
            return self._run(self._plumbing.load(threading.get_ident()))

    # -- Python conveniences -----------------------------------------------

    def __repr__(self) -> str:
        return f"<Memory size={self.size()} limit={self._state.config.limit} store={self._store!r}>"

    # -- resources ---------------------------------------------------------------

    def close(self) -> None:
        """Release what the store holds open, if it has ``close()`` (WRP-5).

        That is ``SqliteStore``'s connection or the client ``RedisStore`` made.
        Nothing is saved or lost: the state stays, and a later call that
        needs the store opens it again. ``with create_memory(...) as mem:``
        closes on the way out. A memory holding changes its store never got
        (autosave off, no ``save()`` since) warns with
        ``UnsavedChangesWarning``, naming how many (PER-21).

        Examples:
            >>> with create_memory(store=SqliteStore(tmp / "memory.db"), autosave=True) as kept:
            ...     kept.remember("user:name", "Jakub").key
            'user:name'
            >>> kept["user:name"]
            'Jakub'
        """
        self._run(self._plumbing.close())

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class CacheMemory:
    """The L0 cache, ``mem.cache``: scratch values with a ttl, never saved (L0-1 .. L0-4).

    For a tool result you do not want to compute twice in one turn. Every
    memory makes its own; there is no need to construct one.

    Args:
        memory: The ``Memory`` whose cache this is.

    Examples:
        >>> mem.cache.put("tool:weather", {"temp": 21})
        >>> mem.cache.get("tool:weather")
        {'temp': 21}
    """

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def put(self, key: str, value: Any, *, ttl: Duration | None = None) -> None:
        """Keep a scratch value under ``key`` until its ttl runs out (L0-1, L0-2).

        The cache is never saved and never triggers an autosave; items that have
        already expired are dropped on the way.

        Args:
            key: A non-empty string.
            value: Any JSON value, copied.
            ttl: How long it lives: milliseconds or a ``datetime.timedelta``. None, the default, means the
                memory's ``cache_ttl`` (5 minutes).

        Raises:
            TypeError: The key is not a string or the value is not JSON.
            ValueError: The key is empty.

        Examples:
            >>> from datetime import timedelta
            >>> mem.cache.put("tool:weather", {"temp": 21}, ttl=timedelta(seconds=30))
            >>> mem.cache.get("tool:weather")
            {'temp': 21}
        """
        m = self._memory
        m._change("cache.put", key, value, ttl=ttl)

    @overload
    def get(self, key: str) -> JSON: ...

    @overload
    def get(self, key: str, default: T) -> JSON | T: ...

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of the live value under ``key``, or ``default`` once its ttl ran out or there is none (L0-1, L0-3).

        Args:
            key: A non-empty string.
            default: What to return when there is no live value. Defaults to None.

        Returns:
            A copy of the JSON value (a type checker sees ``JSON``), or ``default``.

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> mem.cache.put("tool:weather", "sunny")
            >>> mem.cache.get("tool:weather"), mem.cache.get("tool:news", "none")
            ('sunny', 'none')
        """
        m = self._memory
        return core.cache_get(m._state, key, now=m._now(), default=default)

    def delete(self, key: str) -> bool:
        """Remove the item under ``key`` (L0-4).

        Args:
            key: A non-empty string.

        Returns:
            True when a live item was removed.

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> mem.cache.put("tool:weather", "sunny")
            >>> mem.cache.delete("tool:weather"), mem.cache.delete("tool:weather")
            (True, False)
        """
        m = self._memory
        removed: bool = m._change("cache.delete", key)
        return removed

    def clear(self) -> None:
        """Remove every cached item; the entries and the working memory stay (L0-4).

        Examples:
            >>> mem.cache.put("tool:weather", "sunny")
            >>> mem.cache.clear()
            >>> mem.cache.get("tool:weather") is None
            True
        """
        m = self._memory
        m._change("cache.clear")


class WorkingMemory:
    """The L1 working memory, ``mem.working``: one small dict for the task in progress (L1-1 .. L1-4).

    It resets to ``{}`` after ``working_ttl`` without a ``set`` and is saved
    with the entries, for example ``{"task": "refund", "step": 2}``. Every
    memory makes its own; there is no need to construct one.

    Args:
        memory: The ``Memory`` whose working memory this is.

    Examples:
        >>> mem.working.set({"task": "refund", "step": 2})
        >>> mem.working.get()
        {'task': 'refund', 'step': 2}
    """

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def set(self, patch: dict[str, Any]) -> None:
        """Merge ``patch`` into the working memory (a shallow ``dict.update``) and restart its idle clock (L1-1).

        After ``working_ttl`` (default one hour) without a ``set``, the working
        memory reads as ``{}`` again. It is saved with the entries.

        Args:
            patch: A dict of JSON values, copied.

        Raises:
            TypeError: ``patch`` is not a dict or holds something that is not JSON.

        Examples:
            >>> mem.working.set({"task": "refund", "step": 1})
            >>> mem.working.set({"step": 2})
            >>> mem.working.get()
            {'task': 'refund', 'step': 2}
        """
        m = self._memory
        m._change("working.set", patch)

    def get(self) -> dict[str, JSON]:
        """A copy of the working memory, or ``{}`` once it has been idle for ``working_ttl`` (L1-2).

        Returns:
            A new dict of copies of the JSON values.

        Examples:
            >>> mem.working.get()
            {}
            >>> mem.working.set({"task": "refund"})
            >>> mem.working.get()["task"]
            'refund'
        """
        m = self._memory
        return core.working_get(m._state, now=m._now())

    def clear(self) -> None:
        """Empty the working memory (saved, like a ``set``) (L1-3).

        Examples:
            >>> mem.working.set({"task": "refund"})
            >>> mem.working.clear()
            >>> mem.working.get()
            {}
        """
        m = self._memory
        m._change("working.clear")


#: A load that leaves more new objects than this hands them to the oldest generation at once.
#: Below it, the two young collections that would move them there take a few milliseconds.
PROMOTE_AFTER_LOAD = 20_000


#: How many loads are parsing now, in any thread, and whether the collector was on before the first (PER-18).
_PAUSES: dict[str, Any] = {"count": 0, "was_on": False, "lock": threading.Lock()}


def _outcome(call: shell.Call) -> tuple[Any, BaseException | None]:
    """Make one store call, blocking: ``(result, None)``, or ``(None, error)`` when it raised."""
    try:
        if call.heavy:
            with _cycle_collector_paused():
                return call.function(*call.args), None
        return call.function(*call.args), None
    except BaseException as error:
        return None, error


def _after_fork_in_child() -> None:
    """A child forked while another thread was loading has no thread to end that pause: end it here (PER-18)."""
    _PAUSES["lock"] = threading.Lock()  # another thread may have held it at the fork
    if _PAUSES["count"]:
        _PAUSES["count"] = 0
        if _PAUSES["was_on"]:
            gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a document becomes a state.

    A load makes a few objects per entry, none of them part of a cycle, and
    while they are made the collector would walk every object the process
    holds again and again: most of the time of a 100,000-entry load.
    Reference counting still frees what it frees; the collector resumes
    afterwards, unless it was off to begin with.

    What a large load made would then be walked by the next young collection
    and by the one after it, only to be moved to the oldest generation
    (about 0.3 s at 100,000 entries). It is put there at once instead, by
    ``gc.freeze()`` and ``gc.unfreeze()``; the young objects the app made
    meanwhile go with it and are collected by the next full collection. Not
    when the process has frozen objects (the app's, frozen before forking
    workers, or on Python 3.12 the interpreter's own): unfreezing would hand
    those back to the collector.

    The pause is the whole process's, and loads run in many threads at once
    (worker threads of async memories, an app's own threads): the first load
    in pauses the collector and the last one out resumes it, so one load that
    ends never turns it back on under another that is still parsing.
    """
    with _PAUSES["lock"]:
        if not _PAUSES["count"]:
            _PAUSES["was_on"] = gc.isenabled()
            gc.disable()
        _PAUSES["count"] += 1
    try:
        yield
    finally:
        with _PAUSES["lock"]:
            _PAUSES["count"] -= 1
            if not _PAUSES["count"] and _PAUSES["was_on"]:
                if gc.get_count()[0] > PROMOTE_AFTER_LOAD and not gc.get_freeze_count():
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


def create_memory(
    *,
    limit: int | None = None,
    store: Store | None = None,
    autosave: bool = False,
    clock: Callable[[], int | float] | None = None,
    recency_window: Duration | None = None,
    tokenizer: TokenizerLike | None = None,
    ranking: Ranking | None = None,
    on_evict: Callable[[Compaction], Any] | None = None,
    working_ttl: Duration | None = None,
    cache_ttl: Duration | None = None,
    load: bool = True,
    shared: bool = False,
) -> Memory:
    """A new ``Memory``, loaded from its store unless ``load=False`` (OPT-1, PER-2, PER-3).

    Numeric options follow the number rule: a value that is not a finite
    number in range is ignored, with an ``IgnoredValueWarning``, and the
    default is used (NUM-1 .. NUM-5). With ``shared=True`` every persisted
    change is a ``Memory.transaction`` of its own, so several processes can
    autosave into one store and lose nothing (MW-6).

    Args:
        limit: The most live entries the memory keeps before it evicts the least important,
            an integer >= 1. None, the default, means 1000.
        store: Where the memory loads from and saves to: any object with ``load()`` and
            ``save(document)``, such as ``JsonFileStore``, ``SqliteStore`` or ``RedisStore``.
            None, the default, means a new ``MemoryStore`` (this process only).
        autosave: Save after every persisted change. Defaults to False (call ``save()``).
        clock: Returns the time in milliseconds since the epoch. None, the default, means ``wall_clock``.
        recency_window: How long an entry counts as fresh when ranking: milliseconds or a
            ``datetime.timedelta``. None, the default, means one day.
        tokenizer: Counts tokens for ``get_context`` and ``get_messages``: a function
            ``(text) -> number`` or any object with ``encode(text)``. None, the default, means
            ``estimate_tokens``.
        ranking: How ``recall`` and a query in ``get_context``/``get_messages`` rank the entries (BM-9):
            ``"words"`` (REC-2), ``"bm25"`` (BM25 with stop words and English stems, the ``bm25``
            extra) or a function ``(query, entries) -> scores``. Saved with the memory (BM-10).
            Defaults to None: the ranking the store's memory was saved with, ``"words"`` for a new
            one (BM-11).
        on_evict: Called with the ``Compaction`` of every automatic compaction that dropped
            something, for example to archive it. Defaults to None.
        working_ttl: How long the working memory lasts without a ``set``. None, the default, means one hour.
        cache_ttl: How long a cached item lives unless ``put`` says otherwise. None, the default, means
            5 minutes.
        load: Load the store's content now. Defaults to True.
        shared: Make every persisted change a transaction on the store (MW-6). Defaults to False.

    Returns:
        The new ``Memory``.

    Raises:
        TypeError: An option of the wrong kind: a tokenizer, clock or ``on_evict`` that is not
            callable, a store without ``load``/``save``, a non-bool ``autosave``, ``load`` or
            ``shared``.
        DamagedStoreError: The store holds something that is not a memory document.

    Examples:
        >>> kept = create_memory(limit=500, store=JsonFileStore(tmp / "memory.json"), autosave=True)
        >>> kept.remember("user:name", "Jakub").key
        'user:name'
        >>> create_memory(store=JsonFileStore(tmp / "memory.json"))["user:name"]
        'Jakub'
    """
    require_bool("autosave", autosave)
    require_bool("load", load)
    require_bool("shared", shared)
    require_callable("clock", clock, optional=True)
    require_callable("on_evict", on_evict, optional=True)
    ephemeral = store is None
    if store is None:
        store = MemoryStore()
    check_store(store)
    if is_async_store(store):
        raise TypeError(
            f"store {type(store).__name__} is an async store (its load is a coroutine function): "
            "open it with create_async_memory (PER-2, AIO-3)"
        )
    config = core.make_config(
        limit=limit,
        recency_window=recency_window,
        working_ttl=working_ttl,
        cache_ttl=cache_ttl,
        tokenizer=tokenizer,
        ranking=ranking,
    )
    memory = Memory(
        MemoryState(config=config),
        store=store,
        clock=clock or wall_clock,
        autosave=autosave,
        on_evict=on_evict,
        shared=shared,
    )
    memory._plumbing.ephemeral = ephemeral
    memory._plumbing.ranking_given = ranking is not None  # else every load takes the stored ranking (BM-11)
    if load:
        memory.load()
    return memory
