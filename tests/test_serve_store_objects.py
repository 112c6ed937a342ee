"""serve --store module:factory gives each memory of a case a store object of its own when the factory reopens, so
generation, lock, reload and preserve go through the store under test (PER-2, MW-3, MW-6, PER-14)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_memory.conformance import backend, compare, stores, vectors, wire

TESTS = Path(__file__).resolve().parent
CASES = [case for _, case in vectors.load_all(TESTS.parent / "spec" / "vectors")]


class Recorded:
    """A MemoryStore-like store on shared data, recording which object each call reached."""

    def __init__(self, data, calls):
        self.data, self.calls = data, calls

    def _note(self, name):
        self.calls.append((id(self), name))

    def load(self):
        self._note("load")
        return self.data.load()

    def save(self, document):
        self._note("save")
        self.data.save(document)

    def generation(self):
        self._note("generation")
        return self.data.generation()

    @contextlib.contextmanager
    def lock(self):
        self._note("lock")
        with self.data.lock():
            yield

    def preserve(self):
        self._note("preserve")
        return self.data.preserve()


def recording_factory():
    import sentinel_memory as sm

    calls: list = []

    def factory(store=None):
        return Recorded(store.data if store is not None else sm.MemoryStore(), calls)

    return factory, calls


def test_mw_6_each_memory_of_a_case_calls_its_own_store_object():
    """MW-6, MW-3: with a factory that reopens, memory 2 of a shared case reaches the data through another object, with lock() and generation()."""
    case = next(c for c in CASES if c["id"] == "sessions-shared-loses-nothing")
    factory, calls = recording_factory()
    answer = backend.run_case(vectors.request_of(case), stores.FactoryProtocolStore(factory))
    assert compare.first_difference(vectors.answer_of(case), wire.encode(answer)) is None
    objects = {who for who, _ in calls}
    assert len(objects) >= 2
    for who in objects:
        assert {"lock", "generation"} <= {name for w, name in calls if w == who}


def test_per_2_a_factory_without_an_argument_shares_one_object():
    """PER-2: a factory that takes no argument cannot reopen: the memories of a case share its one object."""
    import sentinel_memory as sm

    made = []

    def factory():
        made.append(sm.MemoryStore())
        return made[-1]

    case = next(c for c in CASES if c["id"] == "sessions-conflict")
    answer = backend.run_case(vectors.request_of(case), stores.FactoryProtocolStore(factory))
    assert compare.first_difference(vectors.answer_of(case), wire.encode(answer)) is None
    assert len(made) == 1


@pytest.mark.parametrize("factory", ["json_file", "sqlite", "docs_example"])
def test_mw_3_every_vector_passes_with_a_store_object_per_memory(factory, tmp_path):
    """PER-2, MW-3, MW-6: serve --store module:factory with a factory that reopens runs every vector, each memory on its own object."""
    serve = f"{sys.executable} -m sentinel_memory.conformance serve --store kit_reopening:{factory}"
    result = subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", "run", "--backend", serve, "--quiet"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))},
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"[0-9]+ passed, 0 failed, 0 skipped, 0 errored", summary)
    assert int(summary.split()[0]) == len(CASES)
