"""Acceptance: a tool-using agent keeps its history in a memory for 200 turns at a small budget (MSG-2 .. MSG-9)."""

from __future__ import annotations

import json

import sentinel_memory as sm
from support import MINUTE

SYSTEM = "You are the waiter of a small restaurant. Check the menu tool before you answer about a dish."
BUDGET = 160
DISHES = ["risotto", "curry", "goulash", "pad thai", "schnitzel", "tiramisu", "svickova", "ramen"]


class StubModel:
    """A three-step agent model: a question asks for the menu tool, the tool's result gets an answer."""

    def __init__(self) -> None:
        self.calls = 0

    def create(self, messages: list[dict]) -> dict:
        last = messages[-1]
        if last["role"] == "user":
            self.calls += 1
            dish = next((d for d in DISHES if d in last["content"]), "special")
            call = {
                "id": f"call_{self.calls}",
                "type": "function",
                "function": {"name": "menu", "arguments": json.dumps({"dish": dish})},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        assert last["role"] == "tool", last  # the result of the call just made
        return {"role": "assistant", "content": f"From the menu: {last['content']}."}


def menu(arguments: str) -> str:
    dish = json.loads(arguments)["dish"]
    return f"{dish} is made with {'peanuts' if dish in ('curry', 'pad thai') else 'no nuts'}"


def test_msg_9_a_three_step_agent_loop_for_200_turns_at_a_small_budget(make, clock):
    """MSG-2, MSG-6, MSG-7, MSG-8, MSG-9: every request passes the validator, stays within the budget and holds the must-keep fact."""
    mem = make(limit=60)
    mem.remember("user:allergy", "The guest is allergic to peanuts.", importance=1.0)
    model, sent = StubModel(), 0
    for turn in range(200):
        question = {"role": "user", "content": f"Turn {turn}: is the {DISHES[turn % len(DISHES)]} safe for me?"}
        mem.add_message(question)
        while True:  # ask -> call the tool -> answer
            clock.advance(MINUTE // 4)
            request = mem.get_messages(token_budget=BUDGET, system=SYSTEM, query=question["content"], must_keep=0.9)
            sent += 1
            assert sm.request_problems(request.messages) == [], request.messages
            assert request.tokens <= BUDGET
            assert request.messages[0]["role"] == "system" and request.messages[0]["content"].startswith(SYSTEM)
            assert "allergic to peanuts" in request.messages[0]["content"]
            assert question in request.messages  # the newest question is always in
            assert request.pending == ()
            reply = model.create(request.messages)
            if "tool_calls" not in reply:
                mem.add_message(reply)
                break
            call = reply["tool_calls"][0]
            mem.add_messages(
                [reply, {"role": "tool", "tool_call_id": call["id"], "content": menu(call["function"]["arguments"])}]
            )
    assert sent == 400 and model.calls == 200
    assert len(mem) == 60 and "user:allergy" in mem  # turns were evicted, the fact stayed
    last = mem.get_messages(token_budget=BUDGET, system=SYSTEM, must_keep=0.9)
    assert [m["role"] for m in last.messages[-4:]] == ["user", "assistant", "tool", "assistant"]


def test_msg_7_an_agent_between_a_call_and_its_result_sends_no_half_exchange(make):
    """MSG-7, MSG-8: the call is pending (reported, not sent) until its result is stored."""
    mem = make()
    mem.add_message({"role": "user", "content": "Is the curry safe?"})
    call = {"id": "call_1", "type": "function", "function": {"name": "menu", "arguments": '{"dish": "curry"}'}}
    mem.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
    waiting = mem.get_messages(token_budget=100, system=SYSTEM)
    assert [m["role"] for m in waiting.messages] == ["system", "user"] and [e.key for e in waiting.pending] == [
        "chat:2"
    ]
    mem.add_message({"role": "tool", "tool_call_id": "call_1", "content": menu(call["function"]["arguments"])})
    answered = mem.get_messages(token_budget=100, system=SYSTEM)
    assert [m["role"] for m in answered.messages] == ["system", "user", "assistant", "tool"] and answered.pending == ()
