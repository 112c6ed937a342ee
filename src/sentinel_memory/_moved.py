"""The module paths of earlier releases, kept importable for one release (LAY-5).

Each old path (``sentinel_memory.errors``, ``sentinel_memory.filestore``,
...) is a thin module that calls ``moved``: importing it imports the new
module, gives a ``DeprecationWarning`` naming the new path, and binds the old
name to the very same module object, so every name, ``isinstance`` check and
patch works through either path.
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["MOVED", "moved"]

#: Each old module path, and the path that holds the module now.
MOVED = {
    "sentinel_memory.aioredis": "sentinel_memory.stores.aioredis",
    "sentinel_memory.document": "sentinel_memory.core.document",
    "sentinel_memory.errors": "sentinel_memory.core.errors",
    "sentinel_memory.expiry": "sentinel_memory.core.expiry",
    "sentinel_memory.filestore": "sentinel_memory.stores.filestore",
    "sentinel_memory.index": "sentinel_memory.core.index",
    "sentinel_memory.jsondata": "sentinel_memory.core.jsondata",
    "sentinel_memory.jsontext": "sentinel_memory.stores.jsontext",
    "sentinel_memory.langchain": "sentinel_memory.integrations.langchain",
    "sentinel_memory.lexical": "sentinel_memory.core.lexical",
    "sentinel_memory.locking": "sentinel_memory.stores.locking",
    "sentinel_memory.options": "sentinel_memory.core.options",
    "sentinel_memory.persistent": "sentinel_memory.core.persistent",
    "sentinel_memory.prompt": "sentinel_memory.core.prompt",
    "sentinel_memory.redisstore": "sentinel_memory.stores.redisstore",
    "sentinel_memory.retention": "sentinel_memory.core.retention",
    "sentinel_memory.shown": "sentinel_memory.core.shown",
    "sentinel_memory.sqlitestore": "sentinel_memory.stores.sqlitestore",
    "sentinel_memory.state": "sentinel_memory.core.state",
    "sentinel_memory.table": "sentinel_memory.core.table",
    "sentinel_memory.tokens": "sentinel_memory.core.tokens",
    "sentinel_memory.turns": "sentinel_memory.core.turns",
    "sentinel_memory.unicode14": "sentinel_memory.core.unicode14",
    "sentinel_memory.values": "sentinel_memory.core.values",
}


def moved(old: str) -> None:
    """Make the module ``old`` the module it moved to, warning that ``old`` goes in the next release.

    Args:
        old: The old module's name (its ``__name__``), a key of ``MOVED``.
    """
    new = MOVED[old]
    warnings.warn(
        f"{old} has moved to {new}: import it from there ({old} is removed in the next release)",
        DeprecationWarning,
        stacklevel=_importer_level(),
    )
    sys.modules[old] = importlib.import_module(new)


def _importer_level() -> int:
    """The stacklevel of the line that imported the old path: past this module, the old one and the import system.

    ``warnings`` passes over the import system's own frames, so they are not counted; the frame of
    ``importlib.import_module`` is, and passed over too.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename in (__file__, importlib.__file__)
        or frame.f_globals.get("__name__") in MOVED
        or frame.f_code.co_filename.startswith("<frozen importlib")
    ):
        if not frame.f_code.co_filename.startswith("<frozen importlib"):
            level += 1
        frame = frame.f_back  # type: ignore[assignment]
    return level
