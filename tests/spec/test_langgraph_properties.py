"""The LangGraph store against a dict model: random puts, deletes, ttls, bounds and reads (LG-1 .. LG-5)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph")

from sentinel_memory.integrations.langgraph import SentinelStore

NAMESPACES = [("u", "1"), ("u", "2"), ("team",)]
KEYS = ["a", "b", "c", "d"]
T0 = 1_792_310_400_000

step = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(NAMESPACES),
        st.sampled_from(KEYS),
        st.integers(0, 9),
        st.sampled_from([None, 1, 2]),
        st.sampled_from([0.1, 0.5, 0.9]),
    ),
    st.tuples(st.just("delete"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    st.tuples(st.just("wait"), st.sampled_from([1, 59_999, 60_000, 90_000])),
)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(step, max_size=25), limit=st.sampled_from([2, 3, 100]))
def test_lg_1_to_lg_5_the_store_answers_as_a_dict_of_live_items(steps, limit):
    """LG-1, LG-2, LG-3, LG-4, LG-5, LG-6: after any puts, deletes and waits, get, search and list_namespaces give the model's live items; a bound keeps the most important, a ttl ends exactly."""
    folder = Path(tempfile.mkdtemp(prefix="lg-"))
    try:
        clock = Clock()
        store = SentinelStore(folder, limit=limit, clock=clock)
        model: dict[tuple[str, ...], dict[str, tuple[int, float, int | None, int]]] = {ns: {} for ns in NAMESPACES}
        seq = 0
        for action in steps:
            if action[0] == "put":
                _, ns, key, value, ttl, importance = action
                store.put(ns, key, {"v": value, "importance": importance}, ttl=ttl)
                seq += 1
                live = {k: v for k, v in model[ns].items() if v[2] is None or clock.now < v[2]}
                live[key] = (value, importance, None if ttl is None else clock.now + ttl * 60_000, seq)
                while len(live) > limit:  # CMP-1: the least important, then the older, goes
                    worst = min(live, key=lambda k: (live[k][1], live[k][3]))
                    del live[worst]
                model[ns] = live
            elif action[0] == "delete":
                store.delete(action[1], action[2])
                model[action[1]].pop(action[2], None)
            else:
                clock.now += action[1]
        for ns in NAMESPACES:
            live = {k: v for k, v in model[ns].items() if v[2] is None or clock.now < v[2]}
            for key in KEYS:
                item = store.get(ns, key)
                assert (item.value["v"] if item else None) == (live[key][0] if key in live else None), (ns, key)
            assert {i.key for i in store.search(ns, limit=100)} == set(live)
        listed = store.list_namespaces()
        # LG-6: the async forms answer as the sync ones.
        assert asyncio.run(store.alist_namespaces()) == listed
        assert [i.key for i in asyncio.run(store.asearch(("u",), limit=100))] == [
            i.key for i in store.search(("u",), limit=100)
        ]
        assert listed == sorted(
            ns for ns in NAMESPACES if any(v[2] is None or clock.now < v[2] for v in model[ns].values())
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
