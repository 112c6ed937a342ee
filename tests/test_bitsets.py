"""REC-7's bit counts at their boundaries: the sets' own limits, when a list keeps its set, when the bits are used."""

from __future__ import annotations

from unittest import mock

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import bitsets, lexical
from sentinel_memory.core import search as search_module
from sentinel_memory.core.persistent import HashTable


def test_rec_7_an_empty_set_is_zero_and_a_negative_member_is_refused():
    """REC-7: bits_of([]) is 0 with no members; a negative member or a negative set raises ValueError."""
    assert bitsets.bits_of([]) == 0 and bitsets.members(0) == []
    assert bitsets.bits_of([0]) == 1 and bitsets.bits_of([7, 8, 7]) == 0b110000000
    with pytest.raises(ValueError, match=r"^a bit set holds ints >= 0 only$"):
        bitsets.bits_of([3, -1])
    with pytest.raises(ValueError, match=r"^a bit set is an int >= 0$"):
        bitsets.members(-2)


def test_rec_7_a_count_the_planes_cannot_hold_is_nobody():
    """REC-7: three sets make two planes; count 3 is found, count 4 (past the planes) is empty, count 0 is refused."""
    planes = bitsets.planes_of([0b111, 0b110, 0b100])
    assert len(planes) == 2
    assert [bitsets.members(bitsets.with_count(planes, c)) for c in (1, 2, 3, 4)] == [[0], [1], [2], []]
    with pytest.raises(ValueError, match=r"^with_count finds counts of 1 or more$"):
        bitsets.with_count(planes, 0)
    assert bitsets.planes_of([]) == [] and bitsets.with_count([], 1) == 0


def test_rec_7_a_change_of_sixty_four_keys_carries_the_set_and_one_more_drops_it():
    """REC-7: HashTable.BITS_CARRIED = 64 keys changed keep the kept set up to date; 65 leave it to be made afresh."""
    table = HashTable({k: k for k in range(10)})
    table.bits()
    carried = table.changed(range(4), [(k, k) for k in range(100, 160)])
    assert carried._bits == bitsets.bits_of([*range(4, 10), *range(100, 160)])
    dropped = table.changed(range(5), [(k, k) for k in range(100, 160)])
    assert dropped._bits is None and dropped.bits() == bitsets.bits_of([*range(5, 10), *range(100, 160)])
    assert HashTable({1: 1}).changed((), [(2, 2)])._bits is None  # never asked: nothing to carry


def memory_of(n: int, text: str = "the tea") -> sm.MemoryState:
    state = sm.MemoryState(config=core.make_config(limit=10 * n))
    for i in range(n):
        state, _ = core.remember(state, f"k{i}", text if i % 2 else "the", now=i, importance=0.5)
    return state


@pytest.mark.parametrize(("churn", "dense"), [(511, True), (512, False)])
def test_rec_7_bits_are_used_while_every_seq_is_below_eight_times_the_entries(churn, dense):
    """REC-7: with one entry changed again and again, a span of 512 (8 x 64) is counted in bits, 513 one by one."""
    state = sm.MemoryState()
    for i in range(churn + 1):  # one key: each remember gives it the next seq
        state, _ = core.remember(state, "k", "the tea", now=i)
    assert state.entries.last_seq() == churn
    assert search_module._bit_span(state) == (churn + 1 if dense else None)


@pytest.mark.parametrize(("postings", "bits"), [(2_048, False), (2_049, True)])
def test_rec_7_the_postings_are_counted_in_bits_only_above_their_threshold(postings, bits):
    """REC-7: up to _BIT_POSTINGS postings MaxScore counts them; one more and the bit counts do; the hits are the same."""
    state = memory_of(postings - postings // 3)  # every entry holds "the", every other one "tea" too
    query_postings = sum(len(state.index.holders(w)) for w in ("the", "tea"))
    calls = []
    real = lexical._counted_in_bits

    def spy(*args):
        calls.append(1)
        return real(*args)

    shift = postings - query_postings
    with (
        mock.patch.object(lexical, "_counted_in_bits", spy),
        mock.patch.object(lexical, "_BIT_POSTINGS", 2_048 - shift),
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: True),
    ):
        hits = core.recall(state, "the tea", now=10**6, limit=1_000)
    with mock.patch.object(lexical, "_BIT_POSTINGS", 10**9):
        expected = core.recall(state, "the tea", now=10**6, limit=1_000)
    assert len(calls) == bits
    assert [(h.score, h.entry.key) for h in hits] == [(h.score, h.entry.key) for h in expected]


@pytest.mark.parametrize(("entries", "kept"), [(64, True), (65, False)])
def test_rec_7_a_list_keeps_its_set_when_one_in_thirty_two_of_the_span_holds_it(entries, kept):
    """REC-7: a list of 2 entries keeps its bit set in a span of 64 (2 x 32 = 64); in a span of 65 it is laid out per query."""
    state = sm.MemoryState()
    for i in range(entries):
        state, _ = core.remember(state, f"k{i}", "the rare" if i >= entries - 2 else "the", now=i)
    with mock.patch.object(lexical, "_BIT_POSTINGS", 0):
        hits = core.recall(state, "the rare", now=100, limit=10)  # more than hold both words: the bits count
    assert [h.entry.key for h in hits[:2]] == [f"k{entries - 1}", f"k{entries - 2}"]
    assert search_module._bit_span(state) == entries
    assert (state.index.holders("rare")._bits is not None) == kept
    assert state.index.holders("the")._bits is not None  # every entry holds it


W = 86_400_000  # the default recency window


def recall_in_bits(state: sm.MemoryState, query: str, now: int, limit: int) -> tuple[list[str], list[int]]:
    """recall counted in bits, and the moments its groups were told to leave out entries up to."""
    moments: list[int] = []
    real = search_module._first_after

    def spy(index, moment):
        moments.append(moment)
        return real(index, moment)

    with (
        mock.patch.object(lexical, "_BIT_POSTINGS", 0),
        mock.patch.object(search_module, "_by_holders", lambda stored, limit: True),
        mock.patch.object(search_module, "_first_after", spy),
    ):
        hits = core.recall(state, query, now=now, limit=limit)
    return [h.entry.key for h in hits], moments


def remembered(*items: tuple[str, str, float, int]) -> sm.MemoryState:
    state = sm.MemoryState()
    for key, text, importance, at in items:
        state, _ = core.remember(state, key, text, now=at, importance=importance)
    return state


def test_rec_7_a_group_leaves_out_what_is_too_old_and_keeps_the_first_entry_after():
    """REC-7: with a floor of 0.3, one word of four (0.25 + freshness) needs more than 7/8 of the window's bonus: older entries are not looked up."""
    now = 10 * W
    state = remembered(
        ("a", "w1 w2", 0.2, now - 2 * W),  # 2/4 * (0.5 + 0.1) = 0.3, stale: the floor
        ("c", "w4", 1, now - W // 8),  # at most 0.25 + 0.05 * 7/8 < 0.3: left out
        ("b", "w3", 1, now),  # 0.25 + 0.05 = 0.3: ties the floor and is newer
    )
    assert 2 / 4 * (0.5 + 0.2 / 2) == 1 / 4 * 1.0 + 0.05 * 1.0
    keys, moments = recall_in_bits(state, "w1 w2 w3 w4", now, 1)
    assert keys == ["b"]
    assert moments == [now - W // 8]  # the group of one word, told its last band cannot reach the floor
    assert search_module._first_after(state.index, now - W // 8) == state.entries.get("b").seq


def test_rec_7_a_group_whose_best_ties_the_floor_exactly_is_listed_whole():
    """REC-7: one word of ten at importance 1, stale, ties 2/10 at importance 0 exactly: the older entries are still listed, and the newer wins."""
    assert 2 / 10 * (0.5 + 0 / 2) == 1 / 10 * 1.0 + 0.05 * 0.0
    now = 10 * W
    state = remembered(
        ("old", "w1 w2", 0, now - 3 * W),
        ("newer", "w3", 1, now - 2 * W),
    )
    keys, moments = recall_in_bits(state, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", now, 1)
    assert keys == ["newer"] and moments == []


def test_rec_7_a_group_leaves_out_only_the_bands_that_cannot_reach_the_floor():
    """REC-7: with a floor of 0.27, one word of four needs a freshness over 0.4: an entry half a window old (0.275) is listed and wins."""
    now = 10 * W
    state = remembered(
        ("a", "w1 w2", 0.08, now - 2 * W),  # 2/4 * (0.5 + 0.04) = 0.27, stale: the floor
        ("b", "w3", 1, now - W // 2),  # 0.25 + 0.05 * 0.5 = 0.275
    )
    keys, moments = recall_in_bits(state, "w1 w2 w3 w4", now, 1)
    assert keys == ["b"]
    assert moments == [now - 5 * W // 8]  # the last band whose most freshness, 0.01875, leaves 0.25 below 0.27


def test_rec_7_a_group_too_old_to_matter_is_listed_empty():
    """REC-7: when no entry is newer than the moment a group may leave out up to, the group lists nothing (seq 0 holds no query word)."""
    now = 10 * W
    state = remembered(
        ("z", "unrelated", 0.5, 0),  # seq 0
        ("a", "w1 w2", 0.2, now - 2 * W),  # the floor, 0.3
        ("c", "w4", 1, now - W // 8 - 5),  # at most 0.25 + 0.05 * 7/8 < 0.3, and the newest entry
    )
    keys, moments = recall_in_bits(state, "w1 w2 w3 w4", now, 1)
    assert keys == ["a"] and moments == [now - W // 8]
    assert search_module._first_after(state.index, now - W // 8) is None


def test_rec_7_a_memory_too_churned_for_bits_is_searched_one_posting_at_a_time():
    """REC-7: with every seq above 8 x 64, the holders are counted one by one even when the bits would be asked for; the same hits."""
    state = sm.MemoryState()
    for i in range(520):  # one key rewritten: seqs run past 512 while one entry is stored
        state, _ = core.remember(state, "k0", "the tea", now=i)
    for i in range(1, 4):
        state, _ = core.remember(state, f"k{i}", "the" if i % 2 else "tea", now=1000 + i)
    assert search_module._bit_span(state) is None
    calls = []
    real = lexical._counted_in_bits
    with (
        mock.patch.object(lexical, "_in_bits", lambda postings: True),
        mock.patch.object(lexical, "_counted_in_bits", lambda *args: calls.append(1) or real(*args)),
    ):
        hits = core.recall(state, "the tea", now=2000, limit=10)
    assert calls == []
    assert [h.entry.key for h in hits] == ["k0", "k3", "k2", "k1"]


def test_rec_7_a_state_built_by_hand_with_negative_seqs_is_searched_one_posting_at_a_time():
    """REC-7, ENT-17: entries given negative seqs by hand hold no bit set; recall counts them one by one, as the naive ranking ranks."""
    import attrs

    made = memory_of(40)
    entries = [attrs.evolve(entry, seq=entry.seq - 20) for entry in made.entries.values()]  # seqs -20 .. 19
    state = sm.MemoryState(entries=entries, config=made.config)
    assert state.entries.first_seq() == -20 and search_module._bit_span(state) is None
    assert sm.MemoryState().entries.first_seq() == 0 and search_module._bit_span(made) == 40
    with mock.patch.object(lexical, "_in_bits", lambda postings: True):
        hits = core.recall(state, "the tea", now=10**6, limit=50)
    expected = lexical.ranked(
        frozenset({"the", "tea"}), state.index.live_by_age(10**6), 10**6, state.config.recency_window
    )
    assert [(h.score, h.entry.key) for h in hits] == [(v, e.key) for v, e in expected[:50]]
