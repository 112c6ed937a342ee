"""The stateful wrapper and the purity of the core (WRP-*)."""

from __future__ import annotations

import copy

import pytest

import sentinel_memory as sm
from sentinel_memory import core


class FailingStore(sm.MemoryStore):
    def __init__(self):
        super().__init__()
        self.fail = False

    def save(self, document):
        if self.fail:
            raise OSError("disk full")
        super().save(document)


def test_wrp_1_failed_autosave_leaves_memory_as_it_was(make):
    """WRP-1: when autosave raises, the call raises and the memory and store keep their old state."""
    store = FailingStore()
    mem = make(store=store, autosave=True)
    mem.remember("k", "v1")
    state = mem.state
    store.fail = True
    for call in (
        lambda: mem.remember("k", "v2"),
        mem.clear,
        lambda: mem.forget("k"),
        lambda: mem.working.set({"a": 1}),
    ):
        with pytest.raises(OSError):
            call()
        assert mem.state is state
    assert mem.get("k") == "v1"
    assert store.load()["entries"][0]["data"] == "v1"


def test_wrp_1_failing_on_evict_leaves_memory_as_it_was(make):
    """WRP-1: when on_evict raises, nothing was evicted, saved or stored."""

    def archive(compaction):
        raise RuntimeError("archive down")

    store = sm.MemoryStore()
    mem = make(limit=1, on_evict=archive, store=store, autosave=True)
    mem.remember("a", 1, importance=0.9)
    state = mem.state
    with pytest.raises(RuntimeError):
        mem.remember("b", 2, importance=0.1)
    assert mem.state is state and [e["key"] for e in store.load()["entries"]] == ["a"]


def test_wrp_1_side_effect_order(make):
    """WRP-1: on_evict runs before the autosave, and the memory changes after both."""
    events = []

    class Spy(sm.MemoryStore):
        def save(self, document):
            events.append(("save", [e["key"] for e in document["entries"]], mem.has("b")))
            super().save(document)

    def on_evict(compaction):
        events.append(("evict", [e.key for e in compaction.evicted], mem.has("b")))

    mem = make(limit=1, on_evict=on_evict, store=Spy(), autosave=True)
    mem.remember("a", 1, importance=0.1)
    events.clear()
    mem.remember("b", 2, importance=0.9)
    assert events == [("evict", ["a"], False), ("save", ["b"], False)]
    assert mem.has("b")


def test_wrp_1_raising_call_on_bad_input_changes_nothing(make):
    """WRP-1: a remember with bad data raises and leaves the state object untouched."""
    mem = make()
    mem.remember("k", "v")
    state = mem.state
    with pytest.raises(TypeError):
        mem.remember("k", {"bad": float("nan")})
    assert mem.state is state


def build_state():
    state = sm.MemoryState(config=sm.Config(limit=3))
    for i, key in enumerate(["a", "b", "c", "d"]):
        state, _ = core.remember(
            state, key, {"n": i, "words": "refund status"}, now=i, importance=i / 4, ttl=10 if i == 1 else None
        )
    state = core.cache_put(state, "x", [1], now=4)
    return core.working_set(state, {"task": "t"}, now=4)


PURE_CALLS = [
    lambda s, now: core.remember(s, "e", {"z": 1}, now=now),
    lambda s, now: core.remember(s, "a", "over", now=now, importance=0.9),
    lambda s, now: core.compact(s, now=now),
    lambda s, now: core.forget(s, "c", now=now),
    lambda s, now: core.clear(s),
    lambda s, now: core.get(s, "c", now=now),
    lambda s, now: core.has(s, "c", now=now),
    lambda s, now: core.size(s, now=now),
    lambda s, now: core.get_recent(s, now=now),
    lambda s, now: core.recall(s, "refund", now=now),
    lambda s, now: core.context(s, now=now, token_budget=20, query="status"),
    lambda s, now: core.stats(s, now=now),
    lambda s, now: core.cache_put(s, "y", 2, now=now),
    lambda s, now: core.cache_get(s, "x", now=now),
    lambda s, now: core.cache_delete(s, "x", now=now),
    lambda s, now: core.cache_clear(s),
    lambda s, now: core.working_set(s, {"step": 2}, now=now),
    lambda s, now: core.working_get(s, now=now),
    lambda s, now: core.working_clear(s),
    lambda s, now: core.to_document(s),
    lambda s, now: core.from_document(s, core.to_document(s), now=now),
]


@pytest.mark.parametrize("call", PURE_CALLS)
def test_wrp_2_core_functions_are_pure(call):
    """WRP-2: a core call leaves its input state unchanged and gives equal results when repeated."""
    state = build_state()
    snapshot = copy.deepcopy(core.to_document(state)), dict(state.cache), state.counters, state.next_seq
    first, second = call(state, 20), call(state, 20)
    assert first == second
    assert (core.to_document(state), dict(state.cache), state.counters, state.next_seq) == snapshot


def test_ent_14_a_hand_built_state_keys_by_entry_and_orders_by_seq():
    """ENT-14: a state built from a mapping files entries under their own keys, in seq order; a key twice raises ValueError."""
    late = sm.Entry(key="late", data="b", importance=0.5, created_at=0, updated_at=0, expires_at=None, seq=7)
    early = sm.Entry(key="early", data="a", importance=0.5, created_at=0, updated_at=0, expires_at=None, seq=2)
    state = sm.MemoryState(entries={"x": late, "y": early})
    assert list(state.entries) == ["early", "late"] and state.entries["late"] is late and "x" not in state.entries
    with pytest.raises(ValueError):
        sm.MemoryState(entries={"a": early, "b": early})


def test_wrp_2_state_tables_are_read_only():
    """WRP-2: the mappings inside a state cannot be written to."""
    state = build_state()
    with pytest.raises(TypeError):
        state.entries["z"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.next_seq = 5  # type: ignore[misc]


def test_exp_2_get_context_reads_the_memory_at_its_clocks_now():
    """EXP-2, CTX-1: get_context reads the entries as they are at the clock's now: one past its ttl is left out, sync and async."""
    import asyncio

    now = [1_000_000]
    mem = sm.create_memory(clock=lambda: now[0])
    mem.remember("brief", "gone soon", ttl=1_000)
    mem.remember("kept", "here to stay")
    now[0] += 2_000
    assert mem.get_context(token_budget=100).text == "kept: here to stay"

    async def run() -> str:
        amem = await sm.create_async_memory(clock=lambda: now[0])
        await amem.remember("brief", "gone soon", ttl=1_000)
        await amem.remember("kept", "here to stay")
        now[0] += 2_000
        return amem.get_context(token_budget=100).text  # a read of the shared state: no await (AIO-1)

    assert asyncio.run(run()) == "kept: here to stay"
