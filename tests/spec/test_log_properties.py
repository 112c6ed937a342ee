"""Logging as a property: whatever a memory does, its log names keys and counts, never the data (LOG-1, LOG-2)."""

from __future__ import annotations

import logging

from hypothesis import given, settings
from hypothesis import strategies as st

import sentinel_memory as sm


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@settings(max_examples=80)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["remember", "turn", "forget", "compact", "advance", "load"]),
            st.sampled_from(["a", "b", "c", "d"]),
            st.sampled_from([None, 0.1, 0.9]),
            st.sampled_from([None, 5, 50]),
        ),
        max_size=15,
    ),
    limit=st.integers(1, 4),
)
def test_log_2_the_log_names_keys_and_counts_never_data(ops, limit):
    """LOG-1, LOG-2: every compaction is logged as its counts and keys, the counts add up to the stats, and no data appears."""
    handler, logger = Collect(), logging.getLogger("sentinel_memory")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)  # setLevel, not .level =: it clears the logger's cache of what is enabled
    now = [1000]
    secret = "secret-data-"
    try:
        mem = sm.create_memory(limit=limit, clock=lambda: now[0], autosave=True)
        for op, key, importance, ttl in ops:
            if op == "remember":
                mem.remember(key, f"{secret}{key}", importance=importance, ttl=ttl)
            elif op == "turn":
                mem.add_turn("user", f"{secret}{key}", ttl=ttl)
            elif op == "forget":
                mem.forget(key)
            elif op == "compact":
                mem.compact()
            elif op == "advance":
                now[0] += 10
            else:
                mem.load()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    text = "\n".join(record.getMessage() for record in handler.records)
    assert secret not in text
    counts = [record.getMessage().rsplit(": ", 1)[1] for record in handler.records if record.levelno == logging.INFO]
    expired = sum(int(c.split()[0]) for c in counts if c.endswith("evicted"))
    evicted = sum(int(c.split(", ")[1].split()[0]) for c in counts if c.endswith("evicted"))
    stats = mem.stats()
    assert (expired, evicted) == (stats["expired"], stats["evicted"])


@settings(max_examples=10, deadline=None)
@given(kind=st.sampled_from(["json", "sqlite"]), tries=st.integers(1, 3), conflicts=st.integers(0, 2))
def test_log_3_each_refused_save_and_lock_timeout_is_one_warning(tmp_path_factory, kind, tries, conflicts):
    """LOG-3, MW-3, MW-8: every conflict and every lock not had within lock_wait logs one WARNING naming the store or the lock."""
    import threading

    folder = tmp_path_factory.mktemp("log")
    path = folder / ("m.json" if kind == "json" else "m.db")
    make = {"json": sm.JsonFileStore, "sqlite": sm.SqliteStore}[kind]
    handler, logger = Collect(), logging.getLogger("sentinel_memory")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)  # setLevel, not .level =: it clears the logger's cache of what is enabled
    try:
        first = sm.create_memory(store=make(path), autosave=True, clock=lambda: 0)
        stale = [sm.create_memory(store=make(path), autosave=True, clock=lambda: 0) for _ in range(conflicts)]
        first.remember("a", 1)
        for memory in stale:
            try:
                memory.remember("b", 2)
            except sm.ConflictError:
                pass
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            with make(path).lock():
                held.set()
                done.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(10)
        store = make(path, lock_wait=0.01)
        try:
            for _ in range(tries):
                try:
                    with store.lock():
                        pass
                except sm.LockTimeoutError:
                    pass
        finally:
            done.set()
            holder.join()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    warnings = [r.getMessage() for r in handler.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "save refused" in w]) == conflicts
    assert len([w for w in warnings if "gave up" in w and ".lock" in w]) == tries
