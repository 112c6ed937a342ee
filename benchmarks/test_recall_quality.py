"""Recall quality on LoCoMo (benchmarks/locomo.py): the BM25 ranking against its peers, on the same budgets.

Reads the data from ``--data`` (default ``../shared/locomo/locomo-dev.json``,
LoCoMo's development half) and is skipped when the file is absent. It
asserts quality, not time: on the data it is given, ``ranking="bm25"``
finds at least as much evidence as bm25s with its stemmer and stop words
at every budget and at recall@5/10/25.
"""

from __future__ import annotations

from pathlib import Path

import locomo
import pytest

pytest.importorskip("snowballstemmer")
pytest.importorskip("bm25s")
pytest.importorskip("rank_bm25")


@pytest.fixture(scope="module")
def data(request) -> Path:
    given = request.config.getoption("--data", default=None)
    path = Path(given) if given else locomo.DEFAULT_DATA
    if not path.is_file():
        pytest.skip(f"no LoCoMo data at {path}")
    return path


@pytest.fixture(scope="module")
def results(data):
    return locomo.measure(data)


def test_bm_5_bm25_finds_at_least_what_bm25s_finds_at_every_budget(results):
    """BM-5, BM-8: evidence recall of ranking="bm25" >= bm25s+stemmer at B = 500, 1,000, 2,000 and at recall@5/10/25."""
    ours = results['sentinel-memory, ranking="bm25"']
    peer = results["bm25s, Snowball stems and stop words"]
    for key in [("B", b, None) for b in locomo.BUDGETS] + [("k", k, None) for k in locomo.KS]:
        assert ours[key] >= peer[key], key


def test_bm_9_every_ranking_beats_recency_on_a_budget(results):
    """BM-9: every ranking that reads the question finds more evidence than the newest turns at every budget."""
    recency = results["recency (newest turns that fit)"]
    for name, found in results.items():
        if name != "recency (newest turns that fit)":
            assert all(found["B", b, None] > recency["B", b, None] for b in locomo.BUDGETS), name
