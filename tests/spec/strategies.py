"""Strategies shared by the state machines and the property tests."""

from __future__ import annotations

import math

from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core.tokens import additive, per_line

#: Few keys, so overwrites and re-remembers happen constantly.
KEY_POOL = ["user:name", "user:allergy", "chat:1", "chat:2", "order:42", "session:cart", "ž"]

VOCABULARY = [
    "refund",
    "status",
    "cart",
    "peanut",
    "allergy",
    "name",
    "Prague",
    "česky",
    "CESKY",
    "42",
    "order",
    # Compatibility characters: REC-1 normalises by NFD, so a ligature, full-width
    # letters and a superscript stay what they are and match only themselves.
    "\ufb01le",
    "file",
    "\uff23\uff21\uff32\uff34",
    "x\u00b2",
    "x2",
]

#: Numbers the number rule must map to a default, never clamp.
INVALID_NUMBERS = ["0.9", math.nan, math.inf, -math.inf, -1, True, False, None, [1]]

words = st.sampled_from(VOCABULARY)
sentence = st.lists(words, max_size=8).map(" ".join)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    sentence,
    st.text(max_size=6),
)
nested_data = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)
#: ENT-2 forbids only circular data: one sub-object may appear in several places.
shared_data = st.one_of(
    st.lists(json_scalars, min_size=1, max_size=3), st.dictionaries(words, json_scalars, max_size=2)
).map(lambda part: [part, {"again": part, "and": [part]}])
json_data = st.one_of(sentence, nested_data, shared_data)

importances = st.one_of(
    st.none(),
    st.floats(0, 1),
    st.sampled_from([0, 1, 0.1, 0.5, 0.55, 0.6, 0.65, 0.9, 1.5, 2, *INVALID_NUMBERS]),
)
ttls = st.one_of(
    st.none(),
    st.sampled_from([0, -5, 1, 2, 1000, 60_000, 0.5, *INVALID_NUMBERS]),
    st.integers(1, 10_000_000),
)
limits = st.one_of(st.integers(1, 6), st.sampled_from([0, -1, 2.5, 3.0, "3", *INVALID_NUMBERS]))
windows = st.one_of(st.none(), st.sampled_from([1, 1000, 60_000, 86_400_000, 0, -1, "60000", math.nan]))
budgets = st.one_of(
    st.integers(0, 120),
    st.floats(0, 120),
    st.sampled_from([10**9, -1, math.nan, math.inf, "30", True, None]),
)
queries = st.one_of(sentence, st.sampled_from(["", "?!", "REFUND status", "what is my name?", "jak se jmenuju"]))


def word_count(text: str) -> int:
    """Counts whitespace-separated words: additive only up to the separator."""
    return len(text.split())


def odd_tokenizer(text: str) -> int:
    """Deterministic but deliberately irregular: vowels, newlines and length all count."""
    vowels = sum(text.count(v) for v in "aeiouAEIOU")
    return vowels + 3 * text.count("\n") + len(text) // 3 + (1 if "42" in text else 0)


def vowel_count(text: str) -> int:
    """Truly additive over any concatenation, so it may be declared so."""
    return sum(text.count(v) for v in "aeiouAEIOU")


def half_length(text: str) -> float:
    """Additive too, but in halves: exact in doubles, yet not whole numbers (CTX-8 must not sum them)."""
    return len(text) / 2


def merging(text: str) -> int:
    """Joins merge as a BPE's do: a line's last punctuation and the line feed after it count one less,
    and a line feed before a space two more (so the repair of CTX-12 runs)."""
    return len(text) - sum(text.count(mark + "\n") for mark in ".?!") + 2 * text.count("\n ")


#: The estimator and the additive tokenizers take the fast fill (CTX-8), whose
#: result must equal the model's naive fill; word_count and odd_tokenizer take
#: the naive one; the per_line ones take the counted fill (CTX-12), whose result
#: must equal the model's counted fill.
TOKENIZERS = [sm.estimate_tokens, word_count, odd_tokenizer, additive(vowel_count), additive(half_length)]
COUNTED = [per_line(merging), per_line(odd_tokenizer), per_line(vowel_count), per_line(half_length)]
#: Declared additive but not: the fast fill must fall back (CTX-8).
FALSE_ADDITIVE = [additive(odd_tokenizer), additive(word_count), additive(sm.estimate_tokens)]
FORMATS = [sm.default_format, lambda e: f"[{e.key}] {e.text}", lambda e: e.key]
SEPARATORS = ["\n", " | ", "", "\n\n"]
BAD_TOKEN_RESULTS = [math.nan, -1, -0.5, "3", None, True, math.inf]
