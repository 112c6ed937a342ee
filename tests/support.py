"""Helpers shared by the example tests: time constants and a fake clock."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sentinel_memory as sm

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR

#: A fixed starting time (2026-10-17T00:00:00Z, the article's createdAt).
T0 = 1_792_310_400_000


class FakeClock:
    """An injected clock that only moves when told to, and counts its reads."""

    def __init__(self, start: int = T0) -> None:
        self.now = start
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.now

    def advance(self, ms: int | float) -> None:
        self.now += ms


class RecordingStore(sm.MemoryStore):
    """A MemoryStore that keeps every document it was asked to save, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[dict] = []

    def save(self, document: dict) -> None:
        self.saves.append(document)
        super().save(document)


class FailingFileStore(sm.JsonFileStore):
    """A file store that counts its saves and fails the next one when told (``fail_next``)."""

    def __init__(self, path: Path, **options: Any) -> None:
        super().__init__(path, **options)
        self.saves = 0
        self.fail_next = False

    def save(self, document: dict[str, Any]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        self.saves += 1
        super().save(document)


def import_error_without(monkeypatch: pytest.MonkeyPatch, package: str, module: str) -> str:
    """The message of the ImportError that importing ``module`` raises with ``package`` hidden (an extra not installed)."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, module)
    with pytest.raises(ImportError) as missing:
        importlib.import_module(module)
    return str(missing.value)


def saved_then_unloaded(path: os.PathLike[str] | str, n: int) -> sm.Memory:
    """Save a memory of n entries ``k0``, ``k1``, ... to a file at ``path``; return a second memory on it, not loaded yet."""
    store = sm.JsonFileStore(path)
    writer = sm.create_memory(store=store, clock=lambda: T0, limit=max(n, 1000))
    for i in range(n):
        writer.remember(f"k{i}", f"value {i}")
    writer.save()
    return sm.create_memory(store=store, load=False, clock=lambda: T0, limit=max(n, 1000))


def nest(depth: int, inner: object = None) -> object:
    """A value ``depth`` lists deep: ``nest(2) == [[None]]``."""
    value = inner
    for _ in range(depth):
        value = [value]
    return value


def stack_depth() -> int:
    """How many frames deep this call is."""
    frame, depth = sys._getframe(), 0
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def at_depth(frames: int, function: Callable[[], object]) -> object:
    """Call ``function`` from ``frames`` frames deeper than here."""
    if frames <= 0:
        return function()
    return at_depth(frames - 1, function)


class RedisServer:
    """A real redis-server of the tests' own: a free localhost port, a throwaway folder, append-only, fsync always.

    Nothing outside 127.0.0.1 and the folder is touched; ``stop`` ends it,
    ``restart`` stops and starts it on the same port and folder, as a crash
    and recovery would.
    """

    def __init__(self, folder) -> None:
        import shutil
        import socket

        self.binary = shutil.which("redis-server")
        if self.binary is None:
            raise FileNotFoundError("redis-server is not installed (make test installs it)")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.folder = folder
        self.process = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        import subprocess
        import time

        import redis

        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--protected-mode",
                "yes",
                "--daemonize",
                "no",
                "--logfile",
                "redis.log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        for _ in range(200):
            try:
                client.ping()
                return self
            except redis.exceptions.ConnectionError:
                time.sleep(0.025)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """The tests' own redis-server, started once and stopped at the end; skipped only outside CI when not installed."""
    try:
        server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    except FileNotFoundError:
        if os.environ.get("CI"):
            raise
        pytest.skip("redis-server is not installed here (make test installs it)")
    yield server
    server.stop()


def check_well_formed(state: sm.MemoryState) -> None:
    """ENT-14, ENT-17: what a state built by remembers always satisfies, whatever built this one.

    Unique seqs, ``next_seq`` above every one of them, the table in seq
    order with each entry under its own key, ``turns`` at least the largest
    stored turn, and an index that holds exactly the table's entries in each
    of its orders.
    """
    from sentinel_memory.core.index import Index

    entries = list(state.entries.values())
    seqs = [e.seq for e in entries]
    assert len(set(seqs)) == len(seqs), "two entries share a seq"
    assert seqs == sorted(seqs), "the table is not in seq order"
    assert all(state.next_seq > seq for seq in seqs), "next_seq is not above every seq"
    assert all(state.entries[e.key] is e for e in entries), "an entry is filed under another key"
    turns = [
        int(k[5:])
        for k in state.entries
        if k.startswith("chat:") and len(k) <= 4005 and k[5:].isascii() and k[5:].isdigit()
    ]
    assert state.turns >= max(turns, default=0), "turns is below a stored turn"
    truth = Index.of(entries)
    for order in ("by_importance", "by_age", "by_expiry"):
        assert list(getattr(state.index, order)) == list(getattr(truth, order)), order


def keep_writing(state: sm.MemoryState, now: int | float) -> sm.MemoryState:
    """The step after a load or a hand-built state: remembers, a turn, a forget and a compaction all work.

    Each step is checked: the new entry is stored with a seq above every
    other, the turn takes a key no stored entry had, and the state stays
    well formed throughout (ENT-6, ENT-16, ENT-17).
    """
    from sentinel_memory import core

    check_well_formed(state)
    for i, key in enumerate(["after:load", "after:load", *list(state.entries)[:1], "chat:1"]):
        state, _ = core.remember(state, key, {"step": i}, now=now + i, importance=1.0)
        check_well_formed(state)
        if key in state.entries:  # a tiny limit may evict it at once (CMP-4)
            assert state.entries[key].seq == state.next_seq - 1 == max(e.seq for e in state.entries.values())
        before = set(state.entries)
        state, _, turn = core.add_turn(state, "user", f"turn {i}", now=now + i, importance=1.0)
        assert turn not in before
        assert state.entries.get(turn) is None or state.entries[turn].data == {"role": "user", "content": f"turn {i}"}
        check_well_formed(state)
    state, _ = core.forget(state, "after:load", now=now + 10)
    assert not core.has(state, "after:load", now=now + 10)
    state, _ = core.compact(state, now=now + 10)
    check_well_formed(state)
    return state
