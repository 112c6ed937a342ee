"""The LangGraph store (LG-1 .. LG-6): LangGraph's BaseStore API over per-namespace memories, run by a real graph."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, GetOp, PutOp

import sentinel_memory as sm
from sentinel_memory.integrations.langgraph import SentinelStore
from support import T0, FakeClock

USER = ("users", "42")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock) -> SentinelStore:
    return SentinelStore(tmp_path / "store", clock=clock)


def test_lg_1_put_get_delete_and_a_restart(tmp_path, store, clock):
    """LG-1, PER-3: put, get with created/updated times, overwrite, delete; a new store on the folder finds what was put."""
    assert isinstance(store, BaseStore)
    store.put(USER, "diet", {"text": "vegetarian"})
    clock.advance(5)
    store.put(USER, "diet", {"text": "vegan"})
    item = store.get(USER, "diet")
    assert item.value == {"text": "vegan"} and item.namespace == USER and item.key == "diet"
    assert item.created_at.timestamp() * 1000 == T0 and item.updated_at.timestamp() * 1000 == T0 + 5
    store.put(USER, "city", {"text": "Brno"})
    store.delete(USER, "diet")
    assert store.get(USER, "diet") is None
    again = SentinelStore(tmp_path / "store", clock=clock)
    assert again.get(USER, "city").value == {"text": "Brno"} and again.get(USER, "diet") is None


def test_lg_1_namespaces_never_share_a_memory(store):
    """LG-1, FLD-1: ("a", "b") and ("a/b",) and ("a", "b/") are three namespaces; a key in one is not in another."""
    for namespace in [("a", "b"), ("a/b",), ("a", "b/"), ("a,b",)]:
        store.put(namespace, "k", {"in": list(namespace)})
    for namespace in [("a", "b"), ("a/b",), ("a", "b/"), ("a,b",)]:
        assert store.get(namespace, "k").value == {"in": list(namespace)}


def test_lg_2_list_namespaces_with_prefix_suffix_wildcards_depth_and_pages(store):
    """LG-2: list_namespaces matches prefix and suffix conditions with "*", truncates to max_depth, sorts and pages; an emptied namespace is not listed."""
    for namespace in [("users", "1", "prefs"), ("users", "2", "prefs"), ("users", "2", "notes"), ("docs", "x")]:
        store.put(namespace, "k", {"v": 1})
    assert store.list_namespaces(prefix=("users",)) == [
        ("users", "1", "prefs"),
        ("users", "2", "notes"),
        ("users", "2", "prefs"),
    ]
    assert store.list_namespaces(suffix=("prefs",)) == [("users", "1", "prefs"), ("users", "2", "prefs")]
    assert store.list_namespaces(prefix=("users", "*", "notes")) == [("users", "2", "notes")]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("users",)]
    assert store.list_namespaces(limit=2, offset=1) == [("users", "1", "prefs"), ("users", "2", "notes")]
    store.delete(("docs", "x"), "k")
    assert ("docs", "x") not in store.list_namespaces()


def test_lg_3_a_bound_per_namespace_evicts_the_least_important(tmp_path, clock):
    """LG-3, CMP-1: with limit=3 a fourth put evicts the item of lowest importance, whatever its age, and only in its namespace."""
    store = SentinelStore(tmp_path / "s", limit=3, clock=clock)
    store.put(USER, "allergy", {"text": "peanuts", "importance": 1.0})
    store.put(USER, "smalltalk", {"text": "nice weather", "importance": 0.1})
    store.put(USER, "name", {"text": "Jakub", "importance": 0.9})
    store.put(("users", "7"), "other", {"text": "kept"})
    clock.advance(1)
    store.put(USER, "city", {"text": "Brno", "importance": 0.5})
    assert {item.key for item in store.search(USER)} == {"allergy", "name", "city"}
    assert store.get(("users", "7"), "other") is not None


def test_lg_4_expiry_is_exact_absolute_and_not_extended_by_reads(store, clock):
    """LG-4, EXP-2: ttl=1 minute is visible at +59,999 ms and gone at +60,000 ms, reads do not extend it; expires_at in a value is an absolute deadline."""
    store.put(USER, "code", {"text": "1234"}, ttl=1)
    store.put(USER, "offer", {"text": "10% off", "expires_at": T0 + 1_500})
    clock.advance(1_499)
    assert store.get(USER, "offer") is not None
    clock.advance(1)
    assert store.get(USER, "offer") is None
    clock.advance(60_000 - 1_500 - 1)
    assert store.get(USER, "code") is not None and [i.key for i in store.search(USER)] == ["code"]
    clock.advance(1)
    assert store.get(USER, "code") is None and store.search(USER) == []
    store.put(USER, "late", {"expires_at": T0})  # already past: nothing is stored
    assert store.get(USER, "late") is None
    now = clock.now
    store.put(USER, "edge", {"expires_at": now})  # exactly now: expired on arrival, so not stored (not a ttl of 0)
    store.put(USER, "next", {"expires_at": now + 1})
    assert store.get(USER, "edge") is None and store.get(USER, "next") is not None
    clock.advance(10**9)
    assert store.get(USER, "edge") is None and store.get(USER, "next") is None


def test_lg_4_a_read_asked_to_refresh_restarts_the_span(store, clock):
    """LG-4: get(refresh_ttl=True) gives the item its whole ttl again from that read."""
    store.put(USER, "code", {"text": "1234"}, ttl=1)
    clock.advance(50_000)
    store.get(USER, "code", refresh_ttl=True)
    clock.advance(50_000)
    assert store.get(USER, "code") is not None
    clock.advance(10_000)
    assert store.get(USER, "code") is None


def test_lg_5_search_by_words_filters_and_pages(store, clock):
    """LG-5, REC-2: search(query=) ranks by the memory's recall across the prefix's namespaces; filter and operators select; offset and limit page."""
    store.put(("users", "1"), "a", {"text": "likes spicy food", "kind": "pref", "n": 1})
    clock.advance(1)
    store.put(("users", "2"), "b", {"text": "spicy spicy curry", "kind": "pref", "n": 5})
    clock.advance(1)
    store.put(("users", "2"), "c", {"text": "lives in Brno", "kind": "fact", "n": 3})
    hits = store.search(("users",), query="spicy")
    assert [h.key for h in hits] == ["b", "a"] and hits[0].score >= hits[1].score > 0
    assert [h.key for h in store.search(("users",), filter={"kind": "pref"})] == ["b", "a"]
    assert [h.key for h in store.search(("users",), filter={"n": {"$gte": 3}})] == ["c", "b"]
    assert [h.key for h in store.search(("users",), limit=1, offset=1)] == ["b"]
    with pytest.raises(ValueError, match="operator"):
        store.search(("users",), filter={"n": {"$regex": "x"}})


def test_lg_1_bad_input_raises_and_nothing_of_the_batch_happens(store):
    """LG-1, WRP-1: a batch with a bad namespace, key or value raises a clear error and stores nothing, not even its good operations."""
    with pytest.raises(ValueError, match="namespace"):
        store.batch([PutOp(USER, "ok", {"v": 1}), PutOp((), "k", {"v": 1})])
    with pytest.raises(ValueError, match="key"):
        store.batch([PutOp(USER, "ok", {"v": 1}), GetOp(USER, "")])
    assert store.get(USER, "ok") is None
    with pytest.raises(TypeError):
        store.put(USER, "k", {"when": object()})
    assert store.get(USER, "k") is None


def test_lg_6_the_async_forms_do_what_the_sync_ones_do(store):
    """LG-6: aput, aget, asearch, alist_namespaces and adelete give the sync forms' results, off the event loop."""

    async def main():
        await store.aput(USER, "diet", {"text": "vegetarian"})
        item = await store.aget(USER, "diet")
        hits = await store.asearch(("users",), query="vegetarian")
        listed = await store.alist_namespaces()
        await store.adelete(USER, "diet")
        return item.value, [h.key for h in hits], listed, await store.aget(USER, "diet")

    assert asyncio.run(main()) == ({"text": "vegetarian"}, ["diet"], [USER], None)


def test_lg_1_a_graph_keeps_long_term_memory_in_the_store_across_a_restart(tmp_path, clock):
    """LG-1, LG-5: a LangGraph graph compiled with the store writes a fact in one run and finds it by query in a run on a new store object."""

    class State(TypedDict):
        said: Annotated[list[str], operator.add]

    def remember(state: State, *, store: BaseStore) -> dict:
        for text in state["said"]:
            if text.startswith("remember:"):
                store.put(USER, f"fact-{len(store.search(USER, limit=100))}", {"text": text.removeprefix("remember:")})
        return {}

    def answer(state: State, *, store: BaseStore) -> dict:
        hits = store.search(USER, query=state["said"][-1])
        return {"said": [hits[0].value["text"] if hits else "nothing"]}

    def build(store: SentinelStore):
        graph = StateGraph(State)
        graph.add_node("remember", remember)
        graph.add_node("answer", answer)
        graph.add_edge(START, "remember")
        graph.add_edge("remember", "answer")
        return graph.compile(store=store)

    build(SentinelStore(tmp_path / "g", clock=clock)).invoke({"said": ["remember:allergic to peanuts"]})
    out = build(SentinelStore(tmp_path / "g", clock=clock)).invoke({"said": ["what am I allergic to? peanuts"]})
    assert out["said"][-1] == "allergic to peanuts"
    assert sm.MemoryFolder(tmp_path / "g").open('["users","42"]').size() == 1
