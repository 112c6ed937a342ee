"""Lexical recall: words, scores, ranking and limits (REC-*)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core.lexical import words
from support import DAY


@pytest.fixture
def refund(mem):
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("user:language", "prefers answers in Czech", importance=0.8)
    mem.remember("chat:7", "talked about the weather in Prague for a while", importance=0.1)
    mem.remember("order:42", "refund requested for order 42, waiting for the warehouse", importance=0.7)
    return mem


def keys(hits):
    return [hit.entry.key for hit in hits]


def test_rec_1_case_and_diacritics_insensitive(mem):
    """REC-1: česky matches CESKY, and case does not matter."""
    mem.remember("note", "mluví česky")
    assert keys(mem.recall("CESKY")) == ["note"]
    assert keys(mem.recall("Mluvi")) == ["note"]


def test_rec_1_word_split():
    """REC-1: split on anything that is not a letter or digit; marks removed; digits kept."""
    assert words("user:name") == {"user", "name"}
    assert words("Order #42, ŽLUŤOUČKÝ kůň!") == {"order", "42", "zlutoucky", "kun"}
    assert words("...!?") == frozenset()
    assert words("日本語のテキスト") == {"日本語のテキスト"}


def test_rec_3_article_queries(refund):
    """REC-3: the article's queries: name via the key, refund via data, "money back" finds nothing."""
    assert keys(refund.recall("what is my name?")) == ["user:name"]
    assert keys(refund.recall("refund")) == ["order:42"]
    assert refund.recall("money back") == ()


def test_rec_3_lexical_only_no_semantic_match(refund):
    """REC-3: "jak se jmenuju" (Czech for "what is my name") does not find user:name."""
    assert refund.recall("jak se jmenuju") == ()


def test_rec_2_score_formula(mem, clock):
    """REC-2: score = relevance * (0.5 + importance / 2) + 0.05 * freshness, in that order."""
    mem.remember("k", "alpha beta", importance=0.6)
    clock.advance(DAY / 4)
    (hit,) = mem.recall("alpha gamma delta")
    relevance = 1 / 3
    fresh = max(0, 1 - (DAY / 4) / DAY)
    assert hit.score == relevance * (0.5 + 0.6 / 2) + 0.05 * fresh


def test_rec_3_ranking_and_ties(mem, clock):
    """REC-3: best score first; an exact tie goes to the newer entry."""
    mem.remember("low", "apple", importance=0.1)
    mem.remember("tie-old", "apple", importance=0.5)
    mem.remember("tie-new", "apple", importance=0.5)
    mem.remember("both", "apple pie", importance=0.1)
    assert keys(mem.recall("apple pie")) == ["both", "tie-new", "tie-old", "low"]


def test_rec_3_limit_and_empty_query(mem):
    """REC-3: at most limit hits; a query with no words returns none."""
    for i in range(5):
        mem.remember(f"k{i}", "same words")
    assert len(mem.recall("words", limit=2)) == 2
    assert mem.recall("") == () and mem.recall(" ?! ") == ()


@pytest.mark.parametrize("query", [None, 42, b"name", ["name"]])
def test_rec_4_non_str_query_is_a_type_error(mem, query):
    """REC-4: a query that is not a str raises TypeError."""
    with pytest.raises(TypeError):
        mem.recall(query)


def test_rec_2_key_words_count(mem):
    """REC-2: words of the key count as well as words of the data."""
    mem.remember("user:allergy", "peanuts")
    assert keys(mem.recall("allergy")) == ["user:allergy"]


def test_rec_2_json_data_words(mem):
    """REC-2, TXT-1: recall searches the canonical text of JSON data."""
    mem.remember("order", {"status": "shipped"})
    assert keys(mem.recall("shipped status")) == ["order"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\ufb01le", {"\ufb01le"}),  # the fi ligature is one letter of its own
        ("\uff23\uff21\uff32\uff34", {"\uff43\uff41\uff52\uff54"}),  # full-width CART lower-cases, stays full-width
        ("x\u00b2", {"x\u00b2"}),  # a superscript two is a digit, not "2"
        ("\u2460 step", {"\u2460", "step"}),  # a circled one too
    ],
)
def test_rec_1_compatibility_characters_stay_themselves(text, expected):
    """REC-1: words use NFD, not NFKD: ligatures, full-width letters and superscripts are not folded to plain ones."""
    assert words(text) == frozenset(expected)


def test_rec_1_a_ligature_does_not_match_plain_letters(mem):
    """REC-1, REC-3: "file" does not find an entry written with the fi ligature, nor "cart" a full-width one."""
    mem.remember("doc", "\ufb01le attached")
    mem.remember("wide", "\uff23\uff21\uff32\uff34 items")
    assert keys(mem.recall("file")) == [] and keys(mem.recall("cart")) == []
    assert keys(mem.recall("\ufb01le")) == ["doc"] and keys(mem.recall("\uff43\uff41\uff52\uff54")) == ["wide"]


def test_rec_1_the_holders_of_a_word_stay_exact_through_small_and_mass_changes():
    """REC-1: the entries holding a word, once worked out, follow every remember, forget and mass expiry exactly."""
    state = sm.MemoryState(config=sm.Config(limit=500))
    for i in range(300):
        words_ = "refund status" if i % 3 == 0 else "cart"
        state, _ = core.remember(state, f"k{i}", f"{words_} {i}", now=i, ttl=1_000 if i % 2 else None)

    def truth(state, word):
        return {e.seq: e for e in state.entries.values() if word in e.words}

    assert dict(state.index.holders("refund")) == truth(state, "refund")
    state, _ = core.remember(state, "k3", "cart only now", now=300)  # an overwrite moves k3 out of "refund"
    state, _ = core.forget(state, "k6", now=300)
    assert dict(state.index.holders("refund")) == truth(state, "refund")
    assert dict(state.index.holders("cart")) == truth(state, "cart")
    state, dropped = core.compact(state, now=1_200)  # 100 of them expire at once: a mass change
    assert len(dropped.expired) > 64
    assert dict(state.index.holders("refund")) == truth(state, "refund")
    assert dict(state.index.holders("status")) == truth(state, "status")
