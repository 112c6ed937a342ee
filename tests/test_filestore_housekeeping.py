"""JsonFileStore's housekeeping: whose temp files a save sweeps, the .orig copy's mode, the nesting scan's strings (PER-9, PER-13, PER-14)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.stores import jsontext
from support import T0

EMPTY = {"version": 1, "entries": []}


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- the sweep of temp files left by killed saves ---------------------------------------------


#: Names in the folder that are not ``memory.json``'s own temp files: another file's, a prefix of the name, not hidden, not .tmp.
OTHERS = [
    ".memory.json2.k1ll3d01.tmp",  # memory.json2's temp file
    ".memory.json.bak.k1ll3d00.tmp",  # memory.json.bak's temp file: a dot in what follows the prefix
    ".memoryXjson.k1ll3d02.tmp",
    ".other.json.k1ll3d03.tmp",
    "memory.json.k1ll3d04.tmp",  # not hidden
    ".memory.json.k1ll3d05.tmp.keep",
    ".memory.json.k1ll3d06.temp",
    ".memory.json.lock",
    "memory.json.20261017T000000Z.orig",
]


def test_per_9_the_sweep_removes_this_files_leftovers_and_nothing_else(tmp_path):
    """PER-9: a save removes `.memory.json.*.tmp` and leaves every other file of the folder, however alike its name."""
    for name in OTHERS:
        (tmp_path / name).write_text("not memory.json's temp file")
    ours = [tmp_path / ".memory.json.k1ll3d07.tmp", tmp_path / ".memory.json.0123456789ab.tmp"]  # mkstemp's, a backup's
    for leftover in ours:
        leftover.write_text('{"version": 1, "entries": [{"key": "forgotten secret"}]}')
    sm.JsonFileStore(tmp_path / "memory.json").save(EMPTY)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({*OTHERS, "memory.json"})


@pytest.mark.parametrize("neighbour", ["memory.json2", "memory", "memory.json.bak"])
def test_per_9_a_save_leaves_a_neighbours_temp_file_for_its_own_save(tmp_path, neighbour):
    """PER-9, PER-15: saving memory.json never removes the temp file a neighbour is writing under its own lock, so the neighbour's save succeeds."""
    mine, theirs = sm.JsonFileStore(tmp_path / "memory.json"), sm.JsonFileStore(tmp_path / neighbour)
    theirs.save(EMPTY)
    mem = sm.create_memory(store=theirs, clock=lambda: T0)
    mem.remember("k", "v")
    real_write = os.write
    saved_mine = []

    def write(fd, data):  # the neighbour's temp file exists now: memory.json is saved in between
        if not saved_mine:
            saved_mine.append(True)
            mine.save(EMPTY)
        return real_write(fd, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "write", write)
        mem.save()
    assert saved_mine and json.loads((tmp_path / neighbour).read_text())["entries"][0]["key"] == "k"


# -- the preserved copy -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o444])
def test_per_14_the_orig_copy_keeps_the_files_permission_bits(tmp_path, mode):
    """PER-14, PER-15: preserve() copies the file to NAME.<UTC time>.orig with the file's own permission bits, whatever they are."""
    path = tmp_path / "memory.json"
    store = sm.JsonFileStore(path)
    store.save(EMPTY)
    os.chmod(path, mode)
    copy = store.preserve()
    assert copy.name.startswith("memory.json.") and copy.name.endswith(".orig")
    assert mode_of(copy) == mode and copy.read_bytes() == path.read_bytes()


def test_per_14_a_lossy_load_keeps_the_original_with_its_mode_before_the_autosave(tmp_path):
    """PER-14: the copy a lossy load makes before the first overwrite has the file's mode; the file keeps it too (PER-15)."""
    path = tmp_path / "memory.json"
    good = {"key": "good", "data": 1, "importance": 0.5, "createdAt": T0, "updatedAt": T0}
    path.write_text(json.dumps({"version": 1, "entries": [good, {**good, "key": "bad", "importance": 2}]}))
    os.chmod(path, 0o640)
    with pytest.warns(sm.LoadWarning):
        mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0)
    mem.remember("new", "entry")
    (copy,) = tmp_path.glob("memory.json.*.orig")
    assert mode_of(copy) == mode_of(path) == 0o640


# -- the nesting scan inside strings --------------------------------------------------------------


def depth(value) -> int:
    """The nesting of a JSON value, counted on the value itself: `[[1]]` is 2."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


#: Strings made of what the scan must see through: quotes, backslashes, brackets, escapes of control characters.
tricky = st.text(alphabet='"\\[]{}x\n\u00e9', max_size=6)
tricky_json = st.recursive(
    st.none() | st.integers(-3, 3) | tricky,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(tricky, children, max_size=3),
    max_leaves=10,
)


@given(
    value=st.lists(tricky_json, min_size=1, max_size=4), brackets=st.integers(0, 450), indent=st.sampled_from([None, 1])
)
def test_per_13_the_nesting_scan_sees_through_escaped_quotes_and_backslashes(value, brackets, indent):
    """PER-13: brackets inside strings never count, however the strings end (`\\\\"`, `\\"`): the scan reports the true depth (or a bound of at most 16)."""
    value = [*value, "[" * brackets, "x\\", "{" * brackets]
    raw = json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8")
    true = depth(value)
    found = jsontext._nesting(raw)
    assert found >= true
    assert found == true or found <= 2 * jsontext._QUICK_ROUNDS


@pytest.mark.parametrize(
    "text",
    ["ends in a backslash \\", 'a quote " inside', '\\"', "\\\\", '\\\\"'],
)
def test_per_13_strings_full_of_brackets_after_any_escape_save_and_load(tmp_path, text):
    """PER-9, PER-13: a memory holding such strings next to 450 brackets in text loads back equal; it is not taken for a bracket bomb."""
    path = tmp_path / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: T0)
    mem.remember("tricky", [text, "[" * 450, text, "{" * 450])
    mem.remember("more", {text: text})
    mem.save()
    loaded = sm.create_memory(store=sm.JsonFileStore(path), clock=lambda: T0)
    assert dict(loaded.items()) == dict(mem.items())
