"""Where a memory's document lives between runs (PER-2, PER-10, PER-14).

A store is any object with two synchronous methods:

* ``load() -> dict | None``: the last saved document, or None when nothing
  was saved yet;
* ``save(document: dict) -> None``: keep this document.

and, optionally, a third:

* ``preserve() -> object``: keep a copy of what the store holds now, because
  the next save will overwrite entries that the last load dropped.

:class:`MemoryStore` lives here; the file store is
:mod:`sentinel_memory.filestore`.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, runtime_checkable

from .filestore import JsonFileStore

__all__ = ["JsonFileStore", "MemoryStore", "Store", "check_store"]


@runtime_checkable
class Store(Protocol):
    """The store protocol (PER-2)."""

    def load(self) -> dict[str, Any] | None: ...

    def save(self, document: dict[str, Any]) -> None: ...


def check_store(store: object) -> None:
    """TypeError unless ``store`` has callable ``load`` and ``save`` (PER-2)."""
    if not (callable(getattr(store, "load", None)) and callable(getattr(store, "save", None))):
        raise TypeError(f"store must have load() and save(document) methods, got {type(store).__name__}")


class MemoryStore:
    """Keeps a deep copy of the last saved document in this process (PER-10).

    ``preserved`` lists the documents :meth:`preserve` kept, oldest first.
    """

    def __init__(self) -> None:
        self._document: dict[str, Any] | None = None
        self.preserved: list[dict[str, Any]] = []

    def load(self) -> dict[str, Any] | None:
        """A deep copy of the last saved document, or None."""
        return copy.deepcopy(self._document)

    def save(self, document: dict[str, Any]) -> None:
        """Keep a deep copy of ``document``."""
        self._document = copy.deepcopy(document)

    def preserve(self) -> None:
        """Append a copy of the current document to :attr:`preserved` (PER-14)."""
        if self._document is not None:
            self.preserved.append(copy.deepcopy(self._document))
