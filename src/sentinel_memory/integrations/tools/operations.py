"""The operations a model calls on its own memory, with the checks a model's arguments get (TOOL-1 .. TOOL-6).

A model's arguments are not an app's: a model sends ``"0.9"`` for a number,
a key of a page of text, a ttl of minus one, and it can only act on what it
is told. So each argument is checked here, more strictly than the memory's
own number rule (NUM-1 would quietly use a default), and a bad one raises
``ToolArgumentError``, whose message names the argument, what it was and
the values it accepts. Every adapter hands that message back to the model as
a tool error it can act on, and nothing is changed (TOOL-4).

Each operation takes the ``Memory`` of the user the app chose and returns a
JSON-ready dict: the tools never choose a memory, so no argument a model
writes reaches another user's memory (TOOL-5).

Examples:
    >>> from sentinel_memory.integrations.tools import operations
    >>> operations.remember(mem, "user:diet", "vegetarian", importance=0.9)["key"]
    'user:diet'
    >>> [hit["key"] for hit in operations.recall(mem, "diet vegetarian")["hits"]]
    ['user:diet']
    >>> operations.forget(mem, "user:diet")
    {'key': 'user:diet', 'forgotten': True}
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, Protocol

from ...core.jsondata import text_of
from ...core.turns import is_turn_key
from ...memory import Memory

__all__ = [
    "ARGUMENTS",
    "DEFAULT_RECALL_LIMIT",
    "MAX_KEY_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_RECALL_LIMIT",
    "MAX_TEXT_CHARS",
    "MAX_TOKEN_BUDGET",
    "MAX_TTL_SECONDS",
    "MIN_TTL_SECONDS",
    "SCHEMAS",
    "TOOL_DESCRIPTIONS",
    "Memories",
    "ToolArgumentError",
    "call",
    "check_names",
    "forget",
    "get_context",
    "recall",
    "remember",
    "stats",
    "user_id_from",
]

#: TOOL-2: the longest key a model may write, in characters.
MAX_KEY_CHARS = 200
#: TOOL-2: the longest text a model may store in one entry, in characters.
MAX_TEXT_CHARS = 8000
#: TOOL-3: the longest query, in characters.
MAX_QUERY_CHARS = 1000
#: TOOL-3: how many hits ``recall`` gives unless asked, and the most it gives.
DEFAULT_RECALL_LIMIT = 5
MAX_RECALL_LIMIT = 50
#: TOOL-3: the largest token budget ``get_context`` takes.
MAX_TOKEN_BUDGET = 100_000
#: TOOL-2: the shortest ttl, one second (a shorter one would expire before the model could use it),
#: and the longest, ten years in seconds.
MIN_TTL_SECONDS = 1
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600

_shown = reprlib.Repr()
_shown.maxstring = 40
_shown.maxother = 40


#: What each tool tells the model it does: one text for every framework (TOOL-1).
TOOL_DESCRIPTIONS: dict[str, str] = {
    "remember": (
        "Store a fact about the user or the task under a short key, such as 'user:diet' or "
        "'project:deadline', so later conversations can use it. Writing an existing key replaces its text. "
        "importance (0 to 1, default 0.5) says how long to keep it when memory is full: the least important "
        "is forgotten first. ttl_seconds makes it expire (omit it to keep it until forgotten)."
    ),
    "recall": (
        "Search the stored facts for words of the query (exact words, accents and case ignored, no synonyms) "
        "and return the best matches with their keys, text, importance and score."
    ),
    "forget": "Delete the fact stored under a key. Use it when the user asks you to forget something or a fact is wrong.",
    "get_context": (
        "Return the most important stored facts as prompt text that fits token_budget tokens, "
        "those sharing words with the optional query first."
    ),
    "stats": "Count the stored facts: live entries, the limit, and how many expired or were evicted so far.",
}


class ToolArgumentError(ValueError):
    """A tool argument a model sent that the tool does not accept (TOOL-4).

    Args:
        argument: The argument's name, as the tool's schema names it; kept as ``argument``.
        message: What it accepts and what it got; the error's text is ``"<argument>: <message>"``.
    """

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument


class Memories(Protocol):
    """What gives each user's memory: a ``MemoryFolder``, a ``RedisMemories``, anything with ``open(user_id)``."""

    def open(self, user_id: str) -> Memory:  # pragma: no cover - a protocol
        """The memory of ``user_id``.

        Args:
            user_id: Whose memory, as the app names users.
        """
        ...


def user_id_from(context: Any, name: str = "user_id") -> str:
    """The user id an app put in a run's context (TOOL-5): the context itself when a str, else its ``name``.

    A mapping's item or an object's attribute of that name is used; it must
    be a non-empty ``str``.

    Args:
        context: What the framework hands the tool: a pydantic-ai ``deps``, an
            Agents SDK ``context``, a LangChain ``configurable`` dict.
        name: The item or attribute that holds the id. Defaults to ``"user_id"``.

    Returns:
        The user id.

    Raises:
        LookupError: The context holds no user id: the app's mistake, not the model's.

    Examples:
        >>> from sentinel_memory.integrations.tools.operations import user_id_from
        >>> user_id_from({"user_id": "u-1"}), user_id_from("u-2")
        ('u-1', 'u-2')
    """
    if isinstance(context, str):
        value: Any = context
    elif isinstance(context, Mapping):
        value = context.get(name)
    else:
        value = getattr(context, name, None)
    if not isinstance(value, str) or not value:
        raise LookupError(
            f"the memory tools need the user's id: run with a context (or config) holding {name!r}, "
            f"a non-empty str; found {_shown.repr(value)}"
        )
    return value


# -- the checks (TOOL-2 .. TOOL-4) -------------------------------------------


def _text(value: Any, argument: str, limit: int, what: str) -> str:
    if not isinstance(value, str):
        raise ToolArgumentError(argument, f"must be {what}, a string of 1 to {limit} characters; got {_kind(value)}")
    if not value.strip():
        raise ToolArgumentError(argument, f"must be {what}, a string of 1 to {limit} characters; got an empty string")
    if len(value) > limit:
        raise ToolArgumentError(
            argument, f"is {len(value)} characters; the most accepted is {limit}: shorten it or split it"
        )
    return value


def _key(value: Any) -> str:
    key = _text(value, "key", MAX_KEY_CHARS, "a short name such as 'user:diet'")
    if is_turn_key(key):
        raise ToolArgumentError("key", f"{key!r} is a chat turn's key (chat:N); use a name such as 'user:diet'")
    return key


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _importance(value: Any) -> float | None:
    if value is None:
        return None
    if not _number(value) or not 0 <= value <= 1:
        raise ToolArgumentError("importance", f"must be a number from 0 to 1 (default 0.5); got {_kind(value)}")
    return float(value)


def _ttl_ms(value: Any) -> float | None:
    if value is None:
        return None
    if not _number(value) or not MIN_TTL_SECONDS <= value <= MAX_TTL_SECONDS:
        raise ToolArgumentError(
            "ttl_seconds",
            f"must be a number of seconds from {MIN_TTL_SECONDS} to {MAX_TTL_SECONDS} (ten years), or omitted to keep "
            f"the fact until forgotten; got {_kind(value)}",
        )
    return float(value) * 1000


def _whole(value: Any, argument: str, low: int, high: int, default: int | None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, float) and value.is_integer():  # JSON's integer: 5.0 is 5
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        usual = f" (default {default})" if default is not None else ""
        raise ToolArgumentError(argument, f"must be a whole number from {low} to {high}{usual}; got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, (int, float)):
        return _shown.repr(value)
    if isinstance(value, str):
        return f"the string {_shown.repr(value)}"
    return f"a {type(value).__name__}"


# -- the operations ------------------------------------------------------------


def remember(memory: Memory, key: Any, text: Any, importance: Any = None, ttl_seconds: Any = None) -> dict[str, Any]:
    """Store ``text`` under ``key`` (TOOL-2): every argument checked first, then one ``memory.remember``.

    Args:
        memory: The user's memory.
        key: A non-empty str of at most ``MAX_KEY_CHARS`` characters, not a turn key (``chat:N``).
        text: A non-blank str of at most ``MAX_TEXT_CHARS`` characters.
        importance: A number in [0, 1], or None for the memory's default (0.5).
        ttl_seconds: A number of seconds in [``MIN_TTL_SECONDS``, ``MAX_TTL_SECONDS``], or None for no expiry.

    Returns:
        ``{"key", "importance", "ttl_seconds", "replaced"}``: what was stored and whether it replaced a live entry.

    Raises:
        ToolArgumentError: An argument is not accepted; nothing is stored.
    """
    checked_key = _key(key)
    checked_text = _text(text, "text", MAX_TEXT_CHARS, "the fact to store")
    checked_importance = _importance(importance)
    ttl_ms = _ttl_ms(ttl_seconds)
    replaced = memory.has(checked_key)
    entry = memory.remember(checked_key, checked_text, importance=checked_importance, ttl=ttl_ms)
    return {
        "key": entry.key,
        "importance": entry.importance,
        "ttl_seconds": None if ttl_seconds is None else ttl_seconds,
        "replaced": replaced,
    }


def recall(memory: Memory, query: Any, limit: Any = None) -> dict[str, Any]:
    """The stored facts sharing words with ``query``, best first (TOOL-3; REC-1 .. REC-3).

    Args:
        memory: The user's memory.
        query: A non-blank str of at most ``MAX_QUERY_CHARS`` characters.
        limit: A whole number in [1, ``MAX_RECALL_LIMIT``]; None means ``DEFAULT_RECALL_LIMIT``.

    Returns:
        ``{"hits": [{"key", "text", "importance", "score"}, ...]}``, chat turns left out.

    Raises:
        ToolArgumentError: An argument is not accepted.
    """
    checked_query = _text(query, "query", MAX_QUERY_CHARS, "the words to look for")
    checked_limit = _whole(limit, "limit", 1, MAX_RECALL_LIMIT, DEFAULT_RECALL_LIMIT)
    hits = []
    # Every live entry may be a hit: the turns among them are skipped, and recall's own default is 10.
    for hit in memory.recall(checked_query, limit=memory.size()):
        if is_turn_key(hit.entry.key):
            continue
        hits.append(
            {
                "key": hit.entry.key,
                "text": text_of(hit.entry.data),
                "importance": hit.entry.importance,
                "score": round(hit.score, 6),
            }
        )
        if len(hits) == checked_limit:
            break
    return {"hits": hits}


def forget(memory: Memory, key: Any) -> dict[str, Any]:
    """Forget the fact under ``key`` (TOOL-2): ``{"key", "forgotten"}``, False when there was none.

    Args:
        memory: The user's memory.
        key: As for ``remember``.

    Raises:
        ToolArgumentError: ``key`` is not accepted (as for ``remember``); nothing is forgotten.
    """
    checked_key = _key(key)
    return {"key": checked_key, "forgotten": memory.forget(checked_key)}


def get_context(memory: Memory, token_budget: Any, query: Any = None) -> dict[str, Any]:
    """The facts as prompt text within ``token_budget`` (TOOL-3; CTX-1 .. CTX-11), chat turns left out.

    Args:
        memory: The user's memory.
        token_budget: A whole number in [1, ``MAX_TOKEN_BUDGET``], counted with the memory's tokenizer.
        query: None, or a str as ``recall`` takes it: the facts sharing its words come first.

    Returns:
        ``{"text", "tokens", "keys", "omitted"}``.

    Raises:
        ToolArgumentError: An argument is not accepted.
    """
    budget = _whole(token_budget, "token_budget", 1, MAX_TOKEN_BUDGET, None)
    checked_query = None if query is None else _text(query, "query", MAX_QUERY_CHARS, "the words to look for")
    context = memory.get_context(token_budget=budget, query=checked_query, only="facts")
    return {
        "text": context.text,
        "tokens": context.tokens,
        "keys": [entry.key for entry in context.entries],
        "omitted": context.omitted,
    }


def stats(memory: Memory) -> dict[str, Any]:
    """The memory's counters (TOOL-3; CMP-5): ``memory.stats()``.

    Args:
        memory: The user's memory.
    """
    return dict(memory.stats())


#: TOOL-1: each tool's arguments, the required ones first, then the optional ones.
ARGUMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "remember": (("key", "text"), ("importance", "ttl_seconds")),
    "recall": (("query",), ("limit",)),
    "forget": (("key",), ()),
    "get_context": (("token_budget",), ("query",)),
    "stats": ((), ()),
}

_KEY = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_KEY_CHARS,
    "description": "A short name for the fact, such as 'user:diet'.",
}
_QUERY = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "Words to look for."}
_PROPERTIES: dict[str, dict[str, dict[str, Any]]] = {
    "remember": {
        "key": _KEY,
        "text": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TEXT_CHARS,
            "description": "The fact, in plain words.",
        },
        "importance": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "From 0 to 1: how long to keep it when memory is full (default 0.5).",
        },
        "ttl_seconds": {
            "type": "number",
            "minimum": MIN_TTL_SECONDS,
            "maximum": MAX_TTL_SECONDS,
            "description": "Forget it after this many seconds; omit to keep it.",
        },
    },
    "recall": {
        "query": _QUERY,
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_RECALL_LIMIT,
            "description": f"At most this many facts (default {DEFAULT_RECALL_LIMIT}).",
        },
    },
    "forget": {"key": _KEY},
    "get_context": {
        "token_budget": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_TOKEN_BUDGET,
            "description": "The most tokens the text may count.",
        },
        "query": _QUERY,
    },
    "stats": {},
}

#: TOOL-1: each tool's arguments as the JSON schema a framework shows the model.
SCHEMAS: dict[str, dict[str, Any]] = {
    name: {
        "type": "object",
        "properties": properties,
        **({"required": list(ARGUMENTS[name][0])} if ARGUMENTS[name][0] else {}),
        "additionalProperties": False,
    }
    for name, properties in _PROPERTIES.items()
}

_OPERATIONS: dict[str, Any] = {
    "remember": remember,
    "recall": recall,
    "forget": forget,
    "get_context": get_context,
    "stats": stats,
}


def check_names(name: str, arguments: Mapping[str, Any]) -> None:
    """Refuse an argument tool ``name`` does not take, naming those it does (TOOL-4).

    A model that writes ``ttl`` for ``ttl_seconds`` would otherwise have its
    fact kept with no expiry and never know.

    Args:
        name: The tool, one of ``ARGUMENTS``.
        arguments: The arguments the model sent.

    Raises:
        ToolArgumentError: An argument the tool does not take.
    """
    required, optional = ARGUMENTS[name]
    known = required + optional
    for argument in arguments:
        if argument not in known:
            accepted = ", ".join(known) if known else "no arguments"
            raise ToolArgumentError(str(argument), f"{name} takes no such argument; it takes {accepted}")


def call(memory: Memory, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Run the tool ``name`` with a model's ``arguments`` on ``memory`` (TOOL-1 .. TOOL-4).

    Args:
        memory: The user's memory, chosen by the app.
        name: ``remember``, ``recall``, ``forget``, ``get_context`` or ``stats``.
        arguments: The arguments as the model sent them, a mapping of names to JSON values.

    Returns:
        The operation's result.

    Raises:
        ToolArgumentError: An unknown argument, or one the operation does not accept; nothing is changed.
        KeyError: ``name`` is not one of the tools (the app's mistake).
    """
    operation = _OPERATIONS[name]
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError("arguments", f"must be an object of {name}'s arguments, got {_kind(arguments)}")
    check_names(name, arguments)
    required, optional = ARGUMENTS[name]
    result: dict[str, Any] = operation(memory, *(arguments.get(argument) for argument in required + optional))
    return result
