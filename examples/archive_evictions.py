"""Nothing forgotten goes unrecorded: on_evict appends every dropped entry to a JSON-lines archive.

Run it with ``python examples/archive_evictions.py``. A memory with room for
three entries takes six; each entry it evicts (the least important first) or
drops because it expired is written to ``evicted.jsonl`` as the article's
JSON plus why and when it left. The archive can be searched later, or fed
back into a bigger store.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from sentinel_memory import Compaction, create_memory


class Archive:
    """An ``on_evict`` callback that appends one JSON line per dropped entry."""

    def __init__(self, path: Path, clock) -> None:
        self.path = path
        self.clock = clock

    def __call__(self, dropped: Compaction) -> None:
        # on_evict runs before the memory keeps its new state: if writing fails, the call raises
        # and the memory keeps what it had, so nothing is dropped without being archived.
        with self.path.open("a", encoding="utf-8") as archive:
            for reason, entries in (("expired", dropped.expired), ("evicted", dropped.evicted)):
                for entry in entries:
                    record = {**entry.to_dict(), "reason": reason, "droppedAt": self.clock()}
                    archive.write(json.dumps(record, ensure_ascii=False) + "\n")


def main(folder: Path) -> list[dict]:
    now = [1_792_310_400_000]
    clock = lambda: now[0]
    archive = Archive(folder / "evicted.jsonl", clock)
    mem = create_memory(limit=3, clock=clock, on_evict=archive)
    mem.remember("session:cart", "2 items in the cart", importance=0.6, ttl=5 * 60_000)
    for key, text, importance in [
        ("user:name", "Jakub", 0.9),
        ("chat:1", "talked about the weather", 0.1),
        ("user:allergy", "allergic to peanuts", 1.0),
        ("chat:2", "asked for the menu", 0.1),
    ]:
        now[0] += 60_000
        mem.remember(key, text, importance=importance)
    now[0] += 10 * 60_000  # the cart note has expired by now
    mem.remember("order:42", "ordered the risotto", importance=0.7)

    records = [json.loads(line) for line in archive.path.read_text(encoding="utf-8").splitlines()]
    print("kept:    ", ", ".join(mem))
    for record in records:
        print(f"archived: {record['key']:13} {record['reason']:8} importance {record['importance']}")
    return records


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp))
