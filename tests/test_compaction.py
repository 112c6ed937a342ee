"""Compaction: expired first, then lowest retention; payloads, callbacks and counters (CMP-*, RET-*)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core.retention import freshness, retention
from support import DAY, HOUR


def test_cmp_1_least_important_goes_not_oldest(make, clock):
    """CMP-1: over the limit, the least important entry goes, not the oldest."""
    mem = make(limit=2)
    mem.remember("old-but-vital", "x", importance=1.0)
    clock.advance(HOUR)
    mem.remember("chatter", "y", importance=0.1)
    clock.advance(HOUR)
    mem.remember("new", "z", importance=0.5)
    assert {e.key for e in mem.get_recent()} == {"old-but-vital", "new"}


def test_cmp_1_equal_importance_evicts_older(make, clock):
    """CMP-1: with equal importance the older entry goes (freshness decides)."""
    mem = make(limit=2)
    for key in ("a", "b", "c"):
        mem.remember(key, key, importance=0.3)
        clock.advance(1000)
    assert [e.key for e in mem.get_recent()] == ["c", "b"]


def test_cmp_1_exact_tie_evicts_older_by_seq(make):
    """CMP-1, ENT-6: an exact retention tie in one millisecond evicts the lower seq."""
    mem = make(limit=2)
    for key in ("a", "b", "c"):
        mem.remember(key, key, importance=0.3)
    assert [e.key for e in mem.get_recent()] == ["c", "b"]


def test_cmp_1_expired_go_before_live(make, clock):
    """CMP-1: expired entries are dropped before any live one is evicted."""
    mem = make(limit=2)
    mem.remember("temp", "t", importance=1.0, ttl=5)
    mem.remember("keep", "k", importance=0.1)
    clock.advance(5)
    mem.remember("new", "n", importance=0.1)
    assert {e.key for e in mem.get_recent()} == {"keep", "new"}
    assert (mem.stats()["expired"], mem.stats()["evicted"]) == (1, 0)


def test_cmp_2_compact_payload(make, clock):
    """CMP-2: compact returns copies, expired oldest first and evicted lowest retention first."""
    mem = make(limit=10)
    mem.remember("e1", {"n": 1}, ttl=5)
    mem.remember("e2", {"n": 2}, ttl=5)
    clock.advance(5)
    dropped = mem.compact()
    assert [e.key for e in dropped.expired] == ["e1", "e2"] and dropped.evicted == ()
    big = sm.MemoryState()
    for key, importance in (("x", 0.3), ("y", 0.2), ("z", 0.9), ("w", 0.1)):
        big, _ = core.remember(big, key, {"key": key}, now=clock.now, importance=importance)
    small = sm.MemoryState(config=sm.Config(limit=1), entries=big.entries)
    _, dropped = core.compact(small, now=clock.now)
    assert [e.key for e in dropped.evicted] == ["w", "y", "x"]
    assert all(e.data is not big.entries[e.key].data for e in dropped.evicted)  # copies of the data


def test_cmp_3_on_evict_receives_the_compaction(make):
    """CMP-3: on_evict receives the automatic compaction's Compaction object."""
    seen = []
    mem = make(limit=1, on_evict=seen.append)
    mem.remember("a", 1, importance=0.2)
    mem.remember("b", 2, importance=0.9)
    assert len(seen) == 1 and isinstance(seen[0], sm.Compaction)
    assert [e.key for e in seen[0].evicted] == ["a"] and seen[0].expired == ()


def test_cmp_3_no_callback_when_nothing_dropped(make, clock):
    """CMP-3: on_evict is not called when nothing is dropped, nor for an explicit compact()."""
    seen = []
    mem = make(limit=5, on_evict=seen.append)
    mem.remember("a", 1, ttl=1)
    clock.advance(1)
    assert mem.compact().expired  # explicit: returned, not called back
    mem.remember("b", 2)
    assert seen == []


def test_cmp_3_compaction_runs_when_stored_exceeds_limit(make, clock):
    """CMP-3: a compaction runs when the stored count exceeds limit, even if the live count fits."""
    mem = make(limit=1)
    mem.remember("a", 1, ttl=1)
    clock.advance(1)
    mem.remember("b", 2)
    assert mem.stats() == {
        "size": 1,
        "stored": 1,
        "limit": 1,
        "cache": 0,
        "compactions": 1,
        "expired": 1,
        "evicted": 0,
        "ranking": "words",
    }


def test_cmp_4_new_low_importance_entry_evicts_itself(make):
    """CMP-4: a 0.1 entry added to a full store of 0.9s is the one that goes."""
    mem = make(limit=3)
    for key in ("a", "b", "c"):
        mem.remember(key, key, importance=0.9)
    mem.remember("chatter", "hi", importance=0.1)
    assert not mem.has("chatter") and mem.size() == 3


def test_cmp_5_counters_add_up(make, clock):
    """CMP-5: compactions counts runs, also empty ones; expired and evicted count entries once each."""
    mem = make(limit=2)
    mem.compact()
    mem.remember("a", 1, ttl=1)
    mem.remember("b", 2)
    clock.advance(1)
    mem.remember("c", 3)  # stored 3 > 2: drops a (expired)
    mem.remember("d", 4, importance=0.1)  # evicts d itself
    stats = mem.stats()
    assert (stats["compactions"], stats["expired"], stats["evicted"]) == (3, 1, 1)


def test_cmp_6_stats_keys_in_order(mem):
    """CMP-6: stats has exactly these keys in this order, the ranking's name last (BM-10)."""
    assert list(mem.stats()) == ["size", "stored", "limit", "cache", "compactions", "expired", "evicted", "ranking"]


def test_ret_1_freshness_formula():
    """RET-1: freshness is 1 when new, 0.5 at half the window, 0 past it, and 1 for a future update."""
    entry = sm.Entry("k", "v", 0.5, 0, 1000, None, 0)
    assert freshness(entry, 1000, DAY) == 1.0
    assert freshness(entry, 1000 + DAY / 2, DAY) == 0.5
    assert freshness(entry, 1000 + 2 * DAY, DAY) == 0.0
    assert freshness(entry, 0, DAY) == 1.0


def test_ret_2_retention_formula_bit_for_bit():
    """RET-2: retention is importance + 0.1 * freshness evaluated in that order."""
    entry = sm.Entry("k", "v", 0.7, 0, 0, None, 0)
    now, window = 12_345_678, 86_400_000
    expected = 0.7 + 0.1 * max(0, 1 - (now - 0) / window)
    assert retention(entry, now, window) == expected


def test_ret_1_recency_window_option(make, clock):
    """RET-1: a shorter recency_window makes freshness decay faster."""
    mem = make(limit=1, recency_window=1000)
    mem.remember("old", "x", importance=0.55)
    clock.advance(1000)  # old's freshness is now 0
    mem.remember("new", "y", importance=0.5)  # 0.6 beats 0.55
    assert [e.key for e in mem.get_recent()] == ["new"]


@pytest.mark.parametrize("limit", [0, -1, 2.5, "5", True, float("nan")])
def test_num_3_invalid_limit_uses_default(make, limit):
    """NUM-3: an invalid limit falls back to 1000."""
    assert make(limit=limit).stats()["limit"] == 1000


def test_cmp_2_expired_oldest_first_after_the_clock_went_back(make, clock):
    """CMP-2: after a clock went back, compact reports the expired entries by age, not in the order they were stored."""
    mem = make(limit=10)
    mem.remember("stored-first", "a", ttl=HOUR)
    clock.advance(-DAY)  # the clock goes back: the next entry is older than the first
    mem.remember("stored-second", "b", ttl=HOUR)
    mem.remember("stored-third", "c", ttl=2 * HOUR)
    clock.advance(DAY + 2 * HOUR)
    dropped = mem.compact()
    assert [e.key for e in dropped.expired] == ["stored-second", "stored-third", "stored-first"]
    assert dropped.evicted == ()
