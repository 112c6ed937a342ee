"""The LangGraph store's edges: a ttl with a later expires_at, a match condition longer than a namespace, a search without a query (LG-2, LG-4, LG-5)."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from sentinel_memory.integrations import langgraph as langgraph_module
from sentinel_memory.integrations.langgraph import SentinelStore
from support import T0, FakeClock, import_error_without

USER = ("users", "42")
#: What an unknown filter operator's error offers instead.
OPS = "use one of ['$eq', '$gt', '$gte', '$lt', '$lte', '$ne']"


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


def test_lg_1_a_namespace_is_the_memory_named_by_its_compact_json_array(store):
    """LG-1: the folder holds a namespace under its JSON array as written (no spaces, non-ASCII kept), and the namespaces' list under REGISTRY."""
    store.put(("users", "Zoë"), "k", {"text": "x"})
    assert store.folder.path_for('["users","Zoë"]').exists()
    assert not store.folder.path_for('["users","Zo\\u00eb"]').exists()
    assert langgraph_module.REGISTRY == "sentinel-memory:langgraph-namespaces"
    assert store.folder.path_for(langgraph_module.REGISTRY).exists()
    assert repr(store) == f"SentinelStore({str(store.folder.path)!r})"


def test_lg_1_two_stores_on_one_folder_see_each_others_puts(tmp_path, clock):
    """LG-1, MW-6: the namespaces' memories are shared, so a second store object on the folder (another process's) reads what the first put, and the first what the second put."""
    first = SentinelStore(tmp_path / "store", clock=clock)
    second = SentinelStore(tmp_path / "store", clock=clock)
    first.put(USER, "a", {"text": "one"})
    assert second.get(USER, "a") is not None and second.list_namespaces() == [USER]
    second.put(USER, "b", {"text": "two"})
    second.put(("teams",), "c", {"text": "three"})
    assert first.get(USER, "b") is not None
    assert first.list_namespaces() == [("teams",), USER]
    second.put(USER, "d", {"text": "four"})
    first.put(USER, "e", {"text": "five"})  # a put on a memory opened before the other's: no lost update
    assert [item.key for item in second.search(USER)] == ["e", "d", "b", "a"]


def test_lg_4_the_store_declares_absolute_expiry_and_omitted_expired_items(tmp_path):
    """LG-4: ttl_config says reads do not refresh and expired items are omitted; an app's default_ttl is added to it."""
    assert SentinelStore(tmp_path / "a").ttl_config == {"refresh_on_read": False, "omit_expired": True}
    configured = SentinelStore(tmp_path / "b", ttl={"default_ttl": 5})
    assert configured.ttl_config == {"refresh_on_read": False, "omit_expired": True, "default_ttl": 5}


def test_lg_4_a_refresh_of_a_short_span_restamps_it_from_the_read(tmp_path):
    """LG-4: an item put to expire 1 ms later, read with refresh_ttl half a millisecond on, lives 1 ms from that read."""
    now = [float(T0)]
    store = SentinelStore(tmp_path / "store", clock=lambda: now[0])
    store.put(USER, "k", {"text": "x", "expires_at": T0 + 1})
    now[0] = T0 + 0.5
    assert store.get(USER, "k", refresh_ttl=True) is not None
    now[0] = T0 + 1.25
    assert store.get(USER, "k") is not None
    now[0] = T0 + 1.5
    assert store.get(USER, "k") is None


def test_lg_1_a_put_warns_nothing(store):
    """LG-1: a put, the first of its namespace included, stores without a warning (the namespaces' list takes a valid importance)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.put(USER, "a", {"text": "x"})
        store.put(("other",), "a", {"text": "x", "importance": 0.9})


@pytest.mark.parametrize(
    ("op", "error", "message"),
    [
        (
            GetOp(("users", ""), "k"),
            ValueError,
            "a namespace is a non-empty tuple of non-empty strings, got ('users', '')",
        ),
        (GetOp(USER, ""), ValueError, "a key is a non-empty str, got ''"),
        (PutOp(USER, "k", ["x"]), TypeError, "ops[1]: a value is a dict of JSON values, got list"),
        (SearchOp(USER, filter=["x"]), TypeError, "ops[1]: a search filter is a dict, got list"),
        (
            ListNamespacesOp(match_conditions=(MatchCondition("middle", ("a",)),)),
            ValueError,
            "match_type is 'prefix' or 'suffix', got 'middle'",
        ),
        ("get", ValueError, "unknown operation str"),
        (PutOp(USER, "k", {"x": {1}}), TypeError, "ops[1].value['x'] of type set is not JSON-serializable"),
        (PutOp(USER, "k", {"x": 1}, ttl=0), ValueError, "ttl is a number of minutes > 0, got 0"),
        (PutOp(USER, "k", {"x": 1}, ttl="5"), ValueError, "ttl is a number of minutes > 0, got '5'"),
        (
            PutOp(USER, "k", {"expires_at": "soon"}),
            ValueError,
            "expires_at is milliseconds since the epoch, got 'soon'",
        ),
        (SearchOp(USER, filter={"n": {"$regex": "x"}}), ValueError, "unsupported filter operator '$regex'; " + OPS),
        (SearchOp(USER, filter={"a": {"b": {"$bad": 1}}}), ValueError, "unsupported filter operator '$bad'; " + OPS),
        (SearchOp(USER, filter={"a": [{"$bad": 1}]}), ValueError, "unsupported filter operator '$bad'; " + OPS),
    ],
)
def test_lg_7_a_bad_operation_is_named_and_nothing_of_its_batch_runs(store, op, error, message):
    """LG-7: each bad operation raises with a message naming it, and the good put before it in the batch is not stored."""
    with pytest.raises(error) as refused:
        store.batch([PutOp(USER, "first", {"text": "x"}), op])
    assert str(refused.value) == message
    assert store.get(USER, "first") is None


def test_lg_5_with_a_query_the_better_score_comes_first_whatever_its_age(store, clock):
    """LG-5: search with a query orders by score first: an older item matching both words precedes a newer one matching one."""
    store.put(USER, "old", {"text": "spicy noodles with spicy sauce"})
    clock.advance(1_000)
    store.put(USER, "new", {"text": "noodles"})
    hits = store.search(USER, query="spicy noodles")
    assert [h.key for h in hits] == ["old", "new"] and hits[0].score > hits[1].score


def test_wrp_5_close_saves_every_memory_and_a_later_call_opens_them_again(tmp_path, clock):
    """WRP-5, LG-1: close() closes the namespaces' memories (nothing lost: a new store reads every put); the closed store still answers."""
    store = SentinelStore(tmp_path / "store", clock=clock)
    store.put(USER, "a", {"text": "one"})
    store.put(("teams",), "b", {"text": "two"})
    store.close()
    assert store._memories == {}
    assert SentinelStore(tmp_path / "store", clock=clock).list_namespaces() == [("teams",), USER]
    assert store.get(USER, "a") is not None
    store.close()


def test_lg_1_each_namespace_is_opened_once_per_store_and_the_list_holds_every_namespace(store, monkeypatch):
    """LG-1: a namespace's memory (and the namespaces' list) is opened once and kept, not loaded again per operation; the list is not bounded by a small limit (100 namespaces)."""
    opened: list[str] = []
    real = store.folder.open

    def spy(user_id: str, **kwargs: object) -> object:
        opened.append(user_id)
        return real(user_id, **kwargs)

    monkeypatch.setattr(store.folder, "open", spy)
    for n in range(100):
        store.put(("n", str(n)), "k", {"text": "x"})
    for _ in range(2):
        store.get(("n", "0"), "k")
        store.put(("n", "0"), "k2", {"text": "y"})
        assert len(store.list_namespaces(limit=1000)) == 100
    assert sorted(opened) == sorted([langgraph_module.REGISTRY] + [f'["n","{n}"]' for n in range(100)])


def test_lg_1_without_langgraph_the_module_names_the_extra(monkeypatch):
    """LG-1: with LangGraph missing, importing the module raises ImportError naming the [langgraph] extra."""
    assert import_error_without(monkeypatch, "langgraph", "sentinel_memory.integrations.langgraph") == (
        "sentinel_memory.integrations.langgraph needs LangGraph: pip install 'sentinel-memory[langgraph]'"
    )


@pytest.mark.parametrize(
    ("wanted", "keys"),
    [
        ({"$eq": 2}, ["b"]),
        ({"$ne": 2}, ["a", "c", "d"]),
        ({"$gt": 2}, ["c"]),
        ({"$gte": 2}, ["b", "c"]),
        ({"$lt": 2}, ["a"]),
        ({"$lte": 2}, ["a", "b"]),
        ({"$gt": 1, "$lt": 3}, ["b"]),
        (2, ["b"]),
    ],
)
def test_lg_5_each_filter_operator_at_its_boundary(store, clock, wanted, keys):
    """LG-5: $eq, $ne, $gt, $gte, $lt, $lte compare as LangGraph's stores do, the boundary value 2 included or not; a text never passes a comparison."""
    for key, n in (("a", 1), ("b", 2), ("c", 3), ("d", "2")):
        store.put(USER, key, {"text": "x", "n": n})
        clock.advance(1)
    assert sorted(item.key for item in store.search(USER, filter={"n": wanted})) == keys


def test_lg_7_operators_mixed_with_fields_are_refused_before_the_batch_runs(store):
    """LG-7: a filter dict that mixes operators and a field name is refused at the check, naming the field, and nothing of the batch runs."""
    with pytest.raises(ValueError) as refused:
        store.batch([PutOp(USER, "first", {"text": "x"}), SearchOp(USER, filter={"n": {"$gt": 1, "m": 2}})])
    assert str(refused.value) == "unsupported filter operator 'm'; " + OPS
    assert store.get(USER, "first") is None


def test_lg_5_a_nested_filter_matches_fields_inside_a_dict_and_a_list_element_by_element(store, clock):
    """LG-5: a dict in a filter matches a dict value field by field; a list matches a list of the same length element by element; nothing else matches them."""
    values = {
        "cs": {"meta": {"lang": "cs", "x": 1}, "tags": ["a", "b"]},
        "en": {"meta": {"lang": "en"}, "tags": ["a", "b", "c"]},
        "flat": {"meta": "cs", "tags": "ab"},
        "short": {"meta": {}, "tags": ["a"]},
    }
    for key, value in values.items():
        store.put(USER, key, {"text": "x", **value})
        clock.advance(1)
    assert [item.key for item in store.search(USER, filter={"meta": {"lang": "cs"}})] == ["cs"]
    assert [item.key for item in store.search(USER, filter={"tags": ["a", "b"]})] == ["cs"]
