"""Where a memory's document lives between runs (PER-2, PER-10, PER-14).

A store is any object with two synchronous methods:

* ``load() -> dict | None``: the last saved document, or None when nothing
  was saved yet;
* ``save(document: dict) -> None``: keep this document.

and, optionally, a third:

* ``preserve() -> object``: keep a copy of what the store holds now, because
  the next save will overwrite entries that the last load dropped.

``MemoryStore`` lives here; the file store is
``sentinel_memory.stores.filestore``.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..core.cut import check_choice
from ..core.document import declared_generation, generation_of
from .generations import check_generation
from .jsontext import json_text, own_text
from .locking import DEFAULT_LOCK_WAIT, acquire, check_wait

__all__ = [
    "DURABILITY",
    "AsyncStore",
    "MemoryStore",
    "Store",
    "as_path",
    "check_durability",
    "check_store",
    "is_async_store",
]

#: PER-23: how much a file or SQLite store waits for the disk on each save, the safest first (the default).
#: ``"full"``: a save that returned survives a power cut. ``"normal"``: a power cut may undo the newest saves,
#: never tear the file or the database. ``"none"``: the operating system decides when the data reaches the
#: disk; a crashed process loses nothing, a power cut may lose the newest saves or, on some file systems,
#: leave a file empty or a database damaged.
DURABILITY = ("full", "normal", "none")


def check_durability(durability: object) -> str:
    """``durability`` checked: one of ``DURABILITY`` (PER-23).

    Raises:
        TypeError: It is not a str.
        ValueError: It is not one of ``DURABILITY``.
    """
    if durability is None:
        raise TypeError(f"durability must be a str, one of {DURABILITY}, got None")
    return check_choice("durability", durability, DURABILITY)


@runtime_checkable
class Store(Protocol):
    """What a memory needs from a store: any object with these two methods (PER-2).

    A store may also offer ``lock()``, ``generation()``, ``save_changes(changes)``
    and ``preserve()``; see the Persistence and Many writers guides. Any
    class with the two methods is a ``Store``, without subclassing it, and
    ``isinstance`` checks that it has them.


    Examples:
        >>> class DictStore:
        ...     def __init__(self):
        ...         self.document = None
        ...     def load(self):
        ...         return self.document
        ...     def save(self, document):
        ...         self.document = document
        >>> isinstance(DictStore(), Store), create_memory(store=DictStore(), autosave=True).remember("a", 1).key
        (True, 'a')
    """

    def load(self) -> dict[str, Any] | None:
        """The saved document (a dict as in the Persistence guide), or None when nothing was saved yet (PER-2).

        Returns:
            The document, or None.
        """
        ...

    def save(self, document: dict[str, Any]) -> None:
        """Keep ``document`` so that the next ``load`` returns it; raise and keep the old one if that fails (PER-2).

        Args:
            document: The memory as a JSON document (a dict as in the Persistence guide).
        """
        ...


def check_store(store: object) -> None:
    """Raise TypeError unless ``store`` has callable ``load`` and ``save`` (PER-2).

    Args:
        store: The object to check.

    Raises:
        TypeError: ``store`` lacks a callable ``load`` or ``save``.
    """
    if not (callable(getattr(store, "load", None)) and callable(getattr(store, "save", None))):
        raise TypeError(f"store must have load() and save(document) methods, got {type(store).__name__}")


class MemoryStore:
    """Keeps a deep copy of the last saved document in this process (PER-10).

    Several memories may share one: saves check generations like every store
    (MW-3), and ``lock`` serves their transactions. ``preserved`` lists
    the documents ``preserve`` kept, oldest first.

    Args:
        lock_wait: The most seconds a call waits while another thread holds the store in a
            transaction, then ``LockTimeoutError`` (MW-8). Defaults to 30.

    Raises:
        TypeError: ``lock_wait`` is not a number.
        ValueError: ``lock_wait`` is not a finite number >= 0.

    Examples:
        >>> store = MemoryStore()
        >>> create_memory(store=store, autosave=True).remember("user:name", "Jakub").key
        'user:name'
        >>> create_memory(store=store)["user:name"]
        'Jakub'
    """

    def __init__(self, *, lock_wait: float = DEFAULT_LOCK_WAIT) -> None:
        # Kept as JSON text: a deep copy several times cheaper than
        # copy.deepcopy, and as strict as a file (NaN fails at save).
        self._text: str | None = None
        self._generation = 0
        self.lock_wait = check_wait(lock_wait)
        self._lock = threading.RLock()
        self.preserved: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        acquire(self._lock, self.lock_wait, self)
        try:
            yield
        finally:
            self._lock.release()

    def __repr__(self) -> str:
        return f"<MemoryStore at {id(self):#x}>"

    def close(self) -> None:
        """Nothing to release: the document stays for the next memory that loads it (WRP-5).

        Examples:
            >>> store = MemoryStore()
            >>> store.save({"version": 1, "entries": []})
            >>> store.close()
            >>> store.load()["entries"]
            []
        """

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def load(self) -> dict[str, Any] | None:
        """A deep copy of the last saved document, or None (PER-10).

        Returns:
            The document, or None when nothing was saved yet.

        Examples:
            >>> MemoryStore().load() is None
            True
        """
        with self._held():
            return None if self._text is None else own_text(self._text)

    def save(self, document: dict[str, Any]) -> None:
        """Keep a deep copy of ``document`` (PER-10, MW-3).

        Args:
            document: The memory as a JSON document.

        Raises:
            ConflictError: The document's generation does not follow the stored one.
            ValueError: The document holds something JSON cannot hold (NaN); nothing is kept.
            TypeError: The document holds something that is not JSON (a set); nothing is kept.
            LockTimeoutError: Another thread held the store for longer than ``lock_wait``.

        Examples:
            >>> store = MemoryStore()
            >>> store.save({"version": 1, "generation": 1, "entries": []})
            >>> store.generation(), store.load()["entries"]
            (1, [])
        """
        with self._held():
            check_generation(self, declared_generation(document), self._generation)
            self._text = json_text(document)
            self._generation = generation_of(document)

    def generation(self) -> int:
        """The generation of the stored document: 0 when there is none (MW-1).

        Returns:
            The generation, an int >= 0.

        Examples:
            >>> MemoryStore().generation()
            0
        """
        with self._held():
            return self._generation

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold this store for a read-modify-write (MW-2); ``Memory.transaction`` uses it.

        Raises:
            LockTimeoutError: Another thread held the store for longer than ``lock_wait``.

        Examples:
            >>> store = MemoryStore()
            >>> with store.lock():
            ...     store.save({"version": 1, "generation": 1, "entries": []})
            >>> store.generation()
            1
        """
        with self._held():
            yield

    def preserve(self) -> None:
        """Append a copy of the current document to ``preserved`` (PER-14).

        A memory calls it before it overwrites entries that its last load dropped.

        Examples:
            >>> store = MemoryStore()
            >>> store.save({"version": 1, "entries": []})
            >>> store.preserve()
            >>> len(store.preserved)
            1
        """
        with self._held():
            if self._text is not None:
                self.preserved.append(own_text(self._text))


@runtime_checkable
class AsyncStore(Protocol):
    """A store for the native engine: ``load`` and ``save`` are coroutines (AIO-3).

    It may also offer ``save_changes(changes)``, ``generation()`` and
    ``preserve()`` as coroutines, ``lock()`` as an async context manager, and
    ``close()``, with the meanings the sync stores give them (MW-2 .. MW-4,
    PER-14, WRP-5). ``AsyncRedisStore`` is one. It is a ``typing.Protocol``:
    any class with these two coroutines is one, no subclassing needed, and
    ``isinstance`` checks for them.


    Examples:
        >>> import asyncio
        >>> from sentinel_memory import create_async_memory
        >>> class DictStore:
        ...     document = None
        ...     async def load(self):
        ...         return self.document
        ...     async def save(self, document):
        ...         self.document = document
        >>> isinstance(DictStore(), AsyncStore), asyncio.run(create_async_memory(store=DictStore())).threaded
        (True, False)
    """

    async def load(self) -> dict[str, Any] | None:
        """The saved document, or None when nothing was saved yet.

        Returns:
            The document the last ``save`` kept, as a dict of JSON values, or None.
        """
        ...

    async def save(self, document: dict[str, Any]) -> None:
        """Keep ``document`` so that the next ``load`` returns it; raise and keep the old one if that fails.

        Args:
            document: The whole memory, as ``core.to_document`` writes it.
        """
        ...


def is_async_store(store: object) -> bool:
    """Whether ``store`` is driven natively: its ``load`` is a coroutine function (AIO-3)."""
    return inspect.iscoroutinefunction(getattr(store, "load", None))


def as_path(path: str | os.PathLike[str]) -> Path:
    """The ``Path`` a store or folder was given: a str subclass as the plain str it holds (WRP-4).

    ``Path(value)`` calls a str subclass's own ``__str__``, which may raise
    anything; the text itself is what names the file.
    """
    return Path(str.__str__(path) if isinstance(path, str) else path)
