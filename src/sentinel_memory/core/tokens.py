"""Counting tokens: the built-in estimator and the checks on any tokenizer (TOK-1, CTX-5).

A tokenizer is any ``(text: str) -> number``, or any object with an
``encode(text)`` method (tiktoken's and bpe-openai's ``Encoding``, a Hugging
Face tokenizer), which counts ``len(encode(text))`` (CTX-9). The built-in one is an estimate,
there so the library works with no dependency, not because it is accurate: it
over-counts English and under-counts Czech, code and Japanese. When the limit
is hard, pass the model's own tokenizer.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
from collections.abc import Callable, Sized
from typing import Any, Protocol, runtime_checkable

from .shown import shown

__all__ = [
    "Encoder",
    "LineCounter",
    "Tokenizer",
    "TokenizerLike",
    "additive",
    "as_tokenizer",
    "count_tokens",
    "estimate_tokens",
    "per_line",
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
        >>> from sentinel_memory.core.tokens import utf16_len
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
    """The counting function for what ``tokenizer=`` was given; None stays None (CTX-9, CTX-12, OPT-1).

    An object with an ``encode`` method counts ``len(encode(text))``; it is
    asked first, because some tokenizer objects (Hugging Face's) are also
    callable and return something else. An object that also has
    ``encode_ordinary`` (tiktoken's and bpe-openai's ``Encoding``) counts
    with that instead: ``encode`` refuses text that spells a special token
    such as ``<|endoftext|>``, and one chat message holding it must not stop
    every prompt from being built (CTX-9). A tokenizer object is counted
    line by line (a ``LineCounter``, CTX-12). A plain callable is used as it
    is, and so is a ``LineCounter``.

    Args:
        tokenizer: A counting function, an object with ``encode(text)``, or None.

    Returns:
        A counting function ``(text) -> number``, or None for None.

    Raises:
        TypeError: ``tokenizer`` is neither callable nor has an ``encode`` method.

    Examples:
        >>> from sentinel_memory.core.tokens import as_tokenizer
        >>> class Letters:
        ...     def encode(self, text):
        ...         return list(text)
        >>> as_tokenizer(Letters())("abc"), as_tokenizer(None)
        (3, None)
    """
    if tokenizer is None or isinstance(tokenizer, LineCounter):
        return tokenizer
    encode = getattr(tokenizer, "encode", None)
    if callable(encode) and not isinstance(tokenizer, (str, bytes)):
        ordinary = getattr(tokenizer, "encode_ordinary", None)
        if callable(ordinary):  # special tokens in text count as the plain text they are
            encode = ordinary

        def count(text: str) -> int:
            return len(encode(text))

        count.__wrapped__ = tokenizer  # type: ignore[attr-defined]
        count.__qualname__ = count.__name__ = f"len({type(tokenizer).__name__}.encode)"
        return LineCounter(count, source=tokenizer)
    if callable(tokenizer):
        return tokenizer
    raise TypeError(f"tokenizer must be callable or have an encode(text) method, got {type(tokenizer).__name__}")


#: How many lines' counts a ``LineCounter`` keeps, and how many characters of them (CTX-12).
DEFAULT_MAX_LINES = 100_000
DEFAULT_MAX_CHARS = 20_000_000


class LineCounter:
    """A tokenizer counted line by line: the context fill CTX-12 for tokenizers whose joins merge.

    A BPE tokenizer (o200k_base, cl100k_base, Llama's) is not additive: its
    count of ``"What?" + "\\n" + "hi"`` may be less than the counts of the
    parts, because it merges a line's last punctuation with the line feed.
    Re-counting the whole text for every candidate (CTX-2) is exact but
    counts the same lines again and again. A ``LineCounter`` tells the fill
    to count each line once, keep a running total with the separator, count
    the joined text once, and drop the lowest-ranked lines while that count
    is over the budget (CTX-12). So ``tokens`` is still the tokenizer's exact
    count of the text and never over the budget.

    It also remembers each line's count, keyed by the line itself, so the
    next context counts only new lines. A count can never be stale: a
    changed entry, format or separator is a different line. The memory is
    bounded: past ``max_lines`` lines or ``max_chars`` characters the oldest
    half is forgotten. The tokenizer must be deterministic, as any
    tokenizer for a budget must be; when a tokenizer object changes how it
    counts (a Hugging Face tokenizer after ``add_tokens``), call ``clear``.

    Args:
        tokenizer: A counting function ``(text) -> number``.
        max_lines: The most lines whose counts are kept. Defaults to 100,000.
        max_chars: The most characters of lines whose counts are kept. Defaults to 20,000,000.
        source: What the count was made from (the ``Encoding`` object), for ``repr``. Defaults to None.

    Examples:
        >>> words = per_line(lambda text: len(text.split()))
        >>> words("a b"), words.measure("a b"), words.cached
        (2, 2, 1)
    """

    #: The declaration the context fill reads (CTX-12).
    fill = "counted"

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_chars: int = DEFAULT_MAX_CHARS,
        source: object = None,
    ) -> None:
        if not callable(tokenizer):
            raise TypeError(f"tokenizer must be callable, got {type(tokenizer).__name__}")
        self._count = tokenizer
        self._source = tokenizer if source is None else source
        self._max_lines = max_lines
        self._max_chars = max_chars
        self._lines: dict[str, int | float] = {}
        self._chars = 0
        #: What guards the memo's inserts: nothing, for one thread; a shell whose threads share this
        #: counter gives it a lock (``shell.shared``). Lookups take no lock: they read a dict that is
        #: replaced whole, never mutated under them.
        self.lock: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
        self.__wrapped__ = self._source
        #: How many times ``clear`` was called: the memos kept per tokenizer (MSG-17) are kept per generation.
        self.generation = 0

    def __repr__(self) -> str:
        return f"<LineCounter of {self._source!r}: {len(self._lines)} lines counted>"

    def __call__(self, text: str) -> int | float:
        """The tokenizer's count of ``text``, counted now: what a joined text is counted with.

        Args:
            text: The text to count.

        Returns:
            The tokenizer's count.
        """
        return self._count(text)

    @property
    def cached(self) -> int:
        """How many lines' counts are kept now."""
        return len(self._lines)

    def measure(self, line: str) -> int | float:
        """The count of one line, remembered: counted the first time only.

        Args:
            line: One rendered line (or the separator).

        Returns:
            The tokenizer's count of ``line``.
        """
        return self.measure_many([line])[0]

    def measure_many(self, lines: list[str]) -> list[int | float]:
        """The counts of ``lines``, remembered: only the lines not seen before are counted, each once.

        Args:
            lines: Rendered lines.

        Returns:
            Their counts, in the same order.
        """
        known = self._lines
        counts = list(map(known.get, lines))
        if None not in counts:
            return counts  # type: ignore[return-value]
        missing = list(dict.fromkeys(itertools.compress(lines, map(operator.is_, counts, itertools.repeat(None)))))
        new = dict(zip(missing, map(self._count, missing), strict=True))
        self._keep(new)
        # A line is in ``new`` exactly when its count was None: the known count is the default (at C speed).
        return list(map(new.get, lines, counts))  # type: ignore[arg-type]  # get is overloaded

    def clear(self) -> None:
        """Forget every remembered count: after the tokenizer object changed how it counts (``add_tokens``, say)."""
        with self.lock:
            self._lines, self._chars = {}, 0
            self.generation += 1

    def _keep(self, new: dict[str, int | float]) -> None:
        with self.lock:
            kept = self._lines
            # A line longer than the whole bound is never kept, so it never makes room either.
            fresh = {line: count for line, count in new.items() if line not in kept and len(line) <= self._max_chars}
            size = sum(map(len, fresh))
            if fresh and (len(kept) + len(fresh) > self._max_lines or self._chars + size > self._max_chars):
                # Forget the older half, into a new dict: readers keep the one they hold.
                kept = dict(itertools.islice(kept.items(), len(kept) // 2, None))
                self._chars = sum(map(len, kept))
                self._lines = kept
            for line, count in fresh.items():
                if len(kept) < self._max_lines and self._chars + len(line) <= self._max_chars:
                    kept[line] = count
                    self._chars += len(line)

    def __eq__(self, other: object) -> bool:
        # Counters of one tokenizer count alike, whatever each remembers (so configs made from one Encoding are equal).
        if not isinstance(other, LineCounter):
            return NotImplemented
        return (self._source, self._count if self._source is self._count else None) == (
            other._source,
            other._count if other._source is other._count else None,
        )

    def __hash__(self) -> int:
        return hash(id(self._source))

    def __getstate__(self) -> dict[str, Any]:
        # Pickled and copied without the lock and without the counts: a copy starts counting afresh.
        return {**self.__dict__, "lock": None, "_lines": {}, "_chars": 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, lock=contextlib.nullcontext())

    @staticmethod
    def tokens_from_measure(total: int | float) -> int | float:
        """A total of line counts, as tokens: the same number (CTX-12).

        Args:
            total: A sum of line counts and separator counts.

        Returns:
            ``total`` itself.
        """
        return total

    @staticmethod
    def measure_limit(budget: int | float) -> int:
        """The largest total of whole counts within ``budget`` (CTX-12).

        Args:
            budget: A token budget, a finite number >= 0.

        Returns:
            ``floor(budget)``.
        """
        return math.floor(budget)


def per_line(tokenizer: object) -> LineCounter:
    """Count ``tokenizer`` line by line in contexts (CTX-12), as a tokenizer object is.

    A plain function is counted the article's way (CTX-2): the whole text is
    re-counted for every candidate, because a function may count anything.
    When it is a BPE tokenizer's count, such as
    ``lambda text: len(enc.encode(text))``, wrap it: each line is counted
    once and remembered, the joined text once, and the lowest-ranked lines
    are dropped while the text counts over the budget. ``tokens`` stays the
    tokenizer's exact count of the text. A tokenizer object (one with
    ``encode``) gets this without asking.

    Args:
        tokenizer: A counting function ``(text) -> number`` or an object with ``encode(text)``.

    Returns:
        A ``LineCounter`` that counts as ``tokenizer`` does and carries the declaration.

    Raises:
        TypeError: ``tokenizer`` is neither callable nor has an ``encode`` method.

    Examples:
        >>> words = per_line(lambda text: len(text.split()))
        >>> counted = create_memory(tokenizer=words)
        >>> counted.remember("user:name", "Jakub Novak").key
        'user:name'
        >>> counted.get_context(token_budget=10).tokens
        3
    """
    if tokenizer is None:
        raise TypeError("tokenizer must be callable or have an encode(text) method, got None")
    counter = as_tokenizer(tokenizer)
    assert counter is not None
    return counter if isinstance(counter, LineCounter) else LineCounter(counter)


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
        >>> from sentinel_memory.core.tokens import count_tokens
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
