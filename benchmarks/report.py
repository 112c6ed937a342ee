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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workload import NOW, make_state  # noqa: E402

from sentinel_memory import core  # noqa: E402


def run_benchmarks() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        subprocess.run(
            [sys.executable, "-m", "pytest", "benchmarks", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
             "--benchmark-enable", f"--benchmark-json={out}", "--benchmark-min-rounds=5"],
            cwd=ROOT, check=True,
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
    return "-" if a is None or b is None else f"{a / b:.1f}x"


#: The targets this page checks, as data: (label, kind, entries, budget, limit).
#: A "ratio" limit is naive / fast at least; "peer" is fast / trim_messages at
#: most; a number is the median in milliseconds, at most.
TARGETS = [
    ("fast fill vs naive fill, (1,000, 100,000)", "ratio", 1_000, 100_000, 50),
    ("fast fill vs naive fill, (1,000, 4,000)", "ratio", 1_000, 4_000, 20),
    *[(f"get_context vs trim_messages, ({n:,}, {b:,})", "peer", n, b, 1.0)
      for n in (1_000, 10_000) for b in (500, 4_000, 100_000)],
    ("recall over 1,000 entries", "recall", 1_000, None, 0.3),
    ("recall over 100,000 entries", "recall", 100_000, None, 30),
    ("remember into a full store of 10,000", "remember", 10_000, None, 1),
    ("get_context at (100,000, 4,000)", "fast", 100_000, 4_000, 150),
]


def target_rows(median: dict[tuple, float]) -> list[str]:
    """One table row per target that this run measured."""
    rows = []
    for label, kind, n, budget, limit in TARGETS:
        if kind == "ratio":
            fast, naive = median.get(("fast", n, budget)), median.get(("naive", n, budget))
            if fast is None or naive is None:
                continue
            value, met, wanted = f"{naive / fast:.1f}x", naive / fast >= limit, f"at least {limit}x"
        elif kind == "peer":
            fast, peer = median.get(("fast", n, budget)), median.get(("langchain", n, budget))
            if fast is None or peer is None:
                continue
            value, met, wanted = f"{fast / peer:.2f}x its time", fast / peer <= limit, "no slower"
        else:
            took = median.get((kind, n, budget))
            if took is None:
                continue
            value, met, wanted = f"{ms(took)} ms", took * 1000 < limit, f"under {limit} ms"
        rows.append(f"| {label} | {wanted} | {value} | {'yes' if met else 'no'} |")
    return rows


def main() -> None:
    results = run_benchmarks()
    median: dict[tuple, float] = {}
    for bench in results:
        info = bench["extra_info"]
        median[(info["kind"], info["n"], info.get("budget"))] = bench["stats"]["median"]

    contexts = sorted({(n, b) for kind, n, b in median if kind == "fast"})
    lines = [
        "# Performance",
        "",
        "Measured by `make bench` (pytest-benchmark; every figure is the median of",
        "its rounds, and every ratio is between medians of the same run).",
        "",
        f"* Machine: {cpu_name()}, {os.cpu_count()} cores (shared; absolute times are noisy)",
        f"* Python {platform.python_version()} on {platform.system()}",
        f"* Date: {datetime.date.today().isoformat()}",
        "* Workload: entries of about 60 characters, importance from seven values,",
        "  remembered over two days; the default estimator.",
        "",
        "## Targets",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---:|---|",
        *target_rows(median),
        "",
        "## Why it is fast",
        "",
        "* **The fill counts in whole numbers.** With the estimator (or a tokenizer",
        "  declared `additive()`), a joined text's count follows from its lines'",
        "  counts, so the greedy walk adds numbers, with `itertools.accumulate` and a",
        "  bisection doing most of it in C, and renders and counts the text once",
        "  (`prompt.fill`, CTX-8).",
        "* **It ranks only what it can use.** When everything fits there is no",
        "  ranking; otherwise only entries whose importance lets them reach the top",
        "  are scored (`retention.ranking`), and the rest only if the budget still",
        "  has room after them.",
        "* **The state keeps its table by column, and by importance.** A transition",
        "  copies a few lists (`values.Shape`), so a read takes numbers from lists",
        "  instead of an attribute from every entry; recall walks the importances",
        "  best first and stops as soon as nothing left can reach its top",
        "  (`lexical.best_matches`).",
        "* **Per-entry text is worked out once per entry version**: the rendered",
        "  line, its length and its recall words are cached on the frozen entry.",
        "",
        "## get_context",
        "",
        "*fast* is the library's fill; *naive* is the reference that re-renders and",
        "re-counts the whole text for every candidate (the article's algorithm);",
        "*trim_messages* is langchain-core's newest-first trimmer on the same texts",
        "with the same `len / 4` counter.",
        "",
        "| entries | budget | picked | fast ms | naive ms | naive / fast | trim_messages ms | fast / trim |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, budget in contexts:
        picked = len(core.context(make_state(n), now=NOW, token_budget=budget).entries)
        fast = median[("fast", n, budget)]
        naive = median.get(("naive", n, budget))
        peer = median.get(("langchain", n, budget))
        lines.append(
            f"| {n:,} | {budget:,} | {picked:,} | {ms(fast)} | {ms(naive)} | {ratio(naive, fast)} | {ms(peer)} | {ratio(fast, peer)} |"
        )
    remember = {n: median[("remember", n, None)] for kind, n, _ in median if kind == "remember"}
    lines += [
        "",
        "## Other operations",
        "",
        "| operation | entries | median ms |",
        "|---|---:|---:|",
    ]
    for kind, label in (("recall", "recall, two-word query"), ("remember", "remember into a full store (evicts one)"),
                        ("save", "save through JsonFileStore"), ("load", "load through JsonFileStore")):
        for n in sorted(n for k, n, _ in median if k == kind):
            lines.append(f"| {label} | {n:,} | {ms(median[(kind, n, None)])} |")
    if 1_000 in remember and 100_000 in remember:
        lines += ["", f"remember grows {remember[100_000] / remember[1_000]:.0f}x from 1,000 to 100,000 entries."]

    plot(median)
    lines += ["", "## Time against store size (budget 4,000)", "", "![get_context time, log-log](performance.png)", ""]
    (DOCS / "performance.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def plot(median: dict[tuple, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for kind, label in (("fast", "fast fill"), ("naive", "naive fill"), ("langchain", "trim_messages")):
        points = sorted((n, t * 1000) for (k, n, b), t in median.items() if k == kind and b == 4_000)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("stored entries")
    ax.set_ylabel("ms per get_context (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(DOCS / "performance.png", dpi=110)


if __name__ == "__main__":
    main()
