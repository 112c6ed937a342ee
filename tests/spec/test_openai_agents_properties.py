"""The OpenAI Agents SDK session against a list model: random batches of items, restarts, pops and budgets (OAI-1 .. OAI-5)."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("agents")

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.openai_agents import SentinelSession, budget_items, chat_messages

COUNT = sm.upper_bound_tokens
words = st.text(alphabet="abc é😀 ", max_size=30)


@st.composite
def turn(draw: st.DrawFn, n: int) -> list[list[dict[str, Any]]]:
    """One SDK turn as the batches the Runner adds: the input, then each model response with its tool outputs."""
    question: dict[str, Any] = draw(
        st.sampled_from(
            [
                {"role": "user", "content": draw(words)},
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": draw(words)},
                        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
                    ],
                },
            ]
        )
    )
    batches = [[question]]
    for r in range(draw(st.integers(0, 2))):
        response: list[dict[str, Any]] = []
        if draw(st.booleans()):
            response.append({"type": "reasoning", "id": f"rs_{n}_{r}", "summary": [], "encrypted_content": "e"})
        calls = [
            {"type": "function_call", "call_id": f"c{n}_{r}_{k}", "name": "tool", "arguments": json.dumps(draw(words))}
            for k in range(draw(st.integers(1, 3)))
        ]
        outputs = [{"type": "function_call_output", "call_id": c["call_id"], "output": draw(words)} for c in calls]
        batches.append(response + calls + outputs)
    answer = {
        "type": "message",
        "role": "assistant",
        "id": f"m{n}",
        "content": [{"type": "output_text", "text": draw(words)}],
    }
    extra = draw(
        st.sampled_from(
            [[], [{"type": "function_call_output", "call_id": "nobody", "output": "x"}], [{"type": "odd", "v": [1]}]]
        )
    )
    batches.append([answer, *extra])
    return batches


conversation = st.integers(1, 6).flatmap(lambda n: st.tuples(*[turn(i) for i in range(n)]))


def tokens(items: list[dict[str, Any]]) -> int:
    return sum(COUNT(body_of(m)) + 3 for m in chat_messages(items))


@settings(max_examples=30, deadline=None)
@given(turns=conversation, budget=st.integers(0, 400), pops=st.integers(0, 4))
def test_oai_1_to_oai_5_items_round_trip_and_every_budget_is_kept(turns, budget, pops):
    """OAI-1, OAI-2, OAI-3, OAI-4, INT-1: any batches round-trip through a restart, limit reads the tail, pop undoes the newest, and every budgeted history fits, is valid and keeps whole units."""
    folder = Path(tempfile.mkdtemp(prefix="oai-"))
    try:
        everything: list[dict[str, Any]] = []
        session = SentinelSession("s", folder)
        for batches in turns:
            for batch in batches:
                asyncio.run(session.add_items(batch))
                everything.extend(batch)
        again = SentinelSession("s", folder, token_budget=budget, tokenizer=COUNT)
        assert again.items() == everything
        assert again.items(3) == everything[-3:]

        for chosen in (_budgeted(again), _filtered(everything, budget)):
            if chosen is None:
                continue
            assert tokens(chosen) <= budget
            assert chosen[0].get("role") == "user"
            assert sm.request_problems(chat_messages(chosen)) == []
            assert _is_subsequence(chosen, everything)
            questions = [i for i in everything if i.get("role") == "user"]
            assert questions[-1] in chosen  # the newest question is always in (MSG-9)

        for _ in range(pops):
            popped = asyncio.run(again.pop_item())
            assert popped == (everything.pop() if everything else None)
        assert SentinelSession("s", folder).items() == everything
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _budgeted(session: SentinelSession) -> list[dict[str, Any]] | None:
    try:
        return session.budgeted_items()
    except sm.TokenBudgetError:
        return None


def _filtered(items: list[dict[str, Any]], budget: int) -> list[dict[str, Any]] | None:
    try:
        return budget_items(items, budget, tokenizer=COUNT)
    except sm.TokenBudgetError:
        return None


def _is_subsequence(part: list[Any], whole: list[Any]) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


@settings(max_examples=20, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=6), cancel=st.lists(st.booleans(), min_size=6, max_size=6)
)
def test_oai_6_concurrent_and_cancelled_changes_are_whole_and_off_the_loop(sizes, cancel):
    """OAI-6, OAI-1: batches added by concurrent tasks, some cancelled at once, are each stored whole and contiguous, and no save runs on the event loop's thread."""
    folder = Path(tempfile.mkdtemp(prefix="oai-"))
    try:
        clock_threads: list[int] = []

        def clock() -> int:  # read once by every change, in the thread that runs it (TIME-1)
            clock_threads.append(threading.get_ident())
            return 1_792_310_400_000

        session = SentinelSession("s", folder, clock=clock)
        batches = [[{"role": "user", "content": f"{b}.{i}"} for i in range(size)] for b, size in enumerate(sizes)]
        loop_threads: list[int] = []

        async def scenario() -> None:
            loop_threads.append(threading.get_ident())
            clock_threads.clear()  # the memory's load, before the loop ran
            tasks = [asyncio.ensure_future(session.add_items(batch)) for batch in batches]
            await asyncio.sleep(0)
            for task, stop in zip(tasks, cancel, strict=False):
                if stop:
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run(scenario())
        stored = SentinelSession("s", folder).items()
        assert sorted(json.dumps(i) for i in stored) == sorted(json.dumps(i) for b in batches for i in b)
        for batch in batches:
            start = stored.index(batch[0])
            assert stored[start : start + len(batch)] == batch
        assert clock_threads and loop_threads[0] not in clock_threads
    finally:
        shutil.rmtree(folder, ignore_errors=True)
