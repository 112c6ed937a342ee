"""``tests/mutant_hunt.py``: a surviving mutant read from a mutation cache, applied to a copy, hunted by the random mode."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import mutant_hunt
import pytest
from mutmut import Context, RelativeMutationID, mutate

from sentinel_memory.conformance import backend as reference
from sentinel_memory.conformance.vectors import load_all


def _cache(path: Path, rows: list[tuple[int, str, int, int]]) -> Path:
    """A cache with mutmut's tables, holding ``(id, line, index, line_number)`` mutants."""
    cache = path / ".mutmut-cache"
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE Line (id INTEGER PRIMARY KEY, sourcefile INTEGER, line TEXT, line_number INTEGER)")
        db.execute(
            'CREATE TABLE Mutant (id INTEGER PRIMARY KEY, line INTEGER, "index" INTEGER, '
            "tested_against_hash TEXT, status TEXT)"
        )
        for ident, line, index, number in rows:
            db.execute("INSERT INTO Line VALUES (?, 1, ?, ?)", (ident, line, number))
            db.execute("INSERT INTO Mutant VALUES (?, ?, ?, '', 'bad_survived')", (ident, ident, index))
    return cache


def test_a_mutant_is_read_from_the_cache_without_writing_it(tmp_path):
    """A mutant's line, index and line number come from the cache, opened read-only; an unknown id stops with its name."""
    cache = _cache(tmp_path, [(7, "    return a < b", 1, 41)])
    before = cache.read_bytes()
    assert mutant_hunt.mutant(cache, 7) == ("    return a < b", 1, 41)
    assert cache.read_bytes() == before
    with pytest.raises(SystemExit, match="no mutant 8"):
        mutant_hunt.mutant(cache, 8)


def test_a_mutant_is_applied_as_mutmut_applies_it():
    """The mutated source is mutmut's own for that line and index, and differs from the source on that line only."""
    source = "x = 1\ndef f(a, b):\n    return a < b\n"
    got = mutant_hunt.mutated(source, "    return a < b", 0, 2, "m.py")
    expected, _ = mutate(
        Context(source=source, mutation_id=RelativeMutationID("    return a < b", 0, 2), filename="m.py")
    )
    assert got == expected
    assert [line for line in got.splitlines() if line not in source.splitlines()] == ["    return a <= b"]


def test_a_line_that_moved_is_refused():
    """A cache older than the source (the line is not where the run saw it) is refused, naming the line."""
    with pytest.raises(ValueError, match=re.escape("line 2 of m.py is no longer 'return a < b'")):
        mutant_hunt.mutated("x = 1\ny = 2\n", "    return a < b", 0, 1, "m.py")


@pytest.mark.slow
def test_the_machine_finds_a_case_that_kills_a_mutant_the_vectors_missed(tmp_path, monkeypatch):
    """A must-keep entry ranked twice (window.py, `<` for `<=`) is found by the random mode and printed as a case."""
    module = mutant_hunt.PACKAGE / "core" / "window.py"
    lines = module.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if "e.importance < keep]" in line and "rank(None)" in line)
    index = next(
        i
        for i in range(8)
        if "e.importance <= keep"
        in mutate(
            Context(source=module.read_text(encoding="utf-8"), mutation_id=RelativeMutationID(lines[number], i, number))
        )[0].splitlines()[number]
    )
    cache = _cache(tmp_path, [(1, lines[number], index, number)])
    monkeypatch.setattr(mutant_hunt, "cache_of", lambda _: cache)
    found = mutant_hunt.hunt("core/window.py", 1, cases=300)
    assert found is not None
    case = json.loads(found)
    # Which step shows it is the machine's draw (a context's or a request's facts); that it takes a must-keep mark is not.
    assert any("must_keep" in step["args"] for step in case["steps"])
    assert [step["expect"] for step in case["steps"]] == reference.run_case({**case, "id": "found"})["results"]


def test_a_case_the_reference_answers_does_not_kill_the_reference():
    """``kills`` runs a case through the runner: a vector against the unmutated package passes, so it kills nothing."""
    _, vector = next(load_all())
    assert not mutant_hunt.kills(vector, mutant_hunt.ROOT / "src")
    assert mutant_hunt.kills(
        {**vector, "steps": [{**vector["steps"][0], "expect": "not this"}]}, mutant_hunt.ROOT / "src"
    )
