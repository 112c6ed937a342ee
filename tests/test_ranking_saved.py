"""The ranking saved with the memory and shown by stats: documents, stores, loads that take or keep it (BM-10, BM-11)."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
import sys
import warnings

import pytest

import sentinel_memory as sm
from sentinel_memory.core import bm25
from sentinel_memory.core.bm25 import MissingStemmerError
from sentinel_memory.testing import in_processes

pytest.importorskip("snowballstemmer")

HOME = "I live in Brno"


def scorer(query, entries):
    """The app's own ranking: every entry scores 1."""
    return [1.0] * len(entries)


def caught(function):
    """``function()``'s result and the RankingWarnings it emitted, as their texts."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = function()
    return result, [str(w.message) for w in seen if issubclass(w.category, sm.RankingWarning)]


def on_file(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_bm_10_a_document_names_the_ranking_after_the_generation(tmp_path, clock):
    """BM-10, PER-1: bm25 and a function are named right after generation; a words memory names none."""
    for ranking, named in (("bm25", "bm25"), (scorer, "function"), ("words", None), (None, None)):
        path = tmp_path / f"{named}.json"
        mem = sm.create_memory(store=sm.JsonFileStore(path), ranking=ranking, autosave=True, clock=clock)
        mem.remember("user:home", HOME)
        document = on_file(path)
        if named is None:
            assert list(document) == ["version", "generation", "entries", "working"]
        else:
            assert list(document) == ["version", "generation", "ranking", "entries", "working"]
            assert document["ranking"] == named


def test_bm_10_cmp_6_stats_end_with_the_rankings_name(make):
    """BM-10, CMP-6: stats' last key is ranking: words by default, bm25, or function for the app's."""
    assert list(make().stats()) == ["size", "stored", "limit", "cache", "compactions", "expired", "evicted", "ranking"]
    assert make().stats()["ranking"] == "words"
    assert make(ranking="bm25").stats()["ranking"] == "bm25"
    assert make(ranking=scorer).stats()["ranking"] == "function"


def test_bm_11_a_memory_made_without_a_ranking_takes_the_saved_one(tmp_path, clock):
    """BM-11: reopened without a ranking, a bm25 memory ranks by bm25 (lives finds live) and saves it again."""
    path = tmp_path / "m.json"
    sm.create_memory(store=sm.JsonFileStore(path), ranking="bm25", autosave=True, clock=clock).remember(
        "user:home", HOME
    )
    mem, warned = caught(lambda: sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=clock))
    assert warned == []
    assert mem.stats()["ranking"] == "bm25"
    assert [hit.entry.key for hit in mem.recall("where does she live now?")] == ["user:home"]
    assert [hit.entry.key for hit in mem.recall("lives")] == ["user:home"]  # stemmed: words would not match
    mem.remember("user:pet", "a cat")  # the write after the load keeps the name
    assert on_file(path)["ranking"] == "bm25"


def test_bm_11_a_document_without_a_ranking_loads_as_words_without_a_warning(tmp_path, clock):
    """BM-11: a document written before rankings were saved loads ranked by words, silently, and saves as it was."""
    path = tmp_path / "old.json"
    old = {"version": 1, "entries": [{"key": "a", "data": HOME, "importance": 0.5, "createdAt": 0, "updatedAt": 0}]}
    path.write_text(json.dumps(old), encoding="utf-8")
    mem, warned = caught(lambda: sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=clock))
    assert (warned, mem.stats()["ranking"], mem.recall("lives")) == ([], "words", ())
    mem.remember("b", 2)
    assert "ranking" not in on_file(path)


def test_bm_11_a_given_ranking_wins_with_a_warning_and_the_next_save_names_it(tmp_path, clock):
    """BM-11: an old words file opened with bm25 warns once, naming store and both rankings; the write after names bm25."""
    path = tmp_path / "m.json"
    sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=clock).remember("user:home", HOME)
    mem, warned = caught(
        lambda: sm.create_memory(store=sm.JsonFileStore(path), ranking="bm25", autosave=True, clock=clock)
    )
    assert len(warned) == 1 and str(path) in warned[0] and "'words'" in warned[0] and "'bm25'" in warned[0]
    assert mem.stats()["ranking"] == "bm25" and "ranking" not in on_file(path)  # a load writes nothing
    mem.remember("user:pet", "a cat")
    assert on_file(path)["ranking"] == "bm25"
    _, warned = caught(lambda: sm.create_memory(store=sm.JsonFileStore(path), ranking="bm25", clock=clock))
    assert warned == []  # in step now


def test_bm_11_a_function_or_an_unknown_name_loads_as_words_with_a_warning(make):
    """BM-11: "function" (no document holds the function) and an unknown value rank by words, the warning names them."""
    for saved, named in (("function", "the app's own ranking function"), ("bm26", "'bm26'"), (7, "7")):
        store = sm.MemoryStore()
        store.save({"version": 1, "ranking": saved, "entries": []})
        mem, warned = caught(lambda store=store: make(store=store, load=True))
        assert mem.stats()["ranking"] == "words"
        assert len(warned) == 1 and named in warned[0], warned
        mem.remember("a", 1)
        mem.save()
        assert "ranking" not in store.load()
    store = sm.MemoryStore()
    store.save({"version": 1, "ranking": "bm25", "entries": []})
    mem = make(store=store)
    store.save({"version": 1, "generation": 1, "ranking": "function", "entries": []})
    _, warned = caught(mem.load)  # the bm25 it took before does not stay
    assert mem.stats()["ranking"] == "words" and len(warned) == 1


def test_bm_11_an_empty_store_warns_nothing_and_its_first_save_names_the_ranking(tmp_path, clock):
    """BM-11, MW-4: a bm25 memory on an empty SQLite database warns nothing; the first autosave is whole and names it."""
    store = sm.SqliteStore(tmp_path / "m.db")
    mem, warned = caught(lambda: sm.create_memory(store=store, ranking="bm25", autosave=True, clock=clock))
    assert warned == []
    mem.remember("a", HOME)
    assert store.load()["ranking"] == "bm25"


def sqlite_ranking(path):
    with sqlite3.connect(path) as connection:
        row = connection.execute("SELECT value FROM sentinel_memory_meta WHERE name = 'ranking'").fetchone()
    return None if row is None else json.loads(row[0])


def test_bm_10_sqlite_keeps_the_ranking_in_its_meta_table(tmp_path, clock):
    """BM-10, BM-11: SqliteStore keeps the name as a meta row; a switch back to words removes it at the next save."""
    path = tmp_path / "m.db"
    mem = sm.create_memory(store=sm.SqliteStore(path), ranking="bm25", autosave=True, clock=clock)
    mem.remember("a", HOME)
    mem.remember("b", "the weather")  # incremental: the row stays
    assert sqlite_ranking(path) == "bm25"
    again = sm.create_memory(store=sm.SqliteStore(path), autosave=True, clock=clock)  # another store object
    assert again.stats()["ranking"] == "bm25" and again.store.load()["ranking"] == "bm25"
    words, warned = caught(
        lambda: sm.create_memory(store=sm.SqliteStore(path), ranking="words", autosave=True, clock=clock)
    )
    assert len(warned) == 1
    words.forget("a")  # the write after the load is whole: it removes the row
    assert sqlite_ranking(path) is None
    assert sm.create_memory(store=sm.SqliteStore(path), clock=clock).stats()["ranking"] == "words"


def test_bm_10_redis_keeps_the_ranking_in_its_meta_hash(redis_client, clock):
    """BM-10, BM-11, RDS-1: the meta hash's ranking field, written by whole saves, kept by incremental ones."""
    store = sm.RedisStore(redis_client, key="u")
    mem = sm.create_memory(store=store, ranking="bm25", autosave=True, clock=clock)
    mem.remember("a", HOME)
    mem.remember("b", "the weather")
    assert json.loads(redis_client.hget(store.meta_key, "ranking")) == "bm25"
    again = sm.create_memory(store=sm.RedisStore(redis_client, key="u"), autosave=True, clock=clock)
    assert again.stats()["ranking"] == "bm25"
    again.remember("c", 3)  # in step: incremental, the field stays
    assert json.loads(redis_client.hget(store.meta_key, "ranking")) == "bm25"
    words, _ = caught(
        lambda: sm.create_memory(
            store=sm.RedisStore(redis_client, key="u"), ranking="words", autosave=True, clock=clock
        )
    )
    words.remember("d", 4)
    assert redis_client.hget(store.meta_key, "ranking") is None


def test_bm_11_another_process_reopens_with_the_saved_ranking(tmp_path):
    """BM-11: a memory saved with bm25 by one process ranks by bm25 in another that names no ranking."""
    path = tmp_path / "m.db"
    mem = sm.create_memory(store=sm.SqliteStore(path), ranking="bm25", autosave=True)
    mem.remember("user:home", HOME)
    mem.close()

    def reopen(_worker):
        other = sm.create_memory(store=sm.SqliteStore(path), autosave=True)
        if other.stats()["ranking"] != "bm25" or [hit.entry.key for hit in other.recall("lives")] != ["user:home"]:
            raise AssertionError("not ranked by bm25")
        other.remember("user:pet", "a cat")
        other.close()

    assert in_processes(1, reopen) == [0]
    assert sqlite_ranking(path) == "bm25"
    assert sm.create_memory(store=sm.SqliteStore(path)).get("user:pet") == "a cat"


def test_bm_11_a_transactions_reload_takes_the_ranking_another_writer_saved(tmp_path, clock):
    """BM-11, MW-6: a memory without a ranking takes the one another writer saved when its transaction reloads."""
    path = tmp_path / "m.json"
    follower = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, shared=True, clock=clock)
    follower.remember("a", 1)
    writer, _ = caught(
        lambda: sm.create_memory(store=sm.JsonFileStore(path), ranking="bm25", autosave=True, shared=True, clock=clock)
    )
    writer.remember("user:home", HOME)
    follower.remember("b", 2)  # reloads first
    assert follower.stats()["ranking"] == "bm25"
    assert on_file(path)["ranking"] == "bm25" and set(follower) == {"a", "user:home", "b"}


def test_bm_11_without_the_stemmer_a_bm25_document_is_a_clear_error_and_nothing_changes(make, monkeypatch):
    """BM-11, BM-3: a bm25 document without the stemmer raises MissingStemmerError naming the extra; the memory is as it was."""
    store = sm.MemoryStore()
    store.save(
        {
            "version": 1,
            "ranking": "bm25",
            "entries": [{"key": "a", "data": 1, "importance": 0.5, "createdAt": 0, "updatedAt": 0}],
        }
    )
    mem = make(store=store, load=False)
    mem.remember("mine", 1)
    monkeypatch.setattr(bm25, "_loaded", [])
    monkeypatch.setitem(sys.modules, "snowballstemmer", None)
    with pytest.raises(MissingStemmerError, match=r'sentinel-memory\[bm25\].*ranking="words"'):
        mem.load()
    assert (list(mem), mem.stats()["ranking"]) == (["mine"], "words")
    with pytest.raises(MissingStemmerError):
        make(store=store, load=True)
    words, warned = caught(lambda: make(store=store, ranking="words", load=True))
    assert list(words) == ["a"] and len(warned) == 1


class AsyncDocumentStore:
    """An async store of one document, as a native async store is driven (AIO-3)."""

    def __init__(self, document):
        self.document = document

    async def load(self):
        return copy.deepcopy(self.document)

    async def save(self, document):
        self.document = copy.deepcopy(document)


def test_bm_11_an_async_memory_takes_the_saved_ranking_too(clock):
    """BM-11, AIO-1: create_async_memory without a ranking ranks as the document says, on a sync or an async store."""
    saved = {"version": 1, "ranking": "bm25", "entries": []}
    sync_store = sm.MemoryStore()
    sync_store.save(saved)

    async def main():
        rankings = []
        for store in (sync_store, AsyncDocumentStore(saved)):
            mem = await sm.create_async_memory(store=store, clock=clock, autosave=True)
            given = await sm.create_async_memory(store=store, ranking="words", clock=clock)
            rankings.append((mem.stats()["ranking"], given.stats()["ranking"]))
            await mem.remember("a", 1)
        return rankings

    result, warned = caught(lambda: asyncio.run(main()))
    assert result == [("bm25", "words")] * 2 and len(warned) == 2
