"""An asyncio chat bot: one memory per user, many messages at once, nothing lost (AIO-1, AIO-2).

Plain asyncio, no network and no model: ``reply`` stands in for the model
call a real bot would await. Each user's memory is a JSON file in
``FOLDER/users`` (named as ``MemoryFolder`` names them), opened per message
with ``autosave=True, shared=True``, so overlapping messages of one user
take turns and none is lost, and the file I/O runs in the memory's worker
thread, never on the event loop.

    python examples/async_bot.py [FOLDER]     # default: a temporary folder
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from sentinel_memory import AsyncMemory, JsonFileStore, MemoryFolder, create_async_memory


class Bot:
    def __init__(self, folder: Path) -> None:
        self.users = MemoryFolder(folder / "users")  # only for its safe file names (FLD-1)

    async def open(self, user_id: str) -> AsyncMemory:
        store = JsonFileStore(self.users.path_for(user_id))
        return await create_async_memory(store=store, autosave=True, shared=True, limit=500)

    async def handle(self, user_id: str, message: str) -> str:
        async with await self.open(user_id) as memory:
            await memory.add_turn("user", message)
            if match := re.search(r"my name is (\w+)", message, re.IGNORECASE):
                await memory.remember("user:name", match.group(1), importance=0.9)
            if match := re.search(r"allergic to (\w+)", message, re.IGNORECASE):
                await memory.remember("user:allergy", match.group(1), importance=1.0)
            context = memory.get_context(token_budget=300, query=message, must_keep=0.9)
            answer = await reply(message, context.text, memory)
            await memory.add_turn("assistant", answer, importance=0.1)
            return answer


async def reply(message: str, context: str, memory: AsyncMemory) -> str:
    """The model call a real bot would await; here a few rules over the memory's context."""
    await asyncio.sleep(0.001)  # the network round trip
    name, allergy = memory.get("user:name"), memory.get("user:allergy")
    if "what is my name" in message.lower():
        return f"your name is {name}." if name else "I don't know your name yet."
    if "dinner" in message.lower() and allergy and f"user:allergy: {allergy}" in context:
        return f"you are allergic to {allergy}, so no satay."
    return "noted."


async def main(folder: Path) -> None:
    bot = Bot(folder)
    conversations = {
        "alice": ["Hi, my name is Alice.", "I'm allergic to peanuts.", "What should I have for dinner?"],
        "bob": ["My name is Bob.", "What is my name?"],
        "carol": ["Hello!"],
    }

    async def talk(user_id: str, messages: list[str]) -> None:
        for message in messages:
            answer = await bot.handle(user_id, message)
            print(f"{user_id}: {message}\nbot to {user_id}: {answer}")

    # Three users at once; each user's messages in order, as a chat goes.
    await asyncio.gather(*(talk(user_id, messages) for user_id, messages in conversations.items()))

    # A burst: 200 messages of one user at once, as from many tabs or a retrying client.
    await asyncio.gather(*(bot.handle("carol", f"burst message {i}") for i in range(200)))
    async with await bot.open("carol") as carol:
        stored = [entry.data["content"] for entry in carol.get_recent(10_000) if entry.data["role"] == "user"]
        burst = sum(content.startswith("burst message") for content in stored)
        print(f"burst: 200 messages, {burst} turns stored, {200 - burst} lost")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())))
