"""Run the benchmarks and write docs/performance.md and its plot: ``make bench``.

Every number in the page is a median measured in this one run; ratios are
taken between medians of the same run, since absolute times on a shared
two-core machine are noisy.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def run_benchmarks(*paths: str) -> list[dict]:
    """Run ``paths`` (default: every benchmark but the chat-text ones) and return pytest-benchmark's results."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *(
                    paths
                    or (
                        "benchmarks",
                        "--ignore=benchmarks/test_chat_text.py",
                        "--ignore=benchmarks/test_agent_messages.py",
                    )
                ),
                "-q",
                "-o",
                "addopts=",
                "-p",
                "no:cacheprovider",
                "--benchmark-enable",
                f"--benchmark-json={out}",
                "--benchmark-min-rounds=5",
            ],
            cwd=ROOT,
            check=True,
        )
        return json.loads(out.read_text())["benchmarks"]


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    value = seconds * 1000
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "-"
    return f"{a / b:.2f}x" if a / b < 10 else f"{a / b:.1f}x"


Key = tuple  # (kind, shape, n, budget, query, store)


def key(
    kind: str,
    shape: str | None = None,
    n: int | None = None,
    budget: int | None = None,
    query: str | None = None,
    store: str | None = None,
) -> Key:
    return (kind, shape, n, budget, query, store)


SHAPE_NAMES = {
    "seven": "seven importances",
    "continuous": "continuous importances",
    "expiring": "continuous, 30% with a ttl, half of those expired",
}


def targets() -> list[tuple[str, str, Key, Key | None, float]]:
    """The targets this page checks, as data: (label, how, measured, compared with, limit).

    ``"at most x"``: measured / compared at most ``limit``; ``"at least x"``:
    compared / measured at least ``limit``; ``"ms"``: the median in
    milliseconds under ``limit``; ``"growth"``: measured / compared under
    ``limit``.
    """
    rows: list[tuple[str, str, Key, Key | None, float]] = [
        (
            "fast fill vs naive fill, (1,000, 100,000)",
            "at least x",
            key("fast", "seven", 1_000, 100_000),
            key("naive", "seven", 1_000, 100_000),
            50,
        ),
        (
            "fast fill vs naive fill, (1,000, 4,000)",
            "at least x",
            key("fast", "seven", 1_000, 4_000),
            key("naive", "seven", 1_000, 4_000),
            20,
        ),
    ]
    for shape in SHAPE_NAMES:
        for n in (1_000, 10_000):
            peer = key("langchain", shape, n, 4_000)
            rows.append(
                (
                    f"get_context vs trim_messages, {shape}, ({n:,}, 4,000)",
                    "at most x",
                    key("fast", shape, n, 4_000),
                    peer,
                    0.5,
                )
            )
            for query in ("two words", "chat turn"):
                rows.append(
                    (
                        f"get_context with a {query} query vs trim_messages, {shape}, ({n:,}, 4,000)",
                        "at most x",
                        key("query", shape, n, 4_000, query),
                        peer,
                        0.5,
                    )
                )
            rows.append(
                (
                    f"a turn (remember, then get_context) vs trim_messages, {shape}, {n:,}",
                    "at most x",
                    key("alternating", shape, n, 4_000),
                    peer,
                    0.5,
                )
            )
    for shape in SHAPE_NAMES:
        for query in ("two words", "chat turn"):
            rows.append(
                (f"recall over 1,000, {shape}, {query}", "ms", key("recall", shape, 1_000, None, query), None, 0.2)
            )
            rows.append(
                (f"recall over 100,000, {shape}, {query}", "ms", key("recall", shape, 100_000, None, query), None, 20)
            )
    for shape in SHAPE_NAMES:
        rows.append((f"remember into a full store of 10,000, {shape}", "ms", key("remember", shape, 10_000), None, 0.3))
    rows.append(
        ("first remember after 15,000 of 100,000 expired", "ms", key("mass expiry", "continuous", 100_000), None, 100)
    )
    for shape in SHAPE_NAMES:
        rows.append((f"get_context at (100,000, 4,000), {shape}", "ms", key("fast", shape, 100_000, 4_000), None, 50))
    rows.append(("load of 100,000 entries (JsonFileStore)", "ms", key("load", "seven", 100_000), None, 500))
    rows.append(
        (
            "autosaved remember into SqliteStore, 10,000 entries",
            "ms",
            key("autosave", "seven", 10_000, store="sqlite"),
            None,
            2,
        )
    )
    rows.append(
        (
            "SqliteStore autosaved remember, growth from 1,000 to 100,000",
            "growth",
            key("autosave", "seven", 100_000, store="sqlite"),
            key("autosave", "seven", 1_000, store="sqlite"),
            2,
        )
    )
    return rows


def target_rows(median: dict[Key, float]) -> list[str]:
    """One table row per target that this run measured."""
    rows = []
    for label, how, measured, compared, limit in targets():
        took = median.get(measured)
        other = median.get(compared) if compared else None
        if took is None or (compared and other is None):
            rows.append(f"| {label} | - | not measured | - |")
            continue
        if how == "at least x":
            value, met, wanted = f"{other / took:.1f}x", other / took >= limit, f"at least {limit}x"
        elif how == "at most x":
            value, met, wanted = f"{took / other:.2f}x its time", took / other <= limit, f"at most {limit}x"
        elif how == "growth":
            value, met, wanted = (
                f"{took / other:.2f}x ({ms(other)} to {ms(took)} ms)",
                took / other < limit,
                f"under {limit}x",
            )
        else:
            value, met, wanted = f"{ms(took)} ms", took * 1000 < limit, f"under {limit} ms"
        rows.append(f"| {label} | {wanted} | {value} | {'yes' if met else '**no**'} |")
    return rows


#: The families of targets the summary groups, in order: (what, a label's start, why a miss happens).
FAMILIES: list[tuple[str, str, str]] = [
    ("fast fill against the naive fill", "fast fill vs naive fill", ""),
    (
        "get_context, no query, against trim_messages",
        "get_context vs trim_messages",
        "",
    ),
    (
        "get_context with a query, against trim_messages",
        "get_context with a",
        "at 1,000 entries the query's ranking costs about as much as the peer's whole walk: "
        "trim_messages takes the newest lines until the budget is full, with no query and no ranking",
    ),
    (
        "a turn: remember, then get_context, against trim_messages",
        "a turn (remember",
        "a turn also pays a remember into a full store (an eviction) and a query, which the peer "
        "has no counterpart for; at 10,000 entries it is about the peer's time, at 1,000 over twice it",
    ),
    ("recall", "recall over", ""),
    (
        "remember, load, save and get_context at 100,000",
        "",
        "a load of 100,000 entries takes about a second: parsing the JSON, building the entries and "
        "ordering them for the index (see Limitations)",
    ),
]


def family(label: str) -> int:
    """The index in ``FAMILIES`` of the family a target's label belongs to (the last one is the rest)."""
    return next(
        (i for i, (_, start, _) in enumerate(FAMILIES[:-1]) if label.startswith(start)),
        len(FAMILIES) - 1,
    )


def parse_targets(page: str) -> list[tuple[str, str, str, bool]]:
    """The rows of a page's Targets table: (target, wanted, measured, met)."""
    section = page.split("## Targets", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("target", "---") and not set(cells[0]) <= {"-"}:
            rows.append((cells[0], cells[1], cells[2], cells[3] == "yes"))
    return rows


def score(wanted: str, measured: str) -> float | None:
    """How far a measurement is from its target: 1 is exactly at it, below 1 meets it, above misses it."""
    try:
        limit = float(wanted.split()[-1].rstrip("x").replace(",", "")) if "x" in wanted else float(wanted.split()[1])
        value = float(measured.split()[0].rstrip("x").replace(",", ""))
    except (ValueError, IndexError):
        return None  # not measured
    if wanted.startswith("at least"):
        return limit / value
    return value / limit


def summary_plot(rows: list[tuple[str, str, str, bool]]) -> None:
    """docs/performance-summary.png: each target's measurement against its limit, one row per family."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for index in range(len(FAMILIES)):
        mine = [(score(w, m), met) for label, w, m, met in rows if family(label) == index]
        mine = [(value, met) for value, met in mine if value is not None]
        for n, (value, met) in enumerate(mine):
            spread = (n - (len(mine) - 1) / 2) * 0.5 / max(len(mine), 1)  # side by side, not on top
            ax.scatter(value, index + spread, s=36, color="tab:green" if met else "tab:red", zorder=3)
    ax.axvline(1, color="black", linewidth=1)
    ax.text(1.05, -0.65, "the target", fontsize=8)
    ax.set_xscale("log")
    ax.set_xticks([0.01, 0.1, 1, 10], ["0.01", "0.1", "1", "10"])
    ax.set_yticks(range(len(FAMILIES)), [what for what, _, _ in FAMILIES], fontsize=8.5)
    ax.set_ylim(len(FAMILIES) - 0.5, -0.8)
    ax.set_xlabel("measured / target: below 1 is met (green), above 1 missed (red)")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(DOCS / "performance-summary.png", dpi=110)
    plt.close(fig)


def with_summary(page: str) -> str:
    """The page with a summary first: the plot of every target, then met and missed per family, and why.

    It reads the page's own Targets table, so ``python benchmarks/report.py summary`` redraws the
    summary of the committed page without running the benchmarks again.
    """
    if "\n## Summary" in page:  # drawn before: take it out, then draw it again from the table
        head, rest = page.split("\n## Summary", 1)
        page = head + "\n" + rest.split("## How it was measured\n\n", 1)[1]
    rows = parse_targets(page)
    summary_plot(rows)
    table = ["| what | met | missed | why missed |", "|---|---:|---:|---|"]
    for index, (what, _, why) in enumerate(FAMILIES):
        mine = [met for label, _, _, met in rows if family(label) == index]
        if mine:
            missed = mine.count(False)
            table.append(f"| {what} | {mine.count(True)} | {missed} | {why if missed else ''} |")
    met = sum(1 for *_, ok in rows if ok)
    summary = [
        "## Summary",
        "",
        f"{met} of {len(rows)} targets are met. Each dot is one target: its measurement divided by",
        "its limit (the peer's time, or the milliseconds allowed), so every target fits one scale.",
        "",
        "![every target's measurement against its limit; green met, red missed](performance-summary.png)",
        "",
        *table,
        "",
        "The full tables follow: how it was measured, every target, and every benchmark.",
        "",
        "",
    ]
    head, rest = page.split("\n* Machine:", 1)
    return head + "\n" + "\n".join(summary) + "## How it was measured\n\n* Machine:" + rest


def main() -> None:
    results = run_benchmarks()
    median: dict[Key, float] = {}
    picked: dict[Key, int] = {}
    paired: dict[Key, tuple[float, float, float]] = {}  # (median ratio, own median, trim_messages median)
    for bench in results:
        info = bench["extra_info"]
        k = key(
            info["kind"], info.get("shape"), info.get("n"), info.get("budget"), info.get("query"), info.get("store")
        )
        median[k] = bench["stats"]["median"]
        if "picked" in info:
            picked[k] = info["picked"]
        if "ratio" in info:
            paired[k] = (info["ratio"], info["own"], info["peer"])

    lines = [
        "# Performance",
        "",
        "Measured by `make bench` (pytest-benchmark; every figure is the median of",
        "its rounds, and every ratio is between medians of the same run).",
        "",
        f"* Machine: {cpu_name()}, {os.cpu_count()} cores (shared; absolute times are noisy)",
        f"* Python {platform.python_version()} on {platform.system()}",
        f"* Date: {datetime.date.today().isoformat()}",
        "* Workload: entries of about 60 characters remembered over two days, the",
        "  default estimator, in three shapes:",
        *[f"    * *{name}*: {text}" for name, text in SHAPE_NAMES.items()],  # four spaces: a nested list
        "* Peers: langchain-core's `trim_messages` (newest first) and LlamaIndex's",
        "  `ChatMemoryBuffer` (newest first), on the same lines with the same",
        "  `len / 4` counter.",
        "",
        "## Targets",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---:|---|",
        *target_rows(median),
        "",
        "## Why it is fast",
        "",
        "* **The index keeps the orders the rules ask about** (`sentinel_memory.core.index`):",
        "  entries by importance, by age and by expiry, each a persistent sorted run",
        "  of chunks. The entry to evict is among the lowest importances, the start",
        "  of a context ranking among the highest, and the expired are a prefix of",
        "  the expiry order, so each is found without looking at the rest, whatever",
        "  the importances are. When hundreds of entries could be the one to evict",
        "  (a classifier's low scores, all still fresh), they are scored dozens at",
        "  a time, not with a call each.",
        "* **A change copies what it touches.** The table and the index are cut into",
        "  chunks of a few hundred (`sentinel_memory.core.persistent`); a remember copies",
        "  one chunk of each and shares the rest with the state before, so its cost",
        "  grows slowly with the store (the table below says how much), and",
        "  dropping k entries costs about `O(k log n)`, or one pass when k is",
        "  larger than the number of chunks.",
        "* **The fill counts in whole numbers.** With the estimator (or a tokenizer",
        "  declared `additive()`), a joined text's count follows from its lines'",
        "  counts, so the greedy walk adds numbers, with `itertools.accumulate` and a",
        "  bisection doing most of it in C, and renders and counts the text once",
        "  (`prompt.fill`, CTX-8).",
        "* **It ranks only what it can use.** When everything fits there is no",
        "  ranking; otherwise only entries whose importance lets them reach the start",
        "  of the ranking are scored (`Index.ranking_start`), and the rest only if",
        "  the budget still has room after them: then only the lines short enough",
        "  to fit that room, which the index keeps by length once a fill asks",
        "  (`Index.lines_within`).",
        "* **A query looks only at the entries that hold its words.** The index",
        "  keeps, for every word, the entries that hold it (searched for by the first",
        "  few queries, then worked out for every word, and kept current by every",
        "  change); in a store that is small for",
        "  the number of results wanted, the candidates are those entries, grouped",
        "  by how many query words they hold and scored a group at a time",
        "  (`lexical.best_holders`). The holders are read rarest first (MaxScore, as",
        "  Lucene and PISA do): once the worst of the best few met so far is sure to",
        "  beat every entry holding only the unread common words, their lists are",
        "  only asked about the candidates met (`maxscore.term_at_a_time`, which the",
        "  BM25 search shares), so a chat turn's common words cost little. When",
        "  their holders are many (over 8,192), recall walks the importances first",
        "  in blocks and stops as soon as nothing left can reach the worst of its best few",
        "  (`lexical.walked`); when no entry holds most of the query's words, the",
        "  walk gives up after half as many entries as their holders, and the",
        "  holders are searched instead. Every way gives the reference formulas'",
        "  doubles, in the same order (REC-7).",
        "* **Expired entries are skipped, then left out.** They stay stored until",
        "  a change drops them, so the reads of a state pass them by. Its first",
        "  walks skip them one by one and count the items they pass; once that",
        "  count reaches the store's size, the index makes its run by importance",
        "  without them, keeps it for every later read, and takes out only what",
        "  expires after that (`Index._live_by_importance`). A stateless server",
        "  that reads once never pays for the run; a memory read many times",
        "  between changes pays for it once.",
        "* **Per-entry text is worked out once per entry version**: the rendered",
        "  line, its length and its recall words are cached on the frozen entry.",
        "* **A memory just loaded does not work out every entry's words.** Its",
        "  first queries search the entries' text for the query words instead",
        "  (a substring test per text at C speed, the exact word test only where",
        "  it hits, `lexical.holding`), and the bound on line lengths that a fill",
        "  needs is read from the lengths of the strings, without rendering a line.",
        "  A long-running memory works out every word's holders after a few queries,",
        "  once; a stateless server that loads per message never has to.",
        "",
        "## get_context",
        "",
        "*fast* is the library's fill; *naive* is the reference that re-renders and",
        "re-counts the whole text for every candidate (the article's algorithm).",
        "",
    ]
    for shape, name in SHAPE_NAMES.items():
        lines += [
            f"### {name.capitalize()}",
            "",
            "| entries | budget | picked | fast ms | naive ms | naive / fast | trim_messages ms | fast / trim | ChatMemoryBuffer ms | buffer / fast |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for _, _, n, budget, _, _ in sorted(k for k in median if k[0] == "fast" and k[1] == shape):
            fast = median[key("fast", shape, n, budget)]
            naive = median.get(key("naive", shape, n, budget))
            trim = median.get(key("langchain", shape, n, budget))
            buffer = median.get(key("llamaindex", shape, n, budget))
            count = picked.get(key("fast", shape, n, budget))
            count = "-" if count is None else f"{count:,}"
            lines.append(
                f"| {n:,} | {budget:,} | {count} | {ms(fast)} | {ms(naive)} | {ratio(naive, fast)} | {ms(trim)} | {ratio(fast, trim)} "
                f"| {ms(buffer)} | {ratio(buffer, fast)} |"
            )
        lines.append("")
    lines += [
        "### Queries, turns and a real tokenizer",
        "",
        "*two words* is `refund status`; *chat turn* is `what did I order last week?`,",
        "most of whose words no entry holds. A *turn* is a remember into a full",
        "store followed by get_context with what was remembered as the query. *o200k*",
        "is get_context with the o200k_base tokenizer declared `additive()`.",
        "",
        "| shape | entries | operation | ms | vs trim_messages |",
        "|---|---:|---|---:|---:|",
    ]
    for shape in SHAPE_NAMES:
        for n in (1_000, 10_000):
            trim = median.get(key("langchain", shape, n, 4_000))
            for label, k in (
                ("get_context, two words", key("query", shape, n, 4_000, "two words")),
                ("get_context, chat turn", key("query", shape, n, 4_000, "chat turn")),
                ("a turn", key("alternating", shape, n, 4_000)),
                ("get_context, o200k", key("o200k", shape, n, 4_000)),
            ):
                if k in median:
                    lines.append(f"| {shape} | {n:,} | {label} | {ms(median[k])} | {ratio(median[k], trim)} |")
    lines += [
        "",
        "### Back to back with trim_messages",
        "",
        "The benchmarks above call one function again and again, with its data",
        "warm in the processor caches. Here every round calls this library and",
        "`trim_messages` once each, back to back, in turns of order: each call",
        "runs after the other's, as in an app that does other work between",
        "turns, and both meet the same moments of a shared machine. The ratio",
        "is the median of the rounds' ratios.",
        "",
        "| shape | entries | operation | ms | trim_messages ms | median ratio |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for shape in SHAPE_NAMES:
        for n in (1_000, 10_000):
            for what, label in (
                ("no query", "get_context"),
                ("two words", "get_context, two words"),
                ("chat turn", "get_context, chat turn"),
                ("turn", "a turn"),
            ):
                found = paired.get(key("paired", shape, n, 4_000, what))
                if found is not None:
                    median_ratio, own, peer = found
                    lines.append(f"| {shape} | {n:,} | {label} | {ms(own)} | {ms(peer)} | {median_ratio:.2f}x |")
    lines += [
        "",
        "## Recall and remember",
        "",
        "| shape | entries | recall, two words ms | recall, chat turn ms | remember into a full store ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for shape in SHAPE_NAMES:
        for n in (1_000, 10_000, 100_000):
            lines.append(
                f"| {shape} | {n:,} | {ms(median.get(key('recall', shape, n, None, 'two words')))} "
                f"| {ms(median.get(key('recall', shape, n, None, 'chat turn')))} | {ms(median.get(key('remember', shape, n)))} |"
            )
    for shape in SHAPE_NAMES:
        small, large = median.get(key("remember", shape, 1_000)), median.get(key("remember", shape, 100_000))
        if small and large:
            lines.append(f"\nremember, {shape}: grows {large / small:.1f}x from 1,000 to 100,000 entries.")
    lines += ["", "## Storage", "", "| operation | entries | median ms |", "|---|---:|---:|"]
    for label, k in (
        ("first remember after 15,000 of 100,000 expired", key("mass expiry", "continuous", 100_000)),
        *[("save through JsonFileStore", key("save", "seven", n)) for n in (1_000, 100_000)],
        *[("load through JsonFileStore", key("load", "seven", n)) for n in (1_000, 100_000)],
        *[
            (f"autosaved remember, {store}", key("autosave", "seven", n, store=store))
            for store in ("json", "sqlite", "redis")
            for n in (1_000, 10_000, 100_000)
        ],
        *[
            ("reload from Redis, then get_context (budget 4,000)", key("redis context", "seven", n, store="redis"))
            for n in (1_000, 10_000)
        ],
        *[
            (
                f"the first get_context after a load, {shape}, {what}",
                key("first context", shape, n, None, query, "json"),
            )
            for shape in SHAPE_NAMES
            for query, what in (("none", "no query"), ("chat turn", "a chat turn query"))
            for n in (1_000, 10_000, 100_000)
        ],
        *[
            (f"load into a new memory, {store}", key("store load", "seven", 100_000, store=store))
            for store in ("json", "sqlite")
        ],
    ):
        if k in median:
            lines.append(f"| {label} | {k[2]:,} | {ms(median[k])} |")

    plot(median)
    lines += [
        "",
        "## Time against store size",
        "",
        "![time against store size, log-log, one line per shape](performance.png)",
        "",
    ]
    page = with_summary("\n".join(lines))
    (DOCS / "performance.md").write_text(page, encoding="utf-8")
    print(page)


def plot(median: dict[Key, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("get_context, budget 4,000", lambda k: k[0] == "fast" and k[3] == 4_000),
        ("recall, two words", lambda k: k[0] == "recall" and k[4] == "two words"),
        ("remember into a full store", lambda k: k[0] == "remember"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
    for ax, (title, wanted) in zip(axes, panels, strict=True):
        for shape in SHAPE_NAMES:
            points = sorted((k[2], t * 1000) for k, t in median.items() if wanted(k) and k[1] == shape)
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=shape)
        if title.startswith("get_context"):
            points = sorted(
                (k[2], t * 1000) for k, t in median.items() if k[0] == "langchain" and k[1] == "seven" and k[3] == 4_000
            )
            if points:
                ax.plot(
                    [p[0] for p in points], [p[1] for p in points], marker="s", linestyle="--", label="trim_messages"
                )
        ax.set_title(title, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("stored entries")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms (median)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(DOCS / "performance.png", dpi=110)


#: The (entries, budget) cases of benchmarks/test_agent_messages.py.
AGENT_CASES = ((1_000, 2_000), (10_000, 2_000), (10_000, 4_000))


def target_row(label: str, wanted: str, found: tuple[float, float, float] | None, most: float) -> str:
    """A row of the targets table for a paired ratio."""
    if found is None:
        return f"| {label} | {wanted} | not measured | - |"
    return f"| {label} | {wanted} | {found[0]:.2f}x | {'yes' if found[0] <= most else '**no**'} |"


def chat() -> None:
    """Run the chat-text benchmarks and write docs/performance-tokenizers.md and its plot."""
    results = run_benchmarks("benchmarks/test_chat_text.py", "benchmarks/test_agent_messages.py")
    paired: dict[Key, tuple[float, float, float]] = {}
    median: dict[Key, float] = {}
    repairs: dict[str, tuple[int, int]] = {}
    for bench in results:
        info = bench["extra_info"]
        k = key(info["kind"], info.get("shape"), info.get("n"), info.get("budget"))
        median[k] = bench["stats"]["median"]
        if "ratio" in info:
            paired[k] = (info["ratio"], info["own"], info["peer"])
        if "repaired" in info:
            repairs[info["shape"]] = (info["repaired"], info["contexts"])
    rows = []
    for warmth in ("warm", "cold"):
        for n, budget in ((1_000, 2_000), (1_000, 4_000), (10_000, 2_000), (10_000, 4_000)):
            found = paired.get(key(f"chat {warmth}", "o200k_base", n, budget))
            label = f"get_context, o200k_base object, {warmth}, ({n:,}, {budget:,}), vs trim_messages"
            if found is None:
                rows.append(f"| {label} | at most 0.5x | not measured | - |")
            else:
                rows.append(f"| {label} | at most 0.5x | {found[0]:.2f}x | {'yes' if found[0] <= 0.5 else '**no**'} |")
    for name in ("o200k_base", "cl100k_base"):
        turn = median.get(key("chat turn", name, 10_000, 2_000))
        met = "-" if turn is None else "yes" if turn * 1000 < 10 else "**no**"
        rows.append(f"| a turn at 10,000 entries, {name} object | under 10 ms | {ms(turn)} ms | {met} |")
    for name in ("estimator", "o200k_base"):
        for n, budget in AGENT_CASES:
            found = paired.get(key("agent messages vs context", name, n, budget))
            label = f"get_messages on an agent's history, {name}, ({n:,}, {budget:,}), vs get_context"
            rows.append(target_row(label, "at most 1.5x", found, 1.5))
    for warmth in ("warm", "cold"):
        for n, budget in AGENT_CASES:
            found = paired.get(key(f"agent {warmth}", "o200k_base", n, budget))
            label = f"get_messages on an agent's history, o200k_base object, {warmth}, ({n:,}, {budget:,}), vs trim_messages"
            rows.append(target_row(label, "at most 0.5x", found, 0.5))
    for name, limit in (("estimator", 2), ("o200k_base", 10)):
        turn = median.get(key("agent turn", name, 10_000, 4_000))
        met = "-" if turn is None else "yes" if turn * 1000 < limit else "**no**"
        rows.append(
            f"| an agent's turn at 10,000 entries (add_messages, get_messages), {name} | under {limit} ms | {ms(turn)} ms | {met} |"
        )
    for name, (repaired, contexts) in sorted(repairs.items()):
        share = 1 - repaired / contexts
        rows.append(
            f"| contexts that need no repair, {name} | at least 95% | {share:.1%} ({repaired} of {contexts:,} repaired) "
            f"| {'yes' if share >= 0.95 else '**no**'} |"
        )
    lines = [
        "# Performance with real tokenizers",
        "",
        "Measured by `make bench` (`benchmarks/test_chat_text.py`); every ratio is the",
        "median of rounds that time both sides back to back, in turns of order.",
        "",
        f"* Machine: {cpu_name()}, {os.cpu_count()} cores (shared; absolute times are noisy)",
        f"* Python {platform.python_version()} on {platform.system()}, {datetime.date.today().isoformat()}",
        "* Workload: chatterbot-corpus's conversations in English, German, Spanish,",
        "  Russian, Japanese and Chinese: 80% turns stored by `add_turn`, 20% notes",
        "  with continuous importances. Each context is queried with a chat line.",
        "* Tokenizers: bpe-openai's o200k_base and cl100k_base `Encoding` objects,",
        "  which a memory counts line by line (CTX-12). *warm* keeps the line",
        "  counts, as a memory does between turns; *cold* starts with none, as the",
        "  first context after a start does.",
        "* Peer: langchain-core's `trim_messages` (newest first) over the same",
        "  lines, with the counter a LangChain user writes,",
        "  `sum(len(enc.encode(m.content)) for m in messages)`. `encode` checks for",
        "  special tokens, which `encode_ordinary` (what a memory counts with,",
        "  CTX-9) skips; the last column of the table times `trim_messages` with",
        "  `encode_ordinary` too.",
        "",
        "## Targets",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---:|---|",
        *rows,
        "",
        "## get_context against trim_messages",
        "",
        "| tokenizer | entries | budget | counts | get_context ms | trim_messages ms | median ratio | trim_messages, encode_ordinary, ms |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for name in ("o200k_base", "cl100k_base"):
        for n, budget in ((1_000, 2_000), (1_000, 4_000), (10_000, 2_000), (10_000, 4_000)):
            ordinary = median.get(key("chat trim ordinary", name, n, budget))
            for warmth in ("warm", "cold"):
                found = paired.get(key(f"chat {warmth}", name, n, budget))
                if found is not None:
                    lines.append(
                        f"| {name} | {n:,} | {budget:,} | {warmth} | {ms(found[1])} | {ms(found[2])} | {found[0]:.2f}x "
                        f"| {ms(ordinary)} |"
                    )
    lines += [
        "",
        "## get_messages on an agent's history",
        "",
        "`benchmarks/test_agent_messages.py`: a tool-using agent's history of the same",
        "lines (a question, a tool call, its result and an answer per step; 20% notes),",
        "stored with `add_messages`. `get_messages` is paired with `get_context` at the",
        "same budget and query, and with `trim_messages` over the same turns as",
        "LangChain messages, counted the same way: each message's text (TXT-4) with",
        "o200k_base's `encode_ordinary`, plus 3.",
        "",
        "| against | tokenizer | entries | budget | counts | get_messages ms | other ms | median ratio |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for name in ("estimator", "o200k_base"):
        for n, budget in AGENT_CASES:
            found = paired.get(key("agent messages vs context", name, n, budget))
            if found is not None:
                lines.append(
                    f"| get_context | {name} | {n:,} | {budget:,} | warm | {ms(found[1])} | {ms(found[2])} | {found[0]:.2f}x |"
                )
    for warmth in ("warm", "cold"):
        for n, budget in AGENT_CASES:
            found = paired.get(key(f"agent {warmth}", "o200k_base", n, budget))
            if found is not None:
                lines.append(
                    f"| trim_messages | o200k_base | {n:,} | {budget:,} | {warmth} | {ms(found[1])} | {ms(found[2])} "
                    f"| {found[0]:.2f}x |"
                )
    lines += [
        "",
        "![get_context and trim_messages against store size](performance-tokenizers.png)",
        "",
    ]
    chat_plot(paired)
    (DOCS / "performance-tokenizers.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def chat_plot(paired: dict[Key, tuple[float, float, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, budget in zip(axes, (2_000, 4_000), strict=True):
        for name, marker in (("o200k_base", "o"), ("cl100k_base", "^")):
            for warmth, style in (("warm", "-"), ("cold", ":")):
                points = sorted(
                    (k[2], v[1] * 1000)
                    for k, v in paired.items()
                    if k[:2] == (f"chat {warmth}", name) and k[3] == budget
                )
                if points:
                    ax.plot(
                        *zip(*points, strict=True),
                        marker=marker,
                        linestyle=style,
                        label=f"get_context, {name}, {warmth}",
                    )
            points = sorted(
                (k[2], v[2] * 1000) for k, v in paired.items() if k[:2] == ("chat warm", name) and k[3] == budget
            )
            if points:
                ax.plot(
                    *zip(*points, strict=True),
                    marker=marker,
                    linestyle="--",
                    color="grey",
                    label=f"trim_messages, {name}",
                )
        ax.set_title(f"budget {budget:,}", fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("stored entries")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms (median)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(DOCS / "performance-tokenizers.png", dpi=110)


if __name__ == "__main__":
    if sys.argv[1:] == ["chat"]:
        chat()
    elif sys.argv[1:] == ["summary"]:  # redraw the summary of the committed page, without benchmarks
        page = (DOCS / "performance.md").read_text(encoding="utf-8")
        (DOCS / "performance.md").write_text(with_summary(page), encoding="utf-8")
    else:
        main()
