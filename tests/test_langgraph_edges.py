"""The LangGraph store's edges: a ttl with a later expires_at, a match condition longer than a namespace, a search without a query (LG-2, LG-4, LG-5)."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from sentinel_memory.integrations.langgraph import SentinelStore
from support import T0, FakeClock

USER = ("users", "42")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock) -> SentinelStore:
    return SentinelStore(tmp_path / "store", clock=clock)


@pytest.mark.parametrize(("ttl", "expires_at"), [(1, T0 + 120_000), (2, T0 + 60_000)])
def test_lg_4_a_ttl_and_an_expires_at_the_sooner_wins(store, clock, ttl, expires_at):
    """LG-4, EXP-2: an item put with both a ttl and an expires_at lives until the sooner of the two: visible at +59,999 ms, gone at +60,000."""
    store.put(USER, "code", {"text": "1234", "expires_at": expires_at}, ttl=ttl)
    clock.advance(59_999)
    assert store.get(USER, "code") is not None
    clock.advance(1)
    assert store.get(USER, "code") is None and store.search(USER) == []


def test_lg_2_a_match_condition_longer_than_a_namespace_does_not_match_it(store):
    """LG-2: a prefix or suffix condition with more labels than a namespace never matches it, wildcards or not."""
    store.put(("users",), "k", {"text": "top"})
    store.put(USER, "k", {"text": "one user"})
    store.put(("teams", "users"), "k", {"text": "a team"})
    assert store.list_namespaces(prefix=("users", "42")) == [USER]
    assert store.list_namespaces(prefix=("users", "*")) == [USER]
    assert store.list_namespaces(suffix=("teams", "users")) == [("teams", "users")]
    assert store.list_namespaces(suffix=("*", "users")) == [("teams", "users")]
    assert store.list_namespaces(prefix=("users",)) == [("users",), USER]


def test_lg_5_a_search_without_a_query_has_no_score(store, clock):
    """LG-5: search without a query gives items whose score is None (not 0.0), newest first; with one, a number."""
    store.put(USER, "a", {"text": "likes spicy food"})
    clock.advance(1)
    store.put(USER, "b", {"text": "lives in Brno"})
    hits = store.search(USER)
    assert [(h.key, h.score) for h in hits] == [("b", None), ("a", None)]
    (hit,) = store.search(USER, query="spicy")
    assert hit.key == "a" and isinstance(hit.score, float) and hit.score > 0
