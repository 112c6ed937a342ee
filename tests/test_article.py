"""The article's worked examples, computed by the code (restaurant, refund, cart, freshness cap)."""

from __future__ import annotations

import pytest

from support import DAY, MINUTE

bpe_openai = pytest.importorskip("bpe_openai")

REFUND_MEMORIES = [
    ("user:name", "Jakub", 0.9),
    ("user:language", "prefers answers in Czech", 0.8),
    ("chat:7", "talked about the weather in Prague for a while", 0.1),
    ("order:42", "refund requested for order 42, waiting for the warehouse", 0.7),
]


def restaurant(make, clock):
    mem = make(limit=5)
    mem.remember("user:name", "Jakub", importance=0.9)
    clock.advance(MINUTE)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    for i in range(1, 7):
        clock.advance(MINUTE)
        mem.remember(f"chat:{i}", f"small talk message {i}", importance=0.1)
    return mem


def last_n(keys, n):
    """The bad waiter: keep the newest n messages."""
    return keys[-n:]


def test_restaurant_keeps_name_and_allergy_cmp_1(make, clock):
    """CMP-1, RET-3: limit 5 keeps chat:6, chat:5, chat:4, the allergy and the name, newest first."""
    mem = restaurant(make, clock)
    assert [e.key for e in mem.get_recent(5)] == ["chat:6", "chat:5", "chat:4", "user:allergy", "user:name"]


def test_restaurant_stats_line_cmp_5(make, clock):
    """CMP-5, CMP-6, BM-10: the article's exact stats line after the restaurant, then the ranking's name."""
    mem = restaurant(make, clock)
    assert mem.stats() == {
        "size": 5,
        "stored": 5,
        "limit": 5,
        "cache": 0,
        "compactions": 3,
        "expired": 0,
        "evicted": 3,
        "ranking": "words",
    }


def test_restaurant_last_n_loses_the_allergy():
    """The comparison policy from the article: last-5 keeps chat:2..6 and drops name and allergy."""
    keys = ["user:name", "user:allergy"] + [f"chat:{i}" for i in range(1, 7)]
    assert last_n(keys, 5) == ["chat:2", "chat:3", "chat:4", "chat:5", "chat:6"]


def refund_memory(make, **options):
    mem = make(**options)
    for key, data, importance in REFUND_MEMORIES:
        mem.remember(key, data, importance=importance)
    return mem


def test_refund_with_estimator_ctx_2(make):
    """CTX-1, CTX-2, CTX-4: budget 30, query "refund status", estimator: 21 tokens, 2 omitted."""
    ctx = refund_memory(make).get_context(token_budget=30, query="refund status")
    assert ctx.text == "user:name: Jakub\norder:42: refund requested for order 42, waiting for the warehouse"
    assert (ctx.tokens, ctx.omitted) == (21, 2)


def o200k():
    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text))


def test_refund_with_o200k_ctx_7(make):
    """CTX-7, CTX-4: with o200k_base the language preference fits too, exactly 30 tokens, 1 omitted."""
    ctx = refund_memory(make).get_context(token_budget=30, query="refund status", tokenizer=o200k())
    assert ctx.text == (
        "user:name: Jakub\nuser:language: prefers answers in Czech\n"
        "order:42: refund requested for order 42, waiting for the warehouse"
    )
    assert (ctx.tokens, ctx.omitted) == (30, 1)


def test_refund_with_tokenizer_from_create_memory_ctx_7(make):
    """CTX-7: a tokenizer given to create_memory is the default for every context."""
    ctx = refund_memory(make, tokenizer=o200k()).get_context(token_budget=30, query="refund status")
    assert (ctx.tokens, ctx.omitted) == (30, 1)


def test_cart_note_gone_at_minute_15_exp_2(mem, clock):
    """EXP-2: a 15-minute cart note is there after 14 minutes and None after 15."""
    mem.remember("session:cart", "2 items in the cart", ttl=15 * MINUTE)
    clock.advance(14 * MINUTE)
    assert mem.get("session:cart") == "2 items in the cart"
    clock.advance(MINUTE)
    assert mem.get("session:cart") is None


def freshness_duel(make, clock, old_importance):
    mem = make(limit=1)
    mem.remember("old", "a day old", importance=old_importance)
    clock.advance(DAY)
    mem.remember("new", "brand new", importance=0.5)
    return [e.key for e in mem.get_recent()]


def test_new_half_beats_day_old_055_ret_3(make, clock):
    """RET-3: a brand-new 0.5 (retention 0.6) beats a day-old 0.55."""
    assert freshness_duel(make, clock, 0.55) == ["new"]


def test_new_half_loses_to_day_old_065_ret_3(make, clock):
    """RET-3: a brand-new 0.5 loses to a day-old 0.65, and so evicts itself (CMP-4)."""
    assert freshness_duel(make, clock, 0.65) == ["old"]
