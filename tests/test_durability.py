"""Durability of JsonFileStore, tested the way storage engines test theirs (PER-9, PER-15).

* a SIGKILL loop: a writer killed at random moments, hundreds of times;
* countdown fault injection: the Nth call of each system call fails, once or
  for good, for N = 1, 2, ... until the save succeeds;
* a power-loss model (after LevelDB's fault-injection test): at every point
  of a save, the disk is rebuilt from what was synced, and must hold the old
  document or the new one;
* a real write failure without root: a file-size limit makes the kernel
  refuse the write.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import sentinel_memory as sm
from support import T0

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX fork, flock and fsync of folders")


def document(generation: int, bulk: int = 0) -> dict:
    entries = [
        {
            "key": f"bulk:{i}",
            "data": "x" * 60,
            "importance": 0.5,
            "createdAt": T0,
            "updatedAt": T0 + i,
            "expiresAt": None,
        }
        for i in range(bulk)
    ]
    return {"version": 1, "entries": entries, "working": {"data": {"generation": generation}, "updatedAt": T0}}


def generation(path: Path) -> int | None:
    loaded = sm.JsonFileStore(path).load()
    return None if loaded is None else loaded["working"]["data"]["generation"]


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- 1. the SIGKILL loop ------------------------------------------------------------


def test_per_9_sigkill_loop(tmp_path):
    """PER-9: killed at 300 random moments while autosaving, the file always loads and holds the last acked generation or the next."""
    path = tmp_path / "memory.json"
    sm.JsonFileStore(path).save(document(0, bulk=100))  # about 12 KB: a save takes a few ms, mostly fsync
    rng = random.Random(9)
    rounds, landed_mid_save, acked_total = 300, 0, 0
    for _ in range(rounds):
        before = generation(path)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer: load, say so, then autosave generation after generation, acking each
            try:
                os.close(read_end)
                mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True, clock=lambda: T0)
                current = mem.working.get()["generation"]
                os.write(write_end, b"loaded\n")
                while True:
                    current += 1
                    mem.working.set({"generation": current})
                    os.write(write_end, f"{current}\n".encode())
            finally:
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as acks:
            # The kill lands a random moment after the writer has loaded: a forked
            # child of a large test process can take longer than that to start.
            assert acks.readline() == b"loaded\n"
            time.sleep(rng.uniform(0.0, 0.04))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            acked = [int(line) for line in acks.read().split()]
        acked_total += len(acked)
        last = acked[-1] if acked else before
        assert generation(path) in (last, last + 1)
        landed_mid_save += bool(temp_files(tmp_path))
    # The next save that completes removes whatever the kills left behind.
    sm.JsonFileStore(path).save(document(-1))
    assert temp_files(tmp_path) == [] and generation(path) == -1
    print(f"\nSIGKILL loop: {rounds} kills, {landed_mid_save} left a temp file, {acked_total} saves acked; none torn")
    # The kills landed both mid-save and between acknowledged saves.
    assert landed_mid_save >= rounds // 20 and acked_total >= rounds // 2


# -- 2. countdown fault injection -----------------------------------------------------


class Countdown:
    """Makes the Nth call of one system call fail (and every later one, when ``forever``), then passes through."""

    def __init__(self, monkeypatch, call: str, n: int, forever: bool, code: int) -> None:
        self.call, self.n, self.forever, self.code, self.seen, self.failed = call, n, forever, code, 0, 0
        real = {"write": os.write, "fsync": os.fsync, "replace": os.replace, "open": os.open}
        self.real = real

        def counted(kind: str, *args, **kwargs):
            if self.counts(kind, args):
                self.seen += 1
                if self.seen == self.n or (self.forever and self.seen > self.n):
                    self.failed += 1
                    raise OSError(self.code, os.strerror(self.code))
            return real[kind](*args, **kwargs)

        for name in real:
            monkeypatch.setattr(os, name, lambda *a, _name=name, **k: counted(_name, *a, **k))

    def counts(self, kind: str, args: tuple) -> bool:
        if self.call == "write":
            return kind == "write"
        if self.call == "replace":
            return kind == "replace"
        if self.call in ("fsync-file", "fsync-folder"):
            if kind != "fsync":
                return False
            is_folder = stat.S_ISDIR(os.fstat(args[0]).st_mode)
            return is_folder == (self.call == "fsync-folder")
        if self.call == "open-folder":
            return kind == "open" and os.path.isdir(args[0])
        raise AssertionError(self.call)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
@pytest.mark.parametrize("forever", [False, True], ids=["fail-once", "fail-forever"])
@pytest.mark.parametrize("call", ["write", "fsync-file", "replace", "open-folder", "fsync-folder"])
def test_per_9_countdown_fault_injection(tmp_path, monkeypatch, call, forever, code):
    """PER-9: for N = 1, 2, ... the Nth such call fails until a save gets through: each failure is a typed error, the old file, no temp file."""
    path = tmp_path / "memory.json"
    store = sm.JsonFileStore(path)
    store.save(document(1))
    old = path.read_bytes()
    for n in range(1, 50):
        with monkeypatch.context() as patch:
            countdown = Countdown(patch, call, n, forever, code)
            try:
                store.save(document(2))
            except OSError as error:
                failed = error
            else:
                failed = None
        if failed is None:
            assert countdown.failed == 0 and generation(path) == 2
            break
        assert failed.errno == code and countdown.failed >= 1
        assert path.read_bytes() == old and temp_files(tmp_path) == [] and generation(path) == 1
    else:
        pytest.fail("the save never got through")
    assert n > 1  # the call was made at least once, so at least one failure was tried


# -- 3. the power-loss model ------------------------------------------------------------


class Disk:
    """What a save did to one folder, and what a power cut at any point would leave.

    Data written to a file is durable once that file is fsynced; a change to
    the folder's names (create, rename, link, unlink) is durable once the
    folder is fsynced, and before that a crash may have kept any prefix of
    the pending changes, since a journal commits them in order.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.names: dict[str, int] = {}
        self.data: dict[int, bytes] = {}
        self.synced_data: dict[int, bytes] = {}
        self.synced_names: dict[str, int] = {}
        self.pending: list[tuple] = []  # folder changes since the last folder fsync
        self.fds: dict[int, int | None] = {}  # fd -> inode, None for the folder
        self.crash_points: list[tuple[dict[str, int], list[tuple], dict[int, bytes]]] = []
        for item in folder.iterdir():
            inode = os.stat(item).st_ino
            self.names[item.name] = self.synced_names[item.name] = inode
            self.data[inode] = self.synced_data[inode] = item.read_bytes()

    def snapshot(self) -> None:
        self.crash_points.append((dict(self.synced_names), list(self.pending), dict(self.synced_data)))

    def watch(self, monkeypatch) -> None:
        real_open, real_write, real_fsync = os.open, os.write, os.fsync
        real_replace, real_link, real_unlink = os.replace, os.link, os.unlink

        def name(path) -> str:
            assert Path(path).parent == self.folder or Path(path) == self.folder, path
            return Path(path).name

        def open_(path, flags, mode=0o777, **kwargs):
            fd = real_open(path, flags, mode, **kwargs)
            if Path(path) == self.folder:
                self.fds[fd] = None
            else:
                key = name(path)
                if key not in self.names:
                    self.names[key] = os.fstat(fd).st_ino
                    self.data[self.names[key]] = b""
                    self.pending.append(("set", key, self.names[key]))
                self.fds[fd] = self.names[key]
            self.snapshot()
            return fd

        def write(fd, data):
            written = real_write(fd, data)
            if fd in self.fds:
                self.data[self.fds[fd]] += bytes(data[:written])
                self.snapshot()
            return written

        def fsync(fd):
            real_fsync(fd)
            if fd in self.fds:
                if self.fds[fd] is None:
                    self.synced_names = dict(self.names)
                    self.pending = []
                else:
                    self.synced_data[self.fds[fd]] = self.data[self.fds[fd]]
                self.snapshot()

        def replace(src, dst):
            real_replace(src, dst)
            inode = self.names.pop(name(src))
            self.names[name(dst)] = inode
            self.pending += [("set", name(dst), inode), ("drop", name(src))]
            self.snapshot()

        def link(src, dst):
            real_link(src, dst)
            self.names[name(dst)] = self.names[name(src)]
            self.pending.append(("set", name(dst), self.names[name(src)]))
            self.snapshot()

        def unlink(path):
            real_unlink(path)
            self.names.pop(name(path), None)
            self.pending.append(("drop", name(path)))
            self.snapshot()

        for attr, fake in [
            ("open", open_),
            ("write", write),
            ("fsync", fsync),
            ("replace", replace),
            ("link", link),
            ("unlink", unlink),
        ]:
            monkeypatch.setattr(os, attr, fake)

    def after_crashes(self, target: str):
        """Every content ``target`` could have after a power cut at any point: None when the name is gone."""
        for synced_names, pending, synced_data in self.crash_points:
            for kept in range(len(pending) + 1):
                names = dict(synced_names)
                for change in pending[:kept]:
                    if change[0] == "set":
                        names[change[1]] = change[2]
                    else:
                        names.pop(change[1], None)
                inode = names.get(target)
                yield None if inode is None else synced_data.get(inode, b"")


@pytest.mark.parametrize("first", [True, False], ids=["first-save", "overwrite"])
def test_per_9_power_loss_at_every_point_leaves_the_old_or_the_new_document(tmp_path, monkeypatch, first):
    """PER-9: rebuilt from synced data only, at every point of a save, the file is the old document or the new one, never a mix."""
    path = tmp_path / "memory.json"
    store = sm.JsonFileStore(path)
    old = None
    if not first:
        store.save(document(1, bulk=3))
        old = path.read_bytes()
    disk = Disk(tmp_path)
    with monkeypatch.context() as patch:
        disk.watch(patch)
        store.save(document(2, bulk=5))
    new = path.read_bytes()
    outcomes = set(disk.after_crashes("memory.json"))
    assert outcomes <= {old, new} and new in outcomes and len(disk.crash_points) > 5
    assert outcomes == ({None, new} if first else {old, new})


# -- 4. a real write failure ----------------------------------------------------------------


def test_per_9_a_file_size_limit_fails_the_write_and_the_old_file_survives(tmp_path):
    """PER-9: under RLIMIT_FSIZE (SIGXFSZ ignored) the kernel refuses the write: EFBIG, the old file intact, no temp file."""
    resource = pytest.importorskip("resource")
    path = tmp_path / "memory.json"
    sm.JsonFileStore(path).save(document(1))
    old = path.read_bytes()
    limit = 4 * len(old)
    script = textwrap.dedent(
        f"""
        import json, resource, signal, sys
        import sentinel_memory as sm
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        document = json.loads(sys.argv[2])
        try:
            sm.JsonFileStore(sys.argv[1]).save(document)
        except OSError as error:
            print("errno", error.errno)
        else:
            print("saved")
        """
    )
    big = document(2, bulk=200)
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), json.dumps(big)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["errno", str(errno.EFBIG)]
    assert path.read_bytes() == old and temp_files(tmp_path) == []
    assert resource.getrlimit(resource.RLIMIT_FSIZE)  # the limit was the child's alone
