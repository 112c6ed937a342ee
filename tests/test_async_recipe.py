"""The Extending page's recipe for a database async store, on SQLite: a generation-0 row inserted first, then the row
locked, checked and written in one transaction; so racing first saves conflict. The async kit runs on it (MW-3, AIO-3)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import sentinel_memory as sm
from sentinel_memory.testing import AsyncStoreSuite

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memories (key TEXT PRIMARY KEY, generation INTEGER NOT NULL, document TEXT)",
    "CREATE TABLE IF NOT EXISTS locks (key TEXT PRIMARY KEY, token TEXT NOT NULL)",
)


async def finished(function: Any, *args: Any) -> Any:
    """``function(*args)`` in a worker thread; a cancel waits for it to end first, so a call is done or not begun."""
    running = asyncio.ensure_future(asyncio.to_thread(function, *args))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        while not running.done():
            with contextlib.suppress(BaseException):
                await asyncio.shield(running)
        raise


class AsyncRecipeStore:
    """An async store on a SQLite table, by the recipe: each call a connection and a transaction of its own.

    SQLite has no ``SELECT ... FOR UPDATE``: ``BEGIN IMMEDIATE`` takes the database's write lock in its place,
    so the insert of the generation-0 row, the read, the check and the update are one step against every
    other saver. ``lock()`` is a row of a locks table, held by its task and the tasks that task starts.
    """

    def __init__(self, path: Path, key: str, lock_wait: float = 30.0) -> None:
        self.path, self.key, self.lock_wait = path, key, lock_wait
        self._holder: contextvars.ContextVar[Any] = contextvars.ContextVar(f"holder-{id(self)}", default=None)
        self._depth: dict[Any, int] = {}
        with self._connect() as conn:
            for statement in SCHEMA:
                conn.execute(statement)

    def __repr__(self) -> str:
        return f"AsyncRecipeStore({self.key!r})"

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def _read(self, text: str | None) -> dict[str, Any] | None:
        return None if text is None else sm.read_document(text, self.key)

    def _load(self) -> dict[str, Any] | None:
        with contextlib.closing(self._connect()) as conn:
            row = conn.execute("SELECT document FROM memories WHERE key = ?", (self.key,)).fetchone()
        return None if row is None else self._read(row[0])

    def _generation(self) -> int:
        with contextlib.closing(self._connect()) as conn:
            row = conn.execute("SELECT generation FROM memories WHERE key = ?", (self.key,)).fetchone()
        return 0 if row is None else int(row[0])

    def _save(self, document: dict[str, Any]) -> None:
        text = sm.write_document(document)
        with contextlib.closing(self._connect()) as conn:
            conn.execute("BEGIN IMMEDIATE")  # FOR UPDATE's place: the write lock, before the read
            try:
                conn.execute(
                    "INSERT INTO memories (key, generation, document) VALUES (?, 0, NULL) ON CONFLICT (key) DO NOTHING",
                    (self.key,),
                )
                found, stored = conn.execute(
                    "SELECT generation, document FROM memories WHERE key = ?", (self.key,)
                ).fetchone()
                self._read(stored)  # damage is refused, never overwritten (MW-7)
                declared = document.get("generation")
                if declared is not None and found != declared - 1:
                    raise sm.ConflictError(self.key, declared - 1, found)
                conn.execute(
                    "UPDATE memories SET generation = ?, document = ? WHERE key = ?",
                    (declared if declared is not None else found, text, self.key),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _take(self, token: str) -> bool:
        with contextlib.closing(self._connect()) as conn:
            try:
                conn.execute("INSERT INTO locks (key, token) VALUES (?, ?)", (self.key, token))
            except sqlite3.IntegrityError:
                return False
            return True

    def _let_go(self, token: str) -> None:
        with contextlib.closing(self._connect()) as conn:
            conn.execute("DELETE FROM locks WHERE key = ? AND token = ?", (self.key, token))

    async def load(self) -> dict[str, Any] | None:
        return await finished(self._load)  # type: ignore[no-any-return]

    async def generation(self) -> int:
        return await finished(self._generation)  # type: ignore[no-any-return]

    async def save(self, document: dict[str, Any]) -> None:
        await finished(self._save, document)

    async def close(self) -> None:
        return None  # a connection per call: nothing held open

    @contextlib.asynccontextmanager
    async def lock(self) -> AsyncIterator[None]:
        me = asyncio.current_task()
        owner = me if me in self._depth else self._holder.get()
        if owner is not None and self._depth.get(owner):
            self._depth[owner] += 1
            try:
                yield
            finally:
                self._depth[owner] -= 1
            return
        token, deadline = uuid.uuid4().hex, time.monotonic() + self.lock_wait
        while not await finished(self._take, token):
            if time.monotonic() >= deadline:
                raise sm.LockTimeoutError(self.key, self.lock_wait)
            await asyncio.sleep(0.01)
        self._depth[me] = 1
        self._holder.set(me)
        try:
            yield
        finally:
            del self._depth[me]
            await finished(self._let_go, token)


class TestAsyncRecipeStore(AsyncStoreSuite):
    """MW-3, AIO-7: the recipe's store passes the async kit, racing first saves and forked writers included."""

    def make_store(self, tmp_path: Path) -> AsyncRecipeStore:
        return AsyncRecipeStore(tmp_path / "memories.db", key=f"test-{uuid.uuid4().hex}")

    def reopen(self, store: AsyncRecipeStore) -> AsyncRecipeStore:
        return AsyncRecipeStore(store.path, key=store.key)

    def damage(self, store: AsyncRecipeStore) -> Any:
        with contextlib.closing(store._connect()) as conn:
            conn.execute("INSERT INTO memories (key, generation, document) VALUES (?, 1, ?)", (store.key, '{"a": NaN}'))
        return self.snapshot(store)

    def snapshot(self, store: AsyncRecipeStore) -> Any:
        with contextlib.closing(store._connect()) as conn:
            return conn.execute("SELECT generation, document FROM memories WHERE key = ?", (store.key,)).fetchall()


class FirstSaveByFindingTheRow(AsyncRecipeStore):
    """The recipe without its first step: SELECT the row, INSERT when there is none, in separate transactions."""

    def _save(self, document: dict[str, Any]) -> None:
        with contextlib.closing(self._connect()) as conn:
            row = conn.execute("SELECT generation FROM memories WHERE key = ?", (self.key,)).fetchone()
        if row is not None:
            super()._save(document)
            return
        time.sleep(0.01)  # another saver finds no row meanwhile
        with contextlib.closing(self._connect()) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO memories (key, generation, document) VALUES (?, ?, ?)",
                (self.key, document.get("generation", 1), sm.write_document(document)),
            )


def test_mw_3_the_recipe_without_its_first_row_loses_a_racing_first_save(tmp_path):
    """MW-3, AIO-7: with no generation-0 row inserted first, racing first saves are each acknowledged; the kit says so."""
    suite = TestAsyncRecipeStore()
    suite.make_store = lambda tmp: FirstSaveByFindingTheRow(tmp / "memories.db", key="raced")  # type: ignore[method-assign]
    suite.reopen = lambda store: FirstSaveByFindingTheRow(store.path, key=store.key)  # type: ignore[method-assign]
    try:
        suite.test_mw_3_first_saves_racing_one_wins(tmp_path)
    except AssertionError as failure:
        assert "first saves of generation 1 were acknowledged" in str(failure)
    else:
        raise AssertionError("the kit passed a store whose first saves race")


#: The locks of LockInOneProcess: a dict of this process's memory, which a forked process copies and no other sees.
_HELD_HERE: dict[str, str] = {}


class LockInOneProcess(AsyncRecipeStore):
    """The recipe with lock() kept in the process's memory instead of a row: it excludes every task and store object
    of one process, and no writer of another."""

    def _take(self, token: str) -> bool:
        return _HELD_HERE.setdefault(self.key, token) == token

    def _let_go(self, token: str) -> None:
        if _HELD_HERE.get(self.key) == token:
            del _HELD_HERE[self.key]


def test_aio_7_a_lock_of_one_process_fails_the_kit_with_processes_and_passes_it_without(tmp_path):
    """AIO-7, MW-2, MW-6: a lock that excludes only its own process passes the many-writers history with tasks and fails it with forked writers."""
    suite = TestAsyncRecipeStore()
    suite.make_store = lambda tmp: LockInOneProcess(tmp / "memories.db", key="one-process")  # type: ignore[method-assign]
    suite.reopen = lambda store: LockInOneProcess(store.path, key=store.key)  # type: ignore[method-assign]
    for mode in ("tasks", "processes"):
        (tmp_path / mode).mkdir()
    suite.test_mw_6_many_writers_leave_a_history_one_at_a_time_could(tmp_path / "tasks", "tasks")
    try:
        suite.test_mw_6_many_writers_leave_a_history_one_at_a_time_could(tmp_path / "processes", "processes")
    except AssertionError as failure:
        assert "with async writers in processes" in str(failure) and "lock held twice" in str(failure)
    else:
        raise AssertionError("the kit passed a lock that lets another process in")
