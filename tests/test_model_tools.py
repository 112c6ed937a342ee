"""The operations a model calls, at every bound (TOOL-1 .. TOOL-5): exactly the limit is taken, one past it refused, naming the argument."""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from sentinel_memory.integrations.tools import operations as ops
from sentinel_memory.integrations.tools.operations import ToolArgumentError

NOW = 1_700_000_000_000


@pytest.fixture
def memory() -> sm.Memory:
    return sm.create_memory(clock=lambda: NOW)


def refused(call, argument: str, *words: str) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        call()
    assert caught.value.argument == argument and str(caught.value).startswith(f"{argument}: ")
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


@pytest.mark.parametrize(
    ("argument", "bound"),
    [("key", ops.MAX_KEY_CHARS), ("text", ops.MAX_TEXT_CHARS)],
)
def test_tool_2_key_and_text_take_exactly_their_bound(memory, argument, bound):
    """TOOL-2: a key of 200 and a text of 8000 characters are stored; one character more is refused naming the bound."""
    given = {"key": "k", "text": "t", argument: "w" * bound}
    assert ops.remember(memory, **given)["key"] == given["key"]
    over = {"key": "k2", "text": "t", argument: "w" * (bound + 1)}
    refused(lambda: ops.remember(memory, **over), argument, f"{bound + 1} characters", str(bound))
    assert len(memory) == 1


def test_tool_2_importance_and_ttl_bounds(memory):
    """TOOL-2: importance 0 and 1 and ttl 1 s and ten years are taken; just outside, a bool or a string is refused."""
    assert ops.remember(memory, "a", "x", importance=0)["importance"] == 0
    assert ops.remember(memory, "b", "x", importance=1)["importance"] == 1
    assert ops.remember(memory, "c", "x", ttl_seconds=1)["ttl_seconds"] == 1
    assert memory.get_entry("c").expires_at == NOW + 1000
    assert ops.remember(memory, "d", "x", ttl_seconds=ops.MAX_TTL_SECONDS)["ttl_seconds"] == ops.MAX_TTL_SECONDS
    before = memory.state
    for bad in (-0.0001, 1.0001, True, "0.5", float("nan")):
        refused(lambda bad=bad: ops.remember(memory, "e", "x", importance=bad), "importance", "from 0 to 1")
    for bad in (0.999, ops.MAX_TTL_SECONDS + 1, 0, -1, False, "60", float("inf")):
        refused(lambda bad=bad: ops.remember(memory, "e", "x", ttl_seconds=bad), "ttl_seconds", "from 1 to")
    assert memory.state is before


def test_tool_2_blank_text_turn_keys_and_wrong_kinds_are_refused(memory):
    """TOOL-2, TOOL-4: a blank key or text, a chat:N key, a number for a string are refused with what is accepted."""
    refused(lambda: ops.remember(memory, "  ", "x"), "key", "empty string")
    refused(lambda: ops.remember(memory, "k", "\n"), "text", "empty string")
    refused(lambda: ops.remember(memory, "chat:12", "x"), "key", "chat turn")
    refused(lambda: ops.remember(memory, 5, "x"), "key", "got 5")
    refused(lambda: ops.remember(memory, "k", ["x"]), "text", "got a list")
    refused(lambda: ops.forget(memory, None), "key", "got nothing")
    assert ops.remember(memory, "chat:x", "not a turn key")["key"] == "chat:x"
    assert ops.forget(memory, "chat:x") == {"key": "chat:x", "forgotten": True}
    assert ops.forget(memory, "chat:x") == {"key": "chat:x", "forgotten": False}


def test_tool_2_replacing_says_so(memory):
    """TOOL-2: remember on a live key replaces its text and says replaced."""
    assert ops.remember(memory, "k", "one")["replaced"] is False
    assert ops.remember(memory, "k", "two")["replaced"] is True
    assert memory["k"] == "two"


def test_tool_3_recall_limit_bounds_and_turns_left_out(memory):
    """TOOL-3: limit 1 and 50 are taken (5 by default, a whole float too), 0 and 51 refused; chat turns never come back."""
    for n in range(60):
        memory.remember(f"fact:{n}", f"apple {n}")
    memory.add_turn("user", "apple apple apple")
    assert len(ops.recall(memory, "apple")["hits"]) == ops.DEFAULT_RECALL_LIMIT
    assert len(ops.recall(memory, "apple", limit=1)["hits"]) == 1
    assert len(ops.recall(memory, "apple", limit=3.0)["hits"]) == 3
    hits = ops.recall(memory, "apple", limit=ops.MAX_RECALL_LIMIT)["hits"]
    assert len(hits) == 50 and all(hit["key"].startswith("fact:") for hit in hits)
    for bad in (0, 51, 2.5, True, "5"):
        refused(lambda bad=bad: ops.recall(memory, "apple", limit=bad), "limit", "from 1 to 50")
    refused(lambda: ops.recall(memory, "q" * 1001), "query", "1001 characters")
    assert ops.recall(memory, "q" * 1000) == {"hits": []}


def test_tool_3_get_context_budget_bounds_and_stats(memory):
    """TOOL-3: budgets 1 and 100000 are taken and the text fits; 0 and 100001 are refused; stats is memory.stats()."""
    memory.remember("user:diet", "vegetarian", importance=0.9)
    memory.add_turn("user", "hello there")
    assert ops.get_context(memory, 1) == {"text": "", "tokens": 0, "keys": [], "omitted": 1}
    full = ops.get_context(memory, ops.MAX_TOKEN_BUDGET)
    assert full["text"] == "user:diet: vegetarian" and full["keys"] == ["user:diet"]
    exact = ops.get_context(memory, full["tokens"])
    assert exact["keys"] == ["user:diet"] and exact["tokens"] == full["tokens"]
    assert ops.get_context(memory, full["tokens"] - 1)["keys"] == []
    for bad in (0, ops.MAX_TOKEN_BUDGET + 1, None, 1.5):
        refused(lambda bad=bad: ops.get_context(memory, bad), "token_budget", "from 1 to 100000")
    refused(lambda: ops.get_context(memory, 10, query=""), "query")
    assert ops.stats(memory) == memory.stats()


def test_tool_4_call_refuses_unknown_arguments_and_fills_missing_ones(memory):
    """TOOL-1, TOOL-4: call() names an argument the tool does not take and those it does; a missing one is refused by its check."""
    refused(
        lambda: ops.call(memory, "remember", {"key": "k", "text": "t", "ttl": 5}),
        "ttl",
        "key, text, importance, ttl_seconds",
    )
    refused(lambda: ops.call(memory, "stats", {"user_id": "bob"}), "user_id", "no arguments")
    refused(lambda: ops.call(memory, "remember", {"key": "k"}), "text", "got nothing")
    refused(lambda: ops.call(memory, "recall", ["apple"]), "arguments", "must be an object")
    assert ops.call(memory, "remember", {"key": "k", "text": "t", "importance": 0.7})["importance"] == 0.7
    assert set(ops.SCHEMAS) == set(ops.TOOL_DESCRIPTIONS) == set(ops.ARGUMENTS)
    with pytest.raises(KeyError):
        ops.call(memory, "drop_table", {})


def test_tool_5_user_id_from_reads_str_mapping_or_attribute():
    """TOOL-5: the user id is the context itself, its item or its attribute; none or an empty one is LookupError."""

    class Deps:
        user_id = "carol"
        tenant = "t-1"

    assert ops.user_id_from("alice") == "alice"
    assert ops.user_id_from({"user_id": "bob"}) == "bob"
    assert ops.user_id_from(Deps()) == "carol"
    assert ops.user_id_from(Deps(), "tenant") == "t-1"
    for bad in ("", {}, {"user_id": 7}, object(), None):
        with pytest.raises(LookupError, match="user_id"):
            ops.user_id_from(bad)
