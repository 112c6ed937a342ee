"""Deliberate bugs for ``serve --bug NAME``: proof that the vectors catch what ports get wrong.

Each bug is one plausible mistake a port could make, applied to this
process's copy of the library by replacing one function. The tests run the
suite against every one of them and insist that the runner fails with a
diff that names a case and a step. None of this is used by anything else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from .. import core
from ..core import index, prompt, tokens, values
from ..core.expiry import is_past
from ..core.options import is_number, number_option
from ..core.tokens import count_tokens
from .mistakes import MISTAKES, in_core

__all__ = ["BUGS", "apply"]


def _replace(owner: object, name: str, value: object) -> None:
    """Swap ``owner.name`` for ``value``, in this process only (in the core, in each module that uses it)."""
    if owner is core:
        in_core(name, value)
    else:
        setattr(owner, name, value)


def _expiry_strictly_after() -> None:
    """Expiry at ``now > expires_at`` instead of ``>=`` (against EXP-2): gone a millisecond late."""

    # Reading at a hair before `now` turns every `now >= deadline` into `now > deadline`.
    def earlier(now: Any) -> Any:
        return math.nextafter(now, -math.inf) if isinstance(now, (int, float)) else now

    _replace(core, "is_past", lambda deadline, now: is_past(deadline, earlier(now)))
    for name in ("none_expired", "expired", "expired_count", "expired_seqs"):
        method = getattr(index.Index, name)
        setattr(index.Index, name, lambda self, now, _method=method: _method(self, earlier(now)))


def _ties_to_the_older() -> None:
    """Every tie goes to the older entry (against ENT-6): new entries get ever smaller sequence numbers."""
    remember = core.remember

    def backwards(state: Any, *args: Any, **kwargs: Any) -> Any:
        real = state.next_seq
        # The bug is a next_seq below the stored seqs, which ENT-17 refuses: build it unchecked.
        with attrs.validators.disabled():
            after, compaction = remember(attrs.evolve(state, next_seq=-1_000_000_000 - real), *args, **kwargs)
            return attrs.evolve(after, next_seq=real + 1), compaction

    _replace(core, "remember", backwards)


def _estimate_counts_code_points() -> None:
    """The estimator divides code points, not UTF-16 units, by 4 (against TOK-1): an emoji counts 1."""

    def code_points(text: str) -> int:
        return len(text)

    for module in (tokens, values, prompt):
        _replace(module, "utf16_len", code_points)
    _replace(tokens.estimate_tokens, "measure", code_points)


def _importance_clamped() -> None:
    """An out-of-range importance is clamped into [0, 1] instead of defaulted (against NUM-1)."""

    def clamping(name: str, value: object, *default: Any, **how: Any) -> Any:
        if name == "importance" and isinstance(value, (int, float)) and is_number(value) and math.isfinite(value):
            return min(1.0, max(0.0, float(value)))
        return number_option(name, value, *default, **how)

    _replace(core, "number_option", clamping)


def _budget_per_entry() -> None:
    """The budget is checked per line, not for the whole text (against CTX-2)."""

    def per_line(
        count: int,
        oldest_first: Callable[[], Sequence[values.Entry]],
        rank: Callable[[int | None], Sequence[values.Entry]],
        *,
        token_budget: float,
        tokenizer: Any,
        render: Callable[[values.Entry], str],
        separator: str,
        **_: Any,
    ) -> tuple[str, tuple[values.Entry, ...], int | float]:
        chosen = sorted(
            (e for e in rank(None) if count_tokens(tokenizer, render(e)) <= token_budget), key=values.by_age
        )
        text = separator.join(map(render, chosen))
        return text, tuple(chosen), count_tokens(tokenizer, text)

    _replace(core, "fill", per_line)


def _counted_fill(mistake: str) -> Callable[[], None]:
    """The counted fill of CTX-12 with one mistake a port could make in it; other tokenizers fill as before."""

    def apply() -> None:
        fast = prompt.fill
        # "memo-by-key": the line counts of CTX-14 remembered by entry key, not by line text, for one case.
        memo: dict[str, Any] = {}
        from . import backend

        start = backend.Session.__init__

        def fresh(self: Any, *args: Any, **kwargs: Any) -> None:
            memo.clear()
            start(self, *args, **kwargs)

        backend.Session.__init__ = fresh  # type: ignore[method-assign]

        def fill(count: int, oldest_first: Any, rank: Any, **options: Any) -> Any:
            tokenizer, render, separator = options["tokenizer"], options["render"], options["separator"]
            budget = options["token_budget"]
            if getattr(tokenizer, "fill", None) != "counted":
                return fast(count, oldest_first, rank, **options)
            ranked = rank(None)
            if mistake == "naive":
                return prompt.fill_naive(
                    ranked, token_budget=budget, tokenizer=tokenizer, render=render, separator=separator
                )
            gap = 0 if mistake == "no-separator" else tokenizer(separator)
            picks: list[values.Entry] = []
            total = 0
            for entry in ranked:
                line = memo.setdefault(entry.key, tokenizer(render(entry))) if mistake == "memo-by-key" else None
                cost = (tokenizer(render(entry)) if line is None else line) + (
                    gap if picks or mistake == "gap-first" else 0
                )
                if total + cost <= budget:
                    picks.append(entry)
                    total += cost
                elif mistake == "stop":
                    break
            while picks:
                chosen = sorted(picks, key=values.by_age)
                text = separator.join(map(render, chosen))
                tokens = count_tokens(tokenizer, text)
                if tokens <= budget:
                    return text, tuple(chosen), total if mistake == "sum" else tokens
                if mistake == "repair-naive":
                    return prompt.fill_naive(
                        ranked, token_budget=budget, tokenizer=tokenizer, render=render, separator=separator
                    )
                picks.remove(chosen[-1] if mistake == "drop-newest" else picks[-1])
            return "", (), count_tokens(tokenizer, "")

        _replace(core, "fill", fill)

    apply.__doc__ = f"The counted fill (CTX-12) with one mistake: {mistake}."
    return apply


#: Every bug by its flag name.
BUGS: Mapping[str, Callable[[], None]] = {
    "expiry-gt": _expiry_strictly_after,
    "ties-older": _ties_to_the_older,
    "estimate-code-points": _estimate_counts_code_points,
    "importance-clamped": _importance_clamped,
    "budget-per-entry": _budget_per_entry,
    # The counted fill (CTX-12, CTX-13): the naive fill for a tokenizer object, tokens reported as the
    # sum of the lines, a sum without separators, a repair that drops the newest pick instead of the
    # lowest-ranked, a repair that falls back to the naive fill.
    "counted-naive": _counted_fill("naive"),
    "counted-tokens-sum": _counted_fill("sum"),
    "counted-no-separator": _counted_fill("no-separator"),
    "repair-drops-newest": _counted_fill("drop-newest"),
    "repair-falls-back-naive": _counted_fill("repair-naive"),
    # The separator counted before the first line too, a walk that stops at the first line that does not
    # fit, and line counts remembered by entry key (stale once the entry changes, against CTX-14).
    "counted-gap-before-first": _counted_fill("gap-first"),
    "counted-walk-stops": _counted_fill("stop"),
    "counted-memo-by-key": _counted_fill("memo-by-key"),
    **MISTAKES,
}


def apply(name: str) -> None:
    """Break this process's library the way ``name`` says."""
    BUGS[name]()
