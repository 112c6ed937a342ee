"""The module paths of earlier releases (LAY-5), and who holds the lock of a shared LineCounter (LAY-2, CTX-14)."""

from __future__ import annotations

import importlib
import sys
import threading
import warnings

import pytest

import sentinel_memory as sm
from sentinel_memory.core.tokens import LineCounter, per_line

#: Every module path an earlier release had, and where the module is now.
OLD_PATHS = {
    "sentinel_memory.aioredis": "sentinel_memory.stores.aioredis",
    "sentinel_memory.document": "sentinel_memory.core.document",
    "sentinel_memory.errors": "sentinel_memory.core.errors",
    "sentinel_memory.expiry": "sentinel_memory.core.expiry",
    "sentinel_memory.filestore": "sentinel_memory.stores.filestore",
    "sentinel_memory.index": "sentinel_memory.core.index",
    "sentinel_memory.jsondata": "sentinel_memory.core.jsondata",
    "sentinel_memory.jsontext": "sentinel_memory.stores.jsontext",
    "sentinel_memory.langchain": "sentinel_memory.integrations.langchain",
    "sentinel_memory.lexical": "sentinel_memory.core.lexical",
    "sentinel_memory.locking": "sentinel_memory.stores.locking",
    "sentinel_memory.options": "sentinel_memory.core.options",
    "sentinel_memory.persistent": "sentinel_memory.core.persistent",
    "sentinel_memory.prompt": "sentinel_memory.core.prompt",
    "sentinel_memory.redisstore": "sentinel_memory.stores.redisstore",
    "sentinel_memory.retention": "sentinel_memory.core.retention",
    "sentinel_memory.shown": "sentinel_memory.core.shown",
    "sentinel_memory.sqlitestore": "sentinel_memory.stores.sqlitestore",
    "sentinel_memory.state": "sentinel_memory.core.state",
    "sentinel_memory.table": "sentinel_memory.core.table",
    "sentinel_memory.tokens": "sentinel_memory.core.tokens",
    "sentinel_memory.turns": "sentinel_memory.core.turns",
    "sentinel_memory.unicode14": "sentinel_memory.core.unicode14",
    "sentinel_memory.values": "sentinel_memory.core.values",
}


@pytest.mark.parametrize(("old", "new"), sorted(OLD_PATHS.items()))
def test_lay_5_an_old_module_path_imports_the_new_module_with_a_warning(old, new, monkeypatch):
    """LAY-5: importing an old path gives a DeprecationWarning naming the new path, at the importing line, and the very module of the new path."""
    module = importlib.import_module(new)
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(sys.modules["sentinel_memory"], old.rpartition(".")[2], raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = importlib.import_module(old)
    assert imported is module
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning) and old in str(w.message)]
    assert len(deprecations) == 1, [str(w.message) for w in caught]
    assert new in str(deprecations[0].message)
    assert deprecations[0].filename == __file__
    for name in getattr(module, "__all__", ()):
        assert getattr(imported, name) is getattr(module, name)


def test_lay_5_the_extending_pages_old_store_imports_still_work(monkeypatch):
    """LAY-5: a store written against the old paths (``from sentinel_memory.errors import ConflictError``) gets the classes the memory raises."""
    for old in ("sentinel_memory.errors", "sentinel_memory.filestore"):
        monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=r"sentinel_memory\.core\.errors"):
        from sentinel_memory.errors import ConflictError, StoreError
    with pytest.warns(DeprecationWarning, match=r"sentinel_memory\.stores\.filestore"):
        from sentinel_memory.filestore import JsonFileStore
    assert ConflictError is sm.ConflictError and StoreError is sm.StoreError and JsonFileStore is sm.JsonFileStore


def test_lay_5_every_old_path_is_listed_and_nothing_else():
    """LAY-5: the package keeps exactly the old paths this test lists, each a module file of its own."""
    from sentinel_memory._moved import MOVED

    assert MOVED == OLD_PATHS


def test_lay_2_the_core_counter_takes_no_lock_and_a_memory_gives_the_one_it_shares():
    """LAY-2, CTX-14: a LineCounter alone takes no lock; the counter a memory counts with, its own or one passed per call, has a lock."""
    counter = per_line(lambda text: len(text.split()))
    assert not isinstance(counter.lock, type(threading.Lock()))
    assert counter("a b") == 2 and counter.measure("a b c") == 3  # counts without a lock

    mem = sm.create_memory(tokenizer=counter, clock=lambda: 1_792_310_400_000)
    mem.remember("user:name", "Jakub")
    own = mem.state.config.tokenizer
    assert isinstance(own, LineCounter)
    passed = per_line(lambda text: len(text))
    assert mem.get_context(token_budget=50).tokens == 2
    assert mem.get_context(token_budget=50, tokenizer=passed).tokens == len("user:name: Jakub")
    assert isinstance(own.lock, type(threading.Lock())) and isinstance(passed.lock, type(threading.Lock()))
    assert passed.cached >= 1  # the memo still works behind the lock


def test_lay_2_a_counter_shared_by_threads_counts_each_line_exactly():
    """LAY-2, CTX-14, MW-5: many threads reading one memory's contexts through one shared counter all get the exact count."""
    mem = sm.create_memory(tokenizer=per_line(lambda text: len(text.split())), clock=lambda: 1_792_310_400_000)
    for i in range(200):
        mem.remember(f"k{i}", f"value {i} " * (i % 5 + 1))
    expected = mem.get_context(token_budget=10_000)
    results = []

    def read():
        for _ in range(5):
            results.append(mem.get_context(token_budget=10_000))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 40 and all(r == expected for r in results)
