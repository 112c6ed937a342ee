"""Chat messages as properties: the library's get_messages against MSG-1 .. MSG-9 restated over the model (CTX-11)."""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm

from .model import Model, model_estimate

T0 = 1_000_000
ROLES = ("system", "developer", "user", "assistant", "tool")


def call(i: int) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": "menu", "arguments": '{"dish":' + str(i) + "}"}}


#: Messages in their stored form (MSG-5) that the strategy stores as they are.
STORED = [
    {"role": "assistant", "content": None, "tool_calls": [call(1)]},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [call(1), call(2)]},
    {"role": "tool", "content": "risotto, no nuts", "tool_call_id": "c1"},
    {"role": "tool", "content": "curry with peanuts", "tool_call_id": "c2"},
    {"role": "user", "content": [{"type": "text", "text": "what about "}, {"type": "text", "text": "peanuts?"}]},
    {"role": "developer", "content": "Answer briefly."},
]


def model_message(key: str, data: object) -> dict | None:
    """MSG-1 restated: chat:N of ASCII digits holding a message (two-key or stored form) or "role: content" of a chat role."""
    tail = key[5:]
    if not (key.startswith("chat:") and tail.isascii() and tail.isdigit()):
        return None
    if type(data) is dict and set(data) == {"role", "content"}:
        if type(data["role"]) is str and data["role"] and type(data["content"]) is str:
            return dict(data)
    if data in STORED:
        return dict(data)
    if isinstance(data, str) and ": " in data and data.split(": ", 1)[0] in ("user", "assistant", "system", "tool"):
        role, content = data.split(": ", 1)
        return {"role": role, "content": content}
    return None


def body(message: dict) -> str:
    """TXT-4 restated: the content's text, then each call as name(arguments), joined by a space."""
    content = message["content"]
    if isinstance(content, list):
        content = "".join(p["text"] for p in content if p["type"] == "text")
    pieces = [content] if content else []
    pieces += [f"{c['function']['name']}({c['function']['arguments']})" for c in message.get("tool_calls", [])]
    return " ".join(pieces)


def units_of(turns: list) -> tuple[list, list]:
    """MSG-7 restated: a call and all its answers are one unit; orphans, abandoned calls and other roles go; the last open call is pending."""
    units, current, waiting = [], None, set()
    for entry in turns:
        message = model_message(entry.key, entry.data)
        if message["role"] not in ROLES:
            continue
        if message["role"] == "tool":
            if current is not None and message.get("tool_call_id") in waiting:
                current.append((entry, message))
                waiting.discard(message["tool_call_id"])
                if not waiting:
                    units.append(current)
                    current = None
            continue
        current = None
        if message.get("tool_calls"):
            current, waiting = [(entry, message)], {c["id"] for c in message["tool_calls"]}
        else:
            units.append([(entry, message)])
    return units, [entry.key for entry, _ in current or []]


def expected(model: Model, budget, share, query, now, system=None, must_keep=None):
    """MSG-2, MSG-3, MSG-9 restated; "error" where TokenBudgetError is due."""
    live = model.live(now)
    turns = sorted(
        (e for e in live if model_message(e.key, e.data)), key=lambda e: (int(e.key[5:]), e.updated_at, e.seq)
    )
    facts = Model(recency_window=model.recency_window)
    facts.entries = {e.key: e for e in live if not model_message(e.key, e.data)}
    units, pending = units_of(turns)
    users = [i for i, unit in enumerate(units) if unit[0][1]["role"] == "user"]
    units = units[users[0] :] if users else []
    newest = users[-1] - users[0] if users else len(units)
    costs = [sum(model_estimate(body(m)) + 3 for _, m in unit) for unit in units]
    required = sum(costs[newest:])
    own = model_estimate(system) + 3 if system is not None else 0
    if own + required > budget:
        return "error"
    keep = [
        e.key
        for e in facts.entries.values()
        if must_keep is not None and e.importance >= must_keep and not e.expired(now)
    ]

    def fmt(e):
        return f"{e.key}: {text_of(e)}"

    def build(reserve):
        taken, spent = len(units) - newest, required

        def walk(fixed, room):
            nonlocal taken, spent
            while taken < len(units) and fixed + spent + costs[len(units) - 1 - taken] <= room:
                spent += costs[len(units) - 1 - taken]
                taken += 1

        walk(own, budget - reserve)
        left = budget - spent - 3 - (model_estimate(system) + model_estimate("\n\n") if system is not None else 0)
        text, chosen = "", []
        if left >= 0:
            text, chosen = facts.context(left, query, model_estimate, fmt, "\n", now, must_keep)
        if system is not None:
            content = system + "\n\n" + text if chosen else system
        else:
            content = text if chosen else None
        head = 0 if content is None else model_estimate(content) + 3
        walk(head, budget)
        return taken, spent, content, head, chosen

    taken, spent, content, head, chosen = build(
        math.floor(budget * share) if facts.entries and live_facts(facts, now) else 0
    )
    if not set(keep) <= set(chosen):
        taken, spent, content, head, chosen = build(budget)
        if not set(keep) <= set(chosen):
            return "error"
    kept = units[len(units) - taken :]
    while kept and kept[0][0][1]["role"] != "user":
        spent -= sum(model_estimate(body(m)) + 3 for _, m in kept[0])
        kept = kept[1:]
    said = [m for unit in kept for _, m in unit]
    messages = ([] if content is None else [{"role": "system", "content": content}]) + said
    return messages, head + spent, len(live) - len(chosen) - len(said), pending


def live_facts(facts: Model, now) -> bool:
    return bool(facts.live(now))


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
        st.sampled_from(
            [
                "chat:1",
                "chat:2",
                "chat:3",
                "chat:07",
                "chat:x",
                "user:name",
                "note",
                "cart",
                "chat:4",
                "chat:5",
                "chat:6",
            ]
        ),
        st.one_of(
            st.builds(
                lambda role, content: {"role": role, "content": content},
                st.sampled_from(["user", "assistant", "system", "", "tool", "human"]),
                st.sampled_from(["hi", "what about peanuts?", "a longer answer about the menu and the order", ""]),
            ),
            st.sampled_from(STORED),
            st.just({"role": "user", "content": "hi", "mood": "ok"}),  # more keys than a message: a fact
            st.sampled_from(["user: legacy turn", "no role", "Jakub", ": empty role", "Reminder: buy milk"]),
            st.integers(0, 9),
        ),
        st.sampled_from([0.0, 0.3, 0.5, 0.9]),
        st.sampled_from([None, 10, 1000]),
    ),
    max_size=12,
)


def _turns(*pairs: tuple[str, object]) -> list:
    return [(key, data, 0.3, None) for key, data in pairs]


LONG = "a longer answer about the menu and the order"
#: Histories that a random draw reaches rarely: a tool exchange after a question, a role no chat API takes
#: between questions, facts that compete with turns for the budget.
EXAMPLES = [
    _turns(("chat:1", {"role": "user", "content": "hi"}), ("chat:2", STORED[0]), ("chat:3", STORED[2])),
    _turns(
        ("chat:1", {"role": "user", "content": "hi"}),
        ("chat:2", {"role": "human", "content": "hi"}),
        ("chat:3", {"role": "user", "content": "what about peanuts?"}),
    ),
    [(f"fact:{i}", f"the guest likes dish number {i} a lot", 0.5, None) for i in range(5)]
    + _turns(*[(f"chat:{n}", {"role": ("user", "assistant")[n % 2], "content": LONG}) for n in range(1, 9)]),
    [("cart", "2 items", 0.5, None)]
    + _turns(*[(f"chat:{n}", {"role": ("user", "assistant")[n % 2], "content": LONG}) for n in range(1, 9)]),
]


@settings(max_examples=300)
@example(items=EXAMPLES[0], budget=120, share=None, query=None, later=0, system=None, must_keep=None)
@example(items=EXAMPLES[1], budget=120, share=None, query=None, later=0, system=None, must_keep=None)
@example(items=EXAMPLES[2], budget=80, share=None, query=None, later=0, system=None, must_keep=None)
@example(items=EXAMPLES[3], budget=80, share=None, query=None, later=0, system=None, must_keep=None)
@given(
    items=entries,
    budget=st.integers(0, 120),
    share=st.sampled_from([None, 0.0, 0.2, 0.5, 1.0, 1.5]),
    query=st.sampled_from([None, "peanuts", "order menu"]),
    later=st.sampled_from([0, 10, 5000]),
    system=st.sampled_from([None, "Be brief.", "You are the waiter of a small restaurant in Brno."]),
    must_keep=st.sampled_from([None, 0.5, 0.9]),
)
def test_msg_2_messages_are_the_restated_steps(items, budget, share, query, later, system, must_keep):
    """MSG-1, MSG-2, MSG-3, MSG-4, MSG-7, MSG-8, MSG-9, CTX-11: get_messages equals the rules restated over the model, is a valid request within the budget, and changes nothing."""
    mem = sm.create_memory(clock=lambda: T0)
    model = Model()
    for key, data, importance, ttl in items:
        mem.remember(key, data, importance=importance, ttl=ttl)
        model.remember(key, data, importance, ttl, T0)
        if key == "note":  # a read between changes: the index's split of turns and facts is then kept current
            with contextlib.suppress(sm.TokenBudgetError):
                mem.get_messages(token_budget=budget)
    now = T0 + later
    clock_mem = sm.create_memory(clock=lambda: now, load=False)
    clock_mem._state = mem.state  # the same state read at a later moment
    before = sm.core.to_document(mem.state)
    want = expected(model, budget, 0.5 if share not in (0.0, 0.2, 0.5, 1.0) else share, query, now, system, must_keep)
    if want == "error":
        with pytest.raises(sm.TokenBudgetError) as raised:
            clock_mem.get_messages(
                token_budget=budget, query=query, facts_share=share, system=system, must_keep=must_keep
            )
        assert raised.value.needed > budget == raised.value.budget
        return
    result = clock_mem.get_messages(
        token_budget=budget, query=query, facts_share=share, system=system, must_keep=must_keep
    )
    messages, tokens, omitted, pending = want
    assert result.messages == messages
    assert result.tokens == tokens <= budget
    assert result.omitted == omitted
    assert [e.key for e in result.pending] == pending
    # MSG-8, MSG-10: a valid request, or [] (flagged) when there is nothing to send
    assert sm.request_problems(result.messages) == ([] if result.messages else [sm.core.chat.EMPTY_REQUEST])
    assert result.messages or (system is None and result.entries == ())
    assert (
        sum(model_estimate(body(m) if m["role"] != "system" else m["content"]) + 3 for m in result.messages)
        == result.tokens
    )
    assert sm.core.to_document(mem.state) == before
    # CTX-11: a context of one kind holds only that kind, and counts only that kind as omitted.
    for kind in ("facts", "turns"):
        ctx = clock_mem.get_context(token_budget=200, only=kind)
        assert all((model_message(e.key, e.data) is not None) == (kind == "turns") for e in ctx.entries)
        live_of_kind = [e for e in model.live(now) if (model_message(e.key, e.data) is not None) == (kind == "turns")]
        assert len(ctx.entries) + ctx.omitted == len(live_of_kind)


def agent_step(i: int) -> list[dict]:
    return [
        {"role": "user", "content": f"question {i} about the menu?"},
        {"role": "assistant", "content": None, "tool_calls": [call(i)]},
        {"role": "tool", "content": f"dish {i}: risotto", "tool_call_id": f"c{i}"},
        {"role": "assistant", "content": f"answer {i}."},
    ]


@settings(max_examples=100)
@given(
    steps=st.integers(1, 12),
    cut=st.integers(0, 3),
    budget=st.integers(0, 200),
    limit=st.integers(3, 40),
    system=st.sampled_from([None, "Be brief."]),
)
def test_msg_8_every_request_of_an_agent_history_is_valid(steps, cut, budget, limit, system):
    """MSG-6, MSG-7, MSG-8, MSG-9: an agent's history, evicted by its limit and cut mid-step, gives a valid request or TokenBudgetError."""
    mem = sm.create_memory(clock=lambda: T0, limit=limit)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for i in range(steps):
        mem.add_messages(agent_step(i)[: 4 if i < steps - 1 else cut + 1])
    try:
        result = mem.get_messages(token_budget=budget, system=system, must_keep=0.9)
    except sm.TokenBudgetError as error:
        assert error.needed > budget
        return
    assert sm.request_problems(result.messages) == []
    assert result.tokens <= budget
    assert any(e.key == "user:allergy" for e in result.entries)
    users = [e for e in mem.get_recent(10**6) if e.key.startswith("chat:") and mem[e.key]["role"] == "user"]
    if users:
        assert users[0].key in [e.key for e in result.entries]  # the newest question (MSG-9)
    newest = max(
        (e for e in mem.get_recent(10**6) if e.key.startswith("chat:")), key=lambda e: int(e.key[5:]), default=None
    )
    if cut == 1 and newest is not None and newest.data.get("tool_calls"):
        assert [e.key for e in result.pending] == [newest.key]  # the call of the cut step is unanswered (MSG-7)


json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "x", "function", "c1", "text"])
)
fields = st.sampled_from(
    ["role", "content", "tool_calls", "tool_call_id", "name", "mood", "id", "type", "function", "arguments", "text"]
)
shapes = st.recursive(
    json_leaves | st.sampled_from(list(ROLES)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(fields, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500)
@given(
    data=st.one_of(
        shapes, st.sampled_from(STORED), st.builds(lambda m, k, v: {**m, k: v}, st.sampled_from(STORED), fields, shapes)
    )
)
def test_msg_5_the_stored_form_check_agrees_with_check_message(data):
    """MSG-5, MSG-1, TXT-4: is_stored_message, read on every walked turn, is exactly "check_message gives it back unchanged"."""
    try:
        reference = sm.core.chat.check_message(data) == data
    except (TypeError, ValueError):
        reference = False
    assert sm.core.chat.is_stored_message(data) == reference
