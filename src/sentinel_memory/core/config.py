"""The ``Config`` a state starts from, made from raw options by the number rule (NUM-1, NUM-3, OPT-1, CTX-9)."""

from __future__ import annotations

from .options import Duration, number_option
from .tokens import TokenizerLike, as_tokenizer
from .values import (
    Config,
    Ranking,
)


def make_config(
    *,
    limit: int | None = None,
    recency_window: Duration | None = None,
    working_ttl: Duration | None = None,
    cache_ttl: Duration | None = None,
    tokenizer: TokenizerLike | None = None,
    ranking: Ranking | None = None,
) -> Config:
    """A ``Config`` from raw options: numbers by the number rule, a tokenizer as its count (NUM-1, NUM-3, OPT-1, CTX-9).

    A numeric option that is None, not a finite number or out of its range
    falls back to its documented default (``DEFAULTS``), with an
    ``IgnoredValueWarning`` when a value was given. Pass the result as
    ``MemoryState(config=...)`` to start a state for the pure functions.

    Args:
        limit: The most entries kept before compaction evicts, an integer >= 1. Defaults to None (1000).
        recency_window: How long freshness takes to fade, in milliseconds or a ``timedelta``.
            Defaults to None (one day).
        working_ttl: How long the working memory lives without a set, in milliseconds or a ``timedelta``.
            Defaults to None (one hour).
        cache_ttl: How long a cache item lives when ``cache_put`` gives no ttl, in milliseconds or a
            ``timedelta``. Defaults to None (five minutes).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with ``encode(text)``.
            Defaults to None (``estimate_tokens``).

        ranking: How recall and a context's query rank (BM-9): ``"words"`` (REC-2), ``"bm25"``
            (BM-1 .. BM-8) or a function ``(query, entries) -> scores``. Defaults to None (``"words"``).

    Returns:
        A frozen ``Config``.

    Raises:
        TypeError: The tokenizer is neither callable nor has ``encode``, or the ranking is neither a
            str nor callable.
        ValueError: The ranking is a str other than ``"words"`` and ``"bm25"``.
        MissingStemmerError: ``ranking="bm25"`` without the Snowball stemmer (the ``bm25`` extra).

    Examples:
        >>> config = core.make_config(limit=2)
        >>> config.limit, config.cache_ttl
        (2, 300000)
        >>> core.size(MemoryState(config=config), now=1000)
        0
    """
    counter = as_tokenizer(tokenizer)
    return Config(
        limit=number_option("limit", limit),
        recency_window=number_option("recency_window", recency_window),
        working_ttl=number_option("working_ttl", working_ttl),
        cache_ttl=number_option("cache_ttl", cache_ttl),
        tokenizer=counter if counter is not None else Config().tokenizer,
        ranking=ranking,
    )
