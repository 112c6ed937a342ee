"""The number rule and the other options (NUM-*, OPT-*)."""

from __future__ import annotations

import math
import types

import pytest

import sentinel_memory as sm
from sentinel_memory.options import NUMBER_RULES, number_option

GARBAGE = ["0.9", math.nan, math.inf, -math.inf, None, True, False, [1], object()]


@pytest.mark.parametrize("value", [*GARBAGE, -1, 1.5, 2])
def test_num_1_invalid_importance_is_the_default_never_clamped(mem, value):
    """NUM-1: an importance that is not a number in [0, 1] gives 0.5, never a clamped 0 or 1."""
    assert mem.remember("k", "v", importance=value).importance == 0.5


@pytest.mark.parametrize("value", [0, 0.0, 1, 1.0, 0.25])
def test_num_1_zero_and_bounds_are_valid_importance(mem, value):
    """NUM-1: zero and the bounds are valid where the range allows them."""
    assert mem.remember("k", "v", importance=value).importance == value


def test_num_2_integral_float_counts_as_integer(make):
    """NUM-2: limit=5.0 is 5; limit=5.5 is invalid and gives the default."""
    assert make(limit=5.0).stats()["limit"] == 5
    assert isinstance(make(limit=5.0).stats()["limit"], int)
    assert make(limit=5.5).stats()["limit"] == 1000


def test_num_2_get_recent_and_recall_limits(mem):
    """NUM-2, NUM-3: get_recent and recall take integral floats; other values give 10."""
    for i in range(15):
        mem.remember(f"k{i}", "word")
    assert len(mem.get_recent(3.0)) == 3
    assert len(mem.get_recent(2.5)) == 10
    assert len(mem.get_recent(-1)) == 10
    assert len(mem.recall("word", limit=4.0)) == 4
    assert len(mem.recall("word", limit="4")) == 10
    assert len(mem.recall("word", limit=0)) == 0


@pytest.mark.parametrize("name", sorted(NUMBER_RULES))
@pytest.mark.parametrize("value", GARBAGE)
def test_num_3_every_option_falls_back_to_its_default(name, value):
    """NUM-3: every numeric option maps garbage to its documented default."""
    assert number_option(name, value) == NUMBER_RULES[name].default


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("ttl", 0, None),
        ("ttl", 0.5, 0.5),
        ("limit", 1, 1),
        ("limit", 0, 1000),
        ("recency_window", 0, 86_400_000),
        ("working_ttl", 1, 1),
        ("cache_ttl", -1, 300_000),
        ("recall_limit", 0, 0),
        ("recent_n", 2**40, 2**40),
    ],
)
def test_num_3_ranges(name, value, expected):
    """NUM-3: the range edges of the table: exclusive and inclusive minimums."""
    assert number_option(name, value) == expected


def test_num_3_create_memory_options(make):
    """NUM-3: invalid recency_window, working_ttl and cache_ttl fall back to their defaults."""
    mem = make(recency_window=-1, working_ttl="1h", cache_ttl=math.nan)
    config = mem.state.config
    assert (config.recency_window, config.working_ttl, config.cache_ttl) == (86_400_000, 3_600_000, 300_000)


@pytest.mark.parametrize(
    "options",
    [
        {"tokenizer": "o200k"},
        {"clock": 123},
        {"on_evict": "print"},
        {"autosave": 1},
        {"autosave": "yes"},
        {"load": None},
        {"store": object()},
        {"store": {"load": 1, "save": 2}},
    ],
)
def test_opt_1_wrong_kind_of_option_is_a_type_error(options):
    """OPT-1: non-callable tokenizer/clock/on_evict, non-bool autosave/load, a bad store raise TypeError."""
    with pytest.raises(TypeError):
        sm.create_memory(**options)


@pytest.mark.parametrize("options", [{"format": "{key}"}, {"separator": 0}, {"tokenizer": 4}])
def test_opt_1_wrong_kind_in_get_context(mem, options):
    """OPT-1: a non-callable format or tokenizer and a non-str separator raise TypeError."""
    with pytest.raises(TypeError):
        mem.get_context(token_budget=10, **options)


def test_opt_2_defaults_is_read_only_and_complete():
    """OPT-2: DEFAULTS is a read-only mapping holding every documented default."""
    assert isinstance(sm.DEFAULTS, types.MappingProxyType)
    with pytest.raises(TypeError):
        sm.DEFAULTS["limit"] = 5  # type: ignore[index]
    assert sm.DEFAULTS["limit"] == 1000
    assert sm.DEFAULTS["importance"] == 0.5
    assert sm.DEFAULTS["recency_window"] == 86_400_000
    assert sm.DEFAULTS["working_ttl"] == 3_600_000
    assert sm.DEFAULTS["cache_ttl"] == 300_000
    assert sm.DEFAULTS["separator"] == "\n"
    assert sm.DEFAULTS["tokenizer"] is sm.estimate_tokens
    assert sm.DEFAULTS["format"] is sm.default_format
    assert (sm.DEFAULTS["autosave"], sm.DEFAULTS["load"]) == (False, True)
