"""The reads of a memory, written once for ``Memory`` and ``AsyncMemory`` (ENT-7, ENT-15, REC-1, CTX-1, MSG-1, AIO-1).

A read is a pure function of the state a memory holds now and the time now,
asked of the core: it does no I/O and waits for nothing, so it is a plain
method in both shells, and both inherit it from ``Reads``. A shell gives
``Reads`` its ``_plumbing`` (whose state, store, generation and last load
they read), ``_now`` (one clock read per read, TIME-1) and ``_counters``
(the line counts of the tokenizer objects passed per call, CTX-12).
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from typing import Any, Literal, TypeVar, overload

from . import core, telemetry
from .core.jsondata import is_json_text
from .core.state import MemoryState
from .core.tokens import TokenizerLike
from .core.values import Context, Entry, Hit, LoadResult, Messages
from .shell import Counters, Plumbing

__all__ = ["Reads"]

T = TypeVar("T")
#: What a read returns as an entry's data: ``JSON`` for ``Memory``, ``Any`` for ``AsyncMemory``.
V = TypeVar("V")


class Reads(Mapping[str, V]):
    """The reads every memory has, and the read-only ``Mapping`` of its live keys to their data (ENT-15).

    None of them is a coroutine, in ``AsyncMemory`` either: a read does no I/O
    and sees the last kept state. The examples use a ``Memory``; an
    ``AsyncMemory`` reads the same way, without ``await``.
    """

    _plumbing: Plumbing
    _counters: Counters

    @property
    def state(self) -> MemoryState:
        """The current immutable state, for inspection or the pure functions."""
        return self._plumbing.state

    @property
    def store(self) -> Any:
        """The store this memory loads from and saves to."""
        return self._plumbing.store

    @property
    def generation(self) -> int:
        """The store generation this memory last loaded or saved (MW-1)."""
        return self._plumbing.generation

    @property
    def last_load(self) -> LoadResult | None:
        """The ``LoadResult`` of the last load, None before the first (PER-14)."""
        return self._plumbing.last_load

    def _now(self) -> int | float:
        raise NotImplementedError

    @overload
    def get(self, key: str) -> V: ...

    @overload
    def get(self, key: str, default: T) -> V | T: ...

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of the data stored under ``key``, or ``default`` when there is no live entry (ENT-7, EXP-3).

        An entry that has expired is not returned, from the exact millisecond of
        its deadline. ``mem[key]`` is the same read but raises ``KeyError``.

        Args:
            key: A non-empty string.
            default: What to return when there is no live entry. Defaults to None.

        Returns:
            A copy of the entry's JSON data (a type checker sees ``JSON``), or ``default``.

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> mem.remember("user:name", "Jakub").data
            'Jakub'
            >>> mem.get("user:name"), mem.get("user:city", "unknown")
            ('Jakub', 'unknown')
        """
        return core.get(self.state, key, now=self._now(), default=default)

    def get_entry(self, key: str, default: Any = None) -> Any:
        """A copy of the live ``Entry`` under ``key``, or ``default`` (ENT-15).

        Args:
            key: A non-empty string.
            default: What to return when there is no live entry. Defaults to None.

        Returns:
            A copy of the ``Entry`` (its data copied too), or ``default``.

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> entry = mem.remember("user:name", "Jakub", importance=0.9)
            >>> mem.get_entry("user:name").importance, mem.get_entry("user:city")
            (0.9, None)
        """
        return core.get_entry(self.state, key, now=self._now(), default=default)

    def has(self, key: str) -> bool:
        """Whether a live entry is stored under ``key`` (ENT-7).

        ``key in mem`` is the same question, but never raises.

        Args:
            key: A non-empty string.

        Returns:
            True when a live entry is stored under ``key``.

        Raises:
            TypeError: ``key`` is not a string.
            ValueError: ``key`` is empty.

        Examples:
            >>> mem.remember("user:name", "Jakub").key
            'user:name'
            >>> mem.has("user:name"), mem.has("user:city")
            (True, False)
        """
        return core.has(self.state, key, now=self._now())

    def size(self) -> int:
        """The number of live entries, the same as ``len(mem)``.

        Expired entries that are still stored are not counted; ``stats()["stored"]``
        counts them.

        Returns:
            The number of live entries.

        Examples:
            >>> mem.remember("a", 1).key, mem.remember("b", 2).key
            ('a', 'b')
            >>> mem.size()
            2
        """
        return core.size(self.state, now=self._now())

    def get_recent(self, n: int | None = None) -> tuple[Entry, ...]:
        """The ``n`` newest live entries, newest first, as copies (ENT-10).

        Args:
            n: How many, an integer >= 0. None, the default, means 10 (an invalid value gives 10, with an
                ``IgnoredValueWarning``).

        Returns:
            A tuple of at most ``n`` copies of ``Entry``, newest first.

        Examples:
            >>> for text in ["Hi", "Hello!", "Any nuts?"]:
            ...     entry = mem.add_turn("user", text)
            >>> [entry.key for entry in mem.get_recent(2)]
            ['chat:3', 'chat:2']
        """
        return core.get_recent(self.state, n, now=self._now())

    def recall(self, query: str, *, limit: int | None = None) -> tuple[Hit, ...]:
        """The live entries that share a word with ``query``, best first (REC-1 .. REC-3).

        Recall is lexical: words are compared lower-cased and without accents, so
        "cesky" finds "česky", but "money back" does not find "refund". The score
        weighs the share of query words found by importance, plus a little for
        freshness; equal scores go to the newer entry.

        Args:
            query: The text to look for.
            limit: At most this many hits, an integer >= 0. None, the default, means 10.

        Returns:
            A tuple of ``Hit`` (``entry``, ``score``), best first.

        Raises:
            TypeError: ``query`` is not a string.

        Examples:
            >>> mem.remember("order:42", "refund requested").key
            'order:42'
            >>> [hit.entry.key for hit in mem.recall("refund status")]
            ['order:42']
        """
        return core.recall(self.state, query, now=self._now(), limit=limit)

    def get_context(
        self,
        *,
        token_budget: int | float,
        query: str | None = None,
        tokenizer: TokenizerLike | None = None,
        format: Callable[[Entry], str] | None = None,
        separator: str | None = None,
        must_keep: float | None = None,
        only: Literal["facts", "turns"] | None = None,
    ) -> Context:
        r"""The prompt text of the most important live entries that fits ``token_budget`` (CTX-1 .. CTX-11).

        Entries are ranked (with ``must_keep``: the must-keep entries first; then
        entries sharing a word with ``query``, by recall score; then the rest by
        retention), and each is added only if the whole rendered text still counts
        within the budget. The text is rendered oldest first, one entry per line.

        Args:
            token_budget: The most tokens the text may count, a finite number >= 0.
            query: Rank the entries that share its words first. Defaults to None (no query).
            tokenizer: Counts tokens: a function ``(text) -> number``, or any object with an
                ``encode(text)`` method (tiktoken's or bpe-openai's ``Encoding``, a Hugging Face
                tokenizer). None, the default, means the one given to ``create_memory``, else ``estimate_tokens``.
            format: Renders one entry as its line. None, the default, means ``default_format``
                (``"key: text"``).
            separator: Joins the lines. None, the default, means ``"\n"``, one entry per line.
            must_keep: An importance in [0, 1]; entries at or above it are placed first whatever
                the query (they still have to fit). Defaults to None (none placed first).
            only: ``"facts"`` or ``"turns"`` for the entries of that kind alone (a turn is a
                ``chat:N`` entry holding a message, as ``add_turn`` stores it). Defaults to None
                (every entry).

        Returns:
            A ``Context`` with ``text``, the ``entries`` in it, its ``tokens`` (the tokenizer's count
            of ``text``) and how many live entries were ``omitted``.

        Raises:
            ValueError: The budget is not a finite number >= 0, or even the empty text exceeds it.
            TypeError: The tokenizer returned something other than a number >= 0, the format did
                not return a string, or the query is not a string.

        Examples:
            >>> mem.remember("user:name", "Jakub").key
            'user:name'
            >>> mem.get_context(token_budget=30).text
            'user:name: Jakub'
            >>> mem.get_context(token_budget=30, query="refund status").tokens <= 30
            True
        """
        with telemetry.operation("get_context", self.store, token_budget, self._plumbing.conversation):  # OTL-6
            return telemetry.built(
                core.context(
                    self.state,
                    now=self._now(),
                    token_budget=token_budget,
                    query=query,
                    tokenizer=self._counters.get(tokenizer, self.state.config.tokenizer),
                    format=format,
                    separator=separator,
                    must_keep=must_keep,
                    only=only,
                )
            )

    def get_messages(
        self,
        *,
        token_budget: int | float,
        query: str | None = None,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        system: str | None = None,
        cut: str | None = None,
        low_mark: float | None = None,
        facts_at: str | None = None,
        keep_results: int | None = None,
        exclude_tools: Sequence[str] | None = None,
    ) -> Messages:
        """A chat request a chat API accepts, within ``token_budget``: your system prompt and the facts, then recent turns (MSG-1 .. MSG-9).

        The system message holds ``system`` (your instructions) and, after a
        blank line, the facts, chosen as ``get_context`` chooses them
        (``query``, ``must_keep``). The newest turns that fit follow, oldest
        first: an assistant's tool calls and their results kept or left out
        together, the history starting at a user message, and the newest user
        message always in; calls still waiting for results at the end are left
        out and listed in ``pending``. The budget is shared in three steps
        (MSG-2): the turns are taken newest back while they fit in all but
        ``facts_share`` of it; the facts take what the turns left; then older
        turns take whatever the facts left over. So ``facts_share`` is room
        kept for facts, not a quota: facts that need less give the rest back to
        the turns. Each message counts its text's tokens plus 3 for the chat
        format (MSG-3), and the whole never exceeds the budget.
        ``messages`` is a new list each call: append the new question to it.

        Args:
            token_budget: The most tokens the messages may count, a finite number >= 0.
            query: Rank the facts that share its words first (the user's last message, say).
                Defaults to None (no query).
            tokenizer: Counts tokens, as for ``get_context``. None, the default, means the memory's tokenizer.
            must_keep: Facts of at least this importance come first, as for ``get_context``.
                Defaults to None.
            facts_share: The share of the budget kept for facts while there are any, in [0, 1].
                None, the default, means 0.5.
            system: The app's own system prompt: the start of the system message, counted in the
                budget (MSG-2, MSG-9). Defaults to None.
            cut: ``"newest"`` (the default) fills the history newest first to the budget, so its
                first turn moves on nearly every request; ``"stable"`` cuts it only at marks, so
                consecutive requests share their start and a prompt cache serves it (MSG-11).
            low_mark: With ``cut="stable"``, about the share of the budget a request fills right
                after the history is cut, in [0, 1]. None, the default, means 0.5.
            facts_at: ``"system"`` (the default) puts the facts in the system message after
                ``system``; ``"end"`` in a system message of their own after the history, so a
                question that picks other facts changes only the end of the request; ``"start"``
                right after the app's system message (MSG-12).
            keep_results: When the history does not fit whole, the tool results of every turn but
                the newest ``keep_results`` (an assistant's calls with their results count as one)
                become ``"[cleared]"`` before any turn is left out, each call kept with its result
                (MSG-15). None, the default, clears nothing.
            exclude_tools: Names of tools whose results are never cleared. None, the default, means none.

        Returns:
            A ``Messages`` with the ``messages`` (a new list of dicts, ready for a chat-completions
            call), the ``entries`` used, their ``tokens``, how many live entries were ``omitted``
            and the ``pending`` turns.

        Raises:
            ValueError: The budget is not a finite number >= 0.
            TokenBudgetError: ``system``, the must-keep facts and the turns from the newest user
                message on need more than the budget (a ``ValueError``; it says how many).
            TypeError: The tokenizer returned something other than a number >= 0, or the query
                or ``system`` is not a string.

        Examples:
            >>> mem.remember("user:allergy", "peanuts").key
            'user:allergy'
            >>> mem.add_turn("user", "Any nuts in the risotto?").key
            'chat:1'
            >>> [m["role"] for m in mem.get_messages(token_budget=200).messages]
            ['system', 'user']
        """
        return self._messages(
            core.messages,
            token_budget=token_budget,
            query=query,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            system=system,
            cut=cut,
            low_mark=low_mark,
            facts_at=facts_at,
            keep_results=keep_results,
            exclude_tools=exclude_tools,
        )

    def _messages(
        self, build: Callable[..., Messages], *, token_budget: Any, tokenizer: Any = None, **options: Any
    ) -> Messages:
        """``get_messages`` built by ``build``: ``core.messages``, or ``core.shared_messages`` for an adapter (MSG-18)."""
        with telemetry.operation("get_messages", self.store, token_budget, self._plumbing.conversation):  # OTL-6
            return telemetry.built(
                build(
                    self.state,
                    now=self._now(),
                    token_budget=token_budget,
                    tokenizer=self._counters.get(tokenizer, self.state.config.tokenizer),
                    **options,
                )
            )

    def stats(self) -> dict[str, int | str]:
        """The counters of this memory (CMP-5), and its ranking (BM-10).

        Returns:
            A dict with, in this order, ``size`` (live entries), ``stored`` (expired ones included),
            ``limit``, ``cache`` (live cache items), ``compactions``, how many entries were
            ``expired`` and ``evicted`` so far, and the ``ranking`` (``"words"``, ``"bm25"`` or
            ``"function"``).

        Examples:
            >>> mem.remember("user:name", "Jakub").key
            'user:name'
            >>> mem.stats()["size"], mem.stats()["limit"]
            (1, 1000)
        """
        return core.stats(self.state, now=self._now())

    def __len__(self) -> int:
        return self.size()

    def __contains__(self, key: object) -> bool:
        # A membership test answers: anything that cannot be a key is not in the memory.
        return isinstance(key, str) and bool(key) and is_json_text(key) and self.has(key)

    def __getitem__(self, key: str) -> V:
        """``mem[key]``: a copy of the live entry's data; ``KeyError`` when there is none (ENT-15)."""
        entry = core.get_entry(self.state, key, now=self._now())
        if entry is None:
            raise KeyError(key)
        data: V = entry.data
        return data

    def __iter__(self) -> Iterator[str]:
        """The live keys, oldest first, as they were at one moment (ENT-15)."""
        return iter(self.keys())

    def keys(self) -> KeysView[str]:
        """The live keys, oldest first, read at one moment (ENT-15).

        Returns:
            A view of the live keys, oldest first.

        Examples:
            >>> mem.remember("a", 1).key, mem.remember("b", 2).key
            ('a', 'b')
            >>> list(mem.keys())
            ['a', 'b']
        """
        return self._snapshot().keys()

    def values(self) -> ValuesView[V]:
        """Copies of the live entries' data, oldest first, read at one moment (ENT-15).

        Returns:
            A view of copies of the data, oldest first.

        Examples:
            >>> mem.remember("a", 1).key, mem.remember("b", [2]).key
            ('a', 'b')
            >>> list(mem.values())
            [1, [2]]
        """
        return self._snapshot().values()

    def items(self) -> ItemsView[str, V]:
        """``(key, data)`` pairs of the live entries, oldest first, read at one moment (ENT-15).

        Returns:
            A view of ``(key, copy of data)`` pairs, oldest first.

        Examples:
            >>> mem.remember("a", 1).key, mem.remember("b", 2).key
            ('a', 'b')
            >>> dict(mem.items())
            {'a': 1, 'b': 2}
        """
        return self._snapshot().items()

    def _snapshot(self) -> dict[str, Any]:
        # One clock read for the whole view: an entry cannot expire half way through an iteration.
        return dict(core.live_items(self.state, now=self._now()))

    # A memory changes, so it compares and hashes by identity, not by content as a Mapping would.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
