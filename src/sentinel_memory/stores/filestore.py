"""``JsonFileStore``: one plain JSON file, never half-written and never silently lost (PER-4, PER-9, PER-13 .. PER-17).

A save goes through these steps, and each guards against one way of losing
a memory:

1. **Serialise first.** A document that cannot be written (NaN) fails
   before any file is touched.
2. **Make the folder**, every missing level, each new one 0700 and its name
   made durable by syncing its parent.
3. **Open the folder** (to sync it later) and **lock** the sidecar file
   ``.NAME.lock`` (``sentinel_memory.stores.locking``). Under the lock, check
   the generation: the file must hold the one this memory last saw (MW-3).
   No other save of this file runs, so any ``.NAME.*.tmp`` left in the
   folder belongs to a writer that died mid-save: it is removed, since it is
   a full copy of the memory, including entries forgotten since.
4. **Write a temp file** beside the target, with the target's permission
   bits (0600 for a new file), and fsync it: the data is on disk before
   any name points at it.
5. **Keep the old file reachable** under a temp-file name (a hard link),
   then ``os.replace`` the temp file over the target, atomically.
6. **Fsync the folder**, so that the rename itself survives a power cut. If
   that fails, the save has failed: the old file is put back, so what the
   file holds matches the memory, which keeps its old state (WRP-1).

A target that is a symbolic link is followed, so the link stays and its
target is updated. Hard links cannot survive an atomic replace: the other
names keep the old content, and a ``StoreWarning``
says so.

A load reads the file once, strictly (``sentinel_memory.stores.jsontext``): a
missing file is an empty memory, and every kind of damage raises
``DamagedStoreError`` naming the file. A folder
or an unreadable file raises the ``OSError`` the system gave.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.document import declared_generation, generation_of, problem
from ..core.errors import DamagedStoreError, StoreWarning
from . import jsontext
from .contract import as_path, check_durability
from .generations import check_generation
from .locking import DEFAULT_LOCK_WAIT, HAS_FLOCK, SidecarLock, check_wait

__all__ = ["JsonFileStore"]

#: How a file this store wrote begins: its generation is read without parsing the rest.
_HEAD = re.compile(rb'\A\{\s*"version"\s*:\s*1\s*,\s*"generation"\s*:\s*(0|[1-9][0-9]{0,17})\s*,')


class JsonFileStore:
    """A memory in one JSON file, replaced atomically on every save (PER-9).

    ``load()`` returns None for a missing file and raises
    ``DamagedStoreError`` for a damaged one, leaving it untouched.
    ``save(document)`` never leaves a half-written file or a temp file
    behind. ``preserve()`` keeps a timestamped copy of the file beside it; a
    memory calls it before overwriting entries that a load dropped.

    Args:
        path: The file. Missing parent folders are created on the first save.
        lock_wait: The most seconds a save or ``lock()`` waits for the file's lock while another
            writer holds it, then ``LockTimeoutError`` (MW-8). Defaults to 30.
        durability: How long a save waits for the disk (PER-23). ``"full"``, the default: the new
            file and then its folder are fsynced, so a save that returned survives a power cut.
            ``"normal"``: the new file is fsynced before it replaces the old one, the folder is
            not; a power cut may bring back the file before the newest saves, never a torn one.
            ``"none"``: nothing is fsynced and the operating system writes when it will; a process
            that dies loses nothing it saved, a power cut may lose the newest saves or, on some
            file systems, leave the file empty. Group a model call's changes (``Memory.group``)
            to pay for one save per call whatever the level.

    Raises:
        TypeError: ``lock_wait`` is not a number, or ``durability`` is not a str.
        ValueError: ``lock_wait`` is not a finite number >= 0, or ``durability`` is not one of
            ``"full"``, ``"normal"``, ``"none"``.

    Examples:
        >>> store = JsonFileStore(tmp / "memory.json")
        >>> create_memory(store=store, autosave=True).remember("user:name", "Jakub").key
        'user:name'
        >>> create_memory(store=JsonFileStore(tmp / "memory.json"))["user:name"]
        'Jakub'
    """

    def __init__(
        self, path: str | os.PathLike[str], *, lock_wait: float = DEFAULT_LOCK_WAIT, durability: str = "full"
    ) -> None:
        self.path = as_path(path)
        self.lock_wait = check_wait(lock_wait)
        self.durability = check_durability(durability)
        self._lock = SidecarLock()

    def __repr__(self) -> str:
        return f"JsonFileStore({str(self.path)!r})"

    def close(self) -> None:
        """Nothing to release: the file is opened only for each load and save (WRP-5).

        Examples:
            >>> with JsonFileStore(tmp / "memory.json") as store:
            ...     store.save({"version": 1, "entries": []})
            >>> store.load()["entries"]
            []
        """

    def __enter__(self) -> JsonFileStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _target(self) -> Path:
        # Follow symbolic links, so that a save updates the link's target
        # rather than replacing the link with a regular file (PER-16).
        return Path(os.path.realpath(self.path))

    def load(self) -> dict[str, Any] | None:
        """The saved document, or None when the file does not exist (PER-4, PER-13).

        Returns:
            The document the file holds, or None.

        Raises:
            DamagedStoreError: The file is not a memory document (not JSON, another version,
                invalid structure); it is left untouched.
            OSError: The path is a folder or cannot be read.

        Examples:
            >>> JsonFileStore(tmp / "missing.json").load() is None
            True
        """
        try:
            raw = self._target().read_bytes()
        except FileNotFoundError:
            return None
        document = jsontext.loads(raw, self.path)
        found = problem(document)
        if found is not None:
            raise DamagedStoreError(found, self.path)
        return document

    def save(self, document: dict[str, Any]) -> None:
        """Replace the file with ``document``, atomically and durably (PER-9, PER-15).

        When ``document`` carries a generation, the file must hold the one
        before it, else nothing is written (MW-3).

        Args:
            document: The memory as a JSON document.

        Raises:
            ConflictError: The document's generation does not follow the file's.
            LockTimeoutError: Another writer held the file's lock for longer than ``lock_wait``.
            ValueError: The document holds something JSON cannot hold (NaN); no file is touched.
            OSError: The file could not be written; it keeps its old content.

        Examples:
            >>> store = JsonFileStore(tmp / "users" / "memory.json")
            >>> store.save({"version": 1, "generation": 1, "entries": []})
            >>> store.generation(), store.path.exists()
            (1, True)
        """
        data = jsontext.dumps(document)
        target = self._target()
        _make_folders(target.parent)
        with _folder(target.parent) as folder, self._lock.hold(target, self.lock_wait):
            check_generation(self.path, declared_generation(document), self._generation_at(target))
            _remove_leftovers(target)
            _replace(target, data, folder, self.durability)

    def generation(self) -> int:
        """The generation the file holds now: 0 for a missing file or one saved without (MW-1).

        Returns:
            The generation, an int >= 0.

        Raises:
            DamagedStoreError: The file is not a memory document.

        Examples:
            >>> JsonFileStore(tmp / "memory.json").generation()
            0
        """
        return self._generation_at(self._target())

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the file's exclusive lock for a read-modify-write; saves inside do not wait for it (MW-2).

        The lock is the sidecar file ``.NAME.lock``, held across threads and
        processes; ``Memory.transaction`` uses it.

        Raises:
            LockTimeoutError: Another writer held the lock for longer than ``lock_wait``.

        Examples:
            >>> store = JsonFileStore(tmp / "memory.json")
            >>> with store.lock():
            ...     store.save({"version": 1, "generation": 1, "entries": []})
            >>> store.generation()
            1
        """
        target = self._target()
        _make_folders(target.parent)
        with self._lock.hold(target, self.lock_wait):
            yield

    def _generation_at(self, target: Path) -> int:
        try:
            with open(target, "rb") as file:
                head = file.read(128)
        except FileNotFoundError:
            return 0
        found = _HEAD.match(head)
        if found is not None:
            return int(found.group(1))
        # Not laid out as this store writes it: read the whole document.
        document = self.load()
        return 0 if document is None else generation_of(document)

    def preserve(self) -> Path | None:
        """Copy the file as it is now to ``NAME.<UTC time>.orig`` beside it (PER-14).

        A memory calls it before a save overwrites entries that its last load
        dropped. An earlier copy is never overwritten.

        Returns:
            The copy's path, or None when there is no file to keep.

        Raises:
            LockTimeoutError: Another writer held the file's lock for longer than ``lock_wait``.

        Examples:
            >>> store = JsonFileStore(tmp / "memory.json")
            >>> store.preserve() is None
            True
            >>> store.save({"version": 1, "entries": []})
            >>> store.preserve().name.endswith(".orig")
            True
        """
        target = self._target()
        try:
            raw = target.read_bytes()
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        with _folder(target.parent) as folder, self._lock.hold(target, self.lock_wait):
            fd, temp = _temp_file(target)
            try:
                _write(fd, raw, mode)
                for n in range(1000):
                    copy = target.with_name(f"{target.name}.{stamp}{'' if n == 0 else f'.{n}'}.orig")
                    try:
                        os.link(temp, copy)  # never overwrites an earlier copy
                        break
                    except FileExistsError:
                        continue
                else:  # pragma: no cover - a thousand copies in one second
                    raise FileExistsError(errno.EEXIST, "no free name for a preserved copy", str(target))
            finally:
                _unlink_quietly(temp)
            _sync(folder)
        return copy


def _temp_file(target: Path) -> tuple[int, str]:
    """A new 0600 file named ``.NAME.<random>.tmp`` beside the target."""
    return tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")


def _is_leftover(name: str, target: Path) -> bool:
    """``name`` is one of this file's own temp files: ``.NAME.<random>.tmp`` with no dot in the random part.

    The random part is mkstemp's (letters, digits, ``_``) or a hard-link
    backup's hex. A neighbour's temp file, say ``memory.json.bak``'s
    ``.memory.json.bak.x1y2z3.tmp``, has a dot there, and is never touched.
    """
    prefix = f".{target.name}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False
    middle = name[len(prefix) : -len(".tmp")]
    return bool(middle) and "." not in middle


def _write(fd: int, data: bytes, mode: int | None, *, sync: bool = True) -> None:
    """Write all of ``data``, set the permission bits, fsync (unless ``sync`` is False), close."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if mode is not None:
            os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _replace(target: Path, data: bytes, folder: int | None, durability: str = "full") -> None:
    """Steps 4 to 6 of a save; on any failure the target is as it was and no temp file is left.

    ``durability`` (PER-23): ``"normal"`` skips the folder's fsync, ``"none"`` the file's too.
    """
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and old.st_nlink > 1:
        warnings.warn(
            StoreWarning(
                f"{target} has {old.st_nlink - 1} other hard link(s); an atomic save gives it a new inode, "
                "so they keep the old content"
            ),
            stacklevel=4,
        )
    fd, temp = _temp_file(target)
    backup = None
    try:
        _write(fd, data, None if old is None else stat.S_IMODE(old.st_mode), sync=durability != "none")
        if old is not None and durability == "full":
            backup = _hard_link(target)  # to put back if the folder's fsync fails
        os.replace(temp, target)
    except BaseException:
        _unlink_quietly(temp)
        if backup is not None:
            _unlink_quietly(backup)
        raise
    try:
        if durability == "full":
            _sync(folder)
    except BaseException:
        # The rename may not survive a power cut, and the caller is told the
        # save failed: make the file match that by putting the old one back.
        if backup is not None:
            os.replace(backup, target)
        elif old is None:
            _unlink_quietly(str(target))
        raise
    if backup is not None:
        _unlink_quietly(backup)


def _hard_link(target: Path) -> str | None:
    """A second name for the current file, to put it back with; None where links are not supported."""
    for _ in range(3):
        name = str(target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp"))
        try:
            os.link(target, name)
            return name
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def _make_folders(folder: Path) -> None:
    """Create every missing level of ``folder``, 0700, each one's name synced into its parent (PER-15)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for level in reversed(missing):
        try:
            os.mkdir(level, 0o700)
        except FileExistsError:
            continue
        with _folder(level.parent) as parent:
            _sync(parent)


@contextlib.contextmanager
def _folder(path: Path) -> Iterator[int | None]:
    """An open descriptor of a folder, to fsync it; None where folders cannot be opened (Windows)."""
    if os.name == "nt":  # pragma: no cover
        yield None
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield fd
    finally:
        os.close(fd)


def _sync(folder: int | None) -> None:
    if folder is not None:
        os.fsync(folder)


def _remove_leftovers(target: Path) -> None:
    """Remove temp files of saves that died mid-way; only called under the lock (PER-9)."""
    if not HAS_FLOCK:  # pragma: no cover - without a lock, another save may still be writing one
        return
    with os.scandir(target.parent) as found:
        for item in found:
            if _is_leftover(item.name, target):
                _unlink_quietly(item.path)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
