"""Chat messages: get_messages and contexts of one kind, by example (MSG-1 .. MSG-4, CTX-11, ENT-16, TXT-4)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from support import MINUTE, T0


@pytest.fixture
def evening(make, clock):
    """The restaurant as a chat: two facts, then five turns a minute apart."""
    mem = make()
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for role, text in [
        ("user", "Hi, table for one please."),
        ("assistant", "Welcome! Here is the menu."),
        ("user", "What's good tonight?"),
        ("assistant", "The Thai curry is excellent."),
        ("user", "Does it have peanuts?"),
    ]:
        mem.add_turn(role, text)
        clock.advance(MINUTE)
    return mem


def test_msg_2_facts_in_a_system_message_then_the_recent_turns_oldest_first(evening):
    """MSG-2, MSG-3: the facts form one system message, the newest turns follow in order, and the count is exact and within budget."""
    prompt = evening.get_messages(token_budget=60, query="peanuts")
    assert prompt.messages[0] == {"role": "system", "content": "user:name: Jakub\nuser:allergy: allergic to peanuts"}
    assert [m["role"] for m in prompt.messages[1:]] == ["user", "assistant", "user"]  # starts at a user message (MSG-9)
    assert prompt.messages[-1] == {"role": "user", "content": "Does it have peanuts?"}
    assert prompt.tokens == sum(sm.estimate_tokens(m["content"]) + 3 for m in prompt.messages) <= 60
    assert prompt.omitted == 2 and [e.key for e in prompt.entries][:2] == ["user:name", "user:allergy"]


def test_msg_3_a_real_tokenizer_counts_every_message_plus_three(evening):
    """MSG-3: with o200k_base the count is the tokenizer's count of each content plus 3 per message."""
    from bpe_openai import get_encoding

    o200k = get_encoding("o200k_base")
    prompt = evening.get_messages(token_budget=40, tokenizer=o200k)
    assert prompt.tokens == sum(len(o200k.encode(m["content"])) + 3 for m in prompt.messages) <= 40


def test_msg_2_a_tiny_budget_keeps_the_last_turn_before_any_fact(evening):
    """MSG-2: turns are taken first, so the user's last message survives the smallest budget that holds it."""
    prompt = evening.get_messages(token_budget=9, facts_share=0.0)
    assert prompt.messages == [{"role": "user", "content": "Does it have peanuts?"}]
    with pytest.raises(sm.TokenBudgetError, match="need 9 tokens, 9 more than the budget of 0"):
        evening.get_messages(token_budget=0)  # MSG-9: never a request without the question


def test_msg_4_messages_are_copies_and_change_nothing(evening):
    """MSG-4: get_messages is a read; changing what it returned changes nothing stored."""
    before = sm.core.to_document(evening.state)
    prompt = evening.get_messages(token_budget=200)
    prompt.messages[-1]["content"] = "changed"
    assert sm.core.to_document(evening.state) == before
    assert evening.get_messages(token_budget=200).messages[-1]["content"] == "Does it have peanuts?"


def test_ctx_11_a_context_of_facts_or_of_turns(evening):
    """CTX-11, TXT-4: get_context(only=) renders one kind; turns read "chat:N: role: content"; a wrong kind raises."""
    facts = evening.get_context(token_budget=100, only="facts")
    turns = evening.get_context(token_budget=100, only="turns")
    assert facts.text == "user:name: Jakub\nuser:allergy: allergic to peanuts" and facts.omitted == 0
    assert turns.text.splitlines()[0] == "chat:1: user: Hi, table for one please." and turns.omitted == 0
    with pytest.raises(ValueError):
        evening.get_context(token_budget=100, only="everything")  # type: ignore[arg-type]


def test_msg_1_turns_stored_before_structure_still_read_as_messages(make):
    """MSG-1: a chat:N entry holding "role: content" (how turns were once stored) is a turn; other chat:N data is a fact."""
    mem = make()
    mem.remember("chat:1", "user: an old turn")
    mem.remember("chat:2", 42)
    prompt = mem.get_messages(token_budget=100)
    assert prompt.messages == [{"role": "system", "content": "chat:2: 42"}, {"role": "user", "content": "an old turn"}]


def test_ent_16_a_turn_matters_less_than_a_fact_by_default(make, clock):
    """ENT-16, NUM-5: a turn's default importance is 0.3, so at equal age the fact stays when one must go; invalid is 0.3 too."""
    mem = make(limit=1)
    mem.remember("user:allergy", "allergic to peanuts")
    turn = mem.add_turn("user", "hello")
    assert turn.importance == 0.3 and list(mem) == ["user:allergy"]
    with pytest.warns(sm.IgnoredValueWarning, match="add_turn importance"):
        assert make().add_turn("user", "hi", importance=2).importance == 0.3


def test_msg_2_mypy_accepts_the_documented_use_and_flags_misuse(tmp_path):
    """MSG-2, CTX-11: mypy --strict accepts get_messages as the docs use it and flags a string budget and an unknown kind."""
    from mypy import api

    program = tmp_path / "bot.py"
    program.write_text(
        "import sentinel_memory as sm\n"
        "mem = sm.create_memory()\n"
        "mem.add_turn('user', 'hi')\n"
        "prompt = mem.get_messages(token_budget=800, query='hi', facts_share=0.3)\n"
        "messages: list[dict[str, str]] = list(prompt.messages)\n"
        "text: str = mem.get_context(token_budget=100, only='turns').text\n"
        "mem.get_messages(token_budget='800')\n"
        "mem.get_context(token_budget=100, only='everything')\n",
        encoding="utf-8",
    )
    out, _, status = api.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(program)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1 and [line.split(":")[1] for line in errors] == ["7", "8"], out


def test_msg_2_an_async_memory_builds_the_same_messages(evening):
    """MSG-2, AIO-1: AsyncMemory.get_messages and get_context(only=) give what the sync memory gives for the same entries."""
    import asyncio

    async def build() -> tuple[sm.Messages, sm.Context]:
        mem = await sm.create_async_memory(store=sm.MemoryStore(), clock=lambda: T0 + 10 * MINUTE)
        for entry in evening.get_recent(100)[::-1]:
            if entry.key.startswith("chat:"):
                await mem.add_turn(entry.data["role"], entry.data["content"])
            else:
                await mem.remember(entry.key, entry.data, importance=entry.importance)
        return mem.get_messages(token_budget=60, query="peanuts"), mem.get_context(token_budget=100, only="turns")

    messages, turns = asyncio.run(build())
    assert messages.messages == evening.get_messages(token_budget=60, query="peanuts").messages
    assert turns.text == evening.get_context(token_budget=100, only="turns").text


def test_msg_1_only_chat_roles_make_a_string_a_turn_and_a_role_is_never_empty(make):
    """MSG-1, TXT-4: "Reminder: buy milk" under chat:4 and a message with an empty role are facts; no message has an API-refused role."""
    mem = make()
    mem.remember("chat:3", {"role": "", "content": "x"})
    mem.remember("chat:4", "Reminder: buy milk")
    mem.remember("chat:5", "assistant: an old reply")
    mem.remember("chat:6", "user: an old question")
    prompt = mem.get_messages(token_budget=200)
    assert [m["role"] for m in prompt.messages] == [
        "system",
        "user",
    ]  # the reply before any question is left out (MSG-9)
    assert "chat:4: Reminder: buy milk" in prompt.messages[0]["content"]


def test_msg_2_two_turns_with_one_number_keep_their_age_order(make, clock):
    """MSG-2, ENT-6: chat:7 and the newer chat:007 come out older first, and when one fits it is the newer."""
    mem = make()
    mem.remember("chat:7", {"role": "user", "content": "older"})
    clock.advance(1)
    mem.remember("chat:007", {"role": "user", "content": "newer"})
    assert [m["content"] for m in mem.get_messages(token_budget=100).messages] == ["older", "newer"]
    assert [m["content"] for m in mem.get_messages(token_budget=5).messages] == ["newer"]


def test_ent_16_a_turn_never_takes_a_stored_key_nor_breaks_on_a_long_number(make):
    """ENT-16, ENT-17: a hand-built counter below a stored turn skips it; a chat key of 5,000 digits is an ordinary key."""
    entry = sm.Entry(
        key="chat:12",
        data={"role": "user", "content": "important"},
        importance=0.5,
        created_at=1,
        updated_at=1,
        expires_at=None,
        seq=1,
    )
    state = sm.MemoryState(entries=[entry], turns=11)
    state, _, key = sm.core.add_turn(state, "user", "new", now=2)
    assert key == "chat:13" and state.entries["chat:12"].data["content"] == "important"
    mem = make()
    mem.remember("chat:" + "1" * 5000, "a key, not a turn")
    mem.remember("chat:" + "9" * 4000, {"role": "user", "content": "the longest turn number"})
    assert mem.add_turn("user", "next").key == "chat:1" + "0" * 4000


def _split(mem, share):
    """The tokens of the facts' system message and of the turns, at a budget of 200."""
    prompt = mem.get_messages(token_budget=200, facts_share=share)
    facts = sm.estimate_tokens(prompt.messages[0]["content"]) + 3
    return facts, prompt.tokens - facts, prompt.messages


def test_msg_2_facts_share_is_room_kept_for_the_facts_not_a_quota(make):
    """MSG-2 step 3: facts that need less than their share give the rest back to older turns, so any share gives the same request; facts that could use more get what the share keeps."""
    mem = make()
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for i in range(12):
        mem.add_turn("user", f"What about dish {i}? Tell me its ingredients.")
        mem.add_turn("assistant", f"Dish {i} is rice, vegetables and a mild sauce.")
    low, high = _split(mem, 0.2), _split(mem, 0.8)
    assert low == high and low[0] == 12 and low[0] + low[1] <= 200
    step_one = 200 - 200 // 2  # what step 1 alone gives the turns at the default share
    assert _split(mem, 0.5)[1] > step_one  # step 3: older turns took what the facts left over
    for i in range(8):
        mem.remember(f"likes:{i}", f"the guest liked dish {i} last time", importance=0.6)
    low, high = _split(mem, 0.2), _split(mem, 0.8)
    assert low[0] < high[0] and low[1] > high[1]  # now the share decides
    assert high[0] == _split(mem, 0.5)[0]  # every fact fits in half the budget: a bigger share changes nothing
