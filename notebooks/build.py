"""Write and execute the course's notebooks: ``python notebooks/build.py [NAME ...]``.

The notebooks are a numbered course, from a first memory to checking a port. They are
committed with their outputs, and the test suite re-runs them with nbval, so an output that
drifts from the code fails the tests. This script is how they are written: edit a cell
here, run ``make notebooks``, and commit the result. Every clock in them is the shared
``FakeClock``, so every run prints the same thing.

Each notebook has at least one figure drawn when it runs, exercises whose solutions are code
cells tagged ``solution`` (folded on the site and in JupyterLab until the reader opens them,
and executed by nbval like every other cell, so a solution that stops being right fails the
tests), and a link to the next notebook. Each also opens with what it teaches, what it needs and
how long it takes (with the install line), ends with a recap, and has one "build it"
exercise, whose checked solution is a small piece of a bot. The figures are drawn by
``notebooks/figures.py``, which the notebooks import, so a lesson's cells are about the memory.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str] | tuple[str, str, str]

#: How a learner gets what the notebooks import, on every lesson's banner.
INSTALL = "pip install -e '.[course]'"


@attrs.frozen
class About:
    """A lesson's banner and recap: what you will learn, what you need, how long it takes, what to remember."""

    learn: tuple[str, ...]
    need: str
    minutes: int
    recap: tuple[str, ...]

    def banner(self) -> str:
        learn = "\n".join(f"* {line}" for line in self.learn)
        return (
            f"**You will learn**\n\n{learn}\n\n"
            f"**You need** {self.need} To run it: `{INSTALL}` in a clone of the repository, "
            f"then `jupyter lab notebooks/`.\n\n"
            f"**Time** about {self.minutes} minutes."
        )

    def summary(self) -> str:
        return "## Recap\n\n" + "\n".join(f"* {line}" for line in self.recap)


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
COURSE: list[tuple[str, str, About, list[Cell]]] = [
    (
        "01-restaurant",
        "The waiter with a short memory: why importance first",
        About(
            learn=(
                "why keeping the last *N* messages forgets what matters",
                "how `remember(key, text, importance=...)` and a `limit` decide what stays",
                "how to read `stats()`",
            ),
            need="Python, and a rough idea of what a chat model's prompt is. No earlier lesson.",
            minutes=15,
            recap=(
                "A memory holds at most `limit` entries; over it, the least important entry goes first.",
                "Among equally important entries the oldest goes: age settles ties (lesson 3 has the formula).",
                "So give what must survive a high importance (a name 0.9, an allergy 1.0) and small talk a low one.",
                "Next: a token budget decides what of the memory reaches the prompt.",
            ),
        ),
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
from figures import held_grids  # the course's plotting helpers, next to the notebooks

held_grids(
    [k for k, _, _ in messages],
    {"keep the last five": held_by_last_five, "sentinel-memory, limit 5": held_by_memory},
)""",
                "alt: Two grids of which entries are held after each of eight messages: keeping the last five drops the name and the allergy; sentinel-memory keeps both and rotates the small talk.",
            ),
            (
                "md",
                """\
## Exercises

1. Make the memory smaller: a limit of **4**, the same eight messages. Which
   four entries are left? Predict first, then check.
2. Give the small talk importance **0.95** instead of 0.1, limit 5 again. Now
   which entry is the first to go, and why?

Try them in a new cell; the solution is below (open it when you are done).

## Build it

Write `note(mem, text)`, the one function a bot calls for everything the user
says: a sentence that mentions an allergy or a name is a fact (importance 1.0
and 0.9, under `user:allergy` and `user:name`), anything else small talk
(0.1, under `chat:1`, `chat:2`, ...). Feed it the evening below in a memory of
limit 5, then check that the allergy and the name outlive twenty lines of
small talk.""",
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
            solution(
                """\
import itertools

small_talk = itertools.count(1)  # each line of small talk gets a key of its own: chat:1, chat:2, ...


def note(mem, text):
    lowered = text.lower()
    if "allergic" in lowered:
        mem.remember("user:allergy", text, importance=1.0)
    elif "my name is" in lowered:
        mem.remember("user:name", text, importance=0.9)
    else:
        mem.remember(f"chat:{next(small_talk)}", text, importance=0.1)


clock = FakeClock()
bot = create_memory(limit=5, clock=clock)
evening = ["My name is Jakub.", "I'm allergic to peanuts."] + [f"Small talk, line {i}." for i in range(20)]
for line in evening:
    note(bot, line)
    clock.advance(MINUTE)
assert bot.get("user:allergy") == "I'm allergic to peanuts." and bot.has("user:name")
assert sorted(e.key for e in bot.get_recent()) == ["chat:18", "chat:19", "chat:20", "user:allergy", "user:name"]
print("the facts outlive", len(evening) - 2, "lines of small talk")""",
            ),
        ],
    ),
    (
        "02-refund",
        "A context that fits: why a budget",
        About(
            learn=(
                "what a token budget is and why a prompt needs one",
                "how `get_context(token_budget=..., query=...)` ranks the entries and fills the budget greedily",
                "how `must_keep` keeps the facts that must always be in the prompt",
            ),
            need="Lesson 1 (`remember`, importance).",
            minutes=20,
            recap=(
                "`get_context` ranks the entries (those sharing a word with the query first, then by importance), "
                "adds each only if the whole text still fits, and renders them oldest first.",
                "`ctx.tokens` is the count of the returned text itself, never above the budget; `ctx.omitted` counts "
                "what was left out.",
                "A chatty query can push a vital fact out; `must_keep=0.9` ranks facts of importance 0.9 or more "
                "first, and a must-keep fact that does not fit is still left out of a `get_context`.",
                "Next: what the memory drops when it is full, and how age breaks close calls.",
            ),
        ),
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
from figures import fill_steps

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
fill_steps(steps, budget=30)""",
                "alt: The greedy fill of the refund example: order:42 at 17 tokens and user:name at 21 are added; user:language at 31 and chat:7 at 35 would pass the budget of 30 and are skipped.",
            ),
            (
                "md",
                """\
The counts here are the built-in estimate, a quarter of the text's length.
A real model counts with its own tokenizer, and lesson 5 shows how far the
two can differ and how to pass yours.

The text is rendered oldest first, so the model reads the memories in the
order they happened, whatever their rank:""",
            ),
            ("code", "[(e.key, e.importance) for e in ctx.entries]"),
            (
                "md",
                """\
## The bad waiter comes back with a chatty query

In lesson 1 the memory kept the allergy. But the prompt is built by
`get_context`, and a query ranks its matches first: every entry that shares a
word with the query comes before the rest. Recall is lexical and has no stop words, so a question
like "what is my name?" matches every bit of small talk that says "what",
"is" or "my". Here the allergy (1.0) and the city (0.9) share no word with the
question, and five small-talk lines do:""",
            ),
            (
                "code",
                """\
chatty_mem = create_memory(clock=FakeClock())
chatty_mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
chatty_mem.remember("user:city", "lives in Brno", importance=0.9)
for i, line in enumerate(["what is the weather like", "my day is fine", "what is new",
                          "is it raining in my street", "what is my horoscope"]):
    chatty_mem.remember(f"chat:{i}", line, importance=0.1)

chatty = chatty_mem.get_context(token_budget=30, query="what is my name?")
kept = chatty_mem.get_context(token_budget=30, query="what is my name?", must_keep=0.9)
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

1. With the estimator, what is the smallest budget at which **all four**
   entries fit? Find it with a loop over budgets, not by hand.
2. With the budget of 30 and no query at all, which entries are in the
   context? (Without a query, the ranking is by importance; lesson 3 shows
   how age settles entries of about the same importance.)

## Build it

Write `prompt_for(mem, question, budget)`, the function a bot calls before
each model call: the context for the question, with every fact of importance
0.9 or more ranked first, returned as the text of a system message
(`"What you know about the guest:\\n" + ctx.text`). Check it on the chatty
memory: the allergy is in, and the text's estimate stays within the budget.""",
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
            solution(
                """\
def prompt_for(mem, question, budget):
    header = "What you know about the guest:\\n"
    room = budget - estimate_tokens(header)  # the header is part of what the model reads
    ctx = mem.get_context(token_budget=room, query=question, must_keep=0.9)
    return header + ctx.text


system = prompt_for(chatty_mem, "what is my name?", 40)
assert "allergic to peanuts" in system and estimate_tokens(system) <= 40
print(system)""",
            ),
        ],
    ),
    (
        "03-compaction",
        "Importance first, freshness as a tiebreaker",
        About(
            learn=(
                "the retention formula: importance plus a tenth of freshness",
                "when a fresh entry outlives an older, more important one, and when it never can",
                "what happens on a tie, and how `on_evict` lets you archive what is dropped",
            ),
            need="Lessons 1 and 2.",
            minutes=20,
            recap=(
                "Over its limit a memory drops the lowest `retention = importance + 0.1 × freshness`; "
                "freshness falls from 1 to 0 over `recency_window` (a day).",
                "So entries more than 0.1 apart in importance never swap places; closer ones are settled by age.",
                "On an exact tie the older entry goes (the one updated first), so a newcomer equal to the rest stays.",
                "`on_evict` receives every automatic compaction's `expired` and `evicted` entries: nothing is lost silently.",
                "Next: entries that expire, and two shorter-lived memories.",
            ),
        ),
        [
            (
                "md",
                """\
# 3 · Importance first, freshness as a tiebreaker

When a memory is over its limit, something has to go. Expired entries go
first (lesson 4 is about them); then the entries of lowest **retention**:

    retention = importance + 0.1 × freshness
    freshness = falls from 1 to 0 over recency_window (24 hours by default)

Freshness adds at most 0.1, so importance decides, and freshness only settles
close calls. Here is the curve for a few importances:""",
            ),
            setup("DAY", "HOUR", "MINUTE"),
            (
                "code",
                """\
from figures import curves

from sentinel_memory.core.retention import retention

hours = range(0, 37)
lines = {}
for importance in (0.3, 0.5, 0.55, 0.65, 0.9):
    entry = create_memory(clock=FakeClock()).remember("k", "x", importance=importance)
    lines[f"importance {importance}"] = [retention(entry, entry.updated_at + h * HOUR, DAY) for h in hours]
curves(hours, lines, "age of the entry (hours)", "retention", vline=(24, "recency_window (24 h)"))""",
                "alt: Retention against age for importances 0.3 to 0.9: each line falls by 0.1 over the 24-hour recency window and is flat after it, so lines more than 0.1 apart never cross.",
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
## Ties: the older entry goes

Two entries of the same importance, written at the same moment, have the
same retention. The memory then drops the one updated first, the older, so a
newcomer that ties with the rest stays and the oldest of them goes:""",
            ),
            (
                "code",
                """\
clock = FakeClock()
mem = create_memory(limit=2, clock=clock)
for key in ("first", "second", "third"):
    mem.remember(key, key, importance=0.7)  # the clock does not move: the three tie exactly
print("kept:", sorted(e.key for e in mem.get_recent()))""",
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
JSON-lines file. The cart note has a `ttl`: it expires after 15 minutes
(lesson 4 is about expiry), and expired entries are the first to go.""",
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

1. A 0.55 entry against a brand-new 0.5: which one stays at 11 hours, and
   which at 13? Use `duel(0.55, age=...)`, then find with the formula the age
   where the two retentions meet. (Right at that age, floating point decides,
   so test on either side of it.)
2. In a memory of limit 3 holding three entries of importance 0.9, what is the
   lowest importance a newcomer needs to stay? (Hint: all four are fresh, and
   you saw what a tie does.)

## Build it

An archive you can read back: write `archived(compactions)` that turns the
`Compaction` values `on_evict` received into a list of
`(why, key, importance)` rows, oldest compaction first. Run a memory of limit
3 through ten remembers of rising importance and check that the archive
holds exactly the entries the memory no longer has.""",
            ),
            solution(
                """\
# 1. The old one keeps 0.55 + 0.1 * (1 - age / 24 h); the new one has 0.6. They meet at 12 hours in exact
# arithmetic (0.55 + 0.05 = 0.6); in floating point the sum at exactly 12 h may land a hair either side.
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
            solution(
                """\
def archived(compactions):
    return [(why, e.key, e.importance) for c in compactions
            for why, entries in (("expired", c.expired), ("evicted", c.evicted)) for e in entries]


heard = []
clock = FakeClock()
mem = create_memory(limit=3, clock=clock, on_evict=heard.append)
for i in range(10):
    mem.remember(f"k{i}", i, importance=i / 10)
    clock.advance(MINUTE)
rows = archived(heard)
assert {key for _, key, _ in rows} == {f"k{i}" for i in range(10)} - {e.key for e in mem.get_recent()}
print(rows)""",
            ),
        ],
    ),
    (
        "04-expiry",
        "Things that expire, and two shorter-lived memories",
        About(
            learn=(
                "how a `ttl` makes an entry vanish at the exact millisecond, from every read",
                "the L0 cache for scratch values and the L1 working memory for the task in progress",
                "how expired entries are dropped and reported by `compact()`",
            ),
            need="Lessons 1 to 3.",
            minutes=15,
            recap=(
                "`remember(..., ttl=...)`: the entry is readable until `expires_at - 1` ms and gone at `expires_at`, "
                "from `get`, `has`, `size`, `get_recent`, `recall` and `get_context` alike.",
                "Re-remembering a key without a ttl removes its expiry.",
                "`mem.cache` holds scratch values for 5 minutes by default and is never saved; `mem.working` holds "
                "one dict for the task in progress and reads `{}` after an hour without a `set()`.",
                "Next: how tokens are counted, and why the estimate can be far off.",
            ),
        ),
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
from figures import timeline



def minutes(t):
    return (t - start) / MINUTE


timeline(
    [
        ("session:cart (ttl 15 min)", minutes(start), minutes(start + 15 * MINUTE), "tab:green"),
        ("cache tool:weather (5 min)", minutes(cached_at), minutes(cached_at + 5 * MINUTE), "tab:orange"),
        ("working memory (1 h idle)", minutes(working_from), minutes(working_from + HOUR), "tab:purple"),
    ],
    "minutes since the cart note was written (x: no longer readable)",
)""",
                "alt: A timeline of three lifetimes: the cart note from 0 to 15 minutes, the cached weather for 5 minutes, the working memory until an hour after its last set.",
            ),
            (
                "md",
                """\
## Exercises

1. Remember a note with a 10-minute ttl, then at minute 8 remember the same
   key again **without** a ttl. Is it still there a day later?
2. Put a value in the cache with `ttl=timedelta(seconds=30)`. Is it there
   after 29.999 seconds? After 30?

## Build it

A cart that lives while the guest shops: write `add_to_cart(mem, item)`,
which keeps the list of items under `session:cart` with a ttl of 15 minutes
from the **last** change. Check that the cart survives five items added ten
minutes apart, and is gone exactly 15 minutes after the last one.""",
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
            solution(
                """\
def add_to_cart(mem, item):
    items = mem.get("session:cart") or []
    mem.remember("session:cart", [*items, item], importance=0.6, ttl=15 * MINUTE)  # a new ttl on every change


clock = FakeClock()
shop = create_memory(clock=clock)
for item in ["bread", "milk", "eggs", "tea", "jam"]:
    add_to_cart(shop, item)
    clock.advance(10 * MINUTE)
assert shop.get("session:cart") == ["bread", "milk", "eggs", "tea", "jam"]  # 10 minutes after the last item
clock.advance(5 * MINUTE - 1)
assert shop.has("session:cart")
clock.advance(1)
assert not shop.has("session:cart")
print("the cart lived 55 minutes, and went 15 minutes after its last change")""",
            ),
        ],
    ),
    (
        "05-tokens",
        "The estimator is an estimate",
        About(
            learn=(
                "how the built-in estimate counts tokens, and where it is wrong",
                "how to give the memory your model's tokenizer: an object with `encode()` or a function",
                "what that changes in a budgeted context",
            ),
            need="Lesson 2 (budgets). `bpe-openai`, in the `[course]` extra, ships the o200k_base tokenizer: "
            "nothing is downloaded.",
            minutes=15,
            recap=(
                "`estimate_tokens` is `ceil(utf16_length / 4)`: it over-counts English and under-counts Czech, "
                "code and Japanese (Japanese about threefold).",
                "When the limit is hard, pass your model's tokenizer to `create_memory(tokenizer=...)` or per call; "
                "`tokens` is then its exact count of the text.",
                "Next: a chat model takes messages, not one text.",
            ),
        ),
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
from figures import grouped_bars

grouped_bars(
    [name for name, _, _ in rows],
    {"estimate (length / 4)": [e for _, e, _ in rows], "o200k_base": [r for _, _, r in rows]},
    "tokens",
)""",
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
2. For which of the four texts is the estimate furthest **above** the real
   count, that is, which has the fewest real tokens per estimated token?

## Build it

A tokenizer can be a plain function. Write `words(text)`, which counts one
token per run of letters or digits and one per other non-space character,
give it to `create_memory(tokenizer=words)`, and check that a context's
`tokens` is exactly `words(ctx.text)` and never above the budget, for every
budget from 0 to 40.""",
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
            solution(
                """\
import re


def words(text):
    return len(re.findall(r"\\w+|[^\\w\\s]", text))


counted = create_memory(clock=FakeClock(), tokenizer=words)
for name, text in texts.items():
    counted.remember(f"text:{name}", text, importance=0.5)
for budget in range(41):
    ctx = counted.get_context(token_budget=budget)
    assert ctx.tokens == words(ctx.text) <= budget
print("at 40 tokens:", [e.key for e in counted.get_context(token_budget=40).entries])""",
            ),
        ],
    ),
    (
        "06-messages",
        "Chat messages within a budget",
        About(
            learn=(
                "how `add_turn` and `add_messages` keep a chat, tool calls and their results included",
                "how `get_messages` builds a request a chat API accepts within one budget",
                "how the budget is shared between the facts and the turns, in three steps",
            ),
            need="Lessons 2 (budgets) and 5 (tokenizers).",
            minutes=25,
            recap=(
                "`get_messages` returns one system message (your prompt, then the facts) and the newest turns, "
                "oldest first, from a user message on, the newest question always in.",
                "A tool call and its results are one unit: kept or left out together.",
                "The budget is shared in three steps: turns within all but `facts_share` of it, then the facts, "
                "then older turns with whatever the facts left. So `facts_share` only matters when the facts "
                "could use more than their share.",
                "When the question itself cannot fit, `TokenBudgetError` says what is needed.",
                "Next: keeping the memory through a restart, one file per user.",
            ),
        ),
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

The facts and the turns share one budget, in three steps:

1. the turns are taken, newest back, while they fit in all but `facts_share`
   of the budget (half, by default), the newest question always;
2. the facts take what the turns left;
3. older turns take whatever the facts left over.

So `facts_share` is room kept for the facts, not a quota: facts that need
less give the rest back to the turns in step 3. Here is the split for
budgets from 60 to 200 tokens, after a longer evening:""",
            ),
            (
                "code",
                """\
from figures import stacked_bars

for i in range(8):
    mem.add_turn("user", f"And what about dish number {i}? Tell me about its ingredients.")
    mem.add_turn("assistant", f"Dish {i} is rice, vegetables and a mild sauce.")


def split(budget, **options):
    \"\"\"The tokens of the facts' system message, of the turns, and unused, in one request.\"\"\"
    p = mem.get_messages(token_budget=budget, tokenizer=o200k, **options)
    facts = sum(len(o200k.encode(m["content"])) + 3 for m in p.messages if m["role"] == "system")
    return facts, p.tokens - facts, budget - p.tokens


budgets = list(range(60, 201, 10))
parts = [split(b) for b in budgets]
stacked_bars(
    budgets,
    {"facts (system message)": [f for f, _, _ in parts], "turns": [t for _, t, _ in parts],
     "unused": [u for _, _, u in parts]},
    "token_budget",
)
print("facts' tokens at each budget:", sorted({f for f, _, _ in parts}))""",
                "alt: Stacked bars of the facts' tokens, the turns' tokens and what is unused, for budgets from 60 to 200: the two facts take the same few tokens at every budget, and the turns take the rest back, up to the budget.",
            ),
            (
                "md",
                """\
The two facts need the same few tokens at every budget, far less than half
of it, so step 3 gives the rest back to the turns. A little is always left
unused: the next turn back does not fit whole, and a message is never cut in
half.

## Exercises

1. At a budget of 200, compare `facts_share=0.2` with `facts_share=0.8`: are
   the requests different? Say which step makes it so. Then `remember` eight
   more facts (`likes:0` to `likes:7`, importance 0.6, a short sentence each)
   and compare the two shares again: how many facts and turns does each
   request hold now, and why?
2. Find the smallest budget `get_messages` accepts. What does the
   `TokenBudgetError` below it tell you?

## Build it

Write `ask(mem, question, model, budget)`, one turn of a chat bot: keep the
question, build the request with the question as the query, call `model`
(any function from messages to a reply text), keep the reply and return it.
Check it with a stand-in model that answers with the number of messages it
got: every request stays within the budget and passes `request_problems`.""",
            ),
            solution(
                """\
from sentinel_memory import TokenBudgetError

def kinds(share):
    p = mem.get_messages(token_budget=200, tokenizer=o200k, facts_share=share)
    facts = sum(not e.key.startswith("chat:") for e in p.entries)
    return facts, len(p.messages) - 1  # facts, turns


# Step 3 hands what the two facts leave back to the turns: the shares give the same request.
same = [mem.get_messages(token_budget=200, tokenizer=o200k, facts_share=s).messages for s in (0.2, 0.8)]
assert same[0] == same[1]
print("two facts: (facts, turns) =", kinds(0.2), "at 0.2 and", kinds(0.8), "at 0.8")

for i in range(8):
    mem.remember(f"likes:{i}", f"the guest liked dish {i} last time", importance=0.6)
low, high = kinds(0.2), kinds(0.8)
assert low[0] < high[0] and low[1] > high[1]  # now the facts could use more: the share decides
print("ten facts: (facts, turns) =", low, "at 0.2 and", high, "at 0.8")
for i in range(8):
    mem.forget(f"likes:{i}")

try:
    mem.get_messages(token_budget=10, tokenizer=o200k)
except TokenBudgetError as error:
    needed = error.needed
    print(error)
smallest = next(b for b in range(200) if b >= needed)
assert mem.get_messages(token_budget=smallest, tokenizer=o200k).tokens <= smallest
print("the smallest budget:", smallest, "tokens, what the newest question and its answer need")""",
            ),
            solution(
                """\
def ask(mem, question, model, budget):
    mem.add_turn("user", question)
    prompt = mem.get_messages(token_budget=budget, query=question, tokenizer=o200k)
    assert prompt.tokens <= budget and request_problems(prompt.messages) == []
    reply = model(prompt.messages)
    mem.add_turn("assistant", reply)
    return reply


def counting_model(messages):
    return f"I read {len(messages)} messages."


replies = [ask(mem, f"Is dish {i} spicy?", counting_model, 120) for i in range(10)]
print(replies[-1])""",
            ),
        ],
    ),
    (
        "07-persistence",
        "Persistence and one memory per user",
        About(
            learn=(
                "how a store (`JsonFileStore`, `SqliteStore`) keeps a memory through a restart",
                "how a `MemoryFolder` keeps one memory per user, with safe file names",
                "how several processes share one user's memory without losing a change",
            ),
            need="Lessons 1 and 6 (turns).",
            minutes=20,
            recap=(
                "`create_memory(store=..., autosave=True)` saves after every change; without autosave, "
                "`save()` writes.",
                "A restart loads the file, and turn numbers carry on from the largest `chat:N`.",
                "`MemoryFolder(path).open(user_id)` gives each user a file of their own, named safely from any id.",
                "A folder's memories are shared: each change locks the file, reloads and saves, so processes "
                "writing at once lose nothing.",
                "Next: an agent that calls tools, with its memory in a file.",
            ),
        ),
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
Four processes, each adding 25 turns to the same user's memory.

The processes are started with `fork`, which copies this notebook's process,
so the `chatter` function defined in the cell is already there in each one.
Windows has no `fork`: its processes start fresh (`spawn`) and can only run a
function they can import. There, put `chatter` in a `.py` file next to the
notebook and import it; this cell then runs the four writers as threads
instead, which share the memory's file the same way.""",
            ),
            (
                "code",
                """\
import multiprocessing


def chatter(worker):
    memory = MemoryFolder(folder / "users").open("alice@example.com")
    for i in range(25):
        memory.add_turn("user", f"worker {worker}, message {i}")


if "fork" in multiprocessing.get_all_start_methods():
    processes = [multiprocessing.get_context("fork").Process(target=chatter, args=(w,)) for w in range(4)]
else:  # Windows: no fork, so threads (a spawned process could not find a function defined in a notebook)
    import threading

    processes = [threading.Thread(target=chatter, args=(w,)) for w in range(4)]
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
from figures import bars_against_a_line

bars_against_a_line([f"process {w}" for w in range(4)], per_worker, 25, "turns written by each", "turns kept")""",
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
   `save()`. What does a fresh memory on the same file see?

## Build it

A bot that survives a restart: write `visit(folder, user_id, text)`, which
opens the user's memory from a `MemoryFolder`, keeps the text as a user turn,
remembers a name when the text says "my name is ...", and returns the name
it knows (or `None`). Call it for two users, "restart" by making a new
`MemoryFolder` on the same path, and check each user's name comes back.""",
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
            solution(
                """\
def visit(folder, user_id, text):
    memory = folder.open(user_id)
    memory.add_turn("user", text)
    if "my name is " in text.lower():
        name = text.lower().split("my name is ", 1)[1].strip(" .!").title()
        memory.remember("user:name", name, importance=0.9)
    return memory.get("user:name")


path = folder / "visits"
assert visit(MemoryFolder(path), "u1", "Hello, my name is Ada.") == "Ada"
assert visit(MemoryFolder(path), "u2", "My name is Jakub!") == "Jakub"
after_restart = MemoryFolder(path)  # a new process would do the same
assert visit(after_restart, "u1", "Do you remember me?") == "Ada"
assert visit(after_restart, "u2", "Still there?") == "Jakub"
print("both names came back;", after_restart.open("u1").add_turn("user", "bye").key, "is Ada's next turn")""",
            ),
        ],
    ),
    (
        "08-agent-tools",
        "An agent with tools",
        About(
            learn=(
                "the loop of an agent that calls tools: ask the model, run the tools it asks for, ask again",
                "how the memory keeps each tool call with its results, in every request, within the budget",
                "how an agent picks up after a restart, even one between a call and its result",
            ),
            need="Lessons 6 (messages) and 7 (stores). No API key: a scripted model stands in, and one optional "
            "cell calls a real model when `OPENAI_API_KEY` is set.",
            minutes=25,
            recap=(
                "Store every message of the loop with `add_message`: the question, the assistant's `tool_calls`, "
                "each tool result with its `tool_call_id`, the answer.",
                "`get_messages` keeps a call and its results as one unit, so every request is one a chat API "
                "accepts (`request_problems` is empty), and never over the budget.",
                "With a store, the agent's history survives a restart; calls left without results are in "
                "`pending`, so the app can run them and carry on.",
                "Next: the same memory in an asyncio app.",
            ),
        ),
        [
            (
                "md",
                """\
# 8 · An agent with tools

An agent is a chat model that can ask the app to run a function (a *tool*)
and then answers with the result. Its history holds more than questions and
answers: the assistant's message that calls a tool, and the tool's result,
which must come right after that call in every request, or the chat API
refuses it. Here is a waiter agent with one tool, `ingredients(dish)`,
played by a scripted model so that the notebook runs offline. It speaks the
chat-completions format a real model speaks, so the loop is the one you
would write for one.""",
            ),
            setup("MINUTE"),
            (
                "code",
                """\
import itertools
import json
import tempfile
from pathlib import Path

from sentinel_memory import JsonFileStore, request_problems

MENU = {"curry": "chicken, coconut milk, peanuts", "risotto": "rice, mushrooms, parmesan",
        "salad": "lettuce, tomato, lemon"}
TOOLS = {"ingredients": lambda dish: MENU.get(dish, "not on the menu")}
SYSTEM = "You are the waiter of a small restaurant. Check the ingredients before you answer."
call_ids = itertools.count(1)


def scripted_model(messages):
    \"\"\"Plays a chat model with tools: asks for the ingredients of each dish named, then answers from them.\"\"\"
    facts = messages[0]["content"] if messages[0]["role"] == "system" else ""
    last = messages[-1]
    if last["role"] == "user":
        dishes = [dish for dish in MENU if dish in last["content"].lower()]
        if not dishes:
            return {"role": "assistant", "content": "Happy to help. Which dish?"}
        calls = [{"id": f"call_{next(call_ids)}", "type": "function",
                  "function": {"name": "ingredients", "arguments": json.dumps({"dish": dish})}} for dish in dishes]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    results = list(itertools.takewhile(lambda m: m["role"] == "tool", reversed(messages)))
    risky = [r["content"] for r in results if "peanuts" in r["content"]]
    if risky and "peanuts" in facts:
        return {"role": "assistant", "content": f"Better not: it has {risky[0]}."}
    return {"role": "assistant", "content": "Yes, enjoy: " + "; ".join(r["content"] for r in results) + "."}


def run_tools(reply):
    \"\"\"The tool messages that answer a reply's calls, in order.\"\"\"
    return [{"role": "tool", "tool_call_id": call["id"],
             "content": TOOLS[call["function"]["name"]](**json.loads(call["function"]["arguments"]))}
            for call in reply["tool_calls"]]


def run(mem, question, budget, model=scripted_model):
    \"\"\"One question through the agent loop; the answer and the tokens of each request.\"\"\"
    mem.add_message({"role": "user", "content": question})
    sizes = []
    while True:
        prompt = mem.get_messages(token_budget=budget, system=SYSTEM, query=question, must_keep=0.9)
        assert request_problems(prompt.messages) == [] and prompt.tokens <= budget
        sizes.append(prompt.tokens)
        reply = model(prompt.messages)
        mem.add_message(reply)
        if not reply.get("tool_calls"):
            return reply["content"], sizes
        mem.add_messages(run_tools(reply))


folder = Path(tempfile.mkdtemp())
clock = FakeClock()
mem = create_memory(store=JsonFileStore(folder / "table-7.json"), autosave=True, clock=clock)
mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
for question in ["Good evening!", "Is the curry safe for me?", "And the risotto?"]:
    answer, sizes = run(mem, question, budget=150)
    print(f"{question!r} -> {answer!r} (model calls: {len(sizes)})")""",
            ),
            (
                "md",
                """\
The curry question took two requests: in the first the model asked for the
tool; the app ran it and stored the result; in the second the model answered
from it, with the allergy (a fact of importance 1.0, kept by `must_keep`) in
the system message. Every message of the loop is a turn of the memory:""",
            ),
            (
                "code",
                """\
for entry in reversed(mem.get_recent(20)):
    if entry.key.startswith("chat:"):
        m = entry.data
        said = m.get("content") or ", ".join(f"{c['function']['name']}({c['function']['arguments']})"
                                             for c in m["tool_calls"])
        print(f"{entry.key:>7} {m['role']:>9}: {said}")""",
            ),
            (
                "md",
                """\
## Tool units stay whole

An assistant message with `tool_calls` and the tool messages that answer it
are one **unit** (lesson 6): a request holds all of it or none of it. As the
budget shrinks, whole units drop out, oldest first, and the newest question
with everything after it always stays:""",
            ),
            (
                "code",
                """\
for budget in (150, 120, 100, 80):
    prompt = mem.get_messages(token_budget=budget, system=SYSTEM, must_keep=0.9)
    roles = [m["role"] for m in prompt.messages]
    print(f"{budget:>4} tokens ({prompt.tokens:>3} used): {' '.join(roles)}")
    assert request_problems(prompt.messages) == []""",
            ),
            (
                "md",
                """\
## A long evening within the budget

Twenty more questions, most of them calling the tool, with a budget of 150
tokens. Each request is drawn against the budget: the history is already
longer than it, so every request is cut to fit, whole units dropping out,
oldest first, to make room for the new ones.""",
            ),
            (
                "code",
                """\
from figures import budget_line

every_request = []
for i in range(20):
    dish = list(MENU)[i % 3]
    answer, sizes = run(mem, f"Question {i}: what is in the {dish}?" if i % 4 else f"Question {i}: thanks!", 150)
    every_request += sizes
    clock.advance(MINUTE)
budget_line(every_request, 150, "request number", label="tokens in the request")
print(len(every_request), "requests, from", min(every_request), "to", max(every_request), "tokens; the budget is 150")""",
                "alt: The tokens of each of the evening's 35 requests against the budget line of 150: every one is at or under the line, between about 100 and 150, as whole units drop out to make room.",
            ),
            (
                "md",
                """\
## A restart between a call and its result

The agent's memory is a file, so a new process carries on the conversation.
The awkward moment is a crash after the model asked for a tool and before
its result was stored. The call is then in the file without an answer; a
request leaves it out (a chat API would refuse it), and `pending` lists it,
so the app knows what to run:""",
            ),
            (
                "code",
                """\
mem.add_message({"role": "user", "content": "Last one: is the salad safe?"})
first = mem.get_messages(token_budget=150, system=SYSTEM, must_keep=0.9)
mem.add_message(scripted_model(first.messages))  # the model asks for the tool ...
del mem  # ... and the process dies before the tool runs

mem = create_memory(store=JsonFileStore(folder / "table-7.json"), autosave=True, clock=clock)
after = mem.get_messages(token_budget=150, system=SYSTEM, must_keep=0.9)
waiting = [call["function"] for e in after.pending for call in e.data["tool_calls"]]
print("pending after the restart:", waiting)
print("the request ends with:", after.messages[-1])""",
            ),
            (
                "md",
                """\
## With a real model (optional)

The loop above works with any model that speaks chat completions. This cell
calls one when `OPENAI_API_KEY` is set (and `pip install openai`); without a
key it says so and does nothing, so the course runs offline.""",
            ),
            (
                "code",
                """\
import os

if os.environ.get("OPENAI_API_KEY"):
    from openai import OpenAI

    client = OpenAI()
    schema = [{"type": "function", "function": {
        "name": "ingredients", "description": "What a dish on the menu is made of.",
        "parameters": {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}}}]

    def real_model(messages):
        reply = client.chat.completions.create(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                                               messages=messages, tools=schema)
        message = reply.choices[0].message.model_dump(exclude_none=True)
        return {key: message[key] for key in ("role", "content", "tool_calls") if key in message}

    real = create_memory()
    real.remember("user:allergy", "allergic to peanuts", importance=1.0)
    print(run(real, "Is the curry safe for me?", budget=400, model=real_model)[0])
else:
    print("OPENAI_API_KEY is not set: the real model is skipped.")""",
                "nbval-skip",
            ),
            (
                "md",
                """\
## Exercises

1. Ask about two dishes in one question ("Are the curry and the salad
   safe?"). How many calls does the model's reply hold, and where are their
   results stored? Check that every request built afterwards holds both
   results or neither.
2. After the evening, at a budget of 150, how many tool units are in the
   request, and which questions do they answer?

## Build it

Write `resume(mem, budget)`, what an agent runs when it starts: if
`get_messages(...).pending` holds calls, run their tools, store the results,
and let the model answer; return the answer (or `None` when nothing was
pending). Check it as a crash would leave a memory: store a question and the
model's call, open the file again, and check that `resume` answers and that
nothing is pending afterwards.""",
            ),
            solution(
                """\
from sentinel_memory import TokenBudgetError

answer, sizes = run(mem, "Are the curry and the salad safe?", budget=200)
stored = [e.data for e in reversed(mem.get_recent(4))]
assert len(stored[0]["tool_calls"]) == 2 and [m["role"] for m in stored[1:3]] == ["tool", "tool"]
print(answer)
for budget in range(60, 201, 5):
    try:
        messages = mem.get_messages(token_budget=budget, system=SYSTEM, must_keep=0.9).messages
    except TokenBudgetError:  # below what the newest question and everything after it need
        continue
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    for m in messages:
        if m.get("tool_calls"):
            assert all(call["id"] in answered for call in m["tool_calls"])  # each call with its results
    assert request_problems(messages) == []

in_request = mem.get_messages(token_budget=150, system=SYSTEM, must_keep=0.9).messages
units = [m for m in in_request if m.get("tool_calls")]
print("tool units in a 150-token request:", len(units))""",
            ),
            solution(
                """\
def resume(mem, budget):
    pending = mem.get_messages(token_budget=budget, system=SYSTEM, must_keep=0.9).pending
    if not pending:
        return None
    mem.add_messages(run_tools(pending[-1].data))  # the unanswered reply is the newest pending turn
    prompt = mem.get_messages(token_budget=budget, system=SYSTEM, must_keep=0.9)
    reply = scripted_model(prompt.messages)
    mem.add_message(reply)
    return reply["content"]


restarted = create_memory(store=JsonFileStore(folder / "table-7.json"), autosave=True, clock=clock)
restarted.add_message({"role": "user", "content": "Is the risotto safe?"})
restarted.add_message(scripted_model(restarted.get_messages(token_budget=150, system=SYSTEM).messages))
assert resume(restarted, 150) == "Yes, enjoy: rice, mushrooms, parmesan."
assert not restarted.get_messages(token_budget=150, system=SYSTEM).pending and resume(restarted, 150) is None
print("resumed: the call was run, its result stored, and the model answered")""",
            ),
        ],
    ),
    (
        "09-async",
        "Async apps",
        About(
            learn=(
                "how `create_async_memory` keeps an asyncio app's event loop free while the memory saves",
                "which calls are coroutines (changes) and which are plain (reads)",
                "that concurrent messages lose nothing",
            ),
            need="Lessons 6 and 7, and `async`/`await` in Python.",
            minutes=15,
            recap=(
                "`await create_async_memory(...)` gives the same memory: changes are coroutines, reads are not.",
                "A file or SQLite store does its I/O in a worker thread, so the event loop never waits for the disk.",
                "Concurrent changes take turns; none is lost, and `await mem.close()` ends it.",
                "Next: the same memory under LangChain's agents.",
            ),
        ),
        [
            (
                "md",
                """\
# 9 · Async apps

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
from figures import budget_line

budget_line(used, 120, "user message number")""",
                "alt: The prompt's tokens for each of 30 user messages: it grows by each turn and then stays just under the budget line of 120.",
            ),
            (
                "code",
                """\
before = len([e for e in mem.get_recent(1000) if e.key.startswith("chat:")])
await asyncio.gather(*(handle(mem, f"at once {i}") for i in range(10)))
after = len([e for e in mem.get_recent(1000) if e.key.startswith("chat:")])
print("turns added by 10 concurrent messages:", after - before)""",
            ),
            (
                "md",
                """\
## Exercises

1. The ten concurrent messages above: are their turn numbers (`chat:N`)
   without a gap or a duplicate?
2. Close the memory (`await mem.close()`) and open a new one on the same
   file: does it hold every turn? (The second solution below does this,
   after the build-it exercise.)

## Build it

Write `handle_all(mem, texts)`, which handles a batch of messages
concurrently and returns the prompt sizes in the order the texts were given.
Check that it adds exactly two turns per text and that no prompt is over the
budget.""",
            ),
            solution(
                """\
numbers = sorted(int(e.key.split(":")[1]) for e in mem.get_recent(1000) if e.key.startswith("chat:"))
assert numbers == list(range(1, len(numbers) + 1))  # 1, 2, 3, ... with no gap
print(len(numbers), "turns, chat:1 to", f"chat:{numbers[-1]}, with no gap")""",
            ),
            solution(
                """\
async def handle_all(mem, texts):
    return await asyncio.gather(*(handle(mem, text) for text in texts))  # gather keeps the order given


before = len(mem.get_recent(1000))
sizes = await handle_all(mem, [f"batch question {i}" for i in range(6)])
assert len(mem.get_recent(1000)) - before == 12 and max(sizes) <= 120

await mem.close()
again = await create_async_memory(store=JsonFileStore(folder / "jakub.json"), clock=FakeClock())
assert len(again.get_recent(1000)) == len(numbers) + 12 + 1  # every turn, and the allergy
await again.close()
print(len(numbers) + 12, "turns, all back after a reopen")""",
            ),
        ],
    ),
    (
        "10-langchain",
        "LangChain agents",
        About(
            learn=(
                "how `SentinelMemoryMiddleware` gives a LangChain v1 agent (`create_agent`) the memory's budgeted "
                "request",
                "that the agent's messages, tool calls and results included, become the memory's turns, each once",
                "how older `RunnableWithMessageHistory` code reads the same turns",
            ),
            need="Lessons 6 and 8. LangChain comes with the `[course]` extra (or `[langchain]`); no model or API "
            "key: a scripted model stands in.",
            minutes=15,
            recap=(
                "`create_agent(model, tools=..., middleware=[SentinelMemoryMiddleware(memory, token_budget=...)])`: "
                "before each model call the middleware records the new messages as turns and hands the model the "
                "memory's request within the budget.",
                "A tool call and its result are stored together and stay together in every request.",
                "`SentinelChatMessageHistory(memory)` reads the same turns as LangChain messages.",
                "Next: checking a port of the library with the conformance suite.",
            ),
        ),
        [
            (
                "md",
                """\
# 10 · LangChain agents

`SentinelMemoryMiddleware` gives a LangChain v1 agent (`create_agent`) a
memory as its conversation: before each model call it records the new
messages as turns and hands the model the memory's request within the
budget, the app's system prompt first. Here the agent has a tool, and the
model is a scripted stand-in (LangChain's `GenericFakeChatModel`, taught to
accept tools), so the notebook runs offline; put your real chat model in its
place.""",
            ),
            setup(memory=False),
            (
                "code",
                """\
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from sentinel_memory import MemoryFolder, request_problems
from sentinel_memory.integrations.langchain import SentinelChatMessageHistory
from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware


class ScriptedModel(GenericFakeChatModel):
    \"\"\"Replies from a script; accepts the agent's tools (a real model decides when to call them).\"\"\"

    def bind_tools(self, tools, **kwargs):
        return self


@tool
def ingredients(dish: str) -> str:
    \"\"\"What a dish is made of.\"\"\"
    return {"curry": "chicken, coconut milk, peanuts", "salad": "lettuce, tomato, lemon"}.get(dish, "unknown")


def call(name, i, **args):
    return {"name": name, "args": args, "id": f"call_{i}", "type": "tool_call"}


script = iter([
    AIMessage("Welcome, Jakub!"),
    AIMessage("", tool_calls=[call("ingredients", 1, dish="curry")]),
    AIMessage("The curry has peanuts; the salad is safe."),
])
folder = Path(tempfile.mkdtemp())
sessions = MemoryFolder(folder / "sessions", clock=FakeClock())
memory = SentinelMemoryMiddleware(sessions.open("table-7"), token_budget=200)
agent = create_agent(ScriptedModel(messages=script), tools=[ingredients], system_prompt="You are a waiter.",
                     middleware=[memory])

for question in ["Hi, I'm Jakub.", "Does the curry have peanuts?"]:
    state = agent.invoke({"messages": [{"role": "user", "content": question}]})
    print(question, "->", state["messages"][-1].content)
table = sessions.open("table-7")
print([(e.key, e.data["role"]) for e in reversed(table.get_recent())])""",
            ),
            (
                "md",
                """\
The second question made the model call the `ingredients` tool; LangChain ran
it, and the memory stored the call and its result as two turns of one unit
(lesson 6). The request the model gets holds them together, within the
budget, and a chat API accepts it:""",
            ),
            (
                "code",
                """\
from figures import grouped_bars

request = table.get_messages(token_budget=200, system="You are a waiter.")
print("problems a chat API would refuse:", request_problems(request.messages))
budgets = [60, 80, 100, 130, 200]
sizes = [table.get_messages(token_budget=b, system="You are a waiter.") for b in budgets]
grouped_bars([str(b) for b in budgets], {"token_budget": budgets, "tokens used": [p.tokens for p in sizes]}, "tokens")
for b, p in zip(budgets, sizes, strict=True):
    print(b, [m["role"] for m in p.messages])""",
                "alt: For budgets of 60 to 200 tokens, the budget and the tokens the table's request uses: the request never passes its budget, and it grows until every turn fits.",
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
   build a `get_messages` request of 80 tokens from it: is the fact in the
   system message, next to LangChain's turns?
2. Read the history back through `SentinelChatMessageHistory(table).messages`:
   how many messages, and of which types?

## Build it

Give the agent a second tool, `price(dish)`, and script the model to call
both tools in **one** reply (two tool calls), then answer. Check that the
memory stored the reply with its two calls and both results, and that every
request built from it passes `request_problems`.""",
            ),
            solution(
                """\
from langchain_core.messages import HumanMessage, ToolMessage

from sentinel_memory import TokenBudgetError

table.remember("user:allergy", "allergic to peanuts", importance=1.0)
prompt = table.get_messages(token_budget=80)
assert prompt.messages[0]["content"] == "user:allergy: allergic to peanuts"
print("in an 80-token request:", [m["role"] for m in prompt.messages])

restored = SentinelChatMessageHistory(table).messages
assert [type(m) for m in restored] == [HumanMessage, AIMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
print(len(restored), "messages; facts stay out of LangChain's history, turns are in it")""",
            ),
            solution(
                """\
@tool
def price(dish: str) -> str:
    \"\"\"What a dish costs.\"\"\"
    return {"curry": "14 EUR", "salad": "9 EUR"}.get(dish, "unknown")


both = iter([
    AIMessage("", tool_calls=[call("ingredients", 2, dish="salad"), call("price", 3, dish="salad")]),
    AIMessage("The salad has no peanuts and costs 9 EUR."),
])
shop = sessions.open("table-8")
agent = create_agent(ScriptedModel(messages=both), tools=[ingredients, price], system_prompt="You are a waiter.",
                     middleware=[SentinelMemoryMiddleware(shop, token_budget=200)])
agent.invoke({"messages": [{"role": "user", "content": "What is in the salad, and what does it cost?"}]})
roles = [e.data["role"] for e in reversed(sessions.open("table-8").get_recent())]
assert roles == ["user", "assistant", "tool", "tool", "assistant"]
for b in range(20, 201, 10):
    try:
        request = sessions.open("table-8").get_messages(token_budget=b)
    except TokenBudgetError:  # below what the newest question and its answer need
        continue
    assert request_problems(request.messages) == []
print("one reply with two calls, both results, every request valid:", roles)""",
            ),
        ],
    ),
    (
        "11-checking-a-port",
        "Checking a port with the conformance suite",
        About(
            learn=(
                "how the conformance suite checks a port or another backend, case by case",
                "how to read a failed case, from the step that differs back to the rule it pins",
                "what each group of cases covers, and which groups catch which mistake",
            ),
            need="Lessons 1 to 6 (the behaviours the cases pin). Nothing else: the suite ships with the package.",
            minutes=20,
            recap=(
                '`python -m sentinel_memory.conformance run --backend "CMD"` sends every reviewed case to any '
                "program that speaks the protocol and compares each answer with the reference's.",
                "A failed case shows its steps, the one that differs, the expected and the actual answer, and where "
                "they first differ; its description and rule IDs say why.",
                "The cases come in groups, one per file of `spec/vectors/`; a mistake usually fails several.",
                "`serve --bug NAME` is the reference with one deliberate port mistake: the suite catches every one.",
            ),
        ),
        [
            (
                "md",
                """\
# 11 · Checking a port with the conformance suite

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
print(f"reference: {summary['passed']} passed, {summary['failed']} failed, {summary['errored']} errored "
      f"of {len(reference['cases'])} cases")""",
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
print(f"expiry-gt: {buggy['summary']['failed']} of {len(buggy['cases'])} cases fail")
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

## The groups of cases

The cases are grouped by what they pin, one file of `spec/vectors/` per
group; a case's id starts with its group's name. Each file says what it
covers:""",
            ),
            (
                "code",
                """\
import textwrap

from sentinel_memory.conformance.vectors import spec_dir

sizes = Counter(case["id"].split("-")[0] for case in reference["cases"])
for path in sorted((spec_dir() / "vectors").glob("*.json")):
    document = json.loads(path.read_text(encoding="utf-8"))
    group = document["cases"][0]["id"].split("-")[0]
    print(f"{group:<12}{sizes[group]:>4}  {textwrap.shorten(document['description'], 80)}")""",
            ),
            (
                "md",
                """\
Which groups catch which mistake? Three mistakes, side by side:""",
            ),
            (
                "code",
                """\
from figures import grouped_bars

bugs = ["expiry-gt", "ties-older", "message-overhead-4"]
failed = {bug: Counter(c["id"].split("-")[0] for c in conformance(bug)["cases"] if c["status"] == "failed")
          for bug in bugs}
groups = sorted(set().union(*failed.values()))
grouped_bars(groups, {f"--bug {bug}": [failed[bug][g] for g in groups] for bug in bugs}, "failed cases", rotate=True)
for bug, counts in failed.items():
    print(f"--bug {bug}: {sum(counts.values())} failed cases in {len(counts)} groups")""",
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
   the difference.

## Build it

A port is checked by a command, so a backend can be any program. Write
`caught(bug)`, which runs the suite against `serve --bug NAME` and returns
the ids of the failed cases, then check that every one of the three mistakes
above is caught, and that no two of them fail exactly the same cases.""",
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
            solution(
                """\
def caught(bug):
    return frozenset(c["id"] for c in conformance(bug)["cases"] if c["status"] == "failed")


found = {bug: caught(bug) for bug in bugs}
assert all(found.values()) and len(set(found.values())) == len(bugs)
print({bug: len(ids) for bug, ids in found.items()})""",
            ),
        ],
    ),
    (
        "12-recall-quality",
        "Recall quality: why word counts miss and BM25 finds",
        About(
            learn=(
                "why the default ranking, the share of the query's words an entry holds, is fooled by common words",
                'what `ranking="bm25"` does instead: rare words weigh more, stop words count for nothing, '
                '"lives" finds "live"',
                "how to measure a ranking on your own conversation, and how to plug in a scorer of your own",
            ),
            need="Lessons 2 (a query ranks the context) and 6. The Snowball stemmer BM25 uses comes with the "
            "`[course]` extra (or `[bm25]`).",
            minutes=20,
            recap=(
                'The default ranking scores an entry by the share of the query\'s words it holds, so "what", '
                '"is" and "she" count as much as "allergic".',
                '`create_memory(ranking="bm25")` leaves stop words out, reduces words to their stems and weighs '
                "a word more the fewer entries hold it.",
                'Both are lexical: a question whose words the answer does not use ("hobby" for "pottery '
                'class") is found by neither; `ranking=` also takes your own scorer for that.',
                "Measure on your own conversations: ask questions whose answers you know and count how often the "
                "context holds them.",
            ),
        ),
        [
            (
                "md",
                """\
# 12 · Recall quality: why word counts miss and BM25 finds

A context is only as good as what it chooses. With a query, `get_context`
ranks the entries that share its words first (lesson 2), and by default an
entry's score is the share of the query's words it holds. Every word counts
the same, so a question full of "what", "is" and "the" ranks every chatty
line that says them. This lesson measures that on a short conversation
written for it, with questions whose answers we know, and compares BM25, the
ranking search engines use.""",
            ),
            setup("MINUTE"),
            (
                "code",
                """\
conversation = [
    "Hi! I moved to Brno last spring, from a small town near Ostrava.",
    "Welcome! How do you like living in Brno?",
    "I love it, but the winters are cold and the trams are always full.",
    "My sister Eva lives in Vienna, so I take the train there every month.",
    "That is a short ride. What do you do on the weekends?",
    "I go to a pottery class on Saturdays, and I am learning to throw bowls.",
    "What do you think about the weather this week? Is it going to be nice?",
    "It looks like rain for the whole week, I am afraid.",
    "I did not like the film we saw yesterday, it was too long for me.",
    "Oh, and I am allergic to cats, so I could never have one at home.",
    "Noted. Do you have any other pets in mind?",
    "Maybe a fish. What is the best way to get to the station from my street?",
    "Take the number 4 tram, it is the fastest way to the main station.",
    "Thanks! What did you say about the weekend, was it the rain again?",
    "Yes, rain on Saturday and Sunday, so take an umbrella to the class.",
]
# Each question with the line that answers it.
questions = {
    "Where does her sister live?": 3,
    "What is she allergic to?": 9,
    "Which tram goes to the main station?": 12,
    "Where did she move from?": 0,
    "What did she think of the film?": 8,
    "Which hobby did she take up?": 5,
}


def memory(ranking):
    clock = FakeClock()
    mem = create_memory(clock=clock, ranking=ranking)
    for i, text in enumerate(conversation):
        mem.remember(f"line:{i}", text, importance=0.5)
        clock.advance(MINUTE)
    return mem


def rank_of_answer(mem, question):
    \"\"\"Where the answering line comes in recall's hits (1 is first), or None when it is not a hit.\"\"\"
    hits = [hit.entry.key for hit in mem.recall(question, limit=len(conversation))]
    answer = f"line:{questions[question]}"
    return hits.index(answer) + 1 if answer in hits else None


memories = {"words (the default)": memory("words"), "bm25": memory("bm25")}
for name, mem in memories.items():
    ranks = [rank_of_answer(mem, q) for q in questions]
    in_context = sum(f"line:{line}" in [e.key for e in mem.get_context(token_budget=60, query=q).entries]
                     for q, line in questions.items())
    print(f"{name:<20} rank of each answer: {ranks}; answers in a 60-token context: {in_context} of {len(questions)}")""",
            ),
            (
                "md",
                """\
Each bar is how high the answering line ranks for one question: 1 when it
comes first, a half when second, and so on; no bar when it is no hit at
all.""",
            ),
            (
                "code",
                """\
from figures import grouped_bars

grouped_bars(
    [q.removesuffix("?") for q in questions],
    {name: [1 / r if (r := rank_of_answer(mem, q)) else 0 for q in questions] for name, mem in memories.items()},
    "1 / rank of the answer",
    rotate=True,
)""",
                "alt: For six questions, one over the rank of the answering line under the default ranking and under BM25: BM25 puts the answer first for five of them; the default ranks three answers lower or misses them; neither finds the hobby question's answer.",
            ),
            (
                "md",
                """\
Three things make the difference:

* **Stop words.** "What is she allergic to?" shares "what", "is" and "to"
  with other lines; BM25 leaves 153 such words out, so only "allergic" is
  looked for.
* **Rare words weigh more.** A word that few lines hold (its *idf*) says more
  about a line than one that many do; the default counts them all the same.
* **Stems.** BM25 reduces each word to its Snowball stem, so "live" finds
  "lives" and "living".

Neither ranking finds the hobby: the answer says "pottery class", not
"hobby". Recall is lexical, same words, not same meaning. The
[recall quality](../../recall-quality/) page measures both rankings, and two
other BM25 libraries, on LoCoMo's long conversations.

## Exercises

1. With BM25, what does `recall("what is she to")` return, and why?
2. Ask "Where does she live?" of both memories. Which lines does each find,
   and which of the three differences above explains it?

## Build it

`ranking=` also takes a function `(query, entries) -> scores`, one number per
entry (each has a `.text`), for embeddings or synonyms. Write
`with_synonyms(query, entries)`, which scores an entry by the query's words,
and their synonyms from a small table of your own (`"hobby"`: `"class"`,
`"pottery"`), that it holds, each weighing more the fewer entries hold it. Check that a memory with it ranks the
pottery line first for the hobby question.""",
            ),
            solution(
                """\
bm25 = memories["bm25"]
assert bm25.recall("what is she to") == ()  # only stop words: nothing to look for
words = memories["words (the default)"]
print("words finds", len(words.recall("what is she to", limit=20)), "lines for the same query")

found = {name: [h.entry.key for h in mem.recall("Where does she live?")] for name, mem in memories.items()}
assert "line:3" in found["bm25"] and "line:3" not in found["words (the default)"]
print(found)  # the stem: "live" is the stem of "lives" and "living\"""",
            ),
            solution(
                """\
import re

SYNONYMS = {"hobby": {"class", "pottery"}}


def words_of(text):
    return set(re.findall(r"\\w+", text.lower()))


def with_synonyms(query, entries):
    wanted = words_of(query)
    wanted |= {synonym for word in wanted for synonym in SYNONYMS.get(word, ())}
    texts = [words_of(entry.text) for entry in entries]
    holders = {word: sum(word in text for text in texts) for word in wanted}
    return [sum(1 / holders[word] for word in wanted & text) for text in texts]  # rare words weigh more


mine = memory(with_synonyms)
assert mine.recall("Which hobby did she take up?")[0].entry.key == "line:5"
print("the hobby question now finds:", conversation[5])""",
            ),
        ],
    ),
    (
        "13-cached-prompts",
        "Cached prompts: a history that keeps its start",
        About(
            learn=(
                "how a chat API's prompt cache bills the start a request shares with the one before it",
                "why a history filled newest first shares almost nothing from one request to the next",
                'how `cut="stable"` and `facts_at="end"` keep the start still, and where the cache '
                "breakpoint goes (`prefix`)",
            ),
            need="Lesson 6 (how `get_messages` fills the budget).",
            minutes=20,
            recap=(
                "A prompt cache serves the leading tokens a request shares exactly with an earlier one, at a "
                "fraction of the price.",
                "Filled newest first, the history's first turn moves on every request, so only the system message "
                "is shared.",
                '`cut="stable"` cuts the history only at marks, so consecutive requests share it up to the new '
                'turns; `facts_at="end"` moves the facts after the history; `low_mark` sets how far back a cut goes.',
                "`prompt.prefix` counts the leading messages the next request will repeat: put the cache "
                "breakpoint on message `prefix - 1`.",
            ),
        ),
        [
            (
                "md",
                """\
# 13 · Cached prompts: a history that keeps its start

Chat APIs cache prompts: when a request starts with exactly the tokens an
earlier one started with, those tokens are read from the cache, at about a
tenth of the price and faster. A chat bot sends nearly the same history
again and again, so it could pay for most of it at a tenth. But only if the
start stays the same. `get_messages` fills the budget newest first
(lesson 6), so once the history is longer than the budget, its first turn
moves on with every request, and nothing after the system message is
shared. Here is an evening of 40 questions, each request drawn as a bar: the
part it shares with the request before it, and the rest.""",
            ),
            setup("MINUTE"),
            (
                "code",
                """\
import itertools

from sentinel_memory import estimate_tokens

SYSTEM = "You are the waiter of a small restaurant."


def tokens(messages):
    return sum(estimate_tokens(m["content"]) + 3 for m in messages)  # MSG-3's count with the estimator


def shared(before, after):
    \"\"\"The leading messages two requests have exactly in common, and their tokens.\"\"\"
    n = 0
    while n < min(len(before), len(after)) and before[n] == after[n]:
        n += 1
    return n, tokens(after[:n])


def evening(**options):
    \"\"\"Forty questions; the request before each answer, built with these options.\"\"\"
    clock = FakeClock()
    mem = create_memory(clock=clock)
    mem.remember("user:name", "Jakub", importance=1.0)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    requests = []
    for i in range(40):
        question = f"Question {i}: tell me about dish number {i} and what goes well with it tonight."
        mem.add_turn("user", question)
        requests.append(mem.get_messages(token_budget=400, system=SYSTEM, query=question, must_keep=0.9, **options))
        mem.add_turn("assistant", f"Dish {i} is rice with vegetables; a glass of white wine goes well with it.")
        clock.advance(MINUTE)
    return requests


newest = evening()
stable = evening(cut="stable", facts_at="end")
for name, requests in [("newest first", newest), ("stable cut", stable)]:
    sizes = [tokens(r.messages) for r in requests]
    common = [0] + [shared(a.messages, b.messages)[1] for a, b in itertools.pairwise(requests)]
    print(f"{name:<13} shared with the request before: {sum(common) / sum(sizes):.0%} of {sum(sizes):,} tokens; "
          f"largest request {max(sizes)} of 400")""",
            ),
            (
                "code",
                """\
from figures import stacked_bars

for name, requests in [("newest first (the default)", newest), ('cut="stable", facts_at="end"', stable)]:
    common = [0] + [shared(a.messages, b.messages)[1] for a, b in itertools.pairwise(requests)]
    rest = [tokens(r.messages) - c for r, c in zip(requests, common, strict=True)]
    stacked_bars(range(1, 41), {f"{name}: shared with the request before": common, "new in this request": rest},
                 "request number", width=0.8)""",
                "alt: Two bar charts of forty requests. Filled newest first, each request at the budget shares only its system message with the one before. With the stable cut, each request shares everything but its newest turns with the one before, and every few requests the history is cut back and the shared part starts over.",
            ),
            (
                "md",
                """\
With the default, the requests reach the budget after a few questions and
from then on share only the system message: every request pays for its whole
history again. With `cut="stable"` the history is cut back only at
**marks**, turns that open a new stretch of about `(1 - low_mark)` of the
budget; between two cuts each request repeats the one before and adds the
newest turns. The requests are smaller on average (they fill from half the
budget back up), and most of each one is served from the cache.
`facts_at="end"` puts the facts in a system message of their own after the
history, so the facts a question picks change only the end of the request.""",
            ),
            (
                "code",
                """\
def cost(requests):
    \"\"\"The input cost of the requests, each with a cache breakpoint on its message before the last.\"\"\"
    total, cached = 0.0, []
    for r in requests:
        _, hit = shared(cached, r.messages)
        written = tokens(r.messages[:-1])
        total += (tokens(r.messages) - hit) + 0.1 * hit + 0.25 * max(0, written - hit)
        cached = r.messages[:-1]
    return total


plain, cut = cost(newest), cost(stable)
print(f"input cost, newest first: {plain:,.0f}; stable cut: {cut:,.0f} ({cut / plain:.0%} of it)")
print("the next request will repeat the last one's first", stable[-1].prefix, "messages:",
      stable[-1].prefix_tokens, "tokens")""",
            ),
            (
                "md",
                """\
## Exercises

1. Try `low_mark=0.2` and `low_mark=0.8` with the stable cut. How do the
   mean request size and the cost change, and why?
2. With the facts in the system message (`cut="stable"` alone), what is
   `prefix`, and why can the next request not repeat the system message?

## Build it

Write `send(mem, question, client)`, one turn of a cached bot: keep the
question, build the request with the stable cut, and mark the breakpoint the
way Anthropic's API wants it, `{"cache_control": {"type": "ephemeral"}}` on
the message `prefix - 1` (a copy of the messages; the memory's own stay as
they are). Check with a stand-in client that the marked message is the same
from one request to the next until the history is cut.""",
            ),
            solution(
                """\
for mark in (0.2, 0.8):
    requests = evening(cut="stable", facts_at="end", low_mark=mark)
    mean = sum(tokens(r.messages) for r in requests) / len(requests)
    cuts = sum(shared(a.messages, b.messages)[0] < a.prefix for a, b in itertools.pairwise(requests))
    print(f"low_mark={mark}: mean request {mean:.0f} tokens, {cuts} cuts, cost {cost(requests):,.0f}")
# A low mark cuts far back: the requests start small and grow for longer before the next cut,
# so the cache is rebuilt less often, and the model sees less history right after a cut.

facts_inside = evening(cut="stable")[-1]
assert facts_inside.prefix == 0  # the facts sit in the system message, and the next question may pick others
print("facts in the system message: prefix", facts_inside.prefix)""",
            ),
            solution(
                """\
def send(mem, question, client):
    mem.add_turn("user", question)
    prompt = mem.get_messages(token_budget=400, system=SYSTEM, query=question, must_keep=0.9,
                              cut="stable", facts_at="end")
    messages = [dict(m) for m in prompt.messages]
    if prompt.prefix:
        messages[prompt.prefix - 1]["cache_control"] = {"type": "ephemeral"}
    reply = client(messages)
    mem.add_turn("assistant", reply)
    return messages


def unmarked(messages):
    return [{k: v for k, v in m.items() if k != "cache_control"} for m in messages]


bot = create_memory(clock=FakeClock())
bot.remember("user:allergy", "allergic to peanuts", importance=1.0)
before, repeated, cuts, marked = None, 0, 0, []
for i in range(30):
    sent = send(bot, f"Question {i}: what goes well with dish {i}?", lambda messages: f"Answer {len(messages)}.")
    marked.append(next(k for k, m in enumerate(sent) if "cache_control" in m))
    if before is not None:
        cached = unmarked(before[: marked[-2] + 1])  # what the previous request wrote to the cache
        if unmarked(sent[: len(cached)]) == cached:
            repeated += 1
        else:
            cuts += 1
    before = sent
assert repeated > cuts > 0
print(repeated, "requests repeat the cached start of the one before,", cuts, "follow a cut")
print("breakpoint on message:", marked)""",
            ),
        ],
    ),
]

NOTEBOOKS = {name: cells for name, _, _, cells in COURSE}


def _next_link(index: int) -> str:
    if index + 1 < len(COURSE):
        name, title, _, _ = COURSE[index + 1]
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


def build(name: str, about: About, cells: list[Cell], next_link: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    # The title and its story, the banner, the lesson, the recap, the link to the next.
    whole = [cells[0], ("md", about.banner()), *cells[1:], ("md", about.summary()), ("md", next_link)]
    for kind, source, *tags in whole:
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(formatted(source))
        if tags and tags[0].startswith("alt: "):
            cell.metadata["alt"] = tags[0].removeprefix("alt: ")  # the figure's description, for the site
        elif tags and tags[0] == "solution":
            cell.metadata["tags"] = list(tags)
            cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab folds it until clicked
        elif tags:
            cell.metadata["tags"] = list(tags)  # nbval's own tags, such as nbval-ignore-output
        notebook.cells.append(cell)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{name}-{index}"  # stable ids keep diffs small
        cell.metadata.pop("execution", None)
    return notebook


def main(names: list[str]) -> None:
    for index, (name, _, about, cells) in enumerate(COURSE):
        if names and name not in names:
            continue
        notebook = build(name, about, cells, _next_link(index))
        nbformat.write(notebook, HERE / f"{name}.ipynb")
        print(f"wrote notebooks/{name}.ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
