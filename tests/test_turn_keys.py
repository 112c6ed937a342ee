"""Which keys are chat turns, and how the turn counter carries through forgets and loads (ENT-16)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sentinel_memory as sm
from support import T0

#: Tails after ``chat:`` that are digits to ``str.isdigit`` but not ASCII digits, or not digits only.
NOT_TURNS = ["\u0661\u0662", "\u00b2", "\uff19", "\u0969", "12x", "+3", " 4", "4 ", "", "1_0", "0x1f", "5\n"]


@pytest.mark.parametrize("tail", NOT_TURNS)
def test_ent_16_only_ascii_digits_make_a_chat_key_a_turn(tail):
    """ENT-16: `chat:` followed by Arabic-Indic, superscript or full-width digits, or anything but ASCII digits, is no turn."""
    mem = sm.create_memory(clock=lambda: T0)
    mem.remember("chat:2", "a turn")
    mem.remember("chat:" + tail, "not a turn")
    assert mem.add_turn("user", "hello").key == "chat:3"


def test_ent_16_leading_zeros_are_still_the_number():
    """ENT-16: `chat:007` is turn 7."""
    mem = sm.create_memory(clock=lambda: T0)
    mem.remember("chat:007", "a turn")
    assert mem.add_turn("user", "hello").key == "chat:8"


def test_ent_16_a_load_keeps_the_larger_of_the_counter_and_the_loaded_turns(tmp_path):
    """ENT-16, PER-3: a load never lowers the counter (what this memory stored counts), and raises it to the loaded turns."""
    store = sm.MemoryStore()
    writer = sm.create_memory(store=store, clock=lambda: T0)
    writer.remember("chat:2", "loaded turn")
    writer.save()
    mem = sm.create_memory(store=sm.MemoryStore(), clock=lambda: T0)
    for _ in range(5):
        mem.add_turn("user", "hello")
    mem.forget("chat:5")
    mem.load()  # an empty store: the memory is empty, its counter is not
    assert mem.size() == 0 and mem.add_turn("user", "after the load").key == "chat:6"
    reader = sm.create_memory(store=store, clock=lambda: T0)
    for _ in range(7):
        reader.add_turn("user", "hello")  # chat:3 .. chat:9
    reader.load()  # holds chat:2 only
    assert reader.add_turn("user", "after the load").key == "chat:10"
    fresh = sm.create_memory(store=store, clock=lambda: T0)
    assert fresh.add_turn("user", "first").key == "chat:3"


def turn_of(key: str) -> int:
    found = re.fullmatch(r"chat:([0-9]+)", key)
    return int(found.group(1)) if found else 0


tails = st.one_of(st.integers(0, 40).map(str), st.sampled_from(NOT_TURNS), st.text(max_size=3))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), tails),
        st.tuples(st.just("turn"), st.none()),
        st.tuples(st.just("forget"), tails),
        st.tuples(st.just("load"), st.lists(tails, max_size=3)),
    ),
    max_size=12,
)


class Shelf:
    """A store (PER-2) whose document the test puts there by hand."""

    def __init__(self) -> None:
        self.document = None

    def load(self):
        return self.document

    def save(self, document) -> None:
        self.document = document


def document_of(tails) -> dict:
    entries = [
        {"key": "chat:" + tail, "data": "loaded", "importance": 0.5, "createdAt": T0, "updatedAt": T0} for tail in tails
    ]
    return {"version": 1, "entries": list({e["key"]: e for e in entries}.values())}


@given(operations=operations)
def test_ent_16_the_next_turn_is_one_above_every_turn_stored_or_loaded(operations):
    """ENT-16: add_turn's key is one more than the largest ASCII-digit `chat:N` this memory ever stored or loaded, whatever was forgotten."""
    shelf = Shelf()
    mem = sm.create_memory(clock=lambda: T0, store=shelf)
    largest = 0
    for kind, argument in operations:
        if kind == "remember":
            mem.remember("chat:" + argument, "x")
            largest = max(largest, turn_of("chat:" + argument))
        elif kind == "forget":
            mem.forget("chat:" + argument)
        elif kind == "load":
            shelf.document = document_of([tail for tail in argument if tail])
            largest = max([largest, *(turn_of("chat:" + tail) for tail in argument if tail)])
            mem.load()
        else:
            largest += 1
            assert mem.add_turn("user", "hello").key == f"chat:{largest}"
    assert mem.add_turn("user", "last").key == f"chat:{largest + 1}"
