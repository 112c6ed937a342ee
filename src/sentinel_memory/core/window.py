"""The context: the live entries that fit a token budget, ranked, as one text (CTX-1 .. CTX-14).

``context`` ranks the query's matches first, then by retention, keeps the
entries of importance at least ``must_keep`` ahead of the rest (CTX-10), and
fills the budget with ``prompt.fill``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from .basics import _check_now, _copies, _live_count, _seq
from .options import is_number, number_option, require_callable
from .prompt import fill, render_default
from .ranking import matches, uses_words
from .retention import by_retention
from .search import _matches, _query_words
from .shown import shown
from .state import MemoryState
from .tokens import TokenizerLike, as_tokenizer
from .values import (
    Context,
    Entry,
)


def _check_budget(token_budget: object) -> None:
    """CTX-5: the budget is a finite number >= 0; guessing would be harmful."""
    if not is_number(token_budget) or token_budget < 0:  # type: ignore[operator]
        raise ValueError(f"token_budget must be a finite number >= 0, got {shown(token_budget)}")


def context(
    state: MemoryState,
    *,
    now: int | float,
    token_budget: int | float,
    query: str | None = None,
    tokenizer: TokenizerLike | None = None,
    format: Callable[[Entry], str] | None = None,
    separator: str | None = None,
    must_keep: float | None = None,
    only: Literal["facts", "turns"] | None = None,
) -> Context:
    """Prompt text of the best live entries that fits ``token_budget`` (CTX-1 .. CTX-11).

    Ranking: entries matching ``query`` by recall score, then the rest by
    retention; with ``must_keep``, the entries of at least that importance
    come before both. The greedy fill and rendering are in
    ``sentinel_memory.core.prompt``. ``only="facts"`` or ``only="turns"`` takes
    only the entries of that kind (CTX-11, MSG-1); the rest count neither as
    chosen nor as omitted.

    Args:
        state: The memory state to read.
        now: The current time, milliseconds since the epoch (a finite number).
        token_budget: The most tokens the text may count, a finite number >= 0.
        query: Rank the entries that share its words first. Defaults to None (no query).
        tokenizer: Counts tokens: a function ``(text) -> number`` or any object with
            ``encode(text)``. Defaults to None (the state's tokenizer).
        format: Renders one entry (a copy) as its line, a function ``(entry) -> str``.
            Defaults to None (``default_format``, ``key: data``).
        separator: Put between lines. Defaults to None (a newline).
        must_keep: Entries of at least this importance, in [0, 1], come first. Defaults to None.
        only: ``"facts"`` or ``"turns"``: only entries of that kind. Defaults to None (every entry).

    Returns:
        A ``Context`` with ``text``, the ``entries`` in it, its ``tokens`` and how many live
        entries were ``omitted``.

    Raises:
        ValueError: The budget is not a finite number >= 0, or ``only`` is not one of its two values.
        TypeError: ``now`` is not a finite number; the query, separator or ``only`` is not a str;
            the tokenizer or format is not callable or returned the wrong kind of value.

    Examples:
        >>> state, _ = core.remember(MemoryState(), "user:name", "Jakub", now=1000)
        >>> state, _, _ = core.add_turn(state, "user", "Hi!", now=1000)
        >>> core.context(state, now=1000, token_budget=50, only="facts").text
        'user:name: Jakub'
    """
    _check_now(now)
    _check_budget(token_budget)
    query_words = _query_words(query, optional=True)
    counter = as_tokenizer(tokenizer)
    require_callable("format", format, optional=True)
    keep = number_option("must_keep", must_keep)
    if separator is None:
        separator = "\n"
    elif not isinstance(separator, str):
        raise TypeError(f"separator must be a str, got {type(separator).__name__}")
    if only is not None:
        # Checked last, as it comes last in the signature: the order the protocol's table lists (CTX-11).
        return context(
            _of_kind(state, only),
            now=now,
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            format=format,
            separator=separator,
            must_keep=keep,  # the checked value: a bad one is warned about once
        )
    counting = counter or state.config.tokenizer
    render = _renderer(format) if format is not None else render_default

    index, window = state.index, state.config.recency_window
    count = _live_count(state, now)
    live: list[Entry] = []

    def oldest_first() -> list[Entry]:
        if not live:
            live.extend(index.live_by_age(now))
        return live

    def _query_matches(limit: int, among: Sequence[Entry] | None = None) -> list[tuple[float, Entry]]:
        if not uses_words(state.config):  # BM-9
            return matches(state, query, now, limit, among=among, in_context=True)  # type: ignore[arg-type]
        return _matches(state, query_words, now, limit, among=among)

    def by_retention_start(at_least: int | None) -> list[Entry] | None:
        return None if at_least is None else index.ranking_start(at_least, now, window)

    def rank(at_least: int | None) -> list[Entry]:
        """The live entries: query matches first, then the rest by retention (CTX-1).

        With ``at_least``, possibly only the first ``at_least`` or more.
        """
        if not query_words:
            start = by_retention_start(at_least)
            return start if start is not None else by_retention(oldest_first(), now, window, in_age_order=True)
        matched = [entry for _, entry in _query_matches(count if at_least is None else at_least)]
        if at_least is not None and len(matched) >= at_least:
            return matched
        # Fewer than asked for: these are all the matches. The first
        # ``at_least`` of the retention ranking hold at least the rest's first.
        taken = {entry.seq for entry in matched}
        start = by_retention_start(at_least)
        if start is None:
            start = by_retention(oldest_first(), now, window, in_age_order=True)
        return matched + [entry for entry in start if entry.seq not in taken]

    def rank_among(some: Sequence[Entry]) -> list[Entry]:
        """``some`` live entries in the order ``rank`` gives them: matches by score first, then by retention."""
        matched = [entry for _, entry in _query_matches(len(some), some)] if query_words else []
        taken = {entry.seq for entry in matched}
        return matched + by_retention([e for e in some if e.seq not in taken], now, window)

    ranking: Callable[[int | None], list[Entry]] = rank
    ranking_among: Callable[[Sequence[Entry]], list[Entry]] = rank_among
    if keep is not None:
        ranking, ranking_among = _kept_first(keep, oldest_first, rank, rank_among, now, window)
    text, chosen, tokens = fill(
        count,
        oldest_first,
        ranking,
        token_budget=token_budget,
        tokenizer=counting,
        render=render,
        separator=separator,
        least_units=index.least_units(),
        rank_among=ranking_among,
        lines_within=lambda units: index.lines_within(units, now),
        small_count=index.units_count_within,
        line_counts=lambda counter: index.line_counts(counter, now),
        seq_is_age=index.in_order,
    )
    return Context(text=text, entries=_copies(state, chosen), tokens=tokens, omitted=count - len(chosen))


#: CTX-11: the kinds of entry a context may be restricted to.
KINDS = ("facts", "turns")


def _of_kind(state: MemoryState, only: object) -> MemoryState:
    """The state with only the entries of one kind (CTX-11, MSG-1): turns, or facts (everything else).

    The facts' state is the index's split, kept current by every change;
    the turns' is made for the one call, a pass over the turns.
    """
    if not isinstance(only, str):
        raise TypeError(f"only must be a str, one of {KINDS}, got {type(only).__name__}")
    only = str.__str__(only)  # a str subclass's own == must not run here (WRP-4)
    if only not in KINDS:
        raise ValueError(f"only must be one of {KINDS}, got {shown(only)}")
    if only == "facts":
        return _facts_of(state)
    kept = [item[-1] for item in state.index.split().turns]
    return MemoryState(config=state.config, entries=sorted(kept, key=_seq), next_seq=state.next_seq, turns=state.turns)


def _facts_of(state: MemoryState) -> MemoryState:
    """The state of the facts alone (MSG-1, CTX-11), from the index's split: kept current, never rebuilt per call."""
    split = state.index.split()
    return MemoryState(
        config=state.config,
        entries=split.facts,
        next_seq=state.next_seq,
        turns=state.turns,
        index=split.facts_index,
    )


def _kept_first(
    keep: float,
    oldest_first: Callable[[], list[Entry]],
    rank: Callable[[int | None], list[Entry]],
    rank_among: Callable[[Sequence[Entry]], list[Entry]],
    now: int | float,
    window: int | float,
) -> tuple[Callable[[int | None], list[Entry]], Callable[[Sequence[Entry]], list[Entry]]]:
    """CTX-10: the ranking with every entry of importance >= ``keep`` first, by retention, then the usual order."""

    def kept(entries: Sequence[Entry]) -> list[Entry]:
        return by_retention([e for e in entries if e.importance >= keep], now, window)

    def ranked(_: int | None) -> list[Entry]:
        first = kept(oldest_first())
        return first + [e for e in rank(None) if e.importance < keep]

    # ``ranked`` gives the whole ranking whatever count the fill asks for, so the fill never ranks
    # among some lines of it and never calls this; it is here because the fill takes a pair.
    def ranked_among(some: Sequence[Entry]) -> list[Entry]:
        return kept(some) + rank_among([e for e in some if e.importance < keep])

    return ranked, ranked_among


def _renderer(format: Callable[[Entry], str]) -> Callable[[Entry], str]:
    """CTX-3: ``format`` sees a copy of each entry and must return a str."""

    def render(entry: Entry) -> str:
        line = format(entry.copy())
        if not isinstance(line, str):
            raise TypeError(f"format must return a str, got {type(line).__name__}")
        return line

    return render
