"""Errors that name what failed: deep parts, objects whose own methods raise, a system prompt no request can carry."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

import sentinel_memory as sm

T0 = 1_792_310_400_000


class Hostile(RuntimeError):
    """What a caller's object raises from its own methods."""


ARMED = {"on": False}


def _fire(what: str) -> None:
    if ARMED["on"]:
        raise Hostile(what)


class EqStr(str):
    """A str whose own == and != raise once armed."""

    def __eq__(self, other: object) -> bool:
        _fire("__eq__")
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _fire("__ne__")
        return str.__ne__(self, other)

    __hash__ = str.__hash__


class HashStr(str):
    """A str whose own hash raises once armed."""

    def __hash__(self) -> int:
        _fire("__hash__")
        return str.__hash__(self)

    __eq__ = str.__eq__


class ItemsDict(dict):
    """A dict whose own items() raises."""

    def items(self) -> Any:
        raise Hostile("items")


class IterList(list):
    """A list whose own iteration raises."""

    def __iter__(self) -> Iterator[Any]:
        raise Hostile("__iter__")


class ItemsMapping(Mapping):
    """A Mapping that is no dict, whose items() raises."""

    def __init__(self, data: dict) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def items(self) -> Any:
        raise Hostile("items")


class EqObj:
    """Not a str: its ==, != and hash raise once armed."""

    def __eq__(self, other: object) -> bool:
        _fire("__eq__")
        return self is other

    def __ne__(self, other: object) -> bool:
        _fire("__ne__")
        return self is not other

    def __hash__(self) -> int:
        _fire("__hash__")
        return id(self)


def call(function: Any = None, kind: Any = "function") -> dict:
    return {"id": "c1", "type": kind, "function": function or {"name": "weather", "arguments": "{}"}}


def asks(**options: Any) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [call(**options)]}


#: A message holding a hostile object, and what a memory does with it: the documented error naming where it is
#: (a regex over the message), or None when the object reads as the plain str it holds and is stored as that.
ACCEPTED: dict[str, tuple[Callable[[], dict], dict]] = {
    "a role whose == raises": (lambda: {"role": EqStr("user"), "content": "hi"}, {"role": "user", "content": "hi"}),
    "a field name whose == raises": (
        lambda: {EqStr("role"): "user", EqStr("content"): "hi"},
        {"role": "user", "content": "hi"},
    ),
    "a field name whose hash raises": (
        lambda: {HashStr("role"): "user", HashStr("content"): "hi"},
        {"role": "user", "content": "hi"},
    ),
    "content whose == raises": (lambda: {"role": "user", "content": EqStr("hi")}, {"role": "user", "content": "hi"}),
    "a part's type whose == raises": (
        lambda: {"role": "user", "content": [{"type": EqStr("text"), "text": EqStr("hi")}]},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ),
    "a call's type whose != raises": (
        lambda: {"role": "assistant", "content": None, "tool_calls": [call(kind=EqStr("function"))]},
        asks(),
    ),
    "an id and name whose hash raises": (
        lambda: {"role": "assistant", "content": None, "tool_calls": [{**call(), "id": HashStr("c1")}]},
        asks(),
    ),
}
REFUSED: dict[str, tuple[Callable[[], Any], type[Exception], str]] = {
    "a message whose items() raises": (
        lambda: ItemsDict(role="user", content="hi"),
        TypeError,
        r"{m} cannot be read: its items\(\) raised Hostile",
    ),
    "a mapping whose items() raises": (
        lambda: ItemsMapping({"role": "user", "content": "hi"}),
        TypeError,
        r"{m} cannot be read: its items\(\) raised Hostile",
    ),
    "a part whose items() raises": (
        lambda: {"role": "user", "content": [ItemsDict(type="text", text="hi")]},
        TypeError,
        r"{m}\.content\[0\] cannot be read",
    ),
    "content whose iteration raises": (
        lambda: {"role": "user", "content": IterList([{"type": "text", "text": "hi"}])},
        TypeError,
        r"{m}\.content cannot be read: its iteration raised Hostile",
    ),
    "tool_calls whose iteration raises": (
        lambda: {"role": "assistant", "content": None, "tool_calls": IterList([call()])},
        TypeError,
        r"{m}\.tool_calls cannot be read",
    ),
    "a function whose items() raises": (
        lambda: asks(function=ItemsDict(name="weather", arguments="{}")),
        TypeError,
        r"{m}\.tool_calls\[0\]\.function cannot be read",
    ),
    "a call's type that is no str and whose != raises": (
        lambda: asks(kind=EqObj()),
        ValueError,
        r"{m}\.tool_calls\[0\]\.type must be 'function'",
    ),
    "a field name that is no str, whose == and hash raise": (
        lambda: {"role": "user", "content": "hi", EqObj(): 1},
        ValueError,
        r"{m} has a field <test_named_errors\.EqObj object at 0x[0-9a-f]+> that is not one of",
    ),
}


def outcome(store: Callable[[], Any]) -> Any:
    """What ``store`` returned or raised, with the hostile objects armed."""
    ARMED["on"] = True
    try:
        return store()
    finally:
        ARMED["on"] = False


def stored(mem: Any) -> list[Any]:
    return [mem[key] for key in mem.keys()]


@pytest.mark.parametrize("name", ACCEPTED)
@pytest.mark.parametrize("way", ["add_message", "add_messages", "async add_message", "async add_messages"])
def test_wrp_4_a_str_whose_own_methods_raise_reads_as_its_text(name, way):
    """WRP-4, MSG-5: a str subclass whose ==, != or hash raise is stored as the plain str it holds; none of them runs."""
    make, plain = ACCEPTED[name]
    got = run(way, make)
    assert not isinstance(got, BaseException), got
    assert got == [plain]


@pytest.mark.parametrize("name", REFUSED)
@pytest.mark.parametrize("way", ["add_message", "add_messages", "async add_message", "async add_messages"])
def test_wrp_4_a_container_whose_own_methods_raise_is_refused_by_name(name, way):
    """WRP-4, MSG-5: a container whose items() or iteration raise is the documented error naming it; nothing stored."""
    make, kind, pattern = REFUSED[name]
    got = run(way, make)
    assert type(got) is kind, got
    where = r"messages\[0\]" if way.endswith("add_message") else r"messages\[1\]"
    assert re.search(pattern.format(m=where), str(got)), str(got)


def run(way: str, make: Callable[[], Any]) -> Any:
    """Stores one good message, then the hostile one, ``way``; the stored messages after, or what was raised.

    A call that raised must have left the memory and its store as they were."""
    first = {"role": "user", "content": "before"}
    if not way.startswith("async"):
        mem = sm.create_memory(clock=lambda: T0, autosave=True)
        mem.add_message(first)
        before, document = mem.state, mem.store.load()
        message = make()
        try:
            if way == "add_message":
                outcome(lambda: mem.add_message(message))
            else:
                outcome(lambda: mem.add_messages([first, message]))
        except Exception as error:
            assert mem.state is before and mem.store.load() == document
            return error
        return stored(mem)[1:] if way == "add_message" else stored(mem)[2:]

    async def go() -> Any:
        mem = await sm.create_async_memory(store=sm.MemoryStore(), clock=lambda: T0, autosave=True)
        await mem.add_message(first)
        before, document = mem.state, mem.store.load()
        try:
            if way == "async add_message":
                message = make()
                ARMED["on"] = True
                try:
                    await mem.add_message(message)
                finally:
                    ARMED["on"] = False
            else:
                batch = [first, make()]
                ARMED["on"] = True
                try:
                    await mem.add_messages(batch)
                finally:
                    ARMED["on"] = False
        except Exception as error:
            assert mem.state is before and mem.store.load() == document
            return error
        return stored(mem)[1:] if way == "async add_message" else stored(mem)[2:]

    return asyncio.run(go())


def test_wrp_4_a_batch_whose_iteration_raises_is_refused_by_name():
    """WRP-4, MSG-6: add_messages of a list whose iteration raises: TypeError naming messages; nothing stored."""
    mem = sm.create_memory(clock=lambda: T0)
    with pytest.raises(TypeError, match=r"^messages cannot be read: its iteration raised Hostile"):
        mem.add_messages(IterList([{"role": "user", "content": "hi"}]))
    assert len(mem) == 0


@pytest.mark.parametrize("name", REFUSED)
def test_msg_8_the_validator_names_a_message_it_cannot_read(name):
    """MSG-8, WRP-4: request_problems lists an unreadable message by name; validate_request raises ValueError with it."""
    make, _, pattern = REFUSED[name]
    request = [{"role": "user", "content": "hi"}, make()]
    problems = outcome(lambda: sm.request_problems(request))
    assert any(re.search(pattern.format(m=r"messages\[1\]"), p) for p in problems), problems
    with pytest.raises(ValueError, match=r"^not a valid chat request: .*messages\[1\]"):
        outcome(lambda: sm.validate_request(request))


@pytest.mark.parametrize("name", ACCEPTED)
def test_msg_8_the_validator_reads_a_hostile_str_as_its_text(name):
    """MSG-8, WRP-4: request_problems reads a str subclass as the str it holds, as it reads the plain message."""
    make, plain = ACCEPTED[name]
    expected = sm.request_problems([{"role": "user", "content": "hi"}, plain])
    request = [{"role": "user", "content": "hi"}, make()]
    assert outcome(lambda: sm.request_problems(request)) == expected


@pytest.mark.parametrize("validator", [sm.request_problems, sm.validate_request])
def test_msg_8_the_validator_refuses_a_list_it_cannot_read(validator):
    """MSG-8, WRP-4: a request whose iteration raises, or that is no list, is a TypeError naming messages."""
    with pytest.raises(TypeError, match=r"^messages cannot be read: its iteration raised Hostile"):
        validator(IterList([{"role": "user", "content": "hi"}]))
    with pytest.raises(TypeError, match=r"^messages must be a list of messages, got dict"):
        validator({"role": "user", "content": "hi"})


def deep_part(depth: int) -> dict:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return {"type": "text", "text": "hi", "extra": value}


@pytest.mark.parametrize("depth", [97, 98])
def test_ent_13_a_part_nested_too_deep_names_its_message(depth):
    """ENT-13, MSG-5: a stored message nested past MAX_DEPTH names messages[i].content; exactly 100 deep is stored."""
    # The message is a dict (1), its content a list (2), the part a dict (3), then ``depth`` lists: 100 at 97.
    mem = sm.create_memory(clock=lambda: T0, autosave=True)
    batch = [{"role": "user", "content": "ok"}, {"role": "user", "content": [deep_part(depth)]}]
    if depth == 97:
        mem.add_messages(batch)
        mem.add_message(batch[1])
        assert len(mem) == 3
        return
    with pytest.raises(ValueError, match=r"^messages\[1\]\.content is nested more than 100 containers deep"):
        mem.add_messages(batch)
    with pytest.raises(ValueError, match=r"^messages\[0\]\.content is nested more than 100 containers deep"):
        mem.add_message(batch[1])
    assert len(mem) == 0 and mem.store.load() is None


def test_ent_13_data_nested_too_deep_still_names_data():
    """ENT-13: remember's error still names the value the caller passed, data."""
    value: Any = 1
    for _ in range(101):
        value = {"a": value}
    with pytest.raises(ValueError, match=r"^data is nested more than 100 containers deep"):
        sm.create_memory(clock=lambda: T0).remember("k", value)


def test_ent_2_remember_names_data_whose_own_methods_raise():
    """ENT-2, WRP-4: remember of a dict whose items() raises, or a list whose iteration raises, names data."""
    mem = sm.create_memory(clock=lambda: T0)
    with pytest.raises(TypeError, match=r"^data cannot be read: its items\(\) raised Hostile"):
        mem.remember("k", ItemsDict(a=1))
    with pytest.raises(TypeError, match=r"^data\['a'\] cannot be read: its iteration raised Hostile"):
        mem.remember("k", {"a": IterList([1])})
    assert len(mem) == 0


@pytest.mark.parametrize("system", ["rules \ud800", "\udfff"])
def test_msg_2_a_system_prompt_with_a_lone_surrogate_names_system(system):
    """MSG-2, ENT-2: get_messages(system=) holding a lone surrogate is a TypeError naming system; nothing changes."""
    for read in ("get_messages",):
        mem = sm.create_memory(clock=lambda: T0, autosave=True)
        mem.add_turn("user", "hi")
        before = mem.state
        with pytest.raises(TypeError, match=r"^system holds a lone surrogate"):
            getattr(mem, read)(token_budget=100, system=system)
        assert mem.state is before

    async def go() -> None:
        mem = await sm.create_async_memory(store=sm.MemoryStore(), clock=lambda: T0)
        with pytest.raises(TypeError, match=r"^system holds a lone surrogate"):
            mem.get_messages(token_budget=100, system=system)

    asyncio.run(go())
