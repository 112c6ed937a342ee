"""The async surface: ``AsyncMemory``, for bots on asyncio, FastAPI or aiohttp (AIO-1 .. AIO-4).

Every method that changes the memory or can do I/O is a coroutine; the
reads (``get``, ``recall``, ``get_context``, ``stats`` ...) are plain
methods, because they never do I/O: they read the last kept state, as the
sync memory's reads do (MW-5).

The rules are the sync memory's: one clock read per operation, one core
function per change, then ``on_evict``, then autosave, then the new state is
kept, and nothing changes when a step raises (WRP-1); incremental saves
(MW-4), the preserved original after a lossy load (PER-14), and with
``shared=True`` every persisted change a transaction of its own (MW-6).
Two engines keep them, chosen by the store (AIO-3):

* a store whose ``load`` is a coroutine function (such as
  ``AsyncRedisStore``) is driven
  natively on the event loop, by an async shell over the core;
* any other store (``MemoryStore``, ``JsonFileStore``, ``SqliteStore``,
  ``RedisStore``) is driven by a sync ``Memory``
  in one worker thread of this memory's own, so its file, SQLite or network
  I/O never blocks the loop, and every rule is that very memory's.

Changes from many tasks take turns, first come first served (AIO-2), and a
cancelled task never leaves a change half done (AIO-4): a change cancelled
while it waits for its turn never happens; once it has its turn it runs to
its end, and then the task ends cancelled.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
import warnings
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, TypeVar

from . import core, telemetry
from .core.errors import ReentrantCallError
from .core.options import Duration, _caller_level
from .core.state import MemoryState
from .core.tokens import TokenizerLike
from .core.values import Compaction, Entry, LoadResult, Ranking
from .memory import Memory, _cycle_collector_paused, create_memory, wall_clock
from .reading import Reads
from .shell import Counters, Driven, Plumbing, Steps, read_clock
from .shell import Now as _Now
from .stores.contract import AsyncStore, Store, check_store, is_async_store

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

# asyncio (and the thread pool) are imported where they are used: importing
# the package must not cost their import time when nothing async runs.

__all__ = ["AsyncCacheMemory", "AsyncMemory", "AsyncStore", "AsyncWorkingMemory", "create_async_memory"]

T = TypeVar("T")


async def _call(method: Callable[..., Any], *args: Any) -> Any:
    """Call a store's method, awaiting what it returns when that is awaitable."""
    result = method(*args)
    return await result if inspect.isawaitable(result) else result


# -- the engines -----------------------------------------------------------------------------


class _Threaded:
    """A sync ``Memory`` driven in one worker thread of its own (AIO-3): its rules, its code.

    One thread per memory, not the loop's shared pool: a transaction holds
    the memory's and the store's thread-owned locks across several calls,
    and the thread that took them must be the one that lets go.
    """

    effects_task: asyncio.Task[Any] | None = None  # the sync memory refuses re-entry itself (WRP-3)

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        memory._defer_warnings = True  # emitted on the loop's thread, at the caller's line (PER-14, PER-21)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def take_warnings(self) -> list[Warning]:
        return self.memory._plumbing.take_warnings()

    def abandon(self) -> None:
        """Nothing to let go of: a stranded change goes on in the worker thread and ends there."""

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        import asyncio
        import concurrent.futures

        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sentinel-memory")
        context = contextvars.copy_context()
        call = functools.partial(context.run, function, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    async def change(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target: Any = self.memory
        for part in name.split("."):
            target = getattr(target, part)
        return await self.run(target, *args, **kwargs)

    async def save(self) -> None:
        await self.run(self.memory.save)

    async def load(self) -> LoadResult:
        return await self.run(self.memory.load)

    async def enter_transaction(self) -> Any:
        block = self.memory.transaction()
        await self.run(block.__enter__)
        return block

    async def enter_group(self) -> Any:
        block = self.memory.group()
        await self.run(block.__enter__)
        return block

    async def exit_transaction(self, block: Any, error: BaseException | None) -> None:
        await self.run(block.__exit__, type(error) if error else None, error, error.__traceback__ if error else None)

    async def close(self) -> None:
        await self.run(self.memory.close)
        if not self.memory._plumbing.transactions:  # a transaction's locks belong to this thread: keep it till the end
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=False)  # a later call starts another thread (WRP-5)


class _Native:
    """The async driver of the shell's plumbing, for a store of coroutines (AIO-3).

    ``Memory`` and this engine run the very same ``shell.Plumbing``
    operations: here each store call they yield is awaited, and the heavy
    work of a load (parsing the whole document) runs in a worker thread, so
    the event loop never stalls on a big memory (AIO-3).
    """

    def __init__(
        self,
        state: MemoryState,
        *,
        store: Any,
        now: _Now,
        autosave: bool,
        on_evict: Callable[[Compaction], Any] | None,
        shared: bool,
    ) -> None:
        self.plumbing = Plumbing(state, store=store, clock=now, autosave=autosave, on_evict=on_evict, shared=shared)

    @property
    def effects_task(self) -> Any:
        """The task running a change's side effects, or None (WRP-3)."""
        return self.plumbing.changing

    def take_warnings(self) -> list[Warning]:
        return self.plumbing.take_warnings()

    def abandon(self) -> None:
        """AIO-6: a change stranded on a closed loop never ends: it no longer holds a transaction or the side effects."""
        self.plumbing.transactions, self.plumbing.changing = 0, None

    @staticmethod
    async def _run(steps: Steps[T]) -> T:
        """Drive one plumbing operation, awaiting each store call it yields (the twin of ``Memory._run``)."""
        import asyncio

        driven = Driven(steps)
        while (call := driven.call) is not None:
            try:
                if call.offload:
                    # Parsing a whole document is CPU work: off the loop, and the cycle collector
                    # paused only in that thread's stretch of work (PER-18).
                    result = await asyncio.to_thread(_paused, call.function, *call.args)
                elif call.heavy and not inspect.iscoroutinefunction(call.function):
                    result = _paused(call.function, *call.args)  # small: on the loop, never across an await
                else:
                    result = await _call(call.function, *call.args)
            except BaseException as error:
                driven.settle(None, error)
            else:
                driven.settle(result, None)
        return driven.value

    async def change(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import asyncio

        task = asyncio.current_task()
        plumbing = self.plumbing
        with telemetry.operation(
            name, plumbing.store, conversation=plumbing.conversation
        ):  # as Memory._change's span (OTL-2)
            if plumbing.needs_transaction(name):
                # As Memory._change: now and the arguments first, and a refused change leaves the memory as it was.
                rehearsal = plumbing.rehearse(name, args, kwargs)
                before = plumbing.snapshot()
                try:
                    async with self._transaction():
                        return await self._run(plumbing.change(name, args, kwargs, task, rehearsal))
                except BaseException:
                    plumbing.restore(before)
                    raise
            return await self._run(plumbing.change(name, args, kwargs, task))

    async def save(self) -> None:
        await self._run(self.plumbing.save_all())

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        import asyncio

        plumbing = self.plumbing
        if plumbing.transactions:
            plumbing.transactions += 1
            try:
                yield
            finally:
                plumbing.transactions -= 1
            return
        lock = getattr(plumbing.store, "lock", None)
        async with lock() if callable(lock) else contextlib.nullcontext():
            await self._run(plumbing.refresh(asyncio.current_task()))
            plumbing.transactions += 1
            try:
                yield
            finally:
                plumbing.transactions -= 1

    async def enter_transaction(self) -> Any:
        block = contextlib.AsyncExitStack()
        await block.enter_async_context(self._transaction())
        return block

    @contextlib.asynccontextmanager
    async def _group(self) -> AsyncIterator[None]:
        """As ``Memory.group``: the same plumbing, its one save awaited (MW-10)."""
        plumbing = self.plumbing
        async with self._transaction() if plumbing.shared else contextlib.nullcontext():
            plumbing.begin_group()
            try:
                yield
            except BaseException:
                await self._run(plumbing.end_group(False))
                raise
            await self._run(plumbing.end_group(True))

    async def enter_group(self) -> Any:
        block = contextlib.AsyncExitStack()
        await block.enter_async_context(self._group())
        return block

    async def exit_transaction(self, block: Any, error: BaseException | None) -> None:
        await block.__aexit__(type(error) if error else None, error, error.__traceback__ if error else None)

    async def load(self) -> LoadResult:
        import asyncio

        return await self._run(self.plumbing.load(asyncio.current_task()))

    async def close(self) -> None:
        await self._run(self.plumbing.close())


def _paused(function: Callable[..., T], *args: Any) -> T:
    with _cycle_collector_paused():
        return function(*args)


# -- the memory ------------------------------------------------------------------------------


class AsyncMemory(Reads[Any]):
    """A memory for asyncio code: coroutines for changes and I/O, plain methods for reads (AIO-1).

    Create one with ``create_async_memory``. Share it between tasks freely:
    changes take turns, first come first served, and none is lost (AIO-2);
    reads never wait and see the last kept state. It is also a read-only
    ``Mapping`` of the live keys to their data, like ``Memory`` (ENT-15).
    ``async with`` closes it on the way out. ``mem.cache`` is its L0 cache
    (an ``AsyncCacheMemory``) and ``mem.working`` its L1 working memory (an
    ``AsyncWorkingMemory``).

    Args:
        engine: What keeps the rules and talks to the store; ``create_async_memory`` makes it.
        clock: Returns the current time in milliseconds since the epoch.

    Examples:
        >>> import asyncio
        >>> async def main():
        ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
        ...         await mem.remember("user:name", "Jakub", importance=0.9)
        ...         return mem.get("user:name"), len(mem), "user:name" in mem
        >>> asyncio.run(main())
        ('Jakub', 1, True)
    """

    def __init__(self, engine: _Threaded | _Native, *, clock: _Now) -> None:
        self._engine = engine
        # The plumbing the engine drives, which the reads read (sentinel_memory.reading).
        self._plumbing = engine.memory._plumbing if isinstance(engine, _Threaded) else engine.plumbing
        self._clock = clock
        self._counters = Counters()  # the line counts of the tokenizer objects passed per call (CTX-12)
        self._turns: asyncio.Lock | None = None  # one change at a time, first come first served (AIO-2)
        self._turns_loop: asyncio.AbstractEventLoop | None = None  # the loop ``_turns`` belongs to (AIO-6)
        self._loops_lock = threading.Lock()
        self._owner: asyncio.Task[Any] | None = None  # the task whose change or transaction has the turn
        #: The L0 cache, ``mem.cache``: ``await put/delete/clear``, plain ``get``.
        self.cache = AsyncCacheMemory(self)
        #: The L1 working memory, ``mem.working``: ``await set/clear``, plain ``get``.
        self.working = AsyncWorkingMemory(self)

    # -- the plumbing ------------------------------------------------------------------------

    @property
    def store(self) -> Store | AsyncStore:
        """The store this memory loads from and saves to."""
        store: Store | AsyncStore = self._plumbing.store
        return store

    @property
    def threaded(self) -> bool:
        """Whether the store's I/O runs in this memory's worker thread (a sync store), not on the loop (AIO-3)."""
        return isinstance(self._engine, _Threaded)

    def _now(self) -> int | float:
        """Read the clock once for one read (TIME-1, TIME-2)."""
        return read_clock(self._clock)

    def _refuse_reentry(self) -> None:
        import asyncio

        if self._engine.effects_task is not None and self._engine.effects_task is asyncio.current_task():
            raise ReentrantCallError(
                "a memory cannot be changed from inside its own on_evict or store save; "
                "the change in progress would overwrite it"
            )

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """This task's turn at the memory (AIO-2); already held inside the task's own transaction block."""
        import asyncio

        task = asyncio.current_task()
        if self._owner is not None and self._owner is task:
            yield
            return
        loop = asyncio.get_running_loop()
        with self._loops_lock:  # two loops in two threads must not both take a fresh lock
            if self._turns is None or self._turns_loop is not loop:
                # AIO-6: one asyncio.run after another. A lock belongs to the loop it first waited on,
                # so each loop gets its own; a change still running on another live loop is refused.
                previous = self._turns_loop
                if self._turns is not None and self._turns.locked() and not (previous and previous.is_closed()):
                    raise RuntimeError(
                        "this AsyncMemory is in the middle of a change on another event loop; a memory serves one "
                        "event loop at a time: let that change finish first, or give each loop a memory of its own"
                    )
                if previous is not None and previous.is_closed():
                    self._engine.abandon()  # what a change stranded on that loop had begun is over (AIO-6)
                self._turns, self._turns_loop, self._owner = asyncio.Lock(), loop, None
            turns = self._turns
        await turns.acquire()  # a cancel while waiting here: nothing happened (AIO-4)
        self._owner = task
        try:
            yield
        finally:
            self._owner = None
            turns.release()

    @staticmethod
    async def _whole(work: Callable[[], Awaitable[T]] | asyncio.Future[T]) -> T:
        """Run ``work`` (or wait for a started one) to its end even when the caller is cancelled, then pass the cancel on (AIO-4)."""
        import asyncio

        inner = work if isinstance(work, asyncio.Future) else asyncio.ensure_future(work())
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            while not inner.done():
                with contextlib.suppress(BaseException):
                    await asyncio.shield(inner)
            if not inner.cancelled():
                inner.exception()  # retrieved: the caller was cancelled, its error is moot
            raise

    async def _change(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._refuse_reentry()
        try:
            async with self._turn():
                return await self._whole(lambda: self._engine.change(name, args, kwargs))
        finally:
            self._flush()

    def _flush(self) -> None:
        """Emit what the last operation left to say, here on the loop's thread, at the caller's line (PER-14, PER-21)."""
        for warning in self._engine.take_warnings():
            warnings.warn(warning, stacklevel=_caller_level())

    # -- entries -----------------------------------------------------------------------------

    async def remember(
        self, key: str, data: Any, *, importance: float | None = None, ttl: Duration | None = None
    ) -> Entry:
        """Store ``data`` under ``key``; returns a copy of the stored entry, as ``Memory.remember`` (ENT-1 .. ENT-6).

        Args:
            key: A non-empty string.
            data: Any JSON value, copied on the way in.
            importance: A number in [0, 1]. None, the default, means 0.5 for a new key, the old importance for an
                existing one.
            ttl: How long the entry lives: milliseconds, or a ``datetime.timedelta``. None or 0 means
                it never expires. Defaults to None.

        Returns:
            A copy of the stored ``Entry``, even when the compaction this change ran evicted it.

        Raises:
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
            TypeError: A key that is no string, or data that is no JSON.
            ValueError: An empty key, or data nested deeper than ``MAX_DEPTH``.
            OSError: The autosave failed (``StoreError``, ``LockTimeoutError``, a full disk); nothing changed.
            ConflictError: Another writer saved first (not with ``shared=True``).

        Examples:
            >>> import asyncio
            >>> async def main():
            ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
            ...         return await mem.remember("user:allergy", "peanuts", importance=1)
            >>> entry = asyncio.run(main())
            >>> entry.key, entry.importance
            ('user:allergy', 1)
        """
        entry: Entry = await self._change("remember", key, data, importance=importance, ttl=ttl)
        return entry

    async def add_turn(
        self, role: str, text: str, *, importance: float | None = None, ttl: Duration | None = None
    ) -> Entry:
        """Remember one chat turn, ``{"role": role, "content": text}``, under the next ``chat:N`` key (ENT-16).

        Args:
            role: Who spoke: ``"user"``, ``"assistant"``, ``"system"`` or ``"developer"`` (MSG-5).
            text: What was said.
            importance: A number in [0, 1]. None, the default, means 0.3, below a fact's 0.5.
            ttl: How long the turn lives: milliseconds, or a ``datetime.timedelta``. Defaults to None
                (no expiry).

        Returns:
            A copy of the stored ``Entry``.

        Raises:
            TypeError: ``role`` or ``text`` is not a string.
            ValueError: ``role`` is not one of the chat API's (MSG-5).
            OSError: The autosave failed; the memory is unchanged.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.

        Examples:
            >>> import asyncio
            >>> async def main():
            ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
            ...         entry = await mem.add_turn("user", "I'm allergic to peanuts")
            ...         return entry.key, entry.data
            >>> asyncio.run(main())
            ('chat:1', {'role': 'user', 'content': "I'm allergic to peanuts"})
        """
        entry: Entry = await self._change("add_turn", role, text, importance=importance, ttl=ttl)
        return entry

    async def add_message(
        self, message: Mapping[str, Any], *, importance: float | None = None, ttl: Duration | None = None
    ) -> Entry:
        """Store one chat-completions message under the next ``chat:N`` key, as ``Memory.add_message`` does (MSG-5, MSG-6).

        The change waits for the memory's turn (AIO-2). The message is checked
        whole before anything is stored: its role and fields, and that a tool
        message answers an open call of the assistant message before it.

        Args:
            message: A dict with ``role`` and ``content`` and, as the role allows, ``tool_calls``,
                ``tool_call_id`` and ``name``.
            importance: The turn's importance in [0, 1]; None (the default) gives it 0.3.
            ttl: The turn's lifetime in milliseconds or as a ``datetime.timedelta``; None (the default): no expiry.

        Returns:
            The stored turn's ``Entry``, as a copy.

        Raises:
            TypeError: A field of the wrong type, named in the error; nothing is stored.
            ValueError: A role the chat API does not have, a field unknown or missing, one call id
                twice, or a tool message answering no open call; nothing is stored.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        entry: Entry = await self._change("add_message", message, importance=importance, ttl=ttl)
        return entry

    async def add_messages(
        self, messages: Sequence[Mapping[str, Any]], *, importance: float | None = None, ttl: Duration | None = None
    ) -> list[Entry]:
        """Store chat-completions messages as turns, in order and all or nothing, as ``Memory.add_messages`` does (MSG-5, MSG-6).

        All of them are checked first; then they are stored in one change that
        takes the memory's turn once (AIO-2), with one autosave and one
        ``on_evict`` call.

        Args:
            messages: The message dicts, oldest first.
            importance: Each turn's importance in [0, 1]; None (the default) gives 0.3.
            ttl: Each turn's lifetime; None (the default): no expiry.

        Returns:
            The stored turns' ``Entry`` copies, in the order given.

        Raises:
            TypeError, ValueError: A bad message or field, named as ``messages[i]`` and the field;
                nothing is stored.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        entries: list[Entry] = await self._change("add_messages", messages, importance=importance, ttl=ttl)
        return entries

    async def forget(self, key: str) -> bool:
        """Remove the live entry under ``key``, taking the memory's turn (ENT-8, AIO-2).

        Args:
            key: The entry's key, a non-empty string.

        Returns:
            True when a live entry was removed, False when there was none (an expired one counts as none).

        Raises:
            TypeError: The key is not a string.
            ValueError: The key is empty.
            OSError: The autosave failed; the memory is unchanged.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.

        Examples:
            >>> import asyncio
            >>> async def main():
            ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
            ...         await mem.remember("user:name", "Jakub")
            ...         return await mem.forget("user:name"), await mem.forget("user:name")
            >>> asyncio.run(main())
            (True, False)
        """
        removed: bool = await self._change("forget", key)
        return removed

    async def clear(self) -> None:
        """Remove every entry; the cache and the working memory have their own ``clear`` (ENT-9).

        Raises:
            OSError: The autosave failed; the memory is unchanged.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        await self._change("clear")

    async def compact(self) -> Compaction:
        """Compact now and return what was dropped; ``on_evict`` is for automatic runs only (CMP-3).

        Expired entries go first, then the lowest retention until ``limit`` fits.

        Returns:
            A ``Compaction`` with the ``expired`` and the ``evicted`` entries, as copies.

        Raises:
            OSError: The autosave of a compaction that dropped something failed; the memory is unchanged.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        dropped: Compaction = await self._change("compact")  # logged by the plumbing (LOG-2), once
        return dropped

    # -- persistence and transactions --------------------------------------------------------

    async def save(self) -> None:
        """Save the whole memory as the next generation (PER-1, MW-3).

        Raises:
            ConflictError: Another writer saved first.
            OSError: The store could not save; nothing changed.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        self._refuse_reentry()
        try:
            async with self._turn():
                await self._whole(self._engine.save)
        finally:
            self._flush()

    async def load(self) -> LoadResult:
        """Replace entries and working memory with the store's content (PER-3, PER-14).

        A load that drops invalid entries warns with ``LoadWarning`` and keeps the
        original for the store to preserve before the next save overwrites it.

        Returns:
            A ``LoadResult`` with how many entries were loaded, dropped and compacted.

        Raises:
            DamagedStoreError: The store holds something that is not a memory; nothing changed.
            OSError: The store could not be read; nothing changed.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.
        """
        self._refuse_reentry()
        try:
            async with self._turn():
                return await self._whole(self._engine.load)
        finally:
            self._flush()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncMemory]:
        """Hold the memory and its store for a read-modify-write (MW-6, AIO-2): ``async with mem.transaction():``.

        Other tasks' changes wait until the block ends; the store's lock keeps
        other processes out, and the memory reloads first when one of them
        saved since. Only the task that opened the block changes the memory
        inside it (another task's change would wait for the block).

        Yields:
            This memory.

        Raises:
            ConflictError: The store moved on while this memory has unsaved changes (autosave off).
            LockTimeoutError: Another writer held the store for its ``lock_wait``.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.

        Examples:
            >>> import asyncio
            >>> async def visit(mem):
            ...     async with mem.transaction():
            ...         await mem.remember("visits", mem.get("visits", 0) + 1)
            >>> async def main():
            ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
            ...         await asyncio.gather(visit(mem), visit(mem), visit(mem))
            ...         return mem.get("visits")
            >>> asyncio.run(main())
            3
        """
        async with self._held(self._engine.enter_transaction):
            yield self

    @contextlib.asynccontextmanager
    async def group(self) -> AsyncIterator[AsyncMemory]:
        """Make the block's changes one save, at its end; a block that raises keeps none (MW-10, AIO-2).

        ``Memory.group``'s rules: other tasks' changes wait for the block, and
        with ``shared=True`` the store stays locked until the block's one save.

        Yields:
            This memory.

        Raises:
            ConflictError: As ``transaction()``, with ``shared=True``; or the group's save conflicted.
            LockTimeoutError: As ``transaction()``, with ``shared=True``.
            ReentrantCallError: Called from inside this memory's own ``on_evict`` or store.

        Examples:
            >>> import asyncio
            >>> async def main():
            ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
            ...         async with mem.group():
            ...             await mem.add_turn("user", "Hi")
            ...             await mem.remember("topic", "greeting")
            ...         return len(mem)
            >>> asyncio.run(main())
            2
        """
        async with self._held(self._engine.enter_group):
            yield self

    @contextlib.asynccontextmanager
    async def _held(self, enter: Callable[[], Awaitable[Any]]) -> AsyncIterator[None]:
        """The memory's turn and the engine's block ``enter`` opened, for the body (MW-6, MW-10, AIO-2, AIO-4)."""
        import asyncio

        self._refuse_reentry()
        async with self._turn():
            entering = asyncio.ensure_future(enter())
            try:
                block = await self._whole(entering)
            except asyncio.CancelledError:
                # Cancelled while entering: the block was entered all the same (AIO-4), and its body
                # will not run, so leave it now: the store's lock and the memory's must not stay held.
                if not entering.cancelled() and entering.exception() is None:
                    await self._whole(lambda: self._engine.exit_transaction(entering.result(), None))
                raise
            finally:
                self._flush()  # a reload on the way in may have lost something (PER-14)
            error: BaseException | None = None
            try:
                yield
            except BaseException as raised:
                error = raised
                raise
            finally:
                try:
                    await self._whole(lambda: self._engine.exit_transaction(block, error))
                finally:
                    self._flush()

    async def close(self) -> None:
        """Release what the store holds open (a connection, a client made from ``url``) and the worker thread (WRP-5).

        Nothing is saved or lost; a later call opens them again.
        ``async with mem:`` closes on the way out.
        """
        try:
            async with self._turn():
                await self._whole(self._engine.close)
        finally:
            self._flush()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- Python conveniences -----------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<AsyncMemory size={self.size()} limit={self.state.config.limit} store={self.store!r}>"


class AsyncCacheMemory:
    """The L0 cache of an ``AsyncMemory``, ``mem.cache`` (L0-1 .. L0-4).

    Changes are coroutines, because they take the memory's turn (AIO-2);
    ``get`` is a plain read. Nothing here is ever saved.

    Args:
        memory: The memory this cache belongs to; every ``AsyncMemory`` makes its own.

    Examples:
        >>> import asyncio
        >>> async def main():
        ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
        ...         await mem.cache.put("draft", "Hel", ttl=5_000)
        ...         return mem.cache.get("draft"), await mem.cache.delete("draft"), mem.cache.get("draft")
        >>> asyncio.run(main())
        ('Hel', True, None)
    """

    def __init__(self, memory: AsyncMemory) -> None:
        self._memory = memory

    async def put(self, key: str, value: Any, *, ttl: Duration | None = None) -> None:
        """Keep a scratch value under ``key`` until its ttl runs out (L0-1, L0-3).

        Args:
            key: A non-empty string.
            value: Any JSON value, copied on the way in.
            ttl: How long the item lives: milliseconds, or a ``datetime.timedelta``.
                Defaults to None (the memory's ``cache_ttl``, five minutes unless set).

        Raises:
            TypeError: The key is not a string or the value is not JSON.
            ValueError: The key is empty or the value is nested deeper than ``MAX_DEPTH``.
            ReentrantCallError: Called from inside the memory's own ``on_evict`` or store.
        """
        await self._memory._change("cache.put", key, value, ttl=ttl)

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of the live value under ``key``, or ``default`` (L0-1).

        Args:
            key: A non-empty string.
            default: What to return when there is no live item. Defaults to None.

        Returns:
            A copy of the value, or ``default``.

        Raises:
            TypeError: The key is not a string.
            ValueError: The key is empty.
        """
        m = self._memory
        return core.cache_get(m.state, key, now=m._now(), default=default)

    async def delete(self, key: str) -> bool:
        """Remove the item under ``key``, taking the memory's turn (L0-2, AIO-2).

        Args:
            key: The item's key, a non-empty string.

        Returns:
            True when a live item was removed, False when there was none.

        Raises:
            TypeError: The key is not a string.
            ValueError: The key is empty.
        """
        removed: bool = await self._memory._change("cache.delete", key)
        return removed

    async def clear(self) -> None:
        """Remove every cached item (L0-2)."""
        await self._memory._change("cache.clear")


class AsyncWorkingMemory:
    """The L1 working memory of an ``AsyncMemory``, ``mem.working`` (L1-1 .. L1-4).

    ``set`` and ``clear`` are coroutines (they save, with autosave); ``get`` is a plain read.

    Args:
        memory: The memory this working memory belongs to; every ``AsyncMemory`` makes its own.

    Examples:
        >>> import asyncio
        >>> async def main():
        ...     async with await create_async_memory(clock=lambda: 1_792_310_400_000) as mem:
        ...         await mem.working.set({"step": 1, "topic": "risotto"})
        ...         await mem.working.set({"step": 2})
        ...         return mem.working.get()
        >>> asyncio.run(main())
        {'step': 2, 'topic': 'risotto'}
    """

    def __init__(self, memory: AsyncMemory) -> None:
        self._memory = memory

    async def set(self, patch: dict[str, Any]) -> None:
        """Merge ``patch`` into the working memory and restart its idle clock (L1-1, L1-2).

        Once idle for ``working_ttl``, the working memory starts from ``{}`` again.

        Args:
            patch: A dict of JSON values; its keys replace the same keys (a shallow merge).

        Raises:
            TypeError: ``patch`` is not a dict of JSON values.
            OSError: The autosave failed; the memory is unchanged.
            ReentrantCallError: Called from inside the memory's own ``on_evict`` or store.
        """
        await self._memory._change("working.set", patch)

    def get(self) -> dict[str, Any]:
        """A copy of the working memory, or ``{}`` once it has been idle for ``working_ttl`` (L1-2).

        Returns:
            A new dict.
        """
        m = self._memory
        return core.working_get(m.state, now=m._now())

    async def clear(self) -> None:
        """Empty the working memory (saved, like a ``set``) (L1-3)."""
        await self._memory._change("working.clear")


async def create_async_memory(
    *,
    limit: int | None = None,
    store: Store | AsyncStore | None = None,
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
) -> AsyncMemory:
    """A new ``AsyncMemory``, loaded from its store unless ``load=False`` (AIO-1, AIO-3).

    The options are ``create_memory``'s, checked the same way. A store whose
    ``load`` is a coroutine function (``AsyncRedisStore``) is driven on the
    event loop; any other store in a worker thread of this memory's own
    (AIO-3), where ``on_evict`` then runs too.

    Args:
        limit: The most entries kept; over it, compaction evicts the lowest retention.
            Defaults to None (1000).
        store: Where the memory is loaded from and saved to: an ``AsyncStore`` or any sync store.
            Defaults to None (a new ``MemoryStore``, kept in this process only).
        autosave: Save after every change that is persisted. Defaults to False.
        clock: Returns the current time in milliseconds since the epoch. Defaults to None
            (the wall clock).
        recency_window: How long freshness takes to fade, in milliseconds or a ``timedelta``.
            Defaults to None (one day).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with
            ``encode(text)``. Defaults to None (``estimate_tokens``).
        ranking: How ``recall`` and a query in ``get_context``/``get_messages`` rank the entries (BM-9):
            ``"words"`` (REC-2), ``"bm25"`` (BM25 with stop words and English stems, the ``bm25``
            extra) or a function ``(query, entries) -> scores``. Saved with the memory (BM-10).
            Defaults to None: the ranking the store's memory was saved with, ``"words"`` for a new
            one (BM-11).
        on_evict: Called with the ``Compaction`` of every automatic compaction that dropped
            something. Defaults to None.
        working_ttl: How long the working memory lives without a set, in milliseconds or a
            ``timedelta``. Defaults to None (one hour).
        cache_ttl: How long a cache item lives when ``put`` gives no ttl, in milliseconds or a
            ``timedelta``. Defaults to None (five minutes).
        load: Load from the store before returning. Defaults to True.
        shared: Make every persisted change a transaction of its own, so several processes can
            share one store (MW-6). Defaults to False.

    Returns:
        The new ``AsyncMemory``.

    Raises:
        TypeError: An option of the wrong kind, as ``create_memory``.
        DamagedStoreError: The store holds something that is not a memory.
        OSError: The store could not be read.

    Examples:
        >>> import asyncio
        >>> async def main():
        ...     store = JsonFileStore(tmp / "memory.json")
        ...     async with await create_async_memory(store=store, autosave=True, shared=True) as mem:
        ...         await mem.remember("user:name", "Jakub")
        ...     async with await create_async_memory(store=store) as again:
        ...         return again.get("user:name")
        >>> asyncio.run(main())
        'Jakub'
    """
    # create_memory checks every option and builds the config; nothing is loaded yet. It takes sync
    # stores only (PER-2), so an async store is checked here and driven by the native engine.
    native = is_async_store(store)
    if native:
        check_store(store)
    memory = create_memory(
        limit=limit,
        store=None if native else store,  # type: ignore[arg-type]  # a sync store, as create_memory takes
        autosave=autosave,
        clock=clock,
        recency_window=recency_window,
        tokenizer=tokenizer,
        ranking=ranking,
        on_evict=on_evict,
        working_ttl=working_ttl,
        cache_ttl=cache_ttl,
        load=False,
        shared=shared,
    )
    clock = clock or wall_clock
    engine: _Threaded | _Native
    if native:
        engine = _Native(
            memory.state,
            store=store,
            now=lambda: result._now(),
            autosave=autosave,
            on_evict=on_evict,
            shared=shared,
        )
        engine.plumbing.ranking_given = ranking is not None  # as create_memory's (BM-11)
    else:
        engine = _Threaded(memory)
    result = AsyncMemory(engine, clock=clock)
    if load:
        await result.load()
    return result
