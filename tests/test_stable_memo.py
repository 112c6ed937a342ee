"""The stable cut's memo of every unit's count: where it is kept, carried, dropped and read (MSG-17)."""

from __future__ import annotations

import attrs
import pytest

import sentinel_memory as sm
from sentinel_memory.core import request
from sentinel_memory.core.tokens import per_line
from sentinel_memory.core.unitmemo import MEMOS_KEPT, carried, empty, kept
from sentinel_memory.stores.contract import MemoryStore

STABLE = {"cut": "stable", "system": "Be brief.", "low_mark": 0.5}


class Clock:
    """A clock the test moves."""

    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def chat(mem, exchanges, start=0, words=12, ttl=None):
    """``exchanges`` user/assistant pairs of about ``words`` words each."""
    for i in range(start, start + exchanges):
        mem.add_turn("user", f"question {i} " + "word " * words, ttl=ttl)
        mem.add_turn("assistant", f"answer {i} " + "word " * words, ttl=ttl)
    return mem


def memos(mem):
    """The memos the memory's state keeps now."""
    return mem.state.index.split().memos


def reference(mem, **options):
    """The request read from every turn: the memo's answer refused."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(request, "_memo_taken", lambda *args: None)
        return mem.get_messages(**options)


def used(mem, **options):
    """The request, and whether the memo gave the cut (not None) for it."""
    answers = []
    taken = request._memo_taken

    def watched(*args):
        answers.append(taken(*args))
        return answers[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(request, "_memo_taken", watched)
        result = mem.get_messages(**options)
    return result, bool(answers) and all(a is not None for a in answers)


def test_msg_17_a_stable_request_keeps_a_memo_and_the_next_reads_it_on():
    """MSG-17: the first stable request builds the memo; after a turn is added the next extends it, same as the reference."""
    mem = chat(sm.create_memory(), 30)
    assert not memos(mem)
    first, by_memo = used(mem, token_budget=300, **STABLE)
    assert by_memo and len(memos(mem)) == 1
    before = next(iter(memos(mem).values()))
    chat(mem, 1, start=30)
    assert next(iter(memos(mem).values())) is before  # carried by the change, not yet read on
    second, by_memo = used(mem, token_budget=300, **STABLE)
    after = next(iter(memos(mem).values()))
    assert by_memo and after.size == before.size + 2
    assert after.whole[: before.size + 1] == before.whole[: before.size + 1] and after.heads is before.heads
    fresh = reference(chat(sm.create_memory(), 30), token_budget=300, **STABLE)
    assert (first.messages, first.tokens, first.prefix) == (fresh.messages, fresh.tokens, fresh.prefix)
    assert second == reference(mem, token_budget=300, **STABLE)


def test_msg_17_the_newest_first_fill_keeps_no_memo():
    """MSG-17: only the stable cut reads the memo; ``cut="newest"`` neither builds nor needs one."""
    mem = chat(sm.create_memory(), 10)
    mem.get_messages(token_budget=200, system="Be brief.")
    assert not memos(mem)


def test_msg_17_the_oldest_turns_removed_keep_the_memo_a_middle_one_drops_it():
    """MSG-17: forgetting the oldest turn carries the memo (its units dropped); forgetting a later one drops it."""
    mem = chat(sm.create_memory(), 20)
    used(mem, token_budget=250, **STABLE)
    mem.forget("chat:1")
    (memo,) = memos(mem).values()
    assert memo.drop == (1, memo.heads[0][1], memo.heads[0][2])
    result, by_memo = used(mem, token_budget=250, **STABLE)
    assert by_memo and result == reference(mem, token_budget=250, **STABLE)
    assert memos(mem)[next(iter(memos(mem)))].heads[0][0] == 2
    mem.forget("chat:10")
    assert not memos(mem)
    result, by_memo = used(mem, token_budget=250, **STABLE)
    assert by_memo and result == reference(mem, token_budget=250, **STABLE)


def test_msg_17_an_eviction_of_the_oldest_turn_keeps_the_memo():
    """MSG-17: a memory at its limit evicts its oldest turn on each add; the memo is carried, the request the reference's."""
    mem = chat(sm.create_memory(limit=30), 15)
    used(mem, token_budget=250, **STABLE)
    mem.add_turn("user", "one more question " + "word " * 12)
    assert memos(mem), "the eviction of the oldest turn kept the memo"
    result, by_memo = used(mem, token_budget=250, **STABLE)
    assert by_memo and result == reference(mem, token_budget=250, **STABLE)


def test_msg_17_carried_at_the_exact_edges():
    """MSG-17: a turn added exactly at the memo's newest is not after it (dropped); removed turns must be exactly the oldest."""
    memo = empty().extended([((1, 0, 1), True, 5, 5)], (2, 0, 2), (1, 0, 1), [])
    assert carried({"k": memo}, [], [(2, 0, 3)], 0) == {"k": memo}
    assert carried({"k": memo}, [], [(2, 0, 2)], 0) == {}
    assert carried({"k": memo}, [(1, 0, 1)], [], 0)["k"].drop == (1, 0, 1)  # none before it: the oldest
    assert carried({"k": memo}, [(2, 0, 2)], [], 1) == {}  # one turn before it stays: a middle one
    assert carried({"k": memo}, [(1, 0, 1), (2, 0, 2)], [], 1)["k"].drop == (2, 0, 2)
    assert carried({"k": memo}, [], [], 0) == {"k": memo}
    assert carried({}, [(1, 0, 1)], [(3, 0, 3)], 0) == {}


def test_msg_17_a_memo_is_used_until_a_turn_it_read_expires_at_that_very_moment():
    """MSG-17, EXP-2: one ms before a read turn's deadline the memo holds; at the deadline it is read again."""
    clock = Clock()
    mem = sm.create_memory(clock=clock)
    chat(mem, 3, words=12, ttl=5_000)
    chat(mem, 20, start=3, words=12)
    used(mem, token_budget=250, **STABLE)
    (memo,) = memos(mem).values()
    assert memo.live_until == 1_000_000 + 5_000
    clock.now = 1_000_000 + 4_999
    result, _ = used(mem, token_budget=250, **STABLE)
    assert next(iter(memos(mem).values())) is memo
    clock.now = 1_000_000 + 5_000
    result, by_memo = used(mem, token_budget=250, **STABLE)
    (again,) = memos(mem).values()
    assert again is not memo and again.size == memo.size - 6
    assert by_memo and result == reference(mem, token_budget=250, **STABLE)


def test_msg_17_a_clock_gone_back_reads_an_expired_turn_again():
    """MSG-17: a memo that read a turn as expired is not used at a moment before that turn's deadline."""
    clock = Clock()
    mem = sm.create_memory(clock=clock)
    chat(mem, 2, ttl=1_000)
    chat(mem, 20, start=2)
    clock.now += 1_000
    used(mem, token_budget=250, **STABLE)
    (memo,) = memos(mem).values()
    assert memo.dead_since == 1_000_000 + 1_000 and memo.valid_at(clock.now) and not memo.valid_at(clock.now - 1)
    clock.now -= 1
    result, by_memo = used(mem, token_budget=250, **STABLE)
    assert by_memo and result == reference(mem, token_budget=250, **STABLE)
    assert next(iter(memos(mem).values())) is not memo


@pytest.mark.parametrize("shift", [0, -1])
def test_msg_17_a_mark_exactly_at_a_strides_boundary_is_found_from_the_memo(shift):
    """MSG-11, MSG-17: the memo finds a mark at exactly a multiple of the stride, and none one token before it."""
    size = lambda text: len(text.split())  # one token a word: positions can be set exactly
    mem = sm.create_memory(tokenizer=size)
    # units of 10 (7 words + 3), a first unit of 10 + shift: the stride 50 (budget 100, low 0.5) is met at
    # unit 5 (position 50 + shift).
    mem.add_turn("user", " ".join(["w"] * (7 + shift)))
    for i in range(1, 16):
        mem.add_turn("user" if i % 5 == 0 else "assistant", " ".join(["w"] * 7))
    options = {"token_budget": 100, "cut": "stable", "low_mark": 0.5, "facts_at": "end"}
    result, by_memo = used(mem, **options)
    assert by_memo and result == reference(mem, **options)
    start = next(m for m in result.messages if m["role"] != "system")
    assert start["role"] == "user"


def test_msg_17_the_unit_numbered_keep_results_counts_cleared_in_the_sums():
    """MSG-15, MSG-17: with clearing, the memo counts units from the newest keep_results on whole, older ones cleared."""
    mem = sm.create_memory()
    for i in range(25):
        mem.add_turn("user", f"question {i} " + "word " * 10)
        call = {"id": f"c{i}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
        mem.add_messages(
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": "result " * 40},
            ]
        )
        mem.add_turn("assistant", f"answer {i} " + "word " * 10)
    for keep in (0, 1, 2, 3):
        options = {**STABLE, "token_budget": 400, "keep_results": keep}
        result, by_memo = used(mem, **options)
        assert by_memo and result == reference(mem, **options)


def test_msg_17_a_tokenizer_counting_in_floats_is_never_memoised():
    """MSG-17: a count that is not an int makes the memo inexact; the cut is read from every unit, the same request."""
    mem = chat(sm.create_memory(tokenizer=lambda text: len(text) / 4), 20)
    result, by_memo = used(mem, token_budget=300, **STABLE)
    assert not by_memo and not next(iter(memos(mem).values())).exact
    assert result == reference(mem, token_budget=300, **STABLE)


def test_msg_17_each_tokenizer_has_its_memo_and_exactly_memos_kept_are_kept():
    """MSG-17: a memo per tokenizer, the oldest forgotten past MEMOS_KEPT; a cleared LineCounter counts anew."""
    mem = chat(sm.create_memory(), 20)
    counters = [per_line(lambda text, k=k: len(text.split()) + k) for k in range(MEMOS_KEPT + 1)]
    for counter in counters[:MEMOS_KEPT]:
        used(mem, token_budget=300, tokenizer=counter, **STABLE)
    assert [key[0] for key in memos(mem)] == counters[:MEMOS_KEPT]
    used(mem, token_budget=300, tokenizer=counters[-1], **STABLE)
    assert [key[0] for key in memos(mem)] == counters[1:]
    counters[-1].clear()
    used(mem, token_budget=300, tokenizer=counters[-1], **STABLE)
    assert (counters[-1], 1, None) in memos(mem)
    box: dict = {}
    kept(box, "a", empty())
    kept(box, "a", empty())
    assert list(box) == ["a"]


def test_msg_17_a_reloaded_memory_builds_the_memo_again_and_cuts_the_same():
    """MSG-17: a restart has no memo; the request it builds is the one the memory built before it."""
    store = MemoryStore()
    mem = chat(sm.create_memory(store=store), 25)
    before, _ = used(mem, token_budget=300, **STABLE)
    mem.save()
    again = sm.create_memory(store=store)
    assert not memos(again)
    after, by_memo = used(again, token_budget=300, **STABLE)
    assert by_memo and after == before


def test_msg_17_the_extended_memo_starts_its_sums_again_at_the_oldest_unit_kept():
    """MSG-17: units dropped from the start leave sums counted from the oldest unit kept, and older-user links cut."""
    memo = empty().extended(
        [((1, 0, 1), True, 5, 4), ((2, 0, 2), False, 6, 6), ((3, 0, 3), True, 7, 2)], (3, 0, 3), (3, 0, 3), []
    )
    assert memo.whole == [0, 5, 11, 18] and memo.cleared == [0, 4, 10, 12] and memo.before_user == [-1, 0, 0]
    dropped = attrs.evolve(memo, drop=(1, 0, 1))
    assert dropped.start() == 1
    again = dropped.extended([((3, 0, 3), True, 7, 2)], (3, 0, 3), (3, 0, 3), [])
    assert again.heads == [(2, 0, 2), (3, 0, 3)] and again.whole == [0, 6, 13] and again.before_user == [-1, -1]


def test_msg_17_two_memos_read_on_from_one_keep_apart():
    """MSG-17: the first memo read on from a size appends to the shared lists, the second copies; neither sees the other's units."""
    base = empty().extended([((1, 0, 1), True, 5, 5)], (1, 0, 1), (1, 0, 1), [])
    frontier = ((1, 0, 1), True, 5, 5)  # read again each time, as it was
    one = base.extended([frontier, ((2, 0, 2), False, 7, 7)], (2, 0, 2), (2, 0, 2), [])
    two = base.extended([frontier, ((3, 0, 3), True, 9, 1)], (3, 0, 3), (3, 0, 3), [])
    assert one.heads is base.heads and two.heads is not base.heads
    assert one.heads[: one.size] == [(1, 0, 1), (2, 0, 2)] and one.whole[: one.size + 1] == [0, 5, 12]
    assert two.heads[: two.size] == [(1, 0, 1), (3, 0, 3)] and two.whole[: two.size + 1] == [0, 5, 14]
    assert base.size == 1 and base.heads[: base.size] == [(1, 0, 1)]
    changed = base.extended([((1, 0, 1), True, 6, 6)], (1, 0, 1), (1, 0, 1), [])  # the frontier's unit now counts more
    assert changed.size == 1 and changed.whole[:2] == [0, 6] and base.whole[:2] == [0, 5]


def test_msg_17_a_history_counting_exactly_the_budget_is_sent_whole_not_cleared():
    """MSG-15, MSG-17: units counting exactly the budget fit whole, so nothing is cleared; one token less clears."""
    mem = sm.create_memory()
    for i in range(6):
        mem.add_turn("user", f"question {i} " + "word " * 10)
        call = {"id": f"c{i}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
        mem.add_messages(
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": "result " * 40},
            ]
        )
    options = {"cut": "stable", "keep_results": 1}
    total = mem.get_messages(token_budget=100_000, **options).tokens
    used(mem, token_budget=total - 1, **options)  # the memo is kept: the next requests judge by it
    whole, _ = used(mem, token_budget=total, **options)
    assert whole.tokens == total and all(m.get("content") != "[cleared]" for m in whole.messages)
    cleared, _ = used(mem, token_budget=total - 1, **options)
    assert any(m.get("content") == "[cleared]" for m in cleared.messages)
    assert len(cleared.messages) == len(whole.messages)


def half_answered(mem):
    """Five exchanges, then a question and an assistant's two calls of which only the first is answered."""
    chat(mem, 5)
    mem.add_turn("user", "look both up")
    calls = [{"id": f"c{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}} for k in range(2)]
    mem.add_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c0", "content": "first"},
        ]
    )
    return mem


def test_msg_17_read_on_from_the_frontier_a_call_answered_in_two_steps_becomes_its_unit():
    """MSG-17: a memo made between a call's two results reads on from the call (its frontier), not from its newest turn."""
    from sentinel_memory.core.tokens import estimate_tokens

    store = MemoryStore()
    mem = half_answered(sm.create_memory(store=store))

    def text_cost(body):
        return estimate_tokens(body) + request.MESSAGE_TOKENS

    def cost(message):
        return text_cost(request.body_of(message))

    state = mem.state
    before = request._memo(state, 0, estimate_tokens, cost, text_cost, None)  # no walk of a request: read by itself
    assert before.frontier != before.last  # the call, and its first result
    mem.add_messages([{"role": "tool", "tool_call_id": "c1", "content": "second"}])
    state = mem.state
    after = request._memo(state, 0, estimate_tokens, cost, text_cost, None)
    mem.save()
    fresh = request._memo(
        sm.create_memory(store=store).state, 0, estimate_tokens, cost, text_cost, None
    )  # built from no memo
    assert after.heads[: after.size] == fresh.heads[: fresh.size]
    assert after.whole[: after.size + 1] == fresh.whole[: fresh.size + 1]


def agent_history(mem, exchanges, start=0):
    """An agent's exchanges: a question (every fourth in two messages), one or two tool calls with their results, an answer.

    Every third exchange is a question and its answer alone.
    """
    for i in range(start, start + exchanges):
        if i % 4 == 3:
            mem.add_turn("user", f"one more thing {i}")
        mem.add_turn("user", f"question {i} about the order " + "word " * (i % 7))
        if i % 3 == 2:
            mem.add_turn("assistant", f"answer {i} " + "word " * (3 + i % 5))
            continue
        calls = [
            {"id": f"c{i}-{k}", "type": "function", "function": {"name": ("look", "fetch")[k], "arguments": "{}"}}
            for k in range(1 + i % 2)
        ]
        mem.add_messages(
            [
                {"role": "assistant", "content": None, "tool_calls": calls},
                *({"role": "tool", "tool_call_id": c["id"], "content": "result " * (5 + 7 * (i % 4))} for c in calls),
                {"role": "assistant", "content": f"answer {i} " + "word " * (2 + i % 6)},
            ]
        )
    return mem


@pytest.mark.parametrize("keep", [None, 1, 2, 3, 5])
@pytest.mark.parametrize("low", [0.3, 0.5])
def test_msg_17_a_growing_agent_history_is_cut_from_the_memo_each_request_as_the_reference_cuts(keep, low):
    """MSG-17: after each exchange of an agent (greeting first) every stable request is the memo's, equal to the reference."""
    mem = sm.create_memory()
    mem.add_turn("assistant", "Hello! I can look orders up. " + "word " * 20)  # older than every user turn
    answered = 0
    for round_ in range(14):
        agent_history(mem, 1, start=round_)
        for budget in (160, 300, 600):
            options = {**STABLE, "low_mark": low, "keep_results": keep, "token_budget": budget}
            result, by_memo = used(mem, **options)
            assert result == reference(mem, **options), (round_, budget)
            answered += by_memo
    assert answered == 14 * 3  # every request: the memo never gave way to the reference


def attempts(mem, **options):
    """The request, and the units each attempt of the fill was given: "whole" or "cleared" (MSG-15), in order."""
    given: list[str] = []
    planned = request._planned

    def watched(state, now, units, *rest):
        given.append("cleared" if isinstance(units, request._Cleared) else "whole")
        return planned(state, now, units, *rest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(request, "_planned", watched)
        return mem.get_messages(**options), given


@pytest.mark.parametrize("greeting", [False, True])
def test_msg_17_units_counting_more_than_the_budget_by_the_memo_skip_the_attempt_with_whole_results(greeting):
    """MSG-15, MSG-17: by the memo's whole count the fill clears at once; units within the budget are tried whole only.

    With a greeting older than every user turn, that turn's unit is not in the count: the history fits whole.
    """
    mem = sm.create_memory()
    if greeting:
        mem.add_turn("assistant", "Hello! " + "word " * 60)
    agent_history(mem, 6)
    options = {"cut": "stable", "keep_results": 1}
    whole = mem.get_messages(token_budget=100_000, **options)
    assert whole.messages[0]["role"] == "user"  # the greeting is never sent (MSG-9)
    over, given = attempts(mem, token_budget=whole.tokens - 1, **options)
    assert given == ["cleared"] and any(m.get("content") == "[cleared]" for m in over.messages)
    fits, given = attempts(mem, token_budget=whole.tokens, **options)
    assert given == ["whole"] and fits == whole


def test_msg_17_a_tokenizer_counting_in_floats_tries_the_whole_results_first():
    """MSG-15, MSG-17: no memo judges a float count, so the fill tries the units whole and clears only when they do not fit."""
    mem = agent_history(sm.create_memory(tokenizer=lambda text: len(text) / 4), 6)
    options = {"cut": "stable", "keep_results": 1}
    whole = mem.get_messages(token_budget=100_000, **options)
    over, given = attempts(mem, token_budget=whole.tokens - 1, **options)
    assert given == ["whole", "cleared"] and any(m.get("content") == "[cleared]" for m in over.messages)


def reads(mem, **options):
    """The request, and how many stored turns its walks read (every walk over the turns, the memo's too)."""
    count = [0]
    init = request._NewestUnits.__init__

    def counted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        items = self._items

        def pulled():
            for item in items:
                count[0] += 1
                yield item

        self._items = pulled()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(request._NewestUnits, "__init__", counted)
        return mem.get_messages(**options), count[0]


@pytest.mark.parametrize("keep", [None, 1])
def test_msg_17_once_the_memo_is_kept_a_stable_request_reads_no_more_turns_than_the_newest_first_fill(keep):
    """MSG-17: the first stable request reads every turn; after an exchange the next reads what the newest-first fill reads."""
    mem = sm.create_memory()
    mem.add_turn("assistant", "Hello! " + "word " * 30)
    agent_history(mem, 30)
    options = {"token_budget": 300, "keep_results": keep}
    _, newest = reads(mem, cut="newest", **options)
    _, first = reads(mem, cut="stable", **options)
    assert first == len(mem.state.index.split().turns) + newest  # every turn for the memo, and the fill's own
    for round_ in range(30, 36):
        agent_history(mem, 1, start=round_)
        _, newest = reads(mem, cut="newest", **options)
        _, stable = reads(mem, cut="stable", **options)
        assert 0 < stable <= newest, round_


def test_msg_17_a_request_reads_on_from_a_call_frontier_with_its_own_walk_and_keeps_the_units_a_fresh_memo_has():
    """MSG-17: the request's walk passes the frontier (a call answered since): the memo it keeps is the one built afresh."""
    store = MemoryStore()
    mem = half_answered(sm.create_memory(store=store))
    options = {**STABLE, "keep_results": 1, "token_budget": 400}
    used(mem, **options)
    mem.add_messages([{"role": "tool", "tool_call_id": "c1", "content": "second"}])
    _, by_memo = used(mem, **options)
    mem.save()
    again = sm.create_memory(store=store)
    used(again, **options)
    (kept_memo,), (fresh,) = memos(mem).values(), memos(again).values()
    assert by_memo and kept_memo.heads[: kept_memo.size] == fresh.heads[: fresh.size]
    assert kept_memo.whole[: kept_memo.size + 1] == fresh.whole[: fresh.size + 1]


def test_msg_17_a_memo_of_no_turns_is_read_on_from_the_start_when_turns_come():
    """MSG-17: a stable request over no turns keeps a memo with no frontier; the next, after an exchange, reads every turn."""
    mem = sm.create_memory()
    options = {**STABLE, "keep_results": 1, "token_budget": 200}
    assert used(mem, **options)[0].messages == [{"role": "system", "content": "Be brief."}]
    assert next(iter(memos(mem).values())).frontier is None
    agent_history(mem, 3)
    result, by_memo = used(mem, **options)
    assert by_memo and result == reference(mem, **options)
    assert next(iter(memos(mem).values())).size == 8  # three questions, two call units, three answers


def test_msg_7_the_walk_stops_at_the_first_turn_older_than_the_oldest_live_user_turn():
    """MSG-7, MSG-9: turns older than the oldest user turn are never units, so a request reads only the first of them."""
    mem = sm.create_memory()
    for i in range(20):
        mem.add_turn("assistant", f"notice {i}")
    agent_history(mem, 2)
    result, count = reads(mem, token_budget=10_000)
    assert result.messages[0]["role"] == "user" and count == len(mem.state.index.split().turns) - 20 + 1
