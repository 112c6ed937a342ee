"""Logging for operators: the sentinel_memory logger, silent by default, never the data (LOG-1 .. LOG-3)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading

import pytest

import sentinel_memory as sm
from support import MINUTE

SECRET = "card 4111-1111-1111-1111"


def test_log_1_silent_unless_the_app_configures_logging():
    """LOG-1: with no logging configured, an eviction prints nothing to stderr (the logger has a NullHandler)."""
    code = (
        "import sentinel_memory as sm\n"
        "mem = sm.create_memory(limit=1)\n"
        "mem.remember('a', 1); mem.remember('b', 2)\n"
        "mem.load()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stderr == "" and result.stdout == ""
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("sentinel_memory").handlers)


def test_log_2_evictions_and_expiries_give_counts_then_keys_never_data(make, clock, caplog):
    """LOG-2, LOG-1: a compaction logs its counts at INFO and its keys at DEBUG; the data never appears."""
    mem = make(limit=2)
    caplog.set_level(logging.DEBUG, logger="sentinel_memory")
    mem.remember("cart", SECRET, ttl=MINUTE)
    mem.remember("a", SECRET, importance=0.1)
    clock.advance(MINUTE)
    mem.remember("b", SECRET)  # over the limit: the cart expired, then "a" is the weakest
    records = [r for r in caplog.records if r.name == "sentinel_memory"]
    assert [(r.levelname, r.getMessage().split(": ", 1)[1]) for r in records] == [
        ("INFO", "1 expired, 0 evicted"),
        ("DEBUG", "expired ['cart']; evicted -"),
    ]
    mem.remember("c", SECRET, importance=0.9)
    assert "0 expired, 1 evicted" in caplog.text and "evicted ['a']" in caplog.text
    assert SECRET not in caplog.text


def test_log_3_a_lossy_load_and_its_preserved_copy_are_logged(tmp_path, make, caplog):
    """LOG-3, PER-14: a load that dropped an entry logs what it dropped, and the save that preserves the original says so."""
    path = tmp_path / "memory.json"
    entry = {"key": "k", "data": SECRET, "importance": 0.5, "createdAt": 0, "updatedAt": 0}
    path.write_text(json.dumps({"version": 1, "entries": [entry, dict(entry, key="", data=SECRET)]}))
    caplog.set_level(logging.INFO, logger="sentinel_memory")
    with pytest.warns(sm.LoadWarning):
        mem = make(store=sm.JsonFileStore(path), autosave=True)
    mem.remember("x", 1)
    messages = [r.getMessage() for r in caplog.records if r.name == "sentinel_memory"]
    assert any("dropped 1 invalid entries" in m for m in messages)
    assert any("preserved what the last load dropped" in m for m in messages)
    assert SECRET not in caplog.text


def test_log_3_conflicts_and_lock_timeouts_are_warnings(tmp_path, make, caplog):
    """LOG-3, MW-3, MW-8: a conflicting save and a lock not had within lock_wait log a WARNING naming the store."""
    store = sm.JsonFileStore(tmp_path / "memory.json", lock_wait=0.05)
    first, second = make(store=store, autosave=True), make(store=store, autosave=True)
    first.remember("a", 1)
    caplog.set_level(logging.INFO, logger="sentinel_memory")
    with pytest.raises(sm.ConflictError):
        second.remember("b", 2)
    assert "save refused, saved by someone else (generation 1, expected 0)" in caplog.text
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with sm.JsonFileStore(tmp_path / "memory.json").lock():
            held.set()
            done.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        with pytest.raises(sm.LockTimeoutError):
            store.save({"version": 1, "entries": []})
    finally:
        done.set()
        holder.join()
    warning = [r for r in caplog.records if r.levelname == "WARNING" and "gave up" in r.getMessage()]
    assert warning and ".memory.json.lock" in warning[0].getMessage()


def test_log_3_a_redis_outage_and_the_way_back_are_logged(tmp_path, caplog):
    """LOG-3, RDS-5: a Redis that went down logs a WARNING naming the server; the first call through afterwards an INFO."""
    from support import RedisServer

    server = RedisServer(tmp_path).start()
    try:
        mem = sm.create_memory(store=sm.RedisStore(url=server.url, key="outage"), autosave=True)
        mem.remember("before", 1)
        caplog.set_level(logging.INFO, logger="sentinel_memory")
        server.stop()
        with pytest.raises(sm.StoreConnectionError):
            mem.remember("during", SECRET)
        server.start()
        mem.remember("after", SECRET)
    finally:
        server.stop()
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "sentinel_memory"]
    assert [level for level, _ in records] == ["WARNING", "INFO"]
    assert f"127.0.0.1:{server.port}" in records[0][1] and "reachable again" in records[1][1]
    assert SECRET not in caplog.text
