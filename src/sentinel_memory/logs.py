"""What the library tells an operator, through the standard ``logging`` module (LOG-1 .. LOG-3).

Everything goes to the ``sentinel_memory`` logger, which has a
``NullHandler`` and so is silent until the app configures logging. Only
keys, counts, store names and times are ever logged, never the data
(LOG-1): a memory holds what users said.

* INFO: entries expired or evicted (counts; the keys at DEBUG), a load that
  dropped entries or a damaged working memory, a copy preserved before it
  is overwritten, a store server reachable again.
* WARNING: a save that conflicted, a lock not had within ``lock_wait``, a
  store server that cannot be reached.
* DEBUG: the keys dropped, a lock that was waited for.
"""

from __future__ import annotations

import logging

from .core.values import Compaction

__all__ = ["dropped", "logger"]

#: The library's one logger; silent unless the app configures logging (LOG-1).
logger = logging.getLogger("sentinel_memory")
logger.addHandler(logging.NullHandler())


def dropped(where: object, compaction: Compaction) -> None:
    """LOG-2: what a compaction dropped: counts at INFO, keys at DEBUG, never data.

    Nothing is logged for a compaction that dropped nothing, or when INFO is
    not enabled for the ``sentinel_memory`` logger.

    Args:
        where: What dropped the entries (a store), named in the log record.
        compaction: The ``Compaction`` to report.
    """
    if not compaction or not logger.isEnabledFor(logging.INFO):
        return
    expired, evicted = compaction.expired, compaction.evicted
    logger.info("%r: %d expired, %d evicted", where, len(expired), len(evicted))
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "%r: expired %s; evicted %s", where, [e.key for e in expired] or "-", [e.key for e in evicted] or "-"
        )
