"""The stable cut's memo never changes a request: memoised and read in full agree on random histories (MSG-17)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core import request
from sentinel_memory.stores.contract import MemoryStore

_pair = st.tuples(st.just("pair"), st.integers(1, 40), st.integers(1, 40))
_op = st.one_of(
    _pair,
    _pair,
    st.tuples(st.just("pair_tools"), st.integers(1, 3), st.integers(1, 60)),
    st.tuples(st.just("user"), st.integers(1, 40), st.sampled_from([None, 0.2, 0.9])),
    st.tuples(st.just("assistant"), st.integers(1, 40), st.sampled_from([None, 0.2, 0.9])),
    st.tuples(st.just("tools"), st.integers(1, 3), st.integers(1, 60)),
    st.tuples(st.just("open"), st.integers(1, 2)),  # a call whose results come with "answer", if ever
    st.tuples(st.just("answer"), st.integers(1, 40)),
    st.tuples(st.just("ttl"), st.integers(1, 30), st.integers(1, 5_000)),
    st.tuples(st.just("tick"), st.integers(1, 3_000)),
    st.tuples(st.just("forget"), st.integers(0, 1_000)),
    st.tuples(st.just("reload")),
    st.tuples(st.just("fact"), st.integers(0, 5)),
    st.tuples(st.just("undone"), st.integers(1, 40)),  # a group that stores a turn, asks, then raises
)


class _Undone(Exception):
    """What ends a group the test undoes."""


class _Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def _apply(mem, op, n, clock, store, limit, opened, options):
    """One change of the memory; returns the memory (a reload gives a new one)."""
    kind = op[0]
    if kind == "undone":  # MSG-18: the turn's seq is given again by the next change, with the request's views kept
        with contextlib.suppress(_Undone), mem.group():
            mem.add_turn("user", f"undone {n} " + "w " * op[1])
            with contextlib.suppress(sm.TokenBudgetError):
                mem.get_messages(**options)
            raise _Undone
        return mem
    if kind == "pair":
        mem.add_turn("user", f"question {n} " + "w " * op[1])
        mem.add_turn("assistant", f"answer {n} " + "w " * op[2])
    elif kind == "pair_tools":
        mem.add_turn("user", f"question {n} " + "w " * op[1])
        op = ("tools", *op[1:])
    if kind in ("user", "assistant"):
        mem.add_turn(kind, f"{kind} {n} " + "w " * op[1], importance=op[2])
    if op[0] == "tools":
        calls = [
            {"id": f"c{n}-{k}", "type": "function", "function": {"name": ("look", "fetch")[k % 2], "arguments": "{}"}}
            for k in range(op[1])
        ]
        mem.add_messages(
            [{"role": "assistant", "content": None, "tool_calls": calls}]
            + [{"role": "tool", "tool_call_id": c["id"], "content": "x " * op[2]} for c in calls]
        )
    elif kind == "open":
        calls = [
            {"id": f"o{n}-{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
            for k in range(op[1])
        ]
        mem.add_messages([{"role": "assistant", "content": None, "tool_calls": calls}])
        opened[:] = [call["id"] for call in calls]
    elif kind == "answer":
        answers, opened[:] = opened[:], []  # the results of the newest open call, after a request saw it open
        mem.add_messages([{"role": "tool", "tool_call_id": ident, "content": "y " * op[1]} for ident in answers])
    elif kind == "ttl":
        mem.add_turn("user" if n % 2 else "assistant", f"brief {n} " + "w " * op[1], ttl=op[2])
    elif kind == "tick":
        clock.now += op[1]
    elif kind == "forget":
        turns = sorted(k for k in mem.keys() if k.startswith("chat:"))
        if turns:
            mem.forget(turns[op[1] % len(turns)])
    elif kind == "reload":
        mem.save()
        mem = sm.create_memory(limit=limit, store=store, clock=clock)
    else:
        mem.remember(f"fact:{op[1]}", f"fact number {op[1]} " + "v " * op[1], importance=0.95)
    return mem


@settings(max_examples=120, deadline=None)
@given(
    ops=st.lists(_op, min_size=8, max_size=60),
    limit=st.sampled_from([None, None, 12, 30]),
    budget=st.integers(40, 300),
    low=st.sampled_from([0, 0.3, 0.5, 1]),
    keep=st.sampled_from([None, 0, 1, 3]),
    exclude=st.sampled_from([None, ["fetch"]]),
    where=st.sampled_from(["system", "end", "start"]),
)
def test_msg_17_the_memoised_cut_is_the_cut_read_from_every_turn(ops, limit, budget, low, keep, exclude, where):
    """MSG-17, MSG-18: after every change (turns, tool calls, evictions, expiry, forgets, reloads, a group undone after a
    request) the memoised request with the kept views equals the one read from every turn anew."""
    clock, store = _Clock(), MemoryStore()
    mem = sm.create_memory(limit=limit, store=store, clock=clock)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    options = {
        "token_budget": budget,
        "system": "Be brief.",
        "must_keep": 0.9,
        "cut": "stable",
        "low_mark": low,
        "facts_at": where,
        "keep_results": keep,
        "exclude_tools": exclude,
    }
    memo_taken = request._memo_taken
    opened: list[str] = []
    disagreed: list[tuple] = []

    def watched(memo, units, oldest_user, *rest):
        got = memo_taken(memo, units, oldest_user, *rest)
        if got is None and oldest_user is not None:
            disagreed.append(rest)
        return got

    for n, op in enumerate(ops):
        try:
            mem = _apply(mem, op, n, clock, store, limit, opened, options)
        except ValueError:
            continue  # a message MSG-6 refuses here (a result after a forgotten call): nothing changed
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(request, "_memo_taken", watched)
            try:
                memoised = mem.get_messages(**options)
            except sm.TokenBudgetError as error:
                memoised = ("refused", error.needed)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(request, "_memo_taken", lambda *args: None)  # the reference: every unit read
            patch.setattr(request, "_memo_whole", lambda *args: None)
            split = mem.state.index.split()
            kept, split.views = split.views, {}  # and every turn read anew (MSG-18); the kept views stay for later
            try:
                reference = mem.get_messages(**options)
            except sm.TokenBudgetError as error:
                reference = ("refused", error.needed)
            finally:
                split.views = kept
        assert memoised == reference
        assert not disagreed, "the memo disagreed with the units the fill read"
