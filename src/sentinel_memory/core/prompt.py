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
joins. ``fill_naive`` does exactly that and is the reference.

It is also quadratic: every candidate re-renders and re-counts the whole
selection. ``fill`` gets the identical result in linear time when the
tokenizer says how a joined text's count follows from its parts (CTX-8): the
built-in estimator is ``ceil(total UTF-16 length / 4)``, and a tokenizer
wrapped in ``additive`` is the sum of its parts.
Then the fill keeps a running total in whole numbers and renders and counts
the text once, at the end; it skips the ranking when everything fits, and
walks the ranking with C-speed building blocks rather than a Python loop. If
the final count disagrees with the running total, the declaration was wrong
for this text and the naive fill runs instead.

Real tokenizers are not additive. A BPE such as o200k_base merges a line's
last punctuation with the line feed after it, so ``"What?\\nhi"`` counts one
token less than its parts. For them (a tokenizer object, or one wrapped in
``per_line``) the rule itself is different, and ``fill_counted`` is its
readable form (CTX-12): walk the ranking on per-line counts as if they added
up, count the joined text once, and while that count is over the budget
drop the lowest-ranked pick and count again. Joined text almost never counts
more than its parts, so the repair almost never runs, and ``fill`` walks the
same way in linear time.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .linecounts import LiveCounts
from .tokens import LineCounter, Tokenizer, count_tokens, utf16_len
from .values import Entry, sorted_by_age

__all__ = ["fill", "fill_counted", "fill_naive", "fill_ranked_naive"]


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
    orders: list[tuple[int | float, int]] = []  # by_age keys of the selection, for bisect
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


def fill_counted(
    ranked: Sequence[Entry],
    *,
    token_budget: int | float,
    tokenizer: Tokenizer,
    render: Callable[[Entry], str],
    separator: str,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """The counted fill of ``ranked`` into ``token_budget``, readable: the reference for CTX-12.

    Each line and the separator are counted once. When every count is a
    whole number >= 0, the walk adds a candidate if the sum of the chosen
    lines' counts, one separator count between each two, stays within the
    budget; then the chosen lines are rendered oldest first and counted
    together, and while that count is over the budget the pick lowest in the
    ranking is dropped and the rest counted again. Otherwise (a count that
    is not a whole number) the naive fill runs, as in CTX-8.
    """
    empty = _empty_count(tokenizer, token_budget)
    counts = [tokenizer(render(entry)) for entry in ranked]
    gap = tokenizer(separator)
    if not all(type(count) is int and count >= 0 for count in [gap, *counts]):
        return fill_naive(ranked, token_budget=token_budget, tokenizer=tokenizer, render=render, separator=separator)
    picks: list[Entry] = []  # in ranking order
    total: int | float = 0
    for entry, count in zip(ranked, counts, strict=True):
        cost = count if not picks else gap + count
        if total + cost <= token_budget:
            picks.append(entry)
            total += cost
    while picks:
        chosen = sorted_by_age(picks)
        text = separator.join(map(render, chosen))
        tokens = count_tokens(tokenizer, text)
        if tokens <= token_budget:
            return text, tuple(chosen), tokens
        picks.pop()  # the repair: the lowest-ranked pick goes first
    return "", (), empty


def fill_ranked_naive(
    count: int,
    oldest_first: Callable[[], Sequence[Entry]],
    rank: Callable[[int | None], Sequence[Entry]],
    *,
    least_units: int = 0,
    rank_among: Callable[[Sequence[Entry]], Sequence[Entry]] | None = None,
    lines_within: Callable[[int], Sequence[Entry]] | None = None,
    small_count: Callable[[int], int] | None = None,
    line_counts: Callable[[LineCounter], LiveCounts | None] | None = None,
    seq_is_age: bool = False,
    **options: Any,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """The readable fill with ``fill``'s arguments: the reference the fast fill must equal.

    ``fill_counted`` for a tokenizer counted line by line (CTX-12), else
    ``fill_naive``. It reads only the whole ranking; the rest are shortcuts
    for the fast fill.
    """
    if getattr(options["tokenizer"], "fill", None) == "counted":
        return fill_counted(rank(None), **options)
    return fill_naive(rank(None), **options)


def fill(
    count: int,
    oldest_first: Callable[[], Sequence[Entry]],
    rank: Callable[[int | None], Sequence[Entry]],
    *,
    token_budget: int | float,
    tokenizer: Tokenizer,
    render: Callable[[Entry], str],
    separator: str,
    least_units: int = 0,
    rank_among: Callable[[Sequence[Entry]], Sequence[Entry]],
    lines_within: Callable[[int], Sequence[Entry]] | None = None,
    small_count: Callable[[int], int] | None = None,
    line_counts: Callable[[LineCounter], LiveCounts | None] | None = None,
    seq_is_age: bool = False,
) -> tuple[str, tuple[Entry, ...], int | float]:
    """The greedy fill, in linear time where the tokenizer allows it (CTX-8).

    There are ``count`` candidates; ``oldest_first()`` lists them oldest
    first and ``rank(None)`` best first; ``rank(n)`` may return just the
    first ``n`` or more of that ranking, and ``rank_among(some)`` returns
    ``some`` in the order they have in it. The result is that of
    ``fill_naive`` over ``rank(None)``. ``least_units`` is a lower bound of
    the candidates' ``line_units`` (0 when
    unknown), ``lines_within(n)``, when given, lists the candidates
    whose ``line_units`` are at most ``n``, ``small_count(n)`` bounds from
    above how many candidates' line measures are at most ``n`` (a cost
    estimate only), ``line_counts(counter)`` gives every candidate's
    default line count by a ``LineCounter``, kept with the index (None
    when not every count is whole), and ``seq_is_age`` says that
    ``seq`` order is age order, so one sort puts the picks in it.

    With a measured tokenizer whose line measures are whole numbers, all
    arithmetic is exact integer arithmetic: when every candidate fits
    together the ranking is not needed at all, and otherwise
    ``_greedy`` picks in the ranking's order. With the default format
    and the estimator, a line's measure is cached on its entry, so only
    the lines the walk reaches are measured.
    """

    def naive() -> tuple[str, tuple[Entry, ...], int | float]:
        return fill_naive(
            rank(None), token_budget=token_budget, tokenizer=tokenizer, render=render, separator=separator
        )

    measure = getattr(tokenizer, "measure", None)
    to_tokens = getattr(tokenizer, "tokens_from_measure", None)
    limit_of = getattr(tokenizer, "measure_limit", None)
    if measure is None or to_tokens is None or limit_of is None:
        return naive()
    empty = _empty_count(tokenizer, token_budget)
    if not count:
        return "", (), empty
    gap = measure(separator)
    cap = limit_of(token_budget)
    live: Sequence[Entry] | None = None
    sizes_of: Callable[[Iterable[Entry]], list[Any]]
    # The lines whose measures are at most a number, and how many there are at most: kept, or None (a pass).
    within: Callable[[int], Sequence[Entry]] | None = None
    waiting_within: Callable[[int], int] | None = None
    counted = (
        line_counts(tokenizer)
        if line_counts is not None
        and render is render_default
        and isinstance(tokenizer, LineCounter)
        and type(gap) is int
        and gap >= 0
        else None
    )
    if render is render_default and measure is utf16_len:
        sizes_of, floor = _lines_units, least_units  # whole numbers, cached per entry
        within, waiting_within = lines_within, small_count
    elif counted is not None:
        # Every stored line's count, kept with the index: whole numbers >= 0 (CTX-12, ``linecounts``).
        sizes_of, floor = counted.sizes, counted.least()
        within, waiting_within = counted.within, counted.count_within
    else:
        live = oldest_first()
        lines = list(map(_line if render is render_default else render, live))
        # A LineCounter counts the lines it has not seen, all at once (CTX-12).
        counts = tokenizer.measure_many(lines) if isinstance(tokenizer, LineCounter) else list(map(measure, lines))
        measured = dict(zip(map(_seq, live), counts, strict=True))
        # Whole numbers >= 0 only: float sums round, so they could not
        # promise the naive fill's result, and the naive fill reports bad counts.
        if type(gap) is not int or set(map(type, measured.values())) != {int} or gap < 0 or min(measured.values()) < 0:
            return naive()
        floor = min(measured.values())

        def sizes_of(entries: Iterable[Entry]) -> list[Any]:
            return list(map(measured.__getitem__, map(_seq, entries)))  # at C speed

    chosen: Sequence[Entry]
    picks: list[Entry] | None = None  # in ranking order, when the ranking was walked
    total = cap + 1
    if count * (floor + gap) - gap <= cap:
        # Everything may fit: only then is every line looked at.
        live = oldest_first() if live is None else live
        sizes = sizes_of(live)
        total = sum(sizes) + gap * (len(sizes) - 1)
        floor = min(sizes)
    if total <= cap:
        assert live is not None  # only the everything-fits check can make total fit
        chosen = live  # everything fits: no ranking needed
    else:
        # No more lines fit than the budget holds of the smallest, so the
        # walk usually needs only the start of the ranking.
        least = floor + gap
        most = None if least <= 0 else (cap + gap) // least + 1  # no more lines can fit
        order = rank(_first_ask(most))
        sizes = sizes_of(order)
        picked, room = _greedy(sizes, gap, cap + gap)
        if most is not None and len(order) < min(most, count) and room >= least:
            # The start asked for did not fill the budget. Walking on through
            # the rest of the ``most`` costs a larger ranking; offering the
            # room to the small lines costs ranking those, far less per line
            # (``_WIDEN_RATIO``). Either way the picks are those of one walk
            # over the ranking.
            if waiting_within is not None:
                waiting = waiting_within(room - gap)
            else:
                waiting = sum(map(operator.le, sizes_of(oldest_first()), itertools.repeat(room - gap)))
            if waiting > _WIDEN_RATIO * (most - len(order)):
                wider = rank(most)  # the same ranking: its start is ``order``
                more_sizes = sizes_of(itertools.islice(wider, len(order), None))
                more, room = _greedy(more_sizes, gap, room)
                picked += [len(order) + i for i in more]
                order, sizes = wider, sizes + more_sizes
        picks = list(map(order.__getitem__, picked))
        if len(order) < count and room >= least:
            # Room may be left for a line the start did not reach (``least``
            # may be below the smallest line). Room only shrinks, so only the
            # unseen lines that fit it now can still be picked: rank just
            # those (their order in the whole ranking) and walk on from where
            # the walk stopped. The picks are those of a walk over the whole
            # ranking.
            small: Iterable[Entry]
            if within is not None:
                small = within(room - gap)
            else:
                everyone = oldest_first()
                small = itertools.compress(everyone, map(operator.le, sizes_of(everyone), itertools.repeat(room - gap)))
            # A line of the start that the walk left out did not fit a room
            # at least as large as the room now, so of the start's lines only
            # picked ones can be among the small.
            seen = {order[i].seq for i in picked if sizes[i] <= room - gap}
            fitting = [entry for entry in small if entry.seq not in seen]
            if fitting:
                rest = rank_among(fitting)
                more, room = _greedy(sizes_of(rest), gap, room)
                picks += map(rest.__getitem__, more)
        total = cap - room  # the lines' measures and a separator between each two
        chosen = sorted_by_age(picks, seq_is_age=seq_is_age)  # age order again
    if not chosen:
        return "", (), empty
    line_of = _line if render is render_default else render
    text = separator.join(map(line_of, chosen))
    tokens = count_tokens(tokenizer, text)
    if tokens == to_tokens(total):
        return text, tuple(chosen), tokens
    if getattr(tokenizer, "fill", None) != "counted":
        return naive()  # the declaration does not hold for this text
    if tokens <= token_budget:
        return text, tuple(chosen), tokens  # the joins merged: fewer tokens than the sum (CTX-12)
    # The repair (CTX-12): drop the lowest-ranked pick until the text fits.
    ranked_picks = picks if picks is not None else rank(None)
    while ranked_picks:
        ranked_picks = ranked_picks[:-1]
        chosen = sorted_by_age(ranked_picks, seq_is_age=seq_is_age)
        text = separator.join(map(line_of, chosen))
        tokens = count_tokens(tokenizer, text)
        if tokens <= token_budget:
            return text, tuple(chosen), tokens
    return "", (), empty


def _greedy(sizes: Sequence[int], gap: int, room: int) -> tuple[list[int], int]:
    """The greedy walk of CTX-2 over line measures in rank order: (ranks picked, room left).

    The measure of lines joined by separators is the sum of the lines plus
    one ``gap`` between each two. Charging every line ``size + gap`` against
    a ``room`` of the budget plus one ``gap`` says the same thing without
    special-casing the first line, and makes each step a comparison with
    one running number, so the walk can run in C: ``accumulate`` and a
    bisection find the longest run of leading lines that fit together, and
    each later pick is the first line that still fits what is left. The
    room left is where a walk over more lines of the ranking goes on.
    """
    costs = list(map(operator.add, sizes, itertools.repeat(gap)))
    sums = list(itertools.accumulate(costs))
    taken = bisect.bisect_right(sums, room)  # costs are >= 0, so sums never decrease
    picked = list(range(taken))
    if taken:
        room -= sums[taken - 1]
    start = taken + 1  # the line at ``taken`` did not fit
    if start < len(costs) and room >= min(costs[start:]):
        while True:
            fitting = map(operator.le, itertools.islice(costs, start, None), itertools.repeat(room))
            found = next(itertools.compress(itertools.count(start), fitting), None)
            if found is None:
                break
            picked.append(found)
            room -= costs[found]
            start = found + 1
    return picked, room


#: The first ask of a walked ranking is this share of the most lines that can fit (see ``_first_ask``).
_FIRST_SHARE = 3
#: Up to this many lines that can fit, the first ask is all of them.
_FIRST_WHOLE_UP_TO = 64
#: The walk goes on through the rest of the most only when the short lines that would take the room left number
#: over this many times the lines it adds: a second ranking costs much of the first again, however few it adds.
_WIDEN_RATIO = 4


def _first_ask(most: int | None) -> int | None:
    """How much of the ranking the fill asks for first, when at most ``most`` lines can fit (CTX-8).

    ``most`` assumes every line is the shortest, and real lines are
    several times longer, so the budget is usually full well before
    ``most`` lines: the fill asks for a third first, and for the rest only
    when the walk over that third left room that many more lines could fill
    (measured on chat lines and LoCoMo's turns at 10,000 entries). A matter
    of cost only: the picks are those of one walk over the ranking.
    """
    if most is None or most <= _FIRST_WHOLE_UP_TO:
        return most
    return most // _FIRST_SHARE


def _empty_count(tokenizer: Tokenizer, token_budget: int | float) -> int | float:
    """The count of the empty text; ``ValueError`` when even that is over the budget (CTX-5)."""
    tokens = count_tokens(tokenizer, "")
    if tokens > token_budget:
        raise ValueError(f"even an empty context counts {tokens} tokens, over the budget of {token_budget}")
    return tokens


def render_default(entry: Entry) -> str:
    """``key: text``, cached on the entry; the renderer when no ``format`` is given (CTX-3)."""
    return entry.line


#: The default line and its measure under the estimator, both cached on the entry.
_line = operator.attrgetter("line")
_line_units = operator.attrgetter("line_units")


def _lines_units(entries: Iterable[Entry]) -> list[int]:
    """The ``line_units`` of ``entries``, each cached on its entry (CTX-8)."""
    return list(map(_line_units, entries))


_seq = operator.attrgetter("seq")
