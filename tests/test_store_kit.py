"""The store kit (sentinel_memory.testing) on the Extending page's example store, and on stores that break the contract."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from kit_stores import example_store_class

from sentinel_memory.testing import StoreSuite

TESTS = Path(__file__).resolve().parent
DictStore = example_store_class()
#: How many vectors there are: a run through a store in the loop must pass every one, not a vacuous none.
CASES = sum(
    len(json.loads(p.read_text(encoding="utf-8"))["cases"]) for p in (TESTS.parent / "spec" / "vectors").glob("*.json")
)


class TestTheExtendingPagesStore(StoreSuite):
    """PER-2, MW-1, MW-3, MW-6: the thirty-line store of the Extending page passes the kit (its writers are threads)."""

    processes = False

    def make_store(self, tmp_path):
        self.backend = {}
        return DictStore(self.backend, key=tmp_path.name)

    def reopen(self, store):
        return DictStore(self.backend, key=store.key)


BROKEN = '''
import json
from sentinel_memory.testing import StoreSuite


class ForgetfulStore:
    """Keeps documents but never checks generations: two writers overwrite each other."""

    def __init__(self):
        self.text = None

    def load(self):
        return None if self.text is None else json.loads(self.text)

    def save(self, document):
        self.text = json.dumps(document)


class SharingStore(ForgetfulStore):
    """Hands out the very document it keeps: changing a loaded one changes the store."""

    def load(self):
        if self.text is not None:
            self.kept = getattr(self, "kept", None) or json.loads(self.text)
            return self.kept
        return None


class TestForgetful(StoreSuite):
    processes = False

    def make_store(self, tmp_path):
        return ForgetfulStore()


class TestSharing(StoreSuite):
    processes = False

    def make_store(self, tmp_path):
        return SharingStore()
'''


def test_mw_3_per_10_the_kit_fails_stores_that_break_the_contract(tmp_path):
    """MW-3, PER-10: a store that ignores generations fails the conflict tests, one that shares its document fails the copy test."""
    module = tmp_path / "test_broken_store.py"
    module.write_text(BROKEN, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rf"],
        cwd=tmp_path,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    failed = set(re.findall(r"^FAILED \S+::(\w+::\w+)", result.stdout, re.M))
    assert "TestForgetful::test_mw_3_two_writers_from_one_generation_one_wins" in failed, result.stdout[-3000:]
    assert "TestForgetful::test_mw_3_an_autosave_that_conflicts_changes_nothing" in failed
    assert "TestSharing::test_per_10_documents_are_copies" in failed
    assert "TestForgetful::test_per_3_a_save_loads_back_as_it_was" not in failed
    assert result.returncode == 1


@pytest.mark.parametrize("name", ["make_store", "snapshot"])
def test_per_2_a_suite_that_says_nothing_raises_not_implemented(name):
    """PER-2: a subclass that does not say how to make (or see) its store gets a NotImplementedError naming what is missing."""
    with pytest.raises(NotImplementedError):
        getattr(StoreSuite(), name)(None)


@pytest.mark.parametrize(
    "factory", ["memory", "json_file", "sqlite", "docs_example", "async_coroutines", "async_redis"]
)
def test_per_2_every_vector_passes_with_a_store_from_a_factory_in_the_loop(factory, tmp_path, request):
    """PER-2, MW-1, MW-3, AIO-7: serve --store module:factory runs every vector with that store, sync or async, holding each case's memory."""
    redis = {"SENTINEL_TEST_REDIS_URL": request.getfixturevalue("redis_server").url} if factory == "async_redis" else {}
    report = tmp_path / "report.json"
    serve = f"{sys.executable} -m sentinel_memory.conformance serve --store kit_stores:{factory}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sentinel_memory.conformance",
            "run",
            "--backend",
            serve,
            "--quiet",
            "--json",
            str(report),
        ],
        env={
            **os.environ,
            **redis,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        },
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"[0-9]+ passed, 0 failed, 0 skipped, 0 errored", summary)
    assert int(summary.split()[0]) == CASES


def test_per_2_a_store_factory_that_is_not_there_is_named():
    """PER-2: serve --store with a module:factory that does not exist, or no factory at all, fails saying so."""
    from sentinel_memory.conformance.stores import store_factory

    with pytest.raises(ValueError, match="module:factory"):
        store_factory("kit_stores")
    with pytest.raises(AttributeError):
        store_factory("kit_stores:nowhere")
