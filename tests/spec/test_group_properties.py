"""Group commit and durability against a plain model: a dict of what was stored (MW-10, PER-23, PER-24, SRV-5).

Random groups of remembers and forgets, some raising at a random step and
some whose one save fails, on a file store of a random durability: after
each group the memory and a fresh load of its file both equal the model,
and every group that changed something made exactly one save.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sentinel_memory as sm
from sentinel_memory.stores.jsontext import dumps, loads
from support import FailingFileStore as Failing

from .strategies import KEY_POOL, json_data

T0 = 1_792_310_400_000
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.sampled_from(KEY_POOL), json_data),
        st.tuples(st.just("forget"), st.sampled_from(KEY_POOL)),
    ),
    max_size=5,
)
#: A group: its changes, where it raises (None: it does not), and whether its one save fails.
GROUPS = st.lists(st.tuples(OPS, st.one_of(st.none(), st.integers(0, 5)), st.booleans()), min_size=1, max_size=5)


class Raised(Exception):
    """The block's own error."""


def stored(path: Path) -> dict[str, Any]:
    document = sm.JsonFileStore(path).load()
    return {} if document is None else {entry["key"]: entry["data"] for entry in document["entries"]}


@SETTINGS
@given(groups=GROUPS, durability=st.sampled_from(["full", "normal", "none"]))
def test_mw_10_per_23_groups_keep_all_or_nothing_in_one_save(groups, durability):
    """MW-10, PER-23: a group that ends keeps and stores all its changes in one save; one that raises, none."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.json"
        store = Failing(path, durability=durability)
        mem = sm.create_memory(store=store, autosave=True, clock=lambda: T0, limit=100)
        model: dict[str, Any] = {}
        for ops, raise_at, fail_save in groups:
            draft = dict(model)
            saves, changed = store.saves, False
            store.fail_next = fail_save
            try:
                with mem.group():
                    for step, op in enumerate(ops):
                        if raise_at == step:
                            raise Raised
                        if op[0] == "remember":
                            mem.remember(op[1], op[2])
                            draft[op[1]], changed = op[2], True
                        else:
                            mem.forget(op[1])
                            changed = changed or op[1] in draft
                            draft.pop(op[1], None)
                    if raise_at is not None and raise_at >= len(ops):
                        raise Raised
            except (Raised, OSError):
                pass
            else:
                model = draft
                assert store.saves - saves == (1 if changed else 0)
            store.fail_next = False
            assert dict(mem.items()) == model
            assert stored(path) == model
        mem.remember("after", 1)  # the step after every group
        assert stored(path) == {**model, "after": 1}


@SETTINGS
@given(entries=st.lists(st.tuples(st.sampled_from(KEY_POOL), json_data), max_size=6))
def test_per_24_a_document_reads_back_as_saved_one_entry_a_line(entries):
    """PER-24: any memory's document is written one entry a line and loads back equal."""
    mem = sm.create_memory(clock=lambda: T0)
    for key, data in entries:
        mem.remember(key, data)
    mem.save()
    document = mem.store.load()
    text = dumps(document)
    assert loads(text, "m.json") == document
    lines = text.decode("utf-8").split("\n")
    assert len(lines) == 2 + len(document) + (len(document["entries"]) + 1 if document["entries"] else 0)


@SETTINGS
@given(batches=st.lists(st.integers(1, 6), min_size=1, max_size=4), clear=st.booleans())
def test_srv_5_each_session_step_is_one_save(batches, clear):
    """SRV-5: each add_items of any size, each pop and the clear of an Agents SDK session make one save each."""
    pytest.importorskip("agents")
    from sentinel_memory.integrations.openai_agents import SentinelSession

    with tempfile.TemporaryDirectory() as folder:
        store = Failing(Path(folder) / "s.json")
        session = SentinelSession("s", memory=sm.create_memory(store=store, autosave=True, clock=lambda: T0))
        count = 0
        for done, size in enumerate(batches, 1):
            session.add([{"role": "user", "content": f"q{count + n}"} for n in range(size)])
            count += size
            assert store.saves == done
        saves = store.saves
        session.pop()
        assert store.saves == saves + 1
        if clear:
            session.clear()
            assert store.saves == saves + (2 if count > 1 else 1) and stored(store.path) == {}  # nothing left: no save
