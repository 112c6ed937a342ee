"""The counted fill (CTX-12 .. CTX-14): real tokenizers counted line by line, exactly, and each line once."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import pytest
from spec.strategies import merging

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core.tokens import LineCounter, as_tokenizer, per_line
from sentinel_memory.shell import Counters

bpe_openai = pytest.importorskip("bpe_openai")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import workload  # noqa: E402 - the benchmarks' chat-text workload

O200K = bpe_openai.get_encoding("o200k_base")
CL100K = bpe_openai.get_encoding("cl100k_base")


class Spy(LineCounter):
    """A LineCounter that records what it counts: whole texts through the call, lines through measure_many."""

    def __init__(self, count, **options):
        super().__init__(self._recorded, **options)
        self.inner, self.whole, self.lines = count, [], []

    def _recorded(self, text):
        self.lines.append(text)
        return self.inner(text)

    def __call__(self, text):
        self.whole.append(text)
        return self.inner(text)


def refund_memory(tokenizer=None):
    """The article's four memories, one a second."""
    clock = [0]
    mem = sm.create_memory(tokenizer=tokenizer, clock=lambda: clock[0])
    for key, text, importance in [
        ("user:name", "Jakub", 0.9),
        ("user:language", "prefers answers in Czech", 0.8),
        ("chat:7", "talked about the weather in Prague for a while", 0.1),
        ("order:42", "refund requested for order 42, waiting for the warehouse", 0.7),
    ]:
        mem.remember(key, text, importance=importance)
        clock[0] += 1000
    return mem


def test_ctx_12_a_bpe_merges_punctuation_with_the_line_feed():
    """CTX-12: o200k_base counts "What did I order?\\nuser: hi" as 8 tokens, its three parts as 9: a BPE is not additive."""
    parts = ["What did I order?", "\n", "user: hi"]
    assert len(O200K.encode("".join(parts))) == 8
    assert sum(len(O200K.encode(part)) for part in parts) == 9


@pytest.mark.parametrize(
    "tokenizer", [O200K, lambda text: len(O200K.encode(text)), per_line(lambda text: len(O200K.encode(text)))]
)
def test_ctx_13_the_article_o200k_example_is_exact_with_either_fill(tokenizer):
    """CTX-13, CTX-12, CTX-2: the article's o200k_base context (30 tokens, 1 omitted) with the object, a function and per_line."""
    ctx = refund_memory().get_context(token_budget=30, query="refund status", tokenizer=tokenizer)
    assert (ctx.tokens, ctx.omitted) == (30, 1)
    assert [e.key for e in ctx.entries] == ["user:name", "user:language", "order:42"]


def test_ctx_13_which_fill_each_tokenizer_takes():
    """CTX-13: an Encoding object and per_line(f) are counted line by line; a plain function and additive(f) are not."""
    assert as_tokenizer(O200K).fill == "counted"
    assert per_line(len).fill == "counted"
    assert getattr(as_tokenizer(len), "fill", None) is None
    assert getattr(sm.additive(len), "fill", None) is None
    assert getattr(sm.estimate_tokens, "fill", None) is None


def test_ctx_13_a_plain_function_keeps_the_naive_fill_and_per_line_changes_it():
    """CTX-13, CTX-12, CTX-2: where the joins merge, the naive fill takes a line the counted fill's sum leaves out."""
    state = sm.MemoryState()
    state, _ = core.remember(state, "a", "x?", now=0, importance=0.9)
    state, _ = core.remember(state, "b", "y?", now=1000, importance=0.5)
    # "a: x?" and "b: y?" count 5 each and the line feed 1; joined they count 10, not 11.
    naive = core.context(state, now=2000, token_budget=10, tokenizer=merging)
    counted = core.context(state, now=2000, token_budget=10, tokenizer=per_line(merging))
    assert (naive.text, naive.tokens) == ("a: x?\nb: y?", 10)
    assert (counted.text, counted.tokens) == ("a: x?", 5)


def test_ctx_12_the_repair_drops_the_lowest_ranked_pick():
    """CTX-12: when the joined text counts over the budget, the pick lowest in the ranking goes, not the newest or oldest."""
    state = sm.MemoryState()
    for key, text, importance, at in [("x", "old\n", 0.5, 0), ("y", "mid\n", 0.1, 1000), ("z", "new\n", 0.9, 2000)]:
        state, _ = core.remember(state, key, text, now=at, importance=importance)
    spy = Spy(merging)
    # Each line counts 7 and a space 1: the sum is 23, but each "\n " join costs 2 more: 27 > 24.
    ctx = core.context(state, now=3000, token_budget=24, tokenizer=spy, separator=" ")
    assert [e.key for e in ctx.entries] == ["x", "z"]
    assert ctx.tokens == merging(ctx.text) == 17
    assert spy.whole == ["", "x: old\n y: mid\n z: new\n", "x: old\n z: new\n"]


def test_ctx_14_the_next_context_counts_only_the_new_line():
    """CTX-14: a turn adds one entry; the next context counts that line, the separator is remembered, and the whole text once."""
    spy = Spy(lambda text: len(O200K.encode_ordinary(text)))
    mem = sm.create_memory(tokenizer=spy, clock=lambda: 1000)
    for i in range(50):
        mem.add_turn("user", f"Question number {i}?")
    mem.get_context(token_budget=100)
    assert len(spy.lines) == 51  # every line and the separator, once
    spy.lines.clear(), spy.whole.clear()
    mem.add_turn("assistant", "Here is the answer.")
    mem.get_context(token_budget=100)
    assert spy.lines == ["chat:51: assistant: Here is the answer."]
    assert spy.whole[0] == "" and len(spy.whole) == 2  # the empty text (CTX-5) and the text sent


def test_ctx_14_a_memory_keeps_the_counts_of_an_encoding_passed_per_call():
    """CTX-14: passing the same Encoding object on every call shares one counter; the memory's own is used for its own object."""
    mem = refund_memory(tokenizer=O200K)
    own = mem.state.config.tokenizer
    assert isinstance(own, LineCounter) and own.__wrapped__ is O200K
    mem.get_context(token_budget=30, tokenizer=O200K)
    assert own.cached == 5  # four lines and the separator
    mem.get_context(token_budget=30, tokenizer=CL100K)
    mem.get_context(token_budget=30, tokenizer=CL100K)
    kept = mem._counters.get(CL100K, own)
    assert kept.cached == 5 and kept is mem._counters.get(CL100K, own)


def test_ctx_14_counters_keep_a_few_tokenizer_objects_and_no_functions():
    """CTX-14: the last 4 tokenizer objects are kept by identity; a plain function passes through untouched."""

    class Letters:
        def encode(self, text):
            return list(text)

    counters = Counters()
    objects = [Letters() for _ in range(5)]
    made = [counters.get(o, sm.estimate_tokens) for o in objects]
    assert counters.get(objects[4], sm.estimate_tokens) is made[4]
    assert counters.get(objects[0], sm.estimate_tokens) is not made[0]  # the oldest was let go
    function = len
    assert counters.get(function, sm.estimate_tokens) is function
    assert counters.get(None, sm.estimate_tokens) is None


def test_ctx_14_the_counts_are_bounded():
    """CTX-14: past max_lines or max_chars the older half is forgotten, and counts stay right."""
    counter = LineCounter(len, max_lines=10, max_chars=1000)
    lines = [f"line {i}" for i in range(25)]
    assert counter.measure_many(lines) == list(map(len, lines))
    assert counter.cached <= 10
    assert counter.measure("x" * 2000) == 2000 and "x" * 2000 not in counter._lines  # longer than the whole bound
    small = LineCounter(len, max_chars=20)
    small.measure_many(["a" * 8, "b" * 8, "c" * 8])
    assert small._chars <= 20 and small._chars == sum(map(len, small._lines))


def test_ctx_14_threads_share_one_counter_safely():
    """CTX-14: contexts built by 8 threads at once through one counter all get exact counts, within budget."""
    mem = sm.create_memory(tokenizer=LineCounter(lambda text: len(O200K.encode_ordinary(text)), max_lines=64))
    lines = workload.chat_queries(300, seed=3)
    for i, line in enumerate(lines):
        mem.add_turn("user" if i % 2 else "assistant", line)
    failures = []

    def build(seed):
        rng = random.Random(seed)
        for _ in range(20):
            budget = rng.randrange(50, 800)
            ctx = mem.get_context(token_budget=budget, query=rng.choice(lines))
            if not ctx.tokens == len(O200K.encode_ordinary(ctx.text)) <= budget:
                failures.append((budget, ctx.tokens))

    threads = [threading.Thread(target=build, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_ctx_12_per_line_refuses_what_is_not_a_tokenizer():
    """CTX-12, OPT-1: per_line of None or of a non-callable raises TypeError; of a LineCounter it is that counter."""
    with pytest.raises(TypeError):
        per_line(None)
    with pytest.raises(TypeError):
        per_line("o200k")
    counter = per_line(len)
    assert per_line(counter) is counter


def test_msg_3_messages_count_the_same_through_a_line_counter():
    """MSG-3, CTX-14: get_messages with an Encoding object equals it with the plain count, and remembers each content."""
    mem = refund_memory()
    for i, line in enumerate(workload.chat_queries(40, seed=5)):
        mem.add_turn("user" if i % 2 else "assistant", line)
    plain = mem.get_messages(token_budget=400, tokenizer=lambda text: len(O200K.encode_ordinary(text)))
    assert mem.get_messages(token_budget=400, tokenizer=O200K) == plain
    assert mem._counters.get(O200K, mem.state.config.tokenizer).cached > 0


@pytest.mark.parametrize("encoding", [O200K, CL100K], ids=["o200k_base", "cl100k_base"])
def test_ctx_12_the_repair_almost_never_runs_on_real_chat_text(encoding):
    """CTX-12: on real chat text in six languages, at least 95% of contexts need no repair, and every one is exact."""
    state = workload.make_chat_state(1000, seed=11)
    now = workload.NOW
    rng = random.Random(2)
    repaired = 0
    queries = workload.chat_queries(100, seed=13)
    for query in queries:
        spy = Spy(lambda text: len(encoding.encode_ordinary(text)))
        budget = rng.choice([100, 500, 2000, 4000])
        ctx = core.context(state, now=now, token_budget=budget, query=query, tokenizer=spy)
        assert ctx.tokens == len(encoding.encode_ordinary(ctx.text)) <= budget
        repaired += len(spy.whole) > 2
    assert repaired <= 0.05 * len(queries), f"{repaired} of {len(queries)} contexts needed a repair"


def test_ctx_14_an_async_memory_keeps_the_counts_of_an_encoding_passed_per_call():
    """CTX-14, AIO-1: AsyncMemory, too, shares one counter across calls given the same Encoding object."""
    import asyncio

    async def main():
        async with await sm.create_async_memory(clock=lambda: 1000) as mem:
            await mem.add_turn("user", "Where is my refund?")
            first = mem.get_context(token_budget=50, tokenizer=O200K)
            kept = mem._counters.get(O200K, mem.state.config.tokenizer)
            await mem.add_turn("assistant", "It is on its way.")
            second = mem.get_messages(token_budget=50, tokenizer=O200K)
            return first, kept, second

    first, kept, second = asyncio.run(main())
    assert first.tokens == len(O200K.encode(first.text)) and len(second.messages) == 2
    assert kept.cached == 4  # both lines, the separator, and the second message's content


def test_ctx_14_counters_let_go_of_the_least_recently_used_and_take_threads():
    """CTX-14, MW-5: an object used again stays kept; 8 threads rotating 12 objects never raise and keep at most 4."""

    class Letters:
        def encode(self, text):
            return list(text)

    counters = Counters()
    a, b, c, d, e = (Letters() for _ in range(5))
    made = {o: counters.get(o, sm.estimate_tokens) for o in (a, b, c, d)}
    counters.get(a, sm.estimate_tokens)  # a is used again, so b is now the least recently used
    counters.get(e, sm.estimate_tokens)
    assert counters.get(a, sm.estimate_tokens) is made[a] and counters.get(b, sm.estimate_tokens) is not made[b]
    objects = [Letters() for _ in range(12)]
    raised = []

    def rotate(first):
        try:
            for i in range(3000):
                obj = objects[(first + i) % 12]
                assert counters.get(obj, sm.estimate_tokens)("abc") == 3
        except Exception as error:  # any error is the finding
            raised.append(error)

    threads = [threading.Thread(target=rotate, args=(first,)) for first in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert raised == [] and len(counters._by_id) <= 4


def test_ctx_14_bookkeeping_stays_exact():
    """CTX-14: a line too long to keep never empties the counts, repeated lines count once, clear() forgets."""
    counter = LineCounter(len, max_chars=100)
    lines = [f"l{i}" for i in range(20)]
    for _ in range(3):
        assert counter.measure_many([*lines, "x" * 200, "l1", "l1"]) == [*map(len, lines), 200, 2, 2]
    assert counter.cached == 20 and counter._chars == sum(map(len, lines))
    counter.clear()
    assert counter.cached == 0 and counter._chars == 0


def test_ctx_14_a_counter_copies_and_compares_by_its_tokenizer():
    """CTX-14, CTX-9: a LineCounter pickles and deep-copies without its counts; configs of one Encoding are equal; Config takes an Encoding."""
    import copy
    import pickle

    counter = per_line(len)
    counter.measure("abc")
    for clone in (copy.deepcopy(counter), pickle.loads(pickle.dumps(counter))):
        assert clone.cached == 0 and clone("ab") == 2 and clone.measure("ab") == 2
    assert sm.make_config(tokenizer=O200K) == sm.make_config(tokenizer=O200K) != sm.make_config(tokenizer=CL100K)
    assert isinstance(sm.Config(tokenizer=O200K).tokenizer, LineCounter)
    assert sm.Config(tokenizer=None).tokenizer is sm.estimate_tokens
    with pytest.raises(TypeError):
        sm.Config(tokenizer="o200k")
