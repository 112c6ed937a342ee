"""The sidecar lock every file-backed store takes (PER-15, MW-2).

A store's saves, and a memory's read-modify-write transactions, hold an
exclusive ``flock`` on ``.NAME.lock`` beside the file. ``flock`` belongs to
the open file: the kernel releases it when the process dies, so a killed
writer never leaves a stale lock, and two opens in one process exclude each
other like two processes do. The lock file is never removed or replaced
(removing it would let two writers lock two different files).

One ``SidecarLock`` is re-entrant for the thread that holds it, so a
save inside a transaction does not wait for itself.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

try:  # POSIX; elsewhere saves are still atomic, but not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["HAS_FLOCK", "SidecarLock", "lock_path"]

#: Whether this platform has ``flock``; without it nothing is locked across processes.
HAS_FLOCK = fcntl is not None


def lock_path(target: Path) -> Path:
    """``.NAME.lock`` beside ``target``."""
    return target.with_name(f".{target.name}.lock")


class SidecarLock:
    """An exclusive lock on a file's sidecar, re-entrant for the thread holding it."""

    def __init__(self) -> None:
        self._threads = threading.Lock()  # threads of this process queue here, before the flock
        self._owner: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        """True when the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    @contextlib.contextmanager
    def hold(self, target: Path) -> Iterator[None]:
        """Hold the lock on ``target``'s sidecar for the block (waits for other holders)."""
        if self.held:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        with self._threads:
            fd = None
            if fcntl is not None:
                fd = os.open(lock_path(target), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._owner, self._depth = threading.get_ident(), 1
                try:
                    yield
                finally:
                    self._owner, self._depth = None, 0
            finally:
                if fd is not None:
                    os.close(fd)  # closing the only descriptor releases the flock
