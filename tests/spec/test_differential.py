"""The differential machine: this library and a protocol backend, driven side by side with the same random steps.

The fixed vectors check what someone thought to write down; this machine
checks what nobody did. Every rule appends one protocol step (with its own
``now``) to a case; the step runs on this library in-process
(:class:`sentinel_memory.conformance.backend.Session`) and the whole case so
far is sent to the backend, a subprocess speaking the protocol. Any
difference fails with the case written as a vector, expectations from this
library, ready to paste into ``spec/vectors`` once hypothesis has shrunk it.

The backend is ``SENTINEL_MEMORY_BACKEND`` (a command line) when set, so a
port gets random testing too; by default it is this library's own ``serve``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from sentinel_memory.conformance import backend as reference
from sentinel_memory.conformance import wire
from sentinel_memory.conformance.compare import first_difference
from sentinel_memory.conformance.runner import Subprocess, default_env, run
from sentinel_memory.conformance.vectors import compact

from .weak_spots import census, weighted

SERVE = [sys.executable, "-m", "sentinel_memory.conformance", "serve"]
KEYS = ["user:name", "order:42", "chat:1", "chat:2", "note", "chat:007", "chat:\u0663"]
WORDS = ["name", "order", "refund", "chat", "milk", "prague", "jakub", "?", "REFUND", "Kůň", "KUN"]
MINUTE = 60_000
T0 = 1_700_000_000_000


#: The size of a run: how many random cases, of up to how many steps (section 12). The default run is
#: quick; the thorough run of the porting guide is SENTINEL_MEMORY_RANDOM_CASES=1000 and _STEPS=30.
DEFAULT_CASES, DEFAULT_STEPS = 150, 20
THOROUGH_CASES, THOROUGH_STEPS = 1000, 30


def size() -> tuple[int, int]:
    """The run's size: ``SENTINEL_MEMORY_RANDOM_CASES`` and ``SENTINEL_MEMORY_RANDOM_STEPS``, else the defaults."""
    cases = int(os.environ.get("SENTINEL_MEMORY_RANDOM_CASES") or DEFAULT_CASES)
    steps = int(os.environ.get("SENTINEL_MEMORY_RANDOM_STEPS") or DEFAULT_STEPS)
    if cases < 1 or steps < 1:
        raise ValueError(f"a random run needs at least one case of one step, got {cases} cases of {steps} steps")
    return cases, steps


def backend_command() -> list[str]:
    """The backend under test: ``SENTINEL_MEMORY_BACKEND`` or this library's ``serve``."""
    configured = os.environ.get("SENTINEL_MEMORY_BACKEND")
    return shlex.split(configured) if configured else SERVE


texts = st.lists(st.sampled_from(WORDS + ["😀", "kůň", "日本"]), min_size=1, max_size=4).map(" ".join)
data = st.one_of(
    texts,
    st.integers(-5, 5),
    st.floats(-2, 2, allow_nan=False),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["b", "a", "é"]), st.integers(0, 2), max_size=2),
)
# The kinds no number may be ("0.5", True) get a branch of their own, so the random mode sends them often.
importances = st.one_of(
    st.none(), st.sampled_from([0, 0.1, 0.5, 0.9, 1, 1.5, -1]), st.sampled_from(["0.5", True]), st.floats(0, 1)
)
ttls = st.one_of(st.none(), st.sampled_from([1, MINUTE, 15 * MINUTE, 0, -5]))
# Minutes to let pass before a step: often none (ties), often exactly a ttl (expiry edges), sometimes
# backwards (a clock that went back) or a fraction of a millisecond.
waits = st.one_of(
    st.sampled_from([0, 0, 0, 1, 14, 15, 60, 24 * 60]),
    st.sampled_from([-1, -15, 0.5 / MINUTE, 1e-3]),
)
configs = st.fixed_dictionaries(
    {},
    optional={
        "limit": st.sampled_from([1, 2, 4, 8, 2.5, 0, "3"]),
        "recency_window": st.sampled_from([MINUTE, 15 * MINUTE, 0, -1]),
        "working_ttl": st.sampled_from([MINUTE, 15 * MINUTE, 0]),
        "cache_ttl": st.sampled_from([1, MINUTE, -1]),
        "tokenizer": st.sampled_from(["estimate", "utf8_bytes", "distinct_words", "merging"]),
        "autosave": st.booleans(),
        "shared": st.booleans(),
        "ranking": st.sampled_from(["words", "bm25", "bm25"]),
    },
)
records = st.fixed_dictionaries(
    {
        "key": st.one_of(st.sampled_from(KEYS + ["chat:007", "chat:9", ""]), st.integers(0, 2)),
        "data": st.one_of(data, st.sampled_from([2**53 + 1, 10**30, -(2**63)])),
        "importance": st.sampled_from([0.5, 0.9, 0, 2, None, "0.5"]),
        "createdAt": st.sampled_from([0, T0, T0 + 0.5, None]),
        "updatedAt": st.sampled_from([0, T0, T0 + MINUTE, -1, None]),
    },
    optional={"expiresAt": st.sampled_from([None, T0 + MINUTE, 0])},
)
documents = st.fixed_dictionaries(
    {"version": st.sampled_from([1, 1, 1, 2]), "entries": st.lists(st.one_of(records, st.just("junk")), max_size=4)},
    optional={
        "generation": st.sampled_from([0, 1, 5, 10**20]),
        "working": st.sampled_from(
            [
                {"data": {"task": "refund"}, "updatedAt": T0},
                {"data": {"a": 1}, "updatedAt": None},
                {"data": {}, "updatedAt": None},
                5,
            ]
        ),
    },
)
damaged_texts = st.sampled_from(
    [
        '{"version": 1, "entries": [',
        '{"version": 1, "entries": [], "version": 1}',
        "NaN",
        "",
        '{"version": 1, "entries": []}\u0000',
        "[]",
    ]
)
queries = st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join))
#: Words runtimes split, fold and normalise differently (REC-1, Unicode 14): final sigma, sharp s, dotted I,
#: ligatures, compatibility digits, combining marks, titlecase digraphs, astral and unassigned code points.
UNICODE_WORDS = [
    "ΟΔΟΣ",
    "οδος",
    "οδός",
    "Straße",
    "STRASSE",
    "strasse",
    "İstanbul",
    "istanbul",
    "I\u0307",
    "ﬁle",
    "file",
    "Ⅻ",
    "１２",
    "12",
    "e\u0301",
    "é",
    "ǅemal",
    "ﬀ",
    "Kůň",
    "KŮŇ",
    "kun",
    "\U0001f600",
    "\u0378x",
    "\U0001fae8",
    "한국어",
    "日本語",
    "ａｂｃ",
    "abc",
    "٣",
    "3",
    "x\u200dy",
    "\u00ad",
    "Ω",
    "Ω",
]
unicode_texts = st.lists(st.sampled_from(UNICODE_WORDS), min_size=1, max_size=4).map(" ".join)
#: Lines for the counted fill (CTX-12, CTX-13): punctuation before a line feed merges, a line feed before a space costs.
COUNTED_PIECES = ["a.", "b?\n", "c!\n d", "\n x", ". \n", "line.\nnext", "q?\n  r", "plain", "ends.", "\n"]
counted_texts = st.lists(st.sampled_from(COUNTED_PIECES), min_size=1, max_size=3).map("".join)
#: Numbers beyond a double's exact integers, beyond its range, at its edges (NUM-1, ENT-2, TXT-3, TIME-1).
BIG_NUMBERS = [2**53 + 1, -(2**53 + 1), 2**63, 10**30, 10**400, -(10**400), 1e308, 5e-324, -0.0, 2**53]
DEEP: object = 1
for _ in range(101):
    DEEP = [DEEP]  # nested one level deeper than data may be (ENT-13)
NAN = {"$number": "NaN"}


#: A drawing function (``st.data().draw``): the weak spots' generators draw as they go.
Draw = Callable[[st.SearchStrategy[Any]], Any]
#: An argument left out (None is sent as null).
ABSENT = object()
TOOLS = ["lookup", "weather"]
#: get_messages' optional arguments with good values, the prompt-cache options among them (MSG-11 .. MSG-16).
REQUEST_OPTIONS: list[tuple[str, list[object]]] = [
    ("query", [ABSENT, "refund", "lookup result"]),
    ("system", [ABSENT, ABSENT, "Be brief."]),
    ("must_keep", [ABSENT, ABSENT, 0.9]),
    ("tokenizer", [ABSENT, ABSENT, "estimate", "merging", "plus_one"]),
    ("facts_share", [ABSENT, ABSENT, 0, 0.5, 1]),
    ("cut", [ABSENT, "stable", "stable", "newest", None]),
    ("low_mark", [ABSENT, ABSENT, 0, 0.3, 0.5, 1, None]),
    ("facts_at", [ABSENT, "system", "end", "start", None]),
    ("keep_results", [ABSENT, ABSENT, 0, 1, 2, None]),
    ("exclude_tools", [ABSENT, ABSENT, [], ["lookup"], ["weather", "lookup"], None]),
]
#: Now and then one of these instead: which error wins, and a keep_results the number rule warns about (MSG-16).
BAD_REQUEST_OPTIONS: list[tuple[str, list[object]]] = [
    ("cut", ["old", 5]),
    ("low_mark", [2, -0.5, "x", True]),
    ("facts_at", ["middle", 5]),
    ("keep_results", [-1, 1.5, "1", True]),
    ("exclude_tools", ["lookup", [5], {"a": 1}]),
    ("token_budget", [-1, "30", None]),
]
#: Contents beside plain text (MSG-5): null, empty, content parts good and bad.
CONTENTS: list[object] = [
    None,
    "",
    [],
    [{"type": "text", "text": "hi"}],
    [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}],
    [{"type": "text", "text": "refund"}, {"type": "text", "text": "status"}],
    [{"type": ""}],
    [{"type": "text"}],
]
#: One change to a message (MSG-5), each with its values: its optional fields absent, null (counted as
#: absent), good and bad; a field no message has; the content as null, empty or content parts; the tool calls
#: (on an assistant) null, empty, or with an id twice; inside the first call, the type or the arguments absent
#: or null; or every optional field at once.
MESSAGE_FIELDS: list[tuple[str, list[object]]] = [
    ("name", ["bot", None, ""]),
    ("tool_call_id", [None, "call_x"]),
    ("refusal", [None, "no"]),
    ("content", CONTENTS),
    (
        "tool_calls",
        [None, [], [{"id": "d", "function": {"name": "f"}}, {"id": "d", "function": {"name": "g"}}]],
    ),
    ("function", [("type", ABSENT), ("type", None), ("arguments", ABSENT), ("arguments", None)]),
    ("every", [ABSENT]),
    ("role", ["human", "ai", "Tool", "function"]),
]
#: The spellings of a call MSG-5 takes: whole, its type absent or null (``function``), its arguments absent or
#: null (the empty text).
CALL_SPELLINGS: list[Callable[[str, str], dict[str, object]]] = [
    lambda i, name: {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}},
    lambda i, name: {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}},
    lambda i, name: {"id": i, "function": {"name": name, "arguments": "{}"}},
    lambda i, name: {"id": i, "type": None, "function": {"name": name, "arguments": "{}"}},
    lambda i, name: {"id": i, "type": "function", "function": {"name": name}},
    lambda i, name: {"id": i, "type": "function", "function": {"name": name, "arguments": None}},
]
#: For each op, each argument's values: a good one first, then bad ones (section 3: which error wins).
ARGUMENTS: dict[str, list[tuple[str, list[object]]]] = {
    "remember": [
        ("key", ["a", 5, ""]),
        ("data", ["x", NAN, DEEP]),
        ("importance", [0.5, "x", 2]),
        ("ttl", [MINUTE, -1, "x"]),
    ],
    "add_turn": [("role", ["user", 5, ""]), ("text", ["hi", 5]), ("importance", [0.3, "x"]), ("ttl", [MINUTE, "x"])],
    "add_message": [
        ("message", [{"role": "user", "content": "hi"}, 5, {"role": "human", "content": "hi"}]),
        ("importance", [0.3, "x"]),
        ("ttl", [MINUTE, "x"]),
    ],
    "add_messages": [
        (
            "messages",
            [[{"role": "user", "content": "hi"}], 5, [{"role": "tool", "tool_call_id": "none", "content": "x"}]],
        ),
        ("importance", [0.3, "x"]),
        ("ttl", [MINUTE, "x"]),
    ],
    "get": [("key", ["a", 5, ""]), ("default", [0, NAN])],
    "has": [("key", ["a", 5, ""])],
    "forget": [("key", ["a", 5, ""])],
    "get_recent": [("n", [2, "x", -1])],
    "recall": [("query", ["refund", 5, True]), ("limit", [2, "x", -1])],
    "get_context": [
        ("token_budget", [30, -1, "30"]),
        ("query", ["refund", 5]),
        ("tokenizer", ["estimate", "negative", "no_such_tokenizer"]),
        ("format", ["text", "number"]),
        ("separator", ["\n", 5]),
        ("must_keep", [0.5, 2, "x"]),
        ("only", ["facts", 5, "bogus"]),
    ],
    "get_messages": [
        ("token_budget", [30, -1, "30"]),
        ("query", ["refund", 5]),
        ("tokenizer", ["estimate", "negative"]),
        ("must_keep", [0.5, 2]),
        ("facts_share", [0.5, 2, "x"]),
    ],
    "cache_put": [("key", ["otp", 5, ""]), ("value", [1, NAN, DEEP]), ("ttl", [MINUTE, "x", -1])],
    "cache_get": [("key", ["otp", 5, ""]), ("default", [0, NAN])],
    "cache_delete": [("key", ["otp", 5, ""])],
    "working_set": [("patch", [{"task": "x"}, 5, [1], {"deep": DEEP}])],
}


class Differential(RuleBasedStateMachine):
    """One case, growing a step at a time, on both sides."""

    command: ClassVar[list[str]] = SERVE
    process: ClassVar[Subprocess | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.config: dict[str, object] = {"limit": 4}
        self.steps: list[dict] = []
        self.now: int | float = T0
        self.session: reference.Session | None = None
        if type(self).process is None:
            type(self).process = Subprocess(self.command, timeout=10, env=default_env())
            type(self).process.start()

    @initialize(
        config=configs,
        seed=st.lists(
            st.tuples(st.sampled_from(KEYS), texts, st.sampled_from([0.1, 0.5, 0.9, 1]), st.sampled_from([0, 1, 60])),
            max_size=4,
        ),
    )
    def configure(self, config: dict[str, object], seed: list[tuple[str, str, float, int]]) -> None:
        """Each case its own config (limits, windows, ttls, a tokenizer, autosave, shared), and a few entries to start from."""
        self.config = config
        session = reference.start(config)
        self.session = None if isinstance(session, str) else session
        for key, text, importance, wait in seed:
            self.send("remember", wait, key=key, data=text, importance=importance)

    def send(self, op: str, wait: int | float = 0, **args: object) -> None:
        if self.session is None:
            return  # a refused config: the case is that refusal alone
        self.now += wait * MINUTE
        step = {"op": op, "args": args, "now": self.now}
        self.record(step)

    def record(self, step: dict[str, Any]) -> None:
        """``step`` run on the reference session and appended to the case, its answer the expectation."""
        self.steps.append({**step, "expect": wire.encode(reference.answer_step(self.session, step))})

    def teardown(self) -> None:
        """Send the whole case to the backend once and compare every step's result."""
        if self.session is None:
            self.compare_refusal()
            return
        if not self.steps:
            return
        self.send("stats")
        case = {
            "id": "differential",
            "config": self.config,
            "steps": [{k: s[k] for k in ("op", "args", "now", "memory") if k in s} for s in self.steps],
        }
        assert self.process is not None
        answer = self.process.ask(case)
        results = answer.get("results")
        assert isinstance(results, list) and len(results) == len(self.steps), f"not an answer: {compact(answer)}"
        for number, (step, got) in enumerate(zip(self.steps, results, strict=True), start=1):
            where = first_difference(step["expect"], got)
            if where is not None:
                raise AssertionError(
                    f"step {number} ({step['op']}) differs at {where}\n  expected: {compact(step['expect'])}\n"
                    f"  got:      {compact(got)}\nas a vector:\n{self.as_vector()}"
                )

    def compare_refusal(self) -> None:
        expected = reference.run_case({"id": "differential", "config": self.config, "steps": []})
        assert self.process is not None
        answer = self.process.ask({"id": "differential", "config": self.config, "steps": []})
        if first_difference(expected, answer) is not None:
            raise AssertionError(f"the config {self.config} is answered {compact(answer)}, not {compact(expected)}")

    def as_vector(self) -> str:
        case = {
            "id": "machine-NAME",
            "description": "WHAT IT PINS",
            "rules": ["RULE-ID"],
            "config": self.config,
            "steps": self.steps,
        }
        return json.dumps(case, ensure_ascii=False)

    @rule(key=st.sampled_from(KEYS), value=data, importance=importances, ttl=ttls, wait=waits)
    def remember(self, key: str, value: object, importance: object, ttl: object, wait: int) -> None:
        args = {"key": key, "data": value}
        if importance is not None:
            args["importance"] = importance
        if ttl is not None:
            args["ttl"] = ttl
        self.send("remember", wait, **args)

    @rule(
        key=st.sampled_from(KEYS),
        op=st.sampled_from(["get", "has", "forget"]),
        wait=waits,
        default=st.sampled_from([None, None, "<missing>", 0]),
    )
    def by_key(self, key: str, op: str, wait: int, default: object) -> None:
        self.send(op, wait, key=key, **({"default": default} if op == "get" and default is not None else {}))

    #: Ops with their good arguments and the optional arguments they may be given as null.
    OPTIONAL_ARGUMENTS: ClassVar[list[tuple[str, dict[str, object], tuple[str, ...]]]] = [
        ("remember", {"key": "note", "data": "x"}, ("importance", "ttl")),
        ("get_recent", {}, ("n",)),
        ("recall", {"query": "refund"}, ("limit",)),
        ("get_context", {"token_budget": 30}, ("query", "separator", "token_budget", "must_keep", "format")),
        ("get_messages", {"token_budget": 30}, ("query", "facts_share")),
        ("cache_put", {"key": "otp", "value": 1}, ("ttl",)),
    ]

    @rule(call=st.sampled_from(OPTIONAL_ARGUMENTS), pick=st.integers(0, 10), wait=waits)
    def null_argument(self, call: tuple[str, dict[str, object], tuple[str, ...]], pick: int, wait: int) -> None:
        """An optional argument of the op given as null (section 3)."""
        op, args, optional = call
        self.send(op, wait, **{**args, optional[pick % len(optional)]: None})

    @rule(call=st.sampled_from(OPTIONAL_ARGUMENTS), wait=waits)
    def unknown_argument(self, call: tuple[str, dict[str, object], tuple[str, ...]], wait: int) -> None:
        """An argument no op has (section 5)."""
        op, args, _ = call
        self.send(op, wait, **{**args, "no_such_argument": True})

    @rule(
        call=st.sampled_from(
            [
                ("remember", {"key": "", "data": {"$number": "NaN"}}),
                ("remember", {"key": 5, "data": {"$number": "NaN"}}),
                ("get_context", {"token_budget": -1, "query": 5}),
                ("get_messages", {"token_budget": -1, "query": 5}),
                ("add_turn", {"role": "", "text": 5}),
                ("get", {"key": ""}),
                ("has", {"key": 5}),
            ]
        ),
        bad_now=st.booleans(),
    )
    def several_bad(self, call: tuple[str, dict], bad_now: bool) -> None:
        """Several bad arguments at once (and sometimes a bad now): which error wins (section 3)."""
        if self.session is None:
            return
        op, args = call
        step = {"op": op, "args": args, "now": {"$number": "NaN"} if bad_now else self.now}
        self.record(step)

    @rule(
        key=st.sampled_from(KEYS[:5]),
        ttl=st.sampled_from([1, MINUTE, 15 * MINUTE]),
        read=st.sampled_from(["get", "has", "forget", "size", "get_recent", "stats", "get_context", "recall"]),
        early=st.sampled_from([0, 0, 1]),
    )
    def expiry_edge(self, key: str, ttl: int, read: str, early: int) -> None:
        """Remember with a ttl, then read exactly when it runs out (or a millisecond before): EXP-2's edge."""
        self.send("remember", 0, key=key, data="refund soon", ttl=ttl)
        self.now += ttl - early
        args = {"get": {"key": key}, "has": {"key": key}, "forget": {"key": key}, "get_context": {"token_budget": 100}}
        args["recall"] = {"query": "refund"}
        self.send(read, 0, **args.get(read, {}))

    @rule(ttl=st.sampled_from([None, 1, MINUTE]), early=st.sampled_from([0, 1]), working=st.booleans())
    def scratch_edge(self, ttl: int | None, early: int, working: bool) -> None:
        """The cache item or the working memory read exactly when it runs out: L0-2's and L1-2's edges."""
        if working:
            self.send("working_set", 0, patch={"task": "refund"})
            window = self.config.get("working_ttl")
            window = window if isinstance(window, int) and window > 0 else 3_600_000
            self.now += window - early
            self.send("working_get", 0)
        else:
            self.send("cache_put", 0, key="otp", value=1, **({} if ttl is None else {"ttl": ttl}))
            window = ttl if ttl is not None else self.config.get("cache_ttl")
            window = window if isinstance(window, int) and window > 0 else 300_000
            self.now += window - early
            self.send("cache_get", 0, key="otp")

    @rule(
        must_keep=st.sampled_from([None, 0.9]),
        budget=st.sampled_from([5, 8, 12]),
        query=st.sampled_from(["refund status", "REFUND", "kun", "name"]),
        fmt=st.sampled_from([None, "text"]),
    )
    def ranking_probe(self, must_keep: float | None, budget: int, query: str, fmt: str | None) -> None:
        """Entries whose importance, freshness and query match disagree, then a context that fits one or two of them."""
        self.send("remember", 0, key="a", data="refund", importance=0.9)
        self.send("remember", 60, key="b", data="refund status Kůň", importance=0.5)
        self.send("remember", 24 * 60, key="c", data="name", importance=0.92)
        args: dict[str, object] = {"token_budget": budget, "query": query}
        if must_keep is not None:
            args["must_keep"] = must_keep
        if fmt is not None:
            args["format"] = fmt
        self.send("get_context", 0, **args)

    @rule(
        op=st.sampled_from(sorted(ARGUMENTS)),
        picks=st.lists(st.integers(-1, 3), min_size=7, max_size=7),
        bad_now=st.sampled_from([False, False, False, True]),
    )
    def precedence(self, op: str, picks: list[int], bad_now: bool) -> None:
        """Any mix of absent, good and bad arguments of one op, sometimes at a bad now: every order of errors (section 3)."""
        if self.session is None:
            return
        args: dict[str, object] = {}
        for (name, values), pick in zip(ARGUMENTS[op], picks, strict=False):
            if pick >= 0:
                args[name] = values[pick % len(values)]
        step = {"op": op, "args": args, "now": {"$number": "NaN"} if bad_now else self.now}
        self.record(step)

    @rule(
        turns=st.lists(
            st.tuples(st.sampled_from(["user", "assistant", "system", "tool"]), st.one_of(texts, counted_texts)),
            min_size=1,
            max_size=5,
        ),
        facts=st.lists(st.tuples(st.sampled_from(KEYS[:2] + ["pref", "allergy"]), texts), max_size=3),
        budget=st.integers(0, 60),
        share=st.sampled_from([None, 0, 0.25, 0.5, 1, 1.5]),
        tokenizer=st.sampled_from([None, "estimate", "utf16_units", "code_points", "plus_one", "merging"]),
        query=st.sampled_from([None, "refund", "milk chat"]),
        must_keep=st.sampled_from([None, 0.3, 0.9]),
        importance=st.sampled_from([None, 0.9, 0.3, 0.1]),
    )
    def conversation(
        self,
        turns: list[tuple[str, str]],
        facts: list[tuple[str, str]],
        budget: int,
        share: object,
        tokenizer: str | None,
        query: str | None,
        must_keep: object,
        importance: object,
    ) -> None:
        """A chat and some facts, then the messages for a budget near what they cost (MSG-1 .. MSG-4)."""
        for key, text in facts:
            self.send("remember", 0, key=key, data=text)
        for role, text in turns:
            self.send("add_turn", 0, role=role, text=text, **({} if importance is None else {"importance": importance}))
        args: dict[str, object] = {"token_budget": budget}
        for name, value in (
            ("facts_share", share),
            ("tokenizer", tokenizer),
            ("query", query),
            ("must_keep", must_keep),
        ):
            if value is not None:
                args[name] = value
        self.send("get_messages", 0, **args)

    @rule(
        texts=st.lists(unicode_texts, min_size=1, max_size=3),
        query=unicode_texts,
        read=st.sampled_from(["recall", "get_context", "distinct_words"]),
    )
    def unicode_words(self, texts: list[str], query: str, read: str) -> None:
        """Entries and a query of words runtimes fold and split differently (REC-1, Unicode 14)."""
        for number, text in enumerate(texts):
            self.send("remember", 0, key=f"u{number}", data=text)
        if read == "recall":
            self.send("recall", 0, query=query)
        elif read == "get_context":
            self.send("get_context", 0, token_budget=40, query=query)
        else:
            self.send("get_context", 0, token_budget=6, tokenizer="distinct_words", query=query)

    @rule(
        texts=st.lists(counted_texts, min_size=1, max_size=4),
        budget=st.integers(0, 40),
        tokenizer=st.sampled_from(["merging", "merging", "merging_whole"]),
        separator=st.sampled_from([None, "\n", " ", "\n ", ".\n"]),
        fmt=st.sampled_from([None, "text"]),
    )
    def counted_fill(
        self, texts: list[str], budget: int, tokenizer: str, separator: str | None, fmt: str | None
    ) -> None:
        """Entries whose lines merge or cost more when joined, then a context counted line by line (CTX-12 .. CTX-14)."""
        for number, text in enumerate(texts):
            self.send("remember", 0, key=f"line{number}", data=text, importance=0.5 + number / 10)
        args: dict[str, object] = {"token_budget": budget, "tokenizer": tokenizer}
        if separator is not None:
            args["separator"] = separator
        if fmt is not None:
            args["format"] = fmt
        self.send("get_context", 0, **args)

    @rule(
        number=st.sampled_from(BIG_NUMBERS),
        where=st.sampled_from(["data", "importance", "ttl", "nested", "default", "now", "n", "limit"]),
        odd=st.sampled_from([1, 3, 5]),
    )
    def big_numbers(self, number: object, where: str, odd: int) -> None:
        """A number beyond a double's exact integers or range, wherever one may stand (NUM-1, ENT-2, TXT-3, TIME-1)."""
        if where == "now":
            # An integer now beyond 2**53: now + ttl is exact, and the entry lives to exactly that millisecond.
            self.now = 2**53 + odd
            self.send("remember", 0, key="late", data=1, ttl=1000 + odd)
            self.now += 1000 + odd - 1
            self.send("get", 0, key="late")
            self.now += 1
            self.send("get", 0, key="late")
            return
        if where in ("data", "importance", "ttl"):
            args = {"key": "big", "data": number if where == "data" else 1}
            if where != "data":
                args[where] = number
            self.send("remember", 0, **args)
            self.send("get", 0, key="big")
        elif where == "nested":
            self.send("remember", 0, key="big", data={"n": [number]})
            self.send("save")
        elif where == "default":
            self.send("get", 0, key="nowhere", default=number)
        elif where == "n":
            self.send("get_recent", 0, n=number)
        else:
            self.send("recall", 0, query="refund", limit=number)

    @rule(op=st.sampled_from(["size", "stats", "compact", "evictions", "get_recent"]), wait=waits)
    def read(self, op: str, wait: int) -> None:
        self.send(op, wait)

    @rule(query=queries.filter(lambda q: q is not None), limit=st.sampled_from([None, 0, 2, 10]), wait=waits)
    def recall(self, query: str, limit: int | None, wait: int) -> None:
        self.send("recall", wait, query=query, **({} if limit is None else {"limit": limit}))

    @rule(
        budget=st.sampled_from([0, 4, 10, 25, 60]),
        query=queries,
        wait=waits,
        tokenizer=st.sampled_from(
            [None, "estimate", "utf16_units", "utf8_bytes", "distinct_words", "merging", "merging_whole"]
        ),
        separator=st.sampled_from([None, " | "]),
        must_keep=st.sampled_from([None, None, 0.5, 0.9]),
        fmt=st.sampled_from([None, None, "text", "key"]),
        only=st.sampled_from([None, None, "facts", "turns"]),
    )
    def context(
        self,
        budget: int,
        query: str | None,
        tokenizer: str | None,
        separator: str | None,
        wait: int,
        must_keep: float | None,
        fmt: str | None,
        only: str | None,
    ) -> None:
        args: dict[str, object] = {"token_budget": budget}
        for name, value in (
            ("query", query),
            ("tokenizer", tokenizer),
            ("separator", separator),
            ("must_keep", must_keep),
            ("format", fmt),
            ("only", only),
        ):
            if value is not None:
                args[name] = value
        self.send("get_context", wait, **args)

    @rule()
    def save_and_load(self) -> None:
        self.send("save")
        self.send("load")

    @rule(role=st.sampled_from(["user", "assistant", "", 5]), text=texts, importance=importances, wait=waits)
    def add_turn(self, role: object, text: str, importance: object, wait: int) -> None:
        self.send("add_turn", wait, role=role, text=text, **({} if importance is None else {"importance": importance}))

    @rule(
        budget=st.sampled_from([0, 3, 10, 40, 200]),
        query=queries,
        share=st.sampled_from([None, 0, 0.5, 1, 2]),
        must_keep=st.sampled_from([None, 0.9]),
        system=st.sampled_from([None, "You are a waiter.", 5]),
        wait=waits,
    )
    def messages(
        self, budget: int, query: str | None, share: object, must_keep: object, system: object, wait: int
    ) -> None:
        args: dict[str, object] = {"token_budget": budget}
        for name, value in (("query", query), ("facts_share", share), ("must_keep", must_keep), ("system", system)):
            if value is not None:
                args[name] = value
        self.send("get_messages", wait, **args)

    @rule(
        question=texts,
        calls=st.integers(0, 2),
        answered=st.booleans(),
        one_by_one=st.booleans(),
        importance=importances,
        wait=waits,
    )
    def agent_turn(
        self, question: str, calls: int, answered: bool, one_by_one: bool, importance: object, wait: int
    ) -> None:
        """MSG-5, MSG-6, MSG-7: an agent's turn as whole messages, tool calls and their results, sent at once or one by one."""
        self.calls = getattr(self, "calls", 0) + 1
        ids = [f"call_{self.calls}_{n}" for n in range(calls)]
        batch: list[dict[str, object]] = [{"role": "user", "content": question}]
        if ids:
            tool_calls = [{"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for i in ids]
            batch.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
            if answered:
                batch += [{"role": "tool", "tool_call_id": i, "content": f"result of {i}"} for i in ids]
                batch.append({"role": "assistant", "content": "Here is what I found."})
        extra = {} if importance is None else {"importance": importance}
        if one_by_one:
            for message in batch:
                self.send("add_message", 0, message=message, **extra)
        else:
            self.send("add_messages", wait, messages=batch, **extra)

    @rule(key=st.sampled_from(["otp", "draft", 5]), value=data, ttl=ttls, wait=waits)
    def cache_put(self, key: object, value: object, ttl: object, wait: int) -> None:
        self.send("cache_put", wait, key=key, value=value, **({} if ttl is None else {"ttl": ttl}))

    @rule(
        key=st.sampled_from(["otp", "draft"]),
        op=st.sampled_from(["cache_get", "cache_delete"]),
        wait=waits,
        default=st.sampled_from([None, "<none>"]),
    )
    def cache_read(self, key: str, op: str, wait: int, default: object) -> None:
        self.send(op, wait, key=key, **({"default": default} if op == "cache_get" and default is not None else {}))

    @rule(
        op=st.sampled_from(["remember", "save", "load", "get_recent", "add_turn"]),
        key=st.sampled_from(KEYS),
        text=texts,
        wait=waits,
    )
    def other_memory(self, op: str, key: str, text: str, wait: int) -> None:
        """A second memory on the same store (the sessions group): conflicts, generations, shared reloads."""
        if self.session is None:
            return
        args = {"remember": {"key": key, "data": text}, "add_turn": {"role": "user", "text": text}}.get(op, {})
        self.now += wait * MINUTE
        self.other(op, **args)

    @rule(
        patch=st.one_of(
            st.dictionaries(st.sampled_from(["task", "step"]), data, max_size=2), st.sampled_from([None, [1], "x"])
        ),
        wait=waits,
    )
    def working_set(self, patch: object, wait: int) -> None:
        self.send("working_set", wait, patch=patch)

    @rule(
        op=st.sampled_from(
            ["working_get", "working_clear", "cache_clear", "clear", "stored", "save", "evictions", "size", "stats"]
        ),
        wait=waits,
        bad_now=st.booleans(),
    )
    def plain(self, op: str, wait: int, bad_now: bool) -> None:
        """The ops without arguments, some of which read no clock: sometimes at a now that is no number."""
        if bad_now and self.session is not None:
            step = {"op": op, "args": {}, "now": {"$number": "NaN"}}
            self.record(step)
            return
        self.send(op, wait)

    @rule(
        what=st.one_of(
            documents.map(lambda document: {"document": document}),
            damaged_texts.map(lambda text: {"text": text}),
            st.just({"missing": True}),
        ),
        how=st.sampled_from(["load", "stored"]),
    )
    def put_behind_its_back(self, what: dict, how: str) -> None:
        """What another writer leaves in the store, then a load or a look at it: a hand-built document (bad
        entries, big integers, working memories, another version), damaged text, or nothing."""
        self.send(how, 0, **what)

    # The weak spots (weak_spots.py): op sequences the vectors reach in few cases, sent with a weight that
    # falls as the vectors' count of cases rises. Hypothesis picks a rule uniformly, so the rule is given
    # three times (``weak_spot``, ``weak_spot_again``, ``weak_spot_once_more``): about a tenth of the draws,
    # each of several steps.
    WEAK: ClassVar[list[str]] = weighted(census())

    @rule(spot=st.sampled_from(WEAK), data=st.data())
    def weak_spot(self, spot: str, data: st.DataObject) -> None:
        """A weak spot of the vectors, chosen by its weight, then its steps."""
        getattr(self, "spot_" + spot.replace("-", "_"))(data.draw)

    @rule(spot=st.sampled_from(WEAK), data=st.data())
    def weak_spot_again(self, spot: str, data: st.DataObject) -> None:
        """As ``weak_spot``: a second draw of the same rule."""
        self.weak_spot(spot, data)

    @rule(spot=st.sampled_from(WEAK), data=st.data())
    def weak_spot_once_more(self, spot: str, data: st.DataObject) -> None:
        """As ``weak_spot``: a third draw of the same rule."""
        self.weak_spot(spot, data)

    def other(self, op: str, **args: object) -> None:
        """A step on the second memory of the store (section 8)."""
        if self.session is None:
            return
        step = {"op": op, "args": args, "now": self.now, "memory": 2}
        self.record(step)

    def new_calls(self, draw: Draw, count: int | None = None) -> tuple[list[str], dict[str, object]]:
        """Fresh call ids and the assistant message that makes them, its optional fields drawn."""
        self.calls = getattr(self, "calls", 0) + 1
        ids = [f"call_{self.calls}_{n}" for n in range(draw(st.integers(1, 3)) if count is None else count)]
        calls = [draw(st.sampled_from(CALL_SPELLINGS))(i, draw(st.sampled_from(TOOLS))) for i in ids]
        message: dict[str, object] = {"role": "assistant", "content": draw(st.sampled_from([None, "Let me look."]))}
        message["tool_calls"] = calls
        return ids, message

    def spot_answered_later(self, draw: Draw, reload: bool = False) -> None:
        """MSG-6, MSG-7: calls stored in one step, answered in later ones (some steps between), then a request."""
        ids, call = self.new_calls(draw)
        question = {"role": "user", "content": draw(texts)}
        extra = draw(st.sampled_from([{}, {}, {"importance": 0.9}, {"ttl": MINUTE}, {"ttl": 1}]))
        if draw(st.booleans()):
            self.send("add_messages", 0, messages=[question, call], **extra)
        else:
            self.send("add_message", 0, message=question)
            self.send("add_message", 0, message=call, **extra)
        for _ in range(draw(st.integers(1 if reload else 0, 2))):
            self.between(draw, ids, reload)
        self.answers(draw, ids)
        self.request(draw)

    def spot_answered_after_reload(self, draw: Draw) -> None:
        """MSG-6 with section 8: the calls answered after a load, or after another memory of the store wrote."""
        self.spot_answered_later(draw, reload=True)

    def between(self, draw: Draw, ids: list[str], reload: bool) -> None:
        """What happens between a call and its answers: a reload or another memory's step, or a turn that does or does not close the calls."""
        if reload:
            what = draw(
                st.sampled_from(["save-load", "load", "other-size", "other-turn", "other-answer", "other-call"])
            )
        else:
            what = draw(st.sampled_from(["wait", "user-turn", "human-turn", "legacy-tool", "fact", "save"]))
        if what == "save-load":
            self.send("save")
            self.send("load")
        elif what in ("load", "save"):
            self.send(what)
        elif what == "other-size":
            self.other("size")
        elif what == "other-turn":
            self.other("add_turn", role="user", text=draw(texts))
        elif what == "other-answer":
            self.other("add_message", message={"role": "tool", "tool_call_id": ids[0], "content": draw(texts)})
        elif what == "other-call":
            self.other("add_messages", messages=[self.new_calls(draw, 1)[1]])
        elif what == "wait":
            self.now += draw(waits) * MINUTE
        elif what == "user-turn":
            self.send("add_turn", 0, role="user", text=draw(texts))
        else:  # turns that are no sent message, stored under chat keys behind add_message's back (MSG-1, MSG-6)
            data = {
                "human-turn": {"role": "human", "content": "hello"},
                "legacy-tool": {"role": "tool", "content": "an old result"},
                "fact": "a fact under a chat key",
            }[what]
            self.send("remember", 0, key=f"chat:{draw(st.sampled_from([900, 901]))}", data=data)

    def answers(self, draw: Draw, ids: list[str]) -> None:
        """Tool results for some of ``ids`` in any order, sometimes with a duplicate, an unknown id, a user message or a new call among them; in one batch, one by one, or both."""
        order = draw(st.permutations(ids))[: draw(st.integers(0, len(ids)))]
        batch: list[dict[str, object]] = []
        for ident in order:
            result: dict[str, object] = {"role": "tool", "tool_call_id": ident, "content": draw(texts)}
            if draw(st.integers(0, 3)) == 0:
                result["name"] = draw(st.sampled_from(["lookup", None]))
            batch.append(result)
        odd = draw(st.sampled_from(["", "", "", "duplicate", "unknown", "user-between", "new-call", "answer"]))
        at = draw(st.integers(0, len(batch)))
        if odd == "duplicate" and order:
            batch.insert(at, {"role": "tool", "tool_call_id": order[0], "content": "again"})
        elif odd == "unknown":
            batch.insert(at, {"role": "tool", "tool_call_id": "call_none", "content": "lost"})
        elif odd == "user-between":
            batch.insert(at, {"role": "user", "content": draw(texts)})
        elif odd == "new-call":
            batch.insert(at, self.new_calls(draw, 1)[1])
        elif odd == "answer":
            batch.append({"role": "assistant", "content": "Here is what I found."})
        if not batch:
            return
        how = draw(st.sampled_from(["batch", "one-by-one", "first-alone"]))
        if how == "batch":
            self.send("add_messages", 0, messages=batch)
        elif how == "one-by-one":
            for message in batch:
                self.send("add_message", 0, message=message)
        else:
            self.send("add_message", 0, message=batch[0])
            if batch[1:]:
                self.send("add_messages", 0, messages=batch[1:])

    def request_args(self, draw: Draw) -> dict[str, object]:
        """``get_messages``' arguments with the prompt-cache options (MSG-11 .. MSG-16), now and then one bad value."""
        args: dict[str, object] = {"token_budget": draw(st.sampled_from([0, 12, 25, 40, 60, 100, 200]))}
        for name, values in REQUEST_OPTIONS:
            value = draw(st.sampled_from(values))
            if value is not ABSENT:
                args[name] = value
        if draw(st.integers(0, 5)) == 0:
            name, values = draw(st.sampled_from(BAD_REQUEST_OPTIONS))
            args[name] = draw(st.sampled_from(values))
        return args

    def request(self, draw: Draw, args: dict[str, object] | None = None) -> None:
        self.send("get_messages", 0, **(self.request_args(draw) if args is None else args))

    def spot_cache_options(self, draw: Draw) -> None:
        """MSG-11 .. MSG-17: an agent's runs, and after each a request with the same prompt-cache options (the stable cut's memo carried from one to the next)."""
        for key in draw(st.lists(st.sampled_from(["user:name", "pref", "allergy"]), max_size=2, unique=True)):
            self.send("remember", 0, key=key, data=draw(texts), importance=draw(st.sampled_from([0.5, 0.95])))
        args = self.request_args(draw)
        for _ in range(draw(st.integers(2, 4))):
            run = draw(st.sampled_from(["agent", "agent", "chat", "wait", "forget"]))
            if run == "agent":
                ids, call = self.new_calls(draw)
                batch = [{"role": "user", "content": draw(texts)}, call]
                batch += [{"role": "tool", "tool_call_id": i, "content": draw(texts) * 3} for i in ids]
                batch.append({"role": "assistant", "content": draw(texts)})
                self.send("add_messages", 0, messages=batch[: draw(st.integers(2, len(batch)))])
            elif run == "chat":
                self.send("add_turn", 0, role="user", text=draw(texts))
                self.send("add_turn", 0, role="assistant", text=draw(texts))
            elif run == "wait":
                self.now += draw(waits) * MINUTE
            else:
                self.send("forget", 0, key=f"chat:{draw(st.integers(1, 6))}")
            self.request(draw, args)

    def spot_two_memories(self, draw: Draw) -> None:
        """Section 8: two memories of one store write and read in turn (with ``shared``, each change reloads first)."""
        for _ in range(draw(st.integers(2, 5))):
            op = draw(
                st.sampled_from(
                    [
                        "add_turn",
                        "call",
                        "answer",
                        "remember",
                        "forget",
                        "save",
                        "load",
                        "get_messages",
                        "recall",
                        "stored",
                        "clear",
                    ]
                )
            )
            second = draw(st.booleans())
            send = self.other if second else (lambda op, **args: self.send(op, 0, **args))
            if op == "add_turn":
                send("add_turn", role=draw(st.sampled_from(["user", "assistant"])), text=draw(texts))
            elif op == "call":
                ids, call = self.new_calls(draw)
                self.open_ids = ids
                send("add_messages", messages=[{"role": "user", "content": draw(texts)}, call])
            elif op == "answer":
                ident = draw(st.sampled_from(getattr(self, "open_ids", None) or ["call_none"]))
                send("add_message", message={"role": "tool", "tool_call_id": ident, "content": draw(texts)})
            elif op == "remember":
                send("remember", key=draw(st.sampled_from(KEYS)), data=draw(texts))
            elif op == "forget":
                send("forget", key=draw(st.sampled_from(KEYS)))
            elif op == "get_messages":
                send("get_messages", **self.request_args(draw))
            elif op == "recall":
                send("recall", query=draw(st.sampled_from(WORDS)))
            else:
                send(op)
            self.now += draw(st.sampled_from([0, 0, 1])) * MINUTE

    def spot_big_numbers(self, draw: Draw) -> None:
        """NUM-1, TIME-1 with messages: numbers beyond a double's exact integers as a budget, an option, a ttl, an importance, in a message, and an integer now beyond 2**53."""
        number = draw(st.sampled_from(BIG_NUMBERS))
        where = draw(st.sampled_from(["budget", "keep_results", "low_mark", "ttl", "importance", "content", "now"]))
        if where == "now":
            odd = draw(st.sampled_from([1, 3, 5]))
            self.now = 2**53 + odd
            ids, call = self.new_calls(draw, 1)
            self.send("add_messages", 0, messages=[{"role": "user", "content": "late"}, call], ttl=1000 + odd)
            self.now += 1000 + odd - draw(st.sampled_from([0, 1]))
            self.send("add_message", 0, message={"role": "tool", "tool_call_id": ids[0], "content": "in time?"})
            self.request(draw)
            return
        if where in ("ttl", "importance"):
            self.send("add_message", 0, message={"role": "user", "content": "big"}, **{where: number})
            self.send("get_recent", 0, n=2)
        elif where == "content":
            self.send("remember", 0, key="chat:950", data={"role": "user", "content": [{"type": "data", "n": number}]})
            self.send("stored")
        else:
            args = self.request_args(draw)
            args["token_budget" if where == "budget" else where] = number
            self.send("get_messages", 0, **args)

    def spot_full_messages(self, draw: Draw) -> None:
        """MSG-5: messages each with one optional field or one odd spelling (a name, content parts, a null field, calls without a type or arguments), or with every optional field; stored and read back."""
        batch: list[dict[str, object]] = []
        for _ in range(draw(st.integers(1, 3))):
            role = draw(st.sampled_from(["user", "assistant", "assistant", "system", "developer", "tool"]))
            message: dict[str, object] = {"role": role, "content": draw(texts)}
            if role == "tool":
                ids, call = self.new_calls(draw, 1)
                batch.append(call)
                message["tool_call_id"] = ids[0]
            elif role == "assistant" and draw(st.booleans()):
                message = self.new_calls(draw)[1]
            field, values = draw(st.sampled_from(MESSAGE_FIELDS))
            if field == "role":
                message["role"] = draw(st.sampled_from(values))
                field, values = "name", [ABSENT]
            value = draw(st.sampled_from(values))
            if field == "tool_calls" and role != "assistant":
                field, value = "name", "bot"
            if field == "every":
                message["name"] = "bot"
                message["content"] = CONTENTS[4]
            elif field == "function":  # a change inside the first call: its type or arguments absent or null
                calls = message.get("tool_calls")
                if isinstance(calls, list):
                    call = dict(calls[0])
                    key, spelling = value
                    target = call if key == "type" else dict(call["function"])
                    if spelling is ABSENT:
                        target.pop(key, None)
                    else:
                        target[key] = spelling
                    if key != "type":
                        call["function"] = target
                    message["tool_calls"] = [call, *calls[1:]]
            elif value is not ABSENT:
                message[field] = value
            batch.append(message)
        if draw(st.booleans()):
            self.send("add_messages", 0, messages=batch)
        else:
            for message in batch:
                self.send("add_message", 0, message=message)
        read = draw(st.sampled_from(["stored", "get_recent", "get_messages", "get_context"]))
        self.send(read, 0, **({"token_budget": 200} if read in ("get_messages", "get_context") else {}))


@pytest.fixture(scope="module")
def machine():
    """The machine class bound to the configured backend, its subprocess stopped at the end."""
    Differential.command = backend_command()
    yield Differential
    if Differential.process is not None:
        Differential.process.stop()
        Differential.process = None


def test_a_backend_agrees_with_this_library_step_by_step(machine):
    """Random remember/read/recall/context/save/load sequences give the same results here and in the backend."""
    cases, steps = size()
    run_state_machine_as_test(machine, settings=settings(max_examples=cases, stateful_step_count=steps))


class Broken(Differential):
    """The machine against a backend with one deliberate bug."""

    command: ClassVar[list[str]] = [*SERVE, "--bug", "string-text-as-json"]
    process: ClassVar[Subprocess | None] = None


def test_the_machine_catches_a_broken_backend_and_writes_a_vector():
    """Against a backend that renders a string as JSON, the machine fails and its report is a vector that the runner also fails on."""
    try:
        with pytest.raises(AssertionError, match="as a vector") as failure:
            run_state_machine_as_test(
                Broken, settings=settings(max_examples=300, stateful_step_count=10, database=None)
            )
    finally:
        if Broken.process is not None:
            Broken.process.stop()
            Broken.process = None
    vector = json.loads(str(failure.value).split("as a vector:\n", 1)[1].strip().splitlines()[0])
    assert vector["steps"] and vector["steps"][-1]["expect"]
    vector["id"] = "machine-shrunk"
    assert [step["expect"] for step in vector["steps"]] == reference.run_case(vector)["results"]
    report = run(Subprocess(Broken.command, env=default_env()), [vector])
    assert report.summary() == "0 passed, 1 failed, 0 skipped, 0 errored"
