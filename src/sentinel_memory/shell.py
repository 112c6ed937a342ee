"""The decisions a stateful shell makes around the core, as pure functions (MW-4, MW-6, PER-14).

A shell (the sync ``Memory``, the native
engine of ``AsyncMemory``) reads a clock,
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

    Args:
        before: The state before the change.
        state: The state to save.
        keys: The keys the change may have touched, or None when that is not known (a load, a
            ``save()``).
        generation: The generation the save is stamped with (MW-1).
        in_sync: Whether the store holds exactly ``before``.
        incremental: Whether the store has ``save_changes``.

    Returns:
        A ``Changes`` for ``save_changes``, or the whole document (a dict) for ``save``.

    Examples:
        >>> from sentinel_memory.shell import what_to_save
        >>> after, _ = core.remember(MemoryState(), "a", 1, now=1000)
        >>> type(what_to_save(MemoryState(), after, ["a"], generation=1, in_sync=True, incremental=True)).__name__
        'Changes'
        >>> what_to_save(MemoryState(), after, None, generation=1, in_sync=True, incremental=True)["generation"]
        1
    """
    if keys is not None and in_sync and incremental:
        return core.changes(before, state, keys, generation=generation)
    return core.to_document(state, generation=generation)


def must_reload(found: int, generation: int, *, dirty: bool, store: object) -> bool:
    """Whether a transaction must reload first: the store holds a generation the memory has not seen (MW-6).

    Args:
        found: The generation the store holds now.
        generation: The generation the memory last loaded or saved.
        dirty: Whether the memory has changes it has not saved.
        store: The store, named by the error.

    Returns:
        True when the memory must reload before the transaction's changes.

    Raises:
        ConflictError: The store moved on while the memory has changes it has not saved, which a
            reload would lose.

    Examples:
        >>> from sentinel_memory.shell import must_reload
        >>> must_reload(3, 3, dirty=True, store="store"), must_reload(4, 3, dirty=False, store="store")
        (False, True)
    """
    if found == generation:
        return False
    if dirty:
        raise ConflictError(store, generation, found)
    return True


def load_warning(store: object, result: LoadResult, limit: int, *, can_preserve: bool) -> LoadWarning:
    """The warning of a load that dropped entries or a damaged working memory (PER-14, PER-20), also logged (LOG-3).

    Args:
        store: The store loaded from, named by the message.
        result: The ``LoadResult`` of the load.
        limit: The memory's ``limit``, named by the message.
        can_preserve: Whether the store can keep the original (it has ``preserve()``).

    Returns:
        A ``LoadWarning`` for the caller to emit with ``warnings.warn``.
    """
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
    """LOG-3: the store kept a copy of what the last load dropped, before the save that overwrites it.

    Args:
        store: The store that kept the copy, named in the log record.
    """
    logs.logger.info("%r: preserved what the last load dropped, before overwriting it", store)
