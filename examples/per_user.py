"""One memory per user, in one folder: MemoryFolder derives a safe file name from any user id.

Run it with ``python examples/per_user.py``. Three users talk to the same
bot; each gets a memory of their own in ``users/``. User ids come from the
outside world, so even hostile ones (``../../etc/passwd``) only ever name a
file inside the folder.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from sentinel_memory import MemoryFolder


def main(folder: Path) -> dict[str, str]:
    users = MemoryFolder(folder / "users", autosave=True, limit=200)
    said = {
        "alice@example.com": ("user:name", "Alice"),
        "Bob Novák": ("user:name", "Bob"),
        "../../etc/passwd": ("user:name", "Mallory"),
    }
    for user_id, (key, value) in said.items():
        memory = users.open(user_id)
        memory.remember(key, value, importance=0.9)
        memory.add_turn("user", f"Hi, I'm {value}.")

    # A later request, maybe in another process: open the same user's memory again.
    names = {user_id: users.open(user_id)["user:name"] for user_id in said}
    for user_id, name in names.items():
        print(f"{user_id!r:22} -> {users.path_for(user_id).name:44} name {name}")
    print("files:", sorted(p.name for p in users.path.iterdir() if p.suffix == ".json"))
    return names


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp))
