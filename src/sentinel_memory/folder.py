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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.options import Duration
from .core.tokens import TokenizerLike
from .core.values import Compaction, Ranking
from .memory import Memory, create_memory
from .stores.contract import as_path, check_durability
from .stores.filestore import JsonFileStore
from .telemetry import conversation_id

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

    Args:
        user_id: Any string: a chat platform's user id, an email address, a session id.

    Returns:
        The file name, with no folder part; never ``.``, ``..`` or anything with a slash.

    Raises:
        TypeError: ``user_id`` is not a ``str``.

    Examples:
        >>> from sentinel_memory.folder import file_name_for
        >>> file_name_for("Jakub Rojíček")
        'jakub-rojicek-42ad52fb837a7ee5.json'
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
    the defaults for every memory it opens; ``open`` may override them. They
    are ``create_memory``'s, but ``store``: the folder chooses each store.

    Unless told otherwise, every memory a folder opens autosaves and is
    shared (``autosave=True, shared=True``, FLD-3): a web app that opens a
    user's memory per request, in several threads or processes at once,
    loses no change and gets no ``ConflictError``, because each change locks
    the user's file, reloads what others saved, and saves.

    Args:
        path: The folder. It is created, with missing parents, on the first save.
        limit: As for ``create_memory``. Defaults to None (``create_memory``'s default, 1000).
        autosave: As for ``create_memory``. Defaults to None (True, FLD-3).
        clock: As for ``create_memory``. Defaults to None (``wall_clock``).
        recency_window: As for ``create_memory``. Defaults to None (one day).
        tokenizer: As for ``create_memory``. Defaults to None (``estimate_tokens``).
        ranking: As for ``create_memory``. Defaults to None (each memory's saved ranking, BM-11).
        on_evict: As for ``create_memory``. Defaults to None (no callback).
        working_ttl: As for ``create_memory``. Defaults to None (one hour).
        cache_ttl: As for ``create_memory``. Defaults to None (5 minutes).
        load: As for ``create_memory``. Defaults to None (True: each memory loads its file).
        shared: As for ``create_memory``. Defaults to None (True, FLD-3).
        durability: How long each file's save waits for the disk, as ``JsonFileStore`` takes it
            (PER-23): ``"full"`` (the default), ``"normal"`` or ``"none"``.

    Raises:
        TypeError: ``store=`` is given, or any other name that is not an option.
        ValueError: ``durability`` is not one of ``"full"``, ``"normal"``, ``"none"``.

    Examples:
        >>> users = MemoryFolder(tmp / "users", limit=500)
        >>> users.open("user-42").remember("user:name", "Jakub").key
        'user:name'
        >>> users.open("user-42")["user:name"], users.options
        ('Jakub', {'autosave': True, 'shared': True, 'limit': 500})
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        limit: int | None = None,
        autosave: bool | None = None,
        clock: Callable[[], int | float] | None = None,
        recency_window: Duration | None = None,
        tokenizer: TokenizerLike | None = None,
        ranking: Ranking | None = None,
        on_evict: Callable[[Compaction], Any] | None = None,
        working_ttl: Duration | None = None,
        cache_ttl: Duration | None = None,
        load: bool | None = None,
        shared: bool | None = None,
        durability: str = "full",
    ) -> None:
        self.path = as_path(path)
        #: How long each memory's file waits for the disk on a save (``JsonFileStore``'s, PER-23).
        self.durability = check_durability(durability)
        #: The ``create_memory`` options every memory this folder opens gets: FLD-3's defaults and those given.
        self.options: dict[str, Any] = {
            **FOLDER_DEFAULTS,
            **_given(
                limit=limit,
                autosave=autosave,
                clock=clock,
                recency_window=recency_window,
                tokenizer=tokenizer,
                ranking=ranking,
                on_evict=on_evict,
                working_ttl=working_ttl,
                cache_ttl=cache_ttl,
                load=load,
                shared=shared,
            ),
        }

    def __repr__(self) -> str:
        return f"MemoryFolder({str(self.path)!r})"

    def path_for(self, user_id: str) -> Path:
        """The file that holds ``user_id``'s memory: always directly inside the folder (FLD-1).

        Args:
            user_id: Any string.

        Returns:
            ``path / file_name_for(user_id)``.

        Raises:
            TypeError: ``user_id`` is not a ``str``.

        Examples:
            >>> MemoryFolder(tmp).path_for("../../etc/passwd").parent == tmp
            True
        """
        return self.path / file_name_for(user_id)

    def open(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        autosave: bool | None = None,
        clock: Callable[[], int | float] | None = None,
        recency_window: Duration | None = None,
        tokenizer: TokenizerLike | None = None,
        ranking: Ranking | None = None,
        on_evict: Callable[[Compaction], Any] | None = None,
        working_ttl: Duration | None = None,
        cache_ttl: Duration | None = None,
        load: bool | None = None,
        shared: bool | None = None,
    ) -> Memory:
        """``user_id``'s memory, loaded from its file (missing: empty), with this folder's options and these (FLD-2).

        Each call makes a new ``Memory`` on a new ``JsonFileStore``; with the
        folder's defaults (shared, FLD-3) several of them on one user's file
        lose nothing. An option given here wins over the folder's; None means
        not given.

        Args:
            user_id: Whose memory: any string (FLD-1).
            limit: As for ``create_memory``. Defaults to None (the folder's).
            autosave: As for ``create_memory``. Defaults to None (the folder's: True).
            clock: As for ``create_memory``. Defaults to None (the folder's).
            recency_window: As for ``create_memory``. Defaults to None (the folder's).
            tokenizer: As for ``create_memory``. Defaults to None (the folder's).
            ranking: As for ``create_memory``. Defaults to None (the folder's).
            on_evict: As for ``create_memory``. Defaults to None (the folder's).
            working_ttl: As for ``create_memory``. Defaults to None (the folder's).
            cache_ttl: As for ``create_memory``. Defaults to None (the folder's).
            load: As for ``create_memory``. Defaults to None (the folder's: True).
            shared: As for ``create_memory``. Defaults to None (the folder's: True).

        Returns:
            The user's ``Memory``.

        Raises:
            TypeError: ``user_id`` is not a ``str``, an option is of the wrong kind, or ``store=`` is given.
            DamagedStoreError: The user's file holds something that is not a memory document.

        Examples:
            >>> users = MemoryFolder(tmp, limit=3)
            >>> users.open("alice").remember("user:name", "Alice").key
            'user:name'
            >>> users.open("alice")["user:name"], users.open("alice", limit=7).stats()["limit"]
            ('Alice', 7)
        """
        given = _given(
            limit=limit,
            autosave=autosave,
            clock=clock,
            recency_window=recency_window,
            tokenizer=tokenizer,
            ranking=ranking,
            on_evict=on_evict,
            working_ttl=working_ttl,
            cache_ttl=cache_ttl,
            load=load,
            shared=shared,
        )
        store = JsonFileStore(self.path_for(user_id), durability=self.durability)
        memory = create_memory(store=store, **{**self.options, **given})
        memory._plumbing.conversation = conversation_id(user_id)  # its spans from now on (OTL-9)
        return memory


def _given(**options: Any) -> dict[str, Any]:
    """The options that were given: None means "not given", so the folder's own (FLD-3) apply."""
    return {name: value for name, value in options.items() if value is not None}
