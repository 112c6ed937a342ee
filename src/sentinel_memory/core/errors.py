"""What the library raises and warns about, beyond Python's own TypeError and ValueError.

Every class here is public and documented: code that catches them can rely
on their names and bases across releases.
"""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "DamagedStoreError",
    "IgnoredValueWarning",
    "LoadWarning",
    "LockTimeoutError",
    "NoOpenCallError",
    "RankingWarning",
    "ReentrantCallError",
    "SentinelMemoryWarning",
    "StoreConnectionError",
    "StoreError",
    "StoreWarning",
    "TokenBudgetError",
    "UnsavedChangesWarning",
]


class DamagedStoreError(ValueError):
    """A store holds something that is not a memory document: a damaged or foreign file (PER-4, PER-5, PER-13).

    It is a ``ValueError``. ``location`` names the file (or is None for a
    store that has no path), ``problem`` says what is wrong, and the message
    says both. Nothing is changed: not the file, not the memory.

    Args:
        problem: What is wrong, for example ``"is not valid JSON: ..."``.
        location: The file (or any object whose ``str`` names the store), or None for a store
            without a path. Defaults to None.

    Examples:
        >>> _ = (tmp / "memory.json").write_text("not json")
        >>> try:
        ...     create_memory(store=JsonFileStore(tmp / "memory.json"))
        ... except DamagedStoreError as error:
        ...     print(error.problem)
        is not valid JSON: Expecting value at line 1 column 1
    """

    def __init__(self, problem: str, location: object = None) -> None:
        self.problem = problem
        self.location = None if location is None else str(location)
        super().__init__(problem if location is None else f"{location}: {problem}")


class ConflictError(RuntimeError):
    """A save found that someone else saved the same store since this memory last loaded or saved it (MW-3).

    Nothing was written and the memory keeps its state. ``expected`` is the
    generation this memory last saw, ``found`` the one the store holds.
    Reload (or use ``Memory.transaction``, or
    ``create_memory(shared=True)``) and make the change again.

    Args:
        location: The store (its ``str`` names it in the message).
        expected: The generation the saving memory last saw.
        found: The generation the store holds.

    Examples:
        >>> store = MemoryStore()
        >>> first, second = create_memory(store=store, autosave=True), create_memory(store=store, autosave=True)
        >>> first.remember("a", 1).key
        'a'
        >>> try:
        ...     second.remember("b", 2)
        ... except ConflictError as error:
        ...     print(error.expected, error.found)
        0 1
    """

    def __init__(self, location: object, expected: int, found: int) -> None:
        self.location = str(location)
        self.expected = expected
        self.found = found
        super().__init__(
            f"{location}: saved by someone else since this memory last saw it "
            f"(generation {found}, expected {expected}); reload and try again. For several processes or "
            "servers writing one store, create each memory with shared=True (or open it from a MemoryFolder): "
            "then every change reloads first and none conflicts"
        )


class LockTimeoutError(TimeoutError):
    """A store's lock stayed held by another writer for longer than the store's ``lock_wait`` (MW-8).

    Nothing was read or saved and the memory keeps its state (WRP-1): try
    again later, or give the store a longer ``lock_wait``. It is a
    ``TimeoutError``, so an ``OSError``. ``location`` names the lock (the
    sidecar file of a file store, the Redis key of a Redis one), ``waited``
    is the wait in seconds.

    Args:
        location: The lock (its ``str`` names it in the message).
        waited: How many seconds the call waited.

    Examples:
        >>> store = JsonFileStore(tmp / "memory.json", lock_wait=0.05)
        >>> with store.lock():
        ...     try:
        ...         JsonFileStore(tmp / "memory.json", lock_wait=0.05).save({"version": 1, "entries": []})
        ...     except LockTimeoutError as error:
        ...         print(error.waited, isinstance(error, OSError))
        0.05 True
    """

    def __init__(self, location: object, waited: float) -> None:
        self.location = str(location)
        self.waited = waited
        super().__init__(f"{location}: still locked by another writer after {waited:g} s; nothing was changed")


class ReentrantCallError(RuntimeError):
    """A change to a memory was asked for from inside that memory's own ``on_evict`` or store (WRP-3).

    The outer call is still in the middle of its side effects; a change made
    then would be overwritten when the outer call commits, so it is refused
    instead. Reads are allowed (they see the state before the outer call).


    Examples:
        >>> def archive(compaction):
        ...     small.remember("archived", len(compaction.evicted))
        >>> small = create_memory(limit=1, on_evict=archive)
        >>> small.remember("a", 1).key
        'a'
        >>> try:
        ...     small.remember("b", 2)
        ... except ReentrantCallError:
        ...     print(sorted(small))
        ['a']
    """


class SentinelMemoryWarning(UserWarning):
    """The base of every warning this library emits.

    Filter on it to silence or escalate them all, for example
    ``warnings.simplefilter("error", SentinelMemoryWarning)`` in tests.


    Examples:
        >>> issubclass(LoadWarning, SentinelMemoryWarning), issubclass(SentinelMemoryWarning, UserWarning)
        (True, True)
    """


class LoadWarning(SentinelMemoryWarning):
    """A load dropped entries: invalid ones, or ones compacted away to fit ``limit`` (PER-14).

    ``Memory.last_load`` holds the numbers, and the store's ``preserve()``
    keeps a copy before the next save overwrites what was dropped.


    Examples:
        >>> import warnings
        >>> store = MemoryStore()
        >>> _ = [create_memory(store=store, autosave=True).remember(key, 1) for key in "ab"]
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     create_memory(store=store, limit=1).last_load.compacted
        1
        >>> caught[0].category.__name__
        'LoadWarning'
    """


class RankingWarning(SentinelMemoryWarning):
    """A loaded memory was saved with another ranking than the one it now ranks by (BM-11).

    Nothing is lost: a ranking only orders what ``recall`` and a queried
    context choose, and the next save stores the memory's own ranking.


    Examples:
        >>> import warnings
        >>> store = MemoryStore()
        >>> store.save({"version": 1, "ranking": "bm25", "entries": []})
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     create_memory(store=store, ranking="words").stats()["ranking"]
        'words'
        >>> caught[0].category.__name__
        'RankingWarning'
    """


class StoreWarning(SentinelMemoryWarning):
    """A store could not do all it would like, for example keep a file's other hard links current (PER-16).


    Examples:
        >>> import os, warnings
        >>> store = JsonFileStore(tmp / "memory.json")
        >>> store.save({"version": 1, "entries": []})
        >>> os.link(tmp / "memory.json", tmp / "copy.json")
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     store.save({"version": 1, "entries": []})
        >>> caught[0].category.__name__
        'StoreWarning'
    """


class IgnoredValueWarning(SentinelMemoryWarning):
    """A numeric option was not a valid value, so its default was used (NUM-5).

    The number rule never clamps and never raises for an option; this warning
    is how a wrong value (``importance="high"``, ``limit=0``, a negative ttl)
    still gets noticed. It names the option, the value and what was used.


    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     create_memory(limit=0).stats()["limit"]
        1000
        >>> print(caught[0].message)
        limit=0 is not an integer >= 1; using the default (1000). Numbers are never clamped ...
    """


class StoreError(OSError):
    """A store's server refused or garbled an operation: nothing was read or saved; the memory keeps its state (RDS-6).

    For example a Redis that is a read-only replica, one out of memory
    (``maxmemory`` with ``noeviction``), or something that is not Redis at
    all on its port. An ``OSError``, like a full disk under a file store.
    ``server`` names the server, ``operation`` what the store was doing
    (``load``, ``save``, ``lock``, ...), and the client's own exception is
    chained as ``__cause__``.

    Args:
        message: What happened, naming the store and the server.
        server: The server, as ``host:port/db`` or a socket path. Defaults to ``""``.
        operation: What the store was doing: ``load``, ``save``, ``lock``, ... Defaults to ``""``.

    Examples:
        >>> error = StoreError("refused", server="localhost:6379/0", operation="save")
        >>> error.server, error.operation, isinstance(error, OSError)
        ('localhost:6379/0', 'save', True)
    """

    def __init__(self, message: str, *, server: str = "", operation: str = "") -> None:
        self.server = server
        self.operation = operation
        super().__init__(message)


class StoreConnectionError(StoreError, ConnectionError):
    """A store's server could not be reached: nothing was read or saved, and the memory keeps its state (RDS-5).

    A ``ConnectionError`` and a ``StoreError``,
    so an ``OSError``: retry when the server is back; a reload then gives
    the last state the server committed.

    Args:
        message: What happened, naming the store and the server.
        server: The server, as ``host:port/db`` or a socket path. Defaults to ``""``.
        operation: What the store was doing: ``load``, ``save``, ``lock``, ... Defaults to ``""``.

    Examples:
        >>> error = StoreConnectionError("not reachable", server="localhost:6379/0", operation="load")
        >>> isinstance(error, ConnectionError), isinstance(error, StoreError), error.operation
        (True, True, 'load')
    """


class UnsavedChangesWarning(SentinelMemoryWarning):
    """A memory was closed holding changes its store never got: autosave was off and no ``save()`` came (PER-21).

    The message says how many changes were not saved and how to keep them:
    ``save()`` before closing, or ``autosave=True``. Nothing is saved by the
    close itself; the memory keeps the changes, so a ``save()`` after the
    warning still stores them.

    Examples:
        >>> import warnings
        >>> kept = create_memory(store=JsonFileStore(tmp / "unsaved.json"))
        >>> kept.remember("user:name", "Jakub").key
        'user:name'
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     kept.close()
        >>> caught[0].category.__name__, "1 change" in str(caught[0].message)
        ('UnsavedChangesWarning', True)
    """


class NoOpenCallError(ValueError):
    """A tool message answers no open call: its ``tool_call_id`` is no call still waiting for a result (MSG-6).

    It is a ``ValueError``, and nothing of the batch was stored. A memory with
    ``shared=True`` checks it on the memory brought up to date with its store
    (MW-6), so a result for a call another writer stored is taken.

    Examples:
        >>> try:
        ...     mem.add_message({"role": "tool", "tool_call_id": "c9", "content": "4 °C"})
        ... except NoOpenCallError as error:
        ...     print(error)
        messages[0].tool_call_id: 'c9' answers no open call (open: none)
    """


class TokenBudgetError(ValueError):
    """``get_messages`` cannot make a valid request within the budget (MSG-9).

    The request must hold the app's system prompt, the must-keep facts and
    the conversation from the newest user message on; when those alone count
    more than ``token_budget``, this is raised instead of a request without
    the question or without a fact the app said must be kept. It is a
    ``ValueError``: ``needed`` is what they count, ``budget`` what was given,
    and the message says both and by how much the budget falls short.

    Args:
        needed: The tokens the request needs at the least.
        budget: The budget given.
        what: What the tokens are for.

    Examples:
        >>> mem.add_turn("user", "What is in the risotto tonight, and is it safe for me?").key
        'chat:1'
        >>> try:
        ...     mem.get_messages(token_budget=10)
        ... except TokenBudgetError as error:
        ...     print(error.needed, error.budget)
        17 10
    """

    def __init__(self, needed: int | float, budget: int | float, what: str) -> None:
        self.needed = needed
        self.budget = budget
        super().__init__(f"{what} need {needed} tokens, {needed - budget} more than the budget of {budget}")
