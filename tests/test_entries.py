"""Entries: keys, data, copies, overwrite semantics, reads and order (ENT-*, TIME-*)."""

from __future__ import annotations

import math

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from support import T0, FakeClock


@pytest.mark.parametrize("key", [None, 1, b"k", ("k",)])
def test_ent_1_non_str_key_is_a_type_error(mem, key):
    """ENT-1: a key that is not a str raises TypeError and stores nothing."""
    with pytest.raises(TypeError):
        mem.remember(key, "x")
    assert mem.stats()["stored"] == 0


def test_ent_1_empty_key_is_a_value_error(mem):
    """ENT-1: the empty key raises ValueError and stores nothing."""
    with pytest.raises(ValueError):
        mem.remember("", "x")
    assert mem.stats()["stored"] == 0


@pytest.mark.parametrize(
    "data",
    [
        math.nan,
        math.inf,
        [1, -math.inf],
        {1: "int key"},
        {"s": {1, 2}},
        object(),
        b"bytes",
        "\ud800",
        {"\ud800": 1},
        {"k": "\ud800"},
        ["ok", "\ud800"],
    ],
)
def test_ent_2_data_must_be_strict_json(mem, data):
    """ENT-2: NaN, infinity, sets, non-str keys, bytes and lone surrogates (a key, a value, an item) raise TypeError."""
    with pytest.raises(TypeError):
        mem.remember("k", data)
    assert not mem.has("k")


def test_ent_2_circular_data_is_rejected(mem):
    """ENT-2: a structure that contains itself raises TypeError."""
    loop: list = []
    loop.append(loop)
    with pytest.raises(TypeError):
        mem.remember("k", loop)


def test_ent_2_shared_sub_objects_are_not_circular(mem):
    """ENT-2: the same list twice, or one dict under two keys, is accepted; only a container inside itself is refused."""
    x = [1, {"deep": True}]
    both = {"first": x, "second": x}
    mem.remember("twice", [x, x])
    mem.remember("both", both)
    mem.remember("deeper", [[x], {"x": [x, x]}])
    assert mem.get("twice") == [x, x] and mem.get("both") == both
    assert mem.get("deeper") == [[x], {"x": [x, x]}]
    stored = mem.state.entries["twice"].data
    assert stored[0] is not stored[1]  # copied as two values: a change to one is not a change to the other


def test_ent_2_nested_json_is_accepted(mem):
    """ENT-2: nested dicts, lists, bools, None, ints and floats are stored as given."""
    data = {"a": [1, 2.5, True, None, {"b": "c"}], "big": 2**70}
    mem.remember("k", data)
    assert mem.get("k") == data


def test_ent_3_copy_in_and_copy_out(mem):
    """ENT-3: mutating what was passed in or got out never changes the memory."""
    data = {"items": [1, 2]}
    entry = mem.remember("cart", data)
    data["items"].append(3)
    got = mem.get("cart")
    got["items"].append(4)
    entry.data["items"].append(5)
    mem.get_recent()[0].data["items"].append(6)
    assert mem.get("cart") == {"items": [1, 2]}


def test_ent_3_tuple_comes_back_as_list(mem):
    """ENT-3: a tuple is stored as JSON, so it comes back as a list."""
    mem.remember("k", (1, (2, 3)))
    assert mem.get("k") == [1, [2, 3]]


def test_ent_4_new_key_defaults(mem, clock):
    """ENT-4: a new key gets created_at = updated_at = now and importance 0.5 by default."""
    entry = mem.remember("k", "v")
    assert (entry.created_at, entry.updated_at, entry.importance, entry.expires_at) == (T0, T0, 0.5, None)


def test_ent_5_overwrite_keeps_created_and_importance(mem, clock):
    """ENT-5, NUM-4: an overwrite keeps created_at and the old importance, refreshes updated_at."""
    mem.remember("k", "v1", importance=0.9)
    clock.advance(1000)
    entry = mem.remember("k", "v2")
    assert (entry.created_at, entry.updated_at, entry.importance, entry.data) == (T0, T0 + 1000, 0.9, "v2")


def test_ent_5_overwrite_with_new_importance(mem, clock):
    """ENT-5: an overwrite with a valid importance takes it."""
    mem.remember("k", "v1", importance=0.9)
    assert mem.remember("k", "v2", importance=0.2).importance == 0.2


def test_num_4_invalid_importance_on_overwrite_keeps_old(mem):
    """NUM-4: an invalid importance on an existing key keeps the old one, not the default."""
    mem.remember("k", "v", importance=0.9)
    assert mem.remember("k", "v", importance=1.5).importance == 0.9


def test_ent_6_every_remember_gets_a_larger_seq(mem):
    """ENT-6: inserts and overwrites in one millisecond still order: each gets a new seq."""
    a = mem.remember("a", 1)
    b = mem.remember("b", 2)
    a2 = mem.remember("a", 3)
    assert a.seq < b.seq < a2.seq
    assert [e.key for e in mem.get_recent()] == ["a", "b"]


def test_ent_7_get_default_and_has(mem):
    """ENT-7: get returns the default for a missing key; has tells whether a live entry exists."""
    assert mem.get("nope") is None
    assert mem.get("nope", "fallback") == "fallback"
    assert not mem.has("nope")
    mem.remember("k", 0)
    assert mem.get("k", "fallback") == 0
    assert mem.has("k")


def test_ent_8_forget(mem):
    """ENT-8: forget removes a live entry and returns True; a missing key returns False."""
    mem.remember("k", "v")
    assert mem.forget("k") is True
    assert not mem.has("k")
    assert mem.forget("k") is False


def test_ent_9_clear_entries_only(mem):
    """ENT-9: clear removes entries, leaves cache and working memory, and counts nothing."""
    mem.remember("k", "v")
    mem.cache.put("c", 1)
    mem.working.set({"task": "refund"})
    assert mem.clear() is None
    assert mem.size() == 0
    assert mem.cache.get("c") == 1
    assert mem.working.get() == {"task": "refund"}
    assert mem.stats()["expired"] == mem.stats()["evicted"] == 0


def test_ent_10_get_recent_newest_first(mem, clock):
    """ENT-10: get_recent(n) is newest first and at most n; the default n is 10."""
    for i in range(12):
        mem.remember(f"k{i}", i)
        clock.advance(1)
    assert [e.key for e in mem.get_recent(3)] == ["k11", "k10", "k9"]
    assert len(mem.get_recent()) == 10
    assert mem.get_recent(0) == ()


def test_ent_11_size_len_and_contains(mem):
    """ENT-11: size, len and `in` agree on live entries."""
    mem.remember("a", 1)
    mem.remember("b", 2, ttl=1)
    assert mem.size() == len(mem) == 2
    assert "a" in mem and "zzz" not in mem and 3 not in mem


def test_ent_12_remember_returns_entry_even_when_evicted(make):
    """ENT-12, CMP-4: remember returns the stored entry even when that call evicted it."""
    seen = []
    mem = make(limit=1, on_evict=seen.append)
    mem.remember("important", "x", importance=0.9)
    entry = mem.remember("trivial", "y", importance=0.1)
    assert isinstance(entry, sm.Entry) and entry.key == "trivial" and entry.data == "y"
    assert not mem.has("trivial")
    assert [e.key for e in seen[0].evicted] == ["trivial"]


def test_ent_12_core_remember_returns_state_and_compaction():
    """ENT-12: the core remember returns (state, Compaction) and leaves the old state alone."""
    state = sm.MemoryState()
    new, dropped = core.remember(state, "k", "v", now=0)
    assert isinstance(new, sm.MemoryState) and dropped == sm.Compaction()
    assert core.size(state, now=0) == 0 and core.size(new, now=0) == 1


def test_time_1_clock_is_read_once_per_operation(make):
    """TIME-1: every wrapper operation reads the clock exactly once."""
    clock = FakeClock()
    mem = make(clock=clock, limit=2)
    operations = [
        lambda: mem.remember("a", 1, ttl=5),
        lambda: mem.remember("b", 2),
        lambda: mem.remember("c", 3),  # triggers a compaction inside the same call
        lambda: mem.get("a"),
        lambda: mem.has("a"),
        lambda: mem.size(),
        lambda: mem.get_recent(),
        lambda: mem.recall("a"),
        lambda: mem.get_context(token_budget=10),
        lambda: mem.stats(),
        lambda: mem.compact(),
        lambda: mem.forget("b"),
        lambda: mem.cache.put("x", 1),
        lambda: mem.cache.get("x"),
        lambda: mem.working.set({"a": 1}),
        lambda: mem.working.get(),
        lambda: mem.load(),
    ]
    for operation in operations:
        before = clock.reads
        operation()
        assert clock.reads == before + 1


def test_time_1_default_clock_is_wall_milliseconds():
    """TIME-1: the default clock gives whole milliseconds since the epoch."""
    import time

    from sentinel_memory.memory import wall_clock

    now = wall_clock()
    assert isinstance(now, int) and abs(now - time.time() * 1000) < 5_000


@pytest.mark.parametrize("now", [None, "0", True, math.nan, math.inf])
def test_time_2_core_rejects_a_bad_now(now):
    """TIME-2: the core raises TypeError for a now that is not a finite number."""
    with pytest.raises(TypeError):
        core.remember(sm.MemoryState(), "k", "v", now=now)


def test_time_2_fractional_times_are_allowed():
    """TIME-2: fractional now and ttl work as JavaScript numbers would."""
    state, _ = core.remember(sm.MemoryState(), "k", "v", now=0.5, ttl=1.25)
    assert core.has(state, "k", now=1.74)
    assert not core.has(state, "k", now=1.75)


def test_time_2_clock_returning_garbage_raises(make):
    """TIME-2: a wrapper whose clock returns a non-number raises TypeError and changes nothing."""
    mem = make(clock=lambda: "soon", load=False)
    with pytest.raises(TypeError):
        mem.remember("k", "v")
    assert mem.state.entries == {}


# -- ENT-15: a read-only Mapping; ENT-16: chat turns -------------------------------------------------


def test_ent_15_a_memory_is_a_read_only_mapping_of_live_keys(mem, clock):
    """ENT-15: mem[k], list(mem), keys, values and items list live entries oldest first; a missing key is a KeyError."""
    from collections.abc import Mapping

    mem.remember("user:name", "Jakub")
    clock.advance(1)
    mem.remember("session:cart", ["2 items"], ttl=10)
    assert isinstance(mem, Mapping)
    assert mem["user:name"] == "Jakub"
    assert list(mem) == list(mem.keys()) == ["user:name", "session:cart"]
    assert dict(mem.items()) == {"user:name": "Jakub", "session:cart": ["2 items"]}
    mem["session:cart"].append("mutated")
    assert mem["session:cart"] == ["2 items"]  # a copy (ENT-3)
    clock.advance(10)
    assert list(mem.values()) == ["Jakub"]
    with pytest.raises(KeyError):
        mem["session:cart"]
    with pytest.raises(TypeError):
        mem["user:name"] = "x"  # read-only


def test_ent_15_get_entry_and_to_dict(mem, clock):
    """ENT-15: get_entry returns a copy of the live Entry; to_dict is the article's JSON without seq."""
    mem.remember("k", {"a": 1}, importance=0.7, ttl=1000)
    entry = mem.get_entry("k")
    assert entry.to_dict() == {
        "key": "k",
        "data": {"a": 1},
        "importance": 0.7,
        "createdAt": clock.now,
        "updatedAt": clock.now,
        "expiresAt": clock.now + 1000,
    }
    assert mem.get_entry("missing") is None and mem.get_entry("missing", "none") == "none"


def test_ent_15_repr_shows_the_live_size(mem, clock):
    """ENT-15: after the only entry expired, repr says size=0, not the stored count."""
    mem.remember("k", "v", ttl=5)
    assert "size=1" in repr(mem)
    clock.advance(5)
    assert "size=0" in repr(mem)


def test_ent_15_identity_not_content_equality(make):
    """ENT-15: two memories with the same entries are different objects, and both can be dict keys."""
    a, b = make(), make()
    assert a != b and len({a: 1, b: 2}) == 2


def test_ent_16_turns_need_no_keys_and_survive_a_restart(tmp_path, clock):
    """ENT-16: add_turn numbers chat:1, chat:2; a new process loading the file continues at chat:3."""
    path = tmp_path / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=clock)
    assert mem.add_turn("user", "I'm allergic to peanuts").key == "chat:1"
    assert mem.add_turn("assistant", "Noted, no peanuts.").data == {
        "role": "assistant",
        "content": "Noted, no peanuts.",
    }
    restarted = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=clock)
    assert restarted.add_turn("user", "What do you recommend?").key == "chat:3"


def test_ent_16_shared_memories_never_collide(tmp_path, clock):
    """ENT-16, MW-6: two shared memories on one file take turns chat:1..4 without reusing a number."""
    path = tmp_path / "memory.json"
    first = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=clock)
    second = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=clock)
    keys = [m.add_turn("user", str(i)).key for i, m in enumerate([first, second, first, second])]
    assert keys == ["chat:1", "chat:2", "chat:3", "chat:4"]
    assert len(sm.create_memory(store=sm.JsonFileStore(path), clock=clock)) == 4


@pytest.mark.parametrize(
    ("role", "text", "error"), [(None, "x", TypeError), ("user", 5, TypeError), ("", "x", ValueError)]
)
def test_ent_16_role_and_text_are_strings(mem, role, text, error):
    """ENT-16: a role or text that is not a str is a TypeError, an empty role a ValueError; nothing is stored."""
    with pytest.raises(error):
        mem.add_turn(role, text)
    assert len(mem) == 0 and mem.add_turn("user", "ok").key == "chat:1"
