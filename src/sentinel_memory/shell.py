"""The decisions a stateful shell makes around the core, as pure functions (MW-4, MW-6, PER-14).

A shell (the sync [`Memory`][sentinel_memory.memory.Memory], the native
engine of [`AsyncMemory`][sentinel_memory.aio.AsyncMemory]) reads a clock,
calls the core and talks to a store. What it sends the store, whether it
must reload first and what it says after a lossy load do not depend on how
it talks to the store, sync or async, so they are decided here once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import core, logs
from .errors import ConflictError, LoadWarning
from .state import MemoryState
from .values import Changes, LoadResult

__all__ = ["load_warning", "must_reload", "preserved", "what_to_save"]


def what_to_save(
    before: MemoryState,
    state: MemoryState,
    keys: Iterable[str] | None,
    *,
    generation: int,
    in_sync: bool,
    incremental: bool,
) -> Changes | dict[str, Any]:
    """What a save of ``state`` as ``generation`` sends: only the changes, or the whole document (MW-4, PER-1).

    The changes when the change names the ``keys`` it touched, the store
    holds exactly ``before`` (``in_sync``) and takes ``save_changes``
    (``incremental``); else the whole document.
    """
    if keys is not None and in_sync and incremental:
        return core.changes(before, state, keys, generation=generation)
    return core.to_document(state, generation=generation)


def must_reload(found: int, generation: int, *, dirty: bool, store: object) -> bool:
    """Whether a transaction must reload first: the store holds a generation the memory has not seen (MW-6).

    :raises ConflictError: the store moved on while the memory has changes it
        has not saved, which a reload would lose.
    """
    if found == generation:
        return False
    if dirty:
        raise ConflictError(store, generation, found)
    return True


def load_warning(store: object, result: LoadResult, limit: int, *, can_preserve: bool) -> LoadWarning:
    """The warning of a load that dropped entries or a damaged working memory (PER-14, PER-20), also logged (LOG-3)."""
    kept = "is kept" if can_preserve else "cannot be kept (the store has no preserve())"
    working = "; the damaged working memory loaded as {}" if result.working_dropped else ""
    message = (
        f"loading from {store!r} dropped {result.dropped} invalid entries and compacted "
        f"{result.compacted} to fit limit={limit}{working}; the original {kept} "
        "before the next save overwrites it"
    )
    logs.logger.info("%s", message)
    return LoadWarning(message)


def preserved(store: object) -> None:
    """LOG-3: the store kept a copy of what the last load dropped, before the save that overwrites it."""
    logs.logger.info("%r: preserved what the last load dropped, before overwriting it", store)
