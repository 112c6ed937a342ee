"""The benchmarks use the tests' own redis-server fixture."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support import redis_server  # noqa: F401 - the fixture


def pytest_addoption(parser):
    """``--data``: LoCoMo's JSON for the recall quality benchmark (default ../shared/locomo/locomo-dev.json)."""
    parser.addoption("--data", default=None, help="LoCoMo's JSON (locomo10.json or a part of it)")
