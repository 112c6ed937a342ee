"""OpenTelemetry spans for a memory's operations, the ``[otel]`` extra (OTL-1 .. OTL-7).

Every change (``remember``, ``add_turn``, ``add_message(s)``, ``forget``,
``clear``, ``compact``, the cache's and the working memory's), every load
and save, and every ``get_context`` and ``get_messages`` is a span, and
every compaction that dropped something is an event on the span it happened
in. A span says what happened in counts, budgets and token totals, the
store's kind and the outcome: never a key, a text or a value (OTL-2), and
never an exception's message, which may quote one.

Where the names come from (OTL-7). The installed semantic conventions
(``opentelemetry-semantic-conventions`` 0.66b2) define no memory operation:
no ``gen_ai.operation.name`` value and no ``gen_ai.memory.*`` attribute. So
the span names, the event name and the counts are this project's own, under
``sentinel_memory.``; the conventions' names are used where one means what
we record: ``error.type`` and the ``exception`` event's ``exception.type``
on a failure, ``db.system.name`` (``sqlite``, ``redis``) on the load and
save spans of the SQLite and Redis stores, ``gen_ai.conversation.id`` on
every span of a memory tagged with its user (OTL-9): a hash of the user id
unless the app gives its own. ``SEMCONV`` lists them, and a
test checks each against the package.

No cost when nobody listens (OTL-1). This module imports nothing of
OpenTelemetry until a tracer provider is there to use: ``instrument()``'s,
or the global one an app set with ``trace.set_tracer_provider``. Until
then an operation asks one dictionary lookup of ``sys.modules`` and goes on,
and ``import sentinel_memory`` never imports ``opentelemetry``.

The drivers (``Memory``, ``AsyncMemory``'s native engine) open one
``operation`` around each change and each read; ``shell.Plumbing`` opens
the load and save spans around its store calls and tells the span it is in
what a change did (``changed``), what a compaction dropped (``dropped``)
and what a read built (``built``). So the sync and the async memory emit the
same spans for the same calls, from this one module. The core emits nothing.

An observer only (OTL-8). Every call into OpenTelemetry goes through this
module, and each is guarded here, once for both memories: whatever the
provider, its sampler, a span processor or an exporter raises (an
``Exception``) is logged once, as a WARNING on the ``sentinel_memory``
logger, and the operation goes on as it would with nobody listening. A span
that failed to start is no span; one that failed to end still leaves the
contexts it was current in, so the app's next span is not its child.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import sys
from typing import Any, TypeVar

from .core.state import MemoryState
from .core.values import Changes, Compaction, Context, Entry, LoadResult, Messages

__all__ = [
    "ATTRIBUTES",
    "EVENTS",
    "SEMCONV",
    "SPANS",
    "built",
    "changed",
    "conversation_id",
    "dropped",
    "instrument",
    "loaded",
    "operation",
    "preserved",
    "saved",
    "set_conversation",
    "uninstrument",
]

T = TypeVar("T")

#: The library's logger (``logs.logger``, the same object): this module stands beside ``logs``, not above it.
_LOGGER = logging.getLogger("sentinel_memory")

#: The names taken from the OpenTelemetry semantic conventions, by the constant that holds each in
#: ``opentelemetry-semantic-conventions`` (0.66b2): a test checks every one against the package.
SEMCONV = {
    "error.type": "opentelemetry.semconv.attributes.error_attributes.ERROR_TYPE",
    "exception.type": "opentelemetry.semconv.attributes.exception_attributes.EXCEPTION_TYPE",
    "db.system.name": "opentelemetry.semconv.attributes.db_attributes.DB_SYSTEM_NAME",
    "gen_ai.conversation.id": "opentelemetry.semconv._incubating.attributes.gen_ai_attributes.GEN_AI_CONVERSATION_ID",
}
_ERROR_TYPE = "error.type"
_EXCEPTION_TYPE = "exception.type"
_DB_SYSTEM_NAME = "db.system.name"
_CONVERSATION_ID = "gen_ai.conversation.id"

#: The prefix of this project's own span, event and attribute names.
PREFIX = "sentinel_memory."

#: The operations that are spans, each named ``sentinel_memory.<operation>``.
SPANS = (
    "remember",
    "add_turn",
    "add_message",
    "add_messages",
    "forget",
    "clear",
    "compact",
    "cache.put",
    "cache.delete",
    "cache.clear",
    "working.set",
    "working.clear",
    "load",
    "save",
    "get_context",
    "get_messages",
)

#: The project's own events: a compaction that dropped something, and a copy preserved before a save.
EVENTS = ("sentinel_memory.compaction", "sentinel_memory.preserved")

#: The project's own attributes and what each counts; all are numbers or booleans, none is entry data.
ATTRIBUTES = {
    "sentinel_memory.store.type": "the store's class name (JsonFileStore, SqliteStore, RedisStore, ...)",
    "sentinel_memory.entries.stored": "entries the memory holds after the operation, expired ones included",
    "sentinel_memory.entries.written": "entries a change stored: 1, or a batch's length",
    "sentinel_memory.entries.removed": "entries forget or clear removed",
    "sentinel_memory.entries.expired": "entries a compaction dropped because their ttl ran out",
    "sentinel_memory.entries.evicted": "entries a compaction dropped to keep the limit",
    "sentinel_memory.compaction.automatic": "the compaction was a change's or a load's, not compact()'s",
    "sentinel_memory.load.loaded": "stored entries a load found valid",
    "sentinel_memory.load.dropped": "stored entries a load found invalid and left out",
    "sentinel_memory.load.compacted": "loaded entries compacted away at once to fit the limit",
    "sentinel_memory.load.working_dropped": "the stored working memory was damaged",
    "sentinel_memory.save.incremental": "the save sent only the changes (save_changes), not the whole document",
    "sentinel_memory.save.entries": "entries the save sent: every one, or the changed ones",
    "sentinel_memory.save.deletes": "keys an incremental save deleted",
    "sentinel_memory.generation": "the store generation a load found or a save wrote",
    "sentinel_memory.token_budget": "the budget a read was given",
    "sentinel_memory.tokens": "the tokens of what the read built",
    "sentinel_memory.entries.chosen": "entries in what the read built",
    "sentinel_memory.entries.omitted": "live entries the read left out",
    "sentinel_memory.messages": "messages get_messages built",
    "sentinel_memory.entries.pending": "turns of unanswered tool calls get_messages left out",
}

#: The store classes whose database has a ``db.system.name`` value in the conventions.
_DB_SYSTEMS = {
    ("sentinel_memory.stores.sqlitestore", "SqliteStore"): "sqlite",
    ("sentinel_memory.stores.redisstore", "RedisStore"): "redis",
    ("sentinel_memory.stores.aioredis", "AsyncRedisStore"): "redis",
}


class _Settings:
    """Where spans go: the provider ``instrument`` was given, else the global one; and the tracer last made."""

    provider: Any = None
    cached: tuple[Any, Any] | None = None  # (provider, its tracer or None when it never records)
    api: Any = None  # the opentelemetry.trace module, once a provider is in use
    context: Any = None  # the opentelemetry.context module


_SETTINGS = _Settings()

#: The span this module opened last in this context (a thread's, a task's): what the plumbing annotates.
_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("sentinel_memory_span", default=None)


def instrument(tracer_provider: Any) -> None:
    """Send every memory's spans to ``tracer_provider`` from now on, whatever the global provider (OTL-1).

    Without a call, the spans go to the global provider once an app sets
    one (``opentelemetry.trace.set_tracer_provider``), and nowhere before.
    Tests and apps that keep their own provider pass it here;
    ``uninstrument()`` goes back to the global one.

    Args:
        tracer_provider: An OpenTelemetry ``TracerProvider`` (anything with ``get_tracer``).

    Raises:
        ImportError: ``opentelemetry-api`` is not installed (the ``[otel]`` extra).
        TypeError: ``tracer_provider`` has no ``get_tracer`` method; nothing changes.
    """
    _load_api()
    if not callable(getattr(tracer_provider, "get_tracer", None)):
        raise TypeError(
            f"tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer), "
            f"got {type(tracer_provider).__name__}"
        )
    _SETTINGS.provider = tracer_provider


def uninstrument() -> None:
    """Stop sending spans to ``instrument``'s provider: the global provider's again, if an app set one (OTL-1)."""
    _SETTINGS.provider = None


def _load_api() -> None:
    if _SETTINGS.api is not None:
        return
    try:
        from opentelemetry import context, trace
    except ImportError as error:
        raise ImportError("sentinel_memory's spans need OpenTelemetry: pip install 'sentinel-memory[otel]'") from error
    _SETTINGS.api, _SETTINGS.context = trace, context


#: What ``_tracer`` reads when the API has no ``_TRACER_PROVIDER`` global.
_UNKNOWN = object()


def _tracer() -> Any:
    """The tracer to use now, or None: no provider set, or one that never records (OTL-1)."""
    provider = _SETTINGS.provider
    if provider is None:
        # No import here: a provider was set only if its module was imported. The global is None
        # until set_tracer_provider; get_tracer_provider() would read the environment every call.
        api = sys.modules.get("opentelemetry.trace")
        if api is None:
            return None
        provider = getattr(api, "_TRACER_PROVIDER", _UNKNOWN)
        if provider is _UNKNOWN:  # an API that keeps the global elsewhere: ask it, the slower way
            provider = api.get_tracer_provider()
            if isinstance(provider, api.ProxyTracerProvider):
                return None
        if provider is None:
            return None
    cached = _SETTINGS.cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    _load_api()
    # The package's version, read where it is defined: this module sits below the package's root.
    version = getattr(sys.modules.get("sentinel_memory"), "__version__", None)
    try:
        tracer = provider.get_tracer("sentinel_memory", version)
    except Exception as error:  # OTL-8: a broken provider is no provider, this time; not cached, so asked again
        _failed("get_tracer", error)
        return None
    if isinstance(tracer, _SETTINGS.api.NoOpTracer):
        tracer = None  # a provider that never records costs nothing either
    _SETTINGS.cached = (provider, tracer)
    return tracer


def _failed(where: str, error: Exception) -> None:
    """OTL-8: telemetry raised at ``where``: one WARNING with the exception's type, and the memory goes on."""
    _LOGGER.warning(
        "telemetry failed at %s (%s); the memory goes on without it", where, _qualified(type(error)), exc_info=error
    )


class _Off:
    """What ``operation`` returns when nobody listens: a ``with`` that does nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


_OFF = _Off()


class _Operation:
    """One span, current in OpenTelemetry's context and in ours while its ``with`` block runs."""

    __slots__ = ("_otel_token", "_span", "_token")

    def __init__(self, span: Any) -> None:
        self._span = span

    def __enter__(self) -> None:
        api = _SETTINGS.api
        try:
            self._otel_token = _SETTINGS.context.attach(api.set_span_in_context(self._span))
        except Exception as error:  # OTL-8: the span is still ours to annotate and end
            _failed("attach", error)
            self._otel_token = None
        self._token = _CURRENT.set(self._span)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        span = self._span
        try:
            if error is not None and span.is_recording():
                # OTL-4: the type, never the message: a message may quote a key or a value (WRP-4).
                name = _qualified(type(error))
                span.set_attribute(_ERROR_TYPE, name)
                span.add_event("exception", {_EXCEPTION_TYPE: name})
                span.set_status(_SETTINGS.api.Status(_SETTINGS.api.StatusCode.ERROR))
        except Exception as failure:  # OTL-8: the block's own exception, if any, goes on unchanged
            _failed("error", failure)
        try:
            span.end()
        except Exception as failure:  # OTL-8: a processor's on_end, after the change is committed
            _failed("end", failure)
        finally:
            # Both contexts go back, whatever happened above: the app's next span is not this one's child.
            _CURRENT.reset(self._token)
            if self._otel_token is not None:
                _SETTINGS.context.detach(self._otel_token)


def _qualified(kind: type[BaseException]) -> str:
    """An exception type as OpenTelemetry's SDK names it: module and qualified name, builtins bare."""
    module = kind.__module__
    return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"


def conversation_id(user_id: str) -> str:
    """The stable id a user's or a conversation's spans carry: a hash of ``user_id``, never ``user_id`` itself (OTL-9).

    The first 32 hex digits of the SHA-256 of its UTF-8 bytes: the same in
    every process and on every run, and no way back to the id.

    Args:
        user_id: Any str.

    Returns:
        32 lowercase hex digits.

    Raises:
        TypeError: ``user_id`` is not a str.

    Examples:
        >>> conversation_id("user-42") == conversation_id("user-42"), len(conversation_id("user-42"))
        (True, 32)
    """
    if not isinstance(user_id, str):
        raise TypeError(f"a conversation's id must be a str, got {type(user_id).__name__}")
    return hashlib.sha256(str.__str__(user_id).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def set_conversation(memory: Any, conversation: str | None, *, hashed: bool = True) -> None:
    """Tag every span of ``memory`` with ``gen_ai.conversation.id``: ``conversation`` hashed, or as given (OTL-9).

    A ``MemoryFolder`` and ``RedisMemories`` tag each memory they open with
    its user id, hashed; call this for a memory you create yourself. Give
    ``hashed=False`` only for an id that is no personal data (a random
    session id of your app's own).

    Args:
        memory: A ``Memory`` or an ``AsyncMemory``.
        conversation: The user's or the conversation's id; None removes the tag.
        hashed: Record ``conversation_id(conversation)`` (the default) or ``conversation`` itself.

    Raises:
        TypeError: ``memory`` is no memory, or ``conversation`` is not a str or None.
    """
    plumbing = getattr(memory, "_plumbing", None)
    if plumbing is None or not hasattr(plumbing, "conversation"):
        raise TypeError(f"set_conversation needs a Memory or an AsyncMemory, got {type(memory).__name__}")
    if conversation is not None and not isinstance(conversation, str):
        raise TypeError(f"a conversation's id must be a str or None, got {type(conversation).__name__}")
    if conversation is not None:
        conversation = conversation_id(conversation) if hashed else str.__str__(conversation)
    plumbing.conversation = conversation


def operation(name: str, store: object, token_budget: object = None, conversation: str | None = None) -> Any:
    """A ``with`` block that is the span ``sentinel_memory.<name>``, or does nothing when nobody listens (OTL-1).

    The span is a child of the span current where it starts (the app's or the
    framework's), in OpenTelemetry's context (OTL-10).

    Args:
        name: The operation, one of ``SPANS``.
        store: The memory's store: its class name is the span's ``sentinel_memory.store.type``.
        token_budget: A read's budget, recorded when it is a number.
        conversation: The memory's ``gen_ai.conversation.id`` (OTL-9), or None.

    Returns:
        A context manager; its block's exception is recorded by type and passed on (OTL-4).
    """
    tracer = _tracer()
    if tracer is None:
        return _OFF
    store_type = type(store)
    attributes: dict[str, Any] = {"sentinel_memory.store.type": store_type.__name__}
    if name in ("load", "save"):
        system = _DB_SYSTEMS.get((store_type.__module__, store_type.__qualname__))
        if system is not None:
            attributes[_DB_SYSTEM_NAME] = system
    if isinstance(token_budget, (int, float)) and not isinstance(token_budget, bool):
        attributes["sentinel_memory.token_budget"] = token_budget
    if conversation is not None:
        attributes[_CONVERSATION_ID] = conversation
    try:
        span = tracer.start_span(PREFIX + name, attributes=attributes)
    except Exception as error:  # OTL-8: a sampler or a processor's on_start: no span, the operation goes on
        _failed("start", error)
        return _OFF
    return _Operation(span)


def _recording() -> Any:
    """The span this module has open here, when it records; else None (also when asking raised, OTL-8)."""
    span = _CURRENT.get()
    if span is None:
        return None
    try:
        recording = span.is_recording()
    except Exception as error:
        _failed("is_recording", error)
        return None
    return span if recording else None


def _annotate(span: Any, method: str, *args: Any) -> None:
    """``span.<method>(*args)``, guarded (OTL-8)."""
    try:
        getattr(span, method)(*args)
    except Exception as error:
        _failed(method, error)


def _written(result: Any) -> int:
    if isinstance(result, Entry):
        return 1
    if isinstance(result, list):
        return len(result)
    return 0


def changed(
    name: str, before: MemoryState, state: MemoryState | None, result: Any, automatic: Compaction, explicit: Compaction
) -> None:
    """OTL-2: what the change ``name`` did, on its span: entries written, removed, expired, evicted, stored.

    Args:
        name: The change, a key of ``shell.STEPS``.
        before: The state it started from.
        state: The state it kept, or None when it changed nothing.
        result: What the method returns.
        automatic: What its automatic compaction dropped.
        explicit: What ``compact()`` dropped.
    """
    span = _recording()
    if span is None:
        return
    removed = 0
    if name == "forget":
        removed = int(bool(result))
    elif name == "clear":
        removed = len(before.entries)
    kept = before if state is None else state
    _annotate(
        span,
        "set_attributes",
        {
            "sentinel_memory.entries.written": _written(result),
            "sentinel_memory.entries.removed": removed,
            "sentinel_memory.entries.expired": len(automatic.expired) + len(explicit.expired),
            "sentinel_memory.entries.evicted": len(automatic.evicted) + len(explicit.evicted),
            "sentinel_memory.entries.stored": len(kept.entries),
        },
    )


def dropped(compaction: Compaction, *, automatic: bool) -> None:
    """OTL-3: a compaction that dropped something is an event with its counts on the span it happened in.

    Args:
        compaction: What it dropped; nothing is recorded when it dropped nothing.
        automatic: A change's or a load's compaction, not ``compact()``'s.
    """
    if _CURRENT.get() is None or not compaction:  # first: the cheapest test, the one that fails when nobody listens
        return
    span = _recording()
    if span is None:
        return
    _annotate(
        span,
        "add_event",
        "sentinel_memory.compaction",
        {
            "sentinel_memory.entries.expired": len(compaction.expired),
            "sentinel_memory.entries.evicted": len(compaction.evicted),
            "sentinel_memory.compaction.automatic": automatic,
        },
    )


def loaded(result: LoadResult, state: MemoryState, generation: int) -> None:
    """OTL-5: what a load found, on its span: the ``LoadResult``'s counts, the entries held, the generation."""
    span = _recording()
    if span is None:
        return
    _annotate(
        span,
        "set_attributes",
        {
            "sentinel_memory.load.loaded": result.loaded,
            "sentinel_memory.load.dropped": result.dropped,
            "sentinel_memory.load.compacted": result.compacted,
            "sentinel_memory.load.working_dropped": result.working_dropped,
            "sentinel_memory.entries.stored": len(state.entries),
            "sentinel_memory.generation": generation,
        },
    )


def saved(what: Changes | dict[str, Any], generation: int) -> None:
    """OTL-5: what a save sent, on its span: whole or incremental, how many entries and deletes, the generation."""
    span = _recording()
    if span is None:
        return
    if isinstance(what, Changes):
        incremental, entries, deletes = True, len(what.upserts), len(what.deletes)
    else:
        incremental, entries, deletes = False, len(what.get("entries") or ()), 0
    _annotate(
        span,
        "set_attributes",
        {
            "sentinel_memory.save.incremental": incremental,
            "sentinel_memory.save.entries": entries,
            "sentinel_memory.save.deletes": deletes,
            "sentinel_memory.generation": generation,
        },
    )


def preserved() -> None:
    """OTL-5: the store kept a copy of what the last load dropped, before the save that overwrites it."""
    span = _recording()
    if span is not None:
        _annotate(span, "add_event", "sentinel_memory.preserved")


def built(result: T) -> T:
    """OTL-6: what a read built, on its span: tokens, entries chosen and omitted; for messages, their count and
    the pending turns. Returns ``result`` as it is."""
    span = _recording()
    if span is None:
        return result
    if isinstance(result, (Context, Messages)):
        attributes: dict[str, Any] = {
            "sentinel_memory.tokens": result.tokens,
            "sentinel_memory.entries.chosen": len(result.entries),
            "sentinel_memory.entries.omitted": result.omitted,
        }
        if isinstance(result, Messages):
            attributes["sentinel_memory.messages"] = len(result.messages)
            attributes["sentinel_memory.entries.pending"] = len(result.pending)
        _annotate(span, "set_attributes", attributes)
    return result
