"""The pydantic-ai history's own CPU per model call, two versions of the library side by side in one process.

``agent_calls.py --own`` times one version per process, and on a shared
machine two runs of the same code differ by a third; a change of a tenth is
lost in that. Here both versions run in one process, turn about: each
``src`` folder is copied as its own package (``sm_old``, ``sm_new``; the
library imports itself by relative imports only), and each round times a
fresh history of 200 turns over the in-memory store, 40 model calls of
``process`` (the question) and ``record`` (the answer), as a run makes them,
first one version then the other, the order swapped every round. It prints
each version's median CPU ms per call and the median of the per-round ratios
(new / old).

Run it with ``python benchmarks/own_time_ab.py OLD_SRC NEW_SRC [rounds]``,
for example ``git worktree add /tmp/old <commit>`` and then
``python benchmarks/own_time_ab.py /tmp/old/src src 16``. ``--nogc`` turns
the garbage collector off while it times.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel
from server_support import Echo

TURNS = 200
BUDGET = 2_000
CALLS = 40


def versions(old: Path, new: Path, folder: Path) -> dict[str, tuple[Any, Any]]:
    """Each ``src`` folder's library as its own package: (the package, its pydantic-ai module), by name."""
    sys.path.insert(0, str(folder))
    found = {}
    for name, src in (("sm_old", old), ("sm_new", new)):
        shutil.copytree(src / "sentinel_memory", folder / name)
        found[name] = (importlib.import_module(name), importlib.import_module(f"{name}.integrations.pydantic_ai"))
    return found


def history() -> list[Any]:
    """A conversation of ``TURNS`` messages, question and answer by turns, as pydantic-ai messages."""
    said: list[Any] = []
    for i in range(TURNS):
        text = f"message {i} about the menu " * 3
        said.append(ModelRequest(parts=[UserPromptPart(text)]) if i % 2 == 0 else ModelResponse(parts=[TextPart(text)]))
    return said


def per_call(package: Any, module: Any, asked: Any, answered: Any) -> float:
    """The mean CPU seconds of one model call's memory work over a fresh history (after three calls to warm it)."""
    memory = module.SentinelHistory(package.create_memory(), BUDGET)
    memory.record(history())

    def call(n: int) -> tuple[Any, Any]:
        question = dataclasses.replace(asked, parts=[dataclasses.replace(asked.parts[0], content=f"question {n}")])
        answer = dataclasses.replace(answered, parts=[dataclasses.replace(answered.parts[0], content=f"echo {n}")])
        return question, answer

    for n in range(3):
        question, answer = call(n)
        memory.process([question])
        memory.record([question, answer])
    calls = [call(n + 3) for n in range(CALLS)]
    start = time.thread_time()
    for question, answer in calls:
        memory.process([question])  # the question stored, then the budgeted view: before the model request
        memory.record([question, answer])  # the answer stored: after the run
    return (time.thread_time() - start) / CALLS


def main(argv: list[str]) -> None:
    paths = [arg for arg in argv if not arg.startswith("--")]
    old, new = Path(paths[0]).resolve(), Path(paths[1]).resolve()
    rounds = int(paths[2]) if len(paths) > 2 else 16
    asked, answered = Agent(FunctionModel(Echo())).run_sync("question 0").all_messages()
    with tempfile.TemporaryDirectory() as folder:
        found = versions(old, new, Path(folder))
        if "--nogc" in argv:
            gc.disable()
        times: dict[str, list[float]] = {"sm_old": [], "sm_new": []}
        for turn in range(rounds):
            for name in ("sm_old", "sm_new") if turn % 2 == 0 else ("sm_new", "sm_old"):
                times[name].append(per_call(*found[name], asked, answered))
        gc.enable()
    ratios = [b / a for a, b in zip(times["sm_old"], times["sm_new"], strict=True)]
    for name, label in (("sm_old", str(old)), ("sm_new", str(new))):
        print(
            f"{label}: median {statistics.median(times[name]) * 1000:.3f} ms per call, best {min(times[name]) * 1000:.3f}"
        )
    print(f"new / old, the median of {rounds} rounds' ratios: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
