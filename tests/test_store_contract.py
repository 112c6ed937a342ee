"""The store contract's own pieces: check_store and MemoryStore (PER-2, PER-10, PER-14, MW-1, MW-3, MW-8)."""

from __future__ import annotations

import threading

import pytest

from sentinel_memory import ConflictError, LockTimeoutError, MemoryStore, create_memory
from sentinel_memory.stores import AsyncStore, Store, check_store, is_async_store
from sentinel_memory.stores.contract import DURABILITY, as_path, check_durability


class LoadOnly:
    def load(self):
        return None


class SaveOnly:
    def save(self, document):
        pass


class NotCallable:
    load = None
    save = None


class Both:
    def load(self):
        return None

    def save(self, document):
        pass


@pytest.mark.parametrize("store", [LoadOnly(), SaveOnly(), NotCallable(), object()], ids=type)
def test_check_store_refuses_a_store_without_a_callable_load_or_save(store):
    """PER-2: a store lacking a callable load() or save() is refused with a TypeError naming its type."""
    with pytest.raises(
        TypeError, match=rf"^store must have load\(\) and save\(document\) methods, got {type(store).__name__}$"
    ):
        check_store(store)
    with pytest.raises(TypeError):
        create_memory(store=store)


def test_check_store_accepts_a_store_with_both():
    """PER-2: an object with callable load() and save() is a store, and a memory over it works."""
    store = Both()
    assert check_store(store) is None
    assert create_memory(store=store).remember("a", 1).key == "a"


def test_memory_store_preserve_keeps_every_document_oldest_first():
    """PER-14: MemoryStore.preserve appends a copy of the current document each time, so none is lost."""
    store = MemoryStore()
    store.preserve()
    assert store.preserved == []  # nothing saved yet: nothing to keep
    store.save({"version": 1, "generation": 1, "entries": [], "n": 1})
    store.preserve()
    store.save({"version": 1, "generation": 2, "entries": [], "n": 2})
    store.preserve()
    assert [document["n"] for document in store.preserved] == [1, 2]
    store.preserved[0]["n"] = 99
    assert store.load()["n"] == 2  # a copy, not the stored document


def test_memory_store_loads_and_keeps_copies():
    """PER-10: load returns a deep copy of the saved document; changing either leaves the store as saved."""
    store = MemoryStore()
    assert store.load() is None and store.generation() == 0
    document = {"version": 1, "generation": 1, "entries": [{"a": [1]}]}
    store.save(document)
    document["entries"][0]["a"].append(2)
    loaded = store.load()
    assert loaded == {"version": 1, "generation": 1, "entries": [{"a": [1]}]}
    loaded["entries"].clear()
    assert store.load()["entries"] == [{"a": [1]}] and store.generation() == 1


def test_memory_store_refuses_a_generation_that_does_not_follow():
    """MW-3: a save whose generation does not follow the stored one is refused and the store keeps its document."""
    store = MemoryStore()
    store.save({"version": 1, "generation": 1, "entries": [], "n": 1})
    with pytest.raises(ConflictError):
        store.save({"version": 1, "generation": 1, "entries": [], "n": 2})
    assert store.load()["n"] == 1 and store.generation() == 1
    store.save({"version": 1, "generation": 2, "entries": [], "n": 3})
    assert store.load()["n"] == 3 and store.generation() == 2


def test_memory_store_lock_keeps_another_thread_out_until_lock_wait():
    """MW-8: while one thread holds lock(), another thread's call waits and then raises LockTimeoutError."""
    store = MemoryStore(lock_wait=0.05)
    held, release = threading.Event(), threading.Event()

    def hold():
        with store.lock():
            held.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(5)
    try:
        for call in (store.load, store.generation, store.preserve, lambda: store.save({"version": 1, "entries": []})):
            with pytest.raises(LockTimeoutError):
                call()
    finally:
        release.set()
        thread.join()
    store.save({"version": 1, "generation": 1, "entries": []})  # the step after: the lock is free again
    with store.lock(), store.lock():  # the holder may re-enter
        assert store.generation() == 1


def test_memory_store_close_and_context_keep_the_document():
    """WRP-5: closing a MemoryStore (or leaving its with block) keeps the document for the next memory."""
    with MemoryStore() as store:
        store.save({"version": 1, "entries": []})
    store.close()
    assert store.load() == {"version": 1, "entries": []}
    assert repr(store).startswith("<MemoryStore at 0x")


def test_is_async_store_and_as_path():
    """AIO-3, WRP-4: a store is async when its load is a coroutine function; a str subclass names its own text."""

    class Async:
        async def load(self):
            return None

    class Odd(str):
        def __str__(self):
            raise RuntimeError("not called")

    assert is_async_store(Async()) and not is_async_store(Both()) and not is_async_store(object())
    assert str(as_path(Odd("a/b"))) == "a/b"


def test_the_store_protocols_answer_isinstance():
    """PER-2, AIO-3: Store and AsyncStore are runtime-checkable protocols: isinstance tells a store of each kind."""

    class Async:
        async def load(self):
            return None

        async def save(self, document):
            pass

    assert isinstance(MemoryStore(), Store) and isinstance(Both(), Store) and not isinstance(LoadOnly(), Store)
    assert isinstance(Async(), AsyncStore) and not isinstance(object(), AsyncStore)


@pytest.mark.parametrize("durability", ["full", "normal", "none"])
def test_per_23_check_durability_gives_back_each_level(durability):
    """PER-23: the three durability levels, safest first, each checked and given back as it is."""
    assert DURABILITY == ("full", "normal", "none")
    assert check_durability(durability) == durability


@pytest.mark.parametrize(
    ("durability", "error", "said"),
    [
        (None, TypeError, "durability must be a str, one of ('full', 'normal', 'none'), got None"),
        (1, TypeError, "durability must be a str, one of ('full', 'normal', 'none'), got int"),
        ("FULL", ValueError, "durability must be one of ('full', 'normal', 'none'), got 'FULL'"),
    ],
)
def test_per_23_check_durability_refuses_anything_else_naming_it(durability, error, said):
    """PER-23: None and other types raise TypeError, another str ValueError; each message names durability and the levels."""
    with pytest.raises(error) as raised:
        check_durability(durability)
    assert str(raised.value) == said


def test_per_17_memorystore_loads_and_preserves_from_a_call_stack_near_the_recursion_limit():
    """PER-17, PER-10: MemoryStore's load and preserve parse its text on a fresh stack when the caller's is too shallow."""
    import sys

    from sentinel_memory import MAX_DEPTH
    from support import at_depth, nest, stack_depth

    store = MemoryStore()
    create_memory(store=store, autosave=True, clock=lambda: 1000).remember("blob", nest(MAX_DEPTH))
    room = sys.getrecursionlimit() - stack_depth() - 40
    loaded = at_depth(room, store.load)
    assert loaded["entries"][0]["data"] == nest(MAX_DEPTH)
    at_depth(room, store.preserve)
    assert store.preserved == [loaded]
    assert store.load() == loaded  # the step after: a load from a shallow stack reads the same
