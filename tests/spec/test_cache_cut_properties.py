"""Properties of requests a prompt cache can serve, on random histories with tool calls (MSG-11 .. MSG-16)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.core.cut import CLEARED

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import prompt_cache  # the benchmark's replay


def cost(message):
    """MSG-3: a message's count with the estimator."""
    return sm.estimate_tokens(body_of(message)) + MESSAGE_TOKENS


def history_start(result):
    """The first message of the history (after the leading system messages), or None."""
    return next((m for m in result.messages if m["role"] != "system"), None)


_unit = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 40)),
    st.tuples(st.just("assistant"), st.integers(1, 40)),
    st.tuples(st.just("tools"), st.integers(1, 3), st.integers(1, 60)),
)


def _store(mem, units, tag):
    for n, unit in enumerate(units):
        if unit[0] == "tools":
            calls = [
                {"id": f"{tag}-{n}-{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
                for k in range(unit[1])
            ]
            mem.add_messages(
                [{"role": "assistant", "content": None, "tool_calls": calls}]
                + [{"role": "tool", "tool_call_id": c["id"], "content": "x " * unit[2]} for c in calls]
            )
        else:
            mem.add_turn(unit[0], f"{unit[0]} {tag} {n} " + "w " * unit[1])


@settings(max_examples=60, deadline=None)
@given(
    units=st.lists(_unit, min_size=1, max_size=40),
    more=st.lists(_unit, min_size=1, max_size=3),
    budget=st.integers(0, 900),
    low=st.sampled_from([0, 0.25, 0.5, 0.75, 1]),
    where=st.sampled_from(["system", "end", "start"]),
)
def test_msg_11_random_histories_give_valid_stable_requests(units, more, budget, low, where):
    """MSG-11, MSG-12, MSG-13: valid, within budget, the newest question and the must-keep fact in; the prefix kept unless cut."""
    mem = sm.create_memory()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    _store(mem, units, "a")
    options = {
        "token_budget": budget,
        "system": "Be brief.",
        "must_keep": 0.9,
        "cut": "stable",
        "facts_at": where,
        "low_mark": low,
    }
    try:
        before = mem.get_messages(**options)
    except sm.TokenBudgetError:
        return
    assert not sm.request_problems(before.messages)
    assert before.tokens == sum(cost(m) for m in before.messages) <= budget
    assert "user:allergy" in {e.key for e in before.entries}
    users = [u for u in units if u[0] == "user"]
    if users:
        newest = max(i for i, u in enumerate(units) if u[0] == "user")
        assert any(m["role"] == "user" and m["content"].startswith(f"user a {newest} ") for m in before.messages)
    assert before.prefix_tokens == sum(cost(m) for m in before.messages[: before.prefix])
    _store(mem, more, "b")
    try:
        after = mem.get_messages(**options)
    except sm.TokenBudgetError:
        return
    if where != "system" and history_start(after) == history_start(before) and history_start(before) is not None:
        assert after.messages[: before.prefix] == before.messages[: before.prefix]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.sampled_from(prompt_cache.BUDGETS))
def test_msg_14_a_replayed_agent_sends_only_valid_requests_within_budget(seed, budget):
    """MSG-14: every request of a replayed random agent history is valid and within budget, and most of it repeats."""
    run = prompt_cache.replay_agent(prompt_cache.agent_history(steps=30, seed=seed), "stable", budget).report()
    assert run["problems"] == 0 and run["over"] == 0
    assert run["share"] >= 0.5


def _store_tools(mem, units, tag):
    """``_store`` with tool units calling ``look`` or ``fetch`` in turn, so some can be excluded."""
    for n, unit in enumerate(units):
        if unit[0] == "tools":
            calls = [
                {
                    "id": f"{tag}-{n}-{k}",
                    "type": "function",
                    "function": {"name": ("look", "fetch")[(n + k) % 2], "arguments": "{}"},
                }
                for k in range(unit[1])
            ]
            mem.add_messages(
                [{"role": "assistant", "content": None, "tool_calls": calls}]
                + [{"role": "tool", "tool_call_id": c["id"], "content": "x " * unit[2]} for c in calls]
            )
        else:
            mem.add_turn(unit[0], f"{unit[0]} {tag} {n} " + "w " * unit[1])


@settings(max_examples=80, deadline=None)
@given(
    units=st.lists(_unit, min_size=1, max_size=30),
    more=st.lists(_unit, min_size=1, max_size=3),
    budget=st.integers(0, 700),
    keep=st.integers(0, 6),
    exclude=st.sampled_from([None, [], ["fetch"], ["look", "fetch"]]),
    cut=st.sampled_from(["newest", "stable"]),
    where=st.sampled_from(["system", "end", "start"]),
)
@example(  # clearing is what makes the newest question's turns fit: without it the request is refused
    units=[("user", 1), ("tools", 2, 17)],
    more=[("user", 1)],
    budget=42,
    keep=0,
    exclude=None,
    cut="newest",
    where="system",
)
def test_msg_15_random_histories_clear_results_validly(units, more, budget, keep, exclude, cut, where):
    """MSG-15, MSG-16: valid, within budget, question and must-keep fact in, stored turns unchanged, prefix repeated."""
    mem = sm.create_memory()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    _store_tools(mem, units, "a")
    stored = copy.deepcopy(dict(mem.items()))
    options = {
        "token_budget": budget,
        "system": "Be brief.",
        "must_keep": 0.9,
        "cut": cut,
        "facts_at": where,
        "keep_results": keep,
        "exclude_tools": exclude,
    }
    plain = {k: v for k, v in options.items() if k not in ("keep_results", "exclude_tools")}
    try:
        before = mem.get_messages(**options)
    except sm.TokenBudgetError:
        with pytest.raises(sm.TokenBudgetError):  # clearing never refuses a request that fits without it
            mem.get_messages(**plain)
        assert dict(mem.items()) == stored
        return
    assert dict(mem.items()) == stored
    assert not sm.request_problems(before.messages)
    assert before.tokens == sum(cost(m) for m in before.messages) <= budget
    assert "user:allergy" in {e.key for e in before.entries}
    if any(u[0] == "user" for u in units):
        newest = max(i for i, u in enumerate(units) if u[0] == "user")
        assert any(m["role"] == "user" and m["content"].startswith(f"user a {newest} ") for m in before.messages)
    names = {c["id"]: c["function"]["name"] for m in before.messages for c in m.get("tool_calls") or ()}
    cleared = [m for m in before.messages if m["role"] == "tool" and m["content"] == CLEARED]
    assert all(names[m["tool_call_id"]] not in (exclude or ()) for m in cleared)
    results = {v["tool_call_id"]: v["content"] for v in stored.values() if isinstance(v, dict) and v["role"] == "tool"}
    assert all(m["content"] in (CLEARED, results[m["tool_call_id"]]) for m in before.messages if m["role"] == "tool")
    try:
        whole = mem.get_messages(**plain)
    except sm.TokenBudgetError:  # only clearing made the newest question's turns fit
        assert cleared
    else:
        if before.messages != whole.messages:  # cleared units only when the history does not fit whole
            first = next((n for n, u in enumerate(units) if u[0] == "user"), None)
            assert first is not None and history_start(whole)["content"] != f"user a {first} " + "w " * units[first][1]
    assert before.prefix_tokens == sum(cost(m) for m in before.messages[: before.prefix])
    _store_tools(mem, more, "b")
    try:
        after = mem.get_messages(**options)
    except sm.TokenBudgetError:
        return
    still = [m for m in after.messages if m["role"] == "tool" and m["content"] == CLEARED]
    if where != "system" and cleared and still and history_start(after) == history_start(before):
        assert after.messages[: before.prefix] == before.messages[: before.prefix]


@settings(max_examples=40, deadline=None)
@given(
    units=st.lists(_unit, min_size=1, max_size=25),
    budget=st.integers(40, 600),
    keep=st.one_of(st.none(), st.integers(0, 4)),
    cut=st.sampled_from([None, "newest", "stable"]),
    where=st.sampled_from([None, "end", "start"]),
)
def test_int_2_the_pydantic_history_view_is_get_messages_with_its_options(units, budget, keep, cut, where):
    """INT-2, MSG-15: SentinelHistory's view is get_messages with the history's cut, facts' place and clearing."""
    from sentinel_memory.integrations.pydantic_ai import SentinelHistory, messages_from_turns

    mem = sm.create_memory()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    _store_tools(mem, units, "a")
    options = {"cut": cut, "facts_at": where, "keep_results": keep, "exclude_tools": ["fetch"]}
    history = SentinelHistory(mem, budget, system="Be brief.", **options)
    try:
        expected = mem.get_messages(token_budget=budget, system="Be brief.", **options)
    except sm.TokenBudgetError:
        with pytest.raises(sm.TokenBudgetError):
            history.view()
        return
    got = history.view()
    rest = expected.messages[1:]
    assert [type(m).__name__ for m in got] == ["ModelRequest"] + [type(m).__name__ for m in messages_from_turns(rest)]
    cleared = [m for m in expected.messages if m["role"] == "tool" and m["content"] == CLEARED]
    returns = [p for m in got for p in getattr(m, "parts", ()) if type(p).__name__ == "ToolReturnPart"]
    assert len([p for p in returns if p.content == CLEARED]) == len(cleared)
