"""Old tool results cleared before turns are dropped (MSG-15, MSG-16)."""

from __future__ import annotations

import asyncio
import copy
import sys
from pathlib import Path

import pytest

import sentinel_memory as sm
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.core.cut import CLEARED, clear_unit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import prompt_cache  # the benchmark's replay, on its agent history


def cost(message, tokenizer=sm.estimate_tokens):
    """MSG-3: a message's count."""
    return tokenizer(body_of(message)) + MESSAGE_TOKENS


def call(ident, tool="weather"):
    """An assistant message calling ``tool`` once, with the id ``ident``."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": ident, "type": "function", "function": {"name": tool, "arguments": "{}"}}],
    }


def result(ident, text):
    """The tool message answering ``ident`` with ``text``."""
    return {"role": "tool", "tool_call_id": ident, "content": text}


LONG = "rain and wind all day long in the city, " * 6


def agent(make, units=4, tools=("weather",), text=LONG):
    """A memory holding a question, ``units`` tool units (cycling ``tools``), an answer, and a new question."""
    mem = make()
    mem.add_turn("user", "What is the weather this week?")
    for n in range(units):
        mem.add_messages([call(f"c{n}", tools[n % len(tools)]), result(f"c{n}", f"day {n}: {text}")])
    mem.add_turn("assistant", "Rainy, mostly.")
    mem.add_turn("user", "And next week?")
    return mem


def tool_contents(got):
    """The content of each tool message of the request, oldest first."""
    return [m["content"] for m in got.messages if m["role"] == "tool"]


def test_msg_15_a_history_that_fits_whole_is_not_cleared(make):
    """MSG-15: when the fill takes every unit, the request is the one without keep_results, exactly at the budget."""
    mem = agent(make)
    plain = mem.get_messages(token_budget=10_000)
    exact = mem.get_messages(token_budget=plain.tokens, keep_results=0)
    assert exact.messages == plain.messages and CLEARED not in tool_contents(exact)


def test_msg_15_one_token_short_clears_all_but_the_newest_units(make):
    """MSG-15: one token below the whole history, every result of a unit numbered keep_results or more is cleared."""
    mem = agent(make, units=4)
    whole = mem.get_messages(token_budget=10_000).tokens
    got = mem.get_messages(token_budget=whole - 1, keep_results=3)
    # units newest first: 0 the new question, 1 the answer, 2 the call c3, 3 c2, 4 c1, 5 c0, 6 the first question
    assert tool_contents(got) == [CLEARED, CLEARED, CLEARED, "day 3: " + LONG]
    assert not sm.request_problems(got.messages) and got.tokens == sum(cost(m) for m in got.messages) <= whole - 1
    assert got.messages[0] == {"role": "user", "content": "What is the weather this week?"}  # nothing dropped
    cleared = [m for m in got.messages if m["role"] == "tool" and m["content"] == CLEARED]
    assert cleared == [
        {"role": "tool", "content": "[cleared]", "tool_call_id": "c0"},
        result("c1", CLEARED),
        result("c2", CLEARED),
    ]
    assert [m["tool_calls"][0]["id"] for m in got.messages if m.get("tool_calls")] == ["c0", "c1", "c2", "c3"]


def test_msg_15_the_unit_numbered_keep_results_is_cleared_and_the_one_before_is_not(make):
    """MSG-15: keep_results=k keeps units 0 .. k-1 whole and clears unit k."""
    mem = agent(make, units=4)
    whole = mem.get_messages(token_budget=10_000).tokens
    assert tool_contents(mem.get_messages(token_budget=whole - 1, keep_results=2))[-1] == CLEARED  # c3 is unit 2
    assert tool_contents(mem.get_messages(token_budget=whole - 1, keep_results=3))[-1] != CLEARED
    assert CLEARED not in tool_contents(mem.get_messages(token_budget=whole - 1, keep_results=6))


def test_msg_15_clearing_keeps_turns_a_budget_would_drop(make):
    """MSG-15: a budget that drops the first question without clearing keeps every turn with it."""
    mem = agent(make, units=4)
    plain = mem.get_messages(token_budget=300)
    got = mem.get_messages(token_budget=300, keep_results=1)
    assert plain.messages[0]["content"] != "What is the weather this week?"
    assert got.messages[0]["content"] == "What is the weather this week?"
    assert len(got.messages) > len(plain.messages) and got.tokens <= 300


def test_msg_15_excluded_tools_keep_their_results(make):
    """MSG-15, MSG-16: a result answering a call to an excluded tool is never cleared; the others are."""
    mem = agent(make, units=4, tools=("weather", "calendar"))
    whole = mem.get_messages(token_budget=10_000).tokens
    got = mem.get_messages(token_budget=whole - 1, keep_results=0, exclude_tools=["calendar"])
    assert tool_contents(got) == [CLEARED, "day 1: " + LONG, CLEARED, "day 3: " + LONG]
    assert tool_contents(mem.get_messages(token_budget=whole - 1, keep_results=0, exclude_tools=()))[1] == CLEARED


def test_msg_15_a_result_no_longer_than_the_placeholder_stays(make):
    """MSG-15: a result is cleared only when the cleared message counts fewer tokens; an equal count stays."""
    unit = ([(1, call("c")), (2, result("c", "x" * len(CLEARED)))], 0)
    assert clear_unit(unit, frozenset(), lambda m: cost(m, len)) is unit
    longer = ([(1, call("c")), (2, result("c", "x" * (len(CLEARED) + 1)))], 0)
    assert clear_unit(longer, frozenset(), lambda m: cost(m, len))[0][1][1]["content"] == CLEARED
    mem = agent(make, units=2, text="")
    mem.add_messages([call("c9"), result("c9", LONG)])
    whole = mem.get_messages(token_budget=10_000, tokenizer=len).tokens
    got = mem.get_messages(token_budget=whole - 1, tokenizer=len, keep_results=0)
    assert tool_contents(got) == ["day 0: ", "day 1: ", CLEARED]  # 7 characters, below the placeholder's 9: kept


def test_msg_15_the_stored_turns_and_the_entries_are_never_cleared(make):
    """MSG-15, MSG-4: the request's entries hold the stored data; the memory's turns are the same after the call."""
    mem = agent(make, units=3)
    before = copy.deepcopy(dict(mem.items()))
    got = mem.get_messages(token_budget=200, keep_results=0)
    assert CLEARED in tool_contents(got)
    assert dict(mem.items()) == before
    assert all(e.data["content"] != CLEARED for e in got.entries if e.data["role"] == "tool")
    again = mem.get_messages(token_budget=200, keep_results=0)
    assert again.messages == got.messages  # a pure function of the turns and the arguments


def test_msg_15_the_always_in_units_are_cleared_rather_than_refused(make):
    """MSG-15, MSG-9: a run too long for the budget whole is sent with its older results cleared, or refused counting them."""
    mem = make()
    mem.add_turn("user", "Plan my week.")
    for n in range(5):
        mem.add_messages([call(f"c{n}"), result(f"c{n}", LONG)])
    required = mem.get_messages(token_budget=10_000).tokens
    with pytest.raises(sm.TokenBudgetError):
        mem.get_messages(token_budget=required - 1)
    got = mem.get_messages(token_budget=required - 1, keep_results=1)
    assert tool_contents(got) == [CLEARED] * 4 + [LONG]
    cleared = got.tokens
    assert mem.get_messages(token_budget=cleared, keep_results=1).tokens == cleared
    with pytest.raises(sm.TokenBudgetError) as error:
        mem.get_messages(token_budget=cleared - 1, keep_results=1)
    assert error.value.needed == cleared


def test_msg_15_must_keep_facts_fit_beside_cleared_results(make):
    """MSG-15: when the must-keep facts fit only beside cleared results, the request clears them instead of raising."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.add_turn("user", "Find me a restaurant.")
    for n in range(3):
        mem.add_messages([call(f"c{n}", "search"), result(f"c{n}", LONG)])
    facts = cost({"role": "system", "content": "user:allergy: allergic to peanuts"})
    turns = mem.get_messages(token_budget=10_000, facts_share=0).tokens - facts
    with pytest.raises(sm.TokenBudgetError):
        mem.get_messages(token_budget=turns + facts - 1, must_keep=0.9)
    got = mem.get_messages(token_budget=turns + facts - 1, must_keep=0.9, keep_results=1)
    assert got.messages[0]["content"] == "user:allergy: allergic to peanuts"
    assert tool_contents(got) == [CLEARED, CLEARED, LONG]


@pytest.mark.parametrize("cut", ["newest", "stable"])
def test_msg_16_the_next_request_repeats_the_prefix(make, cut):
    """MSG-16, MSG-13: with clearing the next request, a unit more, starts with the previous prefix exactly."""
    mem = agent(make, units=8)
    options = {"token_budget": 400, "system": "Be brief.", "cut": cut, "facts_at": "end", "keep_results": 3}
    before = mem.get_messages(**options)
    assert CLEARED in tool_contents(before)
    assert before.prefix_tokens == sum(cost(m) for m in before.messages[: before.prefix])
    mem.add_messages([call("c9"), result("c9", LONG)])
    after = mem.get_messages(**options)
    assert after.messages[: before.prefix] == before.messages[: before.prefix]
    # the prefix stopped before the unit that ages past keep_results (unit 2, the call c7), cleared now
    assert before.messages[before.prefix]["tool_calls"][0]["id"] == "c7"
    assert before.messages[before.prefix + 1] == result("c7", "day 7: " + LONG)
    assert after.messages[before.prefix + 1] == result("c7", CLEARED)


def test_msg_16_bad_arguments_are_named(make):
    """MSG-16: exclude_tools must be a list or tuple of str (TypeError naming it); a bad keep_results warns, clears nothing."""
    mem = agent(make)
    with pytest.raises(TypeError, match="exclude_tools must be a list or tuple"):
        mem.get_messages(token_budget=200, keep_results=0, exclude_tools="weather")
    with pytest.raises(TypeError, match=r"exclude_tools\[1\] must be a str"):
        mem.get_messages(token_budget=200, keep_results=0, exclude_tools=["weather", 3])
    plain = mem.get_messages(token_budget=200)
    for bad in (-1, 1.5, "2"):
        with pytest.warns(UserWarning, match="keep_results"):
            assert mem.get_messages(token_budget=200, keep_results=bad).messages == plain.messages
    assert (
        mem.get_messages(token_budget=200, keep_results=2.0).messages
        == mem.get_messages(token_budget=200, keep_results=2).messages
    )


def test_msg_16_a_list_subclass_is_read_as_the_list_it_holds(make):
    """MSG-16, WRP-4: exclude_tools' own iteration and a name's own == never run."""

    class Names(list):
        def __iter__(self):
            raise RuntimeError("own iteration")

    class Name(str):
        def __eq__(self, other):
            raise RuntimeError("own ==")

        __hash__ = str.__hash__

    mem = agent(make, units=4, tools=("weather", "calendar"))
    got = mem.get_messages(token_budget=300, keep_results=0, exclude_tools=Names([Name("calendar")]))
    assert "day 1: " + LONG in tool_contents(got)


def test_msg_15_the_async_memory_clears_as_the_sync_one(make):
    """MSG-15: AsyncMemory.get_messages takes the options and builds the same request (one code path)."""
    mem = agent(make, units=4)
    options = {"token_budget": 300, "keep_results": 1, "exclude_tools": ["calendar"]}

    async def main():
        amem = await sm.create_async_memory()
        for message in [{"role": "user", "content": "What is the weather this week?"}]:
            await amem.add_message(message)
        for n in range(4):
            await amem.add_messages([call(f"c{n}"), result(f"c{n}", f"day {n}: {LONG}")])
        await amem.add_messages(
            [{"role": "assistant", "content": "Rainy, mostly."}, {"role": "user", "content": "And next week?"}]
        )
        return amem.get_messages(**options)

    got = asyncio.run(main())
    assert CLEARED in tool_contents(got)
    assert got.messages == mem.get_messages(**options).messages


@pytest.mark.parametrize("budget", prompt_cache.BUDGETS)
def test_msg_15_clearing_lowers_the_agent_historys_cost(budget):
    """MSG-14, MSG-15: on the agent history, clearing keeps every request valid and within budget, >= 0.80 cacheable, cheaper than the stable cut alone."""
    agent = prompt_cache.agent_history(steps=120)
    clear = prompt_cache.replay_agent(agent, "clear", budget).report()
    stable = prompt_cache.replay_agent(agent, "stable", budget).report()
    assert clear["problems"] == 0 and clear["over"] == 0
    assert clear["share"] >= 0.80 and clear["mean"] >= 0.65
    assert clear["cost"] < stable["cost"]
