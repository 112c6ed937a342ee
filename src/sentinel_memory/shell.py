"""The shell's plumbing, written once for the sync and the async memory (WRP-1, WRP-3, MW-1 .. MW-6, PER-14).

A shell reads a clock, calls the core and talks to a store. Everything it
decides and keeps between calls does not depend on *how* it talks to the
store, sync or async: which core function a change calls, the order of the
side effects (``on_evict``, then the save, then the new state), what a save
sends (the whole document or only the changes), when a transaction must
reload, what a load keeps and what it warns about, and the bookkeeping
(the generation, unsaved changes, a copy to preserve).

So it is written here once, as ``Plumbing``, in the sans-I/O style of h11:
each operation is a generator that *yields* the store calls it needs
(``Call``) and is *sent* their results. It never calls a store itself. Two
small drivers run the same generators: ``Memory._run`` calls each store
method directly, and the native engine of ``AsyncMemory`` awaits each one
(``sentinel_memory.aio``). An exception a store raises is thrown back into
the generator at the point of the call, so every ``finally`` and every
"nothing happened" rule holds in both shells alike. A ``Call`` marked
``heavy`` is work on a whole document (a load), around which the sync driver
pauses the cycle collector (PER-18); one marked ``offload`` is CPU work big
enough that the async driver runs it in a worker thread, off the event loop.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Generator, Iterable
from typing import Any, Generic, NamedTuple, TypeVar

from . import core, logs, telemetry
from .core.document import generation_of, ranking_name, ranking_problem, saved_ranking
from .core.errors import (
    ConflictError,
    DamagedStoreError,
    LoadWarning,
    NoOpenCallError,
    RankingWarning,
    ReentrantCallError,
    UnsavedChangesWarning,
)
from .core.jsondata import MAX_DEPTH
from .core.options import is_number
from .core.shown import shown
from .core.state import MemoryState
from .core.tokens import LineCounter, Tokenizer, TokenizerLike, as_tokenizer
from .core.values import Changes, Compaction, LoadResult, Working
from .stores.jsontext import with_stack_room

__all__ = [
    "NOTHING_DROPPED",
    "STEPS",
    "Call",
    "Counters",
    "Driven",
    "Outcome",
    "Plumbing",
    "Rehearsal",
    "load_warning",
    "must_reload",
    "preserved",
    "read_clock",
    "shared",
    "what_to_save",
]

T = TypeVar("T")

#: The Compaction of a change that dropped nothing.
NOTHING_DROPPED = Compaction()

#: From this many entries, turning a loaded document into a state is worth a worker thread's hand-off in the
#: async driver (AIO-3); below, the hand-off costs more than the stall it saves.
HEAVY_LOAD = 1_000


class Call(NamedTuple):
    """One store call a ``Plumbing`` step needs: the driver makes it and sends back the result."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()
    #: Work on a whole document: the sync driver pauses the cycle collector around it (PER-18).
    heavy: bool = False
    #: CPU work big enough to move off the event loop: the async driver runs it in a worker thread (AIO-3).
    offload: bool = False


#: What a ``Plumbing`` operation is: yields ``Call`` s, is sent their results, returns its own.
Steps = Generator[Call, Any, T]

#: A group's deferred save (MW-10): the state the store holds, whether exactly (MW-4), the keys touched or None.
Deferred = tuple[MemoryState, bool, set[str] | None]


class Driven(Generic[T]):
    """One ``Plumbing`` operation as a driver walks it: the store call it waits on, then its value.

    ``Memory`` makes each call blocking and ``AsyncMemory`` awaits it; both
    hand the outcome back with ``settle`` until ``call`` is None, then read
    ``value``.

    Args:
        steps: The operation.
    """

    __slots__ = ("_steps", "call", "value")

    def __init__(self, steps: Steps[T]) -> None:
        self._steps = steps
        self.call: Call | None = None
        self.value: T
        self._advance(next, steps)

    def settle(self, result: Any, error: BaseException | None) -> None:
        """Hand back what the last call returned, or the error it raised; ``call`` is then the next one.

        Args:
            result: What the call returned (ignored when it raised).
            error: What the call raised, or None.
        """
        if error is None:
            self._advance(self._steps.send, result)
        else:
            self._advance(self._steps.throw, error)

    def _advance(self, resume: Callable[[Any], Call], argument: Any) -> None:
        try:
            self.call = resume(argument)
        except StopIteration as done:
            self.call, self.value = None, done.value


# -- the changes, as steps over the core: (state, now, *args) -> Outcome --------------------


class Outcome(NamedTuple):
    """What one change hands the plumbing to commit."""

    state: MemoryState | None  # None: nothing to commit (a forget that removed nothing)
    result: Any = None
    dropped: Compaction = NOTHING_DROPPED  # an automatic compaction: on_evict hears of it, and it is logged
    persist: bool = True
    keys: tuple[str, ...] | None = None  # the keys the change may have touched (MW-4); None: anything
    logged: Compaction = NOTHING_DROPPED  # an explicit compaction: logged only (CMP-3, LOG-2)
    same: bool = False  # the persisted memory is as it was (clearing nothing): no unsaved change (PER-21)


Now = Callable[[], int | float]

#: The working memory nobody has set: what a clear leaves (L1-3).
_NO_WORK = Working()


class Rehearsal(NamedTuple):
    """A change worked out before its transaction (``Plumbing.rehearse``): the state it started from,
    the clock reading it made, and its outcome."""

    start: MemoryState
    now: Now
    #: None when only the open-call check refused it, which the change makes again on the state it runs on.
    outcome: Outcome | None


def _dropped_keys(compaction: Compaction) -> tuple[str, ...]:
    return tuple(entry.key for entry in compaction.expired + compaction.evicted)


def _remember(start: MemoryState, now: Now, key: str, data: Any, **options: Any) -> Outcome:
    state, dropped = core.remember(start, key, data, now=now(), **options)
    entry = core.remembered(state, dropped, key)  # before any side effect: nothing may raise after them
    return Outcome(state, entry, dropped, keys=(entry.key, *_dropped_keys(dropped)))


def _add_turn(start: MemoryState, now: Now, role: str, text: str, **options: Any) -> Outcome:
    state, dropped, key = core.add_turn(start, role, text, now=now(), **options)
    return Outcome(state, core.remembered(state, dropped, key), dropped, keys=(key, *_dropped_keys(dropped)))


def _add_messages(start: MemoryState, now: Now, messages: Any, **options: Any) -> Outcome:
    # One core call for the batch: checked whole first, so it is stored whole or not at all (MSG-6).
    state, dropped, keys = core.add_messages(start, messages, now=now(), **options)
    entries = [core.remembered(state, dropped, key) for key in keys]
    return Outcome(state, entries, dropped, keys=(*keys, *_dropped_keys(dropped)))


def _add_message(start: MemoryState, now: Now, message: Any, **options: Any) -> Outcome:
    outcome = _add_messages(start, now, [message], **options)
    return outcome._replace(result=outcome.result[0])


def _forget(start: MemoryState, now: Now, key: str) -> Outcome:
    state, removed = core.forget(start, key, now=now())
    return Outcome(state if removed else None, removed, keys=(key,))


def _clear(start: MemoryState, now: Now) -> Outcome:
    # Clearing nothing still saves with autosave, as ever; it is just no change a close need warn of (PER-21).
    return Outcome(core.clear(start), same=not start.entries)


def _compact(start: MemoryState, now: Now) -> Outcome:
    state, dropped = core.compact(start, now=now())
    # An explicit compaction returns what it dropped and does not call on_evict (CMP-3); it is logged (LOG-2).
    return Outcome(state, dropped, persist=bool(dropped), keys=_dropped_keys(dropped), logged=dropped)


def _cache_put(start: MemoryState, now: Now, key: str, value: Any, **options: Any) -> Outcome:
    return Outcome(core.cache_put(start, key, value, now=now(), **options), persist=False)


def _cache_delete(start: MemoryState, now: Now, key: str) -> Outcome:
    state, removed = core.cache_delete(start, key, now=now())
    return Outcome(state, removed, persist=False)


def _cache_clear(start: MemoryState, now: Now) -> Outcome:
    return Outcome(core.cache_clear(start), persist=False)


def _working_set(start: MemoryState, now: Now, patch: dict[str, Any]) -> Outcome:
    return Outcome(core.working_set(start, patch, now=now()), keys=())


def _working_clear(start: MemoryState, now: Now) -> Outcome:
    return Outcome(core.working_clear(start), keys=(), same=start.working == _NO_WORK)


#: Each change by the name of its method, and whether it is persisted (with ``shared``, a transaction).
STEPS: dict[str, tuple[Callable[..., Outcome], bool]] = {
    "remember": (_remember, True),
    "add_turn": (_add_turn, True),
    "add_message": (_add_message, True),
    "add_messages": (_add_messages, True),
    "forget": (_forget, True),
    "clear": (_clear, True),
    "compact": (_compact, True),
    "cache.put": (_cache_put, False),
    "cache.delete": (_cache_delete, False),
    "cache.clear": (_cache_clear, False),
    "working.set": (_working_set, True),
    "working.clear": (_working_clear, True),
}


def read_clock(clock: Now) -> int | float:
    """One reading of a memory's clock, checked: a finite number of milliseconds (TIME-1, TIME-2)."""
    now = clock()
    if not is_number(now):
        raise TypeError(f"clock must return a finite number of milliseconds, got {shown(now)}")
    return now


class Plumbing:
    """A memory's state and its bookkeeping with its store, and every operation on them as ``Steps``.

    The sync ``Memory`` and the native engine of ``AsyncMemory`` each hold
    one and drive it; neither keeps any of this itself. A driver runs one
    operation at a time (a lock, or the memory's turns) and passes who runs
    it (a thread id, a task) so a change from inside its own side effects
    is refused (WRP-3).

    Args:
        state: The ``MemoryState`` to start from.
        store: Where the memory loads from and saves to.
        clock: Returns the time in milliseconds since the epoch (TIME-1).
        autosave: Save after every persisted change.
        on_evict: Called with every automatic compaction that dropped something, or None.
        shared: Make every persisted change a transaction of its own (MW-6).
    """

    def __init__(
        self,
        state: MemoryState,
        *,
        store: Any,
        clock: Now,
        autosave: bool,
        on_evict: Callable[[Compaction], Any] | None,
        shared: bool,
    ) -> None:
        self.state = state
        self.store = store
        self.clock = clock
        self.autosave = autosave
        self.on_evict = on_evict
        self.shared = shared
        self.generation = 0  # the store's generation this memory last loaded or saved (MW-1)
        self.dirty = False  # a persisted change is not saved yet
        self.in_sync = True  # the store holds exactly this memory's persisted state (MW-4)
        self.preserve_first = False  # a load dropped entries the store still holds (PER-14)
        self.last_load: LoadResult | None = None
        self.changing: object = None  # who is running a change's side effects (WRP-3)
        self.transactions = 0  # how deep the holder is in transaction blocks (MW-6)
        self.unsaved = 0  # persisted changes made since the last save or load (PER-21)
        #: Warnings an operation raised for its caller (PER-14, PER-21): a driver emits them where the caller is.
        self.pending: list[Warning] = []
        #: The store lives and dies with this process (the ``MemoryStore`` ``create_memory`` made): nothing to warn of.
        self.ephemeral = False
        #: The open groups, outermost first: what each puts back when its block raises (MW-10).
        self.groups: list[tuple[MemoryState, int, bool, Deferred | None]] = []
        #: While a group defers its saves: the state the store holds, whether it holds it exactly (MW-4),
        #: and the keys the group's changes touched (None: not known, the whole document); else None (MW-10).
        self.deferred: Deferred | None = None
        #: What this memory's spans carry as ``gen_ai.conversation.id`` (OTL-9), or None.
        self.conversation: str | None = None
        #: The app chose the ranking; when False, every load takes the document's (BM-11).
        self.ranking_given = True

    def now(self) -> int | float:
        """Read the clock once for one operation (TIME-1)."""
        return read_clock(self.clock)

    def refuse_reentry(self, who: object) -> None:
        """WRP-3: no change from inside this memory's own ``on_evict`` or store call."""
        if self.changing is not None and self.changing == who:
            raise ReentrantCallError(
                "a memory cannot be changed from inside its own on_evict or store save; "
                "the change in progress would overwrite it"
            )

    def needs_transaction(self, name: str) -> bool:
        """Whether the change ``name`` must run as a transaction of its own: persisted, shared, none open (MW-6)."""
        return STEPS[name][1] and self.shared and not self.transactions

    def rehearse(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Rehearsal:
        """The change ``name`` worked out on the state as it is, committing nothing (MW-6, WRP-1).

        A shared change rehearses before it takes the store's lock and
        reloads: a ``now`` that is no finite number and bad arguments are
        refused in the order of every other change, before the store is
        touched, so a refused step changes nothing (the protocol's section 3).
        The clock is read here, once; ``change`` reuses the reading. Whether
        a tool message answers an open call is the one check that depends on
        what the store holds (another writer may have stored the call), so
        it is left to the change, on the memory brought up to date (MW-6).
        """
        read: list[int | float] = []

        def once() -> int | float:
            if not read:
                read.append(self.now())
            return read[0]

        step, _ = STEPS[name]
        try:
            outcome: Outcome | None = step(self.state, once, *args, **kwargs)
        except NoOpenCallError:
            outcome = None  # every message's fields passed: the change decides on the reloaded memory
        return Rehearsal(self.state, once, outcome)

    def snapshot(self) -> tuple[Any, ...]:
        """What a reload changes, to put back when the change it was for is refused (``restore``)."""
        return (self.state, self.generation, self.dirty, self.in_sync, self.preserve_first, self.last_load)

    def restore(self, snapshot: tuple[Any, ...]) -> None:
        """Put back a ``snapshot``: the memory is as it was before the refused change's reload (WRP-1)."""
        self.state, self.generation, self.dirty, self.in_sync, self.preserve_first, self.last_load = snapshot

    def change(
        self,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        who: object,
        rehearsal: Rehearsal | None = None,
    ) -> Steps[Any]:
        """One change: its core step (one clock read), then ``commit``; returns the method's result (WRP-1).

        With the ``rehearsal`` of the same change, its outcome is used when the
        state is still the one it was worked out on; after a reload the step
        runs again on the reloaded state, at a ``now`` read after the reload:
        another writer's change came in between, and this one must not be
        stamped earlier than what it follows (ENT-6, MW-6).
        """
        step, _ = STEPS[name]
        before = self.state
        if rehearsal is not None and rehearsal.start is before:
            # Nothing came in: the rehearsal's outcome stands, or its refusal is made again at its own reading.
            outcome = (
                rehearsal.outcome if rehearsal.outcome is not None else step(before, rehearsal.now, *args, **kwargs)
            )
        else:
            outcome = step(before, self.now, *args, **kwargs)
        if outcome.state is not None:
            unsaved = self.unsaved
            yield from self.commit(outcome.state, outcome.dropped, persist=outcome.persist, keys=outcome.keys, who=who)
            if outcome.same:
                self.unsaved = unsaved
        logs.dropped(self.store, outcome.logged)
        telemetry.dropped(outcome.logged, automatic=False)
        telemetry.changed(name, before, outcome.state, outcome.result, outcome.dropped, outcome.logged)
        return outcome.result

    def commit(
        self, state: MemoryState, dropped: Compaction, *, persist: bool, keys: tuple[str, ...] | None, who: object
    ) -> Steps[None]:
        """Side effects, then the new state (WRP-1, PER-11); ``persist=False`` for what is never saved (L0-2)."""
        before = self.state
        self.changing = who
        try:
            if dropped and self.on_evict is not None:
                self.on_evict(dropped)
            if persist and self.autosave:
                if self.groups:
                    self.defer(before, keys)  # the group saves once, at its end (MW-10)
                else:
                    yield from self.save(before, state, keys)
        finally:
            self.changing = None
        self.state = state
        if persist and not self.autosave:
            self.dirty, self.in_sync = True, False
            self.unsaved += 1
        logs.dropped(self.store, dropped)
        telemetry.dropped(dropped, automatic=True)

    def save(self, before: MemoryState, state: MemoryState, keys: tuple[str, ...] | None) -> Steps[None]:
        """Save ``state`` as the next generation: preserve first if a load dropped entries (MW-1, MW-3, MW-4, PER-14).

        The save is a span of its own (OTL-5), inside the change's when it is an autosave.
        """
        with telemetry.operation("save", self.store, conversation=self.conversation):
            generation = self.generation + 1
            if self.preserve_first:
                preserve = getattr(self.store, "preserve", None)
                if callable(preserve):
                    yield Call(preserve)
                    preserved(self.store)
                    telemetry.preserved()
                self.preserve_first = False
            save_changes = getattr(self.store, "save_changes", None)
            what = what_to_save(
                before, state, keys, generation=generation, in_sync=self.in_sync, incremental=callable(save_changes)
            )
            telemetry.saved(what, generation)
            if isinstance(what, Changes):
                yield Call(save_changes, (what,))  # type: ignore[arg-type]  # callable, as what_to_save was told
            else:
                yield Call(self.store.save, (what,))
            self.generation, self.dirty, self.in_sync, self.unsaved = generation, False, True, 0
            if self.groups:
                self.saved_point(state)

    # -- groups (MW-10) ---------------------------------------------------------------------------

    def defer(self, before: MemoryState, keys: tuple[str, ...] | None) -> None:
        """A change inside a group: its save waits for the group's end, with the keys it touched (MW-10)."""
        if self.deferred is None:
            self.deferred = (before, self.in_sync, set())
        base, in_sync, touched = self.deferred
        if touched is not None and keys is not None:
            touched.update(keys)
        else:
            self.deferred = (base, in_sync, None)
        self.dirty = True  # a reload would lose it: a transaction's refresh refuses (MW-6)

    def saved_point(self, state: MemoryState) -> None:
        """A save or a load inside a group: the store holds ``state``; a raising group goes back no further."""
        self.deferred = None
        self.groups = [(state, self.unsaved, self.dirty, None) for _ in self.groups]

    def begin_group(self) -> None:
        """Open a group: persisted changes keep their saves for the end of the outermost one (MW-10)."""
        deferred = self.deferred
        if deferred is not None and deferred[2] is not None:
            deferred = (deferred[0], deferred[1], set(deferred[2]))  # an inner group's keys stay out of this copy
        self.groups.append((self.state, self.unsaved, self.dirty, deferred))

    def end_group(self, ok: bool) -> Steps[None]:
        """Close the innermost group; the outermost saves what its changes deferred, once (MW-10).

        A group whose block raised (``ok`` False), or whose save raised, puts
        the memory back as it was when the group opened (or at a save or load
        inside it since), which is what the store holds: nothing of it is kept.
        """
        point = self.groups[-1]
        try:
            if ok and len(self.groups) == 1 and self.deferred is not None:
                base, in_sync, touched = self.deferred
                self.in_sync = in_sync
                try:
                    yield from self.save(base, self.state, None if touched is None else tuple(touched))
                except BaseException:
                    ok = False
                    raise
        finally:
            self.groups.pop()
            if not ok:
                self.state, self.unsaved, self.dirty, self.deferred = point

    def save_all(self) -> Steps[None]:
        """``save()``: the whole memory as the next generation (PER-1, MW-3)."""
        yield from self.save(self.state, self.state, None)

    def refresh(self, who: object) -> Steps[None]:
        """At the start of a transaction: reload when the store holds a generation not seen yet (MW-6)."""
        generation = getattr(self.store, "generation", None)
        if not callable(generation):
            return
        found = yield Call(generation)
        if must_reload(found, self.generation, dirty=self.dirty, store=self.store):
            yield from self.load(who)

    def take_warnings(self) -> list[Warning]:
        """The warnings waiting for the caller, in order; none wait afterwards."""
        taken, self.pending = self.pending, []
        return taken

    def load(self, who: object) -> Steps[LoadResult]:
        """Replace the entries and the working memory with the store's (PER-3, PER-14, PER-17, PER-18).

        A load that lost something leaves its ``LoadWarning`` in ``pending``
        for the driver to emit where the caller is, a reload inside a
        transaction's too. The load is a span of its own (OTL-5).
        """
        with telemetry.operation("load", self.store, conversation=self.conversation):
            start = self.state
            try:
                document = yield Call(self.store.load, heavy=True)
                # Checking a document copies its data, two frames per nesting level
                # (ENT-13): make sure that works from any call depth (PER-17).
                parse = functools.partial(
                    core.from_document, start, document, now=self.now(), adopt=not self.ranking_given
                )
                entries = document.get("entries") if isinstance(document, dict) else None
                big = isinstance(entries, list) and len(entries) >= HEAVY_LOAD
                loaded: tuple[MemoryState, LoadResult, Compaction] = yield Call(
                    with_stack_room, (2 * MAX_DEPTH + 100, parse), heavy=True, offload=big
                )
                state, result, dropped = loaded
            except DamagedStoreError as error:
                if error.location is not None:
                    raise
                # A store without a path of its own: name it, so the message says whose memory is damaged.
                raise DamagedStoreError(error.problem, repr(self.store)) from None
            before = (self.generation, self.dirty, self.in_sync, self.preserve_first)
            self.generation = found = generation_of(document) if isinstance(document, dict) else 0
            unsaved = self.unsaved
            # A store holding another ranking than the memory's gets the whole document at the next save (BM-11).
            saved = saved_ranking(document)
            same_ranking = saved == ranking_name(state.config.ranking)
            self.dirty, self.in_sync, self.unsaved = False, not result.lost and same_ranking, 0
            self.preserve_first = self.preserve_first or bool(result.lost)
            try:
                yield from self.commit(state, dropped, persist=bool(dropped), keys=None, who=who)
            except BaseException:
                self.generation, self.dirty, self.in_sync, self.preserve_first = before
                self.unsaved = unsaved
                raise
            # A compaction on load is the load's, not a change of the user's: the LoadWarning tells of it (PER-14).
            self.unsaved = 0
            if self.groups:
                # What a group did before the load is gone with it; a compaction the load made is saved whole.
                compacted = self.deferred is not None
                self.saved_point(self.state)
                if compacted:
                    self.deferred, self.dirty = (self.state, False, None), True
            self.last_load = result
            if result.lost:
                can_preserve = callable(getattr(self.store, "preserve", None))
                self.pending.append(
                    load_warning(self.store, result, self.state.config.limit, can_preserve=can_preserve)
                )
            mismatch = None if document is None else ranking_problem(saved, self.state.config.ranking)
            if mismatch is not None:
                message = f"{self.store!r} {mismatch}"
                logs.logger.warning("%s", message)
                self.pending.append(RankingWarning(message))
            telemetry.loaded(result, self.state, found)
            return result

    def close(self) -> Steps[None]:
        """Release what the store holds open, if it has ``close()`` (WRP-5); nothing is saved or lost.

        A memory holding changes its store never got leaves an
        ``UnsavedChangesWarning`` in ``pending`` (PER-21), also logged, before
        the store's own close, so a close that raises still says so.
        """
        if self.unsaved and not self.ephemeral:
            changes = "1 change" if self.unsaved == 1 else f"{self.unsaved} changes"
            message = (
                f"closing a memory on {self.store!r} with {changes} not saved (autosave is off): call save() "
                "before closing, or create the memory with autosave=True; the memory still holds them"
            )
            logs.logger.warning("%s", message)
            self.pending.append(UnsavedChangesWarning(message))
        close = getattr(self.store, "close", None)
        if callable(close):
            yield Call(close)


def what_to_save(
    before: MemoryState,
    state: MemoryState,
    keys: Iterable[str] | None,
    *,
    generation: int,
    in_sync: bool,
    incremental: bool,
) -> Changes | dict[str, Any]:
    """What a save of ``state`` as ``generation`` sends: only the changes, or the whole document (MW-4, PER-1).

    The changes when the change names the ``keys`` it touched, the store
    holds exactly ``before`` (``in_sync``) and takes ``save_changes``
    (``incremental``); else the whole document.

    Args:
        before: The state before the change.
        state: The state to save.
        keys: The keys the change may have touched, or None when that is not known (a load, a
            ``save()``).
        generation: The generation the save is stamped with (MW-1).
        in_sync: Whether the store holds exactly ``before``.
        incremental: Whether the store has ``save_changes``.

    Returns:
        A ``Changes`` for ``save_changes``, or the whole document (a dict) for ``save``.

    Examples:
        >>> from sentinel_memory.shell import what_to_save
        >>> after, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> type(what_to_save(MemoryState(), after, ["a"], generation=1, in_sync=True, incremental=True)).__name__
        'Changes'
        >>> what_to_save(MemoryState(), after, None, generation=1, in_sync=True, incremental=True)["generation"]
        1
    """
    if keys is not None and in_sync and incremental:
        return core.changes(before, state, keys, generation=generation)
    return core.to_document(state, generation=generation)


def must_reload(found: int, generation: int, *, dirty: bool, store: object) -> bool:
    """Whether a transaction must reload first: the store holds a generation the memory has not seen (MW-6).

    Args:
        found: The generation the store holds now.
        generation: The generation the memory last loaded or saved.
        dirty: Whether the memory has changes it has not saved.
        store: The store, named by the error.

    Returns:
        True when the memory must reload before the transaction's changes.

    Raises:
        ConflictError: The store moved on while the memory has changes it has not saved, which a
            reload would lose.

    Examples:
        >>> from sentinel_memory.shell import must_reload
        >>> must_reload(3, 3, dirty=True, store="store"), must_reload(4, 3, dirty=False, store="store")
        (False, True)
    """
    if found == generation:
        return False
    if dirty:
        raise ConflictError(store, generation, found)
    return True


def load_warning(store: object, result: LoadResult, limit: int, *, can_preserve: bool) -> LoadWarning:
    """The warning of a load that dropped entries or a damaged working memory (PER-14, PER-20), also logged (LOG-3).

    Args:
        store: The store loaded from, named by the message.
        result: The ``LoadResult`` of the load.
        limit: The memory's ``limit``, named by the message.
        can_preserve: Whether the store can keep the original (it has ``preserve()``).

    Returns:
        A ``LoadWarning`` for the caller to emit with ``warnings.warn``.
    """
    kept = "is kept" if can_preserve else "cannot be kept (the store has no preserve())"
    working = "; the damaged working memory loaded as {}" if result.working_dropped else ""
    message = (
        f"loading from {store!r} dropped {result.dropped} invalid entries and compacted "
        f"{result.compacted} to fit limit={limit}{working}; the original {kept} "
        "before the next save overwrites it"
    )
    logs.logger.info("%s", message)
    return LoadWarning(message)


def preserved(store: object) -> None:
    """LOG-3: the store kept a copy of what the last load dropped, before the save that overwrites it.

    Args:
        store: The store that kept the copy, named in the log record.
    """
    logs.logger.info("%r: preserved what the last load dropped, before overwriting it", store)


#: Taken only to give a ``LineCounter`` its lock, once.
_SHARING = threading.Lock()


def shared(tokenizer: TokenizerLike | None) -> TokenizerLike | None:
    """``tokenizer``, and when it is a ``LineCounter``, with a lock around its memo of line counts (CTX-12, MW-5).

    The core keeps no lock: a counter counts for one thread until a memory,
    whose reads run in many threads at once, shares it. The lock guards the
    memo only, never a count, so every count stays a function of its text.

    Args:
        tokenizer: What a memory counts with, or None.

    Returns:
        ``tokenizer`` itself.
    """
    if isinstance(tokenizer, LineCounter) and not isinstance(tokenizer.lock, _LOCK_TYPE):
        with _SHARING:
            if not isinstance(tokenizer.lock, _LOCK_TYPE):
                tokenizer.lock = threading.Lock()
    return tokenizer


_LOCK_TYPE = type(threading.Lock())


class Counters:
    """The ``LineCounter`` of each tokenizer object a memory is given per call (CTX-12).

    ``get_context(tokenizer=enc)`` on every turn must not count every line
    anew, so a memory keeps the counter it made for each of the last few
    tokenizer objects it was given, by identity, and the one it was created
    with. Plain functions are not kept: they are counted as they are.
    """

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._by_id: dict[int, tuple[object, LineCounter]] = {}
        self._lock = threading.Lock()  # a memory's reads run in many threads at once (MW-5)

    def get(self, tokenizer: TokenizerLike | None, default: Tokenizer) -> TokenizerLike | None:
        """What to count with for ``tokenizer=``: the kept counter of a tokenizer object, else ``tokenizer`` itself.

        Args:
            tokenizer: What the call was given, or None.
            default: The memory's own tokenizer (its config's), used when it wraps ``tokenizer``.

        Returns:
            A ``LineCounter`` for a tokenizer object, else ``tokenizer`` unchanged.
        """
        shared(default)  # the memory's own counter, which its threads share
        if tokenizer is None or isinstance(tokenizer, LineCounter) or not callable(getattr(tokenizer, "encode", None)):
            return shared(tokenizer)
        if getattr(default, "__wrapped__", None) is tokenizer and isinstance(default, LineCounter):
            return default  # the tokenizer the memory was created with
        with self._lock:
            kept = self._by_id
            found = kept.pop(id(tokenizer), None)
            if found is None or found[0] is not tokenizer:
                counter = shared(as_tokenizer(tokenizer))
                assert isinstance(counter, LineCounter)
                found = (tokenizer, counter)
                while len(kept) >= self._size:
                    del kept[next(iter(kept))]  # the least recently used; holding the object keeps its id unique
            kept[id(tokenizer)] = found  # last, as the most recently used
            return found[1]
