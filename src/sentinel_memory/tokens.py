"""Counting tokens: the built-in estimator and the checks on any tokenizer (TOK-1, CTX-5).

A tokenizer is any ``(text: str) -> number``. The built-in one is an estimate,
there so the library works with no dependency, not because it is accurate: it
over-counts English and under-counts Czech, code and Japanese. When the limit
is hard, pass the model's own tokenizer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["Tokenizer", "count_tokens", "estimate_tokens", "utf16_len"]

Tokenizer = Callable[[str], int | float]


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, JavaScript's ``String.length`` (TOK-1).

    Characters outside the Basic Multilingual Plane (emoji, rare CJK) are two
    code units in JavaScript and one ``str`` element in Python; ports must
    agree on the count, so the JavaScript one is the rule.
    """
    # Each astral character adds one extra unit; counting them via the
    # encoded length is the fastest exact way in CPython.
    return len(text.encode("utf-16-le")) // 2


def estimate_tokens(text: str) -> int:
    """``ceil(utf16_len(text) / 4)``: the built-in token estimate (TOK-1)."""
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens expects a str, got {type(text).__name__}")
    # Integer ceiling division: exact for any length, no float rounding.
    return -(-utf16_len(text) // 4)


def count_tokens(tokenizer: Tokenizer, text: str) -> int | float:
    """Count ``text`` with ``tokenizer`` and insist on a finite number >= 0 (CTX-5).

    A context window is not a place to guess: NaN, a negative count, a bool or
    a non-number raises ``TypeError`` rather than being treated as zero.
    """
    count = tokenizer(text)
    if (
        isinstance(count, bool)
        or not isinstance(count, (int, float))
        or (isinstance(count, float) and not math.isfinite(count))
        or count < 0
    ):
        raise TypeError(f"tokenizer must return a finite number >= 0, got {count!r}")
    return count
