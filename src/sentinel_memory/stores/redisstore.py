"""A store in Redis: one user's memory shared by every app server, with no lost update (RDS-1 .. RDS-5).

Layout (RDS-1). One memory is two Redis hashes under one prefix, whose
``{...}`` hash tag puts both in the same cluster slot:

* ``<prefix>:{<key>}:entries``: one field per entry key, whose value is the
  JSON text ``[ord, record]``: the entry as the article's JSON (PER-1) and
  its place in the saved order (PER-12);
* ``<prefix>:{<key>}:meta``: ``version``, ``generation``, ``next_ord``,
  ``working`` (the working memory as JSON) and ``ranking`` (as JSON, when the
  document names one, BM-10).

Every save is one Lua script, so it is atomic: it compares the generation the
memory last saw with the one stored and either writes everything or nothing
(RDS-2). A whole save replaces the entries; an incremental save (MW-4) sets
the fields of the entries a change wrote and deletes the ones it removed.
A stale writer gets ``ConflictError`` and the
store is untouched, so several app servers autosaving into one user's
memory with ``shared=True`` lose nothing (RDS-3): ``lock()`` is a Redis
lock (a lease that expires if its holder dies), and the generation check
covers the case where a lease ran out while its holder was still writing.

Optional idle expiry (RDS-4): with ``idle_ttl`` every save sets both keys to
expire after that long without another save, for retention rules about
inactive users. This is Redis key expiry of the whole memory; the entries'
own ttls stay the library's rule (EXP-*), untouched by it.

Failures (RDS-5): a lost connection raises
``StoreConnectionError``; the memory keeps its
state as for any failed save, and a reload after reconnecting gives the last
committed state, because a script either ran whole or not at all.

redis-py is an optional dependency: ``pip install sentinel-memory[redis]``.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from ..core.document import declared_generation, generation_of, problem, working_record
from ..core.errors import ConflictError, DamagedStoreError, LockTimeoutError, StoreConnectionError, StoreError
from ..core.options import Duration, milliseconds
from ..core.shown import shown
from ..core.values import Changes
from ..logs import logger
from . import jsontext
from .locking import DEFAULT_LOCK_WAIT, check_wait

__all__ = ["RedisStore"]

#: RDS-2: a whole save. KEYS: meta, entries. ARGV: expected generation ("" for no check),
#: new generation, working JSON, idle ms ("0" for none), ranking JSON ("" for none), then field and value pairs.
_SAVE = """
local version = redis.call('HGET', KEYS[1], 'version')
if version and version ~= '1' then return {'damaged', version} end
local current = tonumber(redis.call('HGET', KEYS[1], 'generation') or '0')
if ARGV[1] ~= '' and current ~= tonumber(ARGV[1]) then return {'conflict', tostring(current)} end
redis.call('DEL', KEYS[2])
local n = 0
for i = 6, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  n = n + 1
end
redis.call('HSET', KEYS[1], 'version', '1', 'generation', ARGV[2], 'next_ord', tostring(n), 'working', ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'ranking', ARGV[5]) else redis.call('HDEL', KEYS[1], 'ranking') end
local idle = tonumber(ARGV[4])
for _, key in ipairs(KEYS) do
  if idle > 0 then redis.call('PEXPIRE', key, idle) else redis.call('PERSIST', key) end
end
return {'ok', ARGV[2]}
"""

#: RDS-2, MW-4: an incremental save. KEYS: meta, entries. ARGV: expected generation, new generation,
#: working JSON ("" to keep it), idle ms, number of deletes, the deleted keys, then key and record pairs.
_SAVE_CHANGES = """
local version = redis.call('HGET', KEYS[1], 'version')
if version and version ~= '1' then return {'damaged', version} end
local current = tonumber(redis.call('HGET', KEYS[1], 'generation') or '0')
if current ~= tonumber(ARGV[1]) then return {'conflict', tostring(current)} end
local deletes = tonumber(ARGV[5])
for i = 6, 5 + deletes do redis.call('HDEL', KEYS[2], ARGV[i]) end
local ord = tonumber(redis.call('HGET', KEYS[1], 'next_ord') or '0')
for i = 6 + deletes, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], '[' .. ord .. ',' .. ARGV[i + 1] .. ']')
  ord = ord + 1
end
redis.call('HSET', KEYS[1], 'version', '1', 'generation', ARGV[2], 'next_ord', tostring(ord))
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'working', ARGV[3])
elseif redis.call('HEXISTS', KEYS[1], 'working') == 0 then
  redis.call('HSET', KEYS[1], 'working', '{"data":{},"updatedAt":null}')  -- a first save: what a whole save holds
end
local idle = tonumber(ARGV[4])
for _, key in ipairs(KEYS) do
  if idle > 0 then redis.call('PEXPIRE', key, idle) else redis.call('PERSIST', key) end
end
return {'ok', ARGV[2]}
"""

_EMPTY_WORKING: dict[str, Any] = {"data": {}, "updatedAt": None}


def _redis() -> Any:
    try:
        import redis
    except ImportError:
        raise ImportError("RedisStore needs redis-py: pip install 'sentinel-memory[redis]'") from None
    return redis


def _dumps(value: Any) -> str:
    # Strict JSON, as every store writes it: NaN is a ValueError before anything is sent.
    return jsontext.json_text(value, separators=(",", ":"))


class ScriptArguments:
    """What RedisStore and AsyncRedisStore send their save scripts, from ``self.idle_ms`` (RDS-2, RDS-4)."""

    idle_ms: int

    def _set_up(
        self,
        client: Any,
        url: str | None,
        key: str,
        idle_ttl: Duration | None,
        prefix: str,
        lock_timeout: float,
        lock_wait: float,
        connect: Any,
    ) -> None:
        """What both stores' constructors check and keep (RDS-1, RDS-4, MW-8); ``connect()`` makes a client from ``url``."""
        if (client is None) == (url is None):
            raise TypeError(f"{type(self).__name__} takes a client or a url, exactly one of them")
        if url is not None and not isinstance(url, str):
            raise TypeError(f"url must be a str such as 'redis://localhost:6379/0', got {type(url).__name__}")
        if not isinstance(key, str) or not key:
            raise TypeError(f"key must be a non-empty str, got {shown(key)}")
        self.client = client if client is not None else connect()
        self._owns_client = client is None  # close() closes only a client this store made
        self.key = str.__str__(key)  # a str subclass as its text: its own methods never run (WRP-4)
        base = f"{prefix}:{{{self.key}}}"
        self.meta_key, self.entries_key, self.lock_key = f"{base}:meta", f"{base}:entries", f"{base}:lock"
        self.idle_ms = 0
        if idle_ttl is not None:
            ms = milliseconds(idle_ttl) if isinstance(idle_ttl, datetime.timedelta) else idle_ttl
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
                raise ValueError(f"idle_ttl must be a duration > 0, got {shown(idle_ttl)}")
            self.idle_ms = max(1, round(ms))
        self.lock_timeout = lock_timeout
        self.lock_wait = check_wait(lock_wait)
        self._save_script = self.client.register_script(_SAVE)
        self._changes_script = self.client.register_script(_SAVE_CHANGES)

    def save_args(self, document: dict[str, Any]) -> tuple[list[Any], int | None]:
        """The ``_SAVE`` script's arguments for a whole save of ``document``, and the generation it declares (RDS-2).

        Args:
            document: The saved document.
        """
        declared = declared_generation(document)
        pairs = [part for pair in entry_fields(document["entries"]) for part in pair]
        args = ["" if declared is None else declared - 1, generation_of(document)]
        ranking = _dumps(document["ranking"]) if "ranking" in document else ""  # BM-10
        args += [_dumps(document.get("working", _EMPTY_WORKING)), self.idle_ms, ranking, *pairs]
        return args, declared

    def changes_args(self, changes: Changes) -> list[Any]:
        """The ``_SAVE_CHANGES`` script's arguments for an incremental save (RDS-2, MW-4).

        Args:
            changes: What changed since the last save.
        """
        working = "" if changes.working is None else _dumps(working_record(changes.working))
        args: list[Any] = [changes.generation - 1, changes.generation, working, self.idle_ms, len(changes.deletes)]
        args += list(changes.deletes)
        for entry in changes.upserts:
            args += [entry.key, _dumps(entry.to_dict())]
        return args


class RedisStore(ScriptArguments):
    """One memory in Redis, shared by every process and machine that opens the same ``key`` (RDS-1 .. RDS-5).

    Every save is one atomic script that checks the generation, so several
    app servers autosaving one user's memory with ``shared=True`` lose
    nothing. Constructing a store does not connect; the first load does.

    Args:
        client: A ``redis.Redis`` client (any that returns bytes or str). Give this or ``url``.
        url: A Redis URL such as ``redis://localhost:6379/0``, instead of a client; the store
            then makes its own client and ``close()`` closes it. Defaults to None.
        key: The memory's name, for example one per user; see ``RedisMemories`` for ids from
            the outside world.
        idle_ttl: Delete the whole memory after this long without a save: milliseconds or a
            ``timedelta`` (RDS-4). Defaults to None (kept for good).
        prefix: The first part of every Redis key this store uses. Defaults to
            ``"sentinel-memory"``.
        lock_timeout: Seconds a ``lock()`` lease lasts if its holder dies. Defaults to 30.
        lock_wait: The most seconds ``lock()`` waits while another writer holds the lease, then
            ``LockTimeoutError`` (MW-8). Defaults to 30.

    Raises:
        TypeError: Not exactly one of ``client`` and ``url`` is given, ``url`` is not a str, or
            ``key`` is not a non-empty str.
        ValueError: ``idle_ttl`` is not a duration > 0, or ``lock_wait`` not a finite number >= 0.
        ImportError: redis-py is not installed (``pip install 'sentinel-memory[redis]'``).

    Examples:
        >>> store = RedisStore(url="redis://localhost:6379/0", key="user-42", idle_ttl=86_400_000)
        >>> store.meta_key, store.idle_ms
        ('sentinel-memory:{user-42}:meta', 86400000)
    """

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        key: str,
        idle_ttl: Duration | None = None,
        prefix: str = "sentinel-memory",
        lock_timeout: float = 30.0,
        lock_wait: float = DEFAULT_LOCK_WAIT,
    ) -> None:
        self._set_up(client, url, key, idle_ttl, prefix, lock_timeout, lock_wait, lambda: _redis().Redis.from_url(url))
        self._held = threading.local()
        # Leases whose release failed because Redis was unreachable, with their
        # tokens: an appendonly server restarts with the lease still set, and
        # every writer would wait out lock_timeout unless its holder frees it.
        self._unreleased: list[tuple[Any, str]] = []
        self._unreleased_guard = threading.Lock()

    _unreachable = False  # the last call found the server down (LOG-3)

    def __repr__(self) -> str:
        return f"RedisStore(key={self.key!r})"

    def close(self) -> None:
        """Close the client this store made from ``url`` (WRP-5); a client passed in is the caller's to close.

        A later call connects again.

        Examples:
            >>> with RedisStore(url="redis://localhost:6379/0", key="user-42") as store:
            ...     store.key
            'user-42'
        """
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> RedisStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------

    @property
    def server(self) -> str:
        """The server this store talks to, as ``host:port/db`` (or the socket path): what its errors name."""
        return server_of(self.client)

    @contextlib.contextmanager
    def _talking(self, operation: str) -> Iterator[None]:
        """Turn every redis-py error into a documented one that names the server and ``operation`` (RDS-5, RDS-6).

        Connection failures and time-outs become ``StoreConnectionError``;
        anything else Redis says no to (a read-only replica, ``maxmemory``,
        a listener that is not Redis) becomes ``StoreError``. The original
        is chained.
        """
        redis = _redis()
        try:
            yield
        except redis.exceptions.RedisError as error:
            mapped = store_error(self, self.server, operation, error)
            if mapped is None:
                raise
            self._unreachable = isinstance(mapped, StoreConnectionError) or self._unreachable
            raise mapped from error
        if self._unreachable:  # LOG-3: the first operation through after an outage says so
            self._unreachable = False
            logger.info("%r: Redis at %s is reachable again (%s)", self, self.server, operation)

    def load(self) -> dict[str, Any] | None:
        """The saved document, read in one transaction, or None when this memory was never saved (PER-2).

        No example here or for the other methods that talk to Redis: they need a server.

        Returns:
            The document, or None.

        Raises:
            DamagedStoreError: The keys hold something this store did not write.
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the read.
        """
        with self._talking("load"):
            pipe = self.client.pipeline(transaction=True)
            pipe.hgetall(self.meta_key)
            pipe.hvals(self.entries_key)  # the records carry their keys: no dict of 2n strings to build
            meta_raw, entries_raw = pipe.execute()
        return document_of(meta_raw, entries_raw, self)

    def generation(self) -> int:
        """The generation the store holds now: 0 when nothing was saved (MW-1).

        Returns:
            The generation, an int >= 0.

        Raises:
            DamagedStoreError: The keys hold another layout version.
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the read.
        """
        with self._talking("generation"):
            version, generation = self.client.hmget(self.meta_key, ["version", "generation"])
        return generation_from(version, generation, self)

    # -- writing -----------------------------------------------------------------

    def save(self, document: dict[str, Any]) -> None:
        """Replace the memory with ``document`` in one atomic script (RDS-2, MW-3).

        Args:
            document: The memory as a JSON document.

        Raises:
            ConflictError: Another writer saved first; nothing is written.
            DamagedStoreError: The keys hold another layout version; they are not overwritten.
            ValueError: The document holds something JSON cannot hold (NaN); nothing is sent.
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the write (a read-only replica, ``maxmemory``).
        """
        args, declared = self.save_args(document)
        self._run(self._save_script, args, declared)

    def save_changes(self, changes: Changes) -> None:
        """Write only what a change touched, in one atomic script, with the same generation check (RDS-2, MW-4).

        Args:
            changes: The ``Changes``: entries written, keys deleted, the new working memory and
                the generation the store holds afterwards.

        Raises:
            ConflictError: Another writer saved first; nothing is written.
            DamagedStoreError: The keys hold another layout version; they are not overwritten.
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the write.
        """
        self._run(self._changes_script, self.changes_args(changes), changes.generation)

    def _run(self, script: Any, args: list[Any], declared: int | None) -> None:
        with self._talking("save"):
            status, value = script(keys=[self.meta_key, self.entries_key], args=args)
        check_outcome(status, value, declared, self)

    def preserve(self) -> None:
        """Keep a copy of the stored document before it is overwritten (PER-14).

        The copy is kept under ``<prefix>:{<key>}:orig:<UTC time>``; nothing is
        kept when nothing was saved. With ``idle_ttl`` the copy expires like the memory.

        Raises:
            StoreConnectionError: Redis cannot be reached.
            StoreError: Redis refused the write.
        """
        document = self.load()
        if document is None:
            return
        with self._talking("preserve"):
            self.client.set(orig_key(self.meta_key), _dumps(document), px=self.idle_ms or None)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold this memory exclusively across processes and machines for a read-modify-write (MW-2, RDS-3).

        A Redis lock with a lease of ``lock_timeout`` seconds, so a holder that
        dies releases it; re-entrant for the thread that holds it. A lease
        this store could not release while Redis was unreachable is released
        first (RDS-5).

        Raises:
            LockTimeoutError: Another writer held the lease for longer than ``lock_wait``.
            StoreConnectionError: Redis cannot be reached.
        """
        depth = getattr(self._held, "depth", 0)
        if depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        with self._talking("lock"):
            self._release_unreleased()
        # Asked for every 20 ms (redis-py's default is 100), so that a wait ends
        # close to lock_wait and a freed lease is taken soon after.
        lease = self.client.lock(self.lock_key, timeout=self.lock_timeout, sleep=0.02, thread_local=False)
        # The token is ours, not drawn inside acquire(): a server that set the
        # lease and went down before it answered leaves it set, and only the
        # token can release it.
        token = uuid.uuid4().hex
        try:
            with self._talking("lock"):
                acquired = lease.acquire(blocking=True, blocking_timeout=self.lock_wait, token=token)
        except StoreConnectionError:
            self._unreleased_add(lease, token)
            raise
        if not acquired:
            raise LockTimeoutError(self.lock_key, self.lock_wait)
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            try:
                with contextlib.suppress(_redis().exceptions.LockError), self._talking("lock"):
                    lease.do_release(token)  # a lease that ran out was released by Redis already
            except StoreConnectionError:
                self._unreleased_add(lease, token)
                raise

    def _unreleased_add(self, lease: Any, token: str) -> None:
        with self._unreleased_guard:
            self._unreleased.append((lease, token))

    def _release_unreleased(self) -> None:
        """Release the leases this store could not release while Redis was down (RDS-5).

        Each is released by its own token, so a lease that has run out, or
        that another writer has taken since, is left alone.
        """
        with self._unreleased_guard:
            pending, self._unreleased = self._unreleased, []
        for at, (lease, token) in enumerate(pending):
            try:
                with contextlib.suppress(_redis().exceptions.LockError):
                    lease.do_release(token)
            except BaseException:
                with self._unreleased_guard:
                    self._unreleased[:0] = pending[at:]
                raise


def server_of(client: Any) -> str:
    """The server a redis-py client (sync or asyncio) talks to, as ``host:port/db`` or the socket path (RDS-6)."""
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {})
    if "path" in kwargs:
        return f"{kwargs['path']}/{kwargs.get('db', 0)}"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"


def store_error(store: object, server: str, operation: str, error: BaseException) -> StoreError | None:
    """The documented error for a redis-py one (RDS-5, RDS-6); None for a ``LockError``, the caller's to judge (RDS-3)."""
    exceptions = _redis().exceptions
    if isinstance(error, exceptions.LockError):
        return None
    if isinstance(error, (exceptions.ConnectionError, exceptions.TimeoutError)):
        message = f"{store!r}: Redis is not reachable at {server} ({operation}): {error}"
        logger.warning("%s", message)  # LOG-3
        return StoreConnectionError(message, server=server, operation=operation)
    return StoreError(
        f"{store!r}: Redis at {server} refused {operation}: {type(error).__name__}: {error}",
        server=server,
        operation=operation,
    )


def orig_key(meta_key: str) -> str:
    """The key of a copy ``preserve`` keeps now: ``<prefix>:{<key>}:orig:<UTC time>`` (PER-14)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{meta_key[: -len(':meta')]}:orig:{stamp}"


def document_of(meta_raw: dict[Any, Any], entries_raw: list[Any], store: object) -> dict[str, Any] | None:
    """The document the meta hash and the entries hash's values hold, None when both are empty; DamagedStoreError for another layout (RDS-2)."""
    if not meta_raw and not entries_raw:
        return None
    meta = {_text(k): _text(v) for k, v in meta_raw.items()}
    try:
        if meta.get("version") != "1":
            raise ValueError(f"holds version {meta.get('version')!r}, not 1")
        ordered = sorted((jsontext.own_text(_text(value)) for value in entries_raw), key=lambda pair: pair[0])
        document: dict[str, Any] = {"version": 1}
        if "generation" in meta:  # every save writes both; a document put there by other means may lack them
            document["generation"] = int(meta["generation"])
        if "ranking" in meta:  # a whole save names it when the document does (BM-10)
            document["ranking"] = jsontext.own_text(meta["ranking"])
        document["entries"] = [record for _, record in ordered]
        if "working" in meta:
            document["working"] = jsontext.own_text(meta["working"])
    except (ValueError, TypeError, KeyError) as error:
        raise DamagedStoreError(f"is not a memory this store wrote: {error}", repr(store)) from None
    except RecursionError:  # nested deeper than the recursion limit even on a fresh stack: no memory's value is
        raise DamagedStoreError(
            "is not a memory this store wrote: a value is nested deeper than any memory's", repr(store)
        ) from None
    found = problem(document)
    if found is not None:
        raise DamagedStoreError(found, repr(store))
    return document


def generation_from(version: Any, generation: Any, store: object) -> int:
    """The generation the meta hash's ``version`` and ``generation`` fields say (MW-1); DamagedStoreError for another version."""
    if version is not None and _text(version) != "1":
        raise DamagedStoreError(f"holds version {_text(version)!r}, not 1", repr(store))
    return int(generation) if generation is not None else 0


def check_outcome(status: Any, value: Any, declared: int | None, store: object) -> None:
    """Raise what a save script's answer means: ConflictError (MW-3) or DamagedStoreError (RDS-2); nothing for ``ok``."""
    if _text(status) == "conflict":
        raise ConflictError(repr(store), (declared or 0) - 1, int(value))
    if _text(status) == "damaged":
        raise DamagedStoreError(f"holds version {_text(value)!r}, not 1; not overwritten", repr(store))


def entry_fields(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The entries hash of a document: each record's key and the JSON ``[ord, record]`` (RDS-1)."""
    return [(record["key"], _dumps([ord_, record])) for ord_, record in enumerate(records)]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
