"""What a type checker sees: folder options as explicit as create_memory's, and user data typed as ``JSON``.

Each test writes a small program that uses the library as the docs show, with a few misuses on
lines of their own, runs ``mypy --strict`` on it, and expects exactly the misuse lines flagged.
"""

from __future__ import annotations

from pathlib import Path


def flagged_lines(tmp_path: Path, program: str) -> list[int]:
    """The line numbers mypy --strict reports an error on, each once, in order."""
    from mypy import api

    path = tmp_path / "bot.py"
    path.write_text(program, encoding="utf-8")
    out, _, status = api.run(["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(path)])
    lines = sorted({int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line})
    assert status == (1 if lines else 0), out
    return lines


def test_fld_2_folder_options_are_checked_like_create_memorys(tmp_path):
    """FLD-2, FLD-3, OPT-1: MemoryFolder and open take create_memory's options by name and type; a typo, a wrong type or store= is flagged."""
    program = (
        "from datetime import timedelta\n"  # 1
        "from sentinel_memory import MemoryFolder, create_memory\n"  # 2
        "users = MemoryFolder('users', limit=500, working_ttl=timedelta(hours=2), on_evict=print)\n"  # 3
        "alice = users.open('alice', autosave=False, shared=False, cache_ttl=60_000)\n"  # 4
        "alice.remember('user:name', 'Alice')\n"  # 5
        "mem = create_memory(limit=3, autosave=True)\n"  # 6
        "MemoryFolder('users', limt=3)\n"  # 7: a typo
        "users.open('bob', autosave='yes')\n"  # 8: not a bool
        "users.open('carol', store=None)\n"  # 9: the folder chooses the store
        "MemoryFolder('users', limit='500')\n"  # 10: not an int
    )
    assert flagged_lines(tmp_path, program) == [7, 8, 9, 10]


def test_ent_15_reads_return_json_that_must_be_narrowed(tmp_path):
    """ENT-2, ENT-7, ENT-15, L0-1, L1-2: get, mem[key], items, values, cache.get and working.get return JSON; narrowed uses pass, unnarrowed ones are flagged."""
    program = (
        "import sentinel_memory as sm\n"  # 1
        "from sentinel_memory import JSON\n"  # 2
        "mem = sm.create_memory()\n"  # 3
        "mem.remember('user:name', 'Jakub')\n"  # 4
        "name = mem['user:name']\n"  # 5
        "if isinstance(name, str):\n"  # 6
        "    print(name.upper())\n"  # 7
        "visits = mem.get('visits', 0)\n"  # 8
        "if isinstance(visits, int):\n"  # 9
        "    mem.remember('visits', visits + 1)\n"  # 10
        "data: JSON = mem.get('user:name')\n"  # 11
        "items: dict[str, JSON] = dict(mem.items())\n"  # 12
        "values: list[JSON] = list(mem.values())\n"  # 13
        "tool = mem.cache.get('tool:weather', {})\n"  # 14
        "working: dict[str, JSON] = mem.working.get()\n"  # 15
        "count: int = mem['visits']\n"  # 16: JSON is not an int
        "mem.remember('visits', mem.get('visits', 0) + 1)\n"  # 17: JSON | int + 1
        "mem['user:name'].upper()\n"  # 18: not every JSON has upper()
        "temp: float = mem.cache.get('tool:weather')\n"  # 19: may be None, a str, ...
        "step: int = mem.working.get()['step']\n"  # 20
        "for key, value in mem.items():\n"  # 21
        "    value.upper()\n"  # 22
    )
    assert flagged_lines(tmp_path, program) == [16, 17, 18, 19, 20, 22]
