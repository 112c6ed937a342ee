"""Per-user memories in one folder: names derived safely from user ids (FLD-1, FLD-2)."""

from __future__ import annotations

import os
import re

import pytest

import sentinel_memory as sm
from sentinel_memory.folder import file_name_for

HOSTILE = [
    "../../etc/passwd",
    "..",
    ".",
    "/etc/passwd",
    "a/b",
    "a\\b",
    "CON",
    "con",
    "NUL",
    "com1",
    "",
    "x" * 10_000,
    "Jakub Rojíček",
    "日本語のユーザー",
    "😀",
    "a\x00b",
    " leading space",
    "trailing.",
    "Alice",
    "alice",
    "ALICE",
]


def test_fld_1_hostile_ids_stay_inside_the_folder_and_never_collide(tmp_path):
    """FLD-1: traversal, separators, device names, empty, 10,000 characters and non-ASCII ids all map to distinct files inside."""
    folder = sm.MemoryFolder(tmp_path / "users")
    paths = [folder.path_for(user_id) for user_id in HOSTILE]
    assert all(path.parent == folder.path for path in paths)
    assert len({path.name for path in paths}) == len(HOSTILE)
    assert all(re.fullmatch(r"([a-z0-9]+(-[a-z0-9]+)*-)?[0-9a-f]{16}\.json", path.name) for path in paths)
    assert all(len(path.name) <= 40 + 1 + 16 + 5 for path in paths)


def test_fld_1_names_are_readable_and_stable():
    """FLD-1: the slug shows who it is; the same id always gives the same name."""
    assert file_name_for("Jakub Rojíček").startswith("jakub-rojicek-")
    assert file_name_for("CON").startswith("con-")
    assert file_name_for("") == "e3b0c44298fc1c14.json"  # SHA-256 of nothing
    assert file_name_for("user-42") == file_name_for("user-42")


def test_fld_1_a_non_str_id_is_a_type_error(tmp_path):
    """FLD-1: user ids are strings."""
    with pytest.raises(TypeError):
        sm.MemoryFolder(tmp_path).path_for(42)


def test_fld_2_each_user_gets_a_memory_of_their_own(tmp_path):
    """FLD-2: open gives each user a memory on their own file, with the folder's options; the call's options win."""
    folder = sm.MemoryFolder(tmp_path / "users", autosave=True, limit=3)
    folder.open("alice").remember("user:name", "Alice")
    folder.open("bob").remember("user:name", "Bob")
    assert folder.open("alice")["user:name"] == "Alice" and folder.open("bob")["user:name"] == "Bob"
    assert folder.open("alice").stats()["limit"] == 3 and folder.open("alice", limit=7).stats()["limit"] == 7
    assert sorted(os.listdir(folder.path)) == sorted(
        [
            file_name_for("alice"),
            file_name_for("bob"),
            "." + file_name_for("alice") + ".lock",
            "." + file_name_for("bob") + ".lock",
        ]
    )


def test_fld_2_the_folder_chooses_the_store(tmp_path):
    """FLD-2: store= is refused, in the folder's options and in open's."""
    with pytest.raises(TypeError, match="store"):
        sm.MemoryFolder(tmp_path, store=sm.MemoryStore())
    with pytest.raises(TypeError):
        sm.MemoryFolder(tmp_path).open("a", store=sm.MemoryStore())


def test_fld_3_two_opens_of_one_user_both_write_and_lose_nothing(tmp_path):
    """FLD-3, MW-6: users.open("carol") twice, writing through both in turn: no ConflictError, and the file holds every write."""
    users = sm.MemoryFolder(tmp_path)
    first, second = users.open("carol"), users.open("carol")
    for i in range(5):
        first.remember(f"first:{i}", i)
        second.remember(f"second:{i}", i)
    first.add_turn("user", "hello")
    second.add_turn("user", "hello again")
    again = users.open("carol")
    assert sorted(again) == sorted(
        [*(f"first:{i}" for i in range(5)), *(f"second:{i}" for i in range(5)), "chat:1", "chat:2"]
    )


def test_fld_3_opens_per_request_in_threads_and_processes_lose_nothing(tmp_path):
    """FLD-3, MW-5, MW-6: 8 threads and 3 processes, each opening carol's memory per request, 120 writes: all 120 are there."""
    import threading

    from sentinel_memory.testing import in_processes

    users = sm.MemoryFolder(tmp_path)
    errors: list[BaseException] = []

    def requests(worker: str, count: int) -> None:
        for i in range(count):
            try:
                users.open("carol").remember(f"{worker}:{i}", i)  # a new memory per request
            except BaseException as error:
                errors.append(error)

    threads = [threading.Thread(target=requests, args=(f"thread{t}", 10)) for t in range(8)]
    for thread in threads:
        thread.start()
    codes = in_processes(3, lambda worker: requests(f"process{worker}", 13))
    for thread in threads:
        thread.join()
    assert errors == [] and codes == [0, 0, 0]
    stored = len(users.open("carol", limit=10_000))
    assert stored == 8 * 10 + 3 * 13
    print(
        f"\nfolder opens per request: 8 threads x 10 + 3 processes x 13 writes, {stored} of 119 stored; 0 lost, 0 raised"
    )


def test_fld_3_a_folder_or_a_call_may_choose_otherwise(tmp_path):
    """FLD-3, FLD-2: autosave and shared are defaults, which the folder's options and open's options override."""
    assert sm.MemoryFolder(tmp_path).options == {"autosave": True, "shared": True}
    unshared = sm.MemoryFolder(tmp_path, shared=False)
    first, second = unshared.open("dave"), unshared.open("dave")
    first.remember("a", 1)
    with pytest.raises(sm.ConflictError):
        second.remember("b", 2)
    manual = sm.MemoryFolder(tmp_path).open("erin", autosave=False)
    manual.remember("a", 1)
    assert not sm.MemoryFolder(tmp_path).path_for("erin").exists()
