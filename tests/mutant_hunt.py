"""Hunt a mutant the vectors let live with the random mode: ``make hunt MODULE=core/cut.py ID=64``.

    python tests/mutant_hunt.py MODULE ID [--cases N] [--steps N]

``make vector-mutation`` leaves survivors: changes to the reference that
every vector passes. For one of them (its number in the run's cache,
``.cache/mutation/vectors__<module>/.mutmut-cache``), this applies the
change to a copy of ``src/`` and runs the differential machine
(``tests/spec/test_differential.py``, section 12 of the protocol) with that
copy's ``serve`` as the backend: the reference and the mutant answer the same
random steps. A difference is shrunk by hypothesis and printed as a case in
the vector format, expectations from the reference, ready to be given an id,
a description and its rules and added to ``spec/vectors``. Before it is
printed, the case is run by the conformance runner against the mutant's
``serve``, and must fail there: a printed case kills the mutant. The
machine runs with hypothesis's ``hunt`` profile (``tests/conftest.py``): no
example database, so a hunt neither replays nor leaves examples of other
mutants. Nothing found in
``--cases`` cases (default 1,000 of up to 20 steps) is printed as such: the
mutant is then a candidate for the equivalents, with a reason, or for a case
written by hand.

The cache is read, never written (``file:...?mode=ro``), so a hunt can run
beside the mutation run that made the cache.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mutmut import Context, RelativeMutationID, mutate

from sentinel_memory.conformance.runner import Subprocess, default_env, run

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sentinel_memory"


def cache_of(module: str) -> Path:
    """The vector-mutation cache of ``module`` (as ``tests/mutation.py --vectors`` keeps it)."""
    return ROOT / ".cache" / "mutation" / ("vectors__" + module.replace("/", "__")) / ".mutmut-cache"


def mutant(cache: Path, ident: int) -> tuple[str, int, int]:
    """The mutant ``ident`` of ``cache``: its line's text, its index on that line, its line number (from 0)."""
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as db:
        row = db.execute(
            'SELECT l.line, m."index", l.line_number FROM Mutant m JOIN Line l ON m.line = l.id WHERE m.id = ?',
            (ident,),
        ).fetchone()
    if row is None:
        raise SystemExit(f"no mutant {ident} in {cache}")
    return row


def mutated(source: str, line: str, index: int, number: int, filename: str) -> str:
    """``source`` with the mutant applied, as mutmut applies it; ``ValueError`` when the line is not there any more."""
    if source.splitlines()[number : number + 1] != [line]:
        raise ValueError(f"line {number + 1} of {filename} is no longer {line.strip()!r}: run the mutation again")
    mutation = RelativeMutationID(line=line, index=index, line_number=number)
    text, count = mutate(Context(source=source, mutation_id=mutation, filename=filename))
    if count != 1 or text == source:
        raise ValueError(f"mutant {index} of line {number + 1} of {filename} changes nothing")
    return text


def hunt(module: str, ident: int, cases: int = 1000, steps: int = 20) -> str | None:
    """The case the machine found against the mutant, as a JSON line; None when it found none."""
    line, index, number = mutant(cache_of(module), ident)
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / "src"
        shutil.copytree(ROOT / "src", copy, ignore=shutil.ignore_patterns("__pycache__"))
        target = copy / "sentinel_memory" / module
        target.write_text(mutated(target.read_text(encoding="utf-8"), line, index, number, module), encoding="utf-8")
        print(f"{module}:{number + 1} #{ident}: {line.strip()}", file=sys.stderr)
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT / "src"),
            HYPOTHESIS_PROFILE="hunt",
            SENTINEL_MEMORY_RANDOM_CASES=str(cases),
            SENTINEL_MEMORY_RANDOM_STEPS=str(steps),
            SENTINEL_MEMORY_BACKEND=shlex.join(serve_of(copy)),
        )
        machine = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-o", "addopts="]
            + ["tests/spec/test_differential.py", "-k", "agrees"],
            check=False,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        said = [text[1:].strip() for text in machine.stdout.splitlines() if text.startswith("E ")]
        if "as a vector:" in said:
            found = said[said.index("as a vector:") + 1]
            if not kills(json.loads(found), copy):
                raise SystemExit(f"the machine's case does not fail against the mutant when run again:\n{found}")
            return found
    if machine.returncode != 0:
        raise SystemExit(f"the machine failed without a case:\n{machine.stdout[-2000:]}{machine.stderr[-2000:]}")
    return None


def serve_of(source: Path) -> list[str]:
    """The command line of ``serve`` from the package at ``source`` (a copy of ``src/``)."""
    return ["env", f"PYTHONPATH={source}", sys.executable, "-m", "sentinel_memory.conformance", "serve"]


def kills(case: dict[str, Any], source: Path) -> bool:
    """Whether ``case`` fails, as the conformance runner judges it, against the ``serve`` of the package at ``source``."""
    report = run(Subprocess(serve_of(source), env=default_env()), [{**case, "id": case.get("id", "found")}])
    return report.summary() == "0 passed, 1 failed, 0 skipped, 0 errored"


def main(argv: list[str]) -> int:
    words = iter(argv)
    positional: list[str] = []
    cases, steps = 1000, 20
    for word in words:
        if word == "--cases":
            cases = int(next(words))
        elif word == "--steps":
            steps = int(next(words))
        else:
            positional.append(word)
    if len(positional) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = hunt(positional[0], int(positional[1]), cases, steps)
    print(found if found is not None else f"nothing found in {cases} random cases of up to {steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
