"""The reliability fuzz: every public entry point, given deep, huge and self-referencing values (WRP-4, REC-5).

Each call either works or raises one of the documented types (``TypeError``,
``ValueError`` and their subclasses; ``KeyError`` from ``mem[key]``), never
``RecursionError``, ``OverflowError``, ``AttributeError`` or a client
library's own error, and a call that raises leaves the memory as it was.
"""

from __future__ import annotations

import sys
import time
import warnings

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import lexical
from support import T0, nest


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class EndlessRepr:
    def __repr__(self) -> str:
        return repr(self)


class BadHash:
    """An object whose hash and == raise, as a user's object with a broken __hash__ does."""

    def __hash__(self) -> int:
        raise RuntimeError("no hash for you")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no == for you")


class BadHashText(str):
    """A str whose own hash and == raise: it passes every isinstance(value, str) check."""

    def __hash__(self) -> int:
        raise RuntimeError("no hash for you")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no == for you")

    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def _self_list() -> list:
    value: list = []
    value.append(value)
    return value


def _self_dict() -> dict:
    value: dict = {}
    value["me"] = value
    return value


def _deep_dict(depth: int) -> dict:
    top: dict = {}
    inner = top
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    return top


VALUES = {
    "a list 5,000 deep": nest(5000),
    "a dict 5,000 deep": _deep_dict(5000),
    "a list holding itself": _self_list(),
    "a dict holding itself": _self_dict(),
    "an int of 5,000 digits": 10**5000,
    "a string of a million accented letters": "é" * 1_000_000,
    "a lone surrogate": "\ud800",
    "an object whose repr raises": BadRepr(),
    "an object whose repr recurses": EndlessRepr(),
    "an object whose hash and == raise": BadHash(),
    "a str whose hash, == and str() raise": BadHashText("facts"),
    "NaN": float("nan"),
    "bytes": b"key",
    "-1": -1,
}


def fresh() -> sm.Memory:
    return sm.create_memory(clock=lambda: T0)


#: Every public entry point, with the bad value in one argument at a time: ``(value, memory, folder)``.
CALLS = {
    "create_memory(limit=)": lambda v, m, d: sm.create_memory(limit=v),
    "create_memory(recency_window=)": lambda v, m, d: sm.create_memory(recency_window=v),
    "create_memory(working_ttl=)": lambda v, m, d: sm.create_memory(working_ttl=v),
    "create_memory(tokenizer=)": lambda v, m, d: sm.create_memory(tokenizer=v),
    "create_memory(store=)": lambda v, m, d: sm.create_memory(store=v),
    "create_memory(clock=)": lambda v, m, d: sm.create_memory(clock=v),
    "a clock that returns it": lambda v, m, d: sm.create_memory(clock=lambda: v),
    "create_memory(on_evict=)": lambda v, m, d: sm.create_memory(on_evict=v),
    "create_memory(autosave=)": lambda v, m, d: sm.create_memory(autosave=v),
    "create_memory(shared=)": lambda v, m, d: sm.create_memory(shared=v),
    "create_memory(load=)": lambda v, m, d: sm.create_memory(load=v),
    "remember(key)": lambda v, m, d: m.remember(v, 1),
    "remember(data)": lambda v, m, d: m.remember("k", v),
    "remember(importance=)": lambda v, m, d: m.remember("k", 1, importance=v),
    "remember(ttl=)": lambda v, m, d: m.remember("k", 1, ttl=v),
    "get(key)": lambda v, m, d: m.get(v),
    "get(default=)": lambda v, m, d: m.get("missing", v),
    "get_entry(key)": lambda v, m, d: m.get_entry(v),
    "has(key)": lambda v, m, d: m.has(v),
    "forget(key)": lambda v, m, d: m.forget(v),
    "mem[key]": lambda v, m, d: m[v],
    "key in mem": lambda v, m, d: v in m,
    "get_recent(n)": lambda v, m, d: m.get_recent(v),
    "recall(query)": lambda v, m, d: m.recall(v),
    "recall(limit=)": lambda v, m, d: m.recall("note", limit=v),
    "get_context(token_budget=)": lambda v, m, d: m.get_context(token_budget=v),
    "get_context(query=)": lambda v, m, d: m.get_context(token_budget=50, query=v),
    "get_context(tokenizer=)": lambda v, m, d: m.get_context(token_budget=50, tokenizer=v),
    "get_context(format=)": lambda v, m, d: m.get_context(token_budget=50, format=v),
    "get_context(separator=)": lambda v, m, d: m.get_context(token_budget=50, separator=v),
    "get_context(must_keep=)": lambda v, m, d: m.get_context(token_budget=50, must_keep=v),
    "a tokenizer that returns it": lambda v, m, d: m.get_context(token_budget=50, tokenizer=lambda text: v),
    "get_context(only=)": lambda v, m, d: m.get_context(token_budget=50, only=v),
    "get_messages(token_budget=)": lambda v, m, d: m.get_messages(token_budget=v),
    "get_messages(query=)": lambda v, m, d: m.get_messages(token_budget=50, query=v),
    "get_messages(facts_share=)": lambda v, m, d: m.get_messages(token_budget=50, facts_share=v),
    "get_messages(must_keep=)": lambda v, m, d: m.get_messages(token_budget=50, must_keep=v),
    "add_turn(role)": lambda v, m, d: m.add_turn(v, "hi"),
    "add_turn(text)": lambda v, m, d: m.add_turn("user", v),
    "cache.put(key)": lambda v, m, d: m.cache.put(v, 1),
    "cache.put(value)": lambda v, m, d: m.cache.put("k", v),
    "cache.put(ttl=)": lambda v, m, d: m.cache.put("k", 1, ttl=v),
    "cache.get(key)": lambda v, m, d: m.cache.get(v),
    "cache.delete(key)": lambda v, m, d: m.cache.delete(v),
    "working.set(patch)": lambda v, m, d: m.working.set(v),
    "working.set({k: value})": lambda v, m, d: m.working.set({"k": v}),
    "MemoryFolder(path)": lambda v, m, d: sm.MemoryFolder(v),
    "MemoryFolder.open(user_id)": lambda v, m, d: sm.MemoryFolder(d).open(v),
    "MemoryFolder(limit=)": lambda v, m, d: sm.MemoryFolder(d, limit=v).open("u"),
    "JsonFileStore(path)": lambda v, m, d: sm.JsonFileStore(v),
    "JsonFileStore(lock_wait=)": lambda v, m, d: sm.JsonFileStore(d / "m.json", lock_wait=v),
    "JsonFileStore.save(document)": lambda v, m, d: sm.JsonFileStore(d / "s.json").save(v),
    "SqliteStore(path)": lambda v, m, d: sm.SqliteStore(v),
    "SqliteStore(lock_wait=)": lambda v, m, d: sm.SqliteStore(d / "m.db", lock_wait=v),
    "MemoryStore(lock_wait=)": lambda v, m, d: sm.MemoryStore(lock_wait=v),
    "MemoryStore.save(document)": lambda v, m, d: sm.MemoryStore().save(v),
    "RedisStore(url=)": lambda v, m, d: sm.RedisStore(url=v, key="k"),
    "RedisStore(key=)": lambda v, m, d: sm.RedisStore(url="redis://127.0.0.1:1/0", key=v),
    "RedisStore(idle_ttl=)": lambda v, m, d: sm.RedisStore(url="redis://127.0.0.1:1/0", key="k", idle_ttl=v),
    "RedisStore(lock_wait=)": lambda v, m, d: sm.RedisStore(url="redis://127.0.0.1:1/0", key="k", lock_wait=v),
    "estimate_tokens": lambda v, m, d: sm.estimate_tokens(v),
    "upper_bound_tokens": lambda v, m, d: sm.upper_bound_tokens(v),
    "additive": lambda v, m, d: sm.additive(v)("text"),
    "make_config(limit=)": lambda v, m, d: sm.make_config(limit=v),
    "MemoryState(entries=)": lambda v, m, d: sm.MemoryState(entries=v),
    "MemoryState(next_seq=)": lambda v, m, d: sm.MemoryState(next_seq=v),
    "core.remember(now=)": lambda v, m, d: core.remember(sm.MemoryState(), "k", 1, now=v),
    "core.context(now=)": lambda v, m, d: core.context(sm.MemoryState(), now=v, token_budget=10),
    "core.from_document(document)": lambda v, m, d: core.from_document(sm.MemoryState(), v, now=0),
}


@pytest.mark.parametrize("call", CALLS, ids=str)
def test_wrp_4_every_entry_point_refuses_monsters_with_documented_errors(call, tmp_path):
    """WRP-4, WRP-1: deep, huge and self-referencing values give a documented error with a short message, or work; the memory stays as it was."""
    allowed: tuple[type[BaseException], ...] = (TypeError, ValueError)
    if call == "mem[key]":
        allowed += (KeyError,)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default, whatever other tests set: a deep value's RecursionError shows
    try:
        check_every_value(call, allowed, tmp_path)
    finally:
        sys.setrecursionlimit(limit)


def check_every_value(call: str, allowed: tuple[type[BaseException], ...], tmp_path) -> None:
    for name, value in VALUES.items():
        mem = fresh()
        mem.remember("note", "a note to recall")
        before = mem.state
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                CALLS[call](value, mem, tmp_path)
            except allowed as error:
                if not isinstance(error, KeyError):  # a KeyError carries the key itself, as a dict's does
                    assert len(str(error)) < 2_000, f"{call} with {name}: a message of {len(str(error))} characters"
                assert mem.state is before, f"{call} with {name} raised but changed the memory"
            except BaseException as error:
                pytest.fail(f"{call} with {name} raised {type(error).__name__}: {str(error)[:200]}")


def test_wrp_4_a_message_shows_a_refused_value_briefly():
    """WRP-4: a refused argument is shown at most a few levels and characters deep, whatever it is."""
    with pytest.raises(ValueError) as raised:
        fresh().get_context(token_budget=nest(5000))
    assert "token_budget" in str(raised.value) and len(str(raised.value)) < 200
    with pytest.raises(TypeError) as raised:
        sm.create_memory(clock=lambda: BadRepr()).remember("k", 1)
    assert "BadRepr instance" in str(raised.value)  # reprlib names what it cannot show


def test_rec_5_a_huge_query_costs_what_reading_its_words_costs():
    """REC-5: recall and get_context with a 4 MB query take about as long as splitting it into words, never more than 3x."""
    query = "é" * 4_000_000  # one word of four million letters: no stored text holds it
    mem = fresh()
    for i in range(200):
        mem.remember(f"note:{i}", f"a note about orders, é {i}")

    def timed(function) -> float:
        started = time.perf_counter()
        function()
        return time.perf_counter() - started

    reading = min(timed(lambda: lexical.words(query)) for _ in range(2))
    assert timed(lambda: mem.recall(query)) < 3 * reading + 0.5
    assert timed(lambda: mem.get_context(token_budget=100, query=query)) < 3 * reading + 0.5
