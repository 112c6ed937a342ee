"""What the mutation tool found the get_messages path's tests let through: core/request.py (MSG-2, MSG-9, MSG-11, MSG-12)."""

from __future__ import annotations

import pytest

import sentinel_memory as sm


def asking() -> sm.Memory:
    """A memory on a fixed clock holding one user question."""
    mem = sm.create_memory(clock=lambda: 1000)
    mem.add_turn("user", "What is in the risotto tonight?")
    return mem


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        ({"system": 5}, TypeError, "system must be a str, got int"),
        ({"system": "\ud800"}, TypeError, "system holds a lone surrogate, which no chat request can carry"),
        (
            {"token_budget": 3},
            sm.TokenBudgetError,
            "the turns from the newest user message on need 11 tokens, 8 more than the budget of 3",
        ),
        (
            {"token_budget": 3, "system": "Be brief."},
            sm.TokenBudgetError,
            "the system prompt and the turns from the newest user message on need 17 tokens, 14 more than the budget of 3",
        ),
        ({"cut": "old"}, ValueError, "cut must be one of ('newest', 'stable'), got 'old'"),
        ({"facts_at": "middle"}, ValueError, "facts_at must be one of ('system', 'end', 'start'), got 'middle'"),
    ],
)
def test_msg_2_each_refused_request_says_exactly_what_failed(options, error, says):
    """MSG-2, MSG-9, MSG-11, MSG-12: a bad system prompt, a budget the question does not fit and an unknown cut or place name what failed, exactly."""
    mem = asking()
    with pytest.raises(error) as raised:
        mem.get_messages(**{"token_budget": 100, **options})
    assert str(raised.value) == says
    assert len(mem.get_messages(token_budget=100).messages) == 1  # the step after: the next request is served
