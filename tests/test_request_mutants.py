"""What the mutation tool found the get_messages path's tests let through: core/request.py (MSG-2, MSG-9, MSG-11, MSG-12)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm


def asking() -> sm.Memory:
    """A memory on a fixed clock holding one user question."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.add_turn("user", "What is in the risotto tonight?")
    return mem


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"system": 5}, TypeError, "system must be a str, got int"),
        ({"system": "\ud800"}, TypeError, "system holds a lone surrogate, which no chat request can carry"),
        (
            {"token_budget": 3},
            sm.TokenBudgetError,
            "the turns from the newest user message on need 11 tokens, 8 more than the budget of 3",
        ),
        (
            {"token_budget": 3, "system": "Be brief."},
            sm.TokenBudgetError,
            "the system prompt and the turns from the newest user message on need 17 tokens, 14 more than the budget of 3",
        ),
        ({"cut": "old"}, ValueError, "cut must be one of ('newest', 'stable'), got 'old'"),
        ({"facts_at": "middle"}, ValueError, "facts_at must be one of ('system', 'end', 'start'), got 'middle'"),
        (
            {"keep_results": 1, "exclude_tools": "search"},
            TypeError,
            "exclude_tools must be a list or tuple of tool names, got str",
        ),
        ({"keep_results": 1, "exclude_tools": ["search", 5]}, TypeError, "exclude_tools[1] must be a str, got int"),
    ],
)
def test_msg_2_each_refused_request_says_exactly_what_failed(options, error, says):
    """MSG-2, MSG-9, MSG-11, MSG-12, MSG-15: a bad system prompt, a budget the question does not fit, an unknown cut or place and exclude_tools that is no list of names say what failed, exactly."""
    mem = asking()
    with pytest.raises(error) as raised:
        mem.get_messages(**{"token_budget": 100, **options})
    assert str(raised.value) == says
    assert len(mem.get_messages(token_budget=100).messages) == 1  # the step after: the next request is served


def waiter() -> sm.Memory:
    """A fact of importance 0.8 and twelve turns, on a fixed clock."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:allergy", "allergic to peanuts and tree nuts and sesame seeds", importance=0.8)
    for i in range(12):
        mem.add_turn("user" if i % 2 == 0 else "assistant", f"turn number {i} about the menu")
    return mem


def test_msg_2_a_fact_of_exactly_must_keep_importance_is_kept_at_exactly_the_budget_it_needs():
    """MSG-2, MSG-9: a fact whose importance equals must_keep is kept before older turns; one token short is a TokenBudgetError."""
    result = waiter().get_messages(token_budget=41, must_keep=0.8, facts_share=0.1)
    assert [e.key for e in result.entries] == ["user:allergy", "chat:11", "chat:12"] and result.tokens == 41
    with pytest.raises(sm.TokenBudgetError) as raised:
        waiter().get_messages(token_budget=40, must_keep=0.8, facts_share=0.1)
    assert (raised.value.needed, raised.value.budget) == (41, 40)
    above = waiter().get_messages(token_budget=41, must_keep=0.81, facts_share=0.1)  # not a must-keep fact
    assert "user:allergy" not in [e.key for e in above.entries]


def test_msg_11_a_stable_cut_keeps_the_start_with_the_facts_in_the_system_message():
    """MSG-11: cut="stable" alone (facts in the system message) keeps the history's start when turns are added; "newest" moves it."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:diet", "vegetarian")
    for i in range(30):
        mem.add_turn("user" if i % 2 == 0 else "assistant", f"turn number {i} about the menu")
    first = {cut: mem.get_messages(token_budget=120, cut=cut).messages[1] for cut in ("newest", "stable")}
    mem.add_turn("assistant", "turn number 30 about the menu")
    mem.add_turn("user", "turn number 31 about the menu")
    then = {cut: mem.get_messages(token_budget=120, cut=cut).messages[1] for cut in ("newest", "stable")}
    assert then["stable"] == first["stable"] == {"role": "user", "content": "turn number 24 about the menu"}
    assert first["newest"]["content"] == "turn number 20 about the menu" != then["newest"]["content"]


def free_diet(text: str) -> int:
    """Words, but a text naming the diet costs nothing: a fact that fits in no room at all."""
    return 0 if "vegetarian" in text else len(text.split())


@pytest.mark.parametrize(("budget", "with_fact"), [(7, False), (8, True), (9, True)])
def test_msg_2_a_fact_that_costs_nothing_fits_when_the_turns_leave_exactly_its_message(budget, with_fact):
    """MSG-2, MSG-3: the facts get what the turns leave; left exactly the system message's 3 tokens, a fact costing 0 is in."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:diet", "vegetarian")
    mem.add_turn("user", "hello there")
    result = mem.get_messages(token_budget=budget, tokenizer=free_diet)
    facts = [{"role": "system", "content": "user:diet: vegetarian"}] if with_fact else []
    assert result.messages == [*facts, {"role": "user", "content": "hello there"}]
    assert result.tokens == (8 if with_fact else 5)


@pytest.mark.parametrize(("budget", "sent"), [(15, 2), (16, 4)])
def test_msg_2_older_turns_fill_up_to_exactly_the_budget(budget, sent):
    """MSG-2, MSG-9: an older unit that brings the request to exactly the budget is taken; one token less and it is not."""
    mem = sm.create_memory(clock=lambda: 1000)
    for i, text in enumerate(["u0 x", "a1 y", "u2 z", "a3 w"]):
        mem.add_turn("user" if i % 2 == 0 else "assistant", text)
    result = mem.get_messages(token_budget=budget)
    assert len(result.messages) == sent and result.tokens == 4 * sent


def one_more(text: str) -> int:
    """Words and one more: even the empty text costs a token."""
    return len(text.split()) + 1


@pytest.mark.parametrize(("budget", "with_fact"), [(8, False), (9, False), (11, False), (12, True)])
def test_msg_2_facts_whose_room_is_below_the_empty_texts_cost_are_left_out_without_an_error(budget, with_fact):
    """MSG-2, MSG-3: when what the turns leave is less than the empty text's count, the turns are sent without facts, no error."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:diet", "vegetarian", importance=1.0)
    mem.add_turn("user", "hello there")
    result = mem.get_messages(token_budget=budget, tokenizer=one_more)
    assert len(result.messages) == (2 if with_fact else 1) and result.messages[-1]["content"] == "hello there"


def test_msg_15_units_that_are_always_in_and_fit_exactly_are_not_cleared():
    """MSG-15: when the newest user message and what follows it (a call and its result) fit the budget exactly, with a system prompt, keep_results clears nothing; one token less clears the result."""
    mem = sm.create_memory(clock=lambda: 1000)
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
    mem.add_messages(
        [
            {"role": "user", "content": "What is the weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "rain all week, 4 degrees, wind from the north"},
        ]
    )
    plain = mem.get_messages(token_budget=10_000, system="Be brief.")
    exact = mem.get_messages(token_budget=plain.tokens, system="Be brief.", keep_results=0)
    assert exact.messages == plain.messages
    short = mem.get_messages(token_budget=plain.tokens - 1, system="Be brief.", keep_results=0)
    assert short.messages[-1] == {"role": "tool", "content": "[cleared]", "tool_call_id": "c1"}


def fact_and_turns(words: int) -> sm.Memory:
    """A fact of ``words`` words (importance 0.6) and ten turns about the menu, on a fixed clock."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:allergy", " ".join(["peanuts"] * words), importance=0.6)
    for i in range(10):
        mem.add_turn("user" if i % 2 == 0 else "assistant", f"turn {i} about the menu tonight")
    return mem


def test_msg_2_the_first_walk_counts_the_system_prompt_whole_and_leaves_the_facts_their_share():
    """MSG-2: the turns taken before the facts leave the facts' share after the system prompt counted with its message's tokens, so a fact that fits the share is in."""
    got = fact_and_turns(3).get_messages(token_budget=49, system="Be brief and kind.", facts_share=0.3)
    assert [e.key for e in got.entries] == ["user:allergy", "chat:9", "chat:10"] and got.tokens == 40


def test_msg_2_without_a_system_prompt_the_first_walk_counts_nothing_for_it():
    """MSG-2: with no system prompt, the turns taken before the facts count no prompt at all: older turns that fit are taken, and the fact that no longer fits is not."""
    got = fact_and_turns(8).get_messages(token_budget=46, facts_share=0.3)
    assert [e.key for e in got.entries] == ["chat:7", "chat:8", "chat:9", "chat:10"] and got.tokens == 44


def two_must_keep_facts() -> sm.Memory:
    """Two facts of importance 0.9 and one question, on a fixed clock."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.remember("user:allergy", "allergic to peanuts and tree nuts and sesame seeds", importance=0.9)
    mem.remember("user:diet", "vegetarian, no fish either", importance=0.9)
    mem.add_turn("user", "What is in the risotto tonight?")
    return mem


@pytest.mark.parametrize(
    ("options", "needed", "what"),
    [
        ({}, 40, "the must-keep facts"),
        ({"cut": "stable"}, 40, "the must-keep facts"),
        ({"system": "Be brief."}, 44, "the system prompt, the must-keep facts"),
        ({"system": "Be brief.", "cut": "stable"}, 44, "the system prompt, the must-keep facts"),
        ({"system": "Be brief.", "facts_at": "end"}, 46, "the system prompt, the must-keep facts"),
    ],
)
def test_msg_9_must_keep_facts_that_do_not_fit_say_what_they_need_and_get_it_there(options, needed, what):
    """MSG-2, MSG-9: must-keep facts that do not fit raise TokenBudgetError counting the facts' lines joined, the prompt and what joins the facts to it (the separator, or a message of their own at the end); at that budget they are in."""
    with pytest.raises(sm.TokenBudgetError) as raised:
        two_must_keep_facts().get_messages(token_budget=30, must_keep=0.9, **options)
    assert (raised.value.needed, raised.value.budget) == (needed, 30)
    assert str(raised.value) == (
        f"{what} and the turns from the newest user message on need {needed} tokens, "
        f"{needed - 30} more than the budget of 30"
    )
    got = two_must_keep_facts().get_messages(token_budget=needed, must_keep=0.9, **options)
    assert {e.key for e in got.entries} == {"user:allergy", "user:diet", "chat:1"} and got.tokens <= needed


@pytest.mark.parametrize(
    ("options", "keys"), [({"cut": "stable"}, ["chat:9", "chat:10"]), ({"facts_at": "end"}, ["chat:9", "chat:10"])]
)
def test_msg_14_the_planned_fill_gives_the_facts_their_share_of_the_budget_and_no_more(options, keys):
    """MSG-14, MSG-12: the stable cut and facts placed apart reserve the facts floor(budget * facts_share) before the older turns: a fact that needs more is left out."""
    got = fact_and_turns(3).get_messages(token_budget=35, facts_share=0.3, **options)
    assert [e.key for e in got.entries] == keys and got.tokens == 22
    assert got.omitted == 11 - 2  # the fact and the eight older turns


def test_msg_14_facts_in_the_system_message_leave_no_stable_prefix():
    """MSG-14: with facts in the first (system) message nothing of the request is a stable prefix; without facts the whole request is."""
    with_facts = waiter().get_messages(token_budget=41, must_keep=0.8, facts_share=0.1)
    assert with_facts.entries[0].key == "user:allergy" and (with_facts.prefix, with_facts.prefix_tokens) == (0, 0)
    plain = asking().get_messages(token_budget=100)
    assert len(plain.messages) == 1 and (plain.prefix, plain.prefix_tokens) == (1, plain.tokens)


def test_msg_13_a_unit_within_keep_results_that_the_budget_leaves_out_does_not_end_the_prefix():
    """MSG-13, MSG-15: only a sent unit whose results a later request clears ends the prefix; one left out never does."""
    mem = sm.create_memory()
    mem.add_turn("user", "question zero about the order")
    call = {"id": "c0", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    mem.add_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c0", "content": "result " * 40},
        ]
    )
    mem.add_turn("assistant", "answer zero " + "word " * 5)
    mem.add_turn("user", "question one " + "word " * 5)
    mem.add_turn("assistant", "answer one " + "word " * 5)
    # keep_results=4 keeps the call's unit whole, but the stable cut sends the newest exchange only.
    result = mem.get_messages(token_budget=60, system="Be brief.", keep_results=4, cut="stable")
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]
    assert (result.prefix, result.prefix_tokens) == (3, result.tokens)
