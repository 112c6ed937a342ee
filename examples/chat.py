"""A terminal chat loop with sentinel-memory: message, remember, context, model, remember the reply.

Run it with ``make demo`` (or ``python examples/chat.py``). It plays a short
scripted conversation, so it runs offline and prints the same thing every
time; ``python examples/chat.py --interactive`` lets you type instead.

The model is a stand-in that answers from the prompt context it is given.
The comment in ``reply`` shows where a real model call goes. Everything
else is what a real bot does on every message:

1. remember the user's message as a chat turn (``add_turn``: no keys to invent);
2. remember facts worth keeping, with an importance (here: a tiny rule-based extractor);
3. build the prompt context that fits the budget, must-keep facts first;
4. call the model with that context;
5. remember the model's reply as a turn too.

The memory is a JSON file, so a restart picks up where the chat left off.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from sentinel_memory import Context, JsonFileStore, Memory, create_memory

SCRIPT = [
    "Hi! My name is Jakub.",
    "I'm allergic to peanuts, please remember that.",
    "What's the weather like in Prague?",
    "Can you suggest a dessert?",
    "What is my name?",
]

#: What the extractor recognises, with the importance each kind of fact gets.
FACTS = [
    (re.compile(r"my name is (\w+)", re.I), "user:name", "{0}", 0.9),
    (re.compile(r"allergic to (\w+)", re.I), "user:allergy", "allergic to {0}", 1.0),
]

SYSTEM_PROMPT = "You are a helpful assistant. What you remember about the user:\n{memory}"


class Clock:
    """A minute passes between messages; a fixed start, so every run prints the same."""

    def __init__(self) -> None:
        self.now = 1_792_310_400_000

    def __call__(self) -> int:
        return self.now


def remember_facts(mem: Memory, message: str) -> None:
    """Step 2: keep what matters with a high importance (a real bot might ask a model to rate it)."""
    for pattern, key, template, importance in FACTS:
        found = pattern.search(message)
        if found:
            mem.remember(key, template.format(*found.groups()), importance=importance)


def reply(message: str, context: Context) -> str:
    """Step 4: the model. This stand-in answers from the context it was given.

    With a real model this is where the call goes, for example::

        response = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "system", "content": SYSTEM_PROMPT.format(memory=context.text)},
                      {"role": "user", "content": message}],
        )
        return response.choices[0].message.content
    """
    known = context.text
    name = re.search(r"user:name: (\w+)", known)
    asked = message.lower()
    if "my name is" in asked and name:
        return f"Nice to meet you, {name.group(1)}!"
    if "what is my name" in asked:
        return f"Your name is {name.group(1)}." if name else "I don't know your name yet."
    if "dessert" in asked:
        if "peanuts" in known:
            return "How about a lemon sorbet? It has no peanuts."
        return "How about a peanut butter cookie?"
    return "Noted!" if "remember" in asked else "I can't check the weather, sorry."


def turn(mem: Memory, message: str) -> str:
    """One message in, one reply out: the whole loop."""
    mem.add_turn("user", message, importance=0.2)  # 1. the message itself
    remember_facts(mem, message)  # 2. facts worth keeping
    context = mem.get_context(token_budget=40, query=message, must_keep=0.9)  # 3. what the model sees
    answer = reply(message, context)  # 4. the model
    mem.add_turn("assistant", answer, importance=0.1)  # 5. the reply
    print(f"  [context: {context.tokens} tokens, {len(context.entries)} memories, {context.omitted} left out]")
    return answer


def main(folder: Path, messages: list[str] | None) -> None:
    clock = Clock()
    mem = create_memory(limit=6, store=JsonFileStore(folder / "memory.json"), autosave=True, clock=clock)
    incoming = iter(messages) if messages is not None else _typed()
    for message in incoming:
        print(f"you: {message}")
        print(f"bot: {turn(mem, message)}")
        clock.now += 60_000
    print(f"\nthe memory holds {len(mem)} entries (limit 6): {', '.join(mem)}")

    restarted = create_memory(limit=6, store=JsonFileStore(folder / "memory.json"), autosave=True, clock=clock)
    print("after a restart the next turn is", restarted.add_turn("user", "I'm back!").key)


def _typed():
    print("type a message (an empty line ends the chat)")
    for line in sys.stdin:
        if not line.strip():
            return
        yield line.strip()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactive", action="store_true", help="type the messages instead of the script")
    parser.add_argument("folder", nargs="?", type=Path, help="keep the memory file here (default: a temporary folder)")
    options = parser.parse_args()
    script = None if options.interactive else SCRIPT
    if options.folder is not None:
        main(options.folder, script)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp), script)
