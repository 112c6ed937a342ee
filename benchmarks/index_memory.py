"""The memory each ranking's index adds to a store of chat text, measured with tracemalloc.

``python benchmarks/index_memory.py [--n 100000]`` builds the chat store of
``workload.make_chat_state`` (the same one per run, by its seed) and, in a
fresh process per ranking, measures what working out that ranking's index
allocates and keeps:

* ``words`` (REC-2): every entry's recall words (``Entry.words``) and the
  holders of every word (``Index.holders``, worked out for all words once
  the first searches are done);
* ``bm25`` (BM-7): every entry's terms and their counts (``Entry.bm25_terms``),
  the stems learnt (``bm25``'s table of stems) and the postings
  (``Index.postings``);
* ``bm25+shapes``: the same, and every term's holders grouped by shape
  (``Postings.shapes``), which a search keeps for each term it reads: the
  most the postings can keep, as if every term had been searched for.

It prints each in MiB and its ratio to the words index. A fresh process each, so that none
finds another's caches (the stems, the words) already made.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(ranking: str, n: int) -> int:
    """Bytes the ``ranking``'s index keeps allocated once worked out over ``n`` chat entries."""
    sys.path.insert(0, str(HERE))
    from workload import make_chat_state

    state = make_chat_state(n, seed=n)
    index = state.index
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    if ranking == "words":
        for _ in range(8):  # the first searches look in the text; then every word's holders are worked out
            index.holders("a-word-no-entry-holds")
        held = sum(len(entry.words) for entry in state.entries.values())
    else:
        postings = index.postings()
        if ranking == "bm25+shapes":
            for term in postings.lists:
                postings.shapes(term)
        held = sum(entry.bm25_terms[1] for entry in state.entries.values())
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held > 0
    return after - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="how many chat entries (default 100,000)")
    parser.add_argument("--only", choices=["words", "bm25", "bm25+shapes"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure(args.only, args.n)))
        return
    found = {}
    for ranking in ("words", "bm25", "bm25+shapes"):
        run = subprocess.run(
            [sys.executable, __file__, "--n", str(args.n), "--only", ranking],
            check=True,
            capture_output=True,
            text=True,
        )
        found[ranking] = json.loads(run.stdout)
    mib = 1024 * 1024
    print(f"entries: {args.n:,} of chat text (workload.make_chat_state)")
    print(f"words index (Entry.words + every word's holders): {found['words'] / mib:.1f} MiB")
    print(f"bm25 index (Entry.bm25_terms + stems + postings): {found['bm25'] / mib:.1f} MiB")
    print(f"bm25 / words: {found['bm25'] / found['words']:.2f}x")
    print(f"bm25 index with every term's shapes kept: {found['bm25+shapes'] / mib:.1f} MiB")
    print(f"bm25 with every term's shapes / words: {found['bm25+shapes'] / found['words']:.2f}x")


if __name__ == "__main__":
    main()
