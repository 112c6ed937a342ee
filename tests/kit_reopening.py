"""Store factories for ``serve --store kit_reopening:NAME`` that also reopen: ``NAME(store)`` is another object on
``store``'s data, so each memory of a case gets a store object of its own (the sessions group)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from kit_stores import example_store_class

import sentinel_memory as sm

#: Every store object the factories made, by the id of the data it is on: the tests count them.
MADE: list[tuple[str, int]] = []


def json_file(store: Any = None) -> sm.JsonFileStore:
    path = store.path if store is not None else Path(tempfile.mkdtemp(prefix="sentinel-kit-")) / "memory.json"
    return sm.JsonFileStore(path)


def sqlite(store: Any = None) -> sm.SqliteStore:
    path = store.path if store is not None else Path(tempfile.mkdtemp(prefix="sentinel-kit-")) / "memory.db"
    return sm.SqliteStore(path)


def docs_example(store: Any = None) -> Any:
    kind = example_store_class()
    made = kind(store.backend, key=store.key) if store is not None else kind({}, key="case")
    MADE.append((made.key, id(made.backend)))
    return made
