"""This library as a protocol backend: the reference every other backend is compared with.

``run_case`` builds a fresh [`Memory`][sentinel_memory.memory.Memory] from a
case's config and runs its steps, each at its own ``now``; ``serve``
answers cases read from a stream, one JSON line each. Nothing here decides a
result: every answer is what the public API returned, written with
``.wire``, or the error code of what it raised.

The reference tokenizers and formats a case may name are data
(``TOKENIZERS``, ``FORMATS``), each defined exactly in PROTOCOL.md so
a port can build the same ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
import secrets
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any, TypeVar

from .. import __version__
from ..core import make_config
from ..core.bm25 import MissingStemmerError
from ..core.document import declared_generation, generation_of, problem
from ..core.errors import ConflictError, DamagedStoreError
from ..core.lexical import words
from ..core.tokens import Tokenizer, additive, estimate_tokens, per_line, upper_bound_tokens, utf16_len
from ..core.values import Compaction, Entry
from ..memory import Memory, create_memory
from ..stores.generations import check_generation
from ..stores.jsontext import _nesting, _no_repeats, dumps, loads
from . import OPTIONAL_GROUPS, PROTOCOL, REQUIRED_GROUPS, wire

__all__ = [
    "FORMATS",
    "IMPLEMENTATION",
    "TOKENIZERS",
    "ProtocolStore",
    "Session",
    "answer_step",
    "handshake",
    "run_case",
    "serve",
    "start",
]

IMPLEMENTATION = {"name": "sentinel-memory", "language": "python", "version": __version__}


def merging(text: str) -> int:
    """The ``merging`` reference tokenizer: not additive the way a BPE is not (PROTOCOL.md section 7).

    UTF-16 units, less one for each ``.``, ``?`` or ``!`` right before a line
    feed (they merge, as a BPE's pre-tokenizer joins them), plus two for each
    line feed right before a space (a join that costs more, so the repair of
    CTX-12 has something to repair).
    """
    merged = sum(text.count(mark + "\n") for mark in ".?!")
    return utf16_len(text) - merged + 2 * text.count("\n ")


#: The tokenizers a case may name. Those whose count of a concatenation is
#: the sum of the counts are declared additive, so the suite runs the fast
#: fill (CTX-8) as well as the plain one; ``merging`` is counted line by
#: line (CTX-12) and ``merging_whole``, the same count, takes the naive fill.
TOKENIZERS: Mapping[str, Tokenizer] = {
    "estimate": estimate_tokens,
    "utf16_units": additive(utf16_len),
    "utf8_bytes": upper_bound_tokens,
    "code_points": additive(len),
    "distinct_words": lambda text: len(words(text)),
    "plus_one": lambda text: utf16_len(text) + 1,
    "negative": lambda text: -1,
    "merging": per_line(merging),
    "merging_whole": merging,
}

#: The formats a case may name; ``number`` breaks CTX-3 on purpose (it returns a number).
FORMATS: Mapping[str, Callable[[Entry], Any] | None] = {
    "default": None,
    "text": lambda entry: entry.text,
    "key": lambda entry: entry.key,
    "number": lambda entry: entry.importance,
}

#: The config keys a case may set, all optional.
CONFIG_KEYS = ("limit", "recency_window", "working_ttl", "cache_ttl", "tokenizer", "autosave", "shared", "ranking")


class Unsupported(Exception):
    """A case asked for something this backend does not have: answered as ``E_UNSUPPORTED``."""


class ProtocolStore:
    """A store that holds its document as the text a file would hold, and reads it as strictly (PER-13).

    The ``load`` op puts a document, a text or nothing into it; ``save`` and
    ``stored`` answer what it holds. Generations are checked as a file store
    checks them (MW-3).
    """

    def __init__(self) -> None:
        self.raw: bytes | None = None

    def __repr__(self) -> str:
        return "<the protocol store>"

    def load(self) -> dict[str, Any] | None:
        if self.raw is None:
            return None
        document = loads(self.raw, "the protocol store")
        found = problem(document)
        if found is not None:
            raise DamagedStoreError(found, "the protocol store")
        return document

    def save(self, document: dict[str, Any]) -> None:
        check_generation(self, declared_generation(document), self.generation())
        self.raw = dumps(document)

    def generation(self) -> int:
        # A damaged text raises, as a damaged file does: a save never overwrites damage unseen.
        return generation_of(self.load())

    def put(self, raw: bytes | None) -> None:
        """Hold ``raw`` (None: nothing), put there behind the memory's back as another writer would."""
        self.raw = raw

    def held(self) -> Any:
        """What the store holds: its JSON value, None when nothing, ``{"$text": ...}`` when it is not strict JSON."""
        if self.raw is None:
            return None
        try:
            if self.raw.startswith(b"\xef\xbb\xbf"):
                raise ValueError("a byte order mark")  # no JSON text starts with one (PER-13)
            return json.loads(self.raw, parse_constant=_not_json, object_pairs_hook=_no_repeats)
        except ValueError:
            return {"$text": self.raw.decode("utf-8", "surrogatepass")}

    def close(self) -> None:
        """Nothing to release for a store in this process."""


def document_text(document: Any) -> str:
    """``document`` as the JSON text ``stored`` and ``load`` put into the store (section 8).

    NaN and the infinities are written as the bare tokens a careless writer
    writes, and an integer of any length with every digit (Python's writer
    refuses more than 4,300, and is quadratic in the length).
    """
    long: list[str] = []
    nonce = secrets.token_hex(16)  # no text of the document holds it: only the marks below match

    def mark(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4300 * 3:
            long.append(wire.integer_digits(value))
            return f"{nonce}{len(long) - 1}{nonce}"
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        if isinstance(value, list):
            return [mark(item) for item in value]
        return value

    text = json.dumps(mark(document), ensure_ascii=False)
    if not long:
        return text
    return re.sub(f'"{nonce}(\\d+){nonce}"', lambda found: long[int(found.group(1))], text)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN and Infinity: Python's parser would take them


def _named(table: Mapping[str, Any], kind: str, name: object) -> Any:
    if name is None:
        return None
    if not isinstance(name, str) or name not in table:
        raise Unsupported(f"unknown {kind} {name!r}")
    return table[name]


class Session:
    """One case: its memories on one store, the time their clocks read, and what each ``on_evict`` received.

    Memory 1 is made with the case; a step with ``"memory": N`` (the
    ``sessions`` group, section 9) runs on memory N instead, made from the
    same config on the same store at its first step. ``memory`` and
    ``evicted`` are those of the memory the current step runs on.
    """

    def __init__(self, config: Mapping[str, Any], store: ProtocolStore | None = None) -> None:
        unknown = set(config) - set(CONFIG_KEYS)
        if unknown:
            raise Unsupported(f"unknown config keys {sorted(unknown)}")
        self.now: Any = 0
        self.store = store if store is not None else ProtocolStore()
        self.config = dict(config)
        self.memories: dict[int, tuple[Memory, list[Compaction]]] = {}
        self.select(1)

    def select(self, number: object) -> None:
        """Run the next steps on memory ``number``, made now if this is its first step."""
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise Unsupported(f"memory must be an integer >= 1, got {number!r}")
        if number not in self.memories:
            evicted: list[Compaction] = []
            config = self.config
            options: dict[str, Any] = {
                name: wire.decode(config[name])
                for name in ("limit", "recency_window", "working_ttl", "cache_ttl")
                if name in config
            }
            for_memory = getattr(self.store, "for_memory", None)
            if "ranking" in config:
                try:
                    options["ranking"] = make_config(ranking=config["ranking"]).ranking  # BM-9: a name, checked
                except MissingStemmerError as error:
                    raise Unsupported(str(error)) from None
            made = create_memory(
                store=for_memory(number) if callable(for_memory) else self.store,
                clock=lambda: self.now,
                on_evict=evicted.append,
                tokenizer=_named(TOKENIZERS, "tokenizer", config.get("tokenizer")),
                autosave=config.get("autosave", False),
                shared=config.get("shared", False),
                **options,
            )
            self.memories[number] = (made, evicted)
        self.memory, self.evicted = self.memories[number]

    def step(self, op: str, args: Mapping[str, Any]) -> Any:
        handler = getattr(self, f"op_{op}", None)
        if handler is None or op not in wire.OP_GROUPS:
            raise Unsupported(f"unknown op {op!r}")
        if not isinstance(args, dict):
            raise Unsupported(f"the args of {op} must be an object")
        unknown = set(args) - set(inspect.signature(handler).parameters)
        if unknown:
            raise Unsupported(f"{op} takes no {sorted(unknown)}")
        return handler(**args)

    # -- entries --------------------------------------------------------------

    def op_remember(self, key: Any = None, data: Any = None, importance: Any = None, ttl: Any = None) -> Any:
        return wire.entries((self.memory.remember(key, data, importance=importance, ttl=ttl),))[0]

    def op_add_turn(self, role: Any = None, text: Any = None, importance: Any = None, ttl: Any = None) -> Any:
        return self.memory.add_turn(role, text, importance=importance, ttl=ttl).to_dict()

    def op_add_message(self, message: Any = None, importance: Any = None, ttl: Any = None) -> Any:
        return self.memory.add_message(message, importance=importance, ttl=ttl).to_dict()

    def op_add_messages(self, messages: Any = None, importance: Any = None, ttl: Any = None) -> Any:
        return [entry.to_dict() for entry in self.memory.add_messages(messages, importance=importance, ttl=ttl)]

    def op_get(self, key: Any = None, default: Any = None) -> Any:
        return self.memory.get(key, default)

    def op_has(self, key: Any = None) -> Any:
        return self.memory.has(key)

    def op_forget(self, key: Any = None) -> Any:
        return self.memory.forget(key)

    def op_clear(self) -> Any:
        self.memory.clear()

    def op_size(self) -> Any:
        return self.memory.size()

    def op_get_recent(self, n: Any = None) -> Any:
        return wire.entries(self.memory.get_recent(n))

    def op_stats(self) -> Any:
        return self.memory.stats()

    # -- compaction -----------------------------------------------------------

    def op_compact(self) -> Any:
        return wire.compaction(self.memory.compact())

    def op_evictions(self) -> Any:
        delivered, self.evicted[:] = list(self.evicted), []
        return [wire.compaction(item) for item in delivered]

    # -- recall and context ---------------------------------------------------

    def op_recall(self, query: Any = None, limit: Any = None) -> Any:
        return wire.hits(self.memory.recall(query, limit=limit))

    def op_get_context(
        self,
        token_budget: Any = None,
        query: Any = None,
        tokenizer: Any = None,
        format: Any = None,
        separator: Any = None,
        must_keep: Any = None,
        only: Any = None,
    ) -> Any:
        context = self.memory.get_context(
            token_budget=token_budget,
            query=query,
            tokenizer=_named(TOKENIZERS, "tokenizer", tokenizer),
            format=_named(FORMATS, "format", format),
            separator=separator,
            must_keep=must_keep,
            only=only,
        )
        return wire.context(context)

    def op_get_messages(
        self,
        token_budget: Any = None,
        query: Any = None,
        tokenizer: Any = None,
        must_keep: Any = None,
        facts_share: Any = None,
        system: Any = None,
        cut: Any = None,
        low_mark: Any = None,
        facts_at: Any = None,
        keep_results: Any = None,
        exclude_tools: Any = None,
    ) -> Any:
        # MSG-13: the prefix is in the result of a call that asks for a cut, a place of the facts or clearing.
        return wire.messages(
            self.memory.get_messages(
                token_budget=token_budget,
                query=query,
                tokenizer=_named(TOKENIZERS, "tokenizer", tokenizer),
                must_keep=must_keep,
                facts_share=facts_share,
                system=system,
                cut=cut,
                low_mark=low_mark,
                facts_at=facts_at,
                keep_results=keep_results,
                exclude_tools=exclude_tools,
            ),
            prefix=any(option is not None for option in (cut, low_mark, facts_at, keep_results, exclude_tools)),
        )

    # -- the L0 cache and the L1 working memory ----------------------------------

    def op_cache_put(self, key: Any = None, value: Any = None, ttl: Any = None) -> Any:
        self.memory.cache.put(key, value, ttl=ttl)

    def op_cache_get(self, key: Any = None, default: Any = None) -> Any:
        return self.memory.cache.get(key, default)

    def op_cache_delete(self, key: Any = None) -> Any:
        return self.memory.cache.delete(key)

    def op_cache_clear(self) -> Any:
        self.memory.cache.clear()

    def op_working_set(self, patch: Any = None) -> Any:
        self.memory.working.set(patch)

    def op_working_get(self) -> Any:
        return self.memory.working.get()

    def op_working_clear(self) -> Any:
        self.memory.working.clear()

    # -- persistence ------------------------------------------------------------

    def op_save(self) -> Any:
        self.memory.save()
        return self.store.held()

    def _put(self, document: Any, text: Any, missing: Any) -> None:
        """Replace what the store holds, behind the memory's back, as another writer would."""
        if missing is True:
            self.store.put(None)
        elif text is not None:
            if not isinstance(text, str):
                raise Unsupported("text must be a string")
            self.store.put(text.encode("utf-8", "surrogatepass"))
        elif document is not ...:
            # NaN or an infinity in the document is written as the bare token a careless writer would
            # write: the text is then no JSON, and reads as damage (section 8).
            self.store.put(document_text(document).encode("utf-8", "surrogatepass"))

    def op_stored(self, document: Any = ..., text: Any = None, missing: Any = False) -> Any:
        self._put(document, text, missing)
        return self.store.held()

    def op_load(self, document: Any = ..., text: Any = None, missing: Any = False) -> Any:
        self._put(document, text, missing)
        return wire.load_result(self.memory.load())


def error_code(error: BaseException) -> str | None:
    """The protocol's code for what a step raised, or None when it is no rule's error (PROTOCOL.md, "Errors")."""
    if isinstance(error, Unsupported):
        return "E_UNSUPPORTED"
    if isinstance(error, DamagedStoreError):
        return "E_PARSE"
    if isinstance(error, ConflictError):
        return "E_CONFLICT"
    if isinstance(error, TypeError):
        return "E_TYPE"
    if isinstance(error, ValueError):
        return "E_RANGE"
    return None


def _answer(run: Callable[[], Any]) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            # IgnoredValueWarning, LoadWarning and friends are for people; the protocol reports results.
            warnings.simplefilter("ignore")
            return {"ok": run()}
    except Exception as error:  # a rule's error becomes its code; anything else is a crash
        code = error_code(error)
        if code is None:
            raise
        return {"error": code}


def start(config: Mapping[str, Any], store: ProtocolStore | None = None) -> Session | str:
    """A session for ``config`` on ``store`` (default: a fresh one in this process), or the code when the config is refused."""
    created = _answer(lambda: Session(config, store))
    session: Session | str = created["ok"] if "ok" in created else created["error"]
    return session


def answer_step(session: Session, step: Mapping[str, Any]) -> dict[str, Any]:
    """One step's result: ``{"ok": value}`` or ``{"error": code}``."""

    def run() -> Any:
        try:
            session.now = wire.decode(step.get("now"))
            args = wire.decode(step.get("args") or {})
        except ValueError as error:  # a $number that names no number: no request of section 4
            raise Unsupported(str(error)) from None
        session.select(step.get("memory", 1))
        return session.step(str(step.get("op")), args)

    return _answer(run)


def run_case(case: Mapping[str, Any], store: ProtocolStore | None = None) -> dict[str, Any]:
    """The answer to one case: ``{"id", "results"}``, or ``{"id", "error"}`` when its config is refused."""
    try:
        session = start(case.get("config") or {}, store)
        if isinstance(session, str):
            return {"id": case.get("id"), "error": session}
        return {"id": case.get("id"), "results": [answer_step(session, step) for step in case.get("steps", [])]}
    finally:
        if store is not None:
            store.close()


def handshake() -> dict[str, Any]:
    """The answer to ``{"op": "start", "protocol": 2}``."""
    groups = [*REQUIRED_GROUPS, *OPTIONAL_GROUPS]
    if importlib.util.find_spec("snowballstemmer") is None:  # BM25 needs the [bm25] extra (BM-9)
        groups.remove("bm25")
    return {"protocol": PROTOCOL, "implementation": IMPLEMENTATION, "groups": groups}


def _integer(digits: str) -> int:
    """An integer literal of any length (section 4), read in time below quadratic (``wire.integer_of``)."""
    return wire.integer_of(digits)


def _lines(stream: IO[str] | IO[bytes]) -> Iterator[str | bytes]:
    for line in stream:
        if line.strip():
            yield line


class BadRequest(Exception):
    """A request line that is no request: answered ``E_UNSUPPORTED`` (section 1), and serving goes on."""


def request_of_line(line: str | bytes) -> dict[str, Any]:
    """The request a line holds, or ``BadRequest`` saying why it holds none (PROTOCOL.md section 1).

    A request is a JSON object: the handshake, or a case whose ``config`` is
    an object (or absent) and whose ``steps`` are a list of objects, each with
    a string ``op`` and ``args`` an object (or absent).
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadRequest(f"not UTF-8 (byte {error.start})") from None
    if line.startswith("\ufeff"):
        raise BadRequest("starts with a byte order mark")
    try:
        request = json.loads(line, parse_int=_integer, parse_constant=_not_json)
    except RecursionError:
        raise BadRequest("nested too deep to read") from None
    except ValueError as error:
        raise BadRequest(f"not JSON: {error}") from None
    if not isinstance(request, dict):
        raise BadRequest(f"a JSON {type(request).__name__}, not an object")
    if request.get("op") == "start":
        return request
    config, steps = request.get("config"), request.get("steps", [])
    if config is not None and not isinstance(config, dict):
        raise BadRequest("config is not an object")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise BadRequest("steps is not a list of objects")
    for step in steps:
        if not isinstance(step.get("op"), str):
            raise BadRequest("a step's op is not a string")
        if step.get("args") is not None and not isinstance(step["args"], dict):
            raise BadRequest("a step's args is not an object")
    return request


def refusal(line: str | bytes, reason: str) -> dict[str, Any]:
    """The answer to a line that is no request: its id when one can be read, ``E_UNSUPPORTED`` and why."""
    found: Any = None
    try:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        candidate = json.loads(text.lstrip("\ufeff"), parse_int=lambda digits: None, parse_constant=_not_json)
        if isinstance(candidate, dict) and isinstance(candidate.get("id"), (str, int)):
            found = candidate["id"]
    except (ValueError, RecursionError):
        pass
    return {"id": found, "error": "E_UNSUPPORTED", "reason": reason}


def serve(
    source: IO[str] | IO[bytes],
    sink: IO[str],
    *,
    stores: Callable[[], ProtocolStore] | None = None,
) -> None:
    """Answer the handshake and then every case read from ``source``, one JSON line each, until it ends.

    A line that is no request (not UTF-8, not JSON, not an object, steps that
    are not a list of steps) is answered ``{"id": ..., "error": "E_UNSUPPORTED",
    "reason": ...}`` and the next line is read as usual (section 1: one answer
    per request line, whatever it holds).

    With ``stores``, every case's store is ``stores()``, a new one per case
    (``conformance.stores``: a Redis server or any store in the loop);
    without it, the protocol store.
    """

    def respond(line: str | bytes) -> str:
        try:
            request = request_of_line(line)
        except BadRequest as error:
            answer = refusal(line, str(error))
        else:
            if request.get("op") == "start":
                answer = handshake() if request.get("protocol") == PROTOCOL else {"error": "E_UNSUPPORTED"}
            else:
                answer = run_case(request, None if stores is None else stores())
        return json.dumps(wire.encode(answer), ensure_ascii=True, allow_nan=False) + "\n"

    for line in _lines(source):
        sink.write(deep_enough(line, respond))
        sink.flush()


T = TypeVar("T")

#: Requests nested deeper than this are answered on a thread with room for them (section 1: one answer per request).
_SHALLOW = 150


def deep_enough(line: str | bytes, respond: Callable[[Any], T]) -> T:
    """``respond(line)``, with the stack and recursion limit a request nested as deep as ``line`` needs.

    Python's JSON parser, the wire decoding and the library's checks recurse
    once per level; data 5,000 levels deep must still get its answer
    (``E_RANGE``, ENT-13), not end the backend.
    """
    depth = _nesting(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))
    if depth <= _SHALLOW:
        return respond(line)
    outcome: list[Any] = []
    limit = sys.getrecursionlimit()
    size = threading.stack_size()

    def run() -> None:
        try:
            outcome.append((True, respond(line)))
        except BaseException as error:  # handed back to the serving thread as it is
            outcome.append((False, error))

    sys.setrecursionlimit(max(limit, 8 * depth + 1_000))
    threading.stack_size(min(512 * 2**20, max(size, 64 * 2**20, depth * 8 * 1024)))
    try:
        worker = threading.Thread(target=run, name="sentinel-memory-deep-request")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(size)
        sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
