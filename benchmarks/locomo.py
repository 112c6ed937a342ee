"""Recall quality on LoCoMo's long conversations: how much of what answers a question a context holds.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of
LLM Agents", ACL 2024; github.com/snap-research/LoCoMo, CC BY-NC 4.0) has
long two-person conversations and questions whose ``evidence`` names the
turns that hold the answer. The data is read from a path at run time and
never copied into the project: download ``data/locomo10.json`` from the
LoCoMo repository and pass its path.

Each turn is remembered as an entry (key = dialog id, text = ``Speaker:
text``, importance 0.5, one minute apart); each question (category 5, the
adversarial one, and the two questions without evidence left out) is asked
as ``get_context(token_budget=B, query=question)`` with the estimator, and
scored by the share of its evidence turns the context holds. recall@k is
the share among the first k hits of ``recall``. The peers rank the same
turns by their own scores and fill the same budget greedily with the same
lines and counter (matches first, then the newest turns).

    python benchmarks/locomo.py --data ../shared/locomo/locomo-dev.json [--write]

``--write`` rewrites docs/recall-quality.md and docs/recall-quality.png.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from sentinel_memory import core  # noqa: E402
from sentinel_memory.core.lexical import word_sequence  # noqa: E402
from sentinel_memory.core.state import MemoryState  # noqa: E402
from sentinel_memory.core.tokens import utf16_len  # noqa: E402

#: Where CI finds the development half of the data, relative to the project.
DEFAULT_DATA = ROOT.parent / "shared" / "locomo" / "locomo-dev.json"
BUDGETS = (500, 1_000, 2_000)
KS = (5, 10, 25)
T0 = 1_700_000_000_000
MINUTE = 60_000

Turn = tuple[str, str]  # (dialog id, "Speaker: text")
Question = tuple[str, list[str], int]  # (question, evidence ids, category)
#: A ranker gets a conversation's turns and returns a function of a question:
#: (the ids of the context at each budget, the first max(KS) ids of its recall).
Ranker = Callable[[Sequence[Turn]], Callable[[str], tuple[dict[int, set[str]], list[str]]]]


def conversations(path: Path) -> Iterator[tuple[list[Turn], list[Question]]]:
    """The turns and the scored questions of each conversation in the file at ``path``."""
    for sample in json.loads(path.read_text(encoding="utf-8")):
        talk = sample["conversation"]
        turns: list[Turn] = []
        session = 1
        while f"session_{session}" in talk:
            turns.extend((turn["dia_id"], f"{turn['speaker']}: {turn['text']}") for turn in talk[f"session_{session}"])
            session += 1
        questions = []
        for qa in sample["qa"]:
            # A few evidence fields list two ids in one string ("D8:6; D9:17").
            evidence = [part.strip() for item in qa.get("evidence", []) for part in item.split(";") if part.strip()]
            if qa["category"] != 5 and evidence:
                questions.append((qa["question"], evidence, qa["category"]))
        yield turns, questions


def memory_ranker(ranking: str) -> Ranker:
    """sentinel-memory itself: ``context`` and ``recall`` of a state holding the turns, with ``ranking``."""

    def build(turns: Sequence[Turn]) -> Callable[[str], tuple[dict[int, set[str]], list[str]]]:
        state = MemoryState(config=core.make_config(limit=len(turns) + 1, ranking=ranking))
        for i, (key, text) in enumerate(turns):
            state, _ = core.remember(state, key, text, importance=0.5, now=T0 + i * MINUTE)
        now = T0 + (len(turns) - 1) * MINUTE

        def ask(question: str) -> tuple[dict[int, set[str]], list[str]]:
            contexts = {
                budget: {e.key for e in core.context(state, now=now, token_budget=budget, query=question).entries}
                for budget in BUDGETS
            }
            hits = [hit.entry.key for hit in core.recall(state, question, now=now, limit=max(KS))]
            return contexts, hits

        return ask

    return build


def greedy(order: Sequence[int], units: Sequence[int], budget: int) -> set[int]:
    """The greedy fill of the estimator (CTX-2, CTX-8): lines joined by a newline, ceil(UTF-16 length / 4) tokens."""
    chosen, length = set(), 0
    for i in order:
        grown = length + units[i] + (1 if chosen else 0)
        if math.ceil(grown / 4) <= budget:
            chosen.add(i)
            length = grown
    return chosen


def scored_ranker(scorer: Callable[[Sequence[Turn]], Callable[[str], Sequence[float]]]) -> Ranker:
    """A peer: turns scoring above 0 by score (ties newer first), then the rest newest first, filled greedily."""

    def build(turns: Sequence[Turn]) -> Callable[[str], tuple[dict[int, set[str]], list[str]]]:
        score = scorer(turns)
        ids = [key for key, _ in turns]
        units = [utf16_len(key) + 2 + utf16_len(text) for key, text in turns]  # the line "key: text"

        def ask(question: str) -> tuple[dict[int, set[str]], list[str]]:
            scores = score(question)
            hits = sorted((i for i in range(len(ids)) if scores[i] > 0), key=lambda i: (scores[i], i), reverse=True)
            taken = set(hits)
            order = hits + [i for i in reversed(range(len(ids))) if i not in taken]
            contexts = {budget: {ids[i] for i in greedy(order, units, budget)} for budget in BUDGETS}
            return contexts, [ids[i] for i in hits[: max(KS)]]

        return ask

    return build


def rank_bm25_scorer(turns: Sequence[Turn]) -> Callable[[str], Sequence[float]]:
    """rank_bm25's BM25Okapi over REC-1's words of each turn, no stop words, no stems."""
    from rank_bm25 import BM25Okapi

    model = BM25Okapi([word_sequence(text) for _, text in turns])
    return lambda question: list(model.get_scores(word_sequence(question)))


def bm25s_scorer(turns: Sequence[Turn]) -> Callable[[str], Sequence[float]]:
    """bm25s (its Lucene BM25) with its English stop words and the Snowball English stemmer."""
    import bm25s
    import snowballstemmer

    stem = snowballstemmer.stemmer("english").stemWords
    corpus = bm25s.tokenize([text for _, text in turns], stopwords="en", stemmer=stem, show_progress=False)
    model = bm25s.BM25()
    model.index(corpus, show_progress=False)

    def score(question: str) -> Sequence[float]:
        tokens = bm25s.tokenize([question], stopwords="en", stemmer=stem, show_progress=False, return_ids=False)
        return list(model.get_scores(tokens[0]))

    return score


def recency_ranker(turns: Sequence[Turn]) -> Callable[[str], tuple[dict[int, set[str]], list[str]]]:
    """The newest turns that fit, what ``trim_messages(strategy="last")`` keeps; it ranks nothing, so no recall@k."""
    ids = [key for key, _ in turns]
    units = [utf16_len(key) + 2 + utf16_len(text) for key, text in turns]
    contexts = {budget: {ids[i] for i in greedy(list(reversed(range(len(ids)))), units, budget)} for budget in BUDGETS}
    return lambda question: (contexts, [])


RANKERS: dict[str, Ranker] = {
    'sentinel-memory, ranking="bm25"': memory_ranker("bm25"),
    'sentinel-memory, ranking="words" (REC-2, the default)': memory_ranker("words"),
    "bm25s, Snowball stems and stop words": scored_ranker(bm25s_scorer),
    "rank_bm25 Okapi, plain words": scored_ranker(rank_bm25_scorer),
    "recency (newest turns that fit)": recency_ranker,
}


def evaluate(ranker: Ranker, path: Path) -> dict[tuple[str, int, int | None], float]:
    """Mean evidence recall by ``("B", budget, category)`` and ``("k", k, category)``; category None is every question."""
    found: dict[tuple[str, int, int | None], list[float]] = collections.defaultdict(list)
    for turns, questions in conversations(path):
        ask = ranker(turns)
        for question, evidence, category in questions:
            contexts, hits = ask(question)
            for budget in BUDGETS:
                share = sum(e in contexts[budget] for e in evidence) / len(evidence)
                found["B", budget, None].append(share)
                found["B", budget, category].append(share)
            if hits:
                for k in KS:
                    share = sum(e in hits[:k] for e in evidence) / len(evidence)
                    found["k", k, None].append(share)
                    found["k", k, category].append(share)
            else:
                for k in KS:
                    found["k", k, None].append(0.0)
                    found["k", k, category].append(0.0)
    return {key: sum(values) / len(values) for key, values in found.items()}


def measure(path: Path, names: Sequence[str] | None = None) -> dict[str, dict[tuple[str, int, int | None], float]]:
    """Every ranker's (or those ``names``) results on the data at ``path``."""
    return {name: evaluate(ranker, path) for name, ranker in RANKERS.items() if names is None or name in names}


def questions_by_category(path: Path) -> dict[int, int]:
    counts: collections.Counter[int] = collections.Counter()
    for _, questions in conversations(path):
        counts.update(category for _, _, category in questions)
    return dict(sorted(counts.items()))


def table(results: dict[str, dict[tuple[str, int, int | None], float]], category: int | None = None) -> str:
    """A markdown table: one row per ranker, evidence recall at each budget, then recall@k."""
    head = (
        "| ranking | "
        + " | ".join(f"B = {b:,}" for b in BUDGETS)
        + " | "
        + " | ".join(f"recall@{k}" for k in KS)
        + " |"
    )
    lines = [head, "|---" * (1 + len(BUDGETS) + len(KS)) + "|"]
    for name, found in results.items():
        cells = [f"{found['B', b, category]:.3f}" for b in BUDGETS]
        ranks = "recency" not in name
        cells += [f"{found['k', k, category]:.3f}" if ranks else "" for k in KS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, dict[tuple[str, int, int | None], float]], out: Path) -> None:
    """Grouped bars: evidence recall at each budget and recall@k, one colour per ranker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [f"B = {b:,}" for b in BUDGETS] + [f"recall@{k}" for k in KS]
    keys = [("B", b) for b in BUDGETS] + [("k", k) for k in KS]
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    width = 0.8 / len(results)
    for n, (name, found) in enumerate(results.items()):
        values = [found[kind, size, None] if kind == "B" or "recency" not in name else 0.0 for kind, size in keys]
        ax.bar([g + n * width - 0.4 + width / 2 for g in range(len(groups))], values, width, label=name)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of evidence turns found")
    ax.set_title("LoCoMo, development half: evidence recall (higher is better)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, frameon=False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


PAGE = """# Recall quality

What a memory is for is choosing what the model sees. This page measures
that choice on conversations nobody here wrote: LoCoMo (Maharana et al.,
"Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024),
whose long two-person conversations come with questions and the turns that
answer them.

Each turn is remembered as an entry (key = dialog id, text =
`Speaker: text`, importance 0.5, one minute apart); each question is asked
as `get_context(token_budget=B, query=question)` with the estimator, and
scored by the share of its evidence turns the context holds. recall@k is
the share among the first k hits of `recall(question, limit=k)`. The peers
rank the same turns by their own scores and fill the same budget greedily
with the same lines and the same counter: their matches first, then the
newest turns.

These figures come from the **development half** of LoCoMo (conversations
conv-26, conv-30, conv-41, conv-42, conv-43: {questions} questions, category
5, the adversarial one, and questions without evidence left out; by category:
{categories}). The ranking's constants were chosen on this half, so they
flatter it a little; the other five conversations are measured separately.
Generated by `python benchmarks/locomo.py --data {data} --write` on
{date}.

![Evidence recall by budget and recall@k](recall-quality.png)

## All questions

{table}

## By question category

{by_category}

## Reproducing it

The data is not part of the project (its licence, CC BY-NC 4.0, differs):
download `data/locomo10.json` from
[snap-research/LoCoMo](https://github.com/snap-research/LoCoMo) and run

```console
$ pip install "sentinel-memory[bm25]" rank-bm25 bm25s matplotlib
$ python benchmarks/locomo.py --data locomo10.json
```

`benchmarks/test_recall_quality.py` runs the same measurement under pytest
when the file is at `../shared/locomo/locomo-dev.json` (or `--data` names
it) and is skipped otherwise.
"""


def write(results: dict[str, dict[tuple[str, int, int | None], float]], path: Path) -> None:
    """Rewrite docs/recall-quality.md and its plot from ``results``."""
    counts = questions_by_category(path)
    by_category = "\n\n".join(f"### Category {c} ({n} questions)\n\n{table(results, c)}" for c, n in counts.items())
    page = PAGE.format(
        questions=sum(counts.values()),
        categories=", ".join(f"{c}: {n}" for c, n in counts.items()),
        date=time.strftime("%Y-%m-%d", time.gmtime()),
        data=path.name,
        table=table(results),
        by_category=by_category,
    )
    (ROOT / "docs" / "recall-quality.md").write_text(page, encoding="utf-8")
    plot(results, ROOT / "docs" / "recall-quality.png")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo's JSON (locomo10.json or a part of it)")
    parser.add_argument("--write", action="store_true", help="rewrite docs/recall-quality.md and its plot")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no LoCoMo data at {args.data}: nothing measured", file=sys.stderr)
        return 2
    results = measure(args.data)
    print(table(results))
    if args.write:
        write(results, args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
