"""The course's figures: each lesson computes its numbers, and one call here draws them.

The notebooks import this module (it sits next to them, and Jupyter starts a notebook's
kernel in its folder), so a lesson's cells are about the memory, not about matplotlib.
Every function draws one figure from the values it is given and shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

__all__ = [
    "bars_against_a_line",
    "budget_line",
    "curves",
    "fill_steps",
    "grouped_bars",
    "held_grids",
    "stacked_bars",
    "timeline",
]


def held_grids(keys: Sequence[str], panels: Mapping[str, Sequence[set[str]]], xlabel: str = "after message") -> None:
    """One grid per policy: a filled cell when the entry (row) is held after that step (column)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.2), sharey=True)
    for ax, (title, held) in zip(axes, panels.items(), strict=True):
        grid = [[key in step for step in held] for key in keys]
        ax.imshow(grid, cmap="Greens", vmin=0, vmax=1.4, aspect="auto")
        ax.set_title(title)
        ax.set_xticks(range(len(held)), [str(n) for n in range(1, len(held) + 1)])
        ax.set_xlabel(xlabel)
    axes[0].set_yticks(range(len(keys)), list(keys))
    fig.tight_layout()
    plt.show()


def fill_steps(steps: Sequence[tuple[str, int, bool]], budget: int) -> None:
    """A greedy fill, one bar per candidate: the whole text's size if it were added; green added, gray skipped."""
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(steps) + 1.4))
    for i, (_key, size, fits) in enumerate(steps):
        ax.barh(i, size, color="tab:green" if fits else "tab:gray")
        ax.text(size + 0.4, i, f"{size} tokens: " + ("added" if fits else "skipped"), va="center")
    ax.axvline(budget, color="tab:red", linestyle="--")
    # The budget's label sits above the bars, where no bar reaches.
    ax.text(budget, -0.75, f"budget {budget}", color="tab:red", ha="center", va="bottom")
    ax.set_yticks(range(len(steps)), [f"{i + 1}. {key}" for i, (key, _, _) in enumerate(steps)])
    ax.set_ylim(len(steps) - 0.5, -1.1)
    ax.set_xlim(0, max(size for _, size, _ in steps) * 1.45)
    ax.set_xlabel("tokens of the whole text, if this entry were added")
    fig.tight_layout()
    plt.show()


def curves(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    xlabel: str,
    ylabel: str,
    vline: tuple[float, str] | None = None,
) -> None:
    """Lines over a common x, the legend beside the plot (never over a line), and an optional marked x."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for label, ys in series.items():
        ax.plot(list(x), list(ys), label=label)
    if vline is not None:
        ax.axvline(vline[0], color="gray", linestyle=":")
        top = max(max(ys) for ys in series.values())
        ax.text(vline[0] + 0.3, top, vline[1], color="gray", fontsize=8, va="top")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    plt.show()


def timeline(lives: Sequence[tuple[str, float, float, str]], xlabel: str) -> None:
    """Horizontal bars from start to end, an x where each ends."""
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(lives) + 0.8))
    for i, (_label, start, end, color) in enumerate(lives):
        ax.barh(i, end - start, left=start, color=color, alpha=0.8)
        ax.plot([end], [i], marker="x", color="black")
    ax.set_yticks(range(len(lives)), [label for label, *_ in lives])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    fig.tight_layout()
    plt.show()


def grouped_bars(
    groups: Sequence[str], series: Mapping[str, Sequence[float]], ylabel: str, rotate: bool = False
) -> None:
    """Bars side by side per group, one colour per series."""
    fig, ax = plt.subplots(figsize=(max(6.5, 0.6 * len(groups) * len(series)), 3.2))
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        offset = (i - (len(series) - 1) / 2) * width
        ax.bar([g + offset for g in range(len(groups))], list(values), width=width, label=label)
    ax.set_xticks(range(len(groups)), list(groups), rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()


def stacked_bars(x: Sequence[float], layers: Mapping[str, Sequence[float]], xlabel: str, width: float = 8) -> None:
    """Bars stacked from the bottom, one layer per entry of ``layers`` (label to heights), the legend beside."""
    colors = ["tab:green", "tab:blue", "lightgray", "tab:orange"]
    fig, ax = plt.subplots(figsize=(8.5, 3.2))
    bottom = [0.0] * len(x)
    for (label, heights), color in zip(layers.items(), colors, strict=False):
        ax.bar(list(x), list(heights), width=width, bottom=bottom, color=color, label=label)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xlabel(xlabel)
    ax.set_ylabel("tokens")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    plt.show()


def bars_against_a_line(
    labels: Sequence[str], values: Sequence[float], line: float, line_label: str, ylabel: str
) -> None:
    """One bar per label and a dashed line to compare them with."""
    fig, ax = plt.subplots(figsize=(6.5, 2.8))
    ax.bar(list(labels), list(values), color="tab:blue", label=ylabel)
    ax.axhline(line, color="tab:red", linestyle="--", label=line_label)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, max(*values, line) * 1.35)
    ax.legend(loc="upper center", ncol=2, fontsize=8)
    fig.tight_layout()
    plt.show()


def budget_line(values: Sequence[float], budget: float, xlabel: str, label: str = "tokens in the prompt") -> None:
    """A value per step against the budget it must stay under."""
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    ax.plot(range(1, len(values) + 1), list(values), marker="o", markersize=3, label=label)
    ax.axhline(budget, color="tab:red", linestyle="--", label="token_budget")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("tokens")
    ax.set_ylim(0, budget * 1.2)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    plt.show()
