"""The immutable values the core passes around: an entry, the config, the results.

Every class here is a frozen attrs class: a transition never changes a value,
it builds a new one with ``attrs.evolve``. Containers inside a
``MemoryState`` are read-only mappings, tables
and tuples, so code that holds an old state keeps seeing exactly that state.

The one thing attrs cannot freeze is an entry's JSON ``data`` (a dict stays a
dict). The core therefore copies data on the way in and hands out copies on
every way out (ENT-3): what a caller receives is never what the state holds.
"""

from __future__ import annotations

import collections
import functools
import itertools
import operator
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from .jsondata import clone, text_of
from .lexical import words
from .tokens import Tokenizer, as_tokenizer, estimate_tokens, utf16_len

__all__ = [
    "JSON",
    "CacheItem",
    "Changes",
    "Compaction",
    "Config",
    "Context",
    "Counters",
    "Entry",
    "Hit",
    "LoadResult",
    "Messages",
    "Working",
    "by_age",
    "by_importance",
    "default_format",
    "frozen_mapping",
    "sorted_by_age",
]


#: A JSON value as the memory stores and returns it (ENT-2): what ``get``, ``mem[key]`` and ``Entry.data``
#: hold. A tuple passed in comes back as a list.
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"


def frozen_mapping(items: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only view: how states hold their tables.

    A view the core already made is kept as it is (nobody else holds its
    dict); anything else is copied first, so a caller's dict never leaks in.

    Args:
        items: The mapping to freeze, or None for an empty one. Defaults to None.

    Returns:
        A read-only ``types.MappingProxyType``.

    Examples:
        >>> from sentinel_memory.core.values import frozen_mapping
        >>> dict(frozen_mapping({"a": 1})), dict(frozen_mapping())
        ({'a': 1}, {})
    """
    if isinstance(items, types.MappingProxyType):
        return items
    return types.MappingProxyType(dict(items or {}))


@attrs.frozen
class Entry:
    """One long-term memory, as the article's JSON plus its order number.

    ``seq`` grows with every remember (ENT-6), so "newer" is the larger
    ``(updated_at, seq)`` even when two writes share a millisecond.
    ``text`` and ``words`` are derived once per entry version. A memory
    hands out copies (ENT-3); changing one changes nothing stored.

    Attributes:
        key: The entry's key, a non-empty string.
        data: The JSON data (``JSON``).
        importance: A number in [0, 1]: what compaction keeps longest (CMP-1).
        created_at: When the key was first stored, in milliseconds since the epoch.
        updated_at: When the entry was last written, in milliseconds since the epoch.
        expires_at: When it expires, in milliseconds since the epoch, or None for never.
        seq: Its order number: larger is a later write (ENT-6).

    Examples:
        >>> entry = mem.remember("user:name", "Jakub")
        >>> entry.key, entry.data, entry.importance, entry.expires_at
        ('user:name', 'Jakub', 0.5, None)
    """

    key: str
    data: Any
    importance: float
    created_at: int | float
    updated_at: int | float
    expires_at: int | float | None
    seq: int

    @functools.cached_property
    def text(self) -> str:
        """The data as the context renders it (TXT-1), computed once per entry version."""
        return text_of(self.data)

    @functools.cached_property
    def line(self) -> str:
        """The entry rendered by ``default_format``, computed once per entry version (CTX-3)."""
        return default_format(self)

    @functools.cached_property
    def line_units(self) -> int:
        """UTF-16 length of ``line``, what the estimator's fast fill sums (CTX-8).

        Summed from the parts of ``key: text``, so that measuring every entry
        (a load does) does not also build and keep every line.
        """
        return utf16_len(self.key) + 2 + utf16_len(self.text)

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """The recall words of key and text together (REC-1), computed once per entry version."""
        return words(self.key) | words(self.text)

    @functools.cached_property
    def bm25_terms(self) -> tuple[collections.Counter[str], int]:
        """The BM25 terms of key and text together with their counts, and how many there are (BM-1), computed once."""
        from .bm25 import terms

        found = terms(self.key) + terms(self.text)
        return collections.Counter(found), len(found)

    @property
    def order(self) -> tuple[int | float, int]:
        """The sort key of age: larger is newer (ENT-6)."""
        return (self.updated_at, self.seq)

    @property
    def holds_container(self) -> bool:
        """True when ``data`` is a dict or a list: the only data a reader could change (ENT-3)."""
        return isinstance(self.data, (dict, list))

    def to_dict(self) -> dict[str, Any]:
        """The entry as the article's JSON, the same object a saved document lists (PER-1, ENT-15).

        ``{"key", "data", "importance", "createdAt", "updatedAt", "expiresAt"}``,
        with its own copy of the data; the order number ``seq`` is internal
        and not included.

        Returns:
            A new dict.

        Examples:
            >>> mem.remember("user:name", "Jakub").to_dict()["createdAt"]
            1792310400000
        """
        return {
            "key": self.key,
            "data": clone(self.data),
            "importance": self.importance,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "expiresAt": self.expires_at,
        }

    def copy(self) -> Entry:
        """The same entry with its own copy of ``data`` (ENT-3).

        An entry is frozen, so when its data is immutable too (a str, a
        number, a bool or None) the entry itself is already a safe copy.

        Returns:
            An equal ``Entry`` whose data is not shared with this one.

        Examples:
            >>> entry = mem.remember("user:tags", ["vip"])
            >>> copied = entry.copy()
            >>> copied == entry, copied.data is entry.data
            (True, False)
        """
        if not isinstance(self.data, (dict, list)):  # ``holds_container``, without a call: hundreds per context
            return self
        # The constructor, not attrs.evolve: a context or a chat request copies hundreds of entries.
        return Entry(
            self.key, clone(self.data), self.importance, self.created_at, self.updated_at, self.expires_at, self.seq
        )

    @classmethod
    def many(
        cls,
        keys: Sequence[str],
        data: Sequence[Any],
        importances: Sequence[float],
        created_at: Sequence[int | float],
        updated_at: Sequence[int | float],
        expires_at: Sequence[int | float | None],
        first_seq: int,
    ) -> list[Entry]:
        """One entry per position of the columns given, numbered from ``first_seq``: what a load makes.

        Equal to ``Entry(key, data, ...)`` for each position (a test holds it
        to that), but made a field at a time: the class's ``__init__`` sets
        the seven fields with one Python-level call each, 700,000 calls for
        a load of 100,000 entries, where setting one field of every entry
        at once runs in C. An entry has no validators or converters to skip
        (a test says so, too).

        Args:
            keys: The entries' keys.
            data: Their JSON data, taken as it is (not copied).
            importances: Their importances.
            created_at: When each key was first stored.
            updated_at: When each was last written.
            expires_at: When each expires, or None.
            first_seq: The ``seq`` of the first entry; the others count on from it.

        Returns:
            A new list of ``Entry``, in the columns' order.

        Raises:
            ValueError: The columns differ in length.

        Examples:
            >>> [entry.seq for entry in Entry.many(["a", "b"], [1, 2], [0.5, 0.5], [0, 0], [0, 0], [None, None], 7)]
            [7, 8]
        """
        count = len(keys)
        columns = (keys, data, importances, created_at, updated_at, expires_at, range(first_seq, first_seq + count))
        entries = list(map(object.__new__, itertools.repeat(cls, count)))
        for field, column in zip(attrs.fields(cls), columns, strict=True):
            if len(column) != count:
                raise ValueError("the columns of Entry.many differ in length")
            # The slot's own setter: how a frozen attrs class sets a field in __init__.
            collections.deque(map(cls.__dict__[field.name].__set__, entries, column), maxlen=0)
        return entries


#: Sort key for age order, oldest first: ascending ``(updated_at, seq)`` (ENT-6).
by_age = operator.attrgetter("updated_at", "seq")

_seq = operator.attrgetter("seq")
_updated_at = operator.attrgetter("updated_at")


def sorted_by_age(entries: Iterable[Entry], *, seq_is_age: bool = False) -> list[Entry]:
    """``sorted(entries, key=by_age)``, oldest first (ENT-6).

    By ``seq``, then stably by ``updated_at``: two sorts on one number each
    give the same order much faster than one sort on pairs.

    Args:
        entries: The entries to sort.
        seq_is_age: The caller knows that ``seq`` order is age order (the index's ``in_order``):
            then the sort by ``seq`` is all it takes. Defaults to False.

    Returns:
        A new list, oldest first.
    """
    by_seq = sorted(entries, key=_seq)
    return by_seq if seq_is_age else sorted(by_seq, key=_updated_at)


#: Sort key for importance order, weakest first: ascending ``(importance, updated_at, seq)`` (CMP-1, REC-3).
by_importance = operator.attrgetter("importance", "updated_at", "seq")


def default_format(entry: Entry) -> str:
    """``key: text``, the default line of a context (CTX-3).

    Pass another function as ``get_context(format=...)`` to render entries differently.

    Args:
        entry: The entry to render.

    Returns:
        The line, made of the key, a colon and a space, and the entry's ``text``.

    Examples:
        >>> default_format(mem.remember("user:name", "Jakub"))
        'user:name: Jakub'
    """
    return f"{entry.key}: {entry.text}"


@attrs.frozen
class CacheItem:
    """An L0 scratch value and the moment it expires (L0-1).

    Attributes:
        value: The JSON value.
        expires_at: When it expires, in milliseconds since the epoch.
    """

    value: Any
    expires_at: int | float


@attrs.frozen
class Working:
    """L1 working memory: a small dict and when it was last set (L1-1..L1-3).

    Attributes:
        data: The working memory, a read-only mapping of JSON values. Defaults to empty.
        updated_at: When it was last set, in milliseconds since the epoch; None after a clear
            or when nothing was ever set. Defaults to None.
    """

    data: Mapping[str, Any] = attrs.field(factory=frozen_mapping, converter=frozen_mapping)
    updated_at: int | float | None = None


@attrs.frozen
class Counters:
    """Running totals for ``stats()`` (CMP-5).

    Attributes:
        compactions: How many compactions dropped something. Defaults to 0.
        expired: How many entries were dropped as expired. Defaults to 0.
        evicted: How many entries were evicted to keep ``limit``. Defaults to 0.
    """

    compactions: int = 0
    expired: int = 0
    evicted: int = 0


#: BM-9: how recall and a context's query rank: REC-2's share of words, BM25, or the app's own scorer.
Ranking: TypeAlias = "str | Callable[[str, Sequence[Entry]], Sequence[float]]"
#: BM-9: the rankings named by a string.
RANKINGS = ("words", "bm25")


def ranking_name(ranking: object) -> str:
    """How a document and ``stats`` name a config's ranking (BM-10): ``"words"``, ``"bm25"``, or ``"function"``."""
    return ranking if isinstance(ranking, str) else "function"


def _ranking(ranking: Any) -> Any:
    """BM-9: ``"words"`` (REC-2, the default), ``"bm25"`` (its stemmer must be installed), or a scorer function."""
    if ranking is None:
        return "words"
    if isinstance(ranking, str):
        if ranking not in RANKINGS:
            raise ValueError(
                f'ranking must be "words", "bm25" or a function (query, entries) -> scores, got {ranking!r}'
            )
        if ranking == "bm25":
            from .bm25 import require_stemmer

            require_stemmer()
        return ranking
    if not callable(ranking):
        raise TypeError(f"ranking must be a str or a function (query, entries) -> scores, got {type(ranking).__name__}")
    return ranking


def _counting(tokenizer: Any) -> Tokenizer:
    """The counting function of ``Config(tokenizer=...)``: None is the estimator (CTX-7, CTX-9)."""
    return as_tokenizer(tokenizer) or estimate_tokens


@attrs.frozen
class Config:
    """The options that shape behaviour, each already through the number rule (NUM-3).

    ``make_config`` builds one from raw options; ``create_memory`` does it for you.

    Attributes:
        limit: The most live entries. Defaults to 1000.
        recency_window: How long an entry counts as fresh, in milliseconds. Defaults to one day.
        working_ttl: How long the working memory lasts without a ``set``. Defaults to one hour.
        cache_ttl: How long a cached item lives by default. Defaults to 5 minutes.
        tokenizer: The counting function; a tokenizer object becomes its ``LineCounter``
            (CTX-9, CTX-12). Defaults to ``estimate_tokens``.
        ranking: How recall and a context's query rank the entries (BM-9): ``"words"`` (REC-2),
            ``"bm25"`` (BM-1 .. BM-8) or a function ``(query, entries) -> scores``. Defaults to ``"words"``.

    Examples:
        >>> Config().limit, make_config(limit=500).limit
        (1000, 500)
    """

    limit: int = 1000
    recency_window: int | float = 86_400_000
    working_ttl: int | float = 3_600_000
    cache_ttl: int | float = 300_000
    # A tokenizer object given here directly becomes its counter, as make_config makes it (CTX-9).
    tokenizer: Tokenizer = attrs.field(default=estimate_tokens, converter=_counting)
    ranking: Ranking = attrs.field(default="words", converter=_ranking)


@attrs.frozen
class Compaction:
    """What a transition dropped: ``expired`` and ``evicted`` entries, as copies (CMP-2).

    ``Memory.compact`` returns one, and ``on_evict`` receives one. It is
    true when anything was dropped, and two add up.

    Attributes:
        expired: The entries dropped because their ttl ran out. Defaults to ``()``.
        evicted: The least important entries dropped to keep ``limit``. Defaults to ``()``.

    Examples:
        >>> dropped = []
        >>> small = create_memory(limit=1, on_evict=dropped.append)
        >>> small.remember("a", 1).key, small.remember("b", 2).key
        ('a', 'b')
        >>> [entry.key for entry in dropped[0].evicted]
        ['a']
    """

    expired: tuple[Entry, ...] = ()
    evicted: tuple[Entry, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.expired or self.evicted)

    def __add__(self, other: Compaction) -> Compaction:
        return Compaction(self.expired + other.expired, self.evicted + other.evicted)


@attrs.frozen
class Hit:
    """A recall result: a copy of the entry and its score (REC-2).

    Attributes:
        entry: A copy of the ``Entry`` found.
        score: How well it matches, higher is better.

    Examples:
        >>> mem.remember("order:42", "refund requested").key
        'order:42'
        >>> hit = mem.recall("refund")[0]
        >>> hit.entry.key, hit.score > 0
        ('order:42', True)
    """

    entry: Entry
    score: float


@attrs.frozen
class Context:
    """What ``Memory.get_context`` returns (CTX-4, CTX-6).

    Attributes:
        text: The prompt text, one rendered entry per line.
        entries: The entries in it, in render order (oldest first).
        tokens: The tokenizer's count of ``text`` itself.
        omitted: How many live entries did not fit.

    Examples:
        >>> mem.remember("user:name", "Jakub").key
        'user:name'
        >>> context = mem.get_context(token_budget=30)
        >>> context.text, context.tokens, context.omitted
        ('user:name: Jakub', 4, 0)
    """

    text: str
    entries: tuple[Entry, ...]
    tokens: int | float
    omitted: int


@attrs.frozen
class Messages:
    """What ``Memory.get_messages`` returns: a valid chat request within one budget (MSG-2 .. MSG-9).

    Attributes:
        messages: A new ``list`` of new dicts in the chat-completions form, ready to send (append
            the new user message, or put more in front): the system message (the app's prompt and
            the facts that fit; left out when there is neither), then the recent turns that fit,
            oldest first, starting at a user message, tool calls with their results.
        entries: The entries used: facts in render order, then turns.
        tokens: ``sum(tokenizer(text) + 3)`` over the messages (MSG-3).
        omitted: How many live entries were left out (the pending ones included).
        pending: The turns of an assistant's tool calls at the end that are not all answered
            yet, left out of ``messages`` (MSG-7). Defaults to ``()``.
        prefix: How many leading messages hold no facts: the system prompt and the history, which
            the next request repeats until its cut moves; a prompt cache's breakpoint goes on the
            last of them (MSG-13). Defaults to 0.
        prefix_tokens: What those messages count (MSG-3). Defaults to 0.

    Examples:
        >>> mem.add_turn("user", "Hello!").key
        'chat:1'
        >>> messages = mem.get_messages(token_budget=100)
        >>> messages.messages, messages.tokens
        ([{'role': 'user', 'content': 'Hello!'}], 5)
    """

    messages: list[dict[str, Any]]
    entries: tuple[Entry, ...]
    tokens: int | float
    omitted: int
    pending: tuple[Entry, ...] = ()
    prefix: int = 0
    prefix_tokens: int | float = 0


@attrs.frozen
class LoadResult:
    """What a load did with the stored entries (PER-6, PER-8, PER-14).

    ``loaded`` entries were valid, ``dropped`` were invalid and left out, and
    ``compacted`` of the loaded ones were compacted away at once because the
    store held more than ``limit``. ``working_dropped`` is True when the
    stored working memory was damaged and loaded as the empty one (PER-20).
    Anything dropped or compacted is ``lost`` from the store at its next save.
    ``Memory.load`` returns one and keeps it as ``Memory.last_load``.

    Attributes:
        loaded: How many stored entries were valid.
        dropped: How many were invalid and left out.
        compacted: How many loaded ones were compacted away at once. Defaults to 0.
        working_dropped: The stored working memory was damaged. Defaults to False.

    Examples:
        >>> store = MemoryStore()
        >>> create_memory(store=store, autosave=True).remember("user:name", "Jakub").key
        'user:name'
        >>> create_memory(store=store).last_load
        LoadResult(loaded=1, dropped=0, compacted=0, working_dropped=False)
    """

    loaded: int
    dropped: int
    compacted: int = 0
    working_dropped: bool = False

    @property
    def lost(self) -> int:
        """How many stored items the next save drops: ``dropped + compacted``, plus 1 for a dropped working memory."""
        return self.dropped + self.compacted + int(self.working_dropped)


@attrs.frozen
class Changes:
    """What one change did to the persisted part of a memory, for a store that saves incrementally (MW-4).

    A store with ``save_changes(changes)`` gets one instead of the whole
    document when it holds exactly the memory's last saved state.

    Attributes:
        upserts: The entries written or rewritten, oldest first. Defaults to ``()``.
        deletes: The keys removed. Defaults to ``()``.
        working: The new working memory, or None when it did not change. Defaults to None.
        generation: The generation the store holds after applying them (MW-1). Defaults to 0.

    Examples:
        >>> changes = Changes(deletes=("session:cart",), generation=2)
        >>> changes.upserts, changes.deletes, changes.generation
        ((), ('session:cart',), 2)
    """

    upserts: tuple[Entry, ...] = ()
    deletes: tuple[str, ...] = ()
    working: Working | None = None
    generation: int = 0
