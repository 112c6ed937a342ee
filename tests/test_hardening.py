"""Nothing lost: the defects an adversarial user found, one test each (ENT-13, PER-13 .. PER-17, WRP-3).

Each test here failed before the fix it pins.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import warnings

import pytest

import sentinel_memory as sm
from support import T0, at_depth, nest, stack_depth

EMPTY = {"version": 1, "entries": [], "working": {"data": {}, "updatedAt": None}}


def raw_entry(key="k", **fields):
    entry = {"key": key, "data": "v", "importance": 0.5, "createdAt": T0, "updatedAt": T0, "expiresAt": None}
    entry.update(fields)
    return entry


def write(path, content) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    path.write_bytes(data)
    return data


# -- 1. temp files of killed saves ---------------------------------------------------


def test_per_9_a_save_removes_temp_files_left_by_killed_saves(tmp_path):
    """PER-9: the temp files a save killed mid-way left behind (full copies of the memory) go at the next save."""
    store = sm.JsonFileStore(tmp_path / "memory.json")
    store.save(EMPTY)
    leftovers = [tmp_path / ".memory.json.k1ll3d.tmp", tmp_path / ".memory.json.0ther.tmp"]
    for leftover in leftovers:
        leftover.write_text('{"version": 1, "entries": [{"key": "forgotten secret"}]}')
    (tmp_path / "unrelated.tmp").write_text("not ours")
    store.save(EMPTY)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".memory.json.lock", "memory.json", "unrelated.tmp"]


# -- 2. nesting --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["remember", "cache", "working"])
def test_ent_13_values_nested_too_deep_are_refused(mem, where):
    """ENT-13: data, cache values and working patches nested more than MAX_DEPTH deep raise ValueError; nothing changes."""
    deep = nest(sm.MAX_DEPTH + 1)
    before = mem.state
    with pytest.raises(ValueError, match="nested more than 100"):
        if where == "remember":
            mem.remember("blob", deep)
        elif where == "cache":
            mem.cache.put("blob", deep)
        else:
            mem.working.set({"blob": nest(sm.MAX_DEPTH)})  # the patch itself is one level
    assert mem.state is before


def test_ent_13_the_deepest_accepted_value_loads_again_from_a_deep_stack(tmp_path, make):
    """ENT-13, PER-17: data at the nesting limit is saved, and loads again from a call stack near the recursion limit."""
    path = tmp_path / "memory.json"
    mem = make(store=sm.JsonFileStore(path), autosave=True)
    mem.remember("blob", nest(sm.MAX_DEPTH))
    mem.remember("plain", "still here")
    mem.working.set({"deep": nest(sm.MAX_DEPTH - 1)})
    room = sys.getrecursionlimit() - stack_depth() - 40  # leave the load only a few dozen frames

    again = at_depth(room, lambda: make(store=sm.JsonFileStore(path)))
    assert again.get("blob") == nest(sm.MAX_DEPTH) and again.get("plain") == "still here"
    assert again.working.get() == {"deep": nest(sm.MAX_DEPTH - 1)}


@pytest.mark.parametrize("bomb", ["[" * 100_000, '{"a":' * 50_000, "[" * 500 + "]" * 500])
def test_per_13_bracket_bombs_are_damage_not_recursion_errors(tmp_path, make, bomb):
    """PER-13: a file nested absurdly deep raises DamagedStoreError, not RecursionError, and is left untouched."""
    path = tmp_path / "memory.json"
    data = write(path, bomb)
    with pytest.raises(sm.DamagedStoreError, match="nested"):
        make(store=sm.JsonFileStore(path))
    assert path.read_bytes() == data


def test_ent_13_an_entry_nested_too_deep_by_other_software_is_dropped_alone(tmp_path, make):
    """ENT-13, PER-6, PER-14: a file entry deeper than the limit is dropped and counted; the others load."""
    path = tmp_path / "memory.json"
    write(path, json.dumps({"version": 1, "entries": [raw_entry("deep", data=nest(150)), raw_entry("ok")]}))
    with pytest.warns(sm.LoadWarning):
        mem = make(store=sm.JsonFileStore(path))
    assert mem.get("ok") == "v" and not mem.has("deep")
    assert mem.last_load == sm.LoadResult(loaded=1, dropped=1)


# -- 3. what a load drops is said and kept -----------------------------------------------


def test_per_14_a_lossy_load_warns_keeps_its_result_and_preserves_the_original(tmp_path, make):
    """PER-14: dropped entries give a LoadWarning and last_load; the original file is copied beside it before the first save."""
    path = tmp_path / "memory.json"
    original = write(path, json.dumps({"version": 1, "entries": [raw_entry("good"), raw_entry("bad", importance=2)]}))
    with pytest.warns(sm.LoadWarning, match="dropped 1 invalid"):
        mem = make(store=sm.JsonFileStore(path), autosave=True)
    assert mem.last_load == sm.LoadResult(loaded=1, dropped=1, compacted=0) and mem.last_load.lost == 1
    assert path.read_bytes() == original  # loading alone changes nothing
    mem.remember("new", "entry")
    copies = sorted(tmp_path.glob("memory.json.*.orig"))
    assert len(copies) == 1 and copies[0].read_bytes() == original
    mem.remember("newer", "entry")
    assert len(list(tmp_path.glob("memory.json.*.orig"))) == 1  # once, before the first overwrite


def test_per_14_entries_compacted_away_by_a_smaller_limit_are_preserved_too(tmp_path, make, clock):
    """PER-8, PER-14: opening a file with a smaller limit compacts, warns, and keeps the original before autosaving."""
    path = tmp_path / "memory.json"
    big = make(store=sm.JsonFileStore(path), autosave=True)
    for i in range(5):
        big.remember(f"k{i}", i, importance=i / 10)
    original = path.read_bytes()
    evicted = []
    with pytest.warns(sm.LoadWarning, match="compacted 3"):
        small = make(store=sm.JsonFileStore(path), autosave=True, limit=2, on_evict=evicted.append)
    assert small.last_load == sm.LoadResult(loaded=5, dropped=0, compacted=3)
    assert [e.key for e in evicted[0].evicted] == ["k0", "k1", "k2"]
    (copy,) = tmp_path.glob("memory.json.*.orig")
    assert copy.read_bytes() == original and len(json.loads(path.read_text())["entries"]) == 2


def test_per_14_a_store_without_preserve_is_named_in_the_warning(make):
    """PER-14: a custom store with no preserve() still gets the warning, which says the original cannot be kept."""

    class Plain:
        def load(self):
            return {"version": 1, "entries": [raw_entry(importance="high")]}

        def save(self, document):
            pass

    with pytest.warns(sm.LoadWarning, match="cannot be kept"):
        make(store=Plain())


def test_per_14_memory_store_preserves_in_the_process(make):
    """PER-14: MemoryStore.preserve keeps the document it held before a lossy load's first save."""
    store = sm.MemoryStore()
    document = {"version": 1, "entries": [raw_entry("a"), raw_entry("")]}
    store.save(document)
    with pytest.warns(sm.LoadWarning):
        mem = make(store=store)
    mem.save()
    assert store.preserved == [document]


# -- 4. documents that are not memories --------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("null", "top-level null"),
        ("[]", "top-level list"),
        ('"memory"', "top-level str"),
        ('{"version": 1, "entries": [{"key": "a", "data": 1}], "entries": []}', "'entries' appears twice"),
        ('{"version": 1, "entries": [{"key": "a", "key": "b"}]}', "'key' appears twice"),
        ('{"version": 2, "entries": []}', "unknown memory document version 2"),
        ('{"version": 1}', "needs a list of entries"),
    ],
)
def test_per_13_files_that_are_not_memory_documents_are_damage(tmp_path, make, content, problem):
    """PER-5, PER-13: null, a non-object, a repeated key anywhere or a foreign shape raise DamagedStoreError; the file stays."""
    path = tmp_path / "memory.json"
    data = write(path, content)
    with pytest.raises(sm.DamagedStoreError, match=problem):
        make(store=sm.JsonFileStore(path), autosave=True)
    assert path.read_bytes() == data


# -- 5. which file is damaged -------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"  \n",
        b"\xef\xbb\xbf{}",
        '{"version": 1}'.encode("utf-16"),
        b'{"a": "\xff"}',
        b'{"n": ' + b"1" * 5000 + b"}",
    ],
)
def test_per_13_every_damaged_file_names_itself(tmp_path, content):
    """PER-13: empty, blank, BOM, UTF-16, bad UTF-8 and overlong numbers all raise one ValueError subclass naming the path."""
    path = tmp_path / "users" / "u42" / "memory.json"
    write(path, content)
    with pytest.raises(sm.DamagedStoreError) as raised:
        sm.JsonFileStore(path).load()
    assert str(path) in str(raised.value) and raised.value.location == str(path)
    assert isinstance(raised.value, ValueError) and raised.value.problem in str(raised.value)


def test_per_13_a_custom_store_with_a_damaged_document_is_named(make):
    """PER-5, PER-13: a store with no path of its own is named by its repr in the damage error."""

    class UserStore(sm.MemoryStore):
        def __repr__(self):
            return "UserStore('u42')"

        def load(self):
            return {"version": 7, "entries": []}

    with pytest.raises(sm.DamagedStoreError, match=r"UserStore\('u42'\): unknown memory document version 7") as raised:
        make(store=UserStore())
    assert raised.value.location == "UserStore('u42')"


def test_per_13_a_folder_in_place_of_the_file_is_an_os_error(tmp_path):
    """PER-13: loading a path that is a folder raises the system's OSError, not a damage error."""
    (tmp_path / "memory.json").mkdir()
    with pytest.raises(IsADirectoryError):
        sm.JsonFileStore(tmp_path / "memory.json").load()


# -- 6. links and permissions -------------------------------------------------------------


def test_per_16_saving_through_a_symlink_updates_its_target(tmp_path, make):
    """PER-16: a symlinked target keeps its link, and the file it points at is the one updated."""
    real = tmp_path / "real" / "memory.json"
    write(real, json.dumps(EMPTY))
    link = tmp_path / "memory.json"
    link.symlink_to(real)
    mem = make(store=sm.JsonFileStore(link), autosave=True)
    mem.remember("k", "v")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["entries"][0]["key"] == "k"


def test_per_15_permissions_are_kept_and_new_ones_are_private(tmp_path):
    """PER-15: an existing file keeps its permission bits; new files are 0600 and new folders 0700."""
    store = sm.JsonFileStore(tmp_path / "a" / "b" / "memory.json")
    store.save(EMPTY)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert {stat.S_IMODE(os.stat(p).st_mode) for p in (tmp_path / "a", tmp_path / "a" / "b")} == {0o700}
    os.chmod(store.path, 0o640)
    store.save(EMPTY)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o640


def test_per_16_a_hard_linked_file_warns_that_its_other_names_go_stale(tmp_path):
    """PER-16: an atomic save cannot keep hard links; the store says so with a StoreWarning."""
    store = sm.JsonFileStore(tmp_path / "memory.json")
    store.save(EMPTY)
    os.link(store.path, tmp_path / "other-name.json")
    with pytest.warns(sm.StoreWarning, match="hard link"):
        store.save(EMPTY)


# -- 7. a ttl that rounds away -------------------------------------------------------------


def test_ent_12_an_entry_expired_on_arrival_is_returned_after_a_clean_commit(tmp_path):
    """ENT-12, WRP-1: with now + ttl == now in doubles, remember returns the entry; file, on_evict and state agree."""
    reports = []
    path = tmp_path / "memory.json"
    mem = sm.create_memory(
        limit=1, clock=lambda: 1_700_000_000_000, store=sm.JsonFileStore(path), autosave=True, on_evict=reports.append
    )
    mem.remember("a", 1)
    entry = mem.remember("b", "x", ttl=1e-5)
    assert entry.key == "b" and entry.expires_at == 1_700_000_000_000
    assert [e.key for e in reports[0].expired] == ["b"] and not mem.has("b")
    assert [e["key"] for e in json.loads(path.read_text())["entries"]] == ["a"]


# -- 8. ints no double can hold -------------------------------------------------------------


def test_num_1_an_int_beyond_the_double_range_is_not_a_number(mem, tmp_path):
    """NUM-1, ENT-2: ttl=10**5000 is invalid (no expiry) and saving still works; such an int as data is refused."""
    mem.remember("k", "v", ttl=10**5000)
    assert mem.state.entries["k"].expires_at is None
    store = sm.JsonFileStore(tmp_path / "memory.json")
    store.save(sm.core.to_document(mem.state))
    with pytest.raises(TypeError, match="too large"):
        mem.remember("n", 10**400)
    mem.remember("big", 2**1000)  # still a double: kept with its exact digits (TXT-3)


def test_per_6_a_timestamp_that_overflows_drops_its_entry(tmp_path, make):
    """PER-6, NUM-1: a 400-digit updatedAt makes that entry invalid (dropped and counted); recall then works."""
    path = tmp_path / "memory.json"
    write(
        path,
        json.dumps({"version": 1, "entries": [raw_entry("huge", updatedAt=10**399), raw_entry("ok", data="refund")]}),
    )
    with pytest.warns(sm.LoadWarning):
        mem = make(store=sm.JsonFileStore(path))
    assert mem.last_load == sm.LoadResult(loaded=1, dropped=1)
    assert [h.entry.key for h in mem.recall("refund")] == ["ok"]


# -- 9. changes from inside on_evict ---------------------------------------------------------


@pytest.mark.parametrize("change", ["working.set", "forget", "remember", "cache.put", "clear", "load"])
def test_wrp_3_changes_from_inside_on_evict_are_refused(make, change):
    """WRP-3, WRP-1: a change from on_evict raises ReentrantCallError, so the outer call raises and nothing happened."""
    mem = None

    def on_evict(compaction):
        {
            "working.set": lambda: mem.working.set({"archived": True}),
            "forget": lambda: mem.forget("keep"),
            "remember": lambda: mem.remember("archive", "x"),
            "cache.put": lambda: mem.cache.put("c", 1),
            "clear": lambda: mem.clear(),
            "load": lambda: mem.load(),
        }[change]()

    mem = make(limit=1, on_evict=on_evict)
    mem.remember("keep", "v", importance=1)
    before = mem.state
    with pytest.raises(sm.ReentrantCallError):
        mem.remember("chatter", "x", importance=0.1)
    assert mem.state is before


def test_wrp_3_reads_from_inside_on_evict_see_the_state_before(make):
    """WRP-3: on_evict may read the memory; it sees the state before the change that evicts."""
    seen = []
    mem = None
    mem = make(limit=1, on_evict=lambda c: seen.append((mem.has("old"), mem.size(), mem.working.get())))
    mem.remember("old", "v", importance=0.1)
    mem.remember("new", "w", importance=1)
    assert seen == [(True, 1, {})] and mem.has("new") and not mem.has("old")


# -- 10. membership ------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["a\ud800b", "", 7, None, b"k", ("k",)])
def test_ent_11_membership_of_anything_just_answers(mem, key):
    """ENT-11: `key in mem` is False for anything that cannot be a key, a lone surrogate included; it never raises."""
    mem.remember("k", "v")
    assert (key in mem) is False


# -- the working memory under damage (PER-20) ----------------------------------------------


@pytest.mark.parametrize(
    "working",
    [
        {"data": {"task": "refund"}, "updatedAt": "x"},  # a flipped digit turned the time into text
        {"data": {"task": "refund"}, "updatedAt": None},
        {"data": ["refund"], "updatedAt": T0},
        {"dat": {"task": "refund"}, "updatedAt": T0},
        "refund",
    ],
)
def test_per_20_a_damaged_working_memory_is_counted_warned_and_preserved(tmp_path, make, working):
    """PER-20, PER-14, PER-7: a working memory that cannot load loads as {}, and says so: working_dropped, a LoadWarning, the original kept."""
    path = tmp_path / "memory.json"
    original = write(path, json.dumps({"version": 1, "entries": [raw_entry()], "working": working}))
    with pytest.warns(sm.LoadWarning, match="working memory"):
        mem = make(store=sm.JsonFileStore(path), autosave=True)
    assert mem.last_load == sm.LoadResult(loaded=1, dropped=0, working_dropped=True) and mem.last_load.lost == 1
    assert mem.working.get() == {}
    mem.working.set({"task": "new"})  # the step after: the save keeps the damaged original first
    (copy,) = tmp_path.glob("memory.json.*.orig")
    assert copy.read_bytes() == original
    assert make(store=sm.JsonFileStore(path)).working.get() == {"task": "new"}


@pytest.mark.parametrize("working", [None, {"data": {}, "updatedAt": None}, {"data": {}, "updatedAt": T0}])
def test_per_20_an_empty_or_missing_working_memory_drops_nothing(tmp_path, make, working):
    """PER-20, PER-7: no working memory, null, or the empty one loads without a warning or a preserved copy."""
    document = {"version": 1, "entries": [raw_entry()]} | ({} if working is None else {"working": working})
    path = tmp_path / "memory.json"
    write(path, json.dumps(document))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sm.LoadWarning)
        mem = make(store=sm.JsonFileStore(path), autosave=True)
    assert mem.last_load == sm.LoadResult(loaded=1, dropped=0) and not mem.last_load.lost


@pytest.mark.parametrize("updated", ["x", None, 5])
def test_per_20_an_empty_working_memory_is_never_dropped_whatever_its_time(tmp_path, make, updated):
    """PER-20: {"data": {}} with any updatedAt has nothing to lose: no warning, not counted, no preserved copy."""
    path = tmp_path / "memory.json"
    write(path, json.dumps({"version": 1, "entries": [raw_entry()], "working": {"data": {}, "updatedAt": updated}}))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sm.LoadWarning)
        mem = make(store=sm.JsonFileStore(path), autosave=True)
    assert not mem.last_load.lost
