"""The byte bound: upper_bound_tokens never counts fewer tokens than a byte-level BPE, on a multilingual corpus."""

from __future__ import annotations

import pytest

import sentinel_memory as sm

bpe_openai = pytest.importorskip("bpe_openai")

#: Text a bot meets: several scripts, emoji (with joiners and flags), code, numbers and odd spacing.
CORPUS = {
    "english": "Please remind me that my refund for order 42 is still waiting for the warehouse to confirm.",
    "czech": "Příliš žluťoučký kůň úpěl ďábelské ódy; objednávka č. 42 čeká na vrácení peněz.",
    "japanese": "私の名前はヤクブです。ピーナッツにアレルギーがあります。注文番号四十二の返金はまだですか？",
    "chinese": "我对花生过敏。请帮我查询第四十二号订单的退款进度，谢谢！",
    "arabic": "أعاني من حساسية الفول السوداني. هل تمت معالجة استرداد الطلب رقم ٤٢؟",
    "emoji": "🎉🎉 party! 👩‍👩‍👧‍👦 family, 🇨🇿 flag, 🏳️‍🌈, 👍🏽 thumbs up 😀😃😄",
    "code": 'def refund(order_id: int) -> dict:\n    return {"id": order_id, "status": "pending"}  # TODO: retry\n',
    "numbers": "3.14159 2.71828 1e-7 0x1F 1_000_000 192.168.0.1 +420 777 123 456",
    "spacing": "  tabs\tand\t\tspaces   and\n\n\nnewlines  ",
    "mixed": "user:name: Jakub (ヤクブ) – prefers answers in Czech 🇨🇿, e.g. „Dobrý den!“",
}


@pytest.fixture(scope="module", params=["o200k_base", "cl100k_base"])
def encoding(request):
    return bpe_openai.get_encoding(request.param)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_tok_2_never_under_a_byte_level_bpe(encoding, name):
    """TOK-2: for every sample, o200k_base and cl100k_base count no more tokens than upper_bound_tokens."""
    text = CORPUS[name]
    assert len(encoding.encode(text)) <= sm.upper_bound_tokens(text) == len(text.encode("utf-8"))


def test_tok_2_the_bound_holds_for_a_whole_context(encoding):
    """TOK-2, CTX-4: a context filled with the bound never exceeds the budget in real tokens either."""
    mem = sm.create_memory(load=False, clock=lambda: 0)
    for name, text in CORPUS.items():
        mem.remember(name, text)
    for budget in (50, 200, 400, 1000):
        ctx = mem.get_context(token_budget=budget, tokenizer=sm.upper_bound_tokens)
        assert len(encoding.encode(ctx.text)) <= ctx.tokens <= budget


def test_tok_2_the_price_is_about_four_times_for_english():
    """TOK-2: the documented trade: about 4x o200k's count for English (4.8 here), and Japanese never under-counted."""
    o200k = bpe_openai.get_encoding("o200k_base")
    ratio_english = sm.upper_bound_tokens(CORPUS["english"]) / len(o200k.encode(CORPUS["english"]))
    ratio_japanese = sm.upper_bound_tokens(CORPUS["japanese"]) / len(o200k.encode(CORPUS["japanese"]))
    assert 4 <= ratio_english <= 5
    assert 1 <= ratio_japanese
    # The estimator, by contrast, under-counts Japanese: the reason to have a bound at all.
    assert sm.estimate_tokens(CORPUS["japanese"]) < len(o200k.encode(CORPUS["japanese"]))


def test_tok_2_refuses_a_non_str():
    """TOK-2: a non-str is a TypeError."""
    with pytest.raises(TypeError):
        sm.upper_bound_tokens(b"bytes")


def test_ctx_9_a_special_token_in_a_chat_message_is_counted_as_text():
    """CTX-9: with an Encoding, a message spelling <|endoftext|> is counted with encode_ordinary, not refused by encode."""
    from bpe_openai import get_encoding

    o200k = get_encoding("o200k_base")
    mem = sm.create_memory(tokenizer=o200k)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.add_turn("user", "ignore this: <|endoftext|>")
    ctx = mem.get_context(token_budget=800)
    assert ctx.tokens == len(o200k.encode_ordinary(ctx.text)) and "<|endoftext|>" in ctx.text
    assert mem.get_messages(token_budget=800).tokens <= 800
