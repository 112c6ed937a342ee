"""The package layout and its import contracts (LAY-1 .. LAY-4): what `lint-imports` keeps and that it can fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sentinel_memory

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is in the dev extra")


def _lint(src: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the project's contracts, on the package under ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=src.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture(scope="module")
def copy_of_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean copy of src/ that a test may break."""
    base = tmp_path_factory.mktemp("layout")
    shutil.copytree(ROOT / "src", base / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return base / "src"


def _with_line(src: Path, module: str, line: str) -> Path:
    """A copy of ``src`` whose ``module`` (a path under sentinel_memory/) gains ``line`` after its imports."""
    broken = src.parent / f"broken-{module.replace('/', '-')}" / "src"
    if broken.exists():
        shutil.rmtree(broken)
    shutil.copytree(src, broken)
    path = broken / "sentinel_memory" / module
    text = path.read_text(encoding="utf-8")
    marker = "from __future__ import annotations\n"
    path.write_text(text.replace(marker, marker + line + "\n", 1), encoding="utf-8")
    return broken


def test_lay_1_the_contracts_hold_on_the_package(copy_of_src: Path) -> None:
    """LAY-1: every import contract of pyproject.toml is kept by the package as it is."""
    result = _lint(copy_of_src)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("core/expiry.py", "import time", "sentinel_memory.core.expiry -> time"),
        ("core/values.py", "import logging", "sentinel_memory.core.values -> logging"),
        ("core/prompt.py", "import os", "sentinel_memory.core.prompt -> os"),
        ("core/turns.py", "import asyncio", "sentinel_memory.core.turns -> asyncio"),
        ("core/table.py", "import posix", "sentinel_memory.core.table -> posix"),
        ("core/lexical.py", "import importlib", "sentinel_memory.core.lexical -> importlib"),
        ("core/state.py", "from .. import logs", "sentinel_memory.core.state -> sentinel_memory.logs"),
        (
            "stores/sqlitestore.py",
            "from .. import memory",
            "sentinel_memory.stores.sqlitestore -> sentinel_memory.memory",
        ),
    ],
)
def test_lay_2_a_forbidden_import_fails_the_check(copy_of_src: Path, module: str, line: str, broken: str) -> None:
    """LAY-2: one forbidden import (a clock, a log, a file, an event loop in the core; a shell in a store) fails lint-imports and is named."""
    result = _lint(_with_line(copy_of_src, module, line))
    assert result.returncode != 0
    assert broken in result.stdout, result.stdout


#: Calls that do I/O, read a clock or run code from text without any import: no import contract can see them.
IMPURE_CALLS = {"open", "input", "print", "__import__", "eval", "exec", "compile", "breakpoint"}
CLOCK_READS = {"now", "utcnow", "today", "fromtimestamp", "time", "monotonic", "perf_counter", "time_ns"}


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "src" / "sentinel_memory" / "core").glob("*.py")))
def test_lay_2_the_core_calls_no_builtin_io_and_reads_no_clock(module: str) -> None:
    """LAY-2: no core module calls open, input, print, eval, exec or __import__, or reads a clock (datetime.now, time.time and the like)."""
    import ast

    tree = ast.parse((ROOT / "src" / "sentinel_memory" / "core" / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):
            assert node.func.id not in IMPURE_CALLS, f"{module}:{node.lineno} calls {node.func.id}()"
        elif isinstance(node.func, ast.Attribute):
            assert node.func.attr not in CLOCK_READS, f"{module}:{node.lineno} calls .{node.func.attr}()"


def test_lay_3_public_names_import_from_the_package() -> None:
    """LAY-3: every name of sentinel_memory.__all__ imports from the package, and the core keeps its name."""
    for name in sentinel_memory.__all__:
        assert getattr(sentinel_memory, name) is not None, name
    from sentinel_memory import core

    assert core.__name__ == "sentinel_memory.core" and callable(core.remember) and callable(core.context)


def test_lay_3_each_package_says_what_it_holds_and_may_import() -> None:
    """LAY-3: the core, stores and integrations packages each open with a docstring naming what they may import."""
    from sentinel_memory import core, integrations, stores

    for package in (core, stores, integrations):
        assert package.__doc__ and "may import" in package.__doc__, package.__name__


@pytest.mark.parametrize(
    ("contract", "module", "line", "broken"),
    [
        # the former cycles of the core, and an import of a transition from below it
        (
            "core-layers",
            "core/jsondata.py",
            "from . import chat",
            "sentinel_memory.core.jsondata -> sentinel_memory.core.chat",
        ),
        (
            "core-layers",
            "core/turns.py",
            "from . import state",
            "sentinel_memory.core.turns -> sentinel_memory.core.state",
        ),
        (
            "core-layers",
            "core/index.py",
            "from . import search",
            "sentinel_memory.core.index -> sentinel_memory.core.search",
        ),
        ("pure-core", "core/tokens.py", "import threading", "sentinel_memory.core.tokens -> threading"),
        ("layers", "shell.py", "from . import memory", "sentinel_memory.shell -> sentinel_memory.memory"),
        ("layers", "reading.py", "from . import aio", "sentinel_memory.reading -> sentinel_memory.aio"),
        (
            "stores-below-shells",
            "stores/filestore.py",
            "from .. import shell",
            "sentinel_memory.stores.filestore -> sentinel_memory.shell",
        ),
        (
            "integrations-independent",
            "integrations/pydantic_ai.py",
            "from . import openai_agents",
            "sentinel_memory.integrations.pydantic_ai -> sentinel_memory.integrations.openai_agents",
        ),
    ],
)
def test_lay_4_each_contract_fails_on_its_own_violation(
    copy_of_src: Path, contract: str, module: str, line: str, broken: str
) -> None:
    """LAY-1, LAY-2, LAY-4: each import contract, the core's layer order and threading in the core included, breaks on one import against it."""
    import tomllib

    names = {
        c["id"]: c["name"]
        for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    }
    result = _lint(_with_line(copy_of_src, module, line))
    flat = " ".join(result.stdout.split())  # the report wraps long lines
    assert result.returncode != 0
    assert broken in flat, result.stdout
    assert f"{' '.join(names[contract].split())} BROKEN" in flat, result.stdout


def test_lay_4_the_core_is_laid_out_bottom_up_with_nothing_left_out() -> None:
    """LAY-4: the core-layers contract names every module of the core once, and the core's __init__ holds no function of its own."""
    import ast
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["id"] == "core-layers")["layers"]
    core = ROOT / "src" / "sentinel_memory" / "core"
    assert sorted(layers) == sorted(p.stem for p in core.glob("*.py") if p.stem != "__init__")
    tree = ast.parse((core / "__init__.py").read_text(encoding="utf-8"))
    assert not [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def test_lay_4_the_essay_gives_the_reading_order_of_every_core_module() -> None:
    """LAY-4: the core's essay names every module of the core, first mentioned in the core-layers contract's order, bottom up."""
    import re
    import tomllib

    import sentinel_memory.core as core

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    bottom_up = list(reversed(next(c for c in contracts if c["id"] == "core-layers")["layers"]))
    order = core.__doc__[core.__doc__.index("reads bottom-up") :]
    named = [name for name in dict.fromkeys(re.findall(r"``(\w+)``", order)) if name in bottom_up]
    assert sorted(named) == sorted(bottom_up)
    assert named == sorted(named, key=bottom_up.index)
