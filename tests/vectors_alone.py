"""The conformance vectors alone as a test: every case of ``spec/vectors`` through the reference, in one process.

``python tests/vectors_alone.py`` runs each case with ``backend.run_case``
(what ``serve`` answers with), writes the answer as ``serve`` would
(``wire.encode``) and compares it with the case's expectations, as
``test_this_library_agrees_with_every_vector_in_process`` does. It stops at
the first case that differs (exit status 1, naming the case and the field),
and a crash is a failure too. ``make vector-mutation`` runs it against each
mutant of the reference: a mutant it passes is behaviour a port could get
wrong and still pass every vector.

Under ``make vector-mutation`` (``MUTATED`` and ``PRISTINE`` set: the module
mutmut changes and an unchanged copy of it), a mutant that only writes
``XX`` into the text of a raised error passes at once without running the
vectors: a step answers an error by its code alone, so no vector can see it,
and ``tests/mutation.py`` lists it as unobservable by the same test.

A port may compute a result another way than the fast reference (the
porting guide, "What a port may do differently"), so a case runs again each
other way it reached (``OTHER_WAYS``): a case that fills a context with
``prompt.fill_ranked_naive``, the readable fill of CTX-2 and CTX-12 (the
naive fill, or the counted fill with its repair); a case that looks for a
query's words with ``lexical.ranked``, every live entry scored (REC-2,
REC-3), and with the walk by importance read to its end, the search a large
memory takes first (REC-7); a case ranked by BM25 with ``ranking.naive``,
every live entry scored (BM-5, BM-6, BM-8), instead of the pruned search; a case that cuts a history at marks with every
live unit read (``cut.stable_taken``, MSG-11) instead of from the memo of
the units' counts (MSG-17). The vectors judge each way.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sentinel_memory.conformance import backend, compare, vectors, wire
from sentinel_memory.core import lexical, prompt, ranking, request, search, window

ROOT = Path(__file__).resolve().parent.parent


def error_text_only(old: str, new: str) -> bool:
    """Whether a changed line only writes ``XX`` into the text of a raised error (what mutmut does to a string)."""
    return old.startswith("raise ") and new != old and new.replace("XX", "") == old


def unobservable_mutant() -> bool:
    """Whether the module under mutation differs from its pristine copy in one error text alone."""
    mutated, pristine = os.environ.get("MUTATED"), os.environ.get("PRISTINE")
    if not mutated or not pristine:
        return False
    now = Path(mutated).read_text(encoding="utf-8").splitlines()
    before = Path(pristine).read_text(encoding="utf-8").splitlines()
    if len(now) != len(before):
        return False
    changed = [(old.strip(), new.strip()) for old, new in zip(before, now, strict=True) if old != new]
    return len(changed) == 1 and error_text_only(*changed[0])


def readable_matches(
    state: Any, query_words: frozenset[str], now: int | float, limit: int, among: Any = None
) -> list[tuple[float, Any]]:
    """REC-2 and REC-3 read literally (``lexical.ranked``): every live entry scored, the best ``limit``."""
    live = state.index.live_by_age(now) if among is None else among
    return lexical.ranked(query_words, live, now, state.config.recency_window)[:limit]


def readable_bm25(state: Any, terms: Any, now: int | float, limit: int, in_context: bool) -> list[tuple[float, Any]]:
    """BM-5, BM-6, BM-8 read literally (``ranking.naive``): every live entry scored, the best ``limit``."""
    live = state.index.live_by_age(now)
    return ranking.naive(terms, live, now, state.config.recency_window, neighbours=in_context)[:limit]


def readable_bm25_among(
    state: Any, terms: Any, now: int | float, among: Any, in_context: bool
) -> list[tuple[float, Any]]:
    """The same, ranking only ``among`` of the live entries."""
    live = state.index.live_by_age(now)
    return ranking.naive(terms, live, now, state.config.recency_window, among=among, neighbours=in_context)


#: The other ways a port may compute what the fast reference computes, each as the names it replaces: the
#: readable fill of CTX-2 and CTX-12 for the fast fill (CTX-8), the scan of every live entry (REC-2, REC-3)
#: for the search of the holders, the walk by importance to its end, which a small memory never takes, the
#: search of the holders with their postings counted in bits (REC-7), which a small memory never takes, BM25's
#: every live entry scored for its pruned search (BM-7), and the stable cut of MSG-11 read literally for the memo
#: of MSG-17.
OTHER_WAYS: tuple[tuple[str, tuple[tuple[Any, str, Any], ...]], ...] = (
    ("the readable fill", ((window, "fill", prompt.fill_ranked_naive),)),
    ("the readable recall", ((search, "_matches", readable_matches), (window, "_matches", readable_matches))),
    (
        "the walk by importance",
        (
            (search, "_by_holders", lambda stored, limit: False),
            (search, "_walk_budget", lambda postings, top_band=0: None),
        ),
    ),
    (
        "the postings counted in bits",
        ((search, "_by_holders", lambda stored, limit: True), (lexical, "_in_bits", lambda postings: True)),
    ),
    (
        "the readable BM25 ranking",
        ((ranking, "_best_bm25", readable_bm25), (ranking, "_among_bm25", readable_bm25_among)),
    ),
    (
        "the stable cut read in full",
        ((request, "_memo_taken", lambda *args: None), (request, "_memo_whole", lambda *args: None)),
    ),
)


@contextlib.contextmanager
def replaced(names: tuple[tuple[Any, str, Any], ...]) -> Iterator[list[int]]:
    """Each ``(module, name, value)`` set while it lasts; yields a list with one item per call of any of them."""
    calls: list[int] = []
    kept = [(module, name, getattr(module, name)) for module, name, _ in names]

    def counting(value: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return value(*args, **kwargs)

        return counted

    try:
        for module, name, value in names:
            setattr(module, name, counting(value))
        yield calls
    finally:
        for module, name, value in kept:
            setattr(module, name, value)


def answers(request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``request`` run as ``serve`` answers it; then again each other way (``OTHER_WAYS``) that it reached.

    Yields ``(which way, the answer as serve writes it)``, the first way ``""``.
    """
    reached = []
    with contextlib.ExitStack() as stack:
        for _, names in OTHER_WAYS:  # the reference's own functions, counted
            reached.append(stack.enter_context(replaced(tuple((m, n, getattr(m, n)) for m, n, _ in names))))
        answer = wire.encode(backend.run_case(request))
    yield "", answer
    for (which, names), calls in zip(OTHER_WAYS, reached, strict=True):
        if calls:
            with replaced(names):
                yield f" ({which})", wire.encode(backend.run_case(request))


def main(folder: Path = ROOT / "spec" / "vectors") -> int:
    if unobservable_mutant():
        print("only the text of a raised error changed: no vector can see it")
        return 0
    count = 0
    for path, case in vectors.load_all(folder):
        for which, answer in answers(vectors.request_of(case)):
            where = compare.first_difference(vectors.answer_of(case), answer)
            if where is not None:
                print(f"{path.name} {case['id']}: differs at {where}{which}")
                return 1
        count += 1
    print(f"{count} cases agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(*map(Path, sys.argv[1:2])))
