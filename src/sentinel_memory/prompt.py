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
joins.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from .tokens import Tokenizer, count_tokens
from .values import Entry

__all__ = ["fill"]


def fill(
    ranked: Sequence[Entry],
    *,
    token_budget: int | float,
    tokenizer: Tokenizer,
    render: Callable[[Entry], str],
    separator: str,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """Greedy fill of ``ranked`` into ``token_budget`` (CTX-2, CTX-3, CTX-4).

    Returns ``(text, entries in render order, tokens)`` where ``tokens`` is
    the tokenizer's count of ``text``. Raises ``ValueError`` when even the
    empty text counts over the budget (CTX-5).
    """
    text = ""
    tokens = count_tokens(tokenizer, text)
    if tokens > token_budget:
        raise ValueError(f"even an empty context counts {tokens} tokens, over the budget of {token_budget}")
    orders: list[tuple] = []  # render-order sort keys of the selection
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
