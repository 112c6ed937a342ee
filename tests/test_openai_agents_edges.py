"""The Agents SDK session's edges: an empty turn, a second output of an answered call, the filter's tokenizer, output_text (OAI-1 .. OAI-4)."""

from __future__ import annotations

from agents import Agent
from agents.run_config import CallModelData, ModelInputData

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of
from sentinel_memory.integrations.openai_agents import SentinelSession, budget_items, chat_messages

CALL = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "4 °C"}


def test_oai_1_a_turn_with_empty_text_reads_as_one_item():
    """OAI-1: a turn stored with empty text (add_turn("user", "")) gives back one message item of that empty text."""
    mem = sm.create_memory()
    mem.add_turn("user", "")
    assert SentinelSession("s", memory=mem).items() == [{"role": "user", "content": ""}]


def test_oai_2_a_second_output_of_an_answered_call_is_kept_as_an_orphan_and_never_sent():
    """OAI-2: an output for a call already answered is kept whole as an assistant message, read back, and left out of the budgeted history."""
    mem = sm.create_memory()
    session = SentinelSession("s", memory=mem, token_budget=500)
    session.add([{"role": "user", "content": "Weather?"}, CALL])
    session.add([OUTPUT])
    session.add([OUTPUT])
    assert [(key, data["role"]) for key, data in mem.items()] == [
        ("chat:1", "user"),
        ("chat:2", "assistant"),
        ("chat:3", "tool"),
        ("chat:4", "assistant"),
    ]
    assert session.items() == [{"role": "user", "content": "Weather?"}, CALL, OUTPUT, OUTPUT]
    assert session.budgeted_items() == [{"role": "user", "content": "Weather?"}, CALL, OUTPUT]
    session.add([{"role": "user", "content": "Thanks"}])  # the step after: the conversation goes on
    assert session.items()[-1] == {"role": "user", "content": "Thanks"}


def chars(text: str) -> int:
    return len(text)


def test_oai_4_the_request_filter_counts_with_the_memorys_tokenizer():
    """OAI-4: without a tokenizer of its own the session's filter counts with the memory's, not the estimator."""
    items = [
        {"role": "user", "content": "What is the weather like in Brno today?"},
        {"role": "assistant", "content": "Four degrees and rain."},
        {"role": "user", "content": "And tomorrow?"},
    ]
    budget = 60
    by_memory = budget_items(items, budget, tokenizer=chars, instructions="Rules.")
    assert by_memory != budget_items(items, budget, instructions="Rules.")  # the estimator keeps more
    session = SentinelSession("s", memory=sm.create_memory(tokenizer=chars), token_budget=budget)
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions="Rules."), agent=Agent(name="a"), context=None
    )
    assert session.call_model_input_filter(data).input == by_memory == [items[-1]]


def test_oai_2_an_assistants_output_text_is_counted():
    """OAI-2, TXT-4: an assistant message's output_text parts are the text its turn reads as and is counted by."""
    item = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "It is 4 °C."}]}
    (message,) = chat_messages([item])
    assert body_of(message) == "It is 4 °C."
    assert message["content"][0] == {"type": "text", "text": "It is 4 °C."}
