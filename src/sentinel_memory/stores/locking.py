"""The sidecar lock every file-backed store takes (PER-15, MW-2).

A store's saves, and a memory's read-modify-write transactions, hold an
exclusive ``flock`` on ``.NAME.lock`` beside the file. ``flock`` belongs to
the open file: the kernel releases it when the process dies, so a killed
writer never leaves a stale lock, and two opens in one process exclude each
other like two processes do. The lock file is never removed or replaced
(removing it would let two writers lock two different files).

One ``SidecarLock`` is re-entrant for the thread that holds it, so a
save inside a transaction does not wait for itself.

A process forked while another thread holds a lock gets a copy of that
thread's descriptor, and with it a share of the ``flock``, which it would
keep until it exits, while the thread that held the lock is not in it to
let go: the parent could never lock again, nor the child. So a forked child
closes the copies held for threads it does not have, and starts those
locks afresh (MW-9).

No wait is unbounded (MW-8): a holder that never lets go (a transaction
stuck in the app, a process stopped in a debugger) makes the others raise
``LockTimeoutError`` after ``wait`` seconds instead of hanging with it.
``flock`` has no timeout of its own, so the wait asks without blocking and
sleeps a little longer each time, up to ``_LONGEST_NAP``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import LockTimeoutError
from ..core.shown import shown
from ..logs import logger

try:  # POSIX; elsewhere saves are still atomic, but not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_LOCK_WAIT", "HAS_FLOCK", "SidecarLock", "acquire", "check_wait", "lock_path"]

#: Whether this platform has ``flock``; without it nothing is locked across processes.
HAS_FLOCK = fcntl is not None

#: MW-8: how many seconds every store waits for its lock before ``LockTimeoutError``.
DEFAULT_LOCK_WAIT = 30.0
#: The longest sleep between two tries of a held ``flock``, in seconds.
_LONGEST_NAP = 0.01


def check_wait(wait: object) -> float:
    """A store's ``lock_wait``: a finite number of seconds >= 0 (MW-8); anything else raises."""
    if isinstance(wait, bool) or not isinstance(wait, (int, float)):
        raise TypeError(f"lock_wait must be a number of seconds, got {type(wait).__name__}")
    if not 0 <= wait < float("inf"):
        raise ValueError(f"lock_wait must be a finite number of seconds >= 0, got {shown(wait)}")
    if wait > threading.TIMEOUT_MAX:  # a thread lock refuses to wait longer, with OverflowError
        raise ValueError(f"lock_wait must be at most {threading.TIMEOUT_MAX:g} seconds, got {shown(wait)}")
    try:
        return float(wait)
    except OverflowError:  # an int beyond the double range: not a finite number of seconds
        raise ValueError(f"lock_wait must be a finite number of seconds >= 0, got {shown(wait)}") from None


def acquire(lock: threading.Lock | threading.RLock, wait: float, location: object) -> None:
    """Take a thread lock within ``wait`` seconds, else LockTimeoutError naming ``location`` (MW-8)."""
    if lock.acquire(blocking=False):
        return
    started = time.monotonic()
    if not lock.acquire(timeout=wait):
        logger.warning("%s: still locked by another writer after %g s; gave up", location, wait)
        raise LockTimeoutError(location, wait)
    logger.debug("%s: waited %.3f s for the lock", location, time.monotonic() - started)


def _flock(fd: int, deadline: float, location: Path, wait: float) -> None:
    """Take the exclusive ``flock`` on ``fd`` by ``deadline`` (``time.monotonic``), else LockTimeoutError."""
    assert fcntl is not None
    nap = 0.0005
    started = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if nap > 0.0005:
                logger.debug("%s: waited %.3f s for the lock", location, time.monotonic() - started)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                logger.warning("%s: still locked by another writer after %g s; gave up", location, wait)
                raise LockTimeoutError(location, wait) from None
            time.sleep(min(nap, left))
            nap = min(nap * 2, _LONGEST_NAP)


def lock_path(target: Path) -> Path:
    """``.NAME.lock`` beside ``target``."""
    return target.with_name(f".{target.name}.lock")


#: Every SidecarLock of this process, for the fork handler below.
_LOCKS: weakref.WeakSet[SidecarLock] = weakref.WeakSet()
#: Held while a sidecar is opened and its descriptor noted, and across a fork: a child never inherits a
#: descriptor its lock does not know of (opened, not yet noted), which would keep the parent's flock held.
_OPENING = threading.Lock()


def _before_fork() -> None:
    _OPENING.acquire()


def _after_fork_in_parent() -> None:
    _OPENING.release()


def _after_fork_in_child() -> None:
    """MW-9: in a forked child, let go of what other threads of the parent held."""
    _OPENING.release()
    me = threading.get_ident()
    for lock in list(_LOCKS):
        if lock._owner == me:
            continue  # forked from inside its own hold: the child is in that block too
        if lock._fd is not None:
            try:
                os.close(lock._fd)  # this copy of the descriptor shares the parent's flock
            except OSError:  # pragma: no cover - already closed
                pass
        lock._threads, lock._owner, lock._depth, lock._fd = threading.Lock(), None, 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


class SidecarLock:
    """An exclusive lock on a file's sidecar, re-entrant for the thread holding it."""

    def __init__(self) -> None:
        self._threads = threading.Lock()  # threads of this process queue here, before the flock
        self._owner: int | None = None
        self._depth = 0
        self._fd: int | None = None  # the descriptor holding the flock, while a thread of this process holds it
        _LOCKS.add(self)

    @property
    def held(self) -> bool:
        """True when the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    @contextlib.contextmanager
    def hold(self, target: Path, wait: float = DEFAULT_LOCK_WAIT) -> Iterator[None]:
        """Hold the lock on ``target``'s sidecar for the block, waiting at most ``wait`` seconds for other holders.

        :raises LockTimeoutError: another thread or process held it all that time (MW-8).
        """
        if self.held:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        deadline = time.monotonic() + wait
        sidecar = lock_path(target)
        acquire(self._threads, wait, sidecar)
        try:
            if fcntl is not None:
                with _OPENING:
                    self._fd = os.open(sidecar, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if self._fd is not None:
                    _flock(self._fd, deadline, sidecar, wait)
                self._owner, self._depth = threading.get_ident(), 1
                try:
                    yield
                finally:
                    self._owner, self._depth = None, 0
            finally:
                if self._fd is not None:
                    fd, self._fd = self._fd, None
                    os.close(fd)  # closing the only descriptor releases the flock
        finally:
            self._threads.release()
