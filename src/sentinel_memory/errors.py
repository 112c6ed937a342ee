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
    "ReentrantCallError",
    "SentinelMemoryWarning",
    "StoreConnectionError",
    "StoreError",
    "StoreWarning",
]


class DamagedStoreError(ValueError):
    """A store holds something that is not a memory document: a damaged or foreign file (PER-4, PER-5, PER-13).

    It is a ``ValueError``. ``location`` names the file (or is None for a
    store that has no path), ``problem`` says what is wrong, and the message
    says both. Nothing is changed: not the file, not the memory.
    """

    def __init__(self, problem: str, location: object = None) -> None:
        self.problem = problem
        self.location = None if location is None else str(location)
        super().__init__(problem if location is None else f"{location}: {problem}")


class ConflictError(RuntimeError):
    """A save found that someone else saved the same store since this memory last loaded or saved it (MW-3).

    Nothing was written and the memory keeps its state. ``expected`` is the
    generation this memory last saw, ``found`` the one the store holds.
    Reload (or use [`transaction`][sentinel_memory.memory.Memory.transaction], or
    ``create_memory(shared=True)``) and make the change again.
    """

    def __init__(self, location: object, expected: int, found: int) -> None:
        self.location = str(location)
        self.expected = expected
        self.found = found
        super().__init__(
            f"{location}: saved by someone else since this memory last saw it "
            f"(generation {found}, expected {expected}); reload and try again"
        )


class LockTimeoutError(TimeoutError):
    """A store's lock stayed held by another writer for longer than the store's ``lock_wait`` (MW-8).

    Nothing was read or saved and the memory keeps its state (WRP-1): try
    again later, or give the store a longer ``lock_wait``. It is a
    ``TimeoutError``, so an ``OSError``. ``location`` names the lock (the
    sidecar file of a file store, the Redis key of a Redis one), ``waited``
    is the wait in seconds.
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
    """


class SentinelMemoryWarning(UserWarning):
    """The base of every warning this library emits."""


class LoadWarning(SentinelMemoryWarning):
    """A load dropped entries: invalid ones, or ones compacted away to fit ``limit`` (PER-14)."""


class StoreWarning(SentinelMemoryWarning):
    """A store could not do all it would like, for example keep a file's other hard links current (PER-16)."""


class IgnoredValueWarning(SentinelMemoryWarning):
    """A numeric option was not a valid value, so its default was used (NUM-5).

    The number rule never clamps and never raises for an option; this warning
    is how a wrong value (``importance="high"``, ``limit=0``, a negative ttl)
    still gets noticed. It names the option, the value and what was used.
    """


class StoreError(OSError):
    """A store's server refused or garbled an operation: nothing was read or saved, and the memory keeps its state (RDS-6).

    For example a Redis that is a read-only replica, one out of memory
    (``maxmemory`` with ``noeviction``), or something that is not Redis at
    all on its port. An ``OSError``, like a full disk under a file store.
    ``server`` names the server, ``operation`` what the store was doing
    (``load``, ``save``, ``lock``, ...), and the client's own exception is
    chained as ``__cause__``.
    """

    def __init__(self, message: str, *, server: str = "", operation: str = "") -> None:
        self.server = server
        self.operation = operation
        super().__init__(message)


class StoreConnectionError(StoreError, ConnectionError):
    """A store's server could not be reached: nothing was read or saved, and the memory keeps its state (RDS-5).

    A ``ConnectionError`` and a [`StoreError`][sentinel_memory.errors.StoreError],
    so an ``OSError``: retry when the server is back; a reload then gives
    the last state the server committed.
    """
