# Every bug here replaces a function of the library on purpose, so mypy is told not to mind.
# mypy: disable-error-code="attr-defined, assignment, method-assign, misc, arg-type, operator"
"""More deliberate bugs for ``serve --bug NAME``: one plausible port mistake each, by the class it belongs to.

A port makes its mistakes at the wire as often as deep inside, so most of
these change what one op does with its arguments or its answer, in the
serving ``Session``; the rest replace one function of the library. Each
names the rule or protocol clause it breaks. ``bugs.BUGS`` lists them all,
and the tests insist that the vectors catch every one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from .. import core, memory
from ..core import (
    basics,
    cache,
    config,
    conversation,
    entries,
    expiry,
    lexical,
    options,
    persistence,
    reads,
    request,
    search,
    state,
    values,
    window,
    working,
)
from ..stores import jsontext
from . import backend, wire

__all__ = ["MISTAKES", "in_core"]

Step = Callable[[dict[str, Any]], Any]
Around = Callable[[Any, dict[str, Any], Step], Any]


def _around(ops: str, change: Around) -> Callable[[], None]:
    """A bug that changes how the session answers the ops named (space-separated): ``change(session, args, proceed)``."""

    def apply() -> None:
        real = backend.Session.step
        names = set(ops.split())

        def step(self: Any, op: str, args: Any) -> Any:
            if op in names and isinstance(args, dict):
                return change(self, dict(args), lambda new: real(self, op, new))
            return real(self, op, args)

        backend.Session.step = step

    return apply


def _finite(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a double's range is not finite (NUM-1)
        return False


def _checks_now(ops: str) -> Callable[[], None]:
    """An op that does not read the clock refuses a bad ``now`` anyway (against the protocol's list of ops that check it)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        if not _finite(session.now):
            raise TypeError("now must be a finite number")
        return proceed(args)

    return _around(ops, change)


def _null_is(ops: str, name: str, value: Any) -> Callable[[], None]:
    """An explicit ``null`` for ``name`` means ``value`` instead of the default (against section 3: null is absent)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        if name in args and args[name] is None:
            if isinstance(value, BaseException):
                raise value
            args[name] = value
        return proceed(args)

    return _around(ops, change)


def _answer(ops: str, rewrite: Callable[[Any, dict[str, Any], Any], Any]) -> Callable[[], None]:
    """A bug in how an op's answer is made: ``rewrite(session, args, answer)``."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        return rewrite(session, args, proceed(args))

    return _around(ops, change)


def _first(ops: str, check: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    """Error precedence: ``check`` runs before the op's own checks, so its error wins when several are bad."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        check(args)
        return proceed(args)

    return _around(ops, change)


#: The core package and its transitions and reads, module by module: a port mistake in one of their
#: helpers is made in every one of them that uses it.
CORE_PARTS = (core, basics, config, entries, conversation, cache, working, reads, search, window, request, persistence)


def in_core(name: str, value: object) -> None:
    """Replace ``name`` in the core package and in each transition or read module that holds it."""
    for module in CORE_PARTS:
        if name in vars(module):
            setattr(module, name, value)


def _replace(owner: object, name: str, value: object) -> Callable[[], None]:
    def apply() -> None:
        if owner is core:
            in_core(name, value)
        else:
            setattr(owner, name, value)

    return apply


# -- error precedence ----------------------------------------------------------------------------


def _data_first(args: dict[str, Any]) -> None:
    data = args.get("data")
    if isinstance(data, float) and not math.isfinite(data):
        raise TypeError("data must be strict JSON")


def _query_first(args: dict[str, Any]) -> None:
    if "query" in args and args["query"] is not None and not isinstance(args["query"], str):
        raise TypeError("query must be a str")


def _key_before_now(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    key = args.get("key")
    if not isinstance(key, str):
        raise TypeError("key must be a str")
    if key == "":
        raise ValueError("key must not be empty")
    return proceed(args)


# -- results -------------------------------------------------------------------------------------


def _fresh(age: float, window: float) -> float:
    return max(0.0, 1 - age / window)


def _fresh_reordered(age: float, window: float) -> float:
    return max(0.0, (window - age) / window)


def _rescored(
    formula: Callable[[float, float, float], float], fresh: Callable[[float, float], float] = _fresh
) -> Callable[[Any, dict[str, Any], Any], Any]:
    """Recall scores recomputed with another evaluation order of REC-2 or RET-1 (a port's arithmetic)."""

    def rewrite(session: Any, args: dict[str, Any], hits: Any) -> Any:
        query = lexical.words(args.get("query") or "")
        window = session.memory.state.config.recency_window
        for hit in hits:
            entry = session.memory.get_entry(hit["entry"]["key"]) if isinstance(hit.get("entry"), dict) else None
            if entry is None or not query:
                continue
            relevance = lexical.relevance(query, entry.words)
            age = max(0, session.now - entry.updated_at)
            hit["score"] = formula(relevance, entry.importance, fresh(age, window))
        return sorted(hits, key=lambda hit: -hit["score"]) if hits else hits

    return rewrite


def _reassociated_rec_2(relevance: float, importance: float, freshness: float) -> float:
    """REC-2 with its product spread out: ``relevance * 0.5 + relevance * importance / 2 + ...``."""
    return relevance * 0.5 + relevance * importance / 2 + lexical.FRESHNESS_BONUS * freshness


def _rec_2(relevance: float, importance: float, freshness: float) -> float:
    return relevance * (0.5 + importance / 2) + lexical.FRESHNESS_BONUS * freshness


def _rec_2_bonus_divided(relevance: float, importance: float, freshness: float) -> float:
    """REC-2 with ``0.05 * freshness`` written ``freshness / 20``: equal in reals, not in doubles."""
    return relevance * (0.5 + importance / 2) + freshness / 20


def _recent_oldest_first(session: Any, args: dict[str, Any], recent: Any) -> Any:
    return list(reversed(recent))


def _delete_always_true(session: Any, args: dict[str, Any], answer: Any) -> Any:
    return True


def _context_by_rank(session: Any, args: dict[str, Any], context: Any) -> Any:
    """The context rendered in rank order (most important first) instead of oldest first (against CTX-3)."""
    entries = sorted(context["entries"], key=lambda e: -e["importance"])
    if entries != context["entries"]:
        context = dict(context, entries=entries)
    return context


# -- turns ---------------------------------------------------------------------------------------


def _counter_reset_by_clear() -> None:
    """``clear`` forgets the chat counter, so the next turn is chat:1 again (against ENT-16)."""
    import attrs

    real = core.clear
    in_core("clear", lambda state: attrs.evolve(real(state), turns=0))


def _largest_turn(counts: Callable[[str], bool]) -> Callable[[], None]:
    """The chat counter reads the tails after ``chat:`` that ``counts`` accepts (against ENT-16's ASCII digits)."""

    def apply() -> None:
        def largest_turn(keys: Any) -> int:
            tails = [key[5:] for key in keys if key.startswith("chat:") and len(key) <= 4005]
            return max((int(tail) for tail in tails if counts(tail)), default=0)

        in_core("largest_turn", largest_turn)
        state.largest_turn = largest_turn

    return apply


# -- numbers -------------------------------------------------------------------------------------


def _number_rule(change: Callable[[str, Any], Any]) -> Callable[[], None]:
    """A bug in the number rule: ``change(name, value)`` returns a replacement, or ``...`` to keep the rule's answer."""

    def apply() -> None:
        real = options.number_option

        def number_option(name: str, value: object, *default: Any, **how: Any) -> Any:
            got = change(name, value)
            return real(name, value, *default, **how) if got is ... else got

        for module in (*CORE_PARTS, options, memory, expiry):
            if hasattr(module, "number_option"):
                module.number_option = number_option

    return apply


def _strings_are_numbers(name: str, value: Any) -> Any:
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return ...
        return number if math.isfinite(number) and (name != "importance" or 0 <= number <= 1) else ...
    return ...


def _bools_are_numbers(name: str, value: Any) -> Any:
    return int(value) if isinstance(value, bool) and name in ("importance", "limit") else ...


def _float_limit_truncated(name: str, value: Any) -> Any:
    if name == "limit" and isinstance(value, float) and math.isfinite(value) and value >= 1 and value != int(value):
        return int(value)
    return ...


def _ttl_zero_expires(name: str, value: Any) -> Any:
    return 1e-9 if name == "ttl" and value == 0 and not isinstance(value, bool) else ...


# -- parsing documents ---------------------------------------------------------------------------


def _repeated_keys_last_wins() -> None:
    """Repeated object keys in a stored text are taken, the last one winning (against PER-13)."""
    jsontext._no_repeats = dict


def _depth_off_by_one() -> None:
    """Nesting one deeper than the limit is read (against PER-13's depth limit)."""
    real = jsontext._nesting
    jsontext._nesting = lambda raw: max(0, real(raw) - 1)


def _control_characters_read() -> None:
    """Raw control characters inside strings of a stored text are read (against PER-13's strict JSON)."""
    import json

    jsontext._parse = lambda text: json.loads(
        text, strict=False, object_pairs_hook=jsontext._no_repeats, parse_constant=jsontext._no_constants
    )


# -- loading -------------------------------------------------------------------------------------


def _duplicate_keeps_first() -> None:
    """Of two entries with one key, the load keeps the first (against PER-6: the later)."""
    from ..core import document

    real = document.parse

    def parse(raw: Any, *, first_seq: int) -> Any:
        if isinstance(raw, dict) and isinstance(raw.get("entries"), list):
            seen: set[Any] = set()
            kept = []
            for item in raw["entries"]:
                key = item.get("key") if isinstance(item, dict) else None
                if isinstance(key, str) and key in seen:
                    continue
                seen.add(key) if isinstance(key, str) else None
                kept.append(item)
            if len(kept) != len(raw["entries"]):
                raw = dict(raw, entries=kept)
        return real(raw, first_seq=first_seq)

    document.parse = parse


def _no_compaction_on_load(session: Any, args: dict[str, Any], answer: Any) -> Any:
    if isinstance(answer, dict) and answer.get("compacted"):
        return dict(answer, compacted=0)
    return answer


def _working_null_kept(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A working memory with data and ``updatedAt: null`` is kept, as if set now (against PER-7, PER-20)."""
    document = args.get("document")
    if isinstance(document, dict) and isinstance(document.get("working"), dict):
        working = document["working"]
        if working.get("updatedAt", 0) is None and working.get("data"):
            args["document"] = dict(document, working=dict(working, updatedAt=session.now))
    return proceed(args)


def _load_saves(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    answer = proceed(args)
    if session.memory._autosave:
        try:
            session.memory.save()
        except Exception:
            pass
    return answer


def _empty_generation_zero(session: Any, args: dict[str, Any], held: Any) -> Any:
    if isinstance(held, dict) and held.get("generation") == 1 and not held.get("entries"):
        return dict(held, generation=0)
    return held


# -- the cache and the working memory ------------------------------------------------------------


def _working_replaces(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    patch = args.get("patch")
    if isinstance(patch, dict):
        session.memory.working.clear()
    return proceed(args)


def _cache_never_expires_by_default(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    if args.get("ttl") is None:
        args["ttl"] = 10**15
    return proceed(args)


# -- batch two: entries, reads, text, contexts, stores, config -----------------------------------


def _stored_but_expired(session: Any, key: Any) -> bool:
    if not isinstance(key, str):
        return False
    entry = session.memory.state.entries.get(key)
    return (
        entry is not None and entry.expires_at is not None and _finite(session.now) and session.now >= entry.expires_at
    )


def _expired_still_there(answer_of: Callable[[Any, Any], Any]) -> Around:
    """A read that does not check expiry: an entry stored but expired answers as if live (against EXP-3)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        if _stored_but_expired(session, args.get("key")):
            return answer_of(session, session.memory.state.entries.get(args["key"]))
        return proceed(args)

    return change


def _read_early(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """The read compares with a clock a millisecond early, so what expires now is still there (against EXP-2, L0-2, L1-2)."""
    if _finite(session.now):
        session.now = session.now - 1
    return proceed(args)


def _overwrite(change_args: Callable[[Any, Any, dict[str, Any]], None]) -> Around:
    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        key = args.get("key")
        old = session.memory.state.entries.get(key) if isinstance(key, str) else None
        if old is not None and _finite(session.now) and (old.expires_at is None or session.now < old.expires_at):
            change_args(session, old, args)
        return proceed(args)

    return change


def _keep_expiry(session: Any, old: Any, args: dict[str, Any]) -> None:
    if args.get("ttl") is None and old.expires_at is not None:
        args["ttl"] = old.expires_at - session.now


def _default_importance(session: Any, old: Any, args: dict[str, Any]) -> None:
    if args.get("importance") is None:
        args["importance"] = 0.5


def _created_is_updated(session: Any, args: dict[str, Any], answer: Any) -> Any:
    return dict(answer, createdAt=answer["updatedAt"]) if isinstance(answer, dict) and "createdAt" in answer else answer


def _negative_n_slices(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    n = args.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n < 0:
        return proceed({"n": 10**6})[:n]
    return proceed(args)


def _limit_zero_all(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    if args.get("limit") == 0 and not isinstance(args.get("limit"), bool):
        args["limit"] = 10**6
    return proceed(args)


def _dropped(name: str) -> Around:
    """The op ignores its argument ``name`` (a port that forgot to pass it on)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        args.pop(name, None)
        return proceed(args)

    return change


def _budget_zero_refused(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    if args.get("token_budget") == 0 and not isinstance(args.get("token_budget"), bool):
        raise ValueError("a budget of 0 holds nothing")
    return proceed(args)


def _omitted_counts_stored(session: Any, args: dict[str, Any], answer: Any) -> Any:
    if isinstance(answer, dict) and "omitted" in answer:
        stored = len(session.memory.state.entries)
        return dict(answer, omitted=stored - len(answer["entries"]))
    return answer


def _missing_is_damage(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    if args.get("missing") is True:
        from ..core.errors import DamagedStoreError

        raise DamagedStoreError("nothing there", "the protocol store")
    return proceed(args)


def _damage_loads_empty(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    from ..core.errors import DamagedStoreError

    try:
        return proceed(args)
    except DamagedStoreError:
        return {"loaded": 0, "dropped": 0, "compacted": 0}


def _on_evict_every_change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """on_evict is called after every remember, with an empty compaction when nothing was dropped (against CMP-3)."""
    before = len(session.evicted)
    answer = proceed(args)
    if len(session.evicted) == before:
        session.evicted.append(values.Compaction(expired=(), evicted=()))
    return answer


def _no_generation_check() -> None:
    """A save that does not check the generation it overwrites (against MW-3)."""
    from ..core import document

    nothing = lambda *args, **kwargs: None
    document.check_generation = nothing
    backend.check_generation = nothing


def _config_ignored(name: str) -> Callable[[], None]:
    """The backend does not pass the config's ``name`` on to the memory (a port that forgot it)."""

    def apply() -> None:
        real = backend.create_memory

        def create(**options: Any) -> Any:
            options.pop(name, None)
            return real(**options)

        backend.create_memory = create

    return apply


def _words_without(step: str) -> Callable[[], None]:
    """REC-1's words with one step left out: ``lower`` or ``marks``."""

    def apply() -> None:
        import unicodedata

        def words(text: str) -> frozenset[str]:
            lowered = text if step == "lower" else text.lower()
            decomposed = unicodedata.normalize("NFD", lowered) if step != "marks" else lowered
            kept = "".join(
                " " if unicodedata.category(c)[0] not in "LNM" else ("" if unicodedata.category(c)[0] == "M" else c)
                for c in decomposed
            )
            return frozenset(kept.split())

        for module in (lexical, values):
            module.words = words
        in_core("words", words)

    return apply


def _estimate_floor() -> None:
    """The estimator rounds down: ``floor(n / 4)`` (against TOK-1)."""
    from ..core import tokens

    tokens._quarter_up = lambda units: units // 4
    tokens.estimate_tokens.tokens_from_measure = tokens._quarter_up
    tokens.estimate_tokens.measure_limit = lambda budget: 4 * math.floor(budget) + 3


def _text_as_json() -> None:
    """A string's text is written as JSON, quotes and all (against TXT-1: a string renders as itself)."""
    import json

    real = values.text_of
    values.text_of = lambda data: json.dumps(data, ensure_ascii=False) if isinstance(data, str) else real(data)


def _json_keys_unsorted() -> None:
    """Data that is not a string renders as JSON with its keys as given, not sorted (against TXT-2)."""
    import json

    real = values.text_of
    values.text_of = lambda data: (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        if isinstance(data, dict) and "role" not in data
        else real(data)
    )


MORE: Mapping[str, Callable[[], None]] = {
    # expiry on every read path
    "has-ignores-expiry": _around("has", _expired_still_there(lambda session, entry: True)),
    "get-ignores-expiry": _around("get", _expired_still_there(lambda session, entry: entry.data)),
    "forget-ignores-expiry": _around("forget", _expired_still_there(lambda session, entry: True)),
    "cache-read-early": _around("cache_get", _read_early),
    "working-read-early": _around("working_get", _read_early),
    "size-read-early": _around("size stats", _read_early),
    # remembering again
    "overwrite-keeps-expiry": _around("remember", _overwrite(_keep_expiry)),
    "overwrite-default-importance": _around("remember", _overwrite(_default_importance)),
    "overwrite-resets-created": _answer("remember", _created_is_updated),
    # reads and their arguments
    "recent-negative-n-slices": _around("get_recent", _negative_n_slices),
    "recall-limit-zero-all": _around("recall", _limit_zero_all),
    "get-default-ignored": _around("get", _dropped("default")),
    "cache-get-default-ignored": _around("cache_get", _dropped("default")),
    "context-must-keep-ignored": _around("get_context", _dropped("must_keep")),
    "context-query-ignored": _around("get_context", _dropped("query")),
    "context-format-ignored": _around("get_context", _dropped("format")),
    "context-only-ignored": _around("get_context", _dropped("only")),
    "messages-facts-share-ignored": _around("get_messages", _dropped("facts_share")),
    "budget-zero-refused": _around("get_context", _budget_zero_refused),
    "context-omitted-counts-stored": _answer("get_context", _omitted_counts_stored),
    "message-overhead-4": _replace(core, "MESSAGE_TOKENS", 4),
    # words and text
    "words-not-lowered": _words_without("lower"),
    "words-keep-marks": _words_without("marks"),
    "estimate-floor": _estimate_floor,
    "string-text-as-json": _text_as_json,
    "json-keys-unsorted": _json_keys_unsorted,
    # compaction callbacks
    "on-evict-every-change": _around("remember", _on_evict_every_change),
    # stores
    "missing-store-is-damage": _around("load", _missing_is_damage),
    "damaged-store-loads-empty": _around("load", _damage_loads_empty),
    "no-generation-check": _no_generation_check,
    # config
    "config-limit-ignored": _config_ignored("limit"),
    "config-recency-window-ignored": _config_ignored("recency_window"),
    "config-working-ttl-ignored": _config_ignored("working_ttl"),
    "config-cache-ttl-ignored": _config_ignored("cache_ttl"),
    "config-tokenizer-ignored": _config_ignored("tokenizer"),
    "config-autosave-ignored": _config_ignored("autosave"),
    "config-shared-ignored": _config_ignored("shared"),
}


# -- batch three: ranking, unknown names, callbacks, load positions --------------------------------


def _matches_by_retention() -> None:
    """A context ranks the query's matches by retention, not by recall score (against CTX-1)."""
    from ..core.retention import retention

    real_context, real_matches = core.context, core._matches

    def by_retention(state: Any, query_words: Any, now: Any, limit: int, among: Any = None) -> Any:
        found = real_matches(state, query_words, now, 10**9, among)
        window = state.config.recency_window
        found.sort(key=lambda pair: (retention(pair[1], now, window), pair[1].updated_at, pair[1].seq), reverse=True)
        return found[:limit]

    def context(*args: Any, **kwargs: Any) -> Any:
        in_core("_matches", by_retention)
        try:
            return real_context(*args, **kwargs)
        finally:
            in_core("_matches", real_matches)

    in_core("context", context)


def _must_keep_by_importance() -> None:
    """Must-keep entries come first by importance, not by retention (against CTX-10)."""

    def kept_first(keep: float, oldest_first: Any, rank: Any, rank_among: Any, now: Any, window: Any) -> Any:
        def kept(entries: Any) -> list[Any]:
            chosen = [e for e in entries if e.importance >= keep]
            chosen.sort(key=lambda e: (e.importance, e.updated_at, e.seq), reverse=True)
            return chosen

        def ranked(_: Any) -> list[Any]:
            return kept(oldest_first()) + [e for e in rank(None) if e.importance < keep]

        def ranked_among(some: Any) -> list[Any]:
            rest: list[Any] = rank_among([e for e in some if e.importance < keep])
            return kept(some) + rest

        return ranked, ranked_among

    in_core("_kept_first", kept_first)


def _unknown_names_ignored() -> None:
    """An argument the op does not have is ignored, not refused (against section 5's E_UNSUPPORTED)."""
    import inspect

    real = backend.Session.step

    def step(self: Any, op: str, args: Any) -> Any:
        handler = getattr(self, f"op_{op}", None)
        if handler is not None and isinstance(args, dict):
            known = set(inspect.signature(handler).parameters)
            args = {name: value for name, value in args.items() if name in known}
        return real(self, op, args)

    backend.Session.step = step


def _unknown_config_ignored() -> None:
    """A config key the backend does not know is ignored, not refused (against section 3)."""
    real = backend.Session.__init__

    def init(self: Any, config: Any, store: Any = None) -> None:
        real(self, {k: v for k, v in config.items() if k in backend.CONFIG_KEYS}, store)

    backend.Session.__init__ = init


def _on_evict_after_save(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """on_evict runs after the autosave, so a save that fails delivers nothing (against WRP-1's order)."""
    from ..core.errors import ConflictError

    before = len(session.evicted)
    try:
        return proceed(args)
    except ConflictError:
        del session.evicted[before:]
        raise


def _duplicate_at_first_place() -> None:
    """Of two entries with one key, the later one's content takes the first one's place (against PER-6's order)."""
    from ..core import document

    real = document.parse

    def parse(raw: Any, *, first_seq: int) -> Any:
        if isinstance(raw, dict) and isinstance(raw.get("entries"), list):
            entries = list(raw["entries"])
            place: dict[Any, int] = {}
            for i, item in enumerate(entries):
                key = item.get("key") if isinstance(item, dict) else None
                if isinstance(key, str) and key in place:
                    entries[place[key]], entries[i] = item, None
                elif isinstance(key, str):
                    place[key] = i
            raw = dict(raw, entries=[item for item in entries if item is not None])
        return real(raw, first_seq=first_seq)

    document.parse = parse


def _text_made_a_string(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A ``text`` that is not a string is written as its JSON, not refused (against section 8)."""
    import json

    if "text" in args and args["text"] is not None and not isinstance(args["text"], str):
        args["text"] = json.dumps(args["text"])
    return proceed(args)


# -- chat messages (MSG-5 .. MSG-9) ----------------------------------------------------------------


def _each_message_a_unit() -> None:
    """Every message is a unit of its own: tool results without their call, a call without its results (against MSG-7)."""

    class Split(core._NewestUnits):
        def _step(self) -> None:
            for item in self._items:
                entry = item[-1]
                if expiry.is_past(entry.expires_at, self._now):
                    continue
                if self.oldest_user is None or item[:3] < self.oldest_user:
                    break
                message = core.chat_message(entry.data)
                if message is not None and message["role"] in core.ROLES:
                    self.units.append(([(entry, message)], self.cost(message)))
                    return
            self._done = True

    in_core("_NewestUnits", Split)


def _unanswered_calls_sent() -> None:
    """Calls still waiting for their results at the end are sent, as if answered (against MSG-7's pending)."""

    class Sent(core._NewestUnits):
        def _step(self) -> None:
            super()._step()
            if self.pending:
                pending, self.pending = self.pending, []
                unit = [(entry, core.chat_message(entry.data)) for entry in pending]
                self.units.insert(0, (unit, sum(self.cost(m) for _, m in unit)))

    in_core("_NewestUnits", Sent)


def _question_not_reserved() -> None:
    """The newest question is not kept first: a small budget returns a request without it (against MSG-9)."""
    core._NewestUnits.through_newest_user = lambda self: (0, 0)


def _history_starts_anywhere() -> None:
    """The history may start at an assistant message or a tool result (against MSG-9)."""
    in_core("_from_a_user", lambda units: units)


def _system_prompt_uncounted(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """The app's system prompt is put in front of what the budget chose, uncounted (against MSG-2, MSG-9)."""
    system = args.pop("system", None)
    answer = proceed(args)
    if isinstance(system, str):
        first = answer["messages"][0] if answer["messages"] else None
        if first is not None and first["role"] == "system":
            first["content"] = system + "\n\n" + first["content"]
        else:
            answer["messages"].insert(0, {"role": "system", "content": system})
    return answer


def _any_role() -> None:
    """add_turn and add_message take any non-empty role, as turns once did (against MSG-5)."""
    real = core.check_role

    def lenient(role: Any, where: str = "role") -> Any:
        if isinstance(role, str) and role and role not in core.ROLES:
            return role
        return real(role, where)

    in_core("check_role", lenient)
    core.chat.check_role = lenient


def _orphan_results_taken() -> None:
    """A tool result for a call made earlier in the history is taken even when no call is open (against MSG-6)."""
    real = core.check_messages

    def lenient(messages: Any, open_calls: Any) -> Any:
        ids = {m.get("tool_call_id") for m in messages if isinstance(m, dict)} if isinstance(messages, list) else set()
        return real(messages, set(open_calls or ()) | ids)

    in_core("check_messages", lenient)


def _only_first(args: dict[str, Any]) -> None:
    only = args.get("only")
    if only is not None:
        if not isinstance(only, str):
            raise TypeError("only must be a str")
        if only not in core.KINDS:
            raise ValueError("only must be facts or turns")


#: The persisted changes: with shared on, each is a transaction of its own (MW-6).
_PERSISTED = "remember add_turn forget clear compact working_set working_clear"


def _reload_before_checks(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A shared change reloads before it checks its arguments, and the reload stays when it is refused
    (against section 3 and WRP-1): the store's error wins, and a refused step has changed the memory."""
    if not session.config.get("shared"):
        return proceed(args)
    with session.memory.transaction():
        return proceed(args)


def _now_as_double() -> None:
    """Every ``now`` read as a double, as ``JSON.parse`` reads it (against section 3: an integer now is exact)."""
    real = backend.Session.step

    def step(self: Any, op: str, args: Any) -> Any:
        if isinstance(self.now, int) and not isinstance(self.now, bool):
            self.now = float(self.now)
        return real(self, op, args)

    backend.Session.step = step


def _nan_as_null(session: Any, args: dict[str, Any], answer: Any) -> Any:
    """NaN and the infinities in an answer written as ``null`` (against section 4: a $number)."""

    def nulled(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: nulled(item) for key, item in value.items()}
        if isinstance(value, list):
            return [nulled(item) for item in value]
        return value

    return nulled(answer)


def _long_integers_read() -> None:
    """A stored text's integer literal of more than 4,300 digits is read as a number (against PER-13: damage)."""

    def lenient(text: str) -> Any:
        return json.loads(
            text,
            object_pairs_hook=jsontext._no_repeats,
            parse_constant=jsontext._no_constants,
            parse_int=wire.integer_of,
        )

    jsontext._parse = lenient
    held = backend.ProtocolStore.held

    def shown(self: Any) -> Any:
        answer = held(self)
        if isinstance(answer, dict) and set(answer) == {"$text"}:
            try:
                return lenient(answer["$text"])  # strict but for the long integers
            except ValueError:
                pass
        return answer

    backend.ProtocolStore.held = shown


#: The mistakes that pin the four places the text and the reference once parted (get_context's order,
#: a shared reload before the checks, an integer now, numbers JSON cannot write).
FOURTH: Mapping[str, Callable[[], None]] = {
    "only-checked-first": _first("get_context", _only_first),
    "shared-reload-before-checks": _around(_PERSISTED, _reload_before_checks),
    "now-read-as-double": _now_as_double,
    "nan-answered-null": _answer("get cache_get", _nan_as_null),
    "long-integer-text-read": _long_integers_read,
}


THIRD: Mapping[str, Callable[[], None]] = {
    "matches-by-retention": _matches_by_retention,
    "must-keep-by-importance": _must_keep_by_importance,
    "unknown-arguments-ignored": _unknown_names_ignored,
    "unknown-config-ignored": _unknown_config_ignored,
    "on-evict-after-save": _around("remember add_turn", _on_evict_after_save),
    "duplicate-at-first-place": _duplicate_at_first_place,
    "stored-text-stringified": _around("stored load", _text_made_a_string),
    # chat messages
    "tool-pairs-split": _each_message_a_unit,
    "unanswered-calls-sent": _unanswered_calls_sent,
    "question-dropped": _question_not_reserved,
    "history-starts-anywhere": _history_starts_anywhere,
    "system-prompt-uncounted": _around("get_messages", _system_prompt_uncounted),
    "any-role-taken": _any_role,
    "orphan-tool-result-taken": _orphan_results_taken,
}


# -- batch five: the choices RULES.md leaves a porter, read rule by rule -----------------------------


def _raises_first(ops: str, error: Callable[[dict[str, Any]], BaseException | None]) -> Callable[[], None]:
    """Error precedence: ``error(args)`` is raised before the op's own checks, now included (when it is not None)."""

    def check(args: dict[str, Any]) -> None:
        found = error(args)
        if found is not None:
            raise found

    return _first(ops, check)


def _role_value_first(args: dict[str, Any]) -> BaseException | None:
    role = args.get("role")
    if isinstance(role, str) and role not in ("system", "developer", "user", "assistant"):
        return ValueError("role must be a chat role")
    return None


def _cache_value_first(args: dict[str, Any]) -> BaseException | None:
    value = args.get("value")
    return TypeError("value must be strict JSON") if isinstance(value, float) and not math.isfinite(value) else None


def _separator_first(args: dict[str, Any]) -> BaseException | None:
    separator = args.get("separator")
    return TypeError("separator must be a str") if separator is not None and not isinstance(separator, str) else None


def _system_first(args: dict[str, Any]) -> BaseException | None:
    system = args.get("system")
    return TypeError("system must be a str") if system is not None and not isinstance(system, str) else None


def _message_role_type_first(args: dict[str, Any]) -> BaseException | None:
    """A message's role is type-checked before its field names (against MSG-5's order of checks)."""
    batch = args.get("messages") if "messages" in args else [args.get("message")]
    for message in batch if isinstance(batch, list) else ():
        if isinstance(message, dict) and message.get("role") is not None and not isinstance(message["role"], str):
            return TypeError("role must be a str")
    return None


def _cache_key_before_now(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    key = args.get("key")
    if not isinstance(key, str):
        raise TypeError("key must be a str")
    if key == "":
        raise ValueError("key must not be empty")
    return proceed(args)


def _missing_refused(name: str, error: BaseException) -> Around:
    """A required argument left out is refused with ``error`` instead of being checked as null (against section 3)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        if args.get(name) is None:
            raise error
        return proceed(args)

    return change


def _message_field(check: Callable[[dict[str, Any]], BaseException | None]) -> Around:
    """A mistake in checking each message of ``add_message`` or ``add_messages`` (MSG-5)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        batch = args.get("messages") if "messages" in args else [args.get("message")]
        for message in batch if isinstance(batch, list) else ():
            if isinstance(message, dict):
                found = check(message)
                if found is not None:
                    raise found
        return proceed(args)

    return change


def _null_name_refused(message: dict[str, Any]) -> BaseException | None:
    return ValueError("name must not be null") if "name" in message and message["name"] is None else None


def _empty_calls_refused(message: dict[str, Any]) -> BaseException | None:
    return ValueError("tool_calls must not be empty") if message.get("tool_calls") == [] else None


def _call_type_required(message: dict[str, Any]) -> BaseException | None:
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and call.get("type") is None:
            return ValueError("a call's type is required")
    return None


def _call_arguments_required(message: dict[str, Any]) -> BaseException | None:
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and function.get("arguments") is None:
            return TypeError("a call's arguments are required")
    return None


def _body(join_parts: str, skip_empty_text: bool) -> Callable[[], None]:
    """TXT-4's text of a message with another join of its content parts, or an empty text kept as a piece."""

    def apply() -> None:
        from ..core import chat, jsondata, prompt, values

        def body_of(message: Any) -> str:
            content = message.get("content")
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                text = join_parts.join(part["text"] for part in content if part.get("type") == "text")
            else:
                text = ""
            calls = [f"{c['function']['name']}({c['function']['arguments']})" for c in message.get("tool_calls", ())]
            if skip_empty_text:
                return " ".join([text, *calls]) if text and calls else text or " ".join(calls)
            return " ".join([text, *calls]) if calls else text

        for module in (*CORE_PARTS, chat, jsondata, prompt, values):
            if hasattr(module, "body_of"):
                module.body_of = body_of

    return apply


def _facts_share_unfloored() -> None:
    """The turns' room is ``budget - budget * facts_share``, not floored (against MSG-2's ``floor``)."""
    import types

    unfloored = types.SimpleNamespace(**{**vars(math), "floor": lambda x: x})
    in_core("math", unfloored)


def _shared_reads_reload(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A read on a shared memory reloads what others saved first (against section 8: a read does not reload)."""
    if session.config.get("shared") and _finite(session.now):
        with session.memory.transaction():
            pass
    return proceed(args)


def _load_keeps_generation(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A load does not take the store's generation: the next save conflicts (against section 8 and MW-1)."""
    before = session.memory.generation
    answer = proceed(args)
    session.memory._plumbing.generation = before
    return answer


def _words_by(transform: Callable[[str], str]) -> Callable[[], None]:
    """REC-1's words of ``transform(text)`` instead of ``text`` (a step a port does otherwise)."""

    def apply() -> None:
        real = lexical.words

        def words(text: str) -> frozenset[str]:
            return real(transform(text))

        for module in (lexical, values):
            module.words = words
        in_core("words", words)

    return apply


def _casefolded(text: str) -> str:
    return text.casefold()


def _nfkd(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text)


def _sigma_always_medial(text: str) -> str:
    return text.replace("Σ", "σ")


def _words_underscore_joins() -> None:
    """Words are runs of ``\\w`` (letters, digits and the underscore), not of L* and N* (against REC-1)."""
    real = lexical.words

    def words(text: str) -> frozenset[str]:
        # U+01C2 is a letter (Lo) that lower() and NFD leave alone: it stands for the underscore in a word.
        return real(text.replace("_", "\u01c2")) if "_" in text else real(text)

    for module in (lexical, values):
        module.words = words
    in_core("words", words)


def _context_matches_capped() -> None:
    """A context ranks at most 10 matches, the recall default, then the rest by retention (against CTX-1)."""
    real_context, real_matches = core.context, core._matches

    def capped(state: Any, query_words: Any, now: Any, limit: int, among: Any = None) -> Any:
        return real_matches(state, query_words, now, min(limit, 10), among)

    def context(*args: Any, **kwargs: Any) -> Any:
        in_core("_matches", capped)
        try:
            return real_context(*args, **kwargs)
        finally:
            in_core("_matches", real_matches)

    in_core("context", context)


def _must_keep_strict() -> None:
    """Must-keep is importance > t, not >= t (against CTX-10)."""
    real = core._kept_first

    def kept_first(keep: float, *args: Any) -> Any:
        return real(math.nextafter(keep, math.inf), *args)

    in_core("_kept_first", kept_first)


def _turn_counter_from_stored() -> None:
    """The next turn is one past the largest ``chat:N`` stored now: a forgotten newest turn's N is used again (against ENT-16)."""
    real = core._add_message

    def add(state: Any, message: Any, **kwargs: Any) -> Any:
        import attrs

        from ..core import state as state_module

        return real(attrs.evolve(state, turns=state_module.largest_turn(state.entries)), message, **kwargs)

    in_core("_add_message", add)


def _working_idle_strict() -> None:
    """The working memory is idle once ``now - updated_at > working_ttl``, not ``>=`` (against L1-2)."""

    def idle(state: Any, now: Any) -> bool:
        updated_at = state.working.updated_at
        return updated_at is not None and now - updated_at > state.config.working_ttl

    in_core("_working_idle", idle)


def _working_idle_merges() -> None:
    """A set after the working memory went idle merges into the old data (against L1-2: into ``{}``)."""
    import attrs

    from ..core.values import Working

    real = core.working_set

    def working_set(state: Any, patch: Any, *, now: Any) -> Any:
        after = real(state, patch, now=now)
        if isinstance(patch, dict) and state.working.updated_at is not None and after.working.data == dict(patch):
            merged = {**state.working.data, **after.working.data}
            return attrs.evolve(after, working=Working(merged, now))
        return after

    in_core("working_set", working_set)


def _expired_newest_first(session: Any, args: dict[str, Any], answer: Any) -> Any:
    """A compaction lists its expired entries newest first (against CMP-2: oldest first)."""
    if isinstance(answer, dict) and isinstance(answer.get("expired"), list):
        return dict(answer, expired=list(reversed(answer["expired"])))
    return answer


def _load_clears_cache(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A load empties the L0 cache too (against PER-3: the cache is kept)."""
    answer = proceed(args)
    session.memory.cache.clear()
    return answer


def _cache_delete_expired_true(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``cache_delete`` answers true for an item stored but expired (against L0-2: a live item)."""
    key = args.get("key")
    item = session.memory.state.cache.get(key) if isinstance(key, str) else None
    answer = proceed(args)
    return True if item is not None and answer is False else answer


def _forget_expired_removes(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``forget`` of an expired key removes it at once, unreported (against EXP-5: the next compaction reports it)."""
    import attrs

    answer = proceed(args)
    key = args.get("key")
    if answer is False and _stored_but_expired(session, key):
        memory = session.memory
        state = memory.state
        memory._plumbing.state = attrs.evolve(state, entries={k: e for k, e in state.entries.items() if k != key})
    return answer


def _huge(value: Any) -> bool:
    """An int that converts to no finite double (``10**400``): not finite by NUM-1."""
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _huge_kept(*names: str) -> Callable[[str, Any], Any]:
    """The number rule takes an int beyond a double's range as the exact integer it is (against NUM-1)."""

    def change(name: str, value: Any) -> Any:
        return value if name in names and _huge(value) and value > 0 else ...

    return change


def _integral_float_count_refused(name: str, value: Any) -> Any:
    """An integral float count (``2.0``) is refused for the default (against NUM-2: ``5.0`` is ``5``)."""
    if name in ("recall_limit", "recent_n", "limit") and isinstance(value, float) and value.is_integer():
        return options.NUMBER_RULES[name].default
    return ...


def _clamped(*names: str) -> Callable[[str, Any], Any]:
    """An out-of-range share or threshold is clamped into [0, 1] instead of defaulted (against NUM-1)."""

    def change(name: str, value: Any) -> Any:
        if name in names and _finite(value) and not 0 <= value <= 1:
            return min(1.0, max(0.0, float(value)))
        return ...

    return change


def _float_count_floored(name: str, value: Any) -> Any:
    """A fractional count (``2.5``) is floored instead of refused for the default (against NUM-2)."""
    if name in ("recall_limit", "recent_n") and isinstance(value, float) and _finite(value) and value >= 0:
        return math.floor(value) if not value.is_integer() else ...
    return ...


def _budget_infinity_taken(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """An infinite budget is taken as no limit (against CTX-5: a finite number >= 0)."""
    budget = args.get("token_budget")
    if isinstance(budget, float) and budget == math.inf:
        args["token_budget"] = 10**15
    return proceed(args)


def _loaded_field(change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Callable[[], None]:
    """A load that repairs what PER-6 drops: ``change(entry)`` returns the entry to load instead, or None."""

    def apply() -> None:
        from ..core import document

        real = document.parse

        def parse(raw: Any, *, first_seq: int) -> Any:
            if isinstance(raw, dict) and isinstance(raw.get("entries"), list):
                entries = [(change(item) or item) if isinstance(item, dict) else item for item in raw["entries"]]
                raw = dict(raw, entries=entries)
            return real(raw, first_seq=first_seq)

        document.parse = parse

    return apply


def _bool_importance_read(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A stored importance ``true``/``false`` read as 1 and 0 (against PER-6: bool is no number)."""
    importance = entry.get("importance")
    return dict(entry, importance=int(importance)) if isinstance(importance, bool) else None


def _huge_time_read(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A stored ``createdAt``/``updatedAt`` beyond a double's range read as the largest double (against PER-6)."""
    fixed = {name: 1.7976931348623157e308 for name in ("createdAt", "updatedAt") if _huge(entry.get(name))}
    return dict(entry, **fixed) if fixed else None


def _config_first_memory_only(name: str) -> Callable[[], None]:
    """The config's ``name`` reaches memory 1 only; memory 2 and on get the default (against section 8: one config)."""

    def apply() -> None:
        real = backend.Session.select

        def select(self: Any, number: object) -> None:
            if number != 1 and number not in self.memories and name in self.config:
                kept = self.config
                self.config = {key: value for key, value in kept.items() if key != name}
                try:
                    real(self, number)
                finally:
                    self.config = kept
                return
            real(self, number)

        backend.Session.select = select

    return apply


def _evictions_shared() -> None:
    """Every memory of a case records its evictions in one list (against section 8: each its own)."""
    real = backend.Session.select

    def select(self: Any, number: object) -> None:
        real(self, number)
        first = self.memories[1][1]
        if self.evicted is not first:
            first.extend(self.evicted)
            self.memories[number] = (self.memory, first)
            self.evicted = first
            self.memory._plumbing.on_evict = first.append

    backend.Session.select = select


def _other_memories_made_first() -> None:
    """Memory 2 is made with the case, so it loads the empty store (against section 8: at its first step)."""
    real = backend.Session.__init__

    def init(self: Any, config: Any, store: Any = None) -> None:
        real(self, config, store)
        self.select(2)
        self.select(1)

    backend.Session.__init__ = init


FIFTH: Mapping[str, Callable[[], None]] = {
    # error precedence, null and missing arguments
    "turn-role-value-first": _raises_first("add_turn", _role_value_first),
    "cache-value-before-key": _raises_first("cache_put", _cache_value_first),
    "separator-before-budget": _raises_first("get_context", _separator_first),
    "system-before-budget": _raises_first("get_messages", _system_first),
    "message-role-type-first": _raises_first("add_message add_messages", _message_role_type_first),
    "cache-key-before-now": _around("cache_get cache_put cache_delete", _cache_key_before_now),
    "null-recall-query-empty": _null_is("recall", "query", ""),
    "null-facts-share-zero": _null_is("get_messages", "facts_share", 0),
    "null-must-keep-zero": _null_is("get_context get_messages", "must_keep", 0),
    "null-system-refused": _null_is("get_messages", "system", TypeError("system")),
    "null-cache-ttl-refused": _null_is("cache_put", "ttl", TypeError("ttl")),
    "missing-data-refused": _around("remember", _missing_refused("data", TypeError("data is required"))),
    "missing-budget-type-error": _around(
        "get_context get_messages", _missing_refused("token_budget", TypeError("token_budget is required"))
    ),
    # numbers and big integers
    "huge-limit-kept": _number_rule(_huge_kept("limit")),
    "huge-ttl-kept": _number_rule(_huge_kept("ttl")),
    "huge-window-kept": _number_rule(_huge_kept("recency_window", "working_ttl", "cache_ttl")),
    "integral-float-count-refused": _number_rule(_integral_float_count_refused),
    "facts-share-clamped": _number_rule(_clamped("facts_share")),
    "float-count-floored": _number_rule(_float_count_floored),
    "budget-infinity-taken": _around("get_context get_messages", _budget_infinity_taken),
    # persistence and loads
    "loaded-bool-importance-read": _loaded_field(_bool_importance_read),
    "loaded-huge-time-read": _loaded_field(_huge_time_read),
    # messages
    "message-null-name-refused": _around("add_message add_messages", _message_field(_null_name_refused)),
    "empty-tool-calls-refused": _around("add_message add_messages", _message_field(_empty_calls_refused)),
    "call-type-required": _around("add_message add_messages", _message_field(_call_type_required)),
    "call-arguments-required": _around("add_message add_messages", _message_field(_call_arguments_required)),
    "content-parts-spaced": _body(" ", True),
    "empty-text-a-piece": _body("", False),
    "facts-share-unfloored": _facts_share_unfloored,
    # sessions
    "shared-reads-reload": _around("size get has recall get_recent stats get_context", _shared_reads_reload),
    "load-keeps-generation": _around("load", _load_keeps_generation),
    "shared-first-memory-only": _config_first_memory_only("shared"),
    "autosave-first-memory-only": _config_first_memory_only("autosave"),
    "evictions-shared-by-memories": _evictions_shared,
    "second-memory-made-first": _other_memories_made_first,
    # Unicode words
    "words-casefolded": _words_by(_casefolded),
    "words-nfkd": _words_by(_nfkd),
    "words-no-final-sigma": _words_by(_sigma_always_medial),
    "words-underscore-joins": _words_underscore_joins,
    # context
    "context-matches-capped": _context_matches_capped,
    "must-keep-strict": _must_keep_strict,
    # the chat counter, the working memory, expiry, compaction, cache
    "turn-counter-from-stored": _turn_counter_from_stored,
    "working-idle-strict": _working_idle_strict,
    "working-idle-merges": _working_idle_merges,
    "expired-newest-first": _answer("compact", _expired_newest_first),
    "load-clears-cache": _around("load", _load_clears_cache),
    "cache-delete-expired-true": _around("cache_delete", _cache_delete_expired_true),
    "forget-expired-removes": _around("forget", _forget_expired_removes),
}


# -- batch six: more of the choices, in the other classes ------------------------------------------


def _text_of(change: Callable[[Any, Callable[[Any], str]], str | None]) -> Callable[[], None]:
    """TXT-1 .. TXT-4 with one mistake: ``change(data, real)`` returns the text, or None to keep the rule's."""

    def apply() -> None:
        real = values.text_of

        def text_of(data: Any) -> str:
            got = change(data, real)
            return real(data) if got is None else got

        values.text_of = text_of

    return apply


def _empty_role_a_message(data: Any, real: Callable[[Any], str]) -> str | None:
    """``{"role": "", "content": ...}`` renders as a message with an empty role (against TXT-4: the role not empty)."""
    if type(data) is dict and set(data) == {"role", "content"} and data["role"] == "" and type(data["content"]) is str:
        return f": {data['content']}"
    return None


def _extra_keys_a_message(data: Any, real: Callable[[Any], str]) -> str | None:
    """An object with role, content and more keys renders as a message (against TXT-4: exactly those keys)."""
    if type(data) is dict and len(data) > 2 and type(data.get("role")) is str and data["role"]:
        if type(data.get("content")) is str and real(data).startswith("{"):
            return f"{data['role']}: {data['content']}"
    return None


def _negative_zero_kept(data: Any, real: Callable[[Any], str]) -> str | None:
    """``-0.0`` is written ``-0`` (against TXT-2: ``0``, as ``Number.prototype.toString`` writes it)."""
    mark = "negative-zero-5f3a"
    found = False

    def marked(value: Any) -> Any:
        nonlocal found
        if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
            found = True
            return mark
        if isinstance(value, dict):
            return {key: marked(item) for key, item in value.items()}
        if isinstance(value, list):
            return [marked(item) for item in value]
        return value

    if isinstance(data, str):
        return None
    text = real(marked(data))
    return text.replace(f'"{mark}"', "-0") if found else None


def _words_of(change: Callable[[str], str]) -> Callable[[], None]:
    """REC-1's words of ``change(text)``, the character classes a port's regular expression draws otherwise."""
    return _words_by(change)


def _other_numbers_separate(text: str) -> str:
    """Only decimal digits (Nd) count as N*: ``²`` (No) and ``Ⅻ`` (Nl) separate words (against REC-1)."""
    import unicodedata

    return "".join(" " if unicodedata.category(c) in ("No", "Nl") else c for c in text)


def _spacing_marks_separate(text: str) -> str:
    """Only nonspacing marks (Mn) are removed; spacing and enclosing marks (Mc, Me) separate words (against REC-1)."""
    import unicodedata

    return "".join(" " if unicodedata.category(c) in ("Mc", "Me") else c for c in unicodedata.normalize("NFD", text))


def _key_not_searched(session: Any, args: dict[str, Any], hits: Any) -> Any:
    """Recall reads the words of the data's text only, not of the key (against REC-2: key and text)."""
    query = lexical.words(args["query"]) if isinstance(args.get("query"), str) else frozenset()
    if not query or not isinstance(hits, list):
        return hits
    window = session.memory.state.config.recency_window
    kept = []
    for hit in hits:
        entry = session.memory.get_entry(hit["entry"]["key"])
        relevance = lexical.relevance(query, lexical.words(entry.text))
        if relevance > 0:
            freshness = max(0.0, 1 - max(0, session.now - entry.updated_at) / window)
            kept.append(dict(hit, score=lexical.score(relevance, entry.importance, freshness)))
    return sorted(kept, key=lambda hit: -hit["score"])


def _relevance_with_repeats(session: Any, args: dict[str, Any], hits: Any) -> Any:
    """Relevance counts every query word, a repeated one each time (against REC-2: distinct words)."""
    query = args.get("query")
    if not isinstance(query, str) or not isinstance(hits, list):
        return hits
    spoken = [word for part in query.split() for word in sorted(lexical.words(part))]
    if len(spoken) == len(set(spoken)):
        return hits
    window = session.memory.state.config.recency_window
    for hit in hits:
        entry = session.memory.get_entry(hit["entry"]["key"])
        relevance = sum(word in entry.words for word in spoken) / len(spoken)
        freshness = max(0.0, 1 - max(0, session.now - entry.updated_at) / window)
        hit["score"] = lexical.score(relevance, entry.importance, freshness)
    return sorted(hits, key=lambda hit: -hit["score"])


def _expired_dropped_on_load() -> None:
    """A load leaves out the entries already expired at its ``now`` and counts them dropped (against PER-12)."""
    real = core.from_document

    def from_document(state: Any, document: Any, *args: Any, now: Any = None, **kwargs: Any) -> Any:
        if isinstance(document, dict) and isinstance(document.get("entries"), list) and _finite(now):
            kept = [
                item
                for item in document["entries"]
                if not (isinstance(item, dict) and _finite(item.get("expiresAt")) and now >= item["expiresAt"])
            ]
            document = dict(document, entries=kept)
        return real(state, document, *args, now=now, **kwargs)

    in_core("from_document", from_document)


def _save_live_only(session: Any, args: dict[str, Any], answer: Any) -> Any:
    """A save writes the live entries only (against PER-12: expired entries still stored are saved too)."""
    if isinstance(answer, dict) and isinstance(answer.get("entries"), list) and _finite(session.now):
        live = [e for e in answer["entries"] if e.get("expiresAt") is None or session.now < e["expiresAt"]]
        if len(live) != len(answer["entries"]):
            return dict(answer, entries=live)
    return answer


def _working_empty_set_unstamped(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``working_set({})`` changes nothing, not even the time of the last set (against L1-1: it stamps now)."""
    if args.get("patch") == {}:
        return None
    return proceed(args)


def _working_clear_keeps_time() -> None:
    """``working_clear`` empties the data but keeps ``updatedAt`` (against L1-3: None)."""
    import attrs

    from ..core.values import Working

    def working_clear(state: Any) -> Any:
        return attrs.evolve(state, working=Working({}, state.working.updated_at))

    in_core("working_clear", working_clear)


def _turns_not_counted_on_load() -> None:
    """A load does not raise the chat counter: the next turn takes the first free ``chat:N`` (against ENT-16)."""
    import attrs

    real = core.from_document

    def from_document(state: Any, *args: Any, **kwargs: Any) -> Any:
        result = real(state, *args, **kwargs)
        loaded = result[0] if isinstance(result, tuple) else result
        fixed = attrs.evolve(loaded, turns=state.turns)
        return (fixed, *result[1:]) if isinstance(result, tuple) else fixed

    in_core("from_document", from_document)


def _ttl_below_one_refused(name: str, value: Any) -> Any:
    """A ttl below 1 ms is refused as no expiry (against NUM-3: any number > 0)."""
    return None if name == "ttl" and _finite(value) and 0 < value < 1 else ...


def _empty_text_counts_zero(session: Any, args: dict[str, Any], answer: Any) -> Any:
    """A context that holds nothing reports 0 tokens, not the tokenizer's count of the empty text (against CTX-4)."""
    if isinstance(answer, dict) and answer.get("text") == "" and "tokens" in answer:
        return dict(answer, tokens=0)
    return answer


def _omitted_counts_other_kind(session: Any, args: dict[str, Any], answer: Any) -> Any:
    """With ``only``, omitted counts the entries of the other kind too (against CTX-11)."""
    if isinstance(answer, dict) and args.get("only") is not None and "omitted" in answer:
        return dict(answer, omitted=session.memory.size() - len(answer["entries"]))
    return answer


def _saves_after(when: Callable[[Any, Any], bool]) -> Around:
    """An autosaving memory saves after the op also when ``when(session, answer)`` (against PER-11, L0-2)."""

    def change(session: Any, args: dict[str, Any], proceed: Step) -> Any:
        answer = proceed(args)
        if session.memory._autosave and when(session, answer):
            session.memory.save()
        return answer

    return change


def _empty_clear_unsaved(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``clear`` of a memory that holds nothing changes and saves nothing (against PER-11: every clear is saved)."""
    state = session.memory.state
    if not state.entries and not state.working.data:
        return None
    return proceed(args)


def _document_over_text(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``stored``/``load`` with both a document and a text put the document (against section 8: text wins)."""
    if "document" in args and args.get("text") is not None and args.get("missing") is not True:
        args.pop("text")
    return proceed(args)


def _empty_batch_refused(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``add_messages`` of an empty list is refused (against MSG-6: a batch of nothing stores nothing)."""
    if args.get("messages") == []:
        raise ValueError("messages must not be empty")
    return proceed(args)


def _zero_is_absent(*names: str) -> Callable[[str, Any], Any]:
    """A zero is taken for "not given" (``value || default``), so the default is used (against NUM-1: zero is valid)."""

    def change(name: str, value: Any) -> Any:
        if name in names and _finite(value) and value == 0:
            return options.NUMBER_RULES[name].default
        return ...

    return change


def _cache_null_is_missing(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """A cached null answers the default, as a missing item does (``value ?? default``; against L0-1, ENT-7)."""
    answer = proceed(args)
    key = args.get("key")
    if answer is None and isinstance(key, str) and key in session.memory.state.cache:
        return args.get("default")
    return answer


def _working_deep_merge(session: Any, args: dict[str, Any], proceed: Step) -> Any:
    """``working_set`` merges nested objects key by key instead of replacing them (against L1-1: a shallow merge)."""
    patch = args.get("patch")
    if isinstance(patch, dict) and _finite(session.now):
        current = session.memory.working.get()

        def merged(old: Any, new: Any) -> Any:
            if isinstance(old, dict) and isinstance(new, dict):
                return {**old, **{key: merged(old.get(key), value) for key, value in new.items()}}
            return new

        args["patch"] = {key: merged(current.get(key), value) for key, value in patch.items()}
    return proceed(args)


def _future_freshness(session: Any, args: dict[str, Any], hits: Any) -> Any:
    """Freshness of an entry updated after now is above 1: ``age`` not floored at 0 (against RET-1)."""
    query = lexical.words(args["query"]) if isinstance(args.get("query"), str) else frozenset()
    if not query or not isinstance(hits, list):
        return hits
    window = session.memory.state.config.recency_window
    for hit in hits:
        entry = session.memory.get_entry(hit["entry"]["key"])
        freshness = max(0.0, 1 - (session.now - entry.updated_at) / window)
        hit["score"] = lexical.score(lexical.relevance(query, entry.words), entry.importance, freshness)
    return sorted(hits, key=lambda hit: -hit["score"])


SIXTH: Mapping[str, Callable[[], None]] = {
    # text
    "empty-role-a-message": _text_of(_empty_role_a_message),
    "extra-keys-a-message": _text_of(_extra_keys_a_message),
    "negative-zero-kept": _text_of(_negative_zero_kept),
    # Unicode words
    "words-other-numbers-separate": _words_of(_other_numbers_separate),
    "words-spacing-marks-separate": _words_of(_spacing_marks_separate),
    # recall
    "recall-key-not-searched": _answer("recall", _key_not_searched),
    "relevance-counts-repeats": _answer("recall", _relevance_with_repeats),
    # persistence and loads
    "load-drops-expired": _expired_dropped_on_load,
    "save-live-only": _answer("save", _save_live_only),
    "forget-miss-autosaves": _around("forget", _saves_after(lambda session, answer: answer is False)),
    "compact-nothing-autosaves": _around(
        "compact", _saves_after(lambda session, answer: not answer["expired"] and not answer["evicted"])
    ),
    "cache-changes-autosave": _around("cache_put cache_delete cache_clear", _saves_after(lambda session, answer: True)),
    "empty-clear-unsaved": _around("clear", _empty_clear_unsaved),
    "document-over-text": _around("stored load", _document_over_text),
    # messages
    "empty-batch-refused": _around("add_messages", _empty_batch_refused),
    # the working memory, the chat counter
    "working-empty-set-unstamped": _around("working_set", _working_empty_set_unstamped),
    "working-clear-keeps-time": _working_clear_keeps_time,
    "turns-not-counted-on-load": _turns_not_counted_on_load,
    # numbers, context
    "ttl-below-one-refused": _number_rule(_ttl_below_one_refused),
    "importance-zero-default": _number_rule(_zero_is_absent("importance", "turn_importance")),
    "count-zero-default": _number_rule(_zero_is_absent("recent_n", "recall_limit")),
    "shares-zero-ignored": _number_rule(_zero_is_absent("facts_share", "must_keep")),
    "cache-null-is-missing": _around("cache_get", _cache_null_is_missing),
    "working-deep-merge": _around("working_set", _working_deep_merge),
    "future-freshness-over-one": _answer("recall", _future_freshness),
    "empty-context-zero-tokens": _answer("get_context", _empty_text_counts_zero),
    "only-omitted-counts-all": _answer("get_context", _omitted_counts_other_kind),
}


#: Every mistake by its flag name, grouped as the classes the vectors must catch.
MISTAKES: Mapping[str, Callable[[], None]] = {
    # error precedence: which error wins when several arguments are bad
    "data-error-first": _first("remember", _data_first),
    "query-error-first": _first("get_context get_messages", _query_first),
    "key-before-now": _around("get has forget", _key_before_now),
    # null arguments: null is the default, for every optional argument
    "null-importance-refused": _null_is("remember add_turn", "importance", TypeError("importance")),
    "null-limit-zero": _null_is("recall", "limit", 0),
    "null-n-zero": _null_is("get_recent", "n", 0),
    "null-separator-empty": _null_is("get_context", "separator", ""),
    "null-query-refused": _null_is("get_context", "query", TypeError("query")),
    "null-ttl-refused": _null_is("remember", "ttl", TypeError("ttl")),
    "null-budget-zero": _null_is("get_context", "token_budget", 0),
    # which ops check now
    "clear-checks-now": _checks_now("clear"),
    "save-checks-now": _checks_now("save"),
    "stored-checks-now": _checks_now("stored"),
    "evictions-checks-now": _checks_now("evictions"),
    "cache-clear-checks-now": _checks_now("cache_clear"),
    "working-clear-checks-now": _checks_now("working_clear"),
    # the chat counter
    "turn-counter-reset-by-clear": _counter_reset_by_clear,
    "turn-leading-zeros": _largest_turn(lambda tail: tail.isascii() and tail.isdigit() and not tail.startswith("0")),
    "turn-unicode-digits": _largest_turn(str.isdigit),
    # floating-point evaluation order
    "rec-2-reassociated": _answer("recall", _rescored(_reassociated_rec_2)),
    "ret-1-reordered": _answer("recall", _rescored(_rec_2, _fresh_reordered)),
    "rec-2-bonus-divided": _answer("recall", _rescored(_rec_2_bonus_divided)),
    # the number rule
    "numeric-strings": _number_rule(_strings_are_numbers),
    "bools-are-numbers": _number_rule(_bools_are_numbers),
    "float-limit-truncated": _number_rule(_float_limit_truncated),
    "ttl-zero-expires": _number_rule(_ttl_zero_expires),
    # parsing what a store holds
    "repeated-keys-read": _repeated_keys_last_wins,
    "depth-off-by-one": _depth_off_by_one,
    "control-characters-read": _control_characters_read,
    # loading
    "duplicate-keeps-first": _duplicate_keeps_first,
    "load-compaction-uncounted": _answer("load", _no_compaction_on_load),
    "working-null-updated-kept": _around("load stored", _working_null_kept),
    "load-autosaves": _around("load", _load_saves),
    "empty-save-generation-zero": _answer("save", _empty_generation_zero),
    # answers
    "recent-oldest-first": _answer("get_recent", _recent_oldest_first),
    "cache-delete-always-true": _answer("cache_delete", _delete_always_true),
    "context-entries-by-rank": _answer("get_context", _context_by_rank),
    # the cache and the working memory
    "working-set-replaces": _around("working_set", _working_replaces),
    "cache-default-ttl-ignored": _around("cache_put", _cache_never_expires_by_default),
    **MORE,
    **THIRD,
    **FOURTH,
    **FIFTH,
    **SIXTH,
}
