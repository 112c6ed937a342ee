"""The concept diagram of a memory's parts, drawn by matplotlib from a real memory at build time.

``docs/hooks.py`` puts ``concept_diagram()`` where a page says ``<!-- concept-diagram -->``, as
inline SVG: no image file to go stale, and the entries it shows are a live memory's, with
the importance and retention the library computes for them.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display: the figure is only written out
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from sentinel_memory import create_memory
from sentinel_memory.core.retention import retention
from sentinel_memory.fakeclock import HOUR, MINUTE, FakeClock

FACT, TURN, CACHE, WORK, STORE, OUT = "#2e7d32", "#1565c0", "#ef6c00", "#6a1b9a", "#546e7a", "#37474f"


def _memory():
    clock = FakeClock()
    mem = create_memory(limit=6, clock=clock)
    mem.remember("user:allergy", "allergic to peanuts", importance=1.0)
    mem.remember("user:name", "Jakub", importance=0.9)
    clock.advance(2 * HOUR)
    for text in ("Table for one, please.", "What's good tonight?", "Does it have peanuts?"):
        mem.add_turn("user", text)
        clock.advance(MINUTE)
    mem.remember("session:cart", "2 items", importance=0.5, ttl=15 * MINUTE)
    mem.cache.put("tool:weather", {"celsius": 4})
    mem.working.set({"task": "dinner", "step": 2})
    return mem, clock()


def _box(ax, x, y, w, h, color, title, lines=(), fill=0.08):
    ax.add_patch(
        FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.01,rounding_size=0.015", fc=color, alpha=fill, ec=color, lw=1.6
        )
    )
    ax.text(x + 0.012, y + h - 0.014, title, color=color, weight="bold", va="top", fontsize=13.7)
    for i, line in enumerate(lines):
        ax.text(x + 0.012, y + h - 0.062 - i * 0.04, line, va="top", fontsize=11.4, color="#222")


def _arrow(ax, start, end, label="", color=OUT, offset=(0.0, 0.012)):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color=color, lw=1.3))
    if label:
        mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
        ax.text(*mid, label, ha="center", va="bottom", fontsize=10.8, color=color, family="monospace")


def concept_diagram() -> str:
    """The memory's parts side by side, as an SVG document string."""
    mem, now = _memory()
    fig = plt.figure(figsize=(11, 6.4))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")

    # The memory, with its three parts.
    _box(ax, 0.2, 0.25, 0.5, 0.72, "#424242", "Memory  (create_memory)", fill=0.03)
    entries = sorted(mem.get_recent(), key=lambda e: -e.importance)
    _box(ax, 0.215, 0.42, 0.47, 0.49, FACT, "long-term entries: facts and chat turns")
    ax.text(0.45, 0.832, "importance", fontsize=10.4, color="#555")
    ax.text(0.565, 0.832, "retention now", fontsize=10.4, color="#555")
    for i, entry in enumerate(entries):
        y = 0.795 - i * 0.054
        color = TURN if entry.key.startswith("chat:") else FACT
        label = entry.key + (" (ttl)" if entry.expires_at else "")
        ax.text(0.227, y, label, fontsize=11.2, va="center", color=color, family="monospace")
        ax.barh(y, 0.1 * entry.importance, left=0.45, height=0.03, color=color, alpha=0.75)
        score = retention(entry, now, 86_400_000)
        ax.barh(y, 0.1 * score / 1.1, left=0.565, height=0.03, color=color, alpha=0.35)
        ax.text(0.567 + 0.1 * score / 1.1, y, f"{score:.2f}", fontsize=9.8, va="center")
    ax.text(
        0.227,
        0.438,
        "full? the lowest retention goes first:\nimportance + 0.1 x freshness (1 to 0 over a day)",
        fontsize=10.3,
        color="#333",
    )
    _box(
        ax,
        0.215,
        0.265,
        0.21,
        0.14,
        CACHE,
        "L0 cache",
        ["scratch values (tool results)", "5 min, never saved"],
    )
    _box(ax, 0.47, 0.265, 0.215, 0.14, WORK, "L1 working memory", [str(mem.working.get()), "{} after 1 h idle; saved"])

    # What the app calls, what it gets back, where it is kept.
    _box(
        ax,
        0.004,
        0.42,
        0.172,
        0.49,
        OUT,
        "your app",
        [
            "remember(key, data,",
            "  importance, ttl)",
            "add_turn(role, text)",
            "cache.put(key, value)",
            "working.set(patch)",
        ],
    )
    _arrow(ax, (0.178, 0.7), (0.213, 0.7))
    _box(
        ax,
        0.74,
        0.67,
        0.25,
        0.24,
        OUT,
        "a prompt in a budget",
        [
            "get_context(token_budget)",
            "  -> text, tokens, omitted",
            "get_messages(token_budget)",
            "  -> system message + turns",
        ],
    )
    _box(
        ax,
        0.74,
        0.44,
        0.25,
        0.17,
        OUT,
        "search",
        ["recall(query) -> hits, best first", "get_recent(n) -> newest first"],
    )
    _arrow(ax, (0.686, 0.75), (0.738, 0.75))
    _arrow(ax, (0.686, 0.52), (0.738, 0.52))
    _box(
        ax,
        0.25,
        0.02,
        0.4,
        0.15,
        STORE,
        "store",
        ["JsonFileStore, SqliteStore, RedisStore, ...", "save() / load(); autosave=True saves each change"],
    )
    _arrow(ax, (0.45, 0.252), (0.45, 0.172), "save", STORE, (0.03, -0.02))
    _arrow(ax, (0.4, 0.172), (0.4, 0.252), "load", STORE, (-0.03, -0.02))
    _box(
        ax,
        0.74,
        0.2,
        0.25,
        0.16,
        STORE,
        "on_evict(compaction)",
        ["every entry that expired or", "was evicted, e.g. to archive it"],
    )
    _arrow(ax, (0.686, 0.47), (0.79, 0.362), "", STORE)

    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight")
    plt.close(fig)
    svg = out.getvalue()
    return svg[svg.index("<svg") :]  # inline: without the XML declaration and doctype


if __name__ == "__main__":  # python docs/concepts.py > /tmp/concepts.svg, to look at it alone
    print(concept_diagram())
