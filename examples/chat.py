"""A small end-to-end chat session with sentinel-memory.

Run it with ``make demo`` (or ``python examples/chat.py``). It plays the
restaurant scene from the README with a memory that holds five things, saves
to a JSON file, reloads it as a restarted app would, and builds the prompt
context for the next model call.

The clock is a fake one that moves one minute per message, so the output is
the same on every run.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from sentinel_memory import JsonFileStore, create_memory

MINUTE = 60_000


class MinuteClock:
    """One minute passes between messages; start at 2026-10-17T00:00Z."""

    def __init__(self) -> None:
        self.now = 1_792_310_400_000

    def __call__(self) -> int:
        return self.now

    def tick(self) -> None:
        self.now += MINUTE


def main(folder: Path) -> None:
    path = folder / "memory.json"
    clock = MinuteClock()
    archived = []
    mem = create_memory(
        limit=5,
        store=JsonFileStore(path),
        autosave=True,
        clock=clock,
        on_evict=lambda dropped: archived.extend(e.key for e in dropped.evicted + dropped.expired),
    )

    print("== the conversation")
    turns = [
        ("user:name", "Jakub", 0.9),
        ("user:allergy", "allergic to peanuts", 1.0),
        *((f"chat:{i}", f"small talk message {i}", 0.1) for i in range(1, 7)),
    ]
    for key, text, importance in turns:
        mem.remember(key, text, importance=importance)
        print(f"  remember {key:13} importance {importance:<4} -> {mem.size()} kept")
        clock.tick()

    print("\n== what the memory kept (newest first)")
    for entry in mem.get_recent(5):
        print(f"  {entry.key:13} {entry.importance:<4} {entry.data}")
    last_five = [key for key, _, _ in turns][-5:]
    print(f"  a 'keep the last five' memory would hold: {', '.join(last_five)}")
    print(f"  archived by on_evict: {', '.join(archived)}")
    print(f"  stats: {mem.stats()}")

    mem.remember("session:cart", "2 items in the cart", importance=0.6, ttl=15 * MINUTE)
    print("\n== remember session:cart (importance 0.6, expires in 15 minutes)")
    print(f"  kept now: {', '.join(e.key for e in mem.get_recent())}")

    print("\n== the app restarts and loads", path.name)
    mem = create_memory(limit=5, store=JsonFileStore(path), autosave=True, clock=clock)
    print(f"  loaded {mem.size()} entries")

    print("\n== recall('what is my name?')")
    for hit in mem.recall("what is my name?"):
        print(f"  {hit.entry.key} -> {hit.entry.data!r} (score {hit.score:.4f})")

    print("\n== context for the next model call (budget 30 tokens, query 'cart')")
    ctx = mem.get_context(token_budget=30, query="cart")
    print("  " + ctx.text.replace("\n", "\n  "))
    print(f"  tokens {ctx.tokens}, omitted {ctx.omitted}")

    clock.now += 15 * MINUTE
    print("\n== fifteen minutes later")
    print(f"  session:cart -> {mem.get('session:cart')!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
