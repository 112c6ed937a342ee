"""Write and execute the teaching notebooks: ``python notebooks/build.py``.

The notebooks are committed with their outputs, and the test suite re-runs
them with nbval, so an output that drifts from the code fails the tests.
This script is how they are written: edit a cell here, run ``make
notebooks``, and commit the result. Every clock in them is fixed, so every
run prints the same thing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

SETUP = '''\
from sentinel_memory import create_memory

MINUTE, HOUR, DAY = 60_000, 3_600_000, 86_400_000


class Clock:
    """A clock that only moves when told to: every run prints the same numbers."""

    def __init__(self, now=1_792_310_400_000):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, ms):
        self.now += ms'''

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "restaurant": [
        (
            "md",
            """\
# The waiter with a short memory

You tell the waiter your name and that you are allergic to peanuts, then chat
about the weather, the traffic and the football. A good waiter remembers the
allergy all evening. A bad waiter remembers the last five things you said.

Here is the scene with a memory that holds five things: the name (importance
0.9), the allergy (1.0), then six small-talk messages (0.1), one minute
apart.""",
        ),
        ("code", SETUP),
        (
            "code",
            """\
messages = [("user:name", "Jakub", 0.9), ("user:allergy", "allergic to peanuts", 1.0)]
messages += [(f"chat:{i}", f"small talk message {i}", 0.1) for i in range(1, 7)]

clock = Clock()
mem = create_memory(limit=5, clock=clock)
held_by_memory, held_by_last_five = [], []
for n, (key, text, importance) in enumerate(messages, start=1):
    mem.remember(key, text, importance=importance)
    held_by_memory.append({e.key for e in mem.get_recent(5)})
    held_by_last_five.append({k for k, _, _ in messages[:n][-5:]})
    clock.advance(MINUTE)

print("last-N (N = 5) keeps:  ", ", ".join(k for k, _, _ in messages[-5:]))
print("sentinel-memory keeps: ", ", ".join(e.key for e in mem.get_recent(5)))""",
        ),
        (
            "md",
            """\
The bad waiter kept `chat:2` to `chat:6`; the name and the allergy are gone.
sentinel-memory kept the name, the allergy and the three newest messages.
Each of the three compactions evicted the least important entry, and among
equally unimportant ones the oldest (freshness settles the tie).""",
        ),
        (
            "code",
            """\
import json

print("stats", json.dumps(mem.stats(), separators=(",", ":")))""",
        ),
        (
            "md",
            """\
Which entries each policy holds after each message: a filled cell means the
entry is held.""",
        ),
        (
            "code",
            """\
import matplotlib.pyplot as plt

keys = [k for k, _, _ in messages]
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
for ax, title, held in [(axes[0], "keep the last five", held_by_last_five),
                        (axes[1], "sentinel-memory, limit 5", held_by_memory)]:
    grid = [[key in step for step in held] for key in keys]
    ax.imshow(grid, cmap="Greens", vmin=0, vmax=1.4, aspect="auto")
    ax.set_title(title)
    ax.set_xticks(range(len(messages)), [str(n) for n in range(1, len(messages) + 1)])
    ax.set_xlabel("after message")
axes[0].set_yticks(range(len(keys)), keys)
fig.tight_layout()
plt.show()""",
        ),
        (
            "md",
            """\
## The bad waiter comes back with a chatty query

The memory kept the allergy. But a prompt is built by `get_context`, and a
query ranks its matches first: every entry that shares a word with the query
comes before the rest. Recall is lexical and has no stop words, so a question
like "what is my name?" matches every bit of small talk that says "what",
"is" or "my". Here the allergy (1.0) and the city (0.9) share no word with the
question, and five small-talk lines do:""",
        ),
        (
            "code",
            """\
mem = create_memory(clock=Clock())
mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
mem.remember("user:city", "lives in Brno", importance=0.9)
for i, line in enumerate(["what is the weather like", "my day is fine", "what is new",
                          "is it raining in my street", "what is my horoscope"]):
    mem.remember(f"chat:{i}", line, importance=0.1)

chatty = mem.get_context(token_budget=30, query="what is my name?")
kept = mem.get_context(token_budget=30, query="what is my name?", must_keep=0.9)
print("default ranking:          ", [e.key for e in chatty.entries])
print("must_keep=0.9 ranks first:", [e.key for e in kept.entries])""",
        ),
        (
            "md",
            """\
By default the ranking is the article's, exactly: the small talk that shares
words with the question fills the budget, and the allergy is left out.
`must_keep=0.9` puts every entry of importance 0.9 or more first, whatever the
query, and the small talk fills what is left. The budget still holds: a
must-keep entry that does not fit is left out like any other.""",
        ),
        (
            "code",
            """\
print(kept.text)
print("tokens:", kept.tokens, "of 30")""",
        ),
        (
            "md",
            """\
## The same evening as chat messages

A chat model takes messages, not one block of text. `add_turn` keeps each
turn's role and content, and `get_messages` builds the prompt a
chat-completions call wants, within one budget: the facts that matter in a
system message, then the most recent turns that fit, oldest first. Each
message counts its content plus 3 tokens for the chat format, and `tokens`
is counted with the tokenizer you pass, here o200k_base.""",
        ),
        (
            "code",
            """\
from bpe_openai import get_encoding

o200k = get_encoding("o200k_base")
clock = Clock()
mem = create_memory(clock=clock)
mem.remember("user:name", "Jakub", importance=0.9)
mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
for role, text in [("user", "Hi, table for one please."), ("assistant", "Welcome! Here is the menu."),
                   ("user", "What's good tonight?"), ("assistant", "The Thai curry is excellent."),
                   ("user", "Does it have peanuts?")]:
    mem.add_turn(role, text)
    clock.advance(MINUTE)

prompt = mem.get_messages(token_budget=60, query="Does it have peanuts?", tokenizer=o200k)
for message in prompt.messages:
    print(f"{message['role']:>9}: {message['content']!r}")
print("tokens:", prompt.tokens, "of 60;", prompt.omitted, "entries left out")""",
        ),
        (
            "md",
            """\
The allergy and the name go first, in the system message; the oldest turn,
the greeting, did not fit and is left out. This is what a chat-completions call takes as
it is (`client.chat.completions.create(model=..., messages=list(prompt.messages))`);
the count is the tokenizer's, plus 3 per message:""",
        ),
        ("code", 'sum(len(o200k.encode(m["content"])) + 3 for m in prompt.messages) == prompt.tokens <= 60'),
    ],
    "refund": [
        (
            "md",
            """\
# A context that fits: the refund example

Four memories, a budget of 30 tokens, and the query "refund status". The
entry that shares a word with the query is ranked first, then the rest by
importance; each is added only if the whole rendered text still fits.""",
        ),
        ("code", SETUP),
        (
            "code",
            """\
mem = create_memory(clock=Clock())
mem.remember("user:name", "Jakub", importance=0.9)
mem.remember("user:language", "prefers answers in Czech", importance=0.8)
mem.remember("chat:7", "talked about the weather in Prague for a while", importance=0.1)
mem.remember("order:42", "refund requested for order 42, waiting for the warehouse", importance=0.7)

ctx = mem.get_context(token_budget=30, query="refund status")
print(ctx.text)
print("tokens:", ctx.tokens, " omitted:", ctx.omitted)""",
        ),
        (
            "md",
            """\
With the built-in estimator (`ceil(length / 4)`) the language preference would
push the text to 31 tokens, so it is skipped, and the weather chat does not fit
either. Now the same call with a real tokenizer, o200k_base, from `bpe-openai`,
which ships the encoding with the package (nothing is downloaded):""",
        ),
        (
            "code",
            """\
from bpe_openai import get_encoding

o200k = get_encoding("o200k_base")
ctx = mem.get_context(token_budget=30, query="refund status", tokenizer=o200k)  # any object with encode()
print(ctx.text)
print("tokens:", ctx.tokens, " omitted:", ctx.omitted)""",
        ),
        (
            "md",
            """\
The real tokenizer counts this English text as cheaper than the estimate, so
the language preference fits too, exactly at 30. `tokens` is always the
tokenizer's count of the returned text itself:""",
        ),
        ("code", "len(o200k.encode(ctx.text)) == ctx.tokens <= 30"),
        (
            "md",
            """\
The text is rendered oldest first, so the model reads the memories in the
order they happened, whatever their rank:""",
        ),
        ("code", "[(e.key, e.importance) for e in ctx.entries]"),
    ],
    "expiry": [
        (
            "md",
            """\
# Things that expire, and two shorter-lived memories

A cart note is useful for a quarter of an hour and silly next week. Give it a
`ttl` (milliseconds) and it is gone from every read path at the exact
millisecond it expires.""",
        ),
        ("code", SETUP),
        (
            "code",
            """\
clock = Clock()
mem = create_memory(clock=clock)
mem.remember("session:cart", "2 items in the cart", ttl=15 * MINUTE)  # or ttl=timedelta(minutes=15)

clock.advance(14 * MINUTE)
print("after 14 min:", mem.get("session:cart"))
clock.advance(1 * MINUTE)
print("after 15 min:", mem.get("session:cart"))""",
        ),
        ("md", "Gone means gone from every place the app can look, from that very millisecond:"),
        (
            "code",
            """\
def read_paths(key):
    return {
        "get": mem.get(key) is not None,
        "has": mem.has(key),
        "size": mem.size(),
        "get_recent": [e.key for e in mem.get_recent()],
        "recall": [h.entry.key for h in mem.recall("cart")],
        "context": mem.get_context(token_budget=100).text,
    }

clock.now -= 1  # one millisecond before the deadline
print("at expires_at - 1:", read_paths("session:cart"))
clock.now += 1
print("at expires_at:    ", read_paths("session:cart"))""",
        ),
        (
            "md",
            """\
The expired entry is invisible, but still stored until the next compaction,
which reports it. `stats()` shows both numbers:""",
        ),
        (
            "code",
            """\
print({k: mem.stats()[k] for k in ("size", "stored")})
dropped = mem.compact()
print("compact() expired:", [e.key for e in dropped.expired])
print({k: mem.stats()[k] for k in ("size", "stored", "expired")})""",
        ),
        (
            "md",
            """\
## L0: the scratch cache

For values you don't want to recompute within a turn, such as a tool result.
The default ttl is 5 minutes, and the cache is never saved.""",
        ),
        (
            "code",
            """\
mem.cache.put("tool:weather", {"city": "Prague", "celsius": 4})
clock.advance(5 * MINUTE - 1)
print("just before 5 min:", mem.cache.get("tool:weather"))
clock.advance(1)
print("at 5 min:         ", mem.cache.get("tool:weather"))""",
        ),
        (
            "md",
            """\
## L1: working memory for the task in progress

`set()` shallow-merges a dict; after `working_ttl` (default 1 hour) without a
`set()`, the working memory reads as `{}` again.""",
        ),
        (
            "code",
            """\
mem.working.set({"task": "refund", "step": 1})
mem.working.set({"step": 2})
print("now:            ", mem.working.get())
clock.advance(HOUR - 1)
print("59:59.999 later:", mem.working.get())
clock.advance(1)
print("an hour idle:   ", mem.working.get())""",
        ),
    ],
    "tokens": [
        (
            "md",
            """\
# The estimator is an estimate

`estimate_tokens(text)` is `ceil(utf16_length / 4)`. It lets the library work
with no dependencies; it is not accurate. Here it is against a real
tokenizer, o200k_base, on four short texts of our own: English, Czech, a line
of JavaScript and Japanese.""",
        ),
        (
            "code",
            """\
from bpe_openai import get_encoding
from sentinel_memory import estimate_tokens

o200k = get_encoding("o200k_base")
texts = {
    "English": "refund requested for order 42, waiting for the warehouse",
    "Czech": "Žádost o vrácení peněz za objednávku 42, čekáme na sklad",
    "JavaScript": "const total = items.reduce((sum, i) => sum + i.price * i.qty, 0);",
    "Japanese": "注文42の返金を受け付け、倉庫の確認待ちです",
}
rows = [(name, estimate_tokens(text), len(o200k.encode(text))) for name, text in texts.items()]
print(f"{'text':<11}{'estimate':>9}{'o200k':>7}{'real / estimate':>17}")
for name, estimate, real in rows:
    print(f"{name:<11}{estimate:>9}{real:>7}{real / estimate:>17.2f}")""",
        ),
        (
            "md",
            """\
English is over-counted (safe: the real text is smaller than the estimate).
Czech and code are under-counted, and Japanese by a factor of about three: with
the estimator, a "30-token" Japanese context can really be about 90 tokens.""",
        ),
        (
            "code",
            """\
import matplotlib.pyplot as plt

names = [name for name, _, _ in rows]
x = range(len(rows))
fig, ax = plt.subplots(figsize=(6.5, 3.2))
ax.bar([i - 0.2 for i in x], [e for _, e, _ in rows], width=0.4, label="estimate (length / 4)")
ax.bar([i + 0.2 for i in x], [r for _, _, r in rows], width=0.4, label="o200k_base")
ax.set_xticks(list(x), names)
ax.set_ylabel("tokens")
ax.legend()
fig.tight_layout()
plt.show()""",
        ),
        (
            "md",
            """\
So if the limit is hard, pass your model's tokenizer. Any `(text) -> number`
works, once in `create_memory(tokenizer=...)` or per call:""",
        ),
        (
            "code",
            """\
from sentinel_memory import create_memory

mem = create_memory(clock=lambda: 0)
mem.remember("order:42", texts["Japanese"], importance=0.7)
by_estimate = mem.get_context(token_budget=10)
by_o200k = mem.get_context(token_budget=10, tokenizer=lambda text: len(o200k.encode(text)))
print("estimator:  fits as", by_estimate.tokens, "tokens; really", len(o200k.encode(by_estimate.text)), "tokens")
print("o200k_base: omitted", by_o200k.omitted, "entry; text", repr(by_o200k.text))""",
        ),
    ],
    "compaction": [
        (
            "md",
            """\
# Importance first, freshness as a tiebreaker

When the store is over its limit, expired entries go first, then the entries
of lowest `retention = importance + 0.1 * freshness`, where freshness falls
from 1 to 0 over `recency_window` (24 hours). Freshness adds at most 0.1.""",
        ),
        ("code", SETUP),
        (
            "code",
            '''\
def duel(old_importance):
    """A day-old entry against a brand-new 0.5, in a memory that holds one."""
    clock = Clock()
    mem = create_memory(limit=1, clock=clock)
    mem.remember("day-old", "yesterday", importance=old_importance)
    clock.advance(DAY)
    mem.remember("brand-new", "just now", importance=0.5)
    return [e.key for e in mem.get_recent()]

print("new 0.5 (retention 0.6) vs day-old 0.55:", duel(0.55))
print("new 0.5 (retention 0.6) vs day-old 0.65:", duel(0.65))''',
        ),
        (
            "md",
            """\
Importance dominates; freshness only settles the close calls.

## The entry you just added can be the one evicted

Add a 0.1 entry to a full store of 0.9s and the newcomer goes. `remember`
still returns the entry it stored, and `on_evict` hears about it.""",
        ),
        (
            "code",
            """\
reports = []
mem = create_memory(limit=3, clock=Clock(), on_evict=reports.append)
for key in ("a", "b", "c"):
    mem.remember(key, key, importance=0.9)
entry = mem.remember("chatter", "hi", importance=0.1)
print("returned:", entry.key, "| still there:", mem.has("chatter"))
print("on_evict got:", [e.key for e in reports[0].evicted])""",
        ),
        (
            "md",
            """\
## Nothing is lost silently: an archive of what is dropped

`on_evict` receives a `Compaction(expired, evicted)` for every automatic
compaction that dropped something. Here it appends each dropped entry to a
JSON-lines file.""",
        ),
        (
            "code",
            """\
import json
import tempfile
from pathlib import Path

archive = Path(tempfile.mkdtemp()) / "archive.jsonl"


def to_archive(compaction):
    with archive.open("a", encoding="utf-8") as out:
        for why, entries in (("expired", compaction.expired), ("evicted", compaction.evicted)):
            for e in entries:
                out.write(json.dumps({"why": why, "key": e.key, "data": e.data, "importance": e.importance}) + "\\n")


clock = Clock()
mem = create_memory(limit=2, clock=clock, on_evict=to_archive)
mem.remember("session:cart", "2 items", importance=0.9, ttl=15 * MINUTE)
mem.remember("user:name", "Jakub", importance=0.9)
clock.advance(15 * MINUTE)
mem.remember("chat:1", "hello", importance=0.1)   # the cart has expired: it goes
mem.remember("chat:2", "how are you", importance=0.2)  # over the limit: chat:1 goes
print(archive.read_text(encoding="utf-8"), end="")
print(mem.stats())""",
        ),
    ],
}


def build(name: str, cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    for kind, source in cells:
        cell = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
        notebook.cells.append(cell)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{name}-{index}"  # stable ids keep diffs small
        cell.metadata.pop("execution", None)
    return notebook


def main(names: list[str]) -> None:
    for name in names or NOTEBOOKS:
        notebook = build(name, NOTEBOOKS[name])
        nbformat.write(notebook, HERE / f"{name}.ipynb")
        print(f"wrote notebooks/{name}.ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
