"""The benchmark workloads: stores of N entries of about 60 characters, in several shapes.

Building a store through N remembers would time the build, not the
operation; the entries here are what those remembers would have made.

A *shape* is how the entries' importances and ttls are spread, because
that is what the speed machinery depends on:

* ``seven``: importance from seven fixed values, no ttls (an app that
  hard-codes a few importances).
* ``continuous``: every importance its own, uniform in [0, 1] (a
  classifier's score, an LLM's rating).
* ``expiring``: continuous importances, and 30% of the entries with a ttl,
  about half of which have already expired (cart notes, reminders).
"""

from __future__ import annotations

import random

from sentinel_memory import MemoryState
from sentinel_memory.core.values import Config, Entry

NOW = 1_792_310_400_000
DAY = 86_400_000
WORDS = (
    "refund order status cart warehouse shipping invoice customer support ticket "
    "weather prague lunch meeting tomorrow question answer reminder allergy peanut "
    "language czech english account password reset delivery address payment card"
).split()
IMPORTANCES = [0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]
SHAPES = ("seven", "continuous", "expiring")
#: A two-word query, and one taken from a chat turn: most of its words are in no entry.
QUERIES = {"two words": "refund status", "chat turn": "what did I order last week?"}


def sentence(rng: random.Random, length: int = 60) -> str:
    """About ``length`` characters of words."""
    out = []
    while sum(len(w) + 1 for w in out) < length - 8:
        out.append(rng.choice(WORDS))
    return " ".join(out)


def make_entries(n: int, shape: str = "seven", *, seed: int = 42) -> list[Entry]:
    """``n`` entries remembered over the last two days, oldest first, importances and ttls by ``shape``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    rng = random.Random(seed)
    stamps = sorted(NOW - rng.randrange(0, 2 * DAY) for _ in range(n))
    entries = []
    for i, at in enumerate(stamps):
        importance = rng.choice(IMPORTANCES) if shape == "seven" else rng.random()
        expires_at = None
        if shape == "expiring" and rng.random() < 0.3:
            # ttls of up to two days: about half of them have run out by NOW.
            expires_at = at + rng.randrange(1, 2 * DAY)
        entries.append(
            Entry(
                key=f"chat:{i}",
                data=sentence(rng),
                importance=importance,
                created_at=at,
                updated_at=at,
                expires_at=expires_at,
                seq=i,
            )
        )
    return entries


def make_state(n: int, shape: str = "seven", *, limit: int | None = None, seed: int = 42) -> MemoryState:
    """A state of ``n`` stored entries of ``shape`` (see :func:`make_entries`)."""
    entries = make_entries(n, shape, seed=seed)
    return MemoryState(config=Config(limit=limit or max(n, 1)), entries={e.key: e for e in entries}, next_seq=n)


def live_texts(state: MemoryState, now: int = NOW) -> list[str]:
    """The rendered lines of the live entries, oldest first: what a newest-first trimmer sees."""
    return [e.line for e in state.index.live_by_age(now)]


def mass_expiry_state(n: int = 100_000, expired: int = 15_000, *, seed: int = 7) -> MemoryState:
    """A full store of ``n`` continuous-importance entries, ``expired`` of which have a ttl that ran out by NOW."""
    rng = random.Random(seed)
    entries = make_entries(n, "continuous", seed=seed)
    doomed = set(rng.sample(range(n), expired))
    entries = [
        Entry(e.key, e.data, e.importance, e.created_at, e.updated_at, NOW - 1 if i in doomed else None, e.seq)
        for i, e in enumerate(entries)
    ]
    return MemoryState(config=Config(limit=n), entries={e.key: e for e in entries}, next_seq=n)


# -- chat text ---------------------------------------------------------------------------------

#: The languages of the chat-text workload, from chatterbot-corpus (BSD licensed, on PyPI).
CHAT_LANGUAGES = ("english", "german", "spanish", "russian", "japanese", "chinese")


def chat_lines() -> dict[str, list[str]]:
    """Real chat lines by language: the conversations of chatterbot-corpus, one line per message.

    Written by people for a chatbot, not for this project: lines end in ``?``,
    ``.``, ``!``, the ideographic full stop or a word, and vary from one word to a paragraph.
    """
    from pathlib import Path

    import chatterbot_corpus
    import yaml

    root = Path(chatterbot_corpus.__file__).parent / "data"
    lines: dict[str, list[str]] = {}
    for language in CHAT_LANGUAGES:
        found = []
        for path in sorted((root / language).glob("*.yml")):
            for conversation in yaml.safe_load(path.read_text(encoding="utf-8")).get("conversations") or []:
                found.extend(line.strip() for line in conversation if isinstance(line, str) and line.strip())
        lines[language] = found
    return lines


def make_chat_state(n: int, *, notes: float = 0.2, seed: int = 42) -> MemoryState:
    """``n`` entries a chat makes: turns (``add_turn``) of real chat lines, and ``notes`` of them facts.

    One entry a second up to NOW, languages mixed; a fact has a continuous
    importance, a turn the default 0.3. Built with the core functions, so
    every entry is what a bot's own calls would have stored.
    """
    from sentinel_memory import core

    rng = random.Random(seed)
    pool = [line for found in chat_lines().values() for line in found]
    state = MemoryState(config=Config(limit=max(n, 1)))
    for i in range(n):
        now = NOW - (n - i) * 1000
        if rng.random() < notes:
            state, _ = core.remember(state, f"note:{i}", rng.choice(pool), now=now, importance=rng.random())
        else:
            state, _, _ = core.add_turn(state, rng.choice(("user", "assistant")), rng.choice(pool), now=now)
    return state


def chat_queries(count: int, *, seed: int = 7) -> list[str]:
    """``count`` queries taken from chat turns: what a user said, used to query the next context."""
    rng = random.Random(seed)
    pool = [line for found in chat_lines().values() for line in found]
    return [rng.choice(pool) for _ in range(count)]


def make_agent_state(n: int, *, notes: float = 0.2, seed: int = 42) -> MemoryState:
    """``n`` entries a tool-using agent makes: steps of a question, a tool call, its result and an answer.

    The texts are chatterbot-corpus's lines, languages mixed; ``notes`` of the
    entries are facts with continuous importances. Stored with
    ``core.add_messages`` a step at a time, one step a second up to NOW, so
    every turn is what an agent's own calls would have stored.
    """
    from sentinel_memory import core

    rng = random.Random(seed)
    pool = [line for found in chat_lines().values() for line in found]
    state = MemoryState(config=Config(limit=max(n, 1)))
    step = 0
    while len(state.entries) < n:
        now = NOW - (n - len(state.entries)) * 1000
        if rng.random() < notes:
            state, _ = core.remember(state, f"note:{step}", rng.choice(pool), now=now, importance=rng.random())
        else:
            call = {"id": f"call_{step}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            batch = [
                {"role": "user", "content": rng.choice(pool)},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": rng.choice(pool)},
                {"role": "assistant", "content": rng.choice(pool)},
            ]
            state, _, _ = core.add_messages(state, batch[: n - len(state.entries)], now=now)
        step += 1
    return state
