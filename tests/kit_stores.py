"""Store factories for ``serve --store kit_stores:NAME``: each call makes a new, empty store.

The tests run the conformance vectors with each of these in the loop, so
``serve --store module:factory`` is checked on every built-in store kind
and on the Extending page's example store.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import sentinel_memory as sm

ROOT = Path(__file__).resolve().parent.parent


def example_store_class() -> type:
    """The DictStore of docs/extending.md, defined by running the page's own code block."""
    page = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "class DictStore" in b)
    namespace: dict = {}
    exec(compile(block, "docs/extending.md", "exec"), namespace)
    return namespace["DictStore"]


def memory() -> sm.MemoryStore:
    return sm.MemoryStore()


def json_file() -> sm.JsonFileStore:
    return sm.JsonFileStore(Path(tempfile.mkdtemp(prefix="sentinel-kit-")) / "memory.json")


def sqlite() -> sm.SqliteStore:
    return sm.SqliteStore(Path(tempfile.mkdtemp(prefix="sentinel-kit-")) / "memory.db")


def docs_example():
    return example_store_class()({}, key="case")


def async_coroutines(store=None):
    """An async store (AIO-3) of coroutines; given one of them, another object on its data (a reopen)."""
    from async_support import CoroutineStore

    return CoroutineStore(store.inner if store is not None else sm.MemoryStore())


def async_redis(store=None):
    """The built-in AsyncRedisStore on the tests' redis-server (its URL in SENTINEL_TEST_REDIS_URL), a key per case."""
    import os
    import uuid

    key = store.key if store is not None else f"vector-{uuid.uuid4().hex}"
    return sm.AsyncRedisStore(url=os.environ["SENTINEL_TEST_REDIS_URL"], key=key)
