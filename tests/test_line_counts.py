"""CTX-12: the line counts a counted fill keeps with the index, at their boundaries (``core/linecounts.py``)."""

from __future__ import annotations

from unittest import mock

import pytest

from sentinel_memory import core
from sentinel_memory.core import MemoryState, linecounts, prompt, window
from sentinel_memory.core.tokens import per_line


def chars(text: str) -> int:
    return len(text)


def reference(state: MemoryState, **args) -> core.Context:
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        return core.context(state, **args)


def filled(count: int = 6) -> MemoryState:
    state = MemoryState()
    for i in range(count):
        state, _ = core.remember(state, f"k{i}", "x" * (10 + i), now=i)
    return state


def test_ctx_12_the_first_ask_takes_a_pass_and_the_second_keeps_counts():
    """CTX-12: a line of indexes asked once keeps no counts; the second ask counts every stored line once."""
    state, counter = filled(), per_line(chars)
    assert state.index.line_counts(counter, 10) is None
    assert not state.index._line_counts
    assert state.index.line_counts(counter, 10) is not None
    (counts,) = state.index._line_counts
    assert sorted(counts.by_seq[e.seq] for e in state.entries.values()) == [
        len(f"k{i}: " + "x" * (10 + i)) for i in range(6)
    ]


def test_ctx_12_an_entry_removed_before_it_was_counted_is_never_offered():
    """CTX-12: an entry added and forgotten between two fills is neither counted nor offered to the room left."""
    state, counter = filled(), per_line(chars)
    for _ in range(2):
        core.context(state, now=10, token_budget=40, tokenizer=counter)
    state, _ = core.remember(state, "s", "y", now=11)  # the shortest line: it would fit any room
    state, _ = core.forget(state, "s", now=12)
    args = dict(now=13, token_budget=40, tokenizer=counter)
    assert core.context(state, **args) == reference(state, **args)
    (counts,) = state.index._line_counts
    assert len(counts.by_seq) == 6 and not counts.pending


def test_ctx_12_counts_are_kept_again_once_the_odd_count_leaves():
    """CTX-12: while a line counting a fraction is stored the fill takes its pass; once it is forgotten, the kept counts serve."""
    counter = per_line(lambda text: len(text) / 2 if "odd" in text else len(text))
    state = filled()
    state, _ = core.remember(state, "odd", "odd", now=7)
    assert state.index.line_counts(counter, 10) is None  # the first ask
    assert state.index.line_counts(counter, 10) is None  # an odd count is stored
    state, _ = core.forget(state, "odd", now=8)
    assert state.index.line_counts(counter, 10) is not None


def test_ctx_12_a_cleared_counter_is_counted_afresh():
    """CTX-12: after ``clear`` the counts kept are of an older generation: the next fill counts every line again."""
    counting = [chars]
    counter = per_line(lambda text: counting[0](text))
    state = filled()
    for _ in range(2):
        state.index.line_counts(counter, 10)
    counting[0] = lambda text: 3 * len(text)
    counter.clear()
    found = state.index.line_counts(counter, 10)
    assert found is not None and found.sizes([state.entries["k0"]]) == [3 * len("k0: " + "x" * 10)]


def test_ctx_12_a_line_that_fills_the_room_left_exactly_is_taken():
    """CTX-12, CTX-2: with counts kept, the short line that fills the room the walk left exactly is taken, as the reference takes it."""
    counter = per_line(chars)
    state = MemoryState()
    # Ranked by importance: the long line first, then one that no longer fits, then the short one.
    for key, text, importance in [("a", "x" * 20, 1.0), ("b", "x" * 20, 0.9), ("c", "y", 0.0)]:
        state, _ = core.remember(state, key, text, now=0, importance=importance)
    for _ in range(2):
        state.index.line_counts(counter, 0)
    budget = len("a: " + "x" * 20) + 1 + len("c: y")  # exactly the two lines and the separator
    with mock.patch.object(prompt, "_FIRST_WHOLE_UP_TO", 0), mock.patch.object(prompt, "_FIRST_SHARE", 10):
        fast = core.context(state, now=0, token_budget=budget, tokenizer=counter)
    assert [e.key for e in fast.entries] == ["a", "c"] and fast.tokens == budget
    assert fast == reference(state, now=0, token_budget=budget, tokenizer=counter)


def test_ctx_12_counts_are_carried_up_to_the_pending_bound():
    """CTX-12: up to PENDING_MOST changes between two fills are carried; one more drops the counts (counted afresh next)."""
    counter = per_line(chars)
    state = filled()
    for _ in range(2):
        state.index.line_counts(counter, 10)
    for i in range(linecounts.PENDING_MOST):
        state, _ = core.remember(state, f"n{i}", "z", now=20 + i)
    assert len(state.index._line_counts[0].pending) == linecounts.PENDING_MOST
    state, _ = core.remember(state, "one more", "z", now=200)
    assert not state.index._line_counts
    assert state.index.line_counts(counter, 300) is not None  # asked before on this line: counted afresh at once


def test_ctx_12_a_count_that_fails_for_an_expired_line_changes_nothing():
    """CTX-12, EXP-3: a tokenizer that fails on an expired entry's line fills as before; on a live line it still raises."""

    def picky(text: str) -> int:
        if "gone" in text:
            raise RuntimeError("cannot count this")
        return len(text)

    state = filled()
    state, _ = core.remember(state, "gone", "gone", now=0, ttl=1)
    counter = per_line(picky)
    args = dict(now=10, token_budget=30, tokenizer=counter)
    for _ in range(3):  # the first ask, then the asks that would keep counts
        assert core.context(state, **args) == reference(state, **args)
    assert not state.index._line_counts
    with pytest.raises(RuntimeError, match="cannot count"):
        core.context(state, now=0, token_budget=30, tokenizer=counter)  # live at 0


def test_ctx_12_kept_counts_read_their_boundaries():
    """CTX-12: the least count, the lines within a count (inclusive) and how many: exactly those of the counts kept."""
    counter = per_line(chars)
    entries = list(filled().entries.values())  # "k0: " and 10 .. 15 characters: 14 .. 19
    counts = linecounts.LineCounts.of(counter, entries)
    assert counts.least() == 14 and not counts.odd
    assert [item[0] for item in counts.within(15)] == [14, 15]
    assert counts.count_within(15) == 2 and counts.count_within(13) == 0 and counts.count_within(19) == 6
    assert linecounts.LineCounts.of(counter, []).least() == 0


def test_ctx_12_a_line_counting_zero_is_whole_and_a_fraction_is_not():
    """CTX-12, CTX-8: a count of 0 is a whole number the kept counts use; 0.5 is set aside as odd, and counting more keeps the tally."""
    counter = per_line(lambda text: 0 if "zero" in text else len(text) / 2 if "half" in text else len(text))
    state = filled()
    state, _ = core.remember(state, "zero", "zero", now=7)
    for _ in range(2):
        found = state.index.line_counts(counter, 10)
    assert found is not None and found.least() == 0
    state, _ = core.remember(state, "more", "more", now=8)  # counted when next asked: whole
    assert state.index.line_counts(counter, 10) is not None
    state, _ = core.remember(state, "half", "half", now=9)
    assert state.index.line_counts(counter, 10) is None and state.index._line_counts[0].odd == 1


def test_ctx_12_an_index_keeps_the_counts_of_two_counters():
    """CTX-12: the counts of the two counters used last are kept; a third's push out the oldest."""
    state = filled()
    first, second, third = per_line(chars), per_line(chars), per_line(chars)
    for counter in (first, first, second, third):
        state.index.line_counts(counter, 10)
    assert [counts.counter for counts in state.index._line_counts] == [third, second]
