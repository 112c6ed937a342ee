"""What a request keeps for the next one (MSG-18's counts, PAI-12's groups) and JSON's usual values taken in place (ENT-2): each as reading afresh."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

import sentinel_memory as sm
from sentinel_memory.core.jsondata import copy_json
from sentinel_memory.core.tokens import LineCounter, per_line
from sentinel_memory.integrations.pydantic_ai import SentinelHistory, messages_from_turns, turns_from_messages

NOW = 1_000_000
TALK = [
    {"role": ("user", "assistant")[i % 2], "content": f"message {i} " + "about the long menu of the day " * (i % 4)}
    for i in range(40)
]


def talk() -> sm.Memory:
    """A memory of forty turns of different lengths."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_messages(TALK)
    return mem


def test_msg_18_a_request_by_another_counter_counts_every_turn_by_it():
    """MSG-18: counts kept by the estimator are not another counter's: a request by it equals one made afresh, and back."""
    mem = talk()
    words = per_line(lambda text: 3 * len(text.split()))
    first = mem.get_messages(token_budget=300, cut="stable")
    by_words = mem.get_messages(token_budget=300, cut="stable", tokenizer=words)
    assert by_words == talk().get_messages(
        token_budget=300, cut="stable", tokenizer=per_line(lambda t: 3 * len(t.split()))
    )
    assert by_words.messages != first.messages  # the counters differ, so the cuts do
    assert mem.get_messages(token_budget=300, cut="stable") == first


def test_msg_18_a_cleared_line_counter_counts_every_turn_again():
    """MSG-18, CTX-14: after LineCounter.clear() a request counts each turn anew, so a changed count is the one used."""
    scale = [1]
    counter = per_line(lambda text: scale[0] * len(text.split()))
    mem = talk()
    before = mem.get_messages(token_budget=200, tokenizer=counter)
    scale[0] = 3
    counter.clear()
    after = mem.get_messages(token_budget=200, tokenizer=counter)
    assert after == talk().get_messages(token_budget=200, tokenizer=per_line(lambda text: 3 * len(text.split())))
    assert len(after.messages) < len(before.messages)


def test_msg_18_a_plain_counting_function_counts_on_every_request():
    """MSG-18: a counting function that is neither the estimator nor a LineCounter is asked again each request."""
    asked: list[str] = []

    def counting(text: str) -> int:
        asked.append(text)
        return len(text) // 4

    mem = talk()
    first = mem.get_messages(token_budget=400, tokenizer=counting)
    once = len(asked)
    assert mem.get_messages(token_budget=400, tokenizer=counting) == first
    assert len(asked) - once >= len(first.messages)


def test_msg_18_a_kept_count_is_the_estimators_count():
    """MSG-18: the second request, from kept counts, equals the first and one over a memory that never counted."""
    mem = talk()
    first = mem.get_messages(token_budget=250)
    assert mem.get_messages(token_budget=250) == first
    assert talk().get_messages(token_budget=250) == first


def seen(messages: list[Any]) -> list[Any]:
    """pydantic-ai messages as what the model reads in them: kinds, parts, content, names, ids and arguments (no times)."""
    return [
        (
            type(m).__name__,
            [
                (type(p).__name__, *(getattr(p, f, None) for f in ("content", "tool_name", "tool_call_id", "args")))
                for p in m.parts
            ],
        )
        for m in messages
    ]


def _turn_of(text: str, k: int, n: int, digest: str) -> dict[str, Any]:
    """A user turn carrying one part of a stored pydantic-ai request: turn ``k`` of ``n`` of the message ``digest``."""
    [turn] = turns_from_messages([ModelRequest(parts=[UserPromptPart(text)])])
    carried = copy.deepcopy(turn["content"][-1])
    carried["at"], carried["turn"] = [k], [k, n, digest]
    return {"role": "user", "content": [*turn["content"][:-1], carried]}


def test_pai_12_a_turn_that_joins_the_last_views_last_group_is_read_with_it():
    """PAI-12: a new turn that continues the message of the last view's last turn makes one message with it, as read afresh."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    mem.add_messages([_turn_of("first part", 0, 2, "d1")])
    assert [p.content for m in history.view() for p in m.parts] == ["first part"]
    mem.add_messages([_turn_of("second part", 1, 2, "d1")])
    view = history.view()
    assert [[p.content for p in m.parts] for m in view] == [["first part", "second part"]]
    assert view == messages_from_turns(mem.get_messages(token_budget=2_000).messages)


def test_pai_12_a_result_of_another_writer_is_named_after_a_call_of_the_turns_read_before():
    """PAI-12, PAI-3: another writer's result after turns the last view read is named after its call there, view after view."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    history.record(
        [
            ModelRequest(parts=[UserPromptPart("Weather?")]),
            ModelResponse(
                parts=[TextPart("Let me look."), ToolCallPart("weather", {"city": "Brno"}, tool_call_id="c1")]
            ),
        ]
    )
    history.view()
    mem.add_messages([{"role": "tool", "tool_call_id": "c1", "content": "4 °C"}])
    history.record([ModelResponse(parts=[TextPart("It is 4 °C.")])])
    for question in ("Thanks.", "And tomorrow?"):
        view = history.view()
        result = view[2].parts[0]
        assert isinstance(result, ToolReturnPart) and result.tool_name == "weather"
        assert seen(view) == seen(SentinelHistory(mem, 2_000).view())
        history.record([ModelRequest(parts=[UserPromptPart(question)])])


def test_pai_12_a_turn_of_another_writer_in_the_last_view_is_read_anew_with_its_calls_named():
    """PAI-12: the turns after another writer's turn are read again each view, equal to a fresh history's view."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    call = {"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    mem.add_messages(
        [{"role": "user", "content": "Find it."}, {"role": "assistant", "content": None, "tool_calls": [call]}]
    )
    first = history.view()
    mem.add_messages([{"role": "tool", "tool_call_id": "c9", "content": "found"}])
    history.record([ModelResponse(parts=[TextPart("Here it is.")])])
    view = history.view()
    assert seen(view) == seen(SentinelHistory(mem, 2_000).view())
    assert view[0] is not first[0] and seen(view[:1]) == seen(first[:1])
    assert [type(p).__name__ for p in view[2].parts] == ["ToolReturnPart"] and view[2].parts[0].tool_name == "lookup"


def test_pai_12_views_that_drop_their_oldest_turns_read_what_is_left():
    """PAI-12: a newest-first view whose start moves on each call equals a fresh history's view, and shares no message with the last."""
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 120, cut="newest")
    last: list[Any] = []
    for n in range(12):
        history.record(
            [ModelRequest(parts=[UserPromptPart(f"question {n} " * 3)]), ModelResponse(parts=[TextPart(f"answer {n}")])]
        )
        view = history.view()
        assert view == SentinelHistory(mem, 120, cut="newest").view()
        assert not {id(m) for m in view} & {id(m) for m in last}
        last = view


@pytest.mark.parametrize("value", [2**1024 - 1, -(2**1024) + 1, 2**1030])
@pytest.mark.parametrize("holder", [lambda v: {"n": v}, lambda v: [v]])
def test_ent_2_an_int_no_double_holds_is_refused_inside_a_dict_or_a_list(value, holder):
    """ENT-2: an int beyond the double range, just past the values taken in place, is refused wherever it sits."""
    with pytest.raises(TypeError, match="too large"):
        copy_json(holder(value))


@pytest.mark.parametrize("value", [2**1023, -(2**1023), 2**1023 - 1, 2**1024 - 2**970 - 1, 0, -1])
@pytest.mark.parametrize("holder", [lambda v: {"n": v}, lambda v: [v]])
def test_ent_2_an_int_a_double_holds_is_kept_inside_a_dict_or_a_list(value, holder):
    """ENT-2: the ints a double holds, at and around the edge of those taken in place, are kept as the same int."""
    copied = copy_json(holder(value))
    assert copied == holder(value)
    assert type(next(iter(copied.values())) if isinstance(copied, dict) else copied[0]) is int


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("holder", [lambda v: {"x": v}, lambda v: [1, v]])
def test_ent_2_a_float_that_is_not_finite_is_refused_inside_a_dict_or_a_list(value, holder):
    """ENT-2: inf and NaN are refused where the usual floats are taken in place."""
    with pytest.raises(TypeError, match="not JSON"):
        copy_json(holder(value))


def test_ent_2_subclasses_of_the_usual_values_are_stored_as_the_plain_ones():
    """ENT-2, WRP-4: an int, float or bool subclass inside a dict or list is stored as the plain value, never itself."""

    class Count(int):
        pass

    class Ratio(float):
        pass

    copied = copy_json({"a": Count(3), "b": [Ratio(0.5), Count(-2)], "c": None, "d": True})
    assert copied == {"a": 3, "b": [0.5, -2], "c": None, "d": True}
    assert type(copied["a"]) is int and type(copied["b"][0]) is float and type(copied["b"][1]) is int


def test_ent_2_a_str_subclass_key_with_a_lone_surrogate_is_refused_and_a_good_one_kept_plain():
    """ENT-2, WRP-4: a key of a str subclass is read as the plain str it holds, and refused when it holds a lone surrogate."""

    class Name(str):
        pass

    with pytest.raises(TypeError, match="lone surrogate"):
        copy_json({Name("bad\ud800"): 1})
    [key] = copy_json({Name("čaj"): 1})
    assert key == "čaj" and type(key) is str


def four_exchanges_viewed(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], sm.Memory, SentinelHistory]:
    """A history of four questions and answers, viewed once, with how many turns each view groups (PAI-12)."""
    from sentinel_memory.integrations import pydantic_ai

    grouped: list[int] = []
    original = pydantic_ai._grouped
    monkeypatch.setattr(pydantic_ai, "_grouped", lambda turns: grouped.append(len(turns)) or original(turns))
    mem = sm.create_memory(clock=lambda: NOW)
    history = SentinelHistory(mem, 2_000)
    for n in range(4):
        history.record(
            [ModelRequest(parts=[UserPromptPart(f"question {n}")]), ModelResponse(parts=[TextPart(f"answer {n}")])]
        )
    history.view()
    return grouped, mem, history


def test_pai_12_a_view_groups_only_the_turns_added_since_the_last_and_the_group_they_may_join(monkeypatch):
    """PAI-12: after a view, the next groups the last view's last group and the new turns alone; with nothing new, nothing."""
    grouped, mem, history = four_exchanges_viewed(monkeypatch)
    assert grouped == [8]  # the first view groups every turn
    call = ModelResponse(parts=[ToolCallPart("weather", {"city": "Brno"}, tool_call_id="w1")])
    history.record([ModelRequest(parts=[UserPromptPart("Weather?")]), call])
    result = ModelRequest(parts=[ToolReturnPart("weather", "4 °C", tool_call_id="w1")])
    history.record([result, ModelResponse(parts=[TextPart("4 °C.")])])
    history.view()
    assert grouped[-1] == 5  # the last view's last group, then a question, a call, its result and an answer
    history.view()
    assert grouped[-1] == 0  # the same turns: every group as it was
    history.record([ModelRequest(parts=[UserPromptPart("question 4")]), ModelResponse(parts=[TextPart("answer 4")])])
    view = history.view()
    assert grouped[-1] == 3  # the last view's last group, and the two new turns
    assert seen(view) == seen(SentinelHistory(mem, 2_000).view())


def test_pai_12_a_view_after_a_forgotten_turn_or_a_moved_start_groups_from_the_first_turn_that_differs(monkeypatch):
    """PAI-12: a turn forgotten in the middle, or older turns dropped by the budget, leave the groups before the change (or after the new start) as they were."""
    from sentinel_memory.integrations import pydantic_ai

    grouped, mem, history = four_exchanges_viewed(monkeypatch)
    assert mem.forget("chat:6")  # the answer of question 2: turns 1 .. 5 stay, then 7 and 8
    validated: list[int] = []
    adapter = pydantic_ai.ModelMessagesTypeAdapter

    class Counted:
        @staticmethod
        def validate_python(data: list[Any]) -> Any:
            validated.append(len(data))
            return adapter.validate_python(data)

    monkeypatch.setattr(pydantic_ai, "ModelMessagesTypeAdapter", Counted)
    view = history.view()
    assert grouped[-1] == 3  # the group of turn 5 (turn 7 may have joined it), then 7 and 8
    assert validated == []  # each of them a group the last view read, found by its turns
    monkeypatch.setattr(pydantic_ai, "ModelMessagesTypeAdapter", adapter)
    assert seen(view) == seen(SentinelHistory(mem, 2_000).view())
    mem2 = sm.create_memory(clock=lambda: NOW)
    moving = SentinelHistory(
        mem2, 60, cut="newest"
    )  # from the fourth view on, each drops the oldest question and answer
    counts, sizes = [], []
    for n in range(8):
        moving.record(
            [ModelRequest(parts=[UserPromptPart(f"question {n} " * 3)]), ModelResponse(parts=[TextPart(f"answer {n}")])]
        )
        at = len(grouped)
        view = moving.view()
        counts.append(grouped[at])
        sizes.append(len(view))
        assert seen(view) == seen(SentinelHistory(mem2, 60, cut="newest").view())
    assert sizes == [2, 4, 6, 6, 6, 6, 6, 6]
    assert counts == [
        2,
        3,
        3,
        3,
        3,
        3,
        3,
        3,
    ]  # the last view's last group and the two new turns, the start moved or not


class WatchedCounter(LineCounter):
    """A ``LineCounter`` that records each text it is asked to count."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.asked: list[str] = []

    def measure(self, line: str) -> int | float:
        self.asked.append(line)
        return super().measure(line)


@pytest.mark.parametrize("cut", ["newest", "stable"])
def test_msg_18_the_next_request_by_a_line_counter_counts_no_turn_again_only_the_new_one(cut):
    """MSG-18: a turn's count is kept under its counter: the next request asks the counter for no turn, then only a new one."""
    counter = WatchedCounter(lambda text: len(text.split()))
    mem = talk()
    call = {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    mem.add_messages(  # a unit of two turns, counted one by one
        [
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "found"},
        ]
    )
    first = mem.get_messages(token_budget=300, tokenizer=counter, cut=cut)
    assert "found" in counter.asked and any(text.startswith("message 39") for text in counter.asked)
    counter.asked.clear()
    assert mem.get_messages(token_budget=300, tokenizer=counter, cut=cut) == first
    assert counter.asked == []
    mem.add_turn("user", "one more question")
    mem.get_messages(token_budget=300, tokenizer=counter, cut=cut)
    assert counter.asked == ["one more question"]
    counter.clear()  # a new generation: every turn the walk reads is counted again
    counter.asked.clear()
    mem.get_messages(token_budget=300, tokenizer=counter, cut=cut)
    assert {"one more question", "found"} <= set(counter.asked)
    assert any(text.startswith("message 39") for text in counter.asked)


def test_msg_18_the_walk_keeps_a_stored_message_itself_never_a_copy():
    """MSG-18: the request is built reading the stored data in place: the message kept for a tool turn is its data."""
    mem = talk()
    call = {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    mem.add_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "found"},
        ]
    )
    mem.get_messages(token_budget=300)
    split = mem.state.index.split()
    result = split.turns.last()[-1]
    assert split.views[result.seq][0] is result.data


def test_msg_18_two_states_made_from_one_that_give_one_seq_to_different_turns_read_each_its_own():
    """MSG-18: the kept views are shared by states made from one another and kept by seq; a state that gave a seq to
    another turn than a state made from the same one reads its own turn, not the other's view."""
    from sentinel_memory import core

    base = core.add_turn(sm.MemoryState(), "user", "Hi", now=NOW)[0]
    core.messages(base, token_budget=400, now=NOW)
    one = core.add_turn(base, "user", "a question of one state", now=NOW)[0]
    assert [m["content"] for m in core.messages(one, token_budget=400, now=NOW).messages][
        -1
    ] == "a question of one state"
    other = core.add_messages(base, [{"role": "assistant", "content": "an answer of another"}], now=NOW)[0]
    assert [m["content"] for m in core.messages(other, token_budget=400, now=NOW).messages] == [
        "Hi",
        "an answer of another",
    ]


def test_msg_18_a_group_undone_after_a_request_leaves_no_view_for_the_next_turn():
    """MSG-18, MW-10: a request inside a group that raises reads turns the group then undoes; the next turn, which
    takes an undone turn's seq, is read as itself."""
    mem = sm.create_memory(clock=lambda: NOW)
    mem.add_turn("user", "Hi")
    mem.get_messages(token_budget=400, cut="stable")
    with pytest.raises(RuntimeError), mem.group():
        mem.add_turn("user", "a question undone")
        assert mem.get_messages(token_budget=400, cut="stable").messages[-1]["content"] == "a question undone"
        raise RuntimeError("the model call failed")
    mem.add_message({"role": "assistant", "content": "Hello."})
    assert mem.get_messages(token_budget=400).messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
    ]


def test_srv_4_a_run_view_leaves_no_view_for_the_turn_stored_after_it():
    """SRV-4, MSG-18: a run's view, built on a copy of the memory with the run's turns moved last, leaves nothing
    that the memory's next turn, which takes the seq a moved turn had there, is read as."""
    from sentinel_memory.serving import run_view

    for shared in (True, False):
        mem = sm.create_memory(clock=lambda: NOW)
        mem.add_turn("user", "Hi")
        mem.get_messages(token_budget=400, cut="stable")
        mem.add_turn("user", "a question of another run")
        view = run_view(mem, ["chat:1"], token_budget=400, cut="stable", shared=shared)
        assert [m["content"] for m in view.messages] == ["a question of another run", "Hi"]
        mem.add_message({"role": "assistant", "content": "Hello."})
        assert [m["content"] for m in mem.get_messages(token_budget=400).messages] == [
            "Hi",
            "a question of another run",
            "Hello.",
        ]
