"""Helpers shared by the example tests: time constants and a fake clock."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

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


def in_processes(count: int, work: Callable[[int], object]) -> list[int]:
    """Run ``work(worker)`` in ``count`` forked processes at once; their exit codes (0: ``work`` returned)."""
    pids = []
    for worker in range(count):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                work(worker)
                code = 0
            finally:
                os._exit(code)  # never back into the test runner
        pids.append(pid)
    return [os.waitpid(pid, 0)[1] for pid in pids]


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
