"""The two short-lived memories: L0 cache and L1 working memory (L0-*, L1-*)."""

from __future__ import annotations

import math

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from support import HOUR, MINUTE, RecordingStore


def test_l0_1_cache_ttl_and_default(make, clock):
    """L0-1: an explicit ttl and the 5-minute default both expire at the exact millisecond."""
    mem = make()
    mem.cache.put("tool", {"rows": 3}, ttl=1000)
    mem.cache.put("other", "x")
    clock.advance(999)
    assert mem.cache.get("tool") == {"rows": 3}
    clock.advance(1)
    assert mem.cache.get("tool") is None and mem.cache.get("tool", "gone") == "gone"
    clock.advance(5 * MINUTE - 1000 - 1)
    assert mem.cache.get("other") == "x"
    clock.advance(1)
    assert mem.cache.get("other") is None


@pytest.mark.parametrize("ttl", [0, -1, "60", math.nan, True])
def test_l0_1_invalid_ttl_gives_cache_ttl(make, clock, ttl):
    """L0-1, NUM-1: a cache ttl that is not > 0 gives cache_ttl."""
    mem = make(cache_ttl=50)
    mem.cache.put("k", 1, ttl=ttl)
    clock.advance(49)
    assert mem.cache.get("k") == 1
    clock.advance(1)
    assert mem.cache.get("k") is None


def test_l0_2_delete_clear_and_stats(mem, clock):
    """L0-2: delete says whether a live item went; clear empties; stats counts live items."""
    mem.cache.put("a", 1)
    mem.cache.put("b", 2, ttl=5)
    assert mem.stats()["cache"] == 2
    clock.advance(5)
    assert mem.stats()["cache"] == 1
    assert mem.cache.delete("b") is False
    assert mem.cache.delete("a") is True
    assert mem.cache.delete("a") is False
    mem.cache.put("c", 3)
    mem.cache.clear()
    assert mem.stats()["cache"] == 0


def test_l0_2_cache_is_never_persisted_nor_autosaved(make):
    """L0-2: cache changes do not autosave, and a save holds no cache."""
    store = RecordingStore()
    saves = store.saves
    mem = make(store=store, autosave=True)
    mem.cache.put("k", 1)
    mem.cache.delete("k")
    mem.cache.clear()
    assert saves == []
    mem.save()
    assert "cache" not in saves[0] and set(saves[0]) == {"version", "generation", "entries", "working"}


def test_l0_3_cache_keys_and_values_follow_entry_rules(mem):
    """L0-3: bad keys and non-JSON values raise; values are copied both ways."""
    with pytest.raises(TypeError):
        mem.cache.put(1, "x")
    with pytest.raises(ValueError):
        mem.cache.put("", "x")
    with pytest.raises(TypeError):
        mem.cache.put("k", {1, 2})
    value = {"a": [1]}
    mem.cache.put("k", value)
    value["a"].append(2)
    mem.cache.get("k")["a"].append(3)
    assert mem.cache.get("k") == {"a": [1]}


def test_l0_4_put_drops_expired_items(mem, clock):
    """L0-4: a put removes the items that have already expired."""
    mem.cache.put("old", 1, ttl=5)
    clock.advance(5)
    mem.cache.put("new", 2)
    assert set(mem.state.cache) == {"new"}


def test_l1_1_set_shallow_merges(mem):
    """L1-1: set shallow-merges a dict; get returns a copy."""
    mem.working.set({"task": "refund", "step": 1, "meta": {"a": 1}})
    mem.working.set({"step": 2, "meta": {"b": 2}})
    got = mem.working.get()
    assert got == {"task": "refund", "step": 2, "meta": {"b": 2}}
    got["task"] = "changed"
    assert mem.working.get()["task"] == "refund"


def test_l1_1_nested_working_data_is_copied_both_ways(mem):
    """L1-1, ENT-3: mutating a nested value that was set, or that get() returned, never changes the working memory."""
    patch = {"order": {"items": ["tea"], "address": {"city": "Brno"}}}
    mem.working.set(patch)
    patch["order"]["items"].append("set-side change")
    got = mem.working.get()
    got["order"]["items"].append("get-side change")
    got["order"]["address"]["city"] = "changed"
    assert mem.working.get() == {"order": {"items": ["tea"], "address": {"city": "Brno"}}}
    assert core.working_get(mem.state, now=mem.state.working.updated_at) == mem.working.get()


@pytest.mark.parametrize("patch", [None, [("a", 1)], "task", {"bad": math.nan}, {1: "x"}])
def test_l1_1_bad_patch_is_a_type_error(mem, patch):
    """L1-1: a patch that is not a dict of JSON raises TypeError and changes nothing."""
    mem.working.set({"task": "refund"})
    with pytest.raises(TypeError):
        mem.working.set(patch)
    assert mem.working.get() == {"task": "refund"}


def test_l1_2_idle_reset(make, clock):
    """L1-2: after working_ttl without a set, get returns {} and set merges into {}."""
    mem = make()
    mem.working.set({"task": "refund", "step": 2})
    clock.advance(HOUR - 1)
    assert mem.working.get() == {"task": "refund", "step": 2}
    clock.advance(1)
    assert mem.working.get() == {}
    mem.working.set({"step": 1})
    assert mem.working.get() == {"step": 1}


def test_l1_2_custom_working_ttl():
    """L1-2: working_ttl sets the idle time."""
    state = core.working_set(sm.MemoryState(config=core.make_config(working_ttl=10)), {"a": 1}, now=0)
    assert core.working_get(state, now=9) == {"a": 1}
    assert core.working_get(state, now=10) == {}


def test_l1_3_clear(mem):
    """L1-3: clear empties the working memory and resets updated_at to None."""
    mem.working.set({"a": 1})
    mem.working.clear()
    assert mem.working.get() == {}
    assert mem.state.working.updated_at is None


def test_l1_4_working_memory_is_persisted(make, clock):
    """L1-4: the working memory survives save and load, with its timestamp."""
    store = sm.MemoryStore()
    mem = make(store=store)
    mem.working.set({"task": "refund"})
    mem.save()
    again = make(store=store)
    assert again.working.get() == {"task": "refund"}
    assert again.state.working.updated_at == clock.now
