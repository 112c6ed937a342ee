"""The tools that judge the vectors: the vectors alone as a test, the mutation score it gives, and the coverage reasons."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import mutation  # noqa: E402
import vector_coverage  # noqa: E402
import vectors_alone  # noqa: E402


def test_the_vectors_alone_pass_on_the_reference(capsys):
    """vectors_alone, the one test of make vector-mutation, passes every case on the unchanged reference."""
    assert vectors_alone.main() == 0
    assert capsys.readouterr().out.endswith(" cases agree\n")


def test_the_vectors_alone_stop_at_the_first_difference(tmp_path, capsys):
    """A changed expectation fails the run at once, naming the file, the case and the field."""
    folder = tmp_path / "vectors"
    shutil.copytree(ROOT / "spec" / "vectors", folder)
    path = folder / "article.json"
    content = json.loads(path.read_text(encoding="utf-8"))
    case = next(case for case in content["cases"] if case["id"] == "article-refund-estimate")
    case["steps"][-1]["expect"]["ok"]["tokens"] += 1
    path.write_text(json.dumps(content), encoding="utf-8")
    assert vectors_alone.main(folder) == 1
    assert capsys.readouterr().out == "article.json article-refund-estimate: differs at $.results[4].ok.tokens\n"


def _fill_one_less(fill):
    def fill_(*args, **kwargs):
        text, chosen, tokens = fill(*args, **kwargs)
        return (text, chosen, tokens + 1) if chosen else (text, chosen, tokens)

    return fill_


def _score_one_third(relevance, importance, freshness):
    return relevance * (0.5 + importance / 3) + 0.05 * freshness


def _walk_one_short(walked):
    def walked_(*args, **kwargs):
        found = walked(*args, **kwargs)
        return found[:-1] if found else found

    return walked_


def _scores_a_little_higher(ranked):
    def ranked_(*args, **kwargs):
        return [(score * (1 + 2**-40), entry) for score, entry in ranked(*args, **kwargs)]

    return ranked_


def _cut_one_unit_more(stable_taken):
    def stable_taken_(unit, must, taken, step):
        kept = stable_taken(unit, must, taken, step)
        return kept + 1 if kept < taken else kept

    return stable_taken_


@pytest.mark.parametrize(
    ("module", "name", "broken", "way"),
    [
        ("prompt", "fill_counted", _fill_one_less, "the readable fill"),
        ("prompt", "fill_naive", _fill_one_less, "the readable fill"),
        ("lexical", "score", lambda _: _score_one_third, "the readable recall"),
        ("search", "walked", _walk_one_short, "the walk by importance"),
        ("bm25", "ranked", _scores_a_little_higher, "the readable BM25 ranking"),
        ("cut", "stable_taken", _cut_one_unit_more, "the stable cut read in full"),
    ],
)
def test_the_vectors_judge_each_other_way_a_port_may_compute(module, name, broken, way, monkeypatch, capsys):
    """A mistake in the readable fill, the scan of every live entry, the walk by importance, BM25 read literally or the stable cut read in full fails the vectors alone, named by its way."""
    from sentinel_memory.core import bm25, cut, lexical, prompt, search

    target = {"prompt": prompt, "lexical": lexical, "search": search, "cut": cut, "bm25": bm25}[module]
    monkeypatch.setattr(target, name, broken(getattr(target, name)))
    assert vectors_alone.main() == 1
    assert capsys.readouterr().out.rstrip().endswith(f"({way})")


@pytest.mark.parametrize(
    ("old", "new", "unobservable"),
    [
        ('raise ValueError(f"{where} must not be empty")', 'raise ValueError(f"XX{where} must not be emptyXX")', True),
        ("raise ValueError(f\"{', '.join(ROLES)}\")", "raise ValueError(f\"{'XX, XX'.join(ROLES)}\")", True),
        ('raise ValueError("x")', 'raise TypeError("x")', False),
        ('kind = fields.get("type", "function")', 'kind = fields.get("XXtypeXX", "function")', False),
        ('raise ValueError("x")', 'raise ValueError("x")', False),
    ],
)
def test_only_a_changed_error_text_is_unobservable(old, new, unobservable):
    """A mutant passes without the vectors only when it writes XX into a raised error's text, nothing else."""
    assert vectors_alone.error_text_only(old, new) is unobservable


def test_an_error_text_mutant_is_passed_without_running(tmp_path, monkeypatch):
    """With MUTATED and PRISTINE set, one changed error text is unobservable; a second change, or another kind, is run."""
    pristine, mutated = tmp_path / "pristine.py", tmp_path / "module.py"
    pristine.write_text('x = 1\nraise ValueError("bad")\n', encoding="utf-8")
    monkeypatch.setenv("PRISTINE", str(pristine))
    monkeypatch.setenv("MUTATED", str(mutated))
    mutated.write_text('x = 1\nraise ValueError("XXbadXX")\n', encoding="utf-8")
    assert vectors_alone.unobservable_mutant()
    mutated.write_text('x = 2\nraise ValueError("XXbadXX")\n', encoding="utf-8")
    assert not vectors_alone.unobservable_mutant()
    mutated.write_text('x = 1\nraise TypeError("bad")\n', encoding="utf-8")
    assert not vectors_alone.unobservable_mutant()


def test_vector_mutation_takes_only_code_a_port_reproduces(capsys):
    """make vector-mutation mutates the core and the backend's argument handling, and refuses any other module."""
    assert mutation.ported("core/chat.py") and mutation.ported("conformance/backend.py")
    assert not mutation.ported("core/nothing.py") and not mutation.ported("shell.py")
    assert mutation.main(["--vectors", "shell.py"]) == 2
    assert "not code a port reproduces" in capsys.readouterr().err


def test_the_equivalents_files_parse():
    """Both equivalents files hold four-line entries, each with a reason."""
    for path in (mutation.EQUIVALENT, mutation.VECTOR_EQUIVALENT):
        assert all(reason for reason in mutation.equivalents(path).values())


def test_every_recorded_score_is_possible():
    """Each module's recorded vector-mutation figures are counts: killed plus unobservable at most the total."""
    scores = json.loads(mutation.VECTOR_SCORES.read_text(encoding="utf-8"))
    assert scores
    for module, score in scores.items():
        assert mutation.ported(module), module
        assert 0 <= score["killed"] and 0 <= score["equivalent"]
        assert score["killed"] + score["equivalent"] <= score["total"], module


def test_every_coverage_reason_names_a_branch_no_vector_takes_and_the_guide_is_current():
    """No reason is stale (its line is still left by a branch no vector takes); the page and the guide's table are as generated."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "vector_coverage.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (result.returncode, result.stderr, result.stdout) == (0, "", "as kept\n")


def test_a_stale_reason_is_reported(monkeypatch):
    """A reason for a line that no missed branch leaves is named, so a reason cannot outlive its branch."""
    found = {
        "sentinel_memory/core/x.py": {"statements": 1, "branches": 2, "taken": 1, "missed": [(3, 4, "if a:", None)]}
    }
    monkeypatch.setattr(
        vector_coverage, "reasons", lambda: {"sentinel_memory/core/x.py": {"if a:": "why", "if b:": "gone"}}
    )
    assert vector_coverage.stale(found) == ["sentinel_memory/core/x.py: if b:"]


def test_a_changed_spec_runs_the_survivors_again(tmp_path):
    """A new or changed vector marks a --vectors cache's survivors untested, so mutmut tries them again; killed ones stay."""
    (tmp_path / "spec" / "vectors").mkdir(parents=True)
    vectors = tmp_path / "spec" / "vectors" / "a.json"
    vectors.write_text("{}", encoding="utf-8")
    with sqlite3.connect(tmp_path / ".mutmut-cache") as db:
        db.execute("CREATE TABLE Mutant (id INTEGER, status TEXT)")
        db.executemany("INSERT INTO Mutant VALUES (?, ?)", [(1, "ok_killed"), (2, "bad_survived"), (3, "bad_timeout")])
    db.close()

    def statuses():
        with sqlite3.connect(tmp_path / ".mutmut-cache") as db:
            found = [status for (status,) in db.execute("SELECT status FROM Mutant ORDER BY id")]
        db.close()
        return found

    assert mutation.spec_changed(tmp_path)  # no digest yet: the survivors are run against this spec
    assert statuses() == ["ok_killed", "untested", "bad_timeout"]
    with sqlite3.connect(tmp_path / ".mutmut-cache") as db:
        db.execute("UPDATE Mutant SET status = 'bad_survived' WHERE id = 2")
    db.close()
    assert not mutation.spec_changed(tmp_path)  # the same spec: the survivor keeps its status
    assert statuses() == ["ok_killed", "bad_survived", "bad_timeout"]
    vectors.write_text('{"cases": []}', encoding="utf-8")
    assert mutation.spec_changed(tmp_path)
    assert statuses() == ["ok_killed", "untested", "bad_timeout"]
