"""Properties: requests built from the stored data in place hand out only copies, equal to the copied build (MSG-18, PAI-12, OAI-12, OAI-13)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core.cut import CLEARED

_unit = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 30)),
    st.tuples(st.just("assistant"), st.integers(1, 30)),
    st.tuples(st.just("tools"), st.integers(1, 3), st.integers(1, 50)),
)
_options = st.fixed_dictionaries(
    {
        "cut": st.sampled_from([None, "stable"]),
        "facts_at": st.sampled_from([None, "end", "start"]),
        "keep_results": st.one_of(st.none(), st.integers(0, 3)),
        "exclude_tools": st.sampled_from([None, ["fetch"]]),
    }
)


def spoil(value: Any) -> None:
    """Change every list, dict and dataclass inside ``value`` in place."""
    if isinstance(value, list):
        for item in value:
            spoil(item)
        value.append("spoiled")
    elif isinstance(value, dict):
        for item in list(value.values()):
            spoil(item)
        value["spoiled"] = True
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for item in list(vars(value).values()):
            spoil(item)


def timeless(messages: list[Any]) -> list[Any]:
    """The messages with the time of each part made anew at a request (the facts' system part, a cleared result) set aside."""
    import dataclasses

    from pydantic_ai.messages import SystemPromptPart, ToolReturnPart

    def part(p: Any) -> Any:
        anew = isinstance(p, SystemPromptPart) or (isinstance(p, ToolReturnPart) and p.content == "[cleared]")
        return dataclasses.replace(p, timestamp=None) if anew else p

    return [dataclasses.replace(m, parts=[part(p) for p in m.parts]) for m in messages]


def shape(messages: list[Any]) -> list[Any]:
    """pydantic-ai messages as their kinds, parts and the parts' content, ids and arguments (no times)."""
    return [
        (
            type(m).__name__,
            [
                (
                    type(p).__name__,
                    getattr(p, "content", None),
                    getattr(p, "args", None),
                    getattr(p, "tool_call_id", None),
                )
                for p in m.parts
            ],
        )
        for m in messages
    ]


def chat_units(mem: sm.Memory, units: list[tuple[Any, ...]], tag: str) -> None:
    """Store the units as chat turns, tool results as lists of text parts, calls to ``look`` or ``fetch``."""
    for n, unit in enumerate(units):
        if unit[0] == "tools":
            calls = [
                {
                    "id": f"{tag}-{n}-{k}",
                    "type": "function",
                    "function": {"name": ("look", "fetch")[k % 2], "arguments": "{}"},
                }
                for k in range(unit[1])
            ]
            mem.add_messages(
                [{"role": "assistant", "content": None, "tool_calls": calls}]
                + [
                    {"role": "tool", "tool_call_id": c["id"], "content": [{"type": "text", "text": "x " * unit[2]}]}
                    for c in calls
                ]
            )
        else:
            mem.add_messages(
                [{"role": unit[0], "content": [{"type": "text", "text": f"{unit[0]} {tag} {n} " + "w " * unit[1]}]}]
            )


@settings(max_examples=30, deadline=None)
@given(units=st.lists(_unit, min_size=1, max_size=25), budget=st.integers(0, 500), options=_options)
def test_msg_18_the_shared_build_equals_the_copied_one_and_copies_are_the_callers(units, budget, options):
    """MSG-18: shared_messages equals messages for any history and options; spoiling a result changes nothing later."""
    mem = sm.create_memory(clock=lambda: 1_000)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    chat_units(mem, units, "a")
    stored = copy.deepcopy(dict(mem.items()))
    try:
        shared = core.shared_messages(mem.state, now=1_000, token_budget=budget, must_keep=0.9, **options)
    except sm.TokenBudgetError:
        with pytest.raises(sm.TokenBudgetError):
            mem.get_messages(token_budget=budget, must_keep=0.9, **options)
        return
    before = mem.get_messages(token_budget=budget, must_keep=0.9, **options)
    assert shared == before
    spoil(before.messages)
    for entry in before.entries:
        spoil(entry.data)
    assert mem.get_messages(token_budget=budget, must_keep=0.9, **options) == shared
    assert dict(mem.items()) == stored


@settings(max_examples=12, deadline=None)
@given(
    steps=st.lists(st.lists(_unit, min_size=1, max_size=6), min_size=1, max_size=4),
    budget=st.integers(60, 600),
    options=_options,
)
def test_pai_12_views_equal_a_fresh_read_whatever_was_done_to_earlier_views(steps, budget, options):
    """PAI-12: after each step of turns, the view equals the memory's request read back anew, though earlier views were spoiled."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

    from sentinel_memory.integrations.pydantic_ai import SentinelHistory, messages_from_turns

    mem = sm.create_memory(clock=lambda: 1_000)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    history = SentinelHistory(mem, budget, must_keep=0.9, **options)
    for s, units in enumerate(steps):
        said: list[Any] = []
        for n, unit in enumerate(units):
            if unit[0] == "tools":
                ids = [f"{s}-{n}-{k}" for k in range(unit[1])]
                names = [("look", "fetch")[k % 2] for k in range(unit[1])]
                said.append(
                    ModelResponse(
                        parts=[ToolCallPart(a, {"q": [n]}, tool_call_id=i) for a, i in zip(names, ids, strict=True)]
                    )
                )
                said.append(
                    ModelRequest(
                        parts=[
                            ToolReturnPart(a, {"x": "x " * unit[2]}, tool_call_id=i)
                            for a, i in zip(names, ids, strict=True)
                        ]
                    )
                )
            elif unit[0] == "user":
                said.append(ModelRequest(parts=[UserPromptPart(f"user {s} {n} " + "w " * unit[1])]))
            else:
                said.append(ModelResponse(parts=[TextPart(f"assistant {s} {n} " + "w " * unit[1])]))
        history.record(said)
        try:
            expected = mem.get_messages(token_budget=budget, must_keep=0.9, **options).messages
        except sm.TokenBudgetError:
            with pytest.raises(sm.TokenBudgetError):
                history.view()
            continue
        want = messages_from_turns(expected[1:] if expected and expected[0]["role"] == "system" else expected)
        got = history.view()
        assert shape(got[len(got) - len(want) :]) == shape(want)
        assert timeless(got[len(got) - len(want) :]) == timeless(want)
        spoil(got)
        again = history.view()
        assert shape(again[len(again) - len(want) :]) == shape(want)


@settings(max_examples=12, deadline=None)
@given(
    steps=st.lists(st.lists(_unit, min_size=1, max_size=6), min_size=1, max_size=4),
    budget=st.integers(40, 600),
    options=_options,
    system=st.sampled_from([None, "Be brief."]),
)
def test_oai_12_oai_13_budgeted_items_follow_get_messages_and_are_the_callers(steps, budget, options, system):
    """OAI-12, OAI-13, INT-2: the budgeted items are get_messages' messages as items in place, cleared outputs cleared; spoiling them changes nothing."""
    from sentinel_memory.integrations.openai_agents import SentinelSession, items_of_turn

    mem = sm.create_memory(clock=lambda: 1_000)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    session = SentinelSession("s", memory=mem, token_budget=budget, must_keep=0.9, system=system, **options)
    for s, units in enumerate(steps):
        items: list[dict[str, Any]] = []
        for n, unit in enumerate(units):
            if unit[0] == "tools":
                for k in range(unit[1]):
                    name = ("look", "fetch")[k % 2]
                    items.append({"type": "function_call", "call_id": f"{s}-{n}-{k}", "name": name, "arguments": "{}"})
                for k in range(unit[1]):
                    items.append({"type": "function_call_output", "call_id": f"{s}-{n}-{k}", "output": "x " * unit[2]})
            else:
                items.append({"role": unit[0], "content": f"{unit[0]} {s} {n} " + "w " * unit[1]})
        session.add(items)
        everything = session.items()
        try:
            expected = mem.get_messages(token_budget=budget, must_keep=0.9, system=system, **options)
        except sm.TokenBudgetError:
            with pytest.raises(sm.TokenBudgetError):
                session.budgeted_items()
            continue
        got = session.budgeted_items()
        again = copy.deepcopy(got)
        turns = [m for m in expected.messages if m["role"] != "system"]
        assert [i for i in got if i.get("role") != "system"] == [item for m in turns for item in items_of_turn(m)]
        outputs = {i["call_id"]: i["output"] for i in got if i.get("type") == "function_call_output"}
        cleared = {m["tool_call_id"] for m in expected.messages if m["role"] == "tool" and m["content"] == CLEARED}
        assert {c for c, o in outputs.items() if o == CLEARED} == cleared
        assert [m["content"] for m in expected.messages if m["role"] == "system"] == [
            i["content"] for i in got if i.get("role") == "system"
        ]
        spoil(got)
        assert session.budgeted_items() == again and session.items() == everything


def chat_batch(units: list[tuple[Any, ...]], tag: str) -> list[dict[str, Any]]:
    """The units as one batch of chat messages, as ``chat_units`` stores them."""
    batch: list[dict[str, Any]] = []
    for n, unit in enumerate(units):
        if unit[0] == "tools":
            calls = [
                {"id": f"{tag}-{n}-{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
                for k in range(unit[1])
            ]
            batch.append({"role": "assistant", "content": None, "tool_calls": calls})
            batch += [
                {"role": "tool", "tool_call_id": c["id"], "content": [{"type": "text", "text": "x " * unit[2]}]}
                for c in calls
            ]
        else:
            batch.append({"role": unit[0], "content": [{"type": "text", "text": f"{unit[0]} {tag} {n}"}]})
    return batch


@settings(max_examples=30, deadline=None)
@given(batches=st.lists(st.lists(_unit, min_size=1, max_size=6), min_size=1, max_size=4))
def test_msg_19_what_add_messages_was_given_and_gave_back_is_the_callers(batches):
    """MSG-19: after each batch, spoiling the messages passed and the entries returned changes neither the memory nor a request."""
    mem = sm.create_memory(clock=lambda: 1_000)
    model = sm.create_memory(clock=lambda: 1_000)  # the same batches, given as copies nobody changes
    for b, units in enumerate(batches):
        batch = chat_batch(units, str(b))
        model.add_messages(copy.deepcopy(batch))
        entries = mem.add_messages(batch)
        spoil(batch)
        for entry in entries:
            spoil(entry.data)
        assert dict(mem.items()) == dict(model.items())
        assert mem.get_messages(token_budget=10_000) == model.get_messages(token_budget=10_000)


@settings(max_examples=8, deadline=None)
@given(
    steps=st.lists(st.lists(_unit, min_size=1, max_size=4), min_size=1, max_size=3),
    budget=st.integers(150, 600),
    rewrite=st.booleans(),
)
def test_lc_14_each_model_call_gets_what_a_fresh_middleware_sends_though_the_model_spoiled_the_last(
    steps, budget, rewrite
):
    """LC-14: through an agent whose model spoils what it gets, each call's messages equal a fresh middleware's over the same memory."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

    seen: list[Any] = []

    class Spoiling(GenericFakeChatModel):  # type: ignore[misc]
        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            seen.append([m.model_copy(deep=True) for m in messages])
            spoil(messages)
            return super()._generate(messages, *args, **kwargs)

    mem = sm.create_memory(clock=lambda: 1_000)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    kept = SentinelMemoryMiddleware(mem, budget)
    for s, units in enumerate(steps):
        chat_units(mem, units, str(s))
        if rewrite and s:
            key = next(key for key in mem.keys() if key.startswith("chat:"))
            mem.remember(key, {"role": "user", "content": f"rewritten {s}"}, importance=0.3)
        question = {"role": "user", "content": f"question {s}"}
        answers = iter([AIMessage(content="ok")] * 2)
        try:
            create_agent(Spoiling(messages=answers), middleware=[kept]).invoke({"messages": [question]})
        except sm.TokenBudgetError:
            return
        got = seen.pop()
        mem.forget(max((k for k in mem.keys() if k.startswith("chat:")), key=lambda k: int(k[5:])))  # the answer
        mem.forget(max((k for k in mem.keys() if k.startswith("chat:")), key=lambda k: int(k[5:])))  # the question
        create_agent(
            Spoiling(messages=iter([AIMessage(content="ok")] * 2)), middleware=[SentinelMemoryMiddleware(mem, budget)]
        ).invoke({"messages": [question]})
        assert got == seen.pop()
        mem.forget(max((k for k in mem.keys() if k.startswith("chat:")), key=lambda k: int(k[5:])))
        mem.forget(max((k for k in mem.keys() if k.startswith("chat:")), key=lambda k: int(k[5:])))
