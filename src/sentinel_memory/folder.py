"""One memory per user or conversation, each in its own file in one folder (FLD-1 .. FLD-3).

User ids come from the outside world: a chat platform's user id, an email
address, whatever a request carries. None of them may choose where a file
goes. So the file name is derived, never taken: a readable slug of the id
(lower-case ASCII letters, digits and dashes, at most 40 characters) and a
hash of the whole id, ``<slug>-<hash>.json``. The slug is only for people
reading the folder; the hash is what keeps ids apart, so ``Alice`` and
``alice``, or two ids that differ only in characters the slug drops, get
different files. Nothing an id contains (``../``, a slash, a NUL, ``CON``)
can reach the file system.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from .filestore import JsonFileStore
from .memory import Memory, create_memory

__all__ = ["MemoryFolder", "file_name_for"]

#: FLD-3: what every memory a folder opens gets unless the folder or the call says otherwise.
FOLDER_DEFAULTS: dict[str, Any] = {"autosave": True, "shared": True}

#: FLD-1: how much of the id shows in the name, and how much of the hash.
SLUG_LENGTH = 40
HASH_LENGTH = 16


def file_name_for(user_id: str) -> str:
    """The file name a user id's memory is kept under: ``<slug>-<hash>.json`` (FLD-1).

    The hash is the first 16 hex digits of SHA-256 of the id's UTF-8 bytes,
    so two different ids collide only by chance, about once in 2**64. The
    slug keeps ASCII letters and digits of the id (accents removed, lower
    case), with runs of anything else as one dash.

    ```pycon
    >>> file_name_for("Jakub Rojíček")
    'jakub-rojicek-42ad52fb837a7ee5.json'
    ```
    """
    if not isinstance(user_id, str):
        raise TypeError(f"user_id must be a str, got {type(user_id).__name__}")
    digest = hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]
    ascii_only = unicodedata.normalize("NFKD", user_id).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_only).strip("-")[:SLUG_LENGTH].strip("-")
    return f"{slug}-{digest}.json" if slug else f"{digest}.json"


class MemoryFolder:
    """A folder of memories, one JSON file per user or conversation (FLD-1 .. FLD-3).

    ``MemoryFolder("./data/users").open(user_id)`` is a memory whose store is
    that user's file, created on the first save. The options given here are
    the defaults for every memory it opens; ``open`` may override them.

    Unless told otherwise, every memory a folder opens autosaves and is
    shared (``autosave=True, shared=True``, FLD-3): a web app that opens a
    user's memory per request, in several threads or processes at once,
    loses no change and gets no ``ConflictError``, because each change locks
    the user's file, reloads what others saved, and saves.

    ```pycon
    >>> users = MemoryFolder("./data/users", autosave=True, limit=500)
    >>> users.open("user-42").remember("user:name", "Jakub").key
    'user:name'
    ```
    """

    def __init__(self, path: str | os.PathLike[str], **options: Any) -> None:
        self.path = Path(path)
        if "store" in options:
            raise TypeError("a MemoryFolder chooses each memory's store; do not pass store=")
        self.options = {**FOLDER_DEFAULTS, **options}

    def __repr__(self) -> str:
        return f"MemoryFolder({str(self.path)!r})"

    def path_for(self, user_id: str) -> Path:
        """The file that holds ``user_id``'s memory: always directly inside the folder (FLD-1)."""
        return self.path / file_name_for(user_id)

    def open(self, user_id: str, **options: Any) -> Memory:
        """``user_id``'s memory, loaded from its file (missing: empty), with this folder's options and ``options`` (FLD-2)."""
        if "store" in options:
            raise TypeError("a MemoryFolder chooses each memory's store; do not pass store=")
        return create_memory(store=JsonFileStore(self.path_for(user_id)), **{**self.options, **options})
