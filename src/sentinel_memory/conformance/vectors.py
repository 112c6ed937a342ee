"""The vector files: where they are, how they are read, and how they are written back.

The reviewed files are the truth. In a clone they are ``spec/vectors/*.json``
(with ``spec/vector.schema.json``); a built wheel carries the same files
inside this package, so ``pip install`` gives a porter the runner and the
vectors without a clone.

Each file is ``{"description": ..., "cases": [...]}``; a case is
``{"id", "description", "rules", "config", "steps"}`` and every step is
``{"op", "args", "now", "expect"}`` with ``expect`` either ``{"ok": value}``
or ``{"error": code}``. A case whose config is refused has no steps and an
``"error"`` of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["Vector", "answer_of", "compact", "load_all", "request_of", "schema_path", "spec_dir", "write_file"]

Vector = dict[str, Any]


def spec_dir() -> Path:
    """The folder holding ``vectors/`` and ``vector.schema.json``: inside the package when installed, else the clone's ``spec/``."""
    packaged = Path(__file__).with_name("spec")
    if (packaged / "vectors").is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "spec"


def schema_path() -> Path:
    return spec_dir() / "vector.schema.json"


def files(folder: Path | None = None) -> list[Path]:
    """The vector files, in name order."""
    return sorted((folder or spec_dir() / "vectors").glob("*.json"))


def load_all(folder: Path | None = None) -> Iterator[tuple[Path, Vector]]:
    """Every case of every file, with the file it came from, in file and case order."""
    for path in files(folder):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            yield path, case


def request_of(case: Vector) -> dict[str, Any]:
    """What the runner sends a backend: the case without its expectations and notes."""
    steps = [
        {key: step[key] for key in ("op", "args", "now", "memory") if key in step} for step in case.get("steps", [])
    ]
    return {"id": case["id"], "config": case.get("config", {}), "steps": steps}


def answer_of(case: Vector) -> dict[str, Any]:
    """The answer the case expects, in the shape a backend gives it."""
    if "error" in case:
        return {"id": case["id"], "error": case["error"]}
    return {"id": case["id"], "results": [step.get("expect") for step in case.get("steps", [])]}


# Every character of a surrogate range left in a str is a lone surrogate.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def compact(value: Any) -> str:
    """``value`` as one line of JSON, non-ASCII text as it is, lone surrogates escaped."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def format_file(description: str, cases: list[Vector]) -> str:
    """A file as it is kept: readable non-ASCII text, one step per line, so a diff shows steps."""
    out = ["{", f' "description": {compact(description)},', ' "cases": [']
    for number, case in enumerate(cases):
        out.append("  {")
        fields = [key for key in case if key != "steps"]
        for key in fields:
            out.append(f"   {compact(key)}: {compact(case[key])},")
        steps = case.get("steps", [])
        out.append('   "steps": [' + ("" if steps else "]"))
        for index, step in enumerate(steps):
            out.append("    " + compact(step) + ("," if index < len(steps) - 1 else ""))
        if steps:
            out.append("   ]")
        out.append("  }" + ("," if number < len(cases) - 1 else ""))
    out.append(" ]")
    out.append("}")
    return "\n".join(out) + "\n"


def write_file(path: Path, description: str, cases: list[Vector]) -> None:
    """Write ``cases`` to ``path`` in the kept format."""
    path.write_text(format_file(description, cases), encoding="utf-8")
