"""The pydantic-ai adapter against a list model: random conversations recorded in random slices, read back whole and budgeted (PAI-1 .. PAI-6, INT-1)."""

from __future__ import annotations

import ast
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai")

from pydantic_ai.messages import (
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

import sentinel_memory as sm
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.pydantic_ai import SentinelHistory, turns_from_messages

WORDS = ["peanut", "cat", "Brno", "sum", "ok", "čaj", "x" * 30]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)

#: One exchange: a question (maybe with a system prompt or an image), then for each round of tool
#: calls the call response (maybe thinking first) and the request of returns (in any order), then an answer.
exchange = st.tuples(
    text,
    st.booleans(),
    st.booleans(),
    st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.randoms(use_true_random=False)), max_size=2),
    st.one_of(st.none(), text),
)


def conversation(exchanges: list[Any]) -> list[Any]:
    said: list[Any] = []
    calls = 0
    for question, system, image, rounds, answer in exchanges:
        content: Any = [question, ImageUrl("https://example.com/a.png")] if image else question
        parts: list[Any] = [SystemPromptPart("Be kind.")] if system else []
        said.append(ModelRequest(parts=[*parts, UserPromptPart(content)]))
        for count, thinking, order in rounds:
            made = []
            for _ in range(count):
                calls += 1
                made.append(ToolCallPart("add", {"a": calls}, tool_call_id=f"c{calls}"))
            said.append(ModelResponse(parts=[ThinkingPart("hm")] * thinking + made))
            returns = [ToolReturnPart("add", {"sum": call.args["a"]}, call.tool_call_id) for call in made]
            order.shuffle(returns)
            said.append(ModelRequest(parts=returns))
        if answer is not None:
            said.append(ModelResponse(parts=[TextPart(answer)]))
    return said


def json_of(messages: list[Any]) -> list[Any]:
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")


@settings(max_examples=40, deadline=None)
@given(
    exchanges=st.lists(exchange, min_size=1, max_size=8),
    cuts=st.lists(st.integers(0, 30), max_size=4),
    budget=st.integers(0, 250),
    must_keep=st.sampled_from([None, 0.8]),
)
def test_pai_1_to_pai_5_recorded_in_slices_read_back_whole_and_budgeted(exchanges, cuts, budget, must_keep):
    """PAI-1, PAI-2, PAI-3, PAI-4, PAI-5, INT-1, MSG-8: however a conversation is recorded (growing prefixes, again and again), each message is stored once and reads back whole after a restart; every view is valid, within budget and made of whole messages."""
    said = conversation(exchanges)
    folder = Path(tempfile.mkdtemp(prefix="pai-"))
    try:
        history = SentinelHistory.from_folder(folder, "u", budget, must_keep=must_keep, system="You help.")
        history.memory.remember("user:allergy", "allergic to peanut", importance=0.9)
        for cut in sorted(cuts) + [len(said)]:
            history.record(said[:cut])  # the model: what was stored is said[:max cut so far]
            history.record(said[:cut])
        again = SentinelHistory.from_folder(folder, "u", budget, must_keep=must_keep, system="You help.")
        assert json_of(again.load()) == json_of(said)
        try:
            view = again.view(query="peanut")
        except sm.TokenBudgetError:
            return
        chat = turns_from_messages(view)
        assert sm.request_problems(chat) == []
        assert sum(sm.estimate_tokens(body_of(m)) + MESSAGE_TOKENS for m in chat) <= budget
        originals = json_of(said)
        first = 0
        if chat[0]["role"] == "system":
            assert isinstance(view[0].parts[0], SystemPromptPart) and "You help." in view[0].parts[0].content
            if must_keep is not None:
                assert "allergic to peanut" in view[0].parts[0].content
            first = 1
        shown = json_of(view[first:])
        # Whole messages, in the order they were said: each shown message is one said, equal after the round trip.
        place = 0
        for message in shown:
            place = originals.index(message, place) + 1
        # The newest question is in, and its exchange from there on whole (MSG-9).
        newest = max(i for i, m in enumerate(said) if any(isinstance(p, UserPromptPart) for p in m.parts))
        assert shown[-(len(said) - newest) :] == originals[newest:]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PACKAGE = Path(sm.__file__).parent


@given(st.sampled_from(sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))))
def test_pai_6_no_module_but_the_adapter_reaches_pydantic_ai(module):
    """PAI-6, DEP-1, FWT-3: no module of the package imports the adapter or pydantic-ai; the adapter and the memory toolset import pydantic_ai."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [
        ("." * node.level) + (node.module or "") + "." + alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    reaching = [name for name in names if "pydantic" in name]
    if module == "integrations/pydantic_ai.py":
        assert reaching and all(name.startswith(("pydantic_ai.", "pydantic.")) for name in reaching)
    elif module == "integrations/tools/pydantic_ai.py":  # FWT-3: the memory toolset
        assert reaching and all(name.startswith("pydantic_ai.") for name in reaching)
    else:
        assert reaching == []
