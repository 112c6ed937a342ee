"""Write and execute the course's notebooks: ``python notebooks/build.py [NAME ...]``.

The notebooks are a numbered course, from a first memory to checking a port. They are
committed with their outputs, and the test suite re-runs them with nbval, so an output that
drifts from the code fails the tests. This script is how they are written: edit a cell
here, run ``make notebooks``, and commit the result. Every clock in them is the shared
``FakeClock``, so every run prints the same thing.

Each notebook has at least one figure drawn when it runs, exercises whose solutions are code
cells tagged ``solution`` (folded on the site and in JupyterLab until the reader opens them,
and executed by nbval like every other cell, so a solution that stops being right fails the
tests), and a link to the next notebook.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str] | tuple[str, str, str]


def setup(*names: str, memory: bool = True) -> Cell:
    """The first code cell: ``create_memory`` and the shared fake clock, with the time units the notebook uses."""
    units = ", ".join([*names, "FakeClock"])
    first = "from sentinel_memory import create_memory\n" if memory else ""
    return (
        "code",
        f"""\
{first}from sentinel_memory.fakeclock import {units}

# FakeClock stands still until clock.advance(ms) moves it, so every run prints the same numbers.
# Times are milliseconds; MINUTE, HOUR and DAY are how many.""",
    )


def solution(source: str) -> Cell:
    """A solution cell: folded until the reader opens it, executed like any other."""
    return ("code", source, "solution")


#: The course, in order: file name, title, cells. The "next" link at the end of each is added by ``build``.
COURSE: list[tuple[str, str, list[Cell]]] = [
    (
        "01-restaurant",
        "The waiter with a short memory: why importance first",
        [
            (
                "md",
                """\
# 1 · The waiter with a short memory: why importance first

You tell the waiter your name and that you are allergic to peanuts, then chat
about the weather, the traffic and the football. A good waiter remembers the
allergy all evening. A bad waiter remembers the last five things you said.

Most chat memories are the bad waiter: they keep the last *N* messages. This
notebook shows why sentinel-memory keeps the most *important* things instead,
with the scene from the article: a memory that holds five things, the name
(importance 0.9), the allergy (1.0), then six small-talk messages (0.1), one
minute apart.""",
            ),
            setup("MINUTE"),
            (
                "code",
                """\
messages = [("user:name", "Jakub", 0.9), ("user:allergy", "allergic to peanuts", 1.0)]
messages += [(f"chat:{i}", f"small talk message {i}", 0.1) for i in range(1, 7)]

clock = FakeClock()
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
entry is held. On the left the name and the allergy fall off the top; on the
right they stay, and the small talk takes turns in the three places left.""",
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
                "alt: Two grids of which entries are held after each of eight messages: keeping the last five drops the name and the allergy; sentinel-memory keeps both and rotates the small talk.",
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
mem = create_memory(clock=FakeClock())
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
## Exercises

1. Make the memory smaller: a limit of **4**, the same eight messages. Which
   four entries are left? Predict first, then check.
2. Give the small talk importance **0.95** instead of 0.1, limit 5 again. Now
   which entry is the first to go, and why?

Try them in a new cell; the solution is below (open it when you are done).""",
            ),
            solution(
                """\
def kept_after(limit, small_talk_importance):
    clock = FakeClock()
    mem = create_memory(limit=limit, clock=clock)
    for key, text, importance in messages:
        chat = key.startswith("chat:")
        mem.remember(key, text, importance=small_talk_importance if chat else importance)
        clock.advance(MINUTE)
    return sorted(e.key for e in mem.get_recent())


# 1. The two facts and the two newest messages.
assert kept_after(4, 0.1) == ["chat:5", "chat:6", "user:allergy", "user:name"]
# 2. Small talk at 0.95 outranks the name (0.9): the name goes first, then the oldest chat.
assert kept_after(5, 0.95) == ["chat:3", "chat:4", "chat:5", "chat:6", "user:allergy"]
print("both answers check out")""",
            ),
        ],
    ),
    (
        "02-refund",
        "A context that fits: why a budget",
        [
            (
                "md",
                """\
# 2 · A context that fits: why a budget

A chat model reads a limited number of tokens, and each one costs time and
money. So the memory never hands over more than a **token budget**: it ranks
the entries, then takes them in order, adding each only if the whole rendered
text still fits.

The article's example: four memories, a budget of 30 tokens, and the query
"refund status". The entry that shares a word with the query is ranked first,
then the rest by importance.""",
            ),
            setup(),
            (
                "code",
                """\
mem = create_memory(clock=FakeClock())
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
either. Here is that greedy fill step by step, recomputed from the entries:
each bar is the size of the whole text if that entry were added.""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

from sentinel_memory import estimate_tokens

matches = {hit.entry.key for hit in mem.recall("refund status")}
ranked = sorted(mem.get_recent(), key=lambda e: (e.key not in matches, -e.importance))


def rendered(entries):  # the text get_context would return: oldest first, one line each
    ordered = sorted(entries, key=lambda e: e.created_at)
    return "\\n".join(f"{e.key}: {e.data}" for e in ordered)


taken, steps = [], []
for entry in ranked:
    size = estimate_tokens(rendered(taken + [entry]))
    steps.append((entry.key, size, size <= 30))
    if size <= 30:
        taken.append(entry)
assert [e.key for e in taken] == [e.key for e in ranked if e in ctx.entries]  # the library agrees

fig, ax = plt.subplots(figsize=(7, 2.8))
for i, (_key, size, fits) in enumerate(steps):
    ax.barh(i, size, color="tab:green" if fits else "tab:gray")
    ax.text(size + 0.4, i, f"{size} tokens: " + ("added" if fits else "skipped"), va="center")
ax.axvline(30, color="tab:red", linestyle="--")
ax.text(30.3, len(steps) - 0.5, "budget 30", color="tab:red")
ax.set_yticks(range(len(steps)), [f"{i + 1}. {key}" for i, (key, _, _) in enumerate(steps)])
ax.invert_yaxis()
ax.set_xlim(0, 48)
ax.set_xlabel("estimated tokens of the whole text, if this entry were added")
fig.tight_layout()
plt.show()""",
                "alt: The greedy fill of the refund example: order:42 at 17 tokens and user:name at 21 are added; user:language at 31 and chat:7 at 35 would pass the budget of 30 and are skipped.",
            ),
            (
                "md",
                """\
Now the same call with a real tokenizer, o200k_base, from `bpe-openai`, which
ships the encoding with the package (nothing is downloaded). Pass the
tokenizer object itself: the memory calls its `encode`.""",
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
            (
                "md",
                """\
## Exercises

1. With the estimator, what is the smallest budget at which **all four**
   entries fit? Find it with a loop over budgets, not by hand.
2. With the budget of 30 and no query at all, which entries are in the
   context? (Without a query, the ranking is by retention alone.)""",
            ),
            solution(
                """\
everything = next(b for b in range(100) if mem.get_context(token_budget=b).omitted == 0)
assert everything == estimate_tokens(rendered(mem.get_recent()))  # the whole text, estimated
print("all four fit from a budget of", everything)

no_query = mem.get_context(token_budget=30)
assert [e.key for e in no_query.entries] == ["user:name", "user:language", "chat:7"]
print("without a query:", [e.key for e in no_query.entries], no_query.tokens, "tokens")""",
            ),
        ],
    ),
    (
        "03-compaction",
        "Importance first, freshness as a tiebreaker",
        [
            (
                "md",
                """\
# 3 · Importance first, freshness as a tiebreaker

When a memory is over its limit, something has to go. Expired entries go
first; then the entries of lowest **retention**:

    retention = importance + 0.1 × freshness
    freshness = falls from 1 to 0 over recency_window (24 hours by default)

Freshness adds at most 0.1, so importance decides, and freshness only settles
close calls. Here is the curve for a few importances:""",
            ),
            setup("DAY", "HOUR", "MINUTE"),
            (
                "code",
                """\
import matplotlib.pyplot as plt

from sentinel_memory.core.retention import retention

hours = range(0, 37)
fig, ax = plt.subplots(figsize=(7, 3.4))
for importance in (0.3, 0.5, 0.55, 0.65, 0.9):
    clock = FakeClock()
    entry = create_memory(clock=clock).remember("k", "x", importance=importance)
    curve = [retention(entry, entry.updated_at + h * HOUR, DAY) for h in hours]
    ax.plot(list(hours), curve, label=f"importance {importance}")
ax.axvline(24, color="gray", linestyle=":")
ax.text(24.3, 0.33, "recency_window\\n(24 h)", color="gray", fontsize=8)
ax.set_xlabel("age of the entry (hours)")
ax.set_ylabel("retention")
ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()
plt.show()""",
                "alt: Retention against age for importances 0.3 to 0.9: each line falls by 0.1 over the 24-hour recency window, so lines more than 0.1 apart never cross.",
            ),
            (
                "md",
                """\
The curves never cross a gap bigger than 0.1: a brand-new 0.5 (retention 0.6)
beats a day-old 0.55 (retention 0.55), but not a day-old 0.65. The memory does
exactly that:""",
            ),
            (
                "code",
                '''\
def duel(old_importance, age=DAY):
    """An old entry against a brand-new 0.5, in a memory that holds one."""
    clock = FakeClock()
    mem = create_memory(limit=1, clock=clock)
    mem.remember("old", "earlier", importance=old_importance)
    clock.advance(age)
    mem.remember("brand-new", "just now", importance=0.5)
    return [e.key for e in mem.get_recent()]

print("new 0.5 (retention 0.6) vs day-old 0.55:", duel(0.55))
print("new 0.5 (retention 0.6) vs day-old 0.65:", duel(0.65))''',
            ),
            (
                "md",
                """\
## The entry you just added can be the one evicted

Add a 0.1 entry to a full store of 0.9s and the newcomer goes. `remember`
still returns the entry it stored, and `on_evict` hears about it.""",
            ),
            (
                "code",
                """\
reports = []
mem = create_memory(limit=3, clock=FakeClock(), on_evict=reports.append)
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
                record = {"why": why, "key": e.key, "data": e.data, "importance": e.importance}
                out.write(json.dumps(record) + "\\n")


clock = FakeClock()
mem = create_memory(limit=2, clock=clock, on_evict=to_archive)
mem.remember("session:cart", "2 items", importance=0.9, ttl=15 * MINUTE)
mem.remember("user:name", "Jakub", importance=0.9)
clock.advance(15 * MINUTE)
mem.remember("chat:1", "hello", importance=0.1)   # the cart has expired: it goes
mem.remember("chat:2", "how are you", importance=0.2)  # over the limit: chat:1 goes
print(archive.read_text(encoding="utf-8"), end="")
print(mem.stats())""",
            ),
            (
                "md",
                """\
## Exercises

1. A 0.55 entry against a brand-new 0.5: up to what age does the old one
   survive? Use `duel(0.55, age=...)` at 11 and at 13 hours, and explain the
   switch with the formula.
2. In a memory of limit 3 holding three entries of importance 0.9, what is the
   lowest importance a newcomer needs to stay? (Hint: all four are fresh.)""",
            ),
            solution(
                """\
# 1. The old one keeps 0.55 + 0.1 * (1 - age / 24 h); the new one has 0.6. Equal at 12 hours.
assert duel(0.55, age=11 * HOUR) == ["old"]
assert duel(0.55, age=13 * HOUR) == ["brand-new"]


# 2. Fresh entries differ by importance alone, and a tie evicts the older: above 0.9.
def newcomer_stays(importance):
    mem = create_memory(limit=3, clock=FakeClock())
    for key in ("a", "b", "c"):
        mem.remember(key, key, importance=0.9)
    mem.remember("new", "x", importance=importance)
    return mem.has("new")

assert not newcomer_stays(0.89) and newcomer_stays(0.9) and newcomer_stays(0.91)
print("a tie at 0.9 keeps the newcomer: the older entry goes")""",
            ),
        ],
    ),
    (
        "04-expiry",
        "Things that expire, and two shorter-lived memories",
        [
            (
                "md",
                """\
# 4 · Things that expire, and two shorter-lived memories

Some memories have a shelf life. A cart note is useful for a quarter of an
hour and silly next week; a weather lookup is good for a few minutes; the
step a task is at matters only while the task goes on. A memory has one
place for each:

* a long-term entry with a **`ttl`**, gone at the exact millisecond it expires;
* the **L0 cache**, for scratch values such as a tool result (5 minutes, never saved);
* the **L1 working memory**, one dict for the task in progress (cleared after 1 hour idle).""",
            ),
            setup("DAY", "HOUR", "MINUTE"),
            (
                "code",
                """\
clock = FakeClock()
start = clock()
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
cached_at = clock()
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
working_from = clock()
mem.working.set({"task": "refund", "step": 1})
mem.working.set({"step": 2})
print("now:            ", mem.working.get())
clock.advance(HOUR - 1)
print("59:59.999 later:", mem.working.get())
clock.advance(1)
print("an hour idle:   ", mem.working.get())""",
            ),
            (
                "md",
                """\
## The three lifetimes on one timeline

Each bar runs from when the value was written to the millisecond it stopped
being readable, as this notebook just measured them (minutes since the cart
note was written):""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

lives = [
    ("session:cart (ttl 15 min)", start, start + 15 * MINUTE, "tab:green"),
    ("cache tool:weather (5 min)", cached_at, cached_at + 5 * MINUTE, "tab:orange"),
    ("working memory (1 h idle)", working_from, working_from + HOUR, "tab:purple"),
]
fig, ax = plt.subplots(figsize=(8, 2.4))
for i, (_label, born, gone, color) in enumerate(lives):
    ax.barh(i, (gone - born) / MINUTE, left=(born - start) / MINUTE, color=color, alpha=0.8)
    ax.plot([(gone - start) / MINUTE], [i], marker="x", color="black")
ax.set_yticks(range(len(lives)), [label for label, *_ in lives])
ax.invert_yaxis()
ax.set_xlabel("minutes since the cart note was written (x: no longer readable)")
fig.tight_layout()
plt.show()""",
                "alt: A timeline of three lifetimes: the cart note from 0 to 15 minutes, the cached weather for 5 minutes, the working memory until an hour after its last set.",
            ),
            (
                "md",
                """\
## Exercises

1. Remember a note with a 10-minute ttl, then at minute 8 remember the same
   key again **without** a ttl. Is it still there a day later?
2. Put a value in the cache with `ttl=timedelta(seconds=30)`. Is it there
   after 29.999 seconds? After 30?""",
            ),
            solution(
                """\
from datetime import timedelta

clock = FakeClock()
mem = create_memory(clock=clock)
mem.remember("note", "call back", ttl=10 * MINUTE)
clock.advance(8 * MINUTE)
mem.remember("note", "call back")  # no ttl: the expiry is removed (EXP-6)
clock.advance(DAY)
assert mem.get("note") == "call back"

mem.cache.put("quote", 42, ttl=timedelta(seconds=30))
clock.advance(30_000 - 1)
assert mem.cache.get("quote") == 42
clock.advance(1)
assert mem.cache.get("quote") is None
print("re-remembering without a ttl keeps it for good; the cache's ttl is exact to the millisecond")""",
            ),
        ],
    ),
    (
        "05-tokens",
        "The estimator is an estimate",
        [
            (
                "md",
                """\
# 5 · The estimator is an estimate

A budget is only as good as the count behind it. `estimate_tokens(text)` is
`ceil(utf16_length / 4)`: it lets the library work with no dependencies, and
it is not accurate. Here it is against a real tokenizer, o200k_base, on four
short texts of our own: English, Czech, a line of JavaScript and Japanese.""",
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
                "alt: Bars of estimated and o200k_base tokens for English, Czech, JavaScript and Japanese: the estimate is high for English and about a third of the real count for Japanese.",
            ),
            (
                "md",
                """\
So if the limit is hard, pass your model's tokenizer: any object with
`encode(text)`, such as `o200k` here, or any function `(text) -> number`.
Give it once to `create_memory(tokenizer=...)`, or per call:""",
            ),
            (
                "code",
                """\
from sentinel_memory import create_memory
from sentinel_memory.fakeclock import FakeClock

mem = create_memory(clock=FakeClock())
mem.remember("order:42", texts["Japanese"], importance=0.7)
by_estimate = mem.get_context(token_budget=10)
by_o200k = mem.get_context(token_budget=10, tokenizer=o200k)
really = len(o200k.encode(by_estimate.text))
print("estimator:  fits as", by_estimate.tokens, "tokens; really", really, "tokens")
print("o200k_base: omitted", by_o200k.omitted, "entry; text", repr(by_o200k.text))""",
            ),
            (
                "md",
                """\
## Exercises

1. With o200k_base, what is the smallest budget at which the Japanese entry
   fits? Find it with a loop, then explain the number.
2. Which of the four texts does the estimator count *most* generously, in
   real tokens per estimated token?""",
            ),
            solution(
                """\
smallest = next(b for b in range(200) if mem.get_context(token_budget=b, tokenizer=o200k).omitted == 0)
assert smallest == len(o200k.encode("order:42: " + texts["Japanese"]))  # the one line it renders
print("fits from", smallest, "tokens: the whole line, key included")

generous = min(rows, key=lambda row: row[2] / row[1])
assert generous[0] == "English"
print("most over-counted:", generous[0])""",
            ),
        ],
    ),
    (
        "06-messages",
        "Chat messages within a budget",
        [
            (
                "md",
                """\
# 6 · Chat messages within a budget

A chat model takes a list of messages, not one block of text. `add_turn`
and `add_messages` keep each message whole, an assistant's tool calls and
the tool results that answer them included, and `get_messages` builds the
request a chat-completions call wants, within one budget: your own
instructions and the facts that matter in the system message, then the most
recent turns that fit, oldest first. Each message counts its content plus 3
tokens for the chat format, and `tokens` is counted with the tokenizer you
pass, here o200k_base.

Back at the restaurant, as chat messages:""",
            ),
            setup("MINUTE"),
            (
                "code",
                """\
from bpe_openai import get_encoding

from sentinel_memory import request_problems

o200k = get_encoding("o200k_base")
clock = FakeClock()
mem = create_memory(clock=clock)
mem.remember("user:name", "Jakub", importance=0.9)
mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
for role, text in [("user", "Hi, table for one please."), ("assistant", "Welcome! Here is the menu."),
                   ("user", "What's good tonight?"), ("assistant", "The Thai curry is excellent."),
                   ("user", "Does it have peanuts?")]:
    mem.add_turn(role, text)
    clock.advance(MINUTE)

prompt = mem.get_messages(token_budget=50, system="You are a friendly waiter.",
                          query="Does it have peanuts?", tokenizer=o200k)
for message in prompt.messages:
    print(f"{message['role']:>9}: {message['content']!r}")
print("tokens:", prompt.tokens, "of 50; entries left out:", prompt.omitted)
print("problems a chat API would refuse:", request_problems(prompt.messages))""",
            ),
            (
                "md",
                """\
Your instructions open the system message and the allergy and the name
follow them. The oldest turns did not fit and are left out, and what is
kept starts at a user message, as chat APIs want. The newest question is
always in: when it cannot fit, `get_messages` raises `TokenBudgetError`
rather than send a request without it. The list is new on every call, so
append the next message to it and send it as it is
(`client.chat.completions.create(model=..., messages=prompt.messages)`).

## Tool calls stay with their results

An agent's history holds tool calls. A call and the results that answer it
are kept or left out together, so a request never holds a result without
its call, or a call without its result:""",
            ),
            (
                "code",
                """\
call = {"id": "call_1", "type": "function", "function": {"name": "ingredients", "arguments": '{"dish": "curry"}'}}
mem.add_messages([
    {"role": "user", "content": "Can you check the curry for me?"},
    {"role": "assistant", "content": None, "tool_calls": [call]},
    {"role": "tool", "tool_call_id": "call_1", "content": "chicken, coconut milk, peanuts"},
    {"role": "assistant", "content": "Sorry, the curry has peanuts. Try the green salad."},
])
for budget in (60, 90, 140):
    roles = [m["role"] for m in mem.get_messages(token_budget=budget, tokenizer=o200k).messages]
    print(budget, roles)""",
            ),
            (
                "md",
                """\
## How the budget is split

The turns are taken first, newest back, from all but `facts_share` of the
budget (half, by default); the facts get everything the turns leave, and
the newest question with what follows it is always in. Here is the split
for budgets from 60 to 200 tokens, after a longer evening:""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

for i in range(8):
    mem.add_turn("user", f"And what about dish number {i}? Tell me about its ingredients.")
    mem.add_turn("assistant", f"Dish {i} is rice, vegetables and a mild sauce.")


def split(budget, **options):
    p = mem.get_messages(token_budget=budget, tokenizer=o200k, **options)
    facts = sum(len(o200k.encode(m["content"])) + 3 for m in p.messages if m["role"] == "system")
    return facts, p.tokens - facts, budget - p.tokens

budgets = list(range(60, 201, 10))
parts = [split(b) for b in budgets]
fig, ax = plt.subplots(figsize=(7.5, 3.2))
bottom = [0] * len(budgets)
for index, (label, color) in enumerate([("facts (system message)", "tab:green"),
                                        ("recent turns", "tab:blue"), ("unused", "lightgray")]):
    heights = [part[index] for part in parts]
    ax.bar(budgets, heights, width=8, bottom=bottom, color=color, label=label)
    bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
ax.set_xlabel("token_budget")
ax.set_ylabel("tokens")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()""",
                "alt: Stacked bars of the facts' tokens, the turns' tokens and what is unused, for budgets from 60 to 200: the facts come first, the turns fill the rest.",
            ),
            (
                "md",
                """\
A little is always left unused: the next turn back does not fit whole, and a
message is never cut in half.

## Exercises

1. At a budget of 100, how many messages does `facts_share=0.2` give, against
   the default? Explain the difference.
2. Find the smallest budget `get_messages` accepts. What does the
   `TokenBudgetError` below it tell you?""",
            ),
            solution(
                """\
from sentinel_memory import TokenBudgetError

default = mem.get_messages(token_budget=100, tokenizer=o200k)
fewer_facts = mem.get_messages(token_budget=100, tokenizer=o200k, facts_share=0.2)
assert len(fewer_facts.messages) >= len(default.messages) and fewer_facts.tokens <= 100
print("messages:", len(default.messages), "by default,", len(fewer_facts.messages), "with facts_share=0.2")

try:
    mem.get_messages(token_budget=10, tokenizer=o200k)
except TokenBudgetError as error:
    needed = error.needed
    print(error)
smallest = next(b for b in range(200) if b >= needed)
assert mem.get_messages(token_budget=smallest, tokenizer=o200k).tokens <= smallest
print("the smallest budget:", smallest, "tokens, what the newest question and its answer need")""",
            ),
        ],
    ),
    (
        "07-persistence",
        "Persistence and one memory per user",
        [
            (
                "md",
                """\
# 7 · Persistence and one memory per user

A memory that forgets everything when the app restarts is no memory. A
**store** keeps it: a JSON file (`JsonFileStore`), a SQLite database
(`SqliteStore`), Redis (`RedisStore`, for many app servers), or your own.
`autosave=True` saves after every change; otherwise call `save()`.""",
            ),
            setup(),
            (
                "code",
                """\
import json
import tempfile
from pathlib import Path

from sentinel_memory import JsonFileStore

folder = Path(tempfile.mkdtemp())
mem = create_memory(store=JsonFileStore(folder / "memory.json"), autosave=True, clock=FakeClock())
mem.remember("user:name", "Jakub", importance=0.9)
mem.add_turn("user", "Hi!")

document = json.loads((folder / "memory.json").read_text(encoding="utf-8"))
print(json.dumps(document["entries"][0], indent=1))""",
            ),
            (
                "md",
                """\
The file is plain JSON, the article's shape. A restart loads it, and the turn
counter carries on from the largest `chat:N` it finds:""",
            ),
            (
                "code",
                """\
again = create_memory(store=JsonFileStore(folder / "memory.json"), autosave=True, clock=FakeClock())
print(again["user:name"], "| next turn:", again.add_turn("user", "I'm back.").key)""",
            ),
            (
                "md",
                """\
`SqliteStore` is the same contract in a database file; swap one for the
other and nothing else changes:""",
            ),
            (
                "code",
                """\
from sentinel_memory import SqliteStore

db = create_memory(store=SqliteStore(folder / "memory.db"), autosave=True, clock=FakeClock())
db.remember("user:name", "Jakub", importance=0.9)
db.close()
print(create_memory(store=SqliteStore(folder / "memory.db"), clock=FakeClock())["user:name"])""",
            ),
            (
                "md",
                """\
## One memory per user

A `MemoryFolder` keeps one file per user. It derives a safe file name from any
user id, so even a hostile one stays inside the folder, and the options you
give it apply to every memory it opens.""",
            ),
            (
                "code",
                """\
from sentinel_memory import MemoryFolder

users = MemoryFolder(folder / "users")
for user_id, name in [("alice@example.com", "Alice"), ("Bob Novák", "Bob"), ("../../etc/passwd", "Mallory")]:
    users.open(user_id).remember("user:name", name, importance=0.9)
for path in sorted((folder / "users").glob("*.json")):
    print(path.name)
print("nothing outside the folder:", not (folder / "etc").exists())""",
            ),
            (
                "md",
                """\
## Many processes, one user

A web app may serve one user from several processes at once. A folder's
memories are **shared** unless told otherwise (`shared=True`): each change
locks the file, reloads what others saved, and saves, so no change is lost.
Four processes, each adding 25 turns to the same user's memory:""",
            ),
            (
                "code",
                """\
import multiprocessing


def chatter(worker):
    memory = MemoryFolder(folder / "users").open("alice@example.com")
    for i in range(25):
        memory.add_turn("user", f"worker {worker}, message {i}")


processes = [multiprocessing.get_context("fork").Process(target=chatter, args=(w,)) for w in range(4)]
for p in processes:
    p.start()
for p in processes:
    p.join()

alice = users.open("alice@example.com")
turns = [e.data["content"] for e in alice.get_recent(200) if e.key.startswith("chat:")]
per_worker = [sum(t.startswith(f"worker {w},") for t in turns) for w in range(4)]
numbers = sorted(int(e.key.split(":")[1]) for e in alice.get_recent(200) if e.key.startswith("chat:"))
print("turns kept per worker:", per_worker, "| numbered 1 to 100, no gap:", numbers == list(range(1, 101)))""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 2.6))
ax.bar([f"process {w}" for w in range(4)], per_worker, color="tab:blue", label="turns kept")
ax.axhline(25, color="tab:red", linestyle="--", label="turns written by each")
ax.set_ylabel("turns in alice's file")
ax.set_ylim(0, 34)
ax.legend(loc="upper center", ncol=2, fontsize=8)
fig.tight_layout()
plt.show()""",
                "alt: Four bars of 25 turns each, one per process, reaching the line of 25 turns written: every process's turns are in the file.",
            ),
            (
                "md",
                """\
Every process wrote 25 turns, and all 100 are in the file, numbered without a
gap or a duplicate.

## Exercises

1. Open Bob's memory, add a turn, and check that the key continues from
   Bob's turns, not from Alice's.
2. Save a memory to SQLite **without** `autosave` and without calling
   `save()`. What does a fresh memory on the same file see?""",
            ),
            solution(
                """\
bob = users.open("Bob Novák")
assert bob.add_turn("user", "Hello again").key == "chat:1"  # Bob had no turns yet
assert users.open("Bob Novák").add_turn("user", "Still me").key == "chat:2"

lazy = create_memory(store=SqliteStore(folder / "lazy.db"), clock=FakeClock())
lazy.remember("draft", "not saved")
fresh = create_memory(store=SqliteStore(folder / "lazy.db"), clock=FakeClock())
assert "draft" not in fresh  # nothing was saved
lazy.save()
assert "draft" in create_memory(store=SqliteStore(folder / "lazy.db"), clock=FakeClock())
print("each user counts their own turns; without autosave, only save() writes")""",
            ),
        ],
    ),
    (
        "08-async-langchain",
        "Async apps and LangChain",
        [
            (
                "md",
                """\
# 8 · Async apps and LangChain

A bot on asyncio (FastAPI, aiohttp, a Discord client) must not block its
event loop while a memory saves. `create_async_memory` gives the same memory
with coroutines for everything that changes it or may do I/O; reads stay
plain calls. A notebook already runs an event loop, so `await` works at the
top level of a cell.""",
            ),
            setup(memory=False),
            (
                "code",
                """\
import asyncio
import tempfile
from pathlib import Path

from sentinel_memory import JsonFileStore, create_async_memory

folder = Path(tempfile.mkdtemp())


async def model(messages):
    await asyncio.sleep(0)  # your model call
    facts = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return "Nothing with peanuts, then." if "peanuts" in facts else "Noted."


async def handle(mem, text, budget=120):
    await mem.add_turn("user", text)
    prompt = mem.get_messages(token_budget=budget, query=text)  # a plain read
    reply = await model(list(prompt.messages))
    await mem.add_turn("assistant", reply)
    return prompt.tokens


clock = FakeClock()
mem = await create_async_memory(store=JsonFileStore(folder / "jakub.json"), autosave=True, clock=clock)
await mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
questions = [f"Question {i}: what would you recommend from the menu tonight?" for i in range(30)]
used = []
for question in questions:
    used.append(await handle(mem, question))
print("last reply:", mem.get_recent(1)[0].data["content"])
print("prompt tokens, first five:", used[:5], "| largest:", max(used), "of 120")""",
            ),
            (
                "md",
                """\
The prompt grows with the chat until the budget stops it; the facts stay in
every prompt. Many messages at once are fine too: the changes take turns and
none is lost.""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 2.8))
ax.plot(range(1, len(used) + 1), used, marker="o", markersize=3, label="tokens in the prompt")
ax.axhline(120, color="tab:red", linestyle="--", label="token_budget")
ax.set_xlabel("user message number")
ax.set_ylabel("tokens")
ax.set_ylim(0, 140)
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()""",
                "alt: The prompt's tokens for each of 30 user messages: it grows by each turn and then stays just under the budget line of 120.",
            ),
            (
                "code",
                """\
before = len([e for e in mem.get_recent(1000) if e.key.startswith("chat:")])
await asyncio.gather(*(handle(mem, f"at once {i}") for i in range(10)))
after = len([e for e in mem.get_recent(1000) if e.key.startswith("chat:")])
print("turns added by 10 concurrent messages:", after - before)
await mem.close()""",
            ),
            (
                "md",
                """\
## LangChain

`SentinelMemoryMiddleware` gives a LangChain v1 agent (`create_agent`) a
memory as its conversation (the optional extra `[langchain]`): before each
model call it records the new messages as turns and hands the model the
memory's request within the budget. `agent.ainvoke` runs the memory's work
in LangChain's executor, so the event loop never waits for the file. Here the
model is LangChain's own fake chat model, so the notebook runs offline; put
your real chat model in its place.""",
            ),
            (
                "code",
                """\
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from sentinel_memory import MemoryFolder
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware

sessions = MemoryFolder(folder / "sessions", clock=FakeClock())


def history_of(session_id):
    return SentinelChatMessageHistory(sessions.open(session_id))


fake = GenericFakeChatModel(messages=iter([AIMessage("Welcome, Jakub!"), AIMessage("You are Jakub.")]))
memory = SentinelMemoryMiddleware(sessions.open("table-7"), token_budget=200)
agent = create_agent(fake, system_prompt="You are a waiter.", middleware=[memory])

for question in ["Hi, I'm Jakub.", "What is my name?"]:
    state = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    print(state["messages"][-1].content)
table = sessions.open("table-7")
print([(e.key, e.data["role"]) for e in reversed(table.get_recent())])""",
            ),
            (
                "md",
                """\
The turns the agent added are ordinary turns of the memory, so everything in
this course applies to them: importance, compaction, `get_messages` within a
budget, one file per session. Older code built on LangChain's
`RunnableWithMessageHistory` (deprecated in langchain-core 1.x) can read and
add them through `SentinelChatMessageHistory`, as the exercise does.

## Exercises

1. Add a fact to the `table-7` memory (`remember("user:allergy", ...)`) and
   build a `get_messages` prompt of 80 tokens from it: is the fact in the
   system message, next to LangChain's turns?
2. Read the history back through `history_of("table-7").messages`: how many
   messages, and of which types?""",
            ),
            solution(
                """\
from langchain_core.messages import HumanMessage

table.remember("user:allergy", "allergic to peanuts", importance=1.0)
prompt = table.get_messages(token_budget=80)
assert prompt.messages[0] == {"role": "system", "content": "user:allergy: allergic to peanuts"}
assert [m["role"] for m in prompt.messages[1:]] == ["user", "assistant", "user", "assistant"]

restored = history_of("table-7").messages
assert [type(m) for m in restored] == [HumanMessage, AIMessage] * 2
print(len(restored), "messages; facts stay out of LangChain's history, turns are in it")""",
            ),
        ],
    ),
    (
        "09-checking-a-port",
        "Checking a port with the conformance suite",
        [
            (
                "md",
                """\
# 9 · Checking a port with the conformance suite

Say you port the library to JavaScript or Rust, or build a server on it. How
do you know it behaves the same? The conformance suite sends over 700
reviewed cases to your backend, one JSON line each, and compares every answer
with this library's. Any program that speaks the protocol is a backend.

This library is itself one, the reference; `serve --bug NAME` is the same
backend with one deliberate porting mistake. We run the suite against both,
exactly as you would against your port.""",
            ),
            (
                "code",
                """\
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

folder = Path(tempfile.mkdtemp())


def conformance(bug=None):
    \"\"\"Run the suite against the reference backend, or one with a bug; the JSON report.\"\"\"
    backend = f"{sys.executable} -m sentinel_memory.conformance serve" + (f" --bug {bug}" if bug else "")
    report = folder / f"{bug or 'reference'}.json"
    subprocess.run([sys.executable, "-m", "sentinel_memory.conformance", "run", "--backend", backend,
                    "--json", str(report)], capture_output=True, check=False)
    return json.loads(report.read_text(encoding="utf-8"))


reference = conformance()
summary = reference["summary"]
# The vectors grow release by release; what must hold is that none fails against the reference.
print("reference: every case passed:", summary["passed"] > 700 and summary["failed"] == summary["errored"] == 0)""",
            ),
            (
                "md",
                """\
Every case passes against the reference, as it must. Now a classic porting
mistake: expiry checked with `now > expires_at` instead of `now >=
expires_at`, so an entry lives one millisecond too long.""",
            ),
            (
                "code",
                """\
buggy = conformance("expiry-gt")
print("expiry-gt: caught, by", "more than 50" if buggy["summary"]["failed"] > 50 else "a few", "failing cases")
failure = next(case for case in buggy["cases"] if case["status"] == "failed")
print()
print(failure["id"], "-", failure["description"])
for number, step in enumerate(failure["before"], start=1):
    print(f"  step {number}: {step['op']} {json.dumps(step['args'])} at now={step['now']}")
print(f"  step {failure['step']}: {failure['op']} {json.dumps(failure['args'])} at now={failure['now']}  <- differs")
print("  expected:", json.dumps(failure["expected"]))
print("  got:     ", json.dumps(failure["got"]))
print("  first difference at", failure["where"])""",
            ),
            (
                "md",
                """\
Read a failure from the bottom up: the answer differs at `$.ok`; the step is
a `get` at `now=900000`, exactly 15 minutes after the cart note was remembered
with a 15-minute ttl; the reference says it is gone (`null`), the port still
returns it. The case's description says what should happen, and the
[rules page](../../rules/#EXP-2) says why: an entry is invisible from the
millisecond `now >= expires_at` (EXP-2).

Which groups of cases catch which mistake? Three mistakes, side by side:""",
            ),
            (
                "code",
                """\
import matplotlib.pyplot as plt

bugs = ["expiry-gt", "ties-older", "message-overhead-4"]
failed = {bug: Counter(c["id"].split("-")[0] for c in conformance(bug)["cases"] if c["status"] == "failed")
          for bug in bugs}
groups = sorted(set().union(*failed.values()))
fig, ax = plt.subplots(figsize=(8, 3.2))
width = 0.8 / len(bugs)
for i, bug in enumerate(bugs):
    ax.bar([g + (i - 1) * width for g in range(len(groups))], [failed[bug][name] for name in groups],
           width=width, label=f"--bug {bug}")
ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")
ax.set_ylabel("failed cases")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
print({bug: sum(counts.values()) > 0 for bug, counts in failed.items()})  # each caught, whatever the vectors' count""",
                "alt: Failed cases per group for three injected bugs: each bug fails the groups whose behaviour it changes, some in several groups.",
            ),
            (
                "md",
                """\
A mistake shows up where it matters, and often in more than one group: a
wrong tie-break fails compaction and recall cases alike, because both rank
entries. For your own port: `python -m sentinel_memory.conformance run
--backend "node my-backend.js"`, and the [porting page](../../porting/) lists
what must match bit for bit.

## Exercises

1. Run the suite against `--bug estimate-code-points` (the estimator counts
   code points, not UTF-16 units). Which groups fail? Why would a port in
   Python or Rust make this mistake, and one in JavaScript not?
2. Pick any failed case of that run and find the one character that makes
   the difference.""",
            ),
            solution(
                """\
# A Python or Rust port that counts len(text) or chars() counts code points; a JavaScript
# string's length is UTF-16 units already. Only characters beyond U+FFFF tell them apart.
report = conformance("estimate-code-points")
groups = Counter(c["id"].split("-")[0] for c in report["cases"] if c["status"] == "failed")
assert report["summary"]["failed"] == sum(groups.values()) > 0
print("failed groups:", dict(groups))

case = next(c for c in report["cases"] if c["status"] == "failed")
texts = [json.dumps(step["args"], ensure_ascii=False) for step in case["before"] + [case]]
outside_bmp = sorted({ch for text in texts for ch in text if ord(ch) > 0xFFFF})
assert outside_bmp  # a character that is two UTF-16 units but one code point
print(case["id"], "- characters beyond U+FFFF:", [f"U+{ord(ch):X}" for ch in outside_bmp])""",
            ),
        ],
    ),
]

NOTEBOOKS = {name: cells for name, _, cells in COURSE}


def _next_link(index: int) -> str:
    if index + 1 < len(COURSE):
        name, title, _ = COURSE[index + 1]
        return f"**Next:** [{index + 2} · {title}]({name}.ipynb)"
    return (
        "**That is the course.** Where next: the [guide](../../guide/entries/) explains each part, "
        "the [rules](../../rules/) state every behaviour with a stable ID, and the "
        "[API reference](../../reference/) lists every name."
    )


def formatted(source: str) -> str:
    """A code cell as ``ruff format`` writes it, so the committed notebooks pass the repository's lint."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", "cell.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.rstrip("\n") if result.returncode == 0 else source


def build(name: str, cells: list[Cell], next_link: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    for kind, source, *tags in [*cells, ("md", next_link)]:
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(formatted(source))
        if tags and tags[0].startswith("alt: "):
            cell.metadata["alt"] = tags[0].removeprefix("alt: ")  # the figure's description, for the site
        elif tags:
            cell.metadata["tags"] = list(tags)
            cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab folds it until clicked
        notebook.cells.append(cell)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{name}-{index}"  # stable ids keep diffs small
        cell.metadata.pop("execution", None)
    return notebook


def main(names: list[str]) -> None:
    for index, (name, _, cells) in enumerate(COURSE):
        if names and name not in names:
            continue
        notebook = build(name, cells, _next_link(index))
        nbformat.write(notebook, HERE / f"{name}.ipynb")
        print(f"wrote notebooks/{name}.ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
