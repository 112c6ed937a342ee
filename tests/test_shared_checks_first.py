"""Where the text and the reference once parted, now one: a shared change checks before it reloads and a refused one
changes nothing (MW-6, WRP-1), get_context checks only last (CTX-11), a long integer in stored text is damage (PER-13)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

import sentinel_memory as sm
from sentinel_memory.testing import FakeClock


def writers(tmp_path, **options):
    path = tmp_path / "memory.json"
    clock = FakeClock()
    first = sm.create_memory(store=sm.JsonFileStore(path), clock=clock, autosave=True, shared=True, **options)
    second = sm.create_memory(store=sm.JsonFileStore(path), clock=clock, autosave=True, shared=True)
    return path, first, second


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda mem: mem.remember("", 1), ValueError),
        (lambda mem: mem.remember(5, 1), TypeError),
        (lambda mem: mem.forget(5), TypeError),
        (lambda mem: mem.add_turn(5, "hi"), TypeError),
        (lambda mem: mem.working.set(5), TypeError),
    ],
)
def test_mw_6_a_shared_change_checks_its_arguments_before_it_reloads(tmp_path, call, error):
    """MW-6: a shared change with a bad argument raises that argument's error, not the damaged store's, and reloads nothing."""
    path, first, second = writers(tmp_path)
    first.remember("a", 1)
    second.remember("z", 26)  # the store moved on: a good change of `first` would reload it
    with pytest.raises(error):
        call(first)
    assert [e.key for e in first.get_recent()] == ["a"]
    path.write_text('{"version": 1, "entries": [')  # damage: a good change answers it
    with pytest.raises(error):
        call(first)
    with pytest.raises(sm.DamagedStoreError):
        first.forget("a")
    assert [e.key for e in first.get_recent()] == ["a"]


def test_mw_6_a_shared_change_reads_the_clock_once_before_its_reload(tmp_path):
    """MW-6, TIME-2: a clock that reads no finite number refuses a shared change before the store is read."""
    path = tmp_path / "memory.json"
    readings = [0]
    mem = sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: readings[-1], autosave=True, shared=True)
    readings.append(float("nan"))
    path.write_text("damage")
    with pytest.raises(TypeError):
        mem.remember("a", 1)


def test_wrp_1_a_shared_change_refused_after_its_reload_leaves_the_memory_as_it_was(tmp_path):
    """WRP-1, MW-6: when on_evict refuses a shared change after its reload, the memory is as it was before the reload."""
    refusing = []

    def on_evict(compaction):
        if refusing:
            raise RuntimeError("the archive is down")

    path, first, second = writers(tmp_path, limit=2, on_evict=on_evict)
    first.remember("a", 1)
    second.remember("b", 2)  # the store moved on: first reloads before its next change
    refusing.append(True)
    with pytest.raises(RuntimeError):
        first.remember("c", 3)  # over the limit after the reload: on_evict hears of it, and refuses
    assert [e.key for e in first.get_recent()] == ["a"]
    refusing.clear()
    first.remember("c", 3)  # reloads, then changes
    assert {e.key for e in first.get_recent()} == {"b", "c"}
    assert {e["key"] for e in sm.JsonFileStore(path).load()["entries"]} == {"b", "c"}


class AsyncFile:
    """An async store over a JSON file, as a test needs one: the async engine drives it on the loop."""

    def __init__(self, path):
        self.inner = sm.JsonFileStore(path)

    async def load(self):
        return self.inner.load()

    async def save(self, document):
        self.inner.save(document)

    async def generation(self):
        return self.inner.generation()

    @contextlib.asynccontextmanager
    async def lock(self):
        yield


@pytest.mark.parametrize("kind", ["sync store", "async store"])
def test_mw_6_an_async_shared_change_checks_its_arguments_before_it_reloads(tmp_path, kind):
    """MW-6, AIO-2: the async memory checks a shared change's arguments before its reload, as the sync one does."""
    path = tmp_path / "memory.json"

    async def main():
        store = sm.JsonFileStore(path) if kind == "sync store" else AsyncFile(path)
        first = await sm.create_async_memory(store=store, clock=FakeClock(), autosave=True, shared=True)
        await first.remember("a", 1)
        path.write_text("damage")
        with pytest.raises(TypeError):
            await first.forget(5)
        with pytest.raises(sm.DamagedStoreError):
            await first.forget("a")
        assert [e.key for e in first.get_recent()] == ["a"]

    asyncio.run(main())


def test_ctx_11_only_is_checked_after_every_other_argument():
    """CTX-11: a bad only loses to a query or separator of the wrong kind, as the protocol's table orders them."""
    mem = sm.create_memory(clock=FakeClock())
    mem.remember("a", "x")
    with pytest.raises(TypeError):
        mem.get_context(token_budget=50, only="bogus", separator=5)
    with pytest.raises(TypeError):
        mem.get_context(token_budget=50, only="bogus", query=5)
    with pytest.raises(ValueError):
        mem.get_context(token_budget=50, only="bogus", query="x")
    with pytest.raises(ValueError):
        mem.get_context(token_budget=-1, only=5)


def test_ctx_11_a_bad_must_keep_with_only_is_warned_about_once():
    """CTX-11, NUM-1: get_context with only and an ignored must_keep warns once, not once per check."""
    mem = sm.create_memory(clock=FakeClock())
    mem.remember("a", "x")
    with pytest.warns(sm.IgnoredValueWarning) as caught:
        mem.get_context(token_budget=50, only="facts", must_keep=2)
    assert len(caught) == 1


@pytest.mark.parametrize(("digits", "damaged"), [(4300, False), (4301, True)])
def test_per_13_an_integer_literal_of_more_than_4300_digits_is_damage(tmp_path, digits, damaged):
    """PER-13: a file holding an integer literal of more than 4,300 digits is damaged; one of 4,300 is read."""
    path = tmp_path / "memory.json"
    path.write_text('{"version": 1, "entries": [], "x": ' + "9" * digits + "}")
    store = sm.JsonFileStore(path)
    if damaged:
        with pytest.raises(sm.DamagedStoreError):
            store.load()
    else:
        assert store.load()["x"] % 10**100 == 10**100 - 1


CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "4 °C"}


def test_mw_6_a_shared_memory_takes_a_result_for_another_writers_call(tmp_path):
    """MW-6, MSG-6: the open-call check of a shared change is made after its reload, so a result for another writer's call is taken."""
    path, first, second = writers(tmp_path)
    first.add_turn("user", "Weather?")
    second.get("x")
    first.add_message(CALL)  # second has not seen the call
    assert second.add_message(RESULT).key == "chat:3"
    with pytest.raises(sm.NoOpenCallError, match=r"'c1' answers no open call \(open: none\)"):
        first.add_message(RESULT)  # answered by second, which first sees after its reload
    assert [e.key for e in first.get_recent()] == ["chat:2", "chat:1"]  # refused after its reload: as it was
    assert [m["role"] for m in first.get_messages(token_budget=100).messages] == ["user"]
    first.add_turn("user", "Thanks")  # the next change reloads and follows the result
    assert [e["key"] for e in sm.JsonFileStore(path).load()["entries"]] == ["chat:1", "chat:2", "chat:3", "chat:4"]
    with pytest.raises(TypeError, match=r"messages\[0\].content"):
        second.add_messages(
            [{"role": "tool", "tool_call_id": "c1", "content": 5}]
        )  # a field: refused before any reload


def test_mw_6_an_async_shared_memory_takes_a_result_for_another_writers_call(tmp_path):
    """MW-6, MSG-6, AIO-2: the async memory checks a shared change's open calls after its reload, as the sync one does."""
    path = tmp_path / "memory.json"

    async def main():
        clock = FakeClock()
        first = await sm.create_async_memory(store=AsyncFile(path), clock=clock, autosave=True, shared=True)
        second = await sm.create_async_memory(store=AsyncFile(path), clock=clock, autosave=True, shared=True)
        await first.add_turn("user", "Weather?")
        await first.add_message(CALL)
        assert (await second.add_message(RESULT)).key == "chat:3"
        with pytest.raises(sm.NoOpenCallError):
            await first.add_message(RESULT)
        assert [e.key for e in first.get_recent()] == ["chat:2", "chat:1"]

    asyncio.run(main())
