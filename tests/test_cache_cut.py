"""Requests a prompt cache can serve: the stable cut, the facts' place and the prefix (MSG-11 .. MSG-14)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

import sentinel_memory as sm
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.core.cut import marks, stable_taken, stride

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import prompt_cache  # the benchmark's replay, on its agent history


def cost(message):
    """MSG-3: a message's count with the estimator."""
    return sm.estimate_tokens(body_of(message)) + MESSAGE_TOKENS


def chat(make, exchanges, words=12):
    """A memory holding ``exchanges`` user/assistant pairs of about ``words`` words each, and a must-keep fact."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for i in range(exchanges):
        mem.add_turn("user", f"question {i} " + "word " * words)
        mem.add_turn("assistant", f"answer {i} " + "word " * words)
    return mem


def history_start(result):
    """The first message of the history (after the leading system messages), or None."""
    return next((m for m in result.messages if m["role"] != "system"), None)


def test_msg_11_the_stride_is_the_floored_share_above_the_low_mark():
    """MSG-11: stride = floor(budget * (1 - low_mark)); an odd budget floors, low_mark 1 gives 0, 0 the budget."""
    assert stride(1000, 0.5) == 500
    assert stride(999, 0.5) == 499
    assert stride(1000, 1) == 0
    assert stride(1000, 0) == 1000
    assert stride(10.9, 0.5) == 5


def test_msg_11_a_mark_starts_exactly_at_the_strides_boundary():
    """MSG-11: a user unit whose position is exactly a multiple of the stride is a mark; one token short is not."""
    assert marks([500, 10], [True, True], 500) == [True, True]  # the second at position 500: floor(1) > floor(0)
    assert marks([499, 10], [True, True], 500) == [True, False]  # at 499: the same stride
    assert marks([500, 10], [True, False], 500) == [True, False]  # not a user unit: never a mark
    assert marks([1, 1, 1], [False, True, True], 0) == [False, True, True]  # stride 0: every user unit


def test_msg_11_a_mark_compares_with_the_next_older_user_unit_not_the_previous_unit():
    """MSG-11: the stride of a mark is compared with the newest older unit that opens with a user message."""
    # positions 0, 6, 12: the assistant unit at 6 crosses the boundary, the user unit at 12 is in stride 1 as well
    assert marks([6, 6, 6], [True, False, True], 10) == [True, False, True]
    assert marks([4, 4, 4], [True, True, True], 10) == [True, False, False]


def test_msg_11_nothing_is_cut_when_every_unit_fits_and_only_back_to_must():
    """MSG-11: all units taken stays all; no mark among the taken units keeps the units that are always in."""
    units = [(10, True), (10, False), (10, False), (10, True)]
    get = lambda i: units[i] if i < len(units) else None
    assert stable_taken(get, 1, 4, 15) == 4
    assert stable_taken(get, 1, 3, 15) == 1  # units 1 and 2 are assistant units: no mark among them
    assert stable_taken(get, 2, 2, 15) == 2


def test_msg_11_a_unit_that_fits_exactly_is_taken_and_one_token_less_leaves_it_out(make):
    """MSG-11: the history takes a unit when the request counts exactly the budget, not when it counts one more."""
    mem = chat(make, 3)
    options = {"cut": "stable", "low_mark": 1, "facts_at": "end", "system": "Be brief."}
    full = mem.get_messages(token_budget=10_000, **options)
    exact = mem.get_messages(token_budget=full.tokens, **options)
    assert exact.messages == full.messages and exact.tokens == full.tokens
    short = mem.get_messages(token_budget=full.tokens - 1, **options)
    assert short.tokens <= full.tokens - 1 and len(short.messages) == len(full.messages) - 2


def test_msg_11_the_start_stays_put_until_the_budget_forces_the_next_cut(make):
    """MSG-11: with one new exchange per request the stable history's start moves rarely; the newest cut moves each time."""
    mem = chat(make, 10)
    starts = {"stable": [], "newest": []}
    for i in range(60):
        for how in starts:
            got = mem.get_messages(token_budget=400, must_keep=0.9, system="Be brief.", cut=how, facts_at="end")
            assert got.tokens <= 400 and not sm.request_problems(got.messages)
            starts[how].append(history_start(got)["content"])
        mem.add_turn("user", f"later question {i} " + "word " * 12)
        mem.add_turn("assistant", f"later answer {i} " + "word " * 12)
    moves = {how: sum(a != b for a, b in itertools.pairwise(s)) for how, s in starts.items()}
    assert moves["newest"] >= 55
    assert 3 <= moves["stable"] <= 15


def test_msg_11_a_request_right_after_a_cut_still_fills_about_the_low_mark(make):
    """MSG-11: every stable request counts at least about low_mark of the budget once the history is cut."""
    mem = chat(make, 80)
    for low in (0.3, 0.5, 0.8):
        got = mem.get_messages(token_budget=1000, cut="stable", low_mark=low, facts_at="end")
        assert 1000 * low - 60 <= got.tokens <= 1000


def test_msg_11_a_restart_cuts_at_the_same_turn(make, tmp_path):
    """MSG-11: the memory saved and loaded by another object (a restart, another process) builds the same request."""
    store = sm.JsonFileStore(tmp_path / "memory.json")
    mem = make(store=store)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for i in range(40):
        mem.add_turn("user", f"question {i} " + "word " * (i % 7 * 3))
        mem.add_turn("assistant", f"answer {i} " + "word " * 9)
    mem.save()
    again = make(store=store, load=True)
    options = {"token_budget": 500, "query": "peanuts", "cut": "stable", "facts_at": "end"}
    first, second = mem.get_messages(**options), again.get_messages(**options)
    assert first.messages == second.messages and first.prefix == second.prefix
    assert history_start(first) != history_start(mem.get_messages(token_budget=500, query="peanuts"))


def test_msg_11_bad_choices_are_refused_by_name(make):
    """MSG-11, MSG-12: cut and facts_at must be one of their names (ValueError) and a str (TypeError)."""
    mem = chat(make, 2)
    with pytest.raises(ValueError, match="cut must be one of"):
        mem.get_messages(token_budget=100, cut="oldest")
    with pytest.raises(TypeError, match="cut must be a str"):
        mem.get_messages(token_budget=100, cut=1)
    with pytest.raises(ValueError, match="facts_at must be one of"):
        mem.get_messages(token_budget=100, facts_at="middle")
    with pytest.warns(UserWarning, match="low_mark"):
        mem.get_messages(token_budget=100, cut="stable", low_mark=2)


@pytest.mark.parametrize("where", ["system", "end", "start"])
def test_msg_12_each_placement_is_a_valid_request_within_budget(make, where):
    """MSG-12: the facts in the system message, at the end or after the prompt; valid, counted, within budget."""
    mem = chat(make, 30)
    got = mem.get_messages(token_budget=300, system="Be brief.", query="peanuts", cut="stable", facts_at=where)
    assert not sm.request_problems(got.messages)
    assert got.tokens == sum(cost(m) for m in got.messages) <= 300
    facts = "user:allergy: allergic to peanuts"
    if where == "system":
        assert got.messages[0]["content"] == "Be brief.\n\n" + facts
        assert got.prefix == 0
    elif where == "end":
        assert got.messages[0] == {"role": "system", "content": "Be brief."}
        assert got.messages[-1] == {"role": "system", "content": facts}
        assert got.prefix == len(got.messages) - 1 and got.entries[-1].key == "user:allergy"
    else:
        assert got.messages[:2] == [{"role": "system", "content": "Be brief."}, {"role": "system", "content": facts}]
        assert got.prefix == 1 and got.entries[0].key == "user:allergy"
    assert got.prefix_tokens == sum(cost(m) for m in got.messages[: got.prefix])


def test_msg_12_without_a_system_prompt_the_facts_message_comes_first_at_start(make):
    """MSG-12: facts_at='start' with no system prompt puts the facts' message first; no facts, no message."""
    mem = chat(make, 3)
    got = mem.get_messages(token_budget=300, facts_at="start")
    assert got.messages[0] == {"role": "system", "content": "user:allergy: allergic to peanuts"}
    assert got.prefix == 0
    mem.forget("user:allergy")
    got = mem.get_messages(token_budget=300, facts_at="end", system="Hi")
    assert got.messages[-1]["role"] != "system" and got.prefix == len(got.messages)


def test_msg_12_a_must_keep_fact_that_cannot_fit_raises_with_its_own_message_counted(make):
    """MSG-11, MSG-12: TokenBudgetError counts the prompt's and the facts' messages, each with MESSAGE_TOKENS."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.add_turn("user", "Hi")
    need = cost({"role": "system", "content": "Be brief."}) + cost(
        {"role": "system", "content": "user:allergy: allergic to peanuts"}
    )
    need += cost({"role": "user", "content": "Hi"})
    ok = mem.get_messages(token_budget=need, system="Be brief.", must_keep=0.9, facts_at="end")
    assert ok.tokens == need
    with pytest.raises(sm.TokenBudgetError) as error:
        mem.get_messages(token_budget=need - 1, system="Be brief.", must_keep=0.9, facts_at="end")
    assert error.value.needed == need


def test_msg_13_the_next_request_repeats_the_prefix_when_the_cut_stays(make):
    """MSG-13: after one more exchange the next request starts with the previous one's prefix messages exactly."""
    mem = chat(make, 5)
    before = mem.get_messages(token_budget=2000, system="Be brief.", query="menu", cut="stable", facts_at="end")
    mem.add_turn("user", "what about the peanuts?")
    mem.add_turn("assistant", "none tonight")
    after = mem.get_messages(token_budget=2000, system="Be brief.", query="peanuts", cut="stable", facts_at="end")
    assert after.messages[: before.prefix] == before.messages[: before.prefix]
    assert after.prefix == before.prefix + 2


def test_msg_13_todays_request_reports_a_prefix_only_without_facts(make):
    """MSG-13: the default request has no fact-free prefix when facts are chosen; every message without facts."""
    mem = chat(make, 3)
    assert mem.get_messages(token_budget=300).prefix == 0
    mem.forget("user:allergy")
    got = mem.get_messages(token_budget=300)
    assert got.prefix == len(got.messages) and got.prefix_tokens == got.tokens


@pytest.mark.parametrize("budget", prompt_cache.BUDGETS)
def test_msg_14_an_agent_history_meets_the_cache_targets(budget):
    """MSG-14: on the agent history every request is valid and within budget, >= 0.80 cacheable, mean >= 0.65, cheaper."""
    agent = prompt_cache.agent_history(steps=120)
    run = prompt_cache.replay_agent(agent, "stable", budget).report()
    today = prompt_cache.replay_agent(agent, "today", budget).report()
    assert run["problems"] == 0 and run["over"] == 0
    assert run["share"] >= 0.80 and run["mean"] >= 0.65
    assert run["cost"] < today["cost"]


@pytest.mark.parametrize("where", ["end", "start"])
def test_msg_12_tokens_leave_out_the_units_before_the_first_user_message(make, where):
    """MSG-12, MSG-3: with cut='newest', an assistant turn the fill took but MSG-9 drops is not counted in tokens."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.add_turn("user", "user a 0 w ")
    mem.add_turn("assistant", "assistant a 1 w ")
    mem.add_turn("user", "user a 2 w ")
    got = mem.get_messages(token_budget=31, system="Be brief.", must_keep=0.9, facts_at=where)
    assert [m["role"] for m in got.messages if m["role"] != "system"] == ["user"]
    assert got.tokens == sum(cost(m) for m in got.messages)


def test_msg_11_the_stable_cut_is_the_oldest_mark_among_the_units_the_fill_took():
    """MSG-11: of the units must .. taken - 1 (newest first), the cut keeps every unit from the oldest mark on, not
    from the newest; with no mark among them only the must units; with every unit taken, all of them."""
    every_user = [(10, True)] * 5  # oldest first, at a step of 15: marks at the units 0, 2 and 3
    assert marks([cost for cost, _ in every_user], [user for _, user in every_user], 15) == [
        True,
        False,
        True,
        True,
        False,
    ]

    def unit(units):
        return lambda i: units[i] if i < len(units) else None

    assert stable_taken(unit(every_user), 1, 4, 15) == 3  # marks 2 and 1 places back: the older one, 2
    assert stable_taken(unit(every_user), 1, 2, 15) == 2
    assert stable_taken(unit(every_user), 1, 5, 15) == 5  # every unit taken: nothing is cut
    assert stable_taken(unit(every_user), 4, 4, 15) == 4  # nothing to choose beyond the must units
    one_mark = [(10, True), (10, False), (10, False), (10, False), (10, True)]
    assert stable_taken(unit(one_mark), 1, 4, 15) == 1  # no mark among the units 1 .. 3
