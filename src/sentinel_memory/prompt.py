"""Building prompt context that never overflows a token budget (CTX-1 .. CTX-6).

The algorithm is deliberately boring, and this module is its readable
specification:

1. **Rank.** Entries that share a word with the query come first, best
   recall score first; then the rest by retention. Every tie goes to the
   newer entry.
2. **Fill greedily.** Walk the ranking and add an entry only if the *whole
   rendered text* (the selection so far plus the candidate, oldest first,
   joined by the separator) still counts <= the budget with the tokenizer.
   A candidate that does not fit is skipped, because a smaller one further
   down may still fit.
3. **Render oldest first**, so the model reads memories in the order they
   happened.

Counting the rendered text, not summing per-entry counts, means the budget is
checked against what is actually sent, whatever the tokenizer does at the
joins. :func:`fill_naive` does exactly that and is the reference.

It is also quadratic: every candidate re-renders and re-counts the whole
selection. :func:`fill` gets the identical result in linear time when the
tokenizer says how a joined text's count follows from its parts (CTX-8): the
built-in estimator is ``ceil(total UTF-16 length / 4)``, and a tokenizer
wrapped in :func:`~sentinel_memory.tokens.additive` is the sum of its parts.
Then the fill keeps a running total and renders and counts the text once, at
the end; it skips the ranking when everything fits, and stops walking once
not even the smallest line would fit. If the final count disagrees with the
running total, the declaration was wrong for this text and the naive fill
runs instead.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Sequence

from .tokens import Tokenizer, count_tokens, utf16_len
from .values import Entry, by_age

__all__ = ["fill", "fill_naive"]


def fill_naive(
    ranked: Sequence[Entry],
    *,
    token_budget: int | float,
    tokenizer: Tokenizer,
    render: Callable[[Entry], str],
    separator: str,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """Greedy fill of ``ranked`` into ``token_budget``: the reference (CTX-2, CTX-3, CTX-4).

    Returns ``(text, entries in render order, tokens)`` where ``tokens`` is
    the tokenizer's count of ``text``. Raises ``ValueError`` when even the
    empty text counts over the budget (CTX-5).
    """
    text = ""
    tokens = _empty_count(tokenizer, token_budget)
    orders: list[tuple] = []  # by_age keys of the selection, for bisect
    chosen: list[Entry] = []
    lines: list[str] = []
    for entry in ranked:
        line = render(entry)
        at = bisect.bisect(orders, entry.order)
        trial_lines = lines[:at] + [line] + lines[at:]
        trial = separator.join(trial_lines)
        trial_tokens = count_tokens(tokenizer, trial)
        if trial_tokens <= token_budget:
            orders.insert(at, entry.order)
            chosen.insert(at, entry)
            lines = trial_lines
            # The last accepted trial *is* the returned text, so its count
            # is the count of what is sent; no second count is needed.
            text, tokens = trial, trial_tokens
    return text, tuple(chosen), tokens


def fill(
    live: Sequence[Entry],
    rank: Callable[[], Sequence[Entry]],
    *,
    token_budget: int | float,
    tokenizer: Tokenizer,
    render: Callable[[Entry], str],
    separator: str,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """The greedy fill, in linear time where the tokenizer allows it (CTX-8).

    ``live`` are the candidates in age order and ``rank()`` ranks them; the
    result is that of ``fill_naive(rank(), ...)``. With a measured tokenizer
    (whose ``tokens_from_measure`` never decreases as the total grows) two
    shortcuts keep the work small without changing the result: when every
    candidate fits together the ranking is not needed at all, and the walk
    stops once not even the smallest line would still fit.
    """
    measure = getattr(tokenizer, "measure", None)
    to_tokens = getattr(tokenizer, "tokens_from_measure", None)
    if measure is None or to_tokens is None:
        return fill_naive(rank(), token_budget=token_budget, tokenizer=tokenizer, render=render, separator=separator)
    empty = _empty_count(tokenizer, token_budget)
    if render is render_default and measure is utf16_len:
        line_measure: Callable[[Entry], int | float] = _line_units  # cached on the entry
    else:
        def line_measure(entry: Entry) -> int | float:
            return measure(render(entry))

    gap = measure(separator)
    sizes = list(map(line_measure, live))
    everything = sum(sizes) + gap * max(0, len(sizes) - 1)
    if sizes and to_tokens(everything) <= token_budget:
        chosen, total = list(live), everything
    else:
        smallest = min(sizes, default=0)
        total = 0
        chosen = []
        for entry in rank():
            if to_tokens(total + (gap if chosen else 0) + smallest) > token_budget:
                break  # not even the smallest remaining line would fit
            trial = total + line_measure(entry) + (gap if chosen else 0)
            if to_tokens(trial) <= token_budget:
                chosen.append(entry)
                total = trial
        chosen.sort(key=by_age)
    if not chosen:
        return "", (), empty
    text = separator.join(render(entry) for entry in chosen)
    tokens = count_tokens(tokenizer, text)
    if tokens != to_tokens(total):
        return fill_naive(rank(), token_budget=token_budget, tokenizer=tokenizer, render=render, separator=separator)
    return text, tuple(chosen), tokens


def _empty_count(tokenizer: Tokenizer, token_budget: int | float) -> int | float:
    """The count of the empty text; ``ValueError`` when even that is over the budget (CTX-5)."""
    tokens = count_tokens(tokenizer, "")
    if tokens > token_budget:
        raise ValueError(f"even an empty context counts {tokens} tokens, over the budget of {token_budget}")
    return tokens


def render_default(entry: Entry) -> str:
    """``key: text``, cached on the entry; the renderer when no ``format`` is given (CTX-3)."""
    return entry.line


#: The measure of a default line under the estimator: cached on the entry.
_line_units = operator.attrgetter("line_units")
