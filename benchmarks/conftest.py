"""The benchmarks' redis-server: the tests' own helper, started once for the run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A redis-server on a free localhost port (skipped outside CI when it is not installed)."""
    from support import RedisServer

    try:
        server = RedisServer(tmp_path_factory.mktemp("redis-bench")).start()
    except FileNotFoundError:
        if os.environ.get("CI"):
            raise
        pytest.skip("redis-server is not installed here (make test installs it)")
    yield server
    server.stop()
