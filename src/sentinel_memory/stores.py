"""Where a memory's document lives between runs (PER-2, PER-4, PER-9, PER-10).

A store is any object with two synchronous methods:

* ``load() -> dict | None``: the last saved document, or None when nothing
  was saved yet;
* ``save(document: dict) -> None``: keep this document.

There is no async store and no locking: two processes writing one file will
overwrite each other.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

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
    """Keeps a deep copy of the last saved document in this process (PER-10)."""

    def __init__(self) -> None:
        self._document: dict[str, Any] | None = None

    def load(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._document)

    def save(self, document: dict[str, Any]) -> None:
        self._document = copy.deepcopy(document)


def _reject_constant(name: str) -> Any:
    # JSON has no NaN or Infinity; Python's parser would accept them.
    raise ValueError(f"{name} is not valid JSON")


class JsonFileStore:
    """A plain JSON file, replaced atomically on every save (PER-4, PER-9).

    ``save`` writes a temp file in the target's folder, fsyncs it, renames it
    over the target and fsyncs the folder, so a crash mid-write leaves the old
    file intact rather than half a JSON document. A missing file loads as
    None (empty memory); a damaged one raises and is left untouched.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"JsonFileStore({str(self.path)!r})"

    def load(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return json.loads(text, parse_constant=_reject_constant)

    def save(self, document: dict[str, Any]) -> None:
        # Serialise first: a document that cannot be written fails before
        # any file is touched.
        text = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1)
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        handle, temp_name = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as temp:
                temp.write(text)
                temp.flush()
                os.fsync(temp.fileno())
            os.replace(temp_name, self.path)
        except BaseException:
            # Whatever failed, the old file is untouched; leave no debris.
            try:
                os.unlink(temp_name)
            except FileNotFoundError:
                pass
            raise
        _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable, where the platform allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows cannot open a folder; the rename still happened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
