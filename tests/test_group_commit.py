"""Group commit and durability: a block's changes are one save, a crash leaves an old or a new file (MW-10, PER-23, PER-24, SRV-5)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import sentinel_memory as sm
from sentinel_memory.stores.jsontext import dumps, loads
from support import T0
from support import FailingFileStore as Counting


class AsyncDict:
    """A store of coroutines over a ``MemoryStore``: drives ``AsyncMemory``'s native engine."""

    def __init__(self) -> None:
        self.inner = sm.MemoryStore()
        self.saves = 0
        self.fail_next = False

    async def load(self) -> dict[str, Any] | None:
        return self.inner.load()

    async def save(self, document: dict[str, Any]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("network down")
        self.saves += 1
        self.inner.save(document)


def stored_keys(store: Any) -> list[str]:
    document = store.load() if not isinstance(store, AsyncDict) else store.inner.load()
    return [] if document is None else [entry["key"] for entry in document["entries"]]


def clock() -> int:
    return T0


@pytest.fixture
def store(tmp_path: Path) -> Counting:
    return Counting(tmp_path / "memory.json")


def test_mw_10_a_group_is_one_save_at_its_end(store):
    """MW-10: the persisted changes of a group save nothing each, and once when it ends; the file holds them all."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    with mem.group():
        mem.add_turn("user", "What is on the menu?")
        mem.remember("topic", "menu")
        mem.forget("topic")
        mem.working.set({"step": 1})
        assert store.saves == 0
    assert store.saves == 1
    assert stored_keys(store) == ["chat:1"] and store.load()["working"]["data"] == {"step": 1}
    mem.remember("after", 1)  # the step after: a change outside a group saves at once, the next generation
    assert store.saves == 2 and stored_keys(store) == ["chat:1", "after"]
    assert sm.create_memory(store=sm.JsonFileStore(store.path)).generation == mem.generation == 2


def test_mw_10_a_group_without_persisted_changes_saves_nothing(store):
    """MW-10: a group of reads and cache changes only saves nothing."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    with mem.group():
        mem.cache.put("k", 1)
        mem.get("missing")
    assert store.saves == 0


def test_mw_10_a_group_that_raises_leaves_the_memory_and_its_store_as_they_were(store):
    """MW-10: a raising block keeps none of its changes, stores nothing; the next change starts from there."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    mem.remember("kept", 1)
    with pytest.raises(KeyError), mem.group():
        mem.remember("kept", 2)
        mem.add_turn("user", "half")
        raise KeyError("boom")
    assert dict(mem.items()) == {"kept": 1} and stored_keys(store) == ["kept"] and store.saves == 1
    mem.add_turn("user", "whole")  # the step after: numbered as if the failed group never ran
    assert stored_keys(store) == ["kept", "chat:1"] and mem["chat:1"]["content"] == "whole"


def test_mw_10_a_group_whose_save_fails_keeps_nothing_and_the_retry_saves(store):
    """MW-10: when the group's one save raises, the memory goes back too; the same group again saves."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    store.fail_next = True
    with pytest.raises(OSError, match="disk full"), mem.group():
        mem.remember("a", 1)
        mem.remember("b", 2)
    assert len(mem) == 0 and store.load() is None and mem.generation == 0
    with mem.group():
        mem.remember("a", 1)
        mem.remember("b", 2)
    assert stored_keys(store) == ["a", "b"] and store.saves == 1


def test_mw_10_groups_nest_only_the_outermost_saves_and_an_inner_raise_goes_back_to_its_start(store):
    """MW-10: an inner group that raises undoes only its own changes; the outer saves once, at its end."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    with mem.group():
        mem.remember("outer", 1)
        with pytest.raises(ValueError), mem.group():
            mem.remember("inner", 1)
            raise ValueError
        with mem.group():
            mem.remember("inner2", 1)
        assert store.saves == 0
    assert store.saves == 1 and stored_keys(store) == ["outer", "inner2"]


def test_mw_10_a_save_inside_a_group_stores_what_came_before_and_a_raise_goes_back_no_further(store):
    """MW-10: save() in a group stores the changes before it; a later raise undoes only what came after."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    with pytest.raises(RuntimeError), mem.group():
        mem.remember("a", 1)
        mem.save()
        mem.remember("b", 2)
        raise RuntimeError
    assert list(mem.keys()) == ["a"] and stored_keys(store) == ["a"]
    mem.remember("c", 3)
    assert stored_keys(store) == ["a", "c"]


def test_mw_10_with_autosave_off_a_raising_group_still_goes_back(store):
    """MW-10: without autosave a group saves nothing, and one that raises leaves the memory as it was."""
    mem = sm.create_memory(store=store, clock=clock)
    mem.remember("a", 1)
    with pytest.raises(KeyError), mem.group():
        mem.remember("b", 1)
        raise KeyError
    assert list(mem.keys()) == ["a"] and store.saves == 0
    with mem.group():
        mem.remember("b", 1)
    assert store.saves == 0
    mem.save()
    assert stored_keys(store) == ["a", "b"]


def test_mw_10_mw_4_a_group_sends_only_its_changes_to_an_incremental_store(tmp_path):
    """MW-10, MW-4: on SQLite the group's one save is one save_changes holding every key it touched."""
    db = sm.SqliteStore(tmp_path / "memory.db")
    calls: list[Any] = []
    original = db.save_changes
    db.save_changes = lambda changes: (calls.append(changes), original(changes))[1]  # type: ignore[method-assign]
    mem = sm.create_memory(store=db, autosave=True, clock=clock)
    mem.remember("a", 1)
    with mem.group():
        mem.remember("b", 2)
        mem.forget("a")
        mem.remember("c", 3)
    assert len(calls) == 2
    assert sorted(e.key for e in calls[1].upserts) == ["b", "c"] and list(calls[1].deletes) == ["a"]
    again = sm.create_memory(store=sm.SqliteStore(tmp_path / "memory.db"))
    assert dict(again.items()) == {"b": 2, "c": 3}


def test_mw_10_mw_6_a_shared_group_holds_the_store_until_its_save_and_loses_no_other_writer(tmp_path):
    """MW-10, MW-6: with shared=True another writer's change waits for the group and both are kept."""
    folder = sm.MemoryFolder(tmp_path, clock=clock)
    first, second = folder.open("u"), folder.open("u")
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait()
        second.remember("other", 1)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with first.group():
        first.remember("mine", 1)
        inside.set()
        time.sleep(0.2)
        assert not done.is_set()  # the other writer waits for the group's lock
        first.remember("mine2", 2)
    thread.join(10)
    assert done.is_set()
    again = folder.open("u")
    assert sorted(again.keys()) == ["mine", "mine2", "other"]
    first.remember("after", 1)  # the step after: the first memory reloads and keeps the other's change
    assert sorted(folder.open("u").keys()) == ["after", "mine", "mine2", "other"]


def test_mw_10_another_threads_change_waits_for_the_group_and_is_never_undone(store):
    """MW-10, MW-5: a change from another thread waits for the group; a raising group does not undo it."""
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    inside = threading.Event()
    thread = threading.Thread(target=lambda: (inside.wait(), mem.remember("other", 1)))
    thread.start()
    with pytest.raises(KeyError), mem.group():
        mem.remember("mine", 1)
        inside.set()
        time.sleep(0.1)
        raise KeyError
    thread.join(10)
    assert list(mem.keys()) == ["other"] and stored_keys(store) == ["other"]


@pytest.mark.parametrize("engine", ["threaded", "native"])
def test_mw_10_the_async_group_keeps_the_same_rules(tmp_path, engine):
    """MW-10: AsyncMemory.group, on either engine: one save at the end, a raise keeps and stores nothing."""
    store: Any = Counting(tmp_path / "m.json") if engine == "threaded" else AsyncDict()

    async def main() -> None:
        mem = await sm.create_async_memory(store=store, autosave=True, clock=clock)
        assert mem.threaded is (engine == "threaded")
        async with mem.group():
            await mem.remember("a", 1)
            await mem.add_turn("user", "hi")
            assert store.saves == 0
        assert store.saves == 1 and stored_keys(store) == ["a", "chat:1"]
        with pytest.raises(KeyError):
            async with mem.group():
                await mem.remember("b", 1)
                raise KeyError
        assert sorted(mem.keys()) == ["a", "chat:1"] and store.saves == 1
        store.fail_next = True
        with pytest.raises(OSError):
            async with mem.group():
                await mem.remember("c", 1)
        assert sorted(mem.keys()) == ["a", "chat:1"]
        await mem.remember("d", 1)  # the step after
        assert stored_keys(store) == ["a", "chat:1", "d"]
        await mem.close()

    asyncio.run(main())


# -- durability (PER-23) ----------------------------------------------------------------------


@pytest.mark.parametrize(("durability", "fsyncs"), [("full", 2), ("normal", 1), ("none", 0)])
def test_per_23_each_durability_syncs_what_it_says(tmp_path, monkeypatch, durability, fsyncs):
    """PER-23: a save fsyncs the file and the folder ("full"), the file ("normal"), or nothing ("none")."""
    store = sm.JsonFileStore(tmp_path / "m.json", durability=durability)
    store.save({"version": 1, "generation": 1, "entries": []})  # the folder exists: no fsync of a new one below
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store.save({"version": 1, "generation": 2, "entries": []})
    assert len(synced) == fsyncs
    assert store.load()["generation"] == 2


@pytest.mark.parametrize(("durability", "level"), [("full", 2), ("normal", 1), ("none", 0)])
def test_per_23_sqlite_runs_in_wal_with_the_synchronous_of_its_durability(tmp_path, durability, level):
    """PER-23, MW-7: SqliteStore's durability is SQLite's synchronous (FULL, NORMAL, OFF) in WAL mode."""
    store = sm.SqliteStore(tmp_path / "m.db", durability=durability)
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    mem.remember("a", 1)
    connection = store._connect(create=False)
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == level
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert dict(sm.create_memory(store=sm.SqliteStore(tmp_path / "m.db")).items()) == {"a": 1}


@pytest.mark.parametrize(
    ("durability", "error"), [("fast", ValueError), ("FULL", ValueError), (None, TypeError), (1, TypeError)]
)
def test_per_23_an_unknown_durability_is_refused_at_construction(tmp_path, durability, error):
    """PER-23: durability is "full", "normal" or "none"; anything else raises naming it."""
    for make in (sm.JsonFileStore, sm.SqliteStore, sm.MemoryFolder):
        with pytest.raises(error, match="durability"):
            make(tmp_path / "x", durability=durability)


def test_per_23_a_folder_gives_its_durability_to_every_file():
    """PER-23: MemoryFolder(durability=) is each opened memory's JsonFileStore's."""
    folder = sm.MemoryFolder("/nonexistent-folder", durability="normal", load=False)
    assert folder.open("u").store.durability == "normal"
    assert sm.MemoryFolder("/nonexistent-folder").durability == "full"


CRASH_CHILD = textwrap.dedent(
    """
    import sys, time
    import sentinel_memory as sm
    path, durability = sys.argv[1], sys.argv[2]
    mem = sm.create_memory(store=sm.JsonFileStore(path, durability=durability), autosave=True)
    print("ready", flush=True)
    for round in range(1, 10**9):
        with mem.group():
            for n in range(40):
                mem.remember(f"k{n}", {"round": round, "pad": "x" * 200})
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("durability", ["full", "normal", "none"])
def test_per_23_mw_10_a_writer_killed_mid_group_leaves_the_old_or_the_new_document(tmp_path, durability):
    """PER-23, MW-10: SIGKILL at any moment of a loop of groups: the file loads whole, every entry from one group."""
    path = tmp_path / "m.json"
    rounds = []
    for kill in range(6):
        child = subprocess.Popen(
            [sys.executable, "-c", CRASH_CHILD, str(path), durability],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        time.sleep(0.05 + 0.04 * kill)
        child.send_signal(signal.SIGKILL)
        child.wait()
        document = sm.JsonFileStore(path).load()  # parses strictly: never torn
        if document is None:
            continue
        found = {entry["data"]["round"] for entry in document["entries"]}
        assert len(found) == 1 and len(document["entries"]) == 40  # one group's whole save, never half of one
        rounds.append(found.pop())
    assert rounds, "no group was saved before any kill"
    # The step after: a memory opens the file and saves on it.
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
    mem.remember("after", 1)
    assert sm.JsonFileStore(path).load()["entries"][-1]["key"] == "after"


# -- the file's layout (PER-24) -----------------------------------------------------------------


def test_per_24_a_file_has_one_field_a_line_and_one_entry_a_line(tmp_path):
    """PER-24: the saved file lists one top-level field a line and one entry a line, and reads back as saved."""
    mem = sm.create_memory(store=sm.JsonFileStore(tmp_path / "m.json"), autosave=True, clock=clock)
    mem.remember("a", {"nested": [1, "ü"]})
    mem.remember("b", "two\nlines")
    lines = (tmp_path / "m.json").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "{" and lines[1] == '"version": 1,' and lines[2].startswith('"generation": 2')
    assert lines[3] == '"entries": ['
    assert json.loads(lines[4].rstrip(","))["key"] == "a" and json.loads(lines[5])["key"] == "b"
    assert lines[6] == "],"
    document = mem.store.load()
    assert loads(dumps(document), "m.json") == document


@pytest.mark.parametrize("document", [{"version": 1, "entries": []}, {"version": 1, 2: "not a str key", "entries": []}])
def test_per_24_edges_an_empty_list_and_keys_that_are_not_str(document):
    """PER-24: no entries is one line; a document with a key that is not a str is written as json writes it."""
    text = dumps(document).decode()
    assert json.loads(text) == json.loads(json.dumps(document))
    if all(isinstance(key, str) for key in document):
        assert '"entries": []' in text.splitlines()


def test_per_24_nan_and_a_too_deep_document_raise_before_any_file_is_touched(tmp_path):
    """PER-24, PER-9: what JSON cannot hold raises ValueError and the old file stays."""
    store = sm.JsonFileStore(tmp_path / "m.json")
    store.save({"version": 1, "entries": []})
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    for bad in ({"key": "a", "data": float("nan")}, {"key": "a", "data": deep}):
        with pytest.raises(ValueError):
            store.save({"version": 1, "entries": [bad]})
    assert store.load() == {"version": 1, "entries": []}


# -- the adapters' steps (SRV-5) --------------------------------------------------------------


def test_srv_5_oai_10_a_session_clear_and_pop_are_one_save_each(tmp_path):
    """SRV-5: the Agents SDK session forgets many turns in one save, and a step that raises stores nothing."""
    pytest.importorskip("agents")
    from sentinel_memory.integrations.openai_agents import SentinelSession

    store = Counting(tmp_path / "s.json")
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    session = SentinelSession("s", memory=mem)
    session.add([{"role": "user", "content": f"q{n}"} for n in range(6)])
    assert store.saves == 1
    session.pop()
    assert store.saves == 2
    session.clear()
    assert store.saves == 3 and stored_keys(store) == []


def test_srv_5_lc_12_a_failed_langchain_run_is_undone_in_one_save(tmp_path):
    """SRV-5, LC-12: the turns of a failed run are forgotten in one save, and the next run's request is clean."""
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from server_support import EchoChatModel

    from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

    store = Counting(tmp_path / "lc.json")
    mem = sm.create_memory(store=store, autosave=True, clock=clock)
    mem.add_messages([{"role": "user", "content": "old"}, {"role": "assistant", "content": "old answer"}])
    agent = create_agent(EchoChatModel(), middleware=[SentinelMemoryMiddleware(mem, token_budget=5)])
    before = store.saves
    with pytest.raises(sm.TokenBudgetError):
        agent.invoke({"messages": [HumanMessage("q1"), AIMessage("a1"), HumanMessage("far too long a question " * 3)]})
    assert store.saves == before + 2  # the run's three turns stored in one save, then forgotten in one
    assert [mem[key]["content"] for key in mem.keys()] == ["old", "old answer"]
    assert stored_keys(store) == ["chat:1", "chat:2"]


def test_oai_1_ent_3_items_read_once_copied_are_still_the_callers_own():
    """OAI-1, ENT-3: the items a session reads (its turns' data copied once) can be changed without changing the memory."""
    pytest.importorskip("agents")
    from sentinel_memory.integrations.openai_agents import SentinelSession

    session = SentinelSession("s", memory=sm.create_memory(clock=clock))
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    session.add([{"role": "user", "content": "q"}, call])
    read = session.items()
    assert read[1] == call
    read[1]["arguments"] = "changed"
    read.clear()
    assert session.items()[1] == call


def test_msg_1_a_message_the_caller_owns_is_read_without_a_copy():
    """MSG-1: chat_message(data, owned=True) returns a stored message itself; a legacy or plain turn is a new dict either way."""
    from sentinel_memory.core.turns import chat_message

    stored = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert chat_message(stored, owned=True) is stored
    copied = chat_message(stored)
    assert copied == stored and copied is not stored and copied["tool_calls"] is not stored["tool_calls"]
    assert chat_message("user: Hi", owned=True) == {"role": "user", "content": "Hi"}
    assert chat_message(42, owned=True) is None
