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
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sentinel_memory.conformance import backend, compare, vectors, wire
from sentinel_memory.core import prompt, window

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


@contextlib.contextmanager
def filling_with(fill: Callable[..., Any]) -> Iterator[list[int]]:
    """Contexts filled by ``fill`` while it lasts; yields a list that counts its calls (one item per call)."""
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return fill(*args, **kwargs)

    fast = window.fill
    window.fill = counted
    try:
        yield calls
    finally:
        window.fill = fast


def answers(request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``request`` run as ``serve`` answers it, with the fast fill; then, if it filled a context, with the readable fill.

    Yields ``(which fill, the answer as serve writes it)``.
    """
    with filling_with(window.fill) as filled:
        yield "", wire.encode(backend.run_case(request))
    if filled:
        with filling_with(prompt.fill_ranked_naive):
            yield " (the readable fill)", wire.encode(backend.run_case(request))


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
