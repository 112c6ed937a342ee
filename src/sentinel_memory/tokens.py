"""Counting tokens: the built-in estimator and the checks on any tokenizer (TOK-1, CTX-5).

A tokenizer is any ``(text: str) -> number``, or any object with an
``encode(text)`` method (tiktoken's and bpe-openai's ``Encoding``, a Hugging
Face tokenizer), which counts ``len(encode(text))`` (CTX-9). The built-in one is an estimate,
there so the library works with no dependency, not because it is accurate: it
over-counts English and under-counts Czech, code and Japanese. When the limit
is hard, pass the model's own tokenizer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sized
from typing import Protocol, runtime_checkable

from .shown import shown

__all__ = [
    "Encoder",
    "Tokenizer",
    "TokenizerLike",
    "additive",
    "as_tokenizer",
    "count_tokens",
    "estimate_tokens",
    "upper_bound_tokens",
    "utf16_len",
]

Tokenizer = Callable[[str], int | float]


@runtime_checkable
class Encoder(Protocol):
    """Anything with an ``encode(text)`` that returns the tokens: a tokenizer object (CTX-9).

    tiktoken's and bpe-openai's ``Encoding`` and Hugging Face tokenizers are
    encoders; a memory counts ``len(encode(text))``.
    """

    def encode(self, text: str, /) -> Sized:
        """The tokens of ``text``; only their number matters.

        Args:
            text: The text to encode.

        Returns:
            The tokens, any sized collection.
        """
        ...


#: What ``tokenizer=`` accepts: a counting function or a tokenizer object.
TokenizerLike = Tokenizer | Encoder


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, JavaScript's ``String.length`` (TOK-1).

    Characters outside the Basic Multilingual Plane (emoji, rare CJK) are two
    code units in JavaScript and one ``str`` element in Python; ports must
    agree on the count, so the JavaScript one is the rule.

    Args:
        text: The text to measure.

    Returns:
        The number of UTF-16 code units.

    Examples:
        >>> from sentinel_memory.tokens import utf16_len
        >>> utf16_len("abc"), utf16_len("🙂")
        (3, 2)
    """
    if text.isascii():  # CPython knows this without looking at the characters
        return len(text)
    # Each astral character adds one extra unit; counting them via the
    # encoded length is the fastest exact way in CPython.
    return len(text.encode("utf-16-le")) // 2


def _quarter_up(units: int) -> int:
    # Integer ceiling division: exact for any length, no float rounding.
    return -(-units // 4)


def estimate_tokens(text: str) -> int:
    """The built-in token estimate: ``ceil(n / 4)`` for a text of ``n`` UTF-16 code units (TOK-1).

    An emoji counts two units, as JavaScript's ``String.length`` does. It is
    an estimate: close for English, about a third of the real count for
    Japanese. See ``upper_bound_tokens`` for a count that never falls short.
    It is the tokenizer a memory uses unless given one.

    Args:
        text: The text to count.

    Returns:
        The estimated number of tokens.

    Raises:
        TypeError: ``text`` is not a ``str``.

    Examples:
        >>> estimate_tokens("Hello, world!"), estimate_tokens("🙂")
        (4, 1)
    """
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens expects a str, got {type(text).__name__}")
    return _quarter_up(utf16_len(text))


# The fast context fill (CTX-8): a tokenizer may say how its count of a
# joined text follows from its parts. ``measure`` is additive over
# concatenation and gives whole numbers; ``tokens_from_measure`` turns a total
# into a count; ``measure_limit`` is the largest total whose count still fits
# a budget. For the estimator all three are exact, so the fill can keep a
# running length in integers and compare it with one number.
estimate_tokens.measure = utf16_len  # type: ignore[attr-defined]
estimate_tokens.tokens_from_measure = _quarter_up  # type: ignore[attr-defined]
# ceil(units / 4) <= budget  <=>  units <= 4 * floor(budget), for whole units.
estimate_tokens.measure_limit = lambda budget: 4 * math.floor(budget)  # type: ignore[attr-defined]


def upper_bound_tokens(text: str) -> int:
    """The UTF-8 length of ``text``: never fewer than a byte-level BPE counts (TOK-2).

    GPT-2's encoding, cl100k_base, o200k_base and Llama 3's tokenizer are
    byte-level BPEs: every token stands for at least one byte of the UTF-8
    text, so no text has more tokens than bytes. Use this when the budget is
    a hard limit and the real tokenizer is not at hand. The price is
    pessimism: on this project's multilingual test corpus it counts about
    4.8 times o200k_base's tokens for English, 4.1 times for Japanese and
    2.7 times for Czech, so a budget holds a quarter to a half of what it
    could. Unlike ``estimate_tokens``, which counts Japanese at about a
    third of its real cost, it never under-counts. It is additive, so the
    context fill sums line lengths (CTX-8).

    Args:
        text: The text to count.

    Returns:
        The number of bytes of ``text`` in UTF-8.

    Raises:
        TypeError: ``text`` is not a ``str``.

    Examples:
        >>> upper_bound_tokens("Hello, world!"), upper_bound_tokens("česky")
        (13, 6)
        >>> mem.remember("user:name", "Jakub").key
        'user:name'
        >>> mem.get_context(token_budget=100, tokenizer=upper_bound_tokens).tokens
        16
    """
    if not isinstance(text, str):
        raise TypeError(f"upper_bound_tokens expects a str, got {type(text).__name__}")
    return _utf8_len(text)


def _utf8_len(text: str) -> int:
    # A lone surrogate cannot be in an entry (ENT-2) but can be in a separator: count it as 3 bytes.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


upper_bound_tokens.measure = _utf8_len  # type: ignore[attr-defined]
upper_bound_tokens.tokens_from_measure = lambda total: total  # type: ignore[attr-defined]
upper_bound_tokens.measure_limit = math.floor  # type: ignore[attr-defined]


def additive(tokenizer: Tokenizer) -> Tokenizer:
    """Declare ``tokenizer`` additive: its count of ``a + b`` is its count of ``a`` plus that of ``b`` (CTX-8).

    The context fill then counts each line once and sums, instead of
    re-counting the whole text for every candidate. The sums are exact only
    in whole numbers, so when a line's count is not an ``int`` the fill
    re-counts as if nothing had been declared. The returned text is still
    counted once with the tokenizer; if that disagrees with the sum (the
    declaration was wrong for this text), the call falls back to the exact
    fill, so ``tokens == tokenizer(text) <= budget`` holds either way.

    Args:
        tokenizer: A counting function ``(text) -> number`` whose counts add up over concatenation.

    Returns:
        A counting function that gives the same counts and carries the declaration.

    Raises:
        TypeError: ``tokenizer`` is not callable.

    Examples:
        >>> words = additive(lambda text: len(text.split()))
        >>> counted = create_memory(tokenizer=words)
        >>> counted.remember("user:name", "Jakub Novak").key
        'user:name'
        >>> counted.get_context(token_budget=10).tokens
        3
    """
    if not callable(tokenizer):
        raise TypeError(f"tokenizer must be callable, got {type(tokenizer).__name__}")

    def count(text: str) -> int | float:
        return tokenizer(text)

    count.measure = tokenizer  # type: ignore[attr-defined]
    count.tokens_from_measure = lambda total: total  # type: ignore[attr-defined]
    # Counts are whole numbers (the fill checks), so a total fits when <= floor(budget).
    count.measure_limit = math.floor  # type: ignore[attr-defined]
    count.__wrapped__ = tokenizer  # type: ignore[attr-defined]
    return count


def as_tokenizer(tokenizer: object) -> Tokenizer | None:
    """The counting function for what ``tokenizer=`` was given; None stays None (CTX-9, OPT-1).

    An object with an ``encode`` method counts ``len(encode(text))``; it is
    asked first, because some tokenizer objects (Hugging Face's) are also
    callable and return something else. An object that also has
    ``encode_ordinary`` (tiktoken's and bpe-openai's ``Encoding``) counts
    with that instead: ``encode`` refuses text that spells a special token
    such as ``<|endoftext|>``, and one chat message holding it must not stop
    every prompt from being built (CTX-9). A plain callable is used as it is.

    Args:
        tokenizer: A counting function, an object with ``encode(text)``, or None.

    Returns:
        A counting function ``(text) -> number``, or None for None.

    Raises:
        TypeError: ``tokenizer`` is neither callable nor has an ``encode`` method.

    Examples:
        >>> from sentinel_memory.tokens import as_tokenizer
        >>> class Letters:
        ...     def encode(self, text):
        ...         return list(text)
        >>> as_tokenizer(Letters())("abc"), as_tokenizer(None)
        (3, None)
    """
    if tokenizer is None:
        return None
    encode = getattr(tokenizer, "encode", None)
    if callable(encode) and not isinstance(tokenizer, (str, bytes)):
        ordinary = getattr(tokenizer, "encode_ordinary", None)
        if callable(ordinary):  # special tokens in text count as the plain text they are
            encode = ordinary

        def count(text: str) -> int:
            return len(encode(text))

        count.__wrapped__ = tokenizer  # type: ignore[attr-defined]
        count.__qualname__ = count.__name__ = f"len({type(tokenizer).__name__}.encode)"
        return count
    if callable(tokenizer):
        return tokenizer
    raise TypeError(f"tokenizer must be callable or have an encode(text) method, got {type(tokenizer).__name__}")


def count_tokens(tokenizer: Tokenizer, text: str) -> int | float:
    """Count ``text`` with ``tokenizer`` and insist on a finite number >= 0 (CTX-5).

    A context window is not a place to guess: NaN, a negative count, a bool or
    a non-number raises ``TypeError`` rather than being treated as zero.

    Args:
        tokenizer: A counting function ``(text) -> number``.
        text: The text to count.

    Returns:
        The tokenizer's count.

    Raises:
        TypeError: The tokenizer returned something other than a finite number >= 0 (a list of
            tokens, say).

    Examples:
        >>> from sentinel_memory.tokens import count_tokens
        >>> count_tokens(len, "abc")
        3
    """
    count = tokenizer(text)
    if isinstance(count, (list, tuple)):
        raise TypeError(
            f"tokenizer returned a {type(count).__name__} of {len(count)} tokens, not a count; pass the tokenizer "
            "object itself (tokenizer=encoding) or a function that counts (lambda text: len(encoding.encode(text)))"
        )
    if (
        isinstance(count, bool)
        or not isinstance(count, (int, float))
        or (isinstance(count, float) and not math.isfinite(count))
        or count < 0
    ):
        raise TypeError(f"tokenizer must return a finite number >= 0, got {shown(count)}")
    return count
