"""The generation check every store makes under its lock before it writes (MW-1, MW-3).

A save declares the generation it makes; the store refuses it, with a
logged ``ConflictError``, unless the stored generation is the one before.
The check and the write must happen under one lock, so no other saver can
write in between (MW-3). The generation a document declares is read by
``sentinel_memory.core.document.declared_generation``.
"""

from __future__ import annotations

from ..core.errors import ConflictError
from ..logs import logger

__all__ = ["check_generation"]


def check_generation(location: object, generation: int | None, stored: int) -> None:
    """ConflictError unless ``generation`` is the one after ``stored`` (MW-3); None is not checked.

    Every store calls this under its lock, for a whole document and for a
    change alike.
    """
    if generation is not None and stored != generation - 1:
        logger.warning(
            "%s: save refused, saved by someone else (generation %d, expected %d)", location, stored, generation - 1
        )
        raise ConflictError(location, generation - 1, stored)
