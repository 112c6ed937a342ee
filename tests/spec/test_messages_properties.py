"""Chat messages as properties: the library's get_messages against MSG-1 .. MSG-4 restated over the model (CTX-11)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm

from .model import Model, model_estimate

T0 = 1_000_000


def model_turn(key: str, data: object) -> tuple[str, str] | None:
    """MSG-1 restated: chat:N of ASCII digits, holding {"role": non-empty str, "content": str} or "role: content" of a chat role."""
    tail = key[5:]
    if not (key.startswith("chat:") and tail.isascii() and tail.isdigit()):
        return None
    if type(data) is dict and set(data) == {"role", "content"}:
        if type(data["role"]) is str and data["role"] and type(data["content"]) is str:
            return data["role"], data["content"]
        return None
    if isinstance(data, str) and ": " in data and data.split(": ", 1)[0] in ("user", "assistant", "system", "tool"):
        role, content = data.split(": ", 1)
        return role, content
    return None


def expected(model: Model, budget, share, query, now):
    """MSG-2, MSG-3 restated: turns newest first within budget less the facts' share, facts, then older turns."""
    live = model.live(now)
    turns = sorted(
        (e for e in live if model_turn(e.key, e.data)),
        key=lambda e: (int(e.key[5:]), e.updated_at, e.seq),
        reverse=True,
    )
    facts = Model(recency_window=model.recency_window)
    facts.entries = {e.key: e for e in live if not model_turn(e.key, e.data)}
    costs = [model_estimate(model_turn(e.key, e.data)[1]) + 3 for e in turns]
    taken, spent = 0, 0

    def walk(room):  # on from the newest turn not taken, up to the first that does not fit
        nonlocal taken, spent
        while taken < len(turns) and spent + costs[taken] <= room:
            spent += costs[taken]
            taken += 1

    walk(budget - (math.floor(budget * share) if facts.entries else 0))
    system, chosen = [], []
    left = budget - spent - 3
    if left >= 0 and model_estimate("") <= left:
        text, chosen = facts.context(left, query, model_estimate, lambda e: f"{e.key}: {text_of(e)}", "\n", now)
        if chosen:
            system = [{"role": "system", "content": text}]
            spent += model_estimate(text) + 3
    walk(budget)
    said = [dict(zip(("role", "content"), model_turn(e.key, e.data), strict=True)) for e in reversed(turns[:taken])]
    return system + said, spent, len(live) - len(chosen) - taken


def text_of(entry) -> str:
    message = entry.data
    if (
        type(message) is dict
        and set(message) == {"role", "content"}
        and all(type(v) is str for v in message.values())
        and message["role"]
    ):
        return f"{message['role']}: {message['content']}"
    return entry.text()


entries = st.lists(
    st.tuples(
        st.sampled_from(["chat:1", "chat:2", "chat:3", "chat:07", "chat:x", "user:name", "note", "cart", "chat:4"]),
        st.one_of(
            st.builds(
                lambda role, content: {"role": role, "content": content},
                st.sampled_from(["user", "assistant", "system", ""]),
                st.sampled_from(["hi", "what about peanuts?", "a longer answer about the menu and the order", ""]),
            ),
            st.sampled_from(["user: legacy turn", "no role", "Jakub", ": empty role", "Reminder: buy milk"]),
            st.integers(0, 9),
        ),
        st.sampled_from([0.0, 0.3, 0.5, 0.9]),
        st.sampled_from([None, 10, 1000]),
    ),
    max_size=10,
)


@settings(max_examples=200)
@given(
    items=entries,
    budget=st.integers(0, 90),
    share=st.sampled_from([None, 0.0, 0.2, 0.5, 1.0, 1.5]),
    query=st.sampled_from([None, "peanuts", "order menu"]),
    later=st.sampled_from([0, 10, 5000]),
)
def test_msg_2_messages_are_the_restated_three_steps(items, budget, share, query, later):
    """MSG-1, MSG-2, MSG-3, MSG-4, CTX-11: get_messages equals the rules restated over the model, never exceeds the budget, and changes nothing."""
    mem = sm.create_memory(clock=lambda: T0)
    model = Model()
    for key, data, importance, ttl in items:
        mem.remember(key, data, importance=importance, ttl=ttl)
        model.remember(key, data, importance, ttl, T0)
    now = T0 + later
    clock_mem = sm.create_memory(clock=lambda: now, load=False)
    clock_mem._state = mem.state  # the same state read at a later moment
    before = sm.core.to_document(mem.state)
    result = clock_mem.get_messages(token_budget=budget, query=query, facts_share=share)
    messages, tokens, omitted = expected(model, budget, 0.5 if share not in (0.0, 0.2, 0.5, 1.0) else share, query, now)
    assert list(result.messages) == messages
    assert result.tokens == tokens <= budget
    assert result.omitted == omitted
    assert sum(model_estimate(m["content"]) + 3 for m in result.messages) == result.tokens
    assert sm.core.to_document(mem.state) == before
    # CTX-11: a context of one kind holds only that kind, and counts only that kind as omitted.
    for kind in ("facts", "turns"):
        ctx = clock_mem.get_context(token_budget=200, only=kind)
        assert all((model_turn(e.key, e.data) is not None) == (kind == "turns") for e in ctx.entries)
        live_of_kind = [e for e in model.live(now) if (model_turn(e.key, e.data) is not None) == (kind == "turns")]
        assert len(ctx.entries) + ctx.omitted == len(live_of_kind)
