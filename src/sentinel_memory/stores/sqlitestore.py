"""``SqliteStore``: a memory in an embedded SQLite database, saved a change at a time (MW-1 .. MW-4, MW-7).

The standard library's ``sqlite3`` only. The database holds two tables::

    sentinel_memory_meta(name TEXT PRIMARY KEY, value)      -- format, version, generation, next_ord, working,
                                                            -- and ranking when the document names one
    sentinel_memory_entries(key TEXT PRIMARY KEY,
                            updated_at REAL, ord INTEGER, record TEXT)

one row per entry, ``record`` being the entry's JSON exactly as a file store
would write it. ``ord`` grows with every write of a row, so ``ORDER BY
updated_at, ord`` lists the entries oldest first, as a saved document does
(PER-12).

Every save is one transaction begun with ``BEGIN IMMEDIATE``, which takes
SQLite's write lock at once; inside it the stored generation is checked
(``ConflictError`` and nothing written when it
is not the one before the save's). The database runs in WAL mode with
``synchronous=FULL`` unless told otherwise (``durability``, PER-23), so a save that returns is on disk. A memory whose store
holds exactly its last saved state sends only what a change touched
(``SqliteStore.save_changes``): one or two rows for a remember, whatever
the size of the memory.

Opening never writes: a file that is not a SQLite database, or a database
without this store's tables, raises
``DamagedStoreError`` and is left as it is. A
new database is set up by the first save. The store's ``lock()`` serves
read-modify-write transactions with the same sidecar lock as the file store.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

from ..core.document import VERSION, declared_generation, record, working_record
from ..core.errors import DamagedStoreError, LockTimeoutError
from ..core.values import Changes, Working
from . import jsontext
from .contract import as_path, check_durability
from .generations import check_generation
from .locking import DEFAULT_LOCK_WAIT, SidecarLock, check_wait

__all__ = ["SqliteStore"]

#: PER-23: SQLite's ``synchronous`` for each durability, in WAL mode (MW-7).
_SYNCHRONOUS = {"full": "FULL", "normal": "NORMAL", "none": "OFF"}

#: What the meta table's ``format`` row says, so a foreign database is never mistaken for a memory.
FORMAT = "sentinel-memory"

_SCHEMA = """
CREATE TABLE sentinel_memory_meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE sentinel_memory_entries (key TEXT PRIMARY KEY, updated_at REAL NOT NULL, ord INTEGER NOT NULL,
                                      record TEXT NOT NULL) WITHOUT ROWID;
"""
_TABLES = {"sentinel_memory_meta", "sentinel_memory_entries"}


def _record_text(entry_record: dict[str, Any]) -> str:
    return jsontext.json_text(entry_record, separators=(",", ":"))


class SqliteStore:
    """A memory in one SQLite database file, safe for many processes, saved incrementally (MW-7).

    One ``SqliteStore`` may be used from several threads; its connection is
    guarded by a lock of its own. A memory on it saves only what each change
    touched (``save_changes``), whatever the size of the memory.

    Args:
        path: The database file. It is created, with missing parent folders, on the first save.
        lock_wait: The most seconds a save or ``lock()`` waits for the database's lock while
            another writer holds it, then ``LockTimeoutError`` (MW-8). Defaults to 30.
        durability: How long a save waits for the disk (PER-23), SQLite's ``synchronous`` in WAL
            mode. ``"full"``, the default (``FULL``): a save that returned survives a power cut.
            ``"normal"`` (``NORMAL``): the write-ahead log is synced only at checkpoints, so a power
            cut may undo the newest saves; the database is never damaged. ``"none"`` (``OFF``): the
            operating system decides; a process that dies loses nothing, a power cut may lose the
            newest saves or damage the database. WAL needs every process on one machine: not a
            network file system.

    Raises:
        TypeError: ``lock_wait`` is not a number, or ``durability`` is not a str.
        ValueError: ``lock_wait`` is not a finite number >= 0, or ``durability`` is not one of
            ``"full"``, ``"normal"``, ``"none"``.

    Examples:
        >>> with create_memory(store=SqliteStore(tmp / "memory.db"), autosave=True) as kept:
        ...     kept.remember("user:name", "Jakub").key
        'user:name'
        >>> with create_memory(store=SqliteStore(tmp / "memory.db")) as again:
        ...     again["user:name"]
        'Jakub'
    """

    def __init__(
        self, path: str | os.PathLike[str], *, lock_wait: float = DEFAULT_LOCK_WAIT, durability: str = "full"
    ) -> None:
        self.path = as_path(path)
        self.lock_wait = check_wait(lock_wait)
        self.durability = check_durability(durability)
        self._connection: sqlite3.Connection | None = None
        self._ready = False  # this connection found (or made) the store's tables
        self._guard = threading.RLock()
        self._lock = SidecarLock()

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    # -- the connection ------------------------------------------------------------

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        """The open connection; None when the file does not exist and ``create`` is False."""
        if self._connection is None:
            if not create and not self.path.exists():
                return None
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            connection = sqlite3.connect(
                self.path, timeout=self.lock_wait, isolation_level=None, check_same_thread=False
            )
            try:
                connection.execute(f"PRAGMA synchronous={_SYNCHRONOUS[self.durability]}")
            except sqlite3.DatabaseError as error:
                connection.close()
                raise DamagedStoreError(f"is not a usable SQLite database: {error}", self.path) from None
            self._connection = connection
        return self._connection

    def close(self) -> None:
        """Close the database connection; the next call opens it again (WRP-5).

        Examples:
            >>> store = SqliteStore(tmp / "memory.db")
            >>> store.save({"version": 1, "entries": []})
            >>> store.close()
            >>> store.generation()
            1
            >>> store.close()
        """
        with self._guard:
            if self._connection is not None:
                self._connection.close()
                self._connection, self._ready = None, False

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _tables(self, connection: sqlite3.Connection) -> set[str]:
        try:
            rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        except sqlite3.DatabaseError as error:  # not a database at all
            raise DamagedStoreError(f"is not a SQLite database: {error}", self.path) from None
        return {name for (name,) in rows}

    def _check(self, connection: sqlite3.Connection, *, names: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """This store's meta rows (only ``names`` and the format, when given), None for an empty database.

        A database that is not this store's raises DamagedStoreError. The
        tables are looked for once per connection.
        """
        if not self._ready:
            tables = self._tables(connection)
            if not tables:
                return None
            if not _TABLES <= tables:
                raise DamagedStoreError("is a SQLite database without sentinel-memory's tables", self.path)
        query = "SELECT name, value FROM sentinel_memory_meta"
        if names:
            query += f" WHERE name IN ('format', 'version', {', '.join(repr(n) for n in names)})"
        try:
            meta = dict(connection.execute(query).fetchall())
        except sqlite3.DatabaseError as error:
            raise DamagedStoreError(f"has a damaged meta table: {error}", self.path) from None
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise DamagedStoreError(
                f"holds format {meta.get('format')!r} version {meta.get('version')!r}, not {FORMAT} version {VERSION}",
                self.path,
            )
        self._ready = True
        return meta

    @contextlib.contextmanager
    def _writing(self) -> Iterator[tuple[sqlite3.Connection, dict[str, Any]]]:
        """One write transaction (BEGIN IMMEDIATE) under the sidecar lock, set up on first use; rolled back on any error.

        The sidecar lock is the one ``lock`` holds, so a save waits for
        another process's read-modify-write, as a file store's save does (MW-2).
        """
        with self._guard, self.lock():
            connection = self._connect(create=True)
            assert connection is not None
            if not self._ready and self._check(connection, names=("generation",)) is None:
                self._set_up(connection)
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as error:
                if isinstance(error, sqlite3.OperationalError):  # busy: another writer held it past lock_wait
                    raise LockTimeoutError(self.path, self.lock_wait) from error
                raise DamagedStoreError(f"cannot be written: {error}", self.path) from None
            try:
                meta = self._check(connection, names=("generation", "next_ord"))
                assert meta is not None
                yield connection, meta
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    def _set_up(self, connection: sqlite3.Connection) -> None:
        """Create the tables of a new, empty database, once, whoever gets there first."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            if not self._tables(connection):
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.executemany(
                    "INSERT INTO sentinel_memory_meta (name, value) VALUES (?, ?)",
                    [
                        ("format", FORMAT),
                        ("version", VERSION),
                        ("generation", 0),
                        ("next_ord", 0),
                        ("working", json.dumps(working_record(Working()))),
                    ],
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("PRAGMA journal_mode=WAL")  # persistent: set once, outside a transaction

    # -- the store protocol ----------------------------------------------------------

    def load(self) -> dict[str, Any] | None:
        """The stored memory as a document, or None when there is none yet (PER-2, MW-7).

        Opening never writes: a missing file stays missing.

        Returns:
            The document, read in one consistent snapshot, or None.

        Raises:
            DamagedStoreError: The file is not a SQLite database, or not one of this store's.

        Examples:
            >>> store = SqliteStore(tmp / "memory.db")
            >>> store.load() is None, store.path.exists()
            (True, False)
        """
        with self._guard:
            connection = self._connect(create=False)
            if connection is None:
                return None
            connection.execute("BEGIN")  # one consistent snapshot
            try:
                meta = self._check(connection)
                if meta is None:
                    return None
                records = connection.execute(
                    "SELECT record FROM sentinel_memory_entries ORDER BY updated_at, ord"
                ).fetchall()
            except sqlite3.DatabaseError as error:
                raise DamagedStoreError(f"cannot be read: {error}", self.path) from None
            finally:
                connection.execute("COMMIT")
        # One strict parse of the whole document, as a file would get (PER-13).
        ranking = f',"ranking":{meta["ranking"]}' if "ranking" in meta else ""  # JSON text (BM-10)
        text = (
            f'{{"version":{VERSION},"generation":{int(meta["generation"])}{ranking},"entries":['
            + ",".join(text for (text,) in records)
            + f'],"working":{meta["working"]}}}'
        )
        return jsontext.loads(text.encode("utf-8"), self.path)

    def generation(self) -> int:
        """The generation the database holds: 0 when it has none yet (MW-1).

        Returns:
            The generation, an int >= 0.

        Raises:
            DamagedStoreError: The file is not a SQLite database, or not one of this store's.

        Examples:
            >>> with SqliteStore(tmp / "memory.db") as store:
            ...     store.generation()
            0
        """
        with self._guard:
            connection = self._connect(create=False)
            if connection is None:
                return 0
            meta = self._check(connection, names=("generation",))
            return 0 if meta is None else int(meta["generation"])

    def save(self, document: dict[str, Any]) -> None:
        """Replace the whole memory with ``document`` in one transaction (PER-2, MW-3).

        Args:
            document: The memory as a JSON document.

        Raises:
            ConflictError: The document's generation does not follow the stored one; nothing is written.
            LockTimeoutError: Another writer held the database for longer than ``lock_wait``.
            DamagedStoreError: The file is not a SQLite database, or not one of this store's.

        Examples:
            >>> with SqliteStore(tmp / "memory.db") as store:
            ...     store.save({"version": 1, "generation": 1, "entries": []})
            ...     store.generation()
            1
        """
        entries = [(e["key"], e["updatedAt"], i, _record_text(e)) for i, e in enumerate(document["entries"])]
        working = jsontext.json_text(document.get("working") or working_record(Working()))
        ranking = jsontext.json_text(document["ranking"]) if "ranking" in document else None
        with self._writing() as (connection, meta):
            check_generation(self.path, declared_generation(document), int(meta["generation"]))
            connection.execute("DELETE FROM sentinel_memory_entries")
            connection.executemany(
                "INSERT INTO sentinel_memory_entries (key, updated_at, ord, record) VALUES (?, ?, ?, ?)", entries
            )
            self._set_meta(connection, document.get("generation", int(meta["generation"]) + 1), len(entries), working)
            # The ranking a whole save names, as JSON text; none named, none kept (BM-10).
            connection.execute("DELETE FROM sentinel_memory_meta WHERE name = 'ranking'")
            if ranking is not None:
                connection.execute("INSERT INTO sentinel_memory_meta (name, value) VALUES ('ranking', ?)", (ranking,))

    def save_changes(self, changes: Changes) -> None:
        """Write only what one change touched, in one transaction (MW-4).

        A memory calls it instead of ``save`` when the store holds exactly the
        memory's last saved state.

        Args:
            changes: The ``Changes``: entries written, keys deleted, the new working memory and
                the generation the database holds afterwards.

        Raises:
            ConflictError: ``changes.generation`` does not follow the stored one; nothing is written.
            LockTimeoutError: Another writer held the database for longer than ``lock_wait``.
            DamagedStoreError: The file is not a SQLite database, or not one of this store's.

        Examples:
            >>> with SqliteStore(tmp / "memory.db") as store:
            ...     store.save_changes(Changes(deletes=("old",), generation=1))
            ...     store.generation()
            1
        """
        rows = [(e.key, e.updated_at, _record_text(record(e))) for e in changes.upserts]
        working = None if changes.working is None else json.dumps(working_record(changes.working), ensure_ascii=False)
        with self._writing() as (connection, meta):
            check_generation(self.path, changes.generation, int(meta["generation"]))
            connection.executemany("DELETE FROM sentinel_memory_entries WHERE key = ?", [(k,) for k in changes.deletes])
            first = int(meta["next_ord"])
            connection.executemany(
                "INSERT OR REPLACE INTO sentinel_memory_entries (key, updated_at, ord, record) VALUES (?, ?, ?, ?)",
                [(key, at, first + i, text) for i, (key, at, text) in enumerate(rows)],
            )
            self._set_meta(connection, changes.generation, first + len(rows), working)

    def _set_meta(self, connection: sqlite3.Connection, generation: int, next_ord: int, working: str | None) -> None:
        values: list[tuple[str, int | str]] = [("generation", generation), ("next_ord", next_ord)]
        if working is not None:
            values.append(("working", working))
        connection.executemany("UPDATE sentinel_memory_meta SET value = ? WHERE name = ?", [(v, n) for n, v in values])

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the database's sidecar lock for a read-modify-write (MW-2); ``Memory.transaction`` uses it.

        Raises:
            LockTimeoutError: Another writer held the lock for longer than ``lock_wait``.

        Examples:
            >>> with SqliteStore(tmp / "memory.db") as store:
            ...     with store.lock():
            ...         store.save({"version": 1, "generation": 1, "entries": []})
            ...     store.generation()
            1
        """
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._lock.hold(self.path.resolve(), self.lock_wait):
            yield
