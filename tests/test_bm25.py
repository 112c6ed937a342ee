"""The BM25 ranking and the app's own scorer: terms, scores, ties, neighbours, options and errors (BM-*)."""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path

import pytest

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import bm25
from sentinel_memory.core.state import MemoryState

pytest.importorskip("snowballstemmer")

SPEC = Path(__file__).resolve().parent.parent / "spec"


def keys(hits):
    return [hit.entry.key for hit in hits]


@pytest.fixture
def bm(make):
    return make(ranking="bm25")


def test_bm_1_terms_leave_out_stop_words_and_stem():
    """BM-1, BM-3: "lives" and "live" are one term, stop words are gone, the order and repeats stay."""
    assert bm25.terms("Where does Caroline live? She LIVES in Brno, lives!") == [
        "carolin",
        "live",
        "live",
        "brno",
        "live",
    ]
    assert bm25.query_terms("lives live LIVING") == ["live"]
    assert bm25.terms("Ženy žijí") == ["zeni", "ziji"]  # REC-1's words: no marks, then the English stemmer


def test_bm_2_stop_words_are_the_spec_data():
    """BM-2: the stop words are exactly the 153 words of spec/stop-words.txt."""
    lines = (SPEC / "stop-words.txt").read_text(encoding="utf-8").splitlines()
    listed = [line for line in lines if line and not line.startswith("#")]
    assert listed == sorted(listed) and len(listed) == 153
    assert frozenset(listed) == bm25.STOP_WORDS


def test_bm_3_the_stemmer_is_snowball_english_of_the_pinned_release():
    """BM-3: the installed snowballstemmer generates its English stemmer from the pinned Snowball release."""
    import snowballstemmer

    module = Path(snowballstemmer.__file__).parent / "english_stemmer.py"
    assert f"by Snowball {bm25.SNOWBALL_VERSION}" in module.read_text(encoding="utf-8").splitlines()[0]
    assert [bm25.stem(w) for w in ("generously", "running", "lives", "caroline")] == [
        "generous",
        "run",
        "live",
        "carolin",
    ]


def test_bm_3_without_the_stemmer_the_ranking_names_its_extra(monkeypatch, make):
    """BM-3: without snowballstemmer, ranking="bm25" raises MissingStemmerError naming the extra; "words" still works."""
    monkeypatch.setattr(bm25, "_loaded", [])
    monkeypatch.setitem(sys.modules, "snowballstemmer", None)
    with pytest.raises(bm25.MissingStemmerError, match=r"sentinel-memory\[bm25\]") as raised:
        make(ranking="bm25")
    assert str(raised.value) == (
        'ranking="bm25" needs the Snowball stemmer: pip install "sentinel-memory[bm25]" (snowballstemmer)'
    )
    with pytest.raises(ImportError, match="snowballstemmer"):
        core.make_config(ranking="bm25")
    assert make().recall("x") == ()


def test_bm_4_ln_and_idf_are_the_pinned_doubles():
    """BM-4: ln and idf give the pinned doubles (a port must match these bits)."""
    assert bm25.ln(1.0) == 0.0
    assert bm25.ln(2.0) == 0.6931471805599453
    assert bm25.ln(10.0) == 2.3025850929940455  # the platform's log says ...046, one ulp above
    assert abs(bm25.ln(10.0) - math.log(10.0)) <= math.ulp(2.3)
    assert bm25.idf(1, 1) == bm25.ln(1.0 + 0.5 / 1.5)
    assert bm25.idf(600, 1) == 5.993129826427043
    assert bm25.idf(600, 600) == bm25.ln(1.0 + 0.5 / 600.5)


def test_bm_4_score_follows_the_formula_in_its_order(bm):
    """BM-4, BM-5: one entry's score is idf * (tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl)) summed in term order."""
    bm.remember("a", "refund refund order")  # "a" is a stop word: 3 terms
    bm.remember("k2", "order shipped")  # k2, order, ship
    bm.remember("k3", "weather")
    (hit,) = [h for h in bm.recall("refund order") if h.entry.key == "a"]
    mean = (3 + 3 + 2) / 3
    refund = bm25.idf(3, 1) * (2 * (1.2 + 1.0)) / (2 + 1.2 * (1.0 - 0.75 + 0.75 * 3 / mean))
    order = bm25.idf(3, 2) * (1 * (1.2 + 1.0)) / (1 + 1.2 * (1.0 - 0.75 + 0.75 * 3 / mean))
    assert hit.score == 0.0 + order + refund  # "order" < "refund": summed in that order


def test_bm_5_only_stop_words_match_nothing(bm):
    """BM-5: a query of stop words and punctuation has no terms and no hits; an entry of stop words never matches."""
    bm.remember("a", "the and of")
    bm.remember("b", "refund")
    assert bm.recall("the, and?") == ()
    assert keys(bm.recall("the refund")) == ["b"]


def test_bm_5_recall_limit_is_exact(bm):
    """BM-5: recall returns at most limit hits, exactly limit when more match, and none for limit 0."""
    for i in range(12):
        bm.remember(f"k{i}", f"refund number {i}")
    assert len(bm.recall("refund", limit=11)) == 11
    assert len(bm.recall("refund", limit=12)) == 12
    assert len(bm.recall("refund", limit=13)) == 12
    assert bm.recall("refund", limit=0) == ()


def test_bm_6_ties_go_to_higher_retention_then_the_newer(bm, clock):
    """BM-6: equal scores rank by retention (importance), then the newer entry."""
    bm.remember("old", "refund", importance=0.9)
    clock.advance(1)
    bm.remember("low", "refund", importance=0.2)  # newer, but of lower retention
    clock.advance(1)
    bm.remember("new", "refund", importance=0.9)
    assert keys(bm.recall("refund")) == ["new", "old", "low"]


def test_bm_8_a_context_carries_the_neighbours_of_a_hit_but_recall_does_not(bm, clock):
    """BM-8: the entries just before and after a hit follow it in a context; recall returns the hit alone."""
    for i, text in enumerate(["hello", "what did you paint?", "a sunrise over the lake", "nice", "bye", "ok"]):
        bm.remember(f"t{i}", text)
        clock.advance(60_000)
    assert keys(bm.recall("paint")) == ["t1"]
    context = bm.get_context(token_budget=16, query="paint")  # the three lines count 16, a fourth would not fit
    assert [e.key for e in context.entries] == ["t0", "t1", "t2"]


def test_bm_8_neighbours_skip_expired_entries(bm, clock):
    """BM-8: a neighbour is the nearest live entry; an expired one in between is passed over."""
    bm.remember("before", "a question")
    clock.advance(1)
    bm.remember("gone", "short lived", ttl=10)
    clock.advance(1)
    bm.remember("hit", "painting")
    clock.advance(1)
    bm.remember("filler", "x " * 40)
    clock.advance(20)
    ranked = core.ranking.matches(bm.state, "paint", clock(), 10, in_context=True)
    assert [entry.key for _, entry in ranked] == ["hit", "filler", "before"]
    assert ranked[1][0] == ranked[2][0] == 0.5 * ranked[0][0]


@pytest.mark.parametrize("edges_expired", [False, True])
def test_bm_8_neighbours_of_many_hits_are_each_hits_own(bm, clock, edges_expired):
    """BM-8: the neighbours found for many hits at once are each one's, at the oldest and newest and past expired ones."""
    ttl = 10 if edges_expired else None
    bm.remember("first", "oldest", ttl=ttl)
    for i in range(12):
        clock.advance(1)
        bm.remember(f"k{i}", f"line {i}", ttl=10 if i % 3 == 1 else None)
    clock.advance(1)
    bm.remember("last", "newest", ttl=ttl)
    clock.advance(20)
    index, now = bm.state.index, clock()
    live = index.live_by_age(now)
    assert [live[0].key, live[-1].key] == (["k0", "k11"] if edges_expired else ["first", "last"])
    assert index.neighbours_of(live, now) == {entry.seq: index.neighbours(entry, now) for entry in live}
    assert index.neighbours_of(live[:1], now)[live[0].seq] == live[1:2]
    assert index.neighbours_of(live[-1:], now)[live[-1].seq] == live[-2:-1]


def test_bm_8_get_messages_ranks_the_facts_by_bm25(bm):
    """BM-8, BM-9: get_messages' facts come by the memory's ranking: "lives" finds the fact about living."""
    bm.remember("user:home", "I live in Brno")
    bm.remember("user:pet", "a cat named Mourek " * 3)
    bm.add_turn("user", "Where does she live these days?")
    result = bm.get_messages(token_budget=40, query="where does she lives", system="Facts:")
    assert "user:home" in result.messages[0]["content"] and "Mourek" not in result.messages[0]["content"]


def test_bm_9_words_stays_the_default(make):
    """BM-9: create_memory ranks by REC-2 unless told; "words" does not stem."""
    mem = make()
    mem.remember("a", "I live in Brno")
    assert mem.state.config.ranking == "words"
    assert mem.recall("lives") == ()
    assert keys(make(ranking="bm25", load=False).recall("x")) == []


def test_bm_9_bad_rankings_are_refused(make):
    """BM-9: an unknown name raises ValueError, a non-callable TypeError, and nothing is made."""
    with pytest.raises(ValueError, match="ranking"):
        make(ranking="okapi")
    with pytest.raises(TypeError, match="ranking"):
        make(ranking=3)


def test_bm_9_a_scorer_function_ranks_and_gets_copies(make):
    """BM-9: a scorer gets the query and a copy of every live entry oldest first; scores > 0 rank, best first."""
    seen = []

    def by_length(query, entries):
        seen.append((query, [e.key for e in entries]))
        entries[0].data["x"] = "changed"  # a copy: the memory keeps its own
        return [len(e.key) - 1 for e in entries]

    mem = make(ranking=by_length)
    mem.remember("a", {"x": 1})
    mem.remember("bbb", "y")
    mem.remember("cc", "z")
    assert keys(mem.recall("anything")) == ["bbb", "cc"]
    assert seen == [("anything", ["a", "bbb", "cc"])]
    assert mem.get("a") == {"x": 1}
    assert [e.key for e in mem.get_context(token_budget=2, query="q").entries] == ["bbb"]
    assert mem.recall("...") == () and len(seen) == 2  # no words: the scorer is not asked


@pytest.mark.parametrize(
    ("returned", "error", "match"),
    [
        (lambda n: [1.0] * (n - 1), ValueError, "2 scores for 3 entries"),
        (lambda n: [math.nan] * n, ValueError, "finite"),
        (lambda n: [True] * n, TypeError, "numbers"),
        (lambda n: ["1"] * n, TypeError, "numbers"),
        (lambda n: 5, TypeError, "sequence"),
    ],
)
def test_bm_9_a_scorer_that_returns_the_wrong_thing_raises_and_changes_nothing(make, returned, error, match):
    """BM-9: a wrong count, a non-finite or non-number score, or no sequence raises; the memory is as it was, and works after."""
    answers = [returned]
    mem = make(ranking=lambda query, entries: answers[0](len(entries)))
    for key in ("a", "b", "c"):
        mem.remember(key, key)
    before = mem.state
    with pytest.raises(error, match=match):
        mem.recall("a")
    with pytest.raises(error, match=match):
        mem.get_context(token_budget=1, query="a")
    assert mem.state is before
    answers[0] = lambda n: [0.0, 2.0, 1.0]
    assert keys(mem.recall("a")) == ["b", "c"]


def test_bm_9_the_folder_and_the_langgraph_store_take_the_ranking(tmp_path, clock):
    """BM-9, LG-5: MemoryFolder passes ranking on; SentinelStore ranks by BM25 unless told, so "lives" finds "live"."""
    folder = sm.MemoryFolder(tmp_path / "f", ranking="bm25", clock=clock)
    assert folder.open("u").state.config.ranking == "bm25"
    assert folder.open("u", ranking="words").state.config.ranking == "words"
    langgraph = pytest.importorskip("sentinel_memory.integrations.langgraph")
    store = langgraph.SentinelStore(tmp_path / "s", clock=clock)
    store.put(("users", "1"), "home", {"text": "I live in Brno"})
    store.put(("users", "1"), "pet", {"text": "the cat lives on the sofa"})
    store.put(("users", "1"), "food", {"text": "spicy curry"})
    assert {h.key for h in store.search(("users",), query="where does he lives")} == {"home", "pet"}
    words = langgraph.SentinelStore(tmp_path / "w", clock=clock, ranking="words")
    words.put(("users", "1"), "home", {"text": "I live in Brno"})
    assert words.search(("users",), query="lives") == []


def test_bm_4_an_empty_state_and_entries_without_terms_match_nothing():
    """BM-4: no live entry, or no term in any, means no match and no division by zero."""
    state = MemoryState(config=core.make_config(ranking="bm25"))
    assert core.recall(state, "refund", now=1000) == ()
    state, _ = core.remember(state, "the", "and of", now=1000)
    assert core.recall(state, "refund the", now=1000) == ()
    assert [e.key for e in core.context(state, now=1000, token_budget=10, query="refund").entries] == ["the"]


def test_bm_9_the_async_memory_takes_the_ranking():
    """BM-9: create_async_memory(ranking="bm25") ranks by BM25 too, through the same reads."""

    async def main():
        mem = await sm.create_async_memory(ranking="bm25", clock=lambda: 0)
        await mem.remember("user:home", "I live in Brno")
        assert keys(mem.recall("where does she lives")) == ["user:home"]
        assert mem.get_context(token_budget=20, query="lives").text == "user:home: I live in Brno"

    asyncio.run(main())


def test_bm_7_the_pruned_search_reads_on_until_the_held_kth_best_beats_every_unread_terms_bound():
    """BM-7: the search stops reading a term's new entries only when the k-th best held is above all the unread terms
    could add; stopping at half that bound would miss an entry that a later, commoner term lifts into the best two."""
    mem = sm.create_memory(ranking="bm25", clock=lambda: 1000)
    for key, text in [
        ("e0", "beta gamma"),
        ("e1", "rare beta alpha beta rare gamma common alpha gamma beta gamma rare"),
        ("e2", "alpha"),
        ("e3", "gamma gamma rare rare"),
    ]:
        mem.remember(key, text)
    assert [match.entry.key for match in mem.recall("rare beta", limit=2)] == ["e1", "e3"]
    assert [match.entry.key for match in mem.recall("rare beta", limit=4)] == ["e1", "e3", "e0"]


def test_bm_5_an_entry_holding_three_query_terms_gets_the_sum_in_code_point_order():
    """BM-5, BM-7: summed in the order the search reads the lists, this entry's three parts come out one ulp above;
    the pruned search gives it the pinned double of BM-5's order, as scoring every entry does."""
    mem = sm.create_memory(ranking="bm25", clock=lambda: 1000)
    texts = [
        "caroline dance",
        "river dance",
        "lives notebook caroline dance support paint",
        "caroline refund notebook river",
        "dance support river notebook river",
        "lives",
        "refund caroline paint refund",
    ]
    for i, text in enumerate(texts):
        mem.remember(f"k{i}", text)
    query = bm25.query_terms("dance group lives paint support")
    state = mem.state
    idfs, mean, _ = bm25.live_stats(query, state.index.postings(), len(texts), [])
    (entry,) = [e for e in state.index.live_by_age(1000) if e.key == "k2"]
    counts, length = entry.bm25_terms
    pinned = bm25.score(query, counts, length, idfs, mean)
    read_order = sorted((t for t in query if t in counts), key=idfs.__getitem__, reverse=True)
    as_read = 0.0  # the parts summed rarest first, as the lists are read
    for i, term in enumerate(read_order):
        value = bm25.part(idfs[term], counts[term], length, mean)
        as_read = value if i == 0 else as_read + value
    assert as_read != pinned  # the case is one where the order matters
    (hit,) = [h for h in mem.recall("dance group lives paint support", limit=3) if h.entry.key == "k2"]
    assert hit.score == pinned == 3.284602966453379


def test_bm_8_a_hit_whose_half_ties_the_limit_th_score_still_lifts_its_neighbour():
    """BM-8: A scores 2p, B and C score p, the 3rd best; A's half ties p, so its neighbour D (importance 1) is carried
    to p and wins the tie by retention: the first three are A, D, C, as scoring every entry gives."""
    from sentinel_memory.core.ranking import matches, naive

    state = MemoryState(config=core.make_config(limit=100, ranking="bm25"))
    for now, (key, text, importance) in enumerate(
        [("?", "alpha gamma", 0.5), ("!", "alpha beta", 0.5), ("!!", "zeta", 1.0), ("??", "beta delta", 0.5)]
    ):
        state, _ = core.remember(state, key, text, importance=importance, now=1000 + now)
    now = 2000
    found = matches(state, "alpha beta", now, 3, in_context=True)
    live = state.index.live_by_age(now)
    expected = naive(bm25.query_terms("alpha beta"), live, now, state.config.recency_window, neighbours=True)[:3]
    assert [(v, e.key) for v, e in found] == [(v, e.key) for v, e in expected]
    (a, a_key), (p, d_key), (p_again, c_key) = [(v, e.key) for v, e in found]
    assert (a_key, d_key, c_key) == ("!", "!!", "??") and a == 2 * p == 2 * p_again
