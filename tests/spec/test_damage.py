"""Nothing lost: damaged files, deep values, links and bad input, as properties (ENT-13, PER-13 .. PER-18, WRP-3).

The tests storage engines use. A damaged file must either load with every
dropped entry counted, said and preserved, or raise the one documented
error; it must never raise anything else, never look like an empty memory
that loaded fine, and never change on disk. Bad input anywhere in the public
API must give the documented default or a TypeError/ValueError, and a call
that raised must have changed nothing, in memory or in the file.
"""

from __future__ import annotations

import gc
import json
import math
import os
import stat
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.core.document import VERSION
from sentinel_memory.stores.jsontext import dumps
from support import at_depth, check_well_formed, keep_writing, nest, saved_then_unloaded, stack_depth

from .strategies import json_data

T0 = 1_792_310_400_000


def sample_document() -> bytes:
    """A valid saved file of a few entries of every kind, as the store writes it."""
    store = sm.MemoryStore()
    mem = sm.create_memory(store=store, clock=lambda: T0, load=False)
    mem.remember("user:name", "Jakub", importance=0.9)
    mem.remember("user:allergy", {"what": "peanuts", "level": [1, 2.5, None, True]}, importance=1, ttl=60_000)
    mem.remember("chat:1", "česky 😀", importance=0.1)
    mem.working.set({"task": "refund", "step": 2})
    mem.save()
    return dumps(store.load())


VALID = sample_document()


def check_load(folder: Path, content: bytes) -> str:
    """Load ``content`` from a file as a memory would, and check the damaged-file contract; returns what happened."""
    path = folder / "memory.json"
    path.write_bytes(content)
    for leftover in folder.glob("memory.json.*.orig"):
        leftover.unlink()
    store = sm.JsonFileStore(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mem = sm.create_memory(store=store, clock=lambda: T0, autosave=True)
        except sm.DamagedStoreError as error:
            assert error.location == str(path) and str(path) in str(error)
            assert path.read_bytes() == content
            return "damaged"
    assert path.read_bytes() == content  # loading alone never writes
    # It loaded: every listed entry is accounted for, so an empty memory is
    # one whose file listed no valid entry, never a silent loss.
    saved = json.loads(content.decode("utf-8"))
    listed = saved["entries"]
    result = mem.last_load
    assert result.loaded + result.dropped == len(listed)
    # PER-20: a working memory that held something and did not load is counted as dropped, never lost silently.
    held = saved.get("working")
    if isinstance(held, dict) and held.get("data") not in (None, {}) and not mem.state.working.data:
        assert result.working_dropped
    assert result.loaded - result.compacted == mem.stats()["stored"]
    warned = [w for w in caught if issubclass(w.category, sm.LoadWarning)]
    assert bool(warned) == bool(result.lost)
    check_well_formed(mem.state)
    if result.lost:
        # The step after a lossy load: autosaved writes, the original preserved first (PER-14, PER-19).
        mem.remember("after:load", "written after the load", importance=1)
        turn = mem.add_turn("user", "and a turn", importance=1).key
        (copy,) = folder.glob("memory.json.*.orig")
        assert copy.read_bytes() == content
        again = sm.create_memory(store=store, clock=lambda: T0, limit=10**6)
        assert again.get("after:load") == "written after the load" and again.get(turn) == {
            "role": "user",
            "content": "and a turn",
        }
        assert sm.core.to_document(again.state) == sm.core.to_document(mem.state)
        return "lossy"
    keep_writing(mem.state, T0)
    return "loaded"


def test_per_13_truncation_at_every_offset(tmp_path):
    """PER-13, PER-4: a valid file cut at every byte offset is damage (or, at the end, the whole file), never another error."""
    outcomes = {check_load(tmp_path, VALID[:cut]) for cut in range(len(VALID))}
    assert outcomes == {"damaged"}
    assert check_load(tmp_path, VALID) == "loaded"


def test_per_13_every_single_bit_flip(tmp_path):
    """PER-13, PER-14, PER-20, PER-22: each of thousands of single bit flips loads with its losses (the working memory's too) counted, said and preserved, or is damage, or is a valid document that loads as written."""
    flips = [(byte, bit) for byte in range(len(VALID)) for bit in range(8)]
    assert len(flips) >= 2000
    outcomes = {}
    original = json.loads(VALID.decode("utf-8"))
    for byte, bit in flips:
        damaged = bytearray(VALID)
        damaged[byte] ^= 1 << bit
        outcome = check_load(tmp_path, bytes(damaged))
        if outcome == "loaded" and json.loads(bytes(damaged).decode("utf-8")) != original:
            outcome = "changed"  # PER-22: no checksum, so a flip that leaves a valid document is not seen
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"\n{len(flips)} single bit flips: {dict(sorted(outcomes.items()))}")
    assert outcomes["damaged"] > 0 and outcomes.get("lossy", 0) > 0 and outcomes.get("changed", 0) > 0


SHAPES = [
    b"",
    b" ",
    b"\n\t ",
    b"\xef\xbb\xbf" + VALID,
    VALID.decode("utf-8").encode("utf-16"),
    b"null",
    b"[]",
    b"0",
    b'"x"',
    b"{}",
    b'{"version": 1}',
    b'{"version": "1", "entries": []}',
    b'{"version": true, "entries": []}',
    b'{"version": 1, "entries": {}}',
    b'{"version": 1, "entries": [], "version": 1}',
    b"[" * 100_000,
    b'{"a":' * 50_000,
    b'{"version": 1, "entries": [NaN]}',
    b'{"version": 1, "entries": [Infinity]}',
    b'{"version": 1, "entries": [1e400]}',
    b'{"version": 1, "entries": [' + b"9" * 5000 + b"]}",
    b'{"version": 1, "entries": ["\xed\xa0\x80"]}',
    b'{"version": 1, "entries": [], "working": ' + b"[" * 300 + b"]" * 300 + b"}",
]


@pytest.mark.parametrize("content", SHAPES, ids=range(len(SHAPES)))
def test_per_13_empty_blank_bom_utf16_wrong_shapes_and_bombs(tmp_path, content):
    """PER-13, PER-5, PER-7: each odd file is damage, or a document that loads with everything counted."""
    assert check_load(tmp_path, content) in {"damaged", "loaded", "lossy"}


@example(content=b"\x00")
@example(content=b'{"version": 1, "entries": [{}]}')
@given(
    content=st.one_of(st.binary(max_size=200), st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")))
)
def test_per_13_random_bytes(tmp_path_factory, content):
    """PER-13: random bytes and random text are damage or load with everything counted; no other exception."""
    check_load(tmp_path_factory.mktemp("random"), content)


@given(
    entries=st.lists(
        st.fixed_dictionaries(
            {"key": st.one_of(st.text(max_size=3), st.integers()), "data": json_data},
            optional={
                "importance": st.one_of(st.floats(), st.integers(-1, 2), st.just(10**400), st.text(max_size=2)),
                "createdAt": st.one_of(st.integers(), st.floats(), st.none()),
                "updatedAt": st.one_of(st.integers(), st.just(10**399), st.floats()),
                "expiresAt": st.one_of(st.none(), st.integers(), st.text(max_size=2)),
            },
        ),
        max_size=6,
    )
)
def test_per_14_documents_with_invalid_entries(tmp_path_factory, entries):
    """PER-6, PER-14, NUM-1: documents with any mix of invalid entries load with every drop counted, said and preserved."""
    text = json.dumps({"version": VERSION, "entries": entries}, allow_nan=True)
    check_load(tmp_path_factory.mktemp("entries"), text.encode("utf-8"))


@given(
    depth=st.integers(sm.MAX_DEPTH - 3, sm.MAX_DEPTH + 3),
    where=st.sampled_from(["data", "cache", "working"]),
    spare=st.integers(40, 200),  # the frames a load takes before it parses (driving the store, the path) are fixed
)
def test_ent_13_the_nesting_limit_and_loading_from_any_depth(tmp_path_factory, depth, where, spare):
    """ENT-13, PER-17: up to MAX_DEPTH is accepted and loads again from a stack with little room; deeper raises ValueError."""
    path = tmp_path_factory.mktemp("deep") / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0)
    value = nest(depth)
    change = {
        "data": lambda: mem.remember("blob", value),
        "cache": lambda: mem.cache.put("blob", value),
        "working": lambda: mem.working.set({"blob": nest(depth - 1)}),
    }[where]
    if depth > sm.MAX_DEPTH:
        with pytest.raises(ValueError):
            change()
        assert mem.size() == 0 and mem.working.get() == {} and mem.cache.get("blob") is None
        return
    change()
    room = sys.getrecursionlimit() - stack_depth() - spare  # leave the load only ``spare`` frames
    again = at_depth(room, lambda: sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: T0))
    if where == "data":
        assert again.get("blob") == value
    elif where == "working":
        assert again.working.get() == {"blob": nest(depth - 1)}


@given(
    mode=st.sampled_from([0o600, 0o640, 0o644, 0o660, 0o400 | 0o200]), links=st.integers(0, 3), levels=st.integers(0, 3)
)
def test_per_15_per_16_links_modes_and_the_lock(tmp_path_factory, mode, links, levels):
    """PER-15, PER-16: through a chain of symlinks, the real file is replaced with its mode kept; the lock file stays put."""
    root = tmp_path_factory.mktemp("links")
    folder = root
    for level in range(levels):
        folder = folder / f"new{level}"
    real = folder / "memory.json"
    store = sm.JsonFileStore(real)
    store.save({"version": 1, "entries": []})
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600
    created = [root.joinpath(*[f"new{i}" for i in range(level + 1)]) for level in range(levels)]
    assert all(stat.S_IMODE(os.stat(p).st_mode) == 0o700 for p in created)
    os.chmod(real, mode)
    path = real
    for i in range(links):
        link = root / f"link{i}.json"
        link.symlink_to(path)
        path = link
    lock = folder / ".memory.json.lock"
    lock_inode = os.stat(lock).st_ino
    sm.JsonFileStore(path).save({"version": 1, "entries": [], "working": {"data": {"n": links}, "updatedAt": 1}})
    assert stat.S_IMODE(os.stat(real).st_mode) == mode and os.stat(lock).st_ino == lock_inode
    assert all((root / f"link{i}.json").is_symlink() for i in range(links))
    assert sm.JsonFileStore(path).load()["working"]["data"] == {"n": links}


CHANGES = {
    "remember": lambda mem: mem.remember("archive", "x"),
    "forget": lambda mem: mem.forget("keep"),
    "clear": lambda mem: mem.clear(),
    "compact": lambda mem: mem.compact(),
    "load": lambda mem: mem.load(),
    "cache.put": lambda mem: mem.cache.put("c", 1),
    "cache.delete": lambda mem: mem.cache.delete("c"),
    "cache.clear": lambda mem: mem.cache.clear(),
    "working.set": lambda mem: mem.working.set({"a": 1}),
    "working.clear": lambda mem: mem.working.clear(),
}
READS = {
    "get": lambda mem: mem.get("keep"),
    "has": lambda mem: mem.has("keep"),
    "size": lambda mem: mem.size(),
    "recall": lambda mem: mem.recall("keep"),
    "context": lambda mem: mem.get_context(token_budget=50),
    "stats": lambda mem: mem.stats(),
    "working.get": lambda mem: mem.working.get(),
}


@given(
    change=st.sampled_from(sorted(CHANGES)),
    read=st.sampled_from(sorted(READS)),
    caught=st.booleans(),
    from_save=st.booleans(),
)
def test_wrp_3_changes_from_side_effects_are_refused(change, read, caught, from_save):
    """WRP-3, WRP-1: a change from on_evict or from the store's save raises ReentrantCallError; reads work and see the old state."""
    seen: list = []
    armed: list = []
    mem: sm.Memory

    def side_effect(*_):
        seen.append(READS[read](mem))
        try:
            CHANGES[change](mem)
        except sm.ReentrantCallError:
            seen.append("refused")
            if not caught:
                raise

    class SavingStore(sm.MemoryStore):
        def save(self, document):
            if from_save and armed:
                side_effect()
            super().save(document)

    mem = sm.create_memory(
        limit=1, store=SavingStore(), autosave=True, clock=lambda: T0, on_evict=None if from_save else side_effect
    )
    mem.remember("keep", "v", importance=1)
    armed.append(True)
    before = mem.state
    if caught:
        mem.remember("chatter", "x", importance=0.1)
        assert "refused" in seen and mem.state is not before
    else:
        with pytest.raises(sm.ReentrantCallError):
            mem.remember("chatter", "x", importance=0.1)
        assert mem.state is before


# -- bad input across the whole public API -------------------------------------------

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.just(10**400),
    st.just(-(10**5000)),
    st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e-300, 1e300]),
    st.text(max_size=4),
    st.sampled_from(["", "\ud800", "a\udfffb", "k", "0.5", "60000"]),
    st.binary(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just(nest(sm.MAX_DEPTH + 1)),
    st.just({"a": nest(sm.MAX_DEPTH)}),
    st.just({1: "x"}),
    st.just({"s": {1}}),
    st.just(object()),
    st.just(lambda text: -1),
    st.just(lambda text: []),
    st.just(lambda entry: 3),
    st.just(len),
    st.just("x" * 10_000),
    st.just([1] * 1000),
)

CALLS = {
    "remember": lambda m, a: m.remember(a[0], a[1], importance=a[2], ttl=a[3]),
    "get": lambda m, a: m.get(a[0], a[1]),
    "has": lambda m, a: m.has(a[0]),
    "contains": lambda m, a: a[0] in m,
    "forget": lambda m, a: m.forget(a[0]),
    "get_recent": lambda m, a: m.get_recent(a[0]),
    "recall": lambda m, a: m.recall(a[0], limit=a[1]),
    "get_context": lambda m, a: m.get_context(
        token_budget=a[0], query=a[1], tokenizer=a[2], format=a[3], separator=a[4]
    ),
    "cache.put": lambda m, a: m.cache.put(a[0], a[1], ttl=a[2]),
    "cache.get": lambda m, a: m.cache.get(a[0], a[1]),
    "cache.delete": lambda m, a: m.cache.delete(a[0]),
    "working.set": lambda m, a: m.working.set(a[0]),
    "create_memory": lambda m, a: sm.create_memory(
        limit=a[0], recency_window=a[1], working_ttl=a[2], cache_ttl=a[3], tokenizer=a[4], load=False
    ),
    "create_memory kinds": lambda m, a: sm.create_memory(
        store=a[0], clock=a[1], on_evict=a[2], autosave=a[3], load=a[4]
    ),
    "estimate_tokens": lambda m, a: sm.estimate_tokens(a[0]),
    "additive": lambda m, a: sm.additive(a[0]),
}


@given(calls=st.lists(st.tuples(st.sampled_from(sorted(CALLS)), st.tuples(*[anything] * 5)), min_size=1, max_size=6))
def test_per_9_bad_input_anywhere_changes_nothing_when_it_raises(tmp_path_factory, calls):
    """NUM-1, ENT-1, ENT-2, ENT-13, CTX-5, OPT-1, WRP-1, PER-9: wrong types, bad numbers, deep and huge values give a default or TypeError/ValueError, and a raising call changes neither the memory nor its file."""
    path = tmp_path_factory.mktemp("bad") / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0, limit=3)
    mem.remember("k", {"a": [1]}, importance=0.7)
    for name, args in calls:
        before, on_disk = mem.state, path.read_bytes()
        try:
            CALLS[name](mem, args)
        except (TypeError, ValueError):
            assert mem.state is before and path.read_bytes() == on_disk
        stats = mem.stats()
        assert stats["size"] <= stats["limit"] == 3 and stats["stored"] >= stats["size"]
        assert sm.core.to_document(mem.state, generation=mem.generation) == json.loads(path.read_text())


@given(
    raw=st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"x", b"[]", b"{}"]), max_size=60).map(b"".join)
)
def test_per_13_the_quick_nesting_bound_decides_as_the_exact_depth(raw):
    """PER-13, ENT-13: the nesting scan never reports less than the exact bracket depth, and decides the limit alike."""
    import itertools

    from sentinel_memory.stores import jsontext

    structure = jsontext._ESCAPE.sub(b"", raw).translate(None, jsontext._NOT_STRUCTURE)
    outside = b"".join(structure.split(b'"')[::2])
    exact = max(itertools.accumulate(map(jsontext._STEP.__getitem__, outside)), default=0)
    found = jsontext._nesting(raw)
    assert found >= exact
    assert found == exact or found <= 2 * jsontext._QUICK_ROUNDS
    deep = b"[" * (jsontext.MAX_TEXT_DEPTH + 1) + raw + b"]" * (jsontext.MAX_TEXT_DEPTH + 1)
    assert jsontext._nesting(deep) > jsontext.MAX_TEXT_DEPTH


#: Text made of the characters the structure scan looks at, escaped or not.
_tricky_text = st.text(alphabet=':"\\{}[]x\u00e9', max_size=4)
_tricky_json = st.recursive(
    st.none() | st.integers() | _tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_tricky_text, children, max_size=3),
    max_leaves=12,
)


@given(value=st.dictionaries(_tricky_text, _tricky_json, min_size=1, max_size=3), wrap=st.integers(0, 3))
def test_per_13_a_repeated_key_is_found_at_any_depth(tmp_path_factory, value, wrap):
    """PER-13: an object holding one key twice, however deep and whatever its keys, makes the file damaged, naming the key."""
    key = next(iter(value))
    text = json.dumps(value)[:-1] + ", " + json.dumps(key) + ": null}"
    for _ in range(wrap):
        text = '{"entries": [' + text + "]}"
    path = tmp_path_factory.mktemp("repeat") / "memory.json"
    path.write_text('{"version": 1, "entries": [], "working": ' + text + "}", encoding="utf-8")
    with pytest.raises(sm.DamagedStoreError, match="appears twice"):
        sm.JsonFileStore(path).load()


# A full collection per example, in a process holding the whole test suite: a few examples cover the eight cases.
@settings(max_examples=12)
@given(entries=st.integers(1, 60), promote=st.booleans(), enabled=st.booleans(), frozen=st.booleans())
def test_per_18_what_a_load_does_with_the_cycle_collector(tmp_path_factory, entries, promote, enabled, frozen):
    """PER-18: the collector is left on or off as found, the entries reach the oldest generation exactly when the rule says, and a frozen object stays frozen."""
    from sentinel_memory import memory

    unfrozen = gc.get_freeze_count() == 0  # Python 3.12 starts with frozen objects of its own
    assume(unfrozen or not frozen)  # the test unfreezes what it froze, and must not unfreeze those
    reader = saved_then_unloaded(tmp_path_factory.mktemp("gc") / "memory.json", entries)
    marker = [object()]  # a container, so the collector tracks it
    before = memory.PROMOTE_AFTER_LOAD
    memory.PROMOTE_AFTER_LOAD = 0 if promote else 10**9
    gc.collect()  # no young collection is due that would move the entries there on its own
    try:
        if frozen:
            gc.freeze()
        if not enabled:
            gc.disable()
        reader.load()
        assert gc.isenabled() == enabled
        oldest = {id(item) for item in gc.get_objects(generation=2)}
        assert (id(reader._state.entries["k0"]) in oldest) == (promote and enabled and unfrozen and not frozen)
        if frozen:
            assert not any(item is marker for generation in range(3) for item in gc.get_objects(generation=generation))
    finally:
        memory.PROMOTE_AFTER_LOAD = before
        gc.enable()
        if frozen:
            gc.unfreeze()
