"""Property tests for the pure pieces: words, the estimator, JSON text and the number rule."""

from __future__ import annotations

import ast
import contextlib
import copy
import datetime
import fractions
import io
import json
import math
import sys
import tempfile
import unicodedata
import warnings
from pathlib import Path
from unittest import mock

import attrs
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import index as index_module
from sentinel_memory.core import options, window
from sentinel_memory.core import search as search_module
from sentinel_memory.core.errors import IgnoredValueWarning
from sentinel_memory.core.jsondata import canonical_json, copy_json, is_json_text
from sentinel_memory.core.lexical import holding, words
from sentinel_memory.core.options import NUMBER_RULES, number_option
from sentinel_memory.core.tokens import additive
from support import keep_writing

from .strategies import FALSE_ADDITIVE, INVALID_NUMBERS, json_data

letters = st.text(st.characters(categories=["Lu", "Ll", "Nd", "Mn", "Zs", "Po"]), max_size=20)


@example("\u212a")  # the Kelvin sign lower-cases to an ASCII "k"
@given(st.text(st.characters(max_codepoint=127), max_size=40))
def test_rec_1_ascii_words_take_the_same_rule(text):
    """REC-1: the regular-expression path for ASCII text finds exactly the words of the character-by-character rule."""
    by_character = "".join(c if unicodedata.category(c)[0] in "LN" else " " for c in text.lower())
    assert words(text) == frozenset(by_character.split())


@given(letters)
def test_rec_1_words_ignore_case_and_diacritics(text):
    """REC-1: upper-casing or stripping accents from a text never changes its words."""
    stripped = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.category(c).startswith("M"))
    assert words(text) == words(text.lower()) == words(stripped.lower())


@given(letters)
def test_rec_1_words_are_letters_and_digits_only(text):
    """REC-1: every word is a non-empty run of letters and digits with no combining marks."""
    for word in words(text):
        assert word and all(unicodedata.category(c)[0] in "LN" for c in word)


#: Characters that NFKD would fold into plain ones (a ligature, full-width and
#: superscript forms, a circled digit, a Roman numeral) next to plain and accented ones.
COMPATIBILITY = "\ufb01\ufb02\uff21\uff42\u00b2\u2460\u2163\u210cabfi2 \u00e9\u0301-"


@example("\ufb01le")
@example("\uff23\uff21\uff32\uff34")
@given(st.text(st.sampled_from(COMPATIBILITY), max_size=12))
def test_rec_1_words_take_nfd_not_nfkd(text):
    """REC-1: words are found after NFD, which keeps compatibility characters as they are; NFKD would fold them."""
    from .model import words as model_words

    assert words(text) == model_words(text)
    for word in words(text):
        assert unicodedata.normalize("NFD", word) == word


@given(st.lists(st.sampled_from(["česky", "CESKY", "Česky", "cesky"]), min_size=1))
def test_rec_1_cesky_matches_cesky(variants):
    """REC-1: česky, CESKY and friends are one word."""
    assert len(set().union(*(words(v) for v in variants))) == 1


@given(st.text(max_size=40))
def test_tok_1_estimate_is_ceil_of_utf16_units(text):
    """TOK-1: the estimate is the UTF-16 length over 4, rounded up, exactly."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert sm.estimate_tokens(text) == math.ceil(units / 4)
    assert sm.estimate_tokens(text) * 4 - units in range(4)


@given(json_data)
def test_txt_1_canonical_json_is_json_of_the_same_value(data):
    """TXT-1, TXT-2, TXT-3: canonical text parses back to an equal value, with no whitespace between tokens."""
    text = canonical_json(copy_json(data))
    # As doubles, the way JavaScript reads numbers: "1e+21" and 1e21 are one value.
    as_doubles = {"parse_int": float, "parse_float": float}
    assert json.loads(text, **as_doubles) == json.loads(json.dumps(data), **as_doubles)


@given(st.dictionaries(st.text(max_size=3), st.integers(), max_size=5))
def test_txt_1_key_order_does_not_matter(mapping):
    """TXT-1: two dicts with the same items render the same canonical text."""
    reordered = dict(reversed(list(mapping.items())))
    assert canonical_json(mapping) == canonical_json(reordered)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_txt_2_number_text_round_trips(value):
    """TXT-2: every finite double's text parses back to the same double."""
    assert float(canonical_json(value)) == value


@given(st.lists(st.integers(0, 0x10FFFF), max_size=12).map(lambda points: "".join(map(chr, points))))
@example("a\ud83d\ude00")  # a pair of surrogates is two code points in a str: neither is a character
@example("h\u00e9\ud800")
def test_ent_2_json_text_is_any_str_without_a_surrogate(text):
    """ENT-2: a str is JSON text exactly when no code point of it is a surrogate, ASCII or not."""
    assert is_json_text(text) == all(not 0xD800 <= ord(char) <= 0xDFFF for char in text)


@given(key=st.text(min_size=1, max_size=8), data=json_data)
def test_ctx_8_an_entrys_measure_is_the_length_of_its_line(key, data):
    """CTX-8, CTX-3, TOK-1: the cached measure of an entry's default line is that line's UTF-16 length."""
    try:
        state, _ = core.remember(sm.MemoryState(), key, data, now=0)
    except TypeError:  # a lone surrogate: no JSON file can hold it
        return
    entry = state.entries[key]
    assert entry.line_units == len(entry.line.encode("utf-16-le")) // 2
    assert entry.line == sm.default_format(entry)


@given(part=json_data, shape=st.sampled_from(["list", "dict", "deep"]))
def test_ent_2_shared_sub_objects_are_accepted(part, shape):
    """ENT-2, ENT-3: data holding one sub-object in several places is JSON, not circular; it is copied as separate values."""
    data = {"list": [part, part], "dict": {"a": part, "b": part}, "deep": [[part], {"x": [part, part]}]}[shape]
    copied = copy_json(data)
    assert copied == data
    state, _ = core.remember(sm.MemoryState(), "k", data, now=0)
    assert core.get(state, "k", now=0) == data


@given(json_data)
def test_ent_3_copy_is_equal_and_disjoint(data):
    """ENT-3: a copy equals the original and shares no container with it."""
    copied = copy_json(data)
    assert json.dumps(copied, sort_keys=True) == json.dumps(data, sort_keys=True)

    def containers(value):
        if isinstance(value, dict):
            yield value
            for item in value.values():
                yield from containers(item)
        elif isinstance(value, list):
            yield value
            for item in value:
                yield from containers(item)

    original_ids = {id(c) for c in containers(data)}
    assert not original_ids & {id(c) for c in containers(copied)}


invalid = st.sampled_from(INVALID_NUMBERS)
anything = st.one_of(invalid, st.floats(), st.integers(-(10**6), 10**6), st.text(max_size=3))


def valid(name, value) -> bool:
    """The number rule restated: a finite int or float (not bool) within the option's range."""
    rule = NUMBER_RULES[name]
    if type(value) not in (int, float) or not math.isfinite(value):
        return False
    if rule.integer and not float(value).is_integer():
        return False
    low_ok = value > rule.minimum if rule.exclusive_minimum else value >= rule.minimum
    return low_ok and (rule.maximum is None or value <= rule.maximum)


def expected(name, value):
    """The value an option takes: its own when valid, else the documented default."""
    if not valid(name, value):
        return NUMBER_RULES[name].default
    return int(value) if NUMBER_RULES[name].integer else value


@pytest.mark.parametrize("name", sorted(NUMBER_RULES))
@given(value=anything)
def test_num_1_number_rule_never_clamps(name, value):
    """NUM-1, NUM-2, NUM-3: every option is its value when valid and its default otherwise, never clamped."""
    result = number_option(name, value)
    assert result == expected(name, value)
    assert result is NUMBER_RULES[name].default or result == value


@given(limit=anything, recency_window=anything, working_ttl=anything, cache_ttl=anything)
def test_num_3_create_memory_options(limit, recency_window, working_ttl, cache_ttl):
    """NUM-3, OPT-1: create_memory applies the number rule to each numeric option."""
    config = sm.create_memory(
        limit=limit, recency_window=recency_window, working_ttl=working_ttl, cache_ttl=cache_ttl
    ).state.config
    assert config.limit == expected("limit", limit)
    assert config.recency_window == expected("recency_window", recency_window)
    assert config.working_ttl == expected("working_ttl", working_ttl)
    assert config.cache_ttl == expected("cache_ttl", cache_ttl)


@given(importance=anything, ttl=anything)
def test_num_4_remember_importance_and_ttl(importance, ttl):
    """NUM-1, NUM-4, EXP-1: remember's importance and ttl follow the number rule on new and existing keys."""
    state, _ = core.remember(sm.MemoryState(), "k", "v", now=1000, importance=importance, ttl=ttl)
    entry = state.entries["k"]
    assert entry.importance == expected("importance", importance)
    ttl_ok = expected("ttl", ttl)
    assert entry.expires_at == (None if ttl_ok is None else 1000 + ttl_ok)
    base, _ = core.remember(sm.MemoryState(), "k", "v", now=0, importance=0.25)
    again, _ = core.remember(base, "k", "v", now=1, importance=importance)
    assert again.entries["k"].importance == (importance if valid("importance", importance) else 0.25)


@given(limit=anything, n=anything)
def test_num_2_recall_and_get_recent_counts(limit, n):
    """NUM-2, NUM-3, ENT-10, REC-3: recall's limit and get_recent's n default to 10 when invalid."""
    state = sm.MemoryState()
    for i in range(14):
        state, _ = core.remember(state, f"k{i}", "same word", now=i)
    assert len(core.recall(state, "word", now=20, limit=limit)) == min(14, expected("recall_limit", limit))
    assert len(core.get_recent(state, n, now=20)) == min(14, expected("recent_n", n))


@given(ttl=anything)
def test_l0_1_cache_ttl_number_rule(ttl):
    """L0-1, NUM-1: cache.put's ttl is its value when > 0, else cache_ttl."""
    state = core.cache_put(sm.MemoryState(config=sm.Config(cache_ttl=777)), "k", 1, now=0, ttl=ttl)
    assert state.cache["k"].expires_at == (ttl if valid("ttl", ttl) else 777)


@given(budget=st.one_of(anything, st.floats(min_value=0, max_value=100)))
def test_ctx_5_budget_rule(budget):
    """CTX-5: a finite budget >= 0 works; anything else raises ValueError, never defaults."""
    state, _ = core.remember(sm.MemoryState(), "k", "v", now=0)
    if type(budget) in (int, float) and math.isfinite(budget) and budget >= 0:
        assert core.context(state, now=0, token_budget=budget).tokens <= budget
    else:
        with pytest.raises(ValueError):
            core.context(state, now=0, token_budget=budget)


@given(now=st.one_of(st.sampled_from([None, True, "0", math.nan, math.inf, -math.inf]), st.text(max_size=2)))
def test_time_2_now_must_be_a_finite_number(now):
    """TIME-2: every core function refuses a now that is not a finite number."""
    state = sm.MemoryState()
    with pytest.raises(TypeError):
        core.remember(state, "k", "v", now=now)
    with pytest.raises(TypeError):
        core.size(state, now=now)


@given(now=st.one_of(st.integers(-(10**15), 10**15), st.floats(-1e15, 1e15)), ttl=st.floats(0.001, 1e9))
def test_time_2_fractional_times_expire_exactly(now, ttl):
    """TIME-2, EXP-2: with any finite times, an entry is visible before now + ttl and gone from it on."""
    state, _ = core.remember(sm.MemoryState(), "k", "v", now=now, ttl=ttl)
    deadline = state.entries["k"].expires_at
    assert deadline == now + ttl
    assert not core.has(state, "k", now=deadline)
    if deadline > now:
        assert core.has(state, "k", now=now)


@given(key=st.one_of(st.none(), st.integers(), st.binary(), st.just(""), st.lists(st.text())))
def test_ent_1_only_non_empty_str_keys(key):
    """ENT-1: a non-str key raises TypeError, the empty key ValueError; the state is unchanged."""
    state = sm.MemoryState()
    with pytest.raises(ValueError if key == "" else TypeError):
        core.remember(state, key, "v", now=0)
    assert state == sm.MemoryState()


non_json = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, b"x", {1, 2}, frozenset(), object(), "\udc80"]),
    st.dictionaries(st.integers(), st.integers(), min_size=1),
)


@given(inner=non_json, wrap=st.sampled_from(["bare", "list", "dict", "tuple"]))
def test_ent_2_non_json_data_is_refused_anywhere(inner, wrap):
    """ENT-2: a non-JSON value raises TypeError however deep it sits."""
    data = {"bare": inner, "list": [1, inner], "dict": {"a": {"b": inner}}, "tuple": ("x", inner)}[wrap]
    with pytest.raises(TypeError):
        core.remember(sm.MemoryState(), "k", data, now=0)


@given(
    high=st.floats(0.1, 1),
    gap=st.floats(0.1, 1),
    age_high=st.integers(0, 10 * 86_400_000),
    age_low=st.integers(0, 10 * 86_400_000),
)
def test_ret_3_importance_dominates(high, gap, age_high, age_low):
    """RET-2, RET-3: an entry more than 0.1 more important always has the higher retention, whatever the ages."""
    from sentinel_memory.core.retention import freshness, retention

    low = high - gap
    if low < 0 or gap <= 0.1 + 1e-9:  # a margin for the doubles' own rounding
        return
    now = 20 * 86_400_000
    a = sm.Entry("a", "", high, 0, now - age_high, None, 0)
    b = sm.Entry("b", "", low, 0, now - age_low, None, 1)
    assert retention(a, now, 86_400_000) > retention(b, now, 86_400_000)
    assert 0 <= freshness(b, now, 86_400_000) <= 1


@example(now=3 * 86_400_000, window=86_400_000, back=0, bands=8)
@example(now=7, window=3, back=0, bands=16)
@given(
    now=st.integers(0, 2**53),
    window=st.integers(1, 10**12),
    back=st.integers(0, 10**12) | st.just(0),
    bands=st.integers(1, 16),
)
def test_ret_1_no_entry_updated_by_a_band_moment_is_fresher_than_its_cap(now, window, back, bands):
    """RET-1: the recall search's bands of age are oldest first, and an entry updated at a band's moment has exactly its cap of bonus, an older one at most that."""
    from sentinel_memory.core.lexical import FRESHNESS_BONUS, _freshness_caps
    from sentinel_memory.core.retention import freshness

    caps = _freshness_caps(now, window, bands)
    assert len(caps) == bands
    assert [moment for moment, _ in caps] == sorted(moment for moment, _ in caps)
    for moment, cap in caps:
        at_moment = sm.Entry("a", "", 0.5, 0, moment, None, 0)
        older = sm.Entry("a", "", 0.5, 0, moment - back, None, 0)
        assert FRESHNESS_BONUS * freshness(at_moment, now, window) == cap
        assert FRESHNESS_BONUS * freshness(older, now, window) <= cap


def test_ret_1_a_float_clock_or_window_gets_no_bands_of_age():
    """RET-1: with a float ``now`` or window, rounding could break the caps, so the recall search holds every entry to the full bonus."""
    from sentinel_memory.core.lexical import _freshness_caps

    assert _freshness_caps(3.0 * 86_400_000, 86_400_000) == []
    assert _freshness_caps(3 * 86_400_000, 86_400_000.0) == []
    assert len(_freshness_caps(3 * 86_400_000, 86_400_000)) == 8


entry_fields = st.fixed_dictionaries(
    {},
    optional={
        "key": st.one_of(st.sampled_from(["a", "b", "c", "", "chat:2", "chat:x"]), st.integers()),
        "data": st.one_of(st.text(max_size=3), st.integers(), st.none()),
        "importance": st.one_of(st.floats(-1, 2), st.sampled_from([True, "0.5", None])),
        "createdAt": st.one_of(st.integers(0, 10), st.sampled_from([None, "now", math.inf])),
        "updatedAt": st.one_of(st.integers(0, 10), st.sampled_from([None, "now"])),
        "expiresAt": st.one_of(st.none(), st.integers(0, 100), st.sampled_from(["soon", True])),
    },
)
#: Entries that are valid (PER-6) and so are kept, unless a later one has the same key.
valid_entries = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["a", "b", "c", "chat:2"]),
        "data": st.integers(0, 9),
        "importance": st.sampled_from([0.0, 0.5, 1.0]),
        "createdAt": st.integers(0, 10),
        "updatedAt": st.integers(0, 10),
    }
)
documents = st.one_of(
    st.fixed_dictionaries(
        {
            "version": st.sampled_from([1, 1, 1, 2, "1", True, None]),
            "entries": st.lists(st.one_of(entry_fields, st.integers(), valid_entries), max_size=6),
        },
        optional={
            "working": st.one_of(
                st.none(),
                st.fixed_dictionaries(
                    {
                        "data": st.one_of(
                            st.dictionaries(st.text(max_size=2), st.integers(), max_size=2), st.integers()
                        ),
                        "updatedAt": st.one_of(st.none(), st.integers(0, 9), st.text(max_size=1)),
                    }
                ),
            )
        },
    ),
    st.lists(st.integers(), max_size=2),
    st.text(max_size=3),
    st.fixed_dictionaries(
        {"version": st.just(1), "entries": st.dictionaries(st.text(max_size=1), st.integers(), max_size=2)}
    ),
)


def entry_is_valid(raw) -> bool:
    """PER-6 restated."""
    if not isinstance(raw, dict) or "data" not in raw:
        return False
    key, importance = raw.get("key"), raw.get("importance")
    number = lambda v: type(v) in (int, float) and math.isfinite(v)
    return (
        isinstance(key, str)
        and key != ""
        and number(importance)
        and 0 <= importance <= 1
        and number(raw.get("createdAt"))
        and number(raw.get("updatedAt"))
        and (raw.get("expiresAt") is None or number(raw.get("expiresAt")))
    )


@given(document=documents)
def test_per_6_loading_any_document(document):
    """PER-5, PER-6, PER-7, PER-20: a bad document raises ValueError; otherwise valid entries load, the rest (a damaged working memory too) are counted."""
    state = sm.MemoryState()
    well_formed = (
        isinstance(document, dict)
        and type(document.get("version")) is int
        and document["version"] == 1
        and isinstance(document.get("entries"), list)
    )
    if not well_formed:
        with pytest.raises(ValueError):
            core.from_document(state, document, now=0)
        return
    loaded, result, _ = core.from_document(state, document, now=0)
    valid = [raw for raw in document["entries"] if entry_is_valid(raw)]
    distinct = {raw["key"]: raw for raw in valid}
    working = document.get("working")
    good_working = (
        isinstance(working, dict)
        and isinstance(working.get("data"), dict)
        and type(working.get("updatedAt")) in (int, float)
    )
    # PER-20: a working memory that was there, was not the empty one, and could not be loaded is dropped.
    empty = working is None or (isinstance(working, dict) and working.get("data") == {})
    assert result == sm.LoadResult(
        loaded=len(distinct),
        dropped=len(document["entries"]) - len(distinct),
        working_dropped=not (good_working or empty),
    )
    assert {k: e.data for k, e in loaded.entries.items()} == {k: raw["data"] for k, raw in distinct.items()}
    assert dict(loaded.working.data) == (working["data"] if good_working else {})
    keep_writing(loaded, now=20)


@example(  # the first of two entries is invalid: the kept one stood second
    document={
        "version": 1,
        "entries": [{"key": ""}, {"key": "a", "data": 1, "importance": 0.5, "createdAt": 1, "updatedAt": 1}],
    },
    limit=8,
    first=0,
)
@given(document=documents, limit=st.integers(1, 8), first=st.sampled_from([0, 5]))
def test_per_19_a_lossy_load_is_the_load_of_its_clean_entries(document, limit, first):
    """PER-19, PER-6, PER-8, ENT-17: whatever a load drops, the state is the one the kept entries alone load to, and writes go on."""
    state = sm.MemoryState(config=sm.Config(limit=limit), next_seq=first)
    try:
        loaded, result, _ = core.from_document(state, document, now=50)
    except ValueError:
        return
    valid = [raw for raw in document["entries"] if entry_is_valid(raw)]
    kept = list({raw["key"]: raw for raw in valid}.values())
    # The later of two entries with one key keeps its own position: order kept by that later one.
    kept.sort(key=lambda raw: max(i for i, other in enumerate(valid) if other["key"] == raw["key"]))
    clean, clean_result, _ = core.from_document(state, dict(document, entries=kept), now=50)
    assert clean_result.dropped == 0 and clean_result.compacted == result.compacted
    assert [(e.key, e.seq) for e in loaded.entries.values()] == [(e.key, e.seq) for e in clean.entries.values()]
    assert (loaded.next_seq, loaded.turns, loaded.counters) == (clean.next_seq, clean.turns, clean.counters)
    keep_writing(loaded, now=60)


hand_built_entries = st.lists(
    st.builds(
        sm.Entry,
        key=st.sampled_from(["a", "b", "chat:3", "chat:11", "chat:٣", "x"]),
        data=st.one_of(st.integers(), st.text(max_size=3)),
        importance=st.sampled_from([0.0, 0.5, 1.0]),
        created_at=st.integers(0, 100),
        updated_at=st.integers(0, 100),
        expires_at=st.one_of(st.none(), st.integers(0, 200)),
        seq=st.integers(-5, 50),
    ),
    max_size=6,
    unique_by=(lambda e: e.key, lambda e: e.seq),
)


@given(entries=hand_built_entries, limit=st.integers(1, 8), as_mapping=st.booleans())
def test_ent_17_a_hand_built_state_counts_on_from_its_entries(entries, limit, as_mapping):
    """ENT-17, ENT-14, ENT-16: a state built from entries starts its seqs above theirs and its turns at their largest, and writes go on."""
    given_entries = {e.key: e for e in entries} if as_mapping else entries
    state = sm.MemoryState(config=sm.Config(limit=limit), entries=given_entries)
    assert state.next_seq == max((e.seq for e in entries), default=-1) + 1
    assert state.turns == max((int(e.key[5:]) for e in entries if e.key in ("chat:3", "chat:11")), default=0)
    if entries:
        with pytest.raises(ValueError, match="next_seq"):
            sm.MemoryState(entries=given_entries, next_seq=state.next_seq - 1)
    keep_writing(state, now=100)


def test_ent_17_two_entries_with_one_seq_are_no_state():
    """ENT-17, ENT-14: entries that share a seq raise ValueError, not a TypeError from comparing entries."""
    a = sm.Entry(key="a", data=1, importance=0.5, created_at=0, updated_at=0, expires_at=None, seq=3)
    with pytest.raises(ValueError, match="one entry per seq"):
        sm.MemoryState(entries=[a, sm.Entry(**{**attrs.asdict(a), "key": "b"})])


@given(document=documents)
def test_per_6_the_check_of_all_entries_equals_the_check_of_each(document):
    """PER-6: checking a load's entries together, then by halves where some are invalid, keeps exactly what checking each alone keeps."""
    from sentinel_memory.core import document as doc

    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        return
    raws = document["entries"]
    each = [(doc._all_valid([raw], 7 + i) or [None])[0] for i, raw in enumerate(raws)]
    assert doc._checked(raws, 7) == each
    assert (doc._all_valid(raws, 7) is not None) == (None not in each)


@given(
    rows=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=8),
            json_data,
            st.floats(0, 1),
            st.integers(0, 2**53),
            st.integers(0, 2**53),
            st.one_of(st.none(), st.integers(0, 2**53)),
        ),
        max_size=20,
    ),
    first_seq=st.integers(0, 1000),
)
def test_per_6_entries_made_a_field_at_a_time_equal_entries_made_one_by_one(rows, first_seq):
    """PER-6: the entries a load makes a column at a time (Entry.many) are the constructor's, derived fields included."""
    from sentinel_memory.core.values import Entry

    columns = [list(column) for column in zip(*rows, strict=True)] or [[] for _ in range(6)]
    many = Entry.many(*columns, first_seq=first_seq)
    one_by_one = [Entry(*row, first_seq + i) for i, row in enumerate(rows)]
    assert many == one_by_one
    assert [(e.text, e.line, e.line_units, e.words) for e in many] == [
        (e.text, e.line, e.line_units, e.words) for e in one_by_one
    ]


def test_per_6_an_entry_has_nothing_its_column_maker_would_skip():
    """PER-6: Entry.many sets the slots directly, which is only the constructor while Entry has no validators, converters or post-init."""
    import attrs

    from sentinel_memory.core.values import Entry

    assert [(f.validator, f.converter, f.default) for f in attrs.fields(Entry)] == [(None, None, attrs.NOTHING)] * 7
    assert not hasattr(Entry, "__attrs_post_init__") and not hasattr(Entry, "__attrs_pre_init__")
    with pytest.raises(ValueError, match="differ in length"):
        Entry.many(["a"], ["x"], [0.5], [1], [1], [], first_seq=0)


@given(content=st.one_of(st.text(max_size=30), st.binary(max_size=30).map(lambda b: b.decode("latin-1"))))
def test_per_4_a_damaged_file_is_never_touched(tmp_path_factory, content):
    """PER-4: any file content either loads as a document or raises ValueError, and the file stays as it was."""
    path = tmp_path_factory.mktemp("store") / "memory.json"
    path.write_bytes(content.encode("utf-8"))
    mem = sm.create_memory(store=sm.JsonFileStore(path), load=False)
    try:
        mem.load()
    except ValueError:
        assert mem.size() == 0
    assert path.read_bytes() == content.encode("utf-8")


@given(document=st.dictionaries(st.text(max_size=3), json_data, max_size=4))
def test_per_10_memory_store_keeps_its_own_copy(document):
    """PER-10: neither the saved nor the loaded document shares anything with the store's copy."""
    store = sm.MemoryStore()
    original = copy.deepcopy(document)
    store.save(document)
    document["__changed__"] = True
    loaded = store.load()
    assert loaded == original
    loaded["__changed__"] = True
    assert store.load() == original


PACKAGE = Path(sm.__file__).parent
STDLIB = set(sys.stdlib_module_names)


#: Optional extras a module may import, but only inside a function, so importing the package never needs them
#: (OpenTelemetry: the telemetry module, once a tracer provider is there, OTL-1; the Snowball stemmer: BM25's terms,
#: once a memory ranks by BM25, DEP-1).
OPTIONAL = {"redis", "opentelemetry", "snowballstemmer"}
#: LC-5: adapter modules the package never imports, each with the extra it may import at its top.
ADAPTERS = {
    "integrations/langchain/__init__.py": {"langchain_core"},
    "integrations/langchain/middleware.py": {"langchain_core", "langchain", "langgraph"},
    "integrations/langgraph.py": {"langgraph"},
    "integrations/pydantic_ai.py": {"pydantic_ai", "pydantic", "anyio"},
    "integrations/openai_agents.py": {"agents"},
    # FWT-3, MCP-1, AMT-1: the model's memory tools, each module with its framework (operations with none).
    "integrations/tools/mcp.py": {"mcp", "mcp_types", "anyio"},
    "integrations/tools/anthropic.py": {"anthropic"},
    "integrations/tools/langchain.py": {"langchain_core"},
    "integrations/tools/pydantic_ai.py": {"pydantic_ai"},
    "integrations/tools/openai_agents.py": {"agents"},
    "testing.py": {"pytest"},
}


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """Every absolute import in ``tree``, and whether it sits inside a function."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.module or "", in_function))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


@pytest.mark.parametrize("module", sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")))
def test_dep_1_modules_import_only_stdlib_and_attrs(module):
    """DEP-1, LC-5: every module imports only the standard library, attrs or the package; an optional extra (redis) only inside a function, an adapter's own extra (langchain-core, the store kit's pytest) in that module alone."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    for name, in_function in _imports(tree):
        top = name.split(".")[0]
        allowed = (
            top in STDLIB or top == "attrs" or (in_function and top in OPTIONAL) or top in ADAPTERS.get(module, ())
        )
        assert allowed, f"{module} imports {name}" + ("" if in_function else " at module level")


@given(
    data=st.lists(st.tuples(st.sampled_from("abcdefgh"), json_data, st.floats(0, 1)), max_size=8),
    budget=st.integers(0, 80),
    tokenizer=st.sampled_from(FALSE_ADDITIVE),
    separator=st.sampled_from(["\n", "", " | "]),
)
def test_ctx_8_false_additive_declarations_still_fit(data, budget, tokenizer, separator):
    """CTX-8, CTX-4, CTX-6: a tokenizer wrongly declared additive still gets an exact count within budget."""
    state = sm.MemoryState()
    for key, value, importance in data:
        state, _ = core.remember(state, key, value, now=0, importance=importance)
    if tokenizer("") > budget:
        return
    ctx = core.context(state, now=0, token_budget=budget, tokenizer=tokenizer, separator=separator)
    assert ctx.tokens == tokenizer(ctx.text) <= budget
    assert len(ctx.entries) + ctx.omitted == core.size(state, now=0)
    assert ctx.text == separator.join(sm.default_format(e) for e in ctx.entries)


@given(
    items=st.lists(
        st.tuples(st.sampled_from("abcdef"), json_data, st.floats(0, 1), st.integers(0, 3 * 86_400_000)), max_size=10
    ),
    query=st.lists(st.sampled_from(["refund", "status", "cart", "peanut", "a", "b"]), min_size=1, max_size=3).map(
        " ".join
    ),
    now=st.integers(0, 4 * 86_400_000),
)
def test_rec_2_inline_scores_equal_the_reference_formulas(items, query, now):
    """REC-2, RET-1, RET-2, CTX-1: the inlined ranking arithmetic gives exactly the reference functions' doubles."""
    from sentinel_memory.core.lexical import relevance, score
    from sentinel_memory.core.retention import by_retention, freshness, retention

    state = sm.MemoryState()
    for key, value, importance, at in items:
        state, _ = core.remember(state, key, value, now=at, importance=importance)
    window = state.config.recency_window
    entries = list(state.entries.values())
    query_words = words(query)
    expected = sorted(
        (
            (score(relevance(query_words, e.words), e.importance, freshness(e, now, window)), e.order)
            for e in entries
            if query_words & e.words
        ),
        reverse=True,
    )
    assert [h.score for h in core.recall(state, query, now=now, limit=100)] == [s for s, _ in expected]
    by_reference = sorted(entries, key=lambda e: (retention(e, now, window), e.order), reverse=True)
    assert by_retention(entries, now, window) == by_reference
    assert by_retention(state.index.live_by_age(now), now, window, in_age_order=True) == [
        e for e in by_reference if e.expires_at is None or now < e.expires_at
    ]


#: Half of them within one day of the last, so that several entries are fresh at once.
moments = st.one_of(st.integers(0, 3 * 86_400_000), st.integers(2 * 86_400_000, 3 * 86_400_000))

timed_entries = st.lists(
    st.tuples(
        st.sampled_from("abcdefghij"),
        st.text("ab ", max_size=30),
        # Close importances, so that freshness decides between them.
        st.sampled_from([0, 0.1, 0.4, 0.5, 0.55, 0.6, 0.9, 1, 0.30000000000000004, 0.3]),
        moments,
    ),
    max_size=14,
)


def state_from(items, *, ttl=None) -> sm.MemoryState:
    """remember() each item at its own time: clocks that go back make tables that are not in age order."""
    state = sm.MemoryState()
    for key, value, importance, at in items:
        state, _ = core.remember(state, key, value, now=at, importance=importance, ttl=ttl)
    return state


# Freshness lifts a fresh 0.5 (0.6) above a stale 0.55: a start of the ranking
# taken only from the highest importances would leave the best entry out.
@example(items=[("a", "x", 0.55, 0), ("b", "y", 0.5, 86_400_000)], now=86_400_000, at_least=1, ttl=None)
# Two stale entries: freshness stops at 0, so the older one's higher importance still wins.
@example(items=[("a", "x", 0.5, 0), ("b", "y", 0.4, 2 * 86_400_000)], now=3 * 86_400_000, at_least=0, ttl=None)
# Six stale entries of one importance score the same, and one below cannot
# reach them: more than four candidates per entry asked for, so every one is
# scored, and the tie goes to the newest.
@example(items=[(key, "x", 0.5, 0) for key in "abcdef"] + [("g", "x", 0, 0)], now=3 * 86_400_000, at_least=1, ttl=None)
@given(
    items=timed_entries,
    now=st.integers(0, 4 * 86_400_000),
    at_least=st.integers(0, 15),
    ttl=st.sampled_from([None, 1, 86_400_000]),
)
def test_ctx_1_the_start_of_the_ranking_is_the_ranking_start(items, now, at_least, ttl):
    """CTX-1, CTX-8, RET-1: the full ranking follows the reference formulas, and the index's start of it is exactly its first entries."""
    from sentinel_memory.core.retention import ranking, retention

    state = state_from(items, ttl=ttl)
    entries = state.index.live_by_age(now)
    importances, updated = [e.importance for e in entries], [e.updated_at for e in entries]
    window = state.config.recency_window
    full = [entries[i] for i in ranking(importances, updated, now, window)]
    assert full == sorted(entries, key=lambda e: (retention(e, now, window), e.order), reverse=True)
    start = state.index.ranking_start(at_least, now, window)
    if start is not None:
        assert start == full[: len(start)]
        assert len(start) >= min(at_least, len(entries))


# One entry expired at the first moment, another by the second: the run made
# at the first loses only the newly expired at the second.
@example(
    items=[("a", 0.5, 0, 1), ("b", 0.9, 0, 3_600_000), ("c", 0.1, 0, None), ("d", 1, 0, None)],
    nows=[2, 4_000_000],
    at_least=1,
)
@given(
    items=st.lists(
        st.tuples(
            st.sampled_from("abcdefghij"),
            st.sampled_from([0, 0.1, 0.5, 0.55, 0.9, 1]),
            moments,
            st.sampled_from([None, 1, 3_600_000, 86_400_000]),
        ),
        max_size=14,
    ),
    nows=st.lists(st.integers(0, 4 * 86_400_000), min_size=1, max_size=6),
    at_least=st.integers(0, 6),
)
def test_exp_3_one_state_read_at_many_moments_reads_as_a_fresh_index(items, nows, at_least):
    """EXP-3, CTX-1, REC-3: walks that skip the expired, the live run made after them, and that run cut down at a later moment all read the same."""
    state = sm.MemoryState()
    for key, importance, at, ttl in items:
        state, _ = core.remember(state, key, "a b", now=at, importance=importance, ttl=ttl)
    window = state.config.recency_window

    def reads(index: index_module.Index, now: int, again: int = 0) -> object:
        for _ in range(again):  # each walk that skips the expired brings the live run closer
            index.ranking_start(at_least, now, window)
        start = index.ranking_start(at_least, now, window)
        return start, list(index.by_importance_desc(now)), list(index.by_importance_desc(now, 0.55))

    for now in nows:
        expected = reads(index_module.Index.of(state.entries.values()), now)
        made = index_module.Index.of(state.entries.values())
        assert reads(made, now, again=len(items) + 1) == expected
        # The state's own index, read at every moment in turn, keeps its run from moment to moment.
        assert reads(state.index, now, again=len(items) + 1) == expected
        assert state.index.expired_seqs(now) == made.expired_seqs(now)
        assert state.index.live_by_age(now) == made.live_by_age(now)


# Stale entries of one importance tie: the older go first, one victim or several.
@example(items=[(key, "x", 0.5, 0) for key in "abcdef"], now=3 * 86_400_000, count=1)
@example(items=[(key, "x", 0.5, 0) for key in "abcdef"], now=3 * 86_400_000, count=4)
@given(items=timed_entries, now=st.integers(0, 4 * 86_400_000), count=st.integers(0, 15))
def test_cmp_1_the_index_evicts_the_lowest_retention_first(items, now, count):
    """CMP-1, RET-2: the index's victims are the first ``count`` entries by (retention, updated_at, seq), for one victim and for many."""
    from sentinel_memory.core.retention import retention

    state = state_from(items)
    window = state.config.recency_window
    reference = sorted(state.entries.values(), key=lambda e: (retention(e, now, window), e.updated_at, e.seq))
    assert state.index.lowest_retention(count, now, window) == reference[:count]


# A fresher match at a slightly lower importance outscores a staler one above it:
# the walk by importance must not stop at the lower group before looking.
@example(items=[("c", "a", 0.6, 0), ("d", "a", 0.55, 69_120_000)], query="a", now=69_120_000, limit=1, ttl=None)
# Every query word at importance 0 loses to one word at importance 1, fresh:
# the entries holding every word are not the best few on their own.
@example(items=[("c", "a b", 0, 0), ("d", "a", 1, 3 * 86_400_000)], query="a b", now=3 * 86_400_000, limit=1, ttl=None)
# Fewer than ``limit`` hold every word, and a fresh entry holding fewer words
# outscores them while the best weights of its group are higher still: a
# bound from that group's weights alone would leave the fresh entry out.
@example(
    items=[
        ("c", "a ab b", 0, 0),
        ("d", "a ab", 1, 0),
        ("e", "ab b", 1, 0),
        ("f", "a b", 0.4, 3 * 86_400_000),
        *[(key, "a", 0, 0) for key in "ghij"],
    ],
    query="a ab b",
    now=3 * 86_400_000,
    limit=3,
    ttl=None,
)
# A group lists its entries oldest first, and the oldest band of age gets no
# freshness in the bound: the fresh entry here (counted first, under the rare
# word) wins on freshness although the bound for stale entries would drop it.
# Two groups tie across them (1 * (0.5 + 0 / 2) == 0.5 * (0.5 + 1 / 2)):
# laid out group by group, the entries are not in age order, and the newer
# of the two, listed first, must still come first.
@example(
    items=[("p", "a", 1, 0), ("q", "a b", 0, 0), ("x", "a", 0, 0), ("y", "a", 0, 0)],
    query="a b",
    now=3 * 86_400_000,
    limit=1,
    ttl=None,
)
@example(
    items=[("s1", "a", 1, 0), ("s2", "a", 1, 0), ("s3", "a", 1, 0), ("f", "b", 0.9, 3 * 86_400_000)],
    query="a b",
    now=3 * 86_400_000,
    limit=1,
    ttl=None,
)
@given(
    items=timed_entries,
    query=st.sampled_from(["a", "b", "a b", "ab", "a ab b"]),
    now=st.one_of(st.integers(0, 4 * 86_400_000), st.just(3 * 86_400_000)),
    limit=st.integers(0, 5),
    ttl=st.sampled_from([None, 1, 86_400_000]),
)
@pytest.mark.parametrize("search", ["holders", "walk"])
def test_rec_3_the_best_few_are_the_start_of_all_matches(search, items, query, now, limit, ttl):
    """REC-2, REC-3: recall of the best few returns exactly the start of the full, exactly ordered live match list, by either search."""
    from unittest import mock

    state = state_from(items, ttl=ttl)
    with mock.patch.multiple(
        search_module,
        _by_holders=lambda stored, limit: search == "holders",
        _walk_budget=lambda postings, top_band=0: None,
    ):
        hits = core.recall(state, query, now=now, limit=limit)
    assert [(h.score, h.entry.key) for h in hits] == all_matches(state, query, now)[:limit]


def all_matches(state: sm.MemoryState, query: str, now: int) -> list[tuple[float, str]]:
    """Every live match as ``(score, key)``, best first, ties newer first: REC-2 and REC-3 read literally."""
    from sentinel_memory.core.lexical import relevance, score
    from sentinel_memory.core.retention import freshness

    query_words = words(query)
    window = state.config.recency_window
    expected = sorted(
        (
            (score(relevance(query_words, e.words), e.importance, freshness(e, now, window)), e.order, e.key)
            for e in state.index.live_by_age(now)
            if query_words & e.words
        ),
        reverse=True,
    )
    return [(value, key) for value, _, key in expected]


# The one entry holding the rare words is stale and barely important; a fresh
# entry holding only the common word outscores it.
@example(rare=[("z y", 0.05, 0)], common=[("a", 1, 3 * 86_400_000)] * 8, now=3 * 86_400_000, limit=1)
@given(
    rare=st.lists(
        st.tuples(st.sampled_from(["z y", "z y a"]), st.sampled_from([0, 0.05, 0.1, 0.2, 1]), moments),
        min_size=1,
        max_size=3,
    ),
    common=st.lists(
        st.tuples(st.sampled_from(["a", "a b", "b"]), st.sampled_from([0, 0.5, 1]), moments), min_size=8, max_size=30
    ),
    now=st.just(3 * 86_400_000) | st.integers(0, 4 * 86_400_000),
    limit=st.integers(1, 3),
)
def test_rec_3_counting_the_rare_words_first_leaves_out_only_what_cannot_win(rare, common, now, limit):
    """REC-2, REC-3: when the holders of the rare query words are counted first and the common word's are only asked, the best few are still exact."""
    from unittest import mock

    items = [(f"k{i}", text, importance, at) for i, (text, importance, at) in enumerate(rare + common)]
    state = state_from(items)
    with mock.patch.object(search_module, "_by_holders", lambda stored, limit: True):
        hits = core.recall(state, "z y a", now=now, limit=limit)
    assert [(h.score, h.entry.key) for h in hits] == all_matches(state, "z y a", now)[:limit]


@given(
    sizes=st.lists(st.integers(0, 12), max_size=20),
    gap=st.integers(0, 3),
    cap=st.integers(0, 60),
)
def test_ctx_2_the_c_speed_walk_is_the_greedy_walk(sizes, gap, cap):
    """CTX-2, CTX-8: the accumulate-and-scan walk picks exactly what the line-by-line greedy walk picks."""
    from sentinel_memory.core.prompt import _greedy

    picked, used = [], None
    for rank, size in enumerate(sizes):
        trial = size if used is None else used + gap + size
        if trial <= cap:
            picked.append(rank)
            used = trial
    fast, room = _greedy(sizes, gap, cap + gap)
    assert fast == picked
    if picked:
        assert cap - room == used


# Neither line of the start of the ranking fits, and the one after it fills
# the budget exactly: the walk past the start must take it.
@example(items=[("c", "aaaa", 1, 0), ("d", "aaaa", 0.9, 0), ("b", "a", 0, 0)], now=0, budget=1, separator="\n")
# The start of the ranking picks "k2: " and leaves room for exactly one more
# such line: the walk past the start must go on with that room, and must
# not rank again the line it picked, which fits the room too.
@example(
    items=[("k2", "", 1.0, 0), ("k3", "aaaaa", 1.0, 0), ("k5", "", 0, 0), ("k7", "aaaaa", 1.0, 0)],
    now=0,
    budget=2,
    separator="",
)
@given(
    items=timed_entries,
    now=st.integers(0, 4 * 86_400_000),
    budget=st.one_of(st.integers(0, 60), st.floats(0, 60)),
    separator=st.sampled_from(["\n", "", " | "]),
)
def test_ctx_8_fast_fill_equals_the_reference(items, now, budget, separator):
    """CTX-8: the fast fill, including when the start of the ranking is not enough, returns the naive fill's result without falling back to it."""
    from unittest import mock

    from sentinel_memory.core import prompt

    state = state_from(items)
    # The estimator's declaration is true, so the fast fill's own total must
    # be right: falling back to the naive fill would hide a wrong one.
    with mock.patch.object(prompt, "fill_naive", side_effect=AssertionError("the fast fill fell back")):
        fast = core.context(state, now=now, token_budget=budget, separator=separator)
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert core.context(state, now=now, token_budget=budget, separator=separator) == fast


@pytest.mark.parametrize(("tokenizer", "budget"), [(None, 1), (additive(len), 4)], ids=["estimator", "measured"])
def test_ctx_8_a_line_that_fills_the_room_left_exactly_is_taken(tokenizer, budget):
    """CTX-2, CTX-8: neither line of the start of the ranking fits; the next fills the budget exactly and is taken, as the naive fill takes it."""
    from unittest import mock

    from sentinel_memory.core import prompt

    state = sm.MemoryState()
    for key, text, importance in [("c", "aaaa", 1.0), ("d", "aaaa", 0.9), ("b", "a", 0.0)]:
        state, _ = core.remember(state, key, text, now=0, importance=importance)
    args = dict(now=0, token_budget=budget, tokenizer=tokenizer)
    with mock.patch.object(prompt, "fill_naive", side_effect=AssertionError("the fast fill fell back")):
        fast = core.context(state, **args)
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert core.context(state, **args) == fast
    assert fast.text == "b: a"


@example(items=[("j", "ab", 0.5, 0), ("k", "abc", 0.5, 0)], budget=2.5, separator="\n")
@given(
    items=timed_entries,
    budget=st.one_of(st.integers(0, 40), st.floats(0, 40)),
    separator=st.sampled_from(["\n", "", " | "]),
)
def test_ctx_8_fractional_additive_counts_equal_the_reference(items, budget, separator):
    """CTX-8: an additive() tokenizer that counts in halves gets exactly the naive fill: fractions are never summed."""
    from unittest import mock

    from sentinel_memory.core import prompt

    from .strategies import half_length

    state = state_from(items)
    now = max((e.updated_at for e in state.entries.values()), default=0)
    halves = additive(half_length)
    fast = core.context(state, now=now, token_budget=budget, separator=separator, tokenizer=halves)
    with mock.patch.object(window, "fill", prompt.fill_ranked_naive):
        assert core.context(state, now=now, token_budget=budget, separator=separator, tokenizer=halves) == fast


@given(patch=st.dictionaries(st.sampled_from(["task", "order", "steps"]), json_data, min_size=1, max_size=3))
def test_l1_1_working_memory_comes_out_as_a_deep_copy(patch):
    """L1-1, ENT-3: nothing nested in what working_get returns is shared with the state."""
    from .test_machine import mutate

    state = core.working_set(sm.MemoryState(), patch, now=0)
    before = copy.deepcopy(core.working_get(state, now=0))
    mutate(core.working_get(state, now=0))
    assert core.working_get(state, now=0) == before == patch


@given(
    depth=st.integers(0, 3),
    document=json_data.map(
        lambda data: {"version": 1, "entries": [], "working": {"data": {"note": data}, "updatedAt": 0}}
    ),
    again=st.booleans(),
)
def test_per_9_durable_save_order(tmp_path_factory, depth, document, again):
    """PER-9: every missing folder level is made; the temp file is fsynced before it replaces the target, the folder after."""
    import os
    import stat
    from unittest import mock

    folder = tmp_path_factory.mktemp("durable")
    for level in range(depth):
        folder = folder / f"level{level}"
    store = sm.JsonFileStore(folder / "memory.json")
    if again:
        store.save({"version": 1, "entries": []})
    trace: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        info = os.fstat(fd)
        trace.append(("folder" if stat.S_ISDIR(info.st_mode) else "file", info.st_ino))
        real_fsync(fd)

    def replace(src, dst):
        trace.append(("replace", str(dst)))
        real_replace(src, dst)

    with mock.patch.object(os, "fsync", fsync), mock.patch.object(os, "replace", replace):
        store.save(document)
    assert store.load() == document
    replaced = trace.index(("replace", str(store.path)))
    assert ("file", os.stat(store.path).st_ino) in trace[:replaced]
    assert ("folder", os.stat(folder).st_ino) in trace[replaced + 1 :]


# -- NUM-5, NUM-6 ------------------------------------------------------------------------------


@given(st.timedeltas(min_value=datetime.timedelta(microseconds=1), max_value=datetime.timedelta(days=36_500)))
def test_num_6_a_timedelta_is_exactly_its_milliseconds(duration):
    """NUM-6: a timedelta becomes its milliseconds exactly (an int when whole, else the nearest double) for every duration option."""
    exact = fractions.Fraction(duration // datetime.timedelta(microseconds=1), 1000)
    expected = int(exact) if exact.denominator == 1 else float(exact)
    for option in ("ttl", "recency_window", "working_ttl", "cache_ttl"):
        got = options.number_option(option, duration)
        assert got == expected and type(got) is type(expected)


@given(
    st.one_of(
        st.none(), st.floats(allow_nan=True), st.integers(-3, 3), st.text(max_size=3), st.booleans(), st.timedeltas()
    )
)
def test_num_5_warns_exactly_when_a_given_value_is_ignored(value):
    """NUM-5: importance and ttl warn iff a value was given and the rule ignored it; an entry's ttl=0 stays quiet."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    zero = datetime.timedelta(0)
    valid = {
        "importance": number and 0 <= value <= 1,
        "ttl": (number and value > 0) or (isinstance(value, datetime.timedelta) and value > zero),
    }
    quiet = (number and value == 0) or value == zero
    for option in ("importance", "ttl"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            options.number_option(option, value, quiet=(0,) if option == "ttl" else ())
        warned = any(issubclass(w.category, IgnoredValueWarning) for w in caught)
        expected = value is not None and not valid[option] and not (option == "ttl" and quiet)
        assert warned == expected


# -- ENT-16 ----------------------------------------------------------------------------------


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["note", "chat:x", "chat:", "chat:-1", "CHAT:9"]), st.integers(0, 50).map("chat:{}".format)
        ),
        max_size=8,
    ),
    st.integers(1, 4),
)
def test_ent_16_turns_continue_after_the_largest_chat_key_also_after_a_reload(keys, turns):
    """ENT-16: add_turn uses chat:(largest N stored + 1), counting on across a save and a load into a new memory."""
    store = sm.MemoryStore()
    mem = sm.create_memory(store=store, clock=lambda: 0, limit=100)
    for key in keys:
        mem.remember(key, "x")
    largest = max([int(k[5:]) for k in keys if k.startswith("chat:") and k[5:].isdigit()], default=0)
    added = [mem.add_turn("user", f"turn {i}").key for i in range(turns)]
    assert added == [f"chat:{largest + i}" for i in range(1, turns + 1)]
    mem.save()
    again = sm.create_memory(store=store, clock=lambda: 0, limit=100)
    assert again.add_turn("assistant", "after a restart").key == f"chat:{largest + turns + 1}"
    assert again["chat:" + str(largest + turns + 1)] == {"role": "assistant", "content": "after a restart"}


class _WordEncoder:
    """A tokenizer object: encode gives one token per character run, as a BPE would give a list."""

    def encode(self, text):
        return [part for part in text.replace("\n", " \n ").split(" ") if part]


@given(st.lists(st.tuples(st.text(max_size=20), st.floats(0, 1)), max_size=6), st.integers(0, 40))
def test_ctx_9_an_encoder_object_counts_as_len_of_encode(memories, budget):
    """CTX-9: tokenizer=obj with encode gives exactly the context of tokenizer=lambda t: len(obj.encode(t))."""
    encoder = _WordEncoder()
    mem = sm.create_memory(clock=lambda: 0, load=False)
    for i, (text, importance) in enumerate(memories):
        mem.remember(f"k{i}", text, importance=importance)
    assert mem.get_context(token_budget=budget, tokenizer=encoder) == mem.get_context(
        token_budget=budget, tokenizer=lambda text: len(encoder.encode(text))
    )


@given(st.text())
def test_tok_2_the_byte_bound_is_never_under_o200k(text):
    """TOK-2: upper_bound_tokens is the UTF-8 length and never below o200k_base's count, for any text."""
    bpe_openai = pytest.importorskip("bpe_openai")
    encoding = bpe_openai.get_encoding("o200k_base")
    assert len(encoding.encode(text)) <= sm.upper_bound_tokens(text) == len(text.encode("utf-8", "surrogatepass"))


# -- FLD-1, FLD-2 ------------------------------------------------------------------------------


@given(st.lists(st.text(max_size=60), unique=True, max_size=12))
def test_fld_1_any_ids_map_to_distinct_files_inside_the_folder(user_ids):
    """FLD-1: for any set of distinct ids, every file is directly inside the folder and no two share a name."""
    folder = sm.MemoryFolder("/srv/memories")
    paths = [folder.path_for(user_id) for user_id in user_ids]
    assert all(path.parent == folder.path and path.name.endswith(".json") and "/" not in path.name for path in paths)
    assert len({path.name for path in paths}) == len(user_ids)


@settings(max_examples=25)
@given(st.lists(st.text(max_size=30), unique=True, min_size=1, max_size=4))
def test_fld_2_each_id_reads_back_only_its_own_memory(user_ids):
    """FLD-2: what one id's memory saves, only that id's memory loads, through a real folder."""
    with tempfile.TemporaryDirectory() as root:
        folder = sm.MemoryFolder(root, autosave=True, clock=lambda: 0)
        for user_id in user_ids:
            folder.open(user_id).remember("id", user_id)
        assert [folder.open(user_id)["id"] for user_id in user_ids] == user_ids


# -- CLI-1 .. CLI-3 ----------------------------------------------------------------------------


def _cli(*args):
    from sentinel_memory.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@settings(max_examples=20)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "chat:1", "user:name"]), st.text(max_size=12), st.floats(0, 1)), max_size=5
    )
)
def test_cli_1_cli_2_cli_3_the_command_shows_what_the_library_holds(memories):
    """CLI-1, CLI-2, CLI-3: show --json and stats --json equal the library's view of the file; forget saves; exit 0."""
    with tempfile.TemporaryDirectory() as root:
        path = Path(root) / "memory.json"
        mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
        for key, text, importance in memories:
            mem.remember(key, text, importance=importance)
        mem.save()
        status, out, _ = _cli("show", str(path), "--json")
        assert status == 0 and [(row["key"], row["data"]) for row in json.loads(out)] == list(mem.items())
        status, out, _ = _cli("stats", str(path), "--json")
        assert status == 0 and json.loads(out)["size"] == len(mem)
        if memories:
            status, _, _ = _cli("forget", str(path), memories[0][0])
            assert status == 0 and memories[0][0] not in sm.create_memory(store=sm.JsonFileStore(path))
        status, _, err = _cli("show", str(Path(root) / "missing.json"))
        assert status == 1 and "missing.json" in err


@settings(max_examples=20)
@given(
    importances=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), max_size=8),
    expiring=st.integers(0, 3),
    limit=st.integers(1, 6),
    dry_run=st.booleans(),
)
def test_cli_4_compact_with_a_limit_leaves_what_the_library_keeps(importances, expiring, limit, dry_run):
    """CLI-4, CLI-2, PER-8: compact --limit N saves the entries a memory of limit N keeps, reports every drop, and only when it dropped one."""
    with tempfile.TemporaryDirectory() as root:
        path = Path(root) / "memory.json"
        mem = sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: 0)
        for i, importance in enumerate(importances):
            mem.remember(f"k{i}", f"note {i}", importance=importance, ttl=1 if i < expiring else None)
        mem.save()
        before = path.read_bytes()
        status, out, _ = _cli("compact", str(path), "--limit", str(limit), "--json", *(["--dry-run"] * dry_run))
        assert status == 0
        report = json.loads(out)
        dropped = {*report["expired"], *report["evicted"]}
        # What the library keeps of that file at limit N now (written at time 0, so no entry is fresh).
        now = sm.memory.wall_clock()
        reference, _, _ = core.from_document(sm.MemoryState(config=sm.Config(limit=limit)), json.loads(before), now=now)
        reference, _ = core.compact(reference, now=now)
        assert dropped == {f"k{i}" for i in range(len(importances))} - set(reference.entries)
        assert report["saved"] == (bool(dropped) and not dry_run)
        if report["saved"]:
            assert [e["key"] for e in json.loads(path.read_text())["entries"]] == list(reference.entries)
        else:
            assert path.read_bytes() == before


#: Text for the search by text: ASCII words, parts of words, digits, punctuation and accents.
_SEARCH_TEXT = st.lists(
    st.sampled_from(
        ["order", "orders", "reorder", "i", "I", "ORDER", "3", "33", "x2", "česky", "Ǆ", "\u212a", "_", "-"]
    ),
    max_size=6,
).map(" ".join) | st.text(max_size=12)
_SEARCHED_WORDS = st.sets(st.sampled_from(["order", "orders", "i", "3", "33", "x2", "cesky", "dz", "k", "é", "ord"]))


@given(
    st.lists(st.tuples(st.sampled_from(["a", "chat:3", "Order:i", "č:k"]), _SEARCH_TEXT | json_data), max_size=8),
    _SEARCHED_WORDS,
)
def test_rec_1_searching_the_text_finds_exactly_the_holders_of_a_word(memories, wanted):
    """REC-1: the search of the entries' text finds exactly the entries whose words include each word asked for."""
    entries = [sm.Entry(key, data, 0.5, 0, 0, None, seq) for seq, (key, data) in enumerate(memories)]
    found = holding(entries, [f"{e.key} {e.text}" for e in entries], wanted)
    assert found == {word: {e.seq: e for e in entries if word in e.words} for word in wanted}


@settings(max_examples=60)
@given(
    st.sampled_from([0, 1, 4, 1_000]),
    st.lists(
        st.one_of(
            st.tuples(st.just("remember"), st.sampled_from(["a", "b", "c", "chat:3"]), _SEARCH_TEXT, st.booleans()),
            st.tuples(st.just("forget"), st.sampled_from(["a", "b", "c", "chat:3"])),
            st.tuples(st.just("expire")),
            st.tuples(st.just("ask"), _SEARCHED_WORDS),
        ),
        max_size=12,
    ),
)
def test_rec_1_the_holders_stay_exact_whether_searched_for_or_worked_out(searches, steps):
    """REC-1: holders and may_hold stay exact through changes, whether the words were searched for, all worked out, or both in turn."""
    state, now = sm.MemoryState(config=sm.Config(limit=3)), 0
    with mock.patch.object(index_module, "_SEARCHES", searches):
        for step in steps:
            now += 1
            if step[0] == "remember":
                _, key, text, short = step
                state, _ = core.remember(state, key, text, now=now, ttl=1 if short else None)
            elif step[0] == "forget":
                state, _ = core.forget(state, step[1], now=now)
            elif step[0] == "expire":
                state, _ = core.compact(state, now=now + 1)
            else:
                truth = {w: {e.seq: e for e in state.entries.values() if w in e.words} for w in step[1]}
                assert state.index.may_hold(step[1]) >= {w for w in step[1] if truth[w]}
                for word in sorted(step[1]):
                    assert dict(state.index.holders(word)) == truth[word], word
                if state.index._holders is None and state.index._searches < searches:
                    # While searching, may_hold is exact, not only a bound.
                    assert state.index.may_hold(step[1]) == {w for w in step[1] if truth[w]}


# -- WRP-4, REC-5 ----------------------------------------------------------------------------

_monsters = st.one_of(
    st.integers(1, 3000).map(lambda depth: nest_list(depth)),
    st.integers(1, 3000).map(lambda digits: 10**digits),
    st.text(min_size=1, max_size=3).map(lambda text: text * 50_000),
    st.just(float("nan")),
    st.builds(object),
)


def nest_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@settings(max_examples=60)
@given(value=_monsters, where=st.sampled_from(["key", "data", "importance", "ttl", "budget", "query", "now", "limit"]))
def test_wrp_4_any_monster_anywhere_gets_a_documented_error_and_changes_nothing(value, where):
    """WRP-4, WRP-1: deep, huge or odd values in any argument of the core work or raise TypeError or ValueError, with a short message; the state stays."""
    state, _ = core.remember(sm.MemoryState(), "note", "a note", now=0)
    calls = {
        "key": lambda: core.remember(state, value, 1, now=0),
        "data": lambda: core.remember(state, "k", value, now=0),
        "importance": lambda: core.remember(state, "k", 1, now=0, importance=value),
        "ttl": lambda: core.remember(state, "k", 1, now=0, ttl=value),
        "budget": lambda: core.context(state, now=0, token_budget=value),
        "query": lambda: core.recall(state, value, now=0),
        "now": lambda: core.compact(state, now=value),
        "limit": lambda: core.make_config(limit=value),
    }
    before = core.to_document(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            calls[where]()
        except (TypeError, ValueError) as error:
            assert len(str(error)) < 2_000
    assert core.to_document(state) == before


@settings(max_examples=40)
@given(
    stored=st.lists(st.sampled_from(["order", "é", "orders", "ééé", "cafe", "café"]), min_size=1, max_size=6),
    word=st.sampled_from(["order", "é", "e", "cafe", "x"]),
    times=st.sampled_from([1, 2, 1000, 100_000]),
    glue=st.sampled_from(["", " "]),
)
def test_rec_5_a_long_query_finds_what_its_words_find(stored, word, times, glue):
    """REC-5, REC-1: a query of a word repeated up to 100,000 times, glued or spaced, recalls exactly the entries holding its words."""
    state = sm.MemoryState()
    for i, text in enumerate(stored):
        state, _ = core.remember(state, f"k{i}", text, now=0)
    query = glue.join([word] * times)
    wanted = words(query)
    hits = core.recall(state, query, now=0, limit=100)
    assert {hit.entry.key for hit in hits} == {f"k{i}" for i, text in enumerate(stored) if wanted & words(text)}


@given(
    role=st.text(max_size=8),
    content=st.text(max_size=20),
    extra=st.one_of(st.none(), st.sampled_from(["name", "id"])),
    role_is_text=st.booleans(),
)
def test_txt_4_exactly_a_role_and_a_content_render_as_a_line_of_chat(role, content, extra, role_is_text):
    """TXT-4, TXT-1: {"role": non-empty str, "content": str} renders as "role: content"; an empty role, any other key or a non-str value as canonical JSON."""
    from sentinel_memory.core.jsondata import canonical_json, text_of

    data: dict = {"role": role if role_is_text else len(role), "content": content}
    if extra is not None:
        data[extra] = 1
    assume(is_json_text(role) and is_json_text(content))
    expected = f"{role}: {content}" if role_is_text and role and extra is None else canonical_json(data)
    assert text_of(data) == expected
