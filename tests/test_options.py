"""The number rule and the other options (NUM-*, OPT-*)."""

from __future__ import annotations

import math
import types
import warnings
from datetime import timedelta

import pytest

import sentinel_memory as sm
from sentinel_memory.core.options import NUMBER_RULES, number_option
from support import MINUTE

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


# -- NUM-5, NUM-6: ignored values are not silent; durations take a timedelta ----------------------


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("ttl", timedelta(minutes=15), 15 * MINUTE),
        ("ttl", timedelta(microseconds=1500), 1.5),
        ("ttl", timedelta(days=1, milliseconds=1), 86_400_001),
    ],
)
def test_num_6_a_timedelta_ttl_is_exact_milliseconds(mem, clock, option, value, expected):
    """NUM-6: ttl=timedelta(minutes=15) expires at now + 900,000 ms; a part of a millisecond is kept exactly."""
    entry = mem.remember("cart", "2 items", ttl=value)
    assert entry.expires_at == clock.now + expected
    assert type(entry.expires_at - clock.now) is type(expected)


def test_num_6_the_cart_note_with_a_timedelta_goes_at_minute_15(mem, clock):
    """NUM-6, EXP-2: the issue's cart note, with a timedelta, is there at minute 14 and gone at minute 15."""
    mem.remember("session:cart", "2 items in the cart", ttl=timedelta(minutes=15))
    clock.advance(14 * MINUTE)
    assert mem.has("session:cart")
    clock.advance(MINUTE)
    assert not mem.has("session:cart")


def test_num_6_every_duration_option_takes_a_timedelta(make, clock):
    """NUM-6: recency_window, working_ttl, cache_ttl and cache.put's ttl accept timedeltas."""
    mem = make(recency_window=timedelta(hours=1), working_ttl=timedelta(seconds=10), cache_ttl=timedelta(seconds=5))
    config = mem.state.config
    assert (config.recency_window, config.working_ttl, config.cache_ttl) == (3_600_000, 10_000, 5_000)
    mem.cache.put("a", 1, ttl=timedelta(seconds=1))
    clock.advance(999)
    assert mem.cache.get("a") == 1
    clock.advance(1)
    assert mem.cache.get("a") is None


def test_num_6_a_zero_or_negative_timedelta_is_invalid(mem):
    """NUM-6, NUM-5: a negative timedelta is an invalid ttl (no expiry, a warning); timedelta(0) is ttl=0 (no expiry, quietly)."""
    with pytest.warns(sm.IgnoredValueWarning, match=r"ttl=datetime.timedelta\(days=-1, seconds=86399\)"):
        assert mem.remember("k", "v", ttl=timedelta(seconds=-1)).expires_at is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mem.remember("k", "v", ttl=timedelta(0)).expires_at is None


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (
            lambda m: m.remember("k", "v", importance="high"),
            r"importance='high' is not a number >= 0 and <= 1; using the default \(0.5\)",
        ),
        (lambda m: m.remember("k", "v", importance=1.5), r"importance=1.5 .* using the default \(0.5\)"),
        (lambda m: m.remember("k", "v", ttl=-5), r"ttl=-5 .* using the default \(no expiry\)"),
        (lambda m: m.get_recent(-1), r"get_recent n=-1 is not an integer >= 0; using the default \(10\)"),
        (lambda m: m.recall("x", limit=2.5), r"recall limit=2.5 .* using the default \(10\)"),
        (lambda m: m.cache.put("k", 1, ttl=0), r"ttl=0 .* using the memory's cache_ttl \(300000\)"),
        (
            lambda m: sm.create_memory(limit=0, load=False),
            r"limit=0 is not an integer >= 1; using the default \(1000\)",
        ),
        (lambda m: sm.create_memory(recency_window="1d", load=False), r"recency_window='1d' .* \(86400000\)"),
    ],
)
def test_num_5_every_ignored_value_warns_naming_option_value_and_default(mem, call, pattern):
    """NUM-5: an ignored value warns with the option, the value and what was used, at the caller's line."""
    with pytest.warns(sm.IgnoredValueWarning, match=pattern) as caught:
        call(mem)
    assert caught[0].filename == __file__


def test_num_5_an_overwrite_says_it_kept_the_entrys_importance(mem):
    """NUM-5, NUM-4: an invalid importance on an existing key names the entry's importance as what was used."""
    mem.remember("k", "v", importance=0.8)
    with pytest.warns(sm.IgnoredValueWarning, match=r"using the entry's importance \(0.8\)"):
        assert mem.remember("k", "w", importance=-1).importance == 0.8


def test_num_5_absent_values_and_a_zero_ttl_do_not_warn(mem):
    """NUM-5: None (absent) never warns, and an entry's ttl=0, documented as no expiry, does not either."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mem.remember("k", "v", importance=None, ttl=None)
        mem.remember("k", "v", ttl=0)
        mem.get_recent()
        mem.recall("k")


def test_num_5_a_type_checker_flags_a_string_importance(tmp_path):
    """NUM-5: mypy --strict reports importance="high" and ttl="15m", and accepts a float and a timedelta."""
    from mypy import api

    program = tmp_path / "bot.py"
    program.write_text(
        "from datetime import timedelta\n"
        "import sentinel_memory as sm\n"
        "mem = sm.create_memory()\n"
        "mem.remember('a', 1, importance=0.9, ttl=timedelta(minutes=15))\n"
        "mem.remember('b', 1, importance='high')\n"
        "mem.remember('c', 1, ttl='15m')\n",
        encoding="utf-8",
    )
    out, _, status = api.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(program)])
    assert status == 1
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["5", "6"]
