"""Expiry: exact-millisecond visibility on every read path, and what removes expired entries (EXP-*)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from support import T0


def read_paths(mem, key):
    """What every read path says about ``key`` right now."""
    return {
        "get": mem.get(key) is not None,
        "has": mem.has(key),
        "size": mem.size() == 1,
        "get_recent": any(e.key == key for e in mem.get_recent()),
        "recall": any(h.entry.key == key for h in mem.recall("cart")),
        "context": any(e.key == key for e in mem.get_context(token_budget=1000).entries),
    }


def test_exp_1_ttl_sets_expires_at(mem):
    """EXP-1: expires_at is now + ttl."""
    assert mem.remember("k", "v", ttl=900_000).expires_at == T0 + 900_000


@pytest.mark.parametrize("ttl", [None, 0, -5, "60000", True, float("nan"), float("inf")])
def test_exp_1_missing_zero_or_invalid_ttl_means_no_expiry(mem, ttl):
    """EXP-1, NUM-1: ttl absent, 0 or invalid means no expiry."""
    assert mem.remember("k", "v", ttl=ttl).expires_at is None


def test_exp_3_invisible_on_every_read_path_at_the_exact_ms(mem, clock):
    """EXP-2, EXP-3: visible on every read path at expires_at - 1, on none at expires_at."""
    mem.remember("session:cart", "2 items in the cart", ttl=15 * 60_000)
    clock.advance(15 * 60_000 - 1)
    assert all(read_paths(mem, "session:cart").values())
    clock.advance(1)
    assert not any(read_paths(mem, "session:cart").values())


def test_exp_4_expired_stays_stored_until_compact(mem, clock):
    """EXP-4: an expired entry counts in stored, not in size, until compact reports it."""
    mem.remember("k", "v", ttl=10)
    clock.advance(10)
    assert (mem.stats()["size"], mem.stats()["stored"]) == (0, 1)
    dropped = mem.compact()
    assert [e.key for e in dropped.expired] == ["k"] and dropped.evicted == ()
    assert (mem.stats()["stored"], mem.stats()["expired"]) == (0, 1)


def test_exp_4_clear_removes_expired(mem, clock):
    """EXP-4, ENT-9: clear removes expired entries physically."""
    mem.remember("k", "v", ttl=10)
    clock.advance(10)
    mem.clear()
    assert mem.stats()["stored"] == 0


def test_exp_4_remember_over_expired_key_is_an_insert(make, clock):
    """EXP-4: remembering an expired key is an insert and reports the old entry as expired."""
    seen = []
    mem = make(on_evict=seen.append)
    mem.remember("k", "old", importance=0.9, ttl=10)
    clock.advance(10)
    entry = mem.remember("k", "new")
    assert (entry.created_at, entry.importance) == (T0 + 10, 0.5)
    assert [(e.key, e.data) for e in seen[0].expired] == [("k", "old")]
    assert mem.stats()["expired"] == 1 and mem.stats()["compactions"] == 0


def test_exp_5_forget_expired_returns_false(mem, clock):
    """EXP-5: forgetting an expired key returns False and leaves it stored."""
    mem.remember("k", "v", ttl=10)
    clock.advance(10)
    assert mem.forget("k") is False
    assert mem.stats()["stored"] == 1


def test_exp_6_re_remember_without_ttl_removes_expiry(mem, clock):
    """EXP-6: re-remembering a live key without ttl removes its expiry."""
    mem.remember("k", "v", ttl=10)
    assert mem.remember("k", "v2").expires_at is None
    clock.advance(10_000)
    assert mem.get("k") == "v2"


def test_exp_2_core_is_expired_boundary():
    """EXP-2: the core's visibility flips exactly at expires_at, for fractional times too."""
    state, _ = sm.core.remember(sm.MemoryState(), "k", 1, now=100, ttl=50)
    assert sm.core.has(state, "k", now=149.999)
    assert not sm.core.has(state, "k", now=150)


def test_exp_2_a_turn_leaves_the_request_at_the_very_moment_it_expires():
    """EXP-2, MSG-2: a turn is in get_messages' request until its expires_at, and out from that moment on."""
    for cut in (None, "stable"):
        state = sm.MemoryState()
        state, _, _ = sm.core.add_messages(state, [{"role": "user", "content": "Hi"}], now=100)
        state, _, _ = sm.core.add_messages(state, [{"role": "assistant", "content": "Soon gone"}], now=100, ttl=50)
        state, _, _ = sm.core.add_messages(state, [{"role": "user", "content": "Still here?"}], now=100)
        before = sm.core.messages(state, now=149.999, token_budget=1_000, cut=cut).messages
        at = sm.core.messages(state, now=150, token_budget=1_000, cut=cut).messages
        assert [m["content"] for m in before] == ["Hi", "Soon gone", "Still here?"]
        assert [m["content"] for m in at] == ["Hi", "Still here?"]
