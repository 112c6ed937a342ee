"""How data becomes text, and how text becomes a token estimate (TXT-*, TOK-*)."""

from __future__ import annotations

import struct

import pytest

from sentinel_memory import estimate_tokens
from sentinel_memory.core.jsondata import canonical_json, ecmascript_number, text_of


def test_txt_1_str_data_renders_as_itself():
    """TXT-1: str data is its own text, with no quotes."""
    assert text_of("allergic to peanuts") == "allergic to peanuts"


def test_txt_1_rfc8785_key_ordering_example():
    """TXT-1: the RFC 8785 section 3.2.3 sorting example: keys by UTF-16 code units."""
    data = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    expected_order = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    text = canonical_json(data)
    positions = [text.index(canonical_json(k) + ":") for k in expected_order]
    assert positions == sorted(positions)


def test_txt_1_rfc8785_string_escapes():
    """TXT-1: control characters escape like JSON.stringify; non-ASCII stays as is."""
    assert canonical_json('\u20ac$\u000f\nA\'B"\\\\"/') == '"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"'
    assert canonical_json({"b": [True, None], "a": "ž"}) == '{"a":"ž","b":[true,null]}'


# RFC 8785 appendix B: IEEE 754 bit patterns and their canonical text.
RFC8785_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), RFC8785_NUMBERS)
def test_txt_2_rfc8785_number_examples(bits, expected):
    """TXT-2: doubles are written as ECMAScript's Number.prototype.toString writes them (RFC 8785 B)."""
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert ecmascript_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(1.0, "1"), (1e21, "1e+21"), (1e-7, "1e-7"), (1e16, "10000000000000000")]
)
def test_txt_2_issue_examples(value, expected):
    """TXT-2: 1.0 is 1, 1e21 is 1e+21, 1e-7 is 1e-7, 1e16 is written out."""
    assert ecmascript_number(value) == expected


def test_txt_3_big_ints_keep_exact_digits():
    """TXT-3: ints beyond 2**53 keep their exact digits."""
    assert canonical_json(2**64 + 1) == "18446744073709551617"
    assert canonical_json([1, 2.0, -3]) == "[1,2,-3]"


def test_txt_1_context_renders_json_data(mem):
    """TXT-1, CTX-3: non-str data appears in a context as canonical JSON."""
    mem.remember("prefs", {"units": "metric", "lang": "cs", "n": 1.0})
    assert mem.get_context(token_budget=100).text == 'prefs: {"lang":"cs","n":1,"units":"metric"}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("\U0001f600\U0001f600", 1), ("\U0001f600\U0001f600a", 2)],
)
def test_tok_1_estimate_is_utf16_length_over_4_rounded_up(text, expected):
    """TOK-1: ceil(utf16 length / 4); an emoji counts two code units."""
    assert estimate_tokens(text) == expected


def test_tok_1_estimate_rejects_non_str():
    """TOK-1: estimate_tokens of a non-str raises TypeError."""
    with pytest.raises(TypeError):
        estimate_tokens(12)  # type: ignore[arg-type]


def test_tok_1_refund_sentence_estimate():
    """TOK-1: the article's English refund sentence estimates as 14 tokens."""
    assert estimate_tokens("refund requested for order 42, waiting for the warehouse") == 14


def test_txt_4_a_turn_reads_as_role_and_content_in_a_context(make):
    """TXT-4, ENT-16, MSG-5: a turn's line is `chat:N: role: content`; a dict that only looks like a message stays JSON."""
    mem = make()
    mem.add_turn("user", "I'm allergic to peanuts")
    mem.remember("almost", {"role": "user", "content": "hi", "mood": "happy"})
    mem.remember("named", {"role": "user", "content": "hi", "name": "Jakub"})  # a message in its stored form (MSG-5)
    text = mem.get_context(token_budget=1000).text
    assert text == (
        'chat:1: user: I\'m allergic to peanuts\nalmost: {"content":"hi","mood":"happy","role":"user"}\nnamed: user: hi'
    )
    assert [hit.entry.key for hit in mem.recall("peanuts")] == ["chat:1"]


def test_rec_1_the_unicode_14_table_is_python_3_11s_database():
    """REC-1: unicode14.ASSIGNED holds exactly the code points Unicode 14.0.0 assigns (checked where the database is 14.0.0)."""
    import unicodedata

    from sentinel_memory.core import unicode14

    if unicodedata.unidata_version != unicode14.UNICODE_VERSION:
        pytest.skip(f"this Python's Unicode is {unicodedata.unidata_version}")
    assert all(unicode14.assigned(cp) == (unicodedata.category(chr(cp)) != "Cn") for cp in range(0x110000))


def test_rec_1_words_hide_what_a_later_unicode_assigned(monkeypatch):
    """REC-1: on a Python of a later Unicode, code points unassigned in 14.0.0 separate words before lower-casing; the rest is unchanged."""
    from sentinel_memory.core import lexical, unicode14

    texts = [
        "ab\U00011f04cd",
        "ab\u0cf3cd",
        "x\ua7cby",
        "ΟΔΟΣ\U00011f04",
        "İSTANBUL",
        "Příliš žluťoučký kůň",
        "私の名前",
    ]
    expected = [lexical.words(text) for text in texts]
    monkeypatch.setattr(unicode14, "runtime_is_reference", False)
    assert [lexical.words(text) for text in texts] == expected
    assert lexical.words("ab\U00011f04cd") == {"ab", "cd"} and lexical.words("ΟΔΟΣ\U00011f04") == {"οδος"}
    # Pretend é were new since 14.0.0: it must separate words, and never reach lower() or the Final_Sigma test.
    real = unicode14.assigned
    monkeypatch.setattr(unicode14, "assigned", lambda cp: cp not in (ord("é"), ord("É")) and real(cp))
    assert lexical.words("CAFÉX café") == {"caf", "x"}
    assert lexical.words("ΟΔΟΣÉ") == {"οδος"}
