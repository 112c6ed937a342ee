"""The edges of add_messages' batches, stored messages and get_messages' counting (MSG-1, MSG-2, MSG-5 .. MSG-9, ENT-16)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm


def call(i: int) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


def asks(*ids: int) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def answer(i: int) -> dict:
    return {"role": "tool", "tool_call_id": f"call_{i}", "content": "4 °C"}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


@pytest.mark.parametrize(
    ("batch", "says"),
    [
        (
            [user("Weather?"), asks(1, 2), answer(1), answer(1)],
            r"messages\[3\].tool_call_id: 'call_1' answers no open call \(open: 'call_2'\)",
        ),
        (
            [user("Weather?"), asks(1), asks(2), answer(1)],
            r"messages\[3\].tool_call_id: 'call_1' answers no open call \(open: 'call_2'\)",
        ),
        (
            [user("Weather?"), asks(1), user("Never mind."), answer(1)],
            r"messages\[3\].tool_call_id: 'call_1' answers no open call \(open: none\)",
        ),
    ],
    ids=["answered-twice", "a-newer-call-closes-the-older", "a-user-message-closes-the-call"],
)
def test_msg_6_a_batch_answering_no_open_call_is_refused_whole(mem, batch, says):
    """MSG-6: in one batch a call answered twice, a call closed by a newer call or by a user message is refused, nothing stored."""
    with pytest.raises(ValueError, match=says):
        mem.add_messages(batch)
    assert len(mem) == 0
    entries = mem.add_messages(batch[:3])  # the step after: the batch without the bad result is stored
    assert [e.key for e in entries] == ["chat:1", "chat:2", "chat:3"]


@pytest.mark.parametrize(
    "data",
    [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": None, "tool_calls": [call(1), call(1)]},
    ],
    ids=["content-none-without-calls", "a-repeated-call-id"],
)
def test_msg_1_a_stored_turn_that_is_no_valid_message_is_never_sent(mem, data):
    """MSG-1, MSG-8: a chat:N entry holding content None without calls, or two calls of one id, is a fact, never a sent message."""
    mem.add_turn("user", "Weather?")
    mem.remember("chat:2", data)
    assert not sm.core.chat.is_stored_message(data)
    result = mem.get_messages(token_budget=200)
    assert sm.request_problems(result.messages) == []
    assert [m["role"] for m in result.messages] == ["system", "user"]
    assert result.messages[0]["content"].startswith("chat:2: ")  # read as a fact, by its JSON


def test_ent_16_add_turn_hints_the_chat_role_whatever_the_case():
    """ENT-16, MSG-5: add_turn("Human", ...) and add_turn("AI", ...) name the chat role to use, as the lower-case forms do."""
    mem = sm.create_memory()
    with pytest.raises(ValueError, match=r"got 'Human' \(use 'user' for a human's message\)"):
        mem.add_turn("Human", "hi")
    with pytest.raises(ValueError, match=r"got 'AI' \(use 'assistant' for a ai's message\)"):
        mem.add_turn("AI", "hello")
    with pytest.raises(ValueError, match=r"got 'Speaker'$"):
        mem.add_turn("Speaker", "hello")
    assert len(mem) == 0


def joins_cost_more(text: str) -> int:
    """Words, and 5 more for a blank line inside a text: the prompt and the facts joined count more than apart."""
    return len(text.split()) + (5 if "\n\n" in text.strip() else 0)


def waiter(clock: int = 1000) -> sm.Memory:
    mem = sm.create_memory(clock=lambda: clock)
    mem.remember("user:allergy", "allergic to peanuts and tree nuts", importance=1.0)
    mem.remember("user:city", "lives in Brno")
    mem.add_turn("user", "What do you recommend tonight?")
    return mem


@pytest.mark.parametrize("budget", range(15, 40))
def test_msg_2_the_prompt_and_the_facts_joined_stay_within_the_budget(budget):
    """MSG-2, MSG-3: with a tokenizer where joining costs more, the system message as sent counts within every budget."""
    result = waiter().get_messages(token_budget=budget, tokenizer=joins_cost_more, system="You are a waiter.")
    sent = sum(joins_cost_more(m["content"]) + sm.core.MESSAGE_TOKENS for m in result.messages)
    assert sent == result.tokens <= budget
    # The facts get in once the budget holds them joined: the city at 24 (not before), the allergy
    # in its place at 27 (it ranks first), both at 31.
    assert ("lives in Brno" in result.messages[0]["content"]) == (24 <= budget < 27 or budget >= 31)
    assert ("peanuts" in result.messages[0]["content"]) == (budget >= 27)


@pytest.mark.parametrize("budget", range(15, 27))
def test_msg_9_the_must_keep_error_reports_a_need_over_the_budget(budget):
    """MSG-9: when must-keep facts do not fit, TokenBudgetError's needed is more than the budget, even where counting apart says less."""
    with pytest.raises(sm.TokenBudgetError) as raised:
        waiter().get_messages(token_budget=budget, tokenizer=joins_cost_more, system="You are a waiter.", must_keep=0.9)
    # Counted apart (as step 2 gives the facts room) they need 22; joined they need 27.
    assert raised.value.needed == max(22, budget + 1) and raised.value.budget == budget
    assert raised.value.needed > budget


def test_msg_9_the_must_keep_facts_fit_exactly_at_their_joined_count():
    """MSG-9: at a budget of exactly the joined count the must-keep fact is sent; one less raises."""
    result = waiter().get_messages(
        token_budget=27, tokenizer=joins_cost_more, system="You are a waiter.", must_keep=0.9
    )
    assert "peanuts" in result.messages[0]["content"] and result.tokens == 27


def test_msg_7_pending_hands_out_copies(mem):
    """MSG-7, ENT-3: the pending entries are copies: changing one leaves the memory's turn as stored."""
    mem.add_messages([user("Weather?"), asks(1)])
    pending = mem.get_messages(token_budget=100).pending
    assert [e.key for e in pending] == ["chat:2"]
    pending[0].data["tool_calls"][0]["id"] = "changed"
    assert mem["chat:2"]["tool_calls"][0]["id"] == "call_1"
    assert mem.get_messages(token_budget=100).pending[0].data == asks(1)
