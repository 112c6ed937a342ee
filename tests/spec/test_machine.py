"""The property-test spec: the real memory and a simple model, driven side by side.

In the manner of hypothesis's own ``DatabaseComparison`` machine: every rule
does one thing to both, compares what each returned, and the invariants
compare everything else after every step. Keys come from a bundle over a
small pool, so overwrites, re-remembers of expired keys and forgets of
existing keys happen all the time.
"""

from __future__ import annotations

import copy
import math
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

import sentinel_memory as sm
from sentinel_memory import core
from sentinel_memory.core import search as search_module
from sentinel_memory.core.index import Index
from sentinel_memory.core.jsondata import copy_json
from sentinel_memory.core.turns import chat_message, is_turn
from support import check_well_formed

from .model import DAY, Model, ModelEntry, is_num, model_estimate, valid_count, valid_positive
from .strategies import (
    BAD_TOKEN_RESULTS,
    COUNTED,
    FORMATS,
    KEY_POOL,
    SEPARATORS,
    TOKENIZERS,
    VOCABULARY,
    budgets,
    importances,
    json_data,
    limits,
    queries,
    ttls,
    windows,
)

T0 = 1_792_310_400_000


def _call(i: int) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": "menu", "arguments": "{}"}}


#: Chat messages in their stored form (MSG-5): a batch of them is an agent's traffic, or refused whole.
AGENT_MESSAGES = [
    {"role": "user", "content": "what about peanuts?"},
    {"role": "user", "content": "refund the order"},
    {"role": "assistant", "content": "The risotto has no nuts."},
    {"role": "assistant", "content": None, "tool_calls": [_call(1)]},
    {"role": "assistant", "content": "Checking.", "tool_calls": [_call(1), _call(2)]},
    {"role": "tool", "content": "risotto: rice, cheese", "tool_call_id": "c1"},
    {"role": "tool", "content": "curry: peanuts", "tool_call_id": "c2"},
    {"role": "system", "content": "The kitchen closes at ten."},
]
MODEL_TOKENIZERS = {sm.estimate_tokens: model_estimate}


class FakeClock:
    def __init__(self) -> None:
        self.now: int | float = T0
        self.reads = 0

    def __call__(self) -> int | float:
        self.reads += 1
        return self.now


def entry_fields(entry) -> tuple:
    return (entry.key, entry.data, entry.importance, entry.created_at, entry.updated_at, entry.expires_at)


def model_fields(entry) -> tuple:
    return (entry.key, entry.data, entry.importance, entry.created_at, entry.updated_at, entry.expires_at)


class RankingComparison(RuleBasedStateMachine):
    """The real ``Memory`` against :class:`Model`: remember, time, compaction, recall and context.

    The lean machine: few rules, so its runs build larger stores and reach the
    retention and ranking corner cases quickly. :class:`MemoryComparison`
    adds every other operation on top.
    """

    keys = Bundle("keys")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="sentinel-spec-"))
        self.clock = FakeClock()
        self.reported: list[sm.Compaction] = []
        self.reported_by_compact = 0
        self.search: Any = None

    def teardown(self) -> None:
        if self.search is not None:
            self.search.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- setup -----------------------------------------------------------------

    @initialize(
        limit=limits,
        recency_window=windows,
        working_ttl=windows,
        cache_ttl=windows,
        tokenizer=st.sampled_from(TOKENIZERS),
        file_store=st.booleans(),
        autosave=st.booleans(),
        search=st.sampled_from(["holders", "walk"]),
    )
    def setup(self, limit, recency_window, working_ttl, cache_ttl, tokenizer, file_store, autosave, search):
        """NUM-1, NUM-2, NUM-3, OPT-2, CTX-7, PER-2, PER-4: any options work; invalid numbers give the defaults.

        The store is a MemoryStore or a JsonFileStore whose file does not
        exist yet, which loads as an empty memory. Recall and context search
        by the holders of the query words or by the walk, whatever the size.
        """
        self.search = mock.patch.multiple(
            search_module,
            _by_holders=lambda stored, limit: search == "holders",
            _walk_budget=lambda postings, top_band=0: None,
        )
        self.search.start()
        self.store = sm.JsonFileStore(self.folder / "memory.json") if file_store else sm.MemoryStore()
        self.autosave = autosave
        self.tokenizer = tokenizer
        self.mem = sm.create_memory(
            limit=limit,
            store=self.store,
            autosave=autosave,
            clock=self.clock,
            recency_window=recency_window,
            tokenizer=tokenizer,
            on_evict=self.reported.append,
            working_ttl=working_ttl,
            cache_ttl=cache_ttl,
        )
        self.model = Model(
            limit=int(limit) if valid_count(limit) and limit >= 1 else 1000,
            recency_window=recency_window if valid_positive(recency_window) else DAY,
            working_ttl=working_ttl if valid_positive(working_ttl) else 3_600_000,
            cache_ttl=cache_ttl if valid_positive(cache_ttl) else 300_000,
        )
        assert self.mem.size() == 0
        config = self.mem.state.config
        assert (config.limit, config.recency_window, config.working_ttl, config.cache_ttl) == (
            self.model.limit,
            self.model.recency_window,
            self.model.working_ttl,
            self.model.cache_ttl,
        )
        given = {"limit": limit, "recency_window": recency_window, "working_ttl": working_ttl, "cache_ttl": cache_ttl}
        for name, raw in given.items():
            # Never clamped: the option is what was given, or the default.
            assert getattr(config, name) in (raw, sm.DEFAULTS[name])

    @property
    def now(self):
        return self.clock.now

    # -- keys and time -----------------------------------------------------------

    @initialize(target=keys)
    def some_keys(self):
        return multiple(*KEY_POOL)

    @rule(
        kind=st.sampled_from(
            ["zero", "one", "half", "next-expiry", "window-end", "minute", "hour", "day", "week", "back"]
        )
    )
    def advance(self, kind):
        """TIME-2, EXP-2, RET-1, L1-2: time moves by 0, 0.5 or 1 ms, to a deadline, to a window's end, far, or back.

        A clock that goes back a minute makes entries newer than "now" (their
        age counts as 0) and leaves the table out of age order.
        """
        if kind == "next-expiry":
            deadlines = sorted(
                d
                for d in [e.expires_at for e in self.model.entries.values()]
                + [at for _, at in self.model.cache.values()]
                if d is not None and d > self.now
            )
            step = deadlines[0] - self.now if deadlines else 0
        elif kind == "window-end":
            live = self.model.live(self.now)
            step = max(0, live[0].updated_at + self.model.recency_window - self.now) if live else 0
        else:
            step = {
                "zero": 0,
                "one": 1,
                "half": 0.5,
                "minute": 60_000,
                "hour": 3_600_000,
                "day": DAY,
                "week": 7 * DAY,
                "back": -60_000,
            }[kind]
        self.clock.now = self.now + step

    # -- entries -----------------------------------------------------------------

    @rule(key=keys, data=json_data, importance=importances, ttl=ttls)
    def remember(self, key, data, importance, ttl):
        """ENT-4, ENT-5, NUM-4, EXP-1, EXP-4, EXP-6, CMP-3, CMP-4, ENT-12: remember matches the model."""
        self.remember_one(key, data, importance, ttl)

    @rule(
        items=st.lists(st.tuples(st.sampled_from(KEY_POOL), json_data), min_size=2, max_size=6),
        importance=importances,
        ttl=ttls,
        gap=st.sampled_from([0, 1, 60_000]),
    )
    def remember_many(self, items, importance, ttl, gap):
        """CMP-1, CMP-3, ENT-6, REC-3: a burst of equally important remembers, so exact ties happen."""
        for key, data in items:
            self.remember_one(key, data, importance, ttl)
            self.clock.now += gap

    def remember_one(self, key, data, importance, ttl):
        """TIME-1, ENT-3: one remember, checked against the model and its reports."""
        passed = copy.deepcopy(data)
        before = len(self.reported)
        live_before = {
            e.key: e for e in self.mem.state.entries.values() if e.expires_at is None or self.now < e.expires_at
        }
        reads = self.clock.reads
        entry = self.mem.remember(key, passed, importance=importance, ttl=ttl)
        assert self.clock.reads == reads + 1  # TIME-1: one clock read, also when compacting
        expired, evicted = self.model.remember(key, data, importance, ttl, self.now)
        assert self.mem.has(key) == (key not in evicted)
        if key not in evicted:
            assert entry_fields(entry) == model_fields(self.model.entries[key])
        new = self.reported[before:]
        if expired or evicted:
            assert len(new) == 1
            assert [e.key for e in new[0].expired] == expired
            assert [e.key for e in new[0].evicted] == evicted
            self.check_eviction_order(new[0], live_before, entry)
        else:
            assert new == []
        # ENT-3: changing what was passed in, or what came back, changes nothing stored.
        mutate(passed)
        mutate(entry.data)

    def check_eviction_order(self, compaction, live_before, entry):
        """CMP-1, RET-2, RET-3: each evicted entry had the lowest retention (ties: older) among the live entries."""
        window, now = self.model.recency_window, self.now
        candidates = dict(live_before)  # live before the call, so no expired entry is among them
        candidates[entry.key] = entry

        def rank(e):
            age = max(0, now - e.updated_at)
            return (e.importance + 0.1 * max(0, 1 - age / window), e.updated_at, e.seq)

        for victim in compaction.evicted:
            current = candidates[victim.key]
            assert all(rank(current) <= rank(other) for other in candidates.values())
            assert current.importance <= min(o.importance for o in candidates.values()) + 0.1
            del candidates[victim.key]

    @rule()
    def compact(self):
        """CMP-1, CMP-2, CMP-5: an explicit compaction drops what the model drops, in the same order."""
        compaction = self.mem.compact()
        expired, evicted = self.model.compact(self.now)
        assert [e.key for e in compaction.expired] == expired
        assert [e.key for e in compaction.evicted] == evicted
        self.reported_by_compact += len(expired) + len(evicted)

    @rule(
        count=st.integers(2, 4),
        back=st.sampled_from([0.5, 1, 60_000, DAY]),
        ttl=st.sampled_from([1, 1000, 60_000]),
        importance=importances,
    )
    def rewind_then_compact_and_save(self, count, back, ttl, importance):
        """CMP-2, PER-12, TIME-2: remember while the clock steps back, save, then compact and save once all expired.

        Each entry is older than the one remembered before it, so the table's
        order (by seq) and age order disagree: the saved document and the
        expired list must both follow age, oldest first.
        """
        start = self.now
        for i in range(count):
            self.remember_one(KEY_POOL[i], f"rewound {i}", importance, ttl)
            self.clock.now -= back
        self.check_saved_order()
        self.clock.now = start + ttl  # every deadline of this burst has passed
        self.compact()
        self.check_saved_order()

    def check_saved_order(self):
        """PER-12: a saved document lists the entries oldest first by (updated_at, seq), whatever the table order."""
        self.mem.save()
        document = self.store.load()
        model_order = [e.key for e in sorted(self.model.entries.values(), key=lambda e: (e.updated_at, e.seq))]
        assert [e["key"] for e in document["entries"]] == model_order

    @rule(
        word=st.sampled_from(VOCABULARY),
        count=st.integers(11, 16),
        importance=importances,
        spread=st.booleans(),
        budget=st.integers(0, 120),
    )
    def remember_crowd(self, word, count, importance, spread, budget):
        """CTX-1, REC-3: more entries share one query word than recall's default limit; context ranks them all first."""
        for i in range(count):
            self.remember_one(f"crowd:{i}", f"{word} note {i}", (i % 10) / 10 if spread else importance, None)
        self.recall(word, None)
        self.context(budget, word, sm.estimate_tokens, sm.default_format, "\n", None)

    @rule(
        count=st.integers(3, 8),
        importances=st.lists(st.floats(0, 1), min_size=9, max_size=9),
        ttl=st.sampled_from([1, 1000, 60_000]),
        budget=st.integers(0, 120),
    )
    def mass_expiry(self, count, importances, ttl, budget):
        """EXP-2, EXP-4, CMP-1, CMP-2: many entries of continuous importance expire at once; the next remember compacts them all."""
        for i in range(count):
            self.remember_one(f"expiring:{i}", f"cart note {i}", importances[i], ttl)
        self.clock.now += ttl
        self.remember_one("after", "the morning after", importances[-1], None)
        self.context(budget, None, sm.estimate_tokens, sm.default_format, "\n", None)

    @rule(n=st.one_of(st.integers(-2, 12), st.sampled_from([3.0, 2.5, "3", None, True, math.nan])))
    def get_recent(self, n):
        """ENT-10, NUM-2: newest first, n by the number rule."""
        recent = self.mem.get_recent(n)
        assert [e.key for e in recent] == self.model.recent(n, self.now)
        for e in recent:
            mutate(e.data)

    # -- expiry at the exact millisecond -------------------------------------

    @precondition(
        lambda self: any(e.expires_at is not None and e.expires_at - 1 >= self.now for e in self.model.live(self.now))
    )
    @rule(data=st.data())
    def expiry_edge(self, data):
        """EXP-2, EXP-3: an entry is visible on every read path at expires_at - 1 and on none at expires_at."""
        candidates = sorted(
            (e for e in self.model.live(self.now) if e.expires_at is not None and e.expires_at - 1 >= self.now),
            key=lambda e: e.key,
        )
        target = data.draw(st.sampled_from(candidates))
        self.clock.now = target.expires_at - 1
        assert self.visible_everywhere(target.key) == {True}
        self.clock.now = target.expires_at
        assert self.visible_everywhere(target.key) == {False}

    def visible_everywhere(self, key) -> set[bool]:
        live_keys = {e.key for e in self.model.live(self.now)}
        word = next(iter(sorted(self.model.entries[key].words())))
        ctx = self.mem.get_context(token_budget=10**9, tokenizer=sm.estimate_tokens)
        return {
            self.mem.get(key, default=KeyError) is not KeyError,
            self.mem.has(key),
            key in self.mem,
            self.mem.size() == len(live_keys) and (key in live_keys),
            key in [e.key for e in self.mem.get_recent(10**6)],
            key in [h.entry.key for h in self.mem.recall(word, limit=10**6)],
            key in [e.key for e in ctx.entries],
        }

    # -- recall and context ---------------------------------------------------

    @rule(query=queries, limit=st.one_of(st.none(), st.integers(-1, 6), st.sampled_from([2.0, 1.5, "2"])))
    def recall(self, query, limit):
        """REC-1, REC-2, REC-3: the same hits, in the same order, with bit-identical scores."""
        hits = self.mem.recall(query, limit=limit)
        assert [(h.entry.key, h.score) for h in hits] == self.model.recall(query, limit, self.now)

    @rule(
        budget=budgets,
        query=st.one_of(st.none(), queries),
        tokenizer=st.sampled_from(TOKENIZERS + COUNTED),
        fmt=st.sampled_from(FORMATS),
        separator=st.sampled_from(SEPARATORS),
        must_keep=st.sampled_from([None, None, None, 0.0, 0.5, 0.9, 1.0]),
    )
    def context(self, budget, query, tokenizer, fmt, separator, must_keep):
        """CTX-1 .. CTX-6, CTX-8, CTX-10, CTX-12 .. CTX-14, NUM-1: the budget holds, the count is exact, the fill is the model's.

        CTX-2, CTX-3, CTX-4, CTX-5 and CTX-6 are each asserted below; the
        estimator and the additive tokenizers go through the fast fill, with
        and without must-keep entries placed first. The tokenizers counted
        line by line keep their line counts from one step (and one run) to
        the next, while the model counts afresh: a stale count would show
        as a different selection (CTX-14).
        """
        options = dict(
            token_budget=budget, query=query, tokenizer=tokenizer, format=fmt, separator=separator, must_keep=must_keep
        )
        if not is_num(budget) or budget < 0:
            with pytest.raises(ValueError):
                self.mem.get_context(**options)
            return
        if tokenizer("") > budget:
            with pytest.raises(ValueError):
                self.mem.get_context(**options)
            return
        ctx = self.mem.get_context(**options)
        # The model counts with its own copy of each tokenizer, so a bug in
        # the library's estimator cannot hide by being shared.
        model_tokenizer = MODEL_TOKENIZERS.get(tokenizer, tokenizer)
        counted = getattr(tokenizer, "fill", None) == "counted"
        model_fill = self.model.context_counted if counted else self.model.context
        text, keys = model_fill(
            budget, query, model_tokenizer, lambda e: fmt(as_entry(e)), separator, self.now, must_keep
        )
        note(f"context {ctx!r}")
        assert ctx.tokens <= budget
        assert ctx.tokens == tokenizer(ctx.text) == model_tokenizer(ctx.text)
        assert len(ctx.entries) + ctx.omitted == self.mem.size()
        orders = [e.order for e in ctx.entries]
        assert orders == sorted(orders)
        assert ctx.text == separator.join(fmt(e) for e in ctx.entries)
        assert ([e.key for e in ctx.entries], ctx.text) == (keys, text)
        if counted:
            return  # the counted fill is greedy on the line counts, not on the joined text's
        # Greedy maximality: no omitted entry would still fit next to the selection.
        chosen = {e.key for e in ctx.entries}
        for left_out in self.model.live(self.now):
            if left_out.key in chosen:
                continue
            trial = sorted([*ctx.entries, as_entry(left_out)], key=lambda e: e.order)
            assert tokenizer(separator.join(fmt(e) for e in trial)) > budget

    @invariant()
    def entries_match_model(self):
        """ENT-3, ENT-6: what is stored equals the model, field for field, in the same age order."""
        if not hasattr(self, "mem"):
            return
        state = self.mem.state
        assert sorted(entry_fields(e) for e in state.entries.values()) == sorted(
            model_fields(e) for e in self.model.entries.values()
        )
        real_order = [e.key for e in sorted(state.entries.values(), key=lambda e: e.order)]
        model_order = [e.key for e in sorted(self.model.entries.values(), key=lambda e: (e.updated_at, e.seq))]
        assert real_order == model_order

    @invariant()
    def stats_match_model(self):
        """CMP-5, CMP-6, ENT-11, L0-2: stats equal the model's, size <= limit and stored >= size."""
        if not hasattr(self, "mem"):
            return
        stats = self.mem.stats()
        assert stats == self.model.stats(self.now)
        assert stats["size"] <= stats["limit"]
        assert stats["stored"] >= stats["size"]

    @invariant()
    def every_drop_reported_once(self):
        """CMP-5, CMP-3: every expired or evicted count was reported once, to on_evict or by compact()."""
        if not hasattr(self, "mem"):
            return
        reported = sum(len(c.expired) + len(c.evicted) for c in self.reported) + self.reported_by_compact
        stats = self.mem.stats()
        assert reported == stats["expired"] + stats["evicted"]
        assert all(self.reported)  # no empty callback

    @invariant()
    def reads_match_model(self):
        """EXP-3, ENT-7, L0-1, L1-2: get, has, cache.get and working.get agree with the model now."""
        if not hasattr(self, "mem"):
            return
        for key in KEY_POOL:
            assert self.mem.get(key) == self.model.get(key, self.now)
            assert self.mem.has(key) == self.model.has(key, self.now)
            assert self.mem.cache.get(key) == self.model.cache_get(key, self.now)
        assert self.mem.working.get() == self.model.working_get(self.now)

    @invariant()
    def mapping_matches_model(self):
        """ENT-15: the memory as a Mapping is the model's live keys and data, oldest first; mem[k] agrees with get."""
        if not hasattr(self, "mem"):
            return
        live = sorted(self.model.live(self.now), key=lambda e: (e.updated_at, e.seq))
        assert list(self.mem.items()) == [(e.key, e.data) for e in live]
        assert list(self.mem) == [e.key for e in live] and len(self.mem) == len(live)
        for key in KEY_POOL:
            entry = self.mem.get_entry(key)
            assert (entry is None) == (not self.model.has(key, self.now))
            if entry is not None:
                assert self.mem[key] == entry.data == entry.to_dict()["data"]
                assert entry.to_dict()["key"] == key

    @rule()
    def close(self):
        """PER-21, WRP-5: a close that does not warn leaves the store holding exactly the memory; one that warns names a count of unsaved changes, and the memory goes on after it."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.mem.close()
        warned = [w for w in caught if issubclass(w.category, sm.UnsavedChangesWarning)]
        saved = self.store.load()
        if warned:
            assert not self.autosave and len(warned) == 1
            assert "not saved" in str(warned[0].message) and "save()" in str(warned[0].message)
        elif saved is not None:
            assert saved == core.to_document(self.mem.state, generation=self.mem.generation)
        else:  # never saved: nothing was changed that a save would keep
            assert core.to_document(self.mem.state)["entries"] == [] and not self.mem.state.working.data

    @invariant()
    def autosave_matches_state(self):
        """PER-11, PER-9: with autosave the store holds the current persisted state; no temp file is left."""
        if not hasattr(self, "mem"):
            return
        # The save lock's sidecar file stays for good; nothing else may (PER-15).
        assert sorted(p.name for p in self.folder.iterdir() if p.name != ".memory.json.lock") in ([], ["memory.json"])
        if not self.autosave:
            return
        saved = self.store.load()
        if saved is not None:
            # MW-1: the store holds the generation this memory last saved.
            assert saved == core.to_document(self.mem.state, generation=self.mem.generation)

    @invariant()
    def index_matches_the_table(self):
        """CMP-1, CTX-8, REC-3, ENT-3, ENT-14: the index holds exactly the table's entries in its orders, its bounds are safe, its lines by measure are exact, the table is in seq order."""
        if not hasattr(self, "mem"):
            return
        state = self.mem.state
        index, truth = state.index, Index.of(state.entries.values())
        for order in ("by_importance", "by_age", "by_expiry"):
            assert list(getattr(index, order)) == list(getattr(truth, order)), order
        assert index.containers == truth.containers
        assert set(index.held_words()) >= set(truth.held_words())
        for word in ("refund", "cart", "status"):  # worked out once, then kept current by every change after
            assert dict(index.holders(word)) == {e.seq: e for e in state.entries.values() if word in e.words}, word
        assert truth.in_order or not index.in_order
        if state.entries:
            shortest = min(e.line_units for e in state.entries.values())
            assert index.least_units() <= shortest and truth.least_units() <= shortest
        live = truth.live_by_age(self.now)
        for units in (8, 24):  # worked out once, then kept current by every change after
            fitting = sorted(e.seq for e in live if e.line_units <= units)
            assert sorted(e.seq for e in index.lines_within(units, self.now)) == fitting, units
        assert list(state.entries) == [e.key for e in sorted(state.entries.values(), key=lambda e: e.seq)]

    @invariant()
    def state_is_well_formed(self):
        """ENT-17, ENT-14: unique seqs, next_seq above all of them, turns at least the largest stored, the index the table's."""
        if hasattr(self, "mem"):
            check_well_formed(self.mem.state)

    @invariant()
    def core_is_pure(self):
        """WRP-2: core calls on the current state repeat exactly and leave the state unchanged."""
        if not hasattr(self, "mem"):
            return
        state = self.mem.state
        before = (copy.deepcopy(core.to_document(state)), dict(state.cache), state.counters, state.next_seq)
        for call in (
            lambda: core.remember(state, "a", {"x": [1]}, now=self.now, importance=0.3),
            lambda: core.compact(state, now=self.now),
            lambda: core.context(state, now=self.now, token_budget=40, query="refund"),
            lambda: core.recall(state, "refund cart", now=self.now),
        ):
            assert call() == call()
        after = (core.to_document(state), dict(state.cache), state.counters, state.next_seq)
        assert after == before


class MemoryComparison(RankingComparison):
    """Everything else too: forget, clear, copies, the L0 cache, L1 working memory, persistence."""

    keys = RankingComparison.keys

    @rule(
        key=st.one_of(st.sampled_from(KEY_POOL), st.sampled_from(["", None, 7, b"k"])),
        data=st.one_of(json_data, st.sampled_from([math.nan, math.inf, {1: "x"}, {"s": {1}}, object()])),
        query=st.sampled_from([None, 3, b"refund"]),
    )
    def illegal_input(self, key, data, query):
        """ENT-1, ENT-2, REC-4, WRP-1: illegal input raises, and then nothing has happened."""
        before = self.mem.state
        legal_key = isinstance(key, str) and key != ""
        try:
            copy_json(data)
            legal_data = True
        except TypeError:
            legal_data = False
        if not (legal_key and legal_data):
            with pytest.raises(ValueError if isinstance(key, str) and not key else TypeError):
                self.mem.remember(key, data)
            assert self.mem.state is before
        with pytest.raises(TypeError):
            self.mem.recall(query)
        assert self.mem.state is before

    @rule(
        batch=st.lists(st.sampled_from(AGENT_MESSAGES), min_size=1, max_size=5),
        importance=importances,
        ttl=ttls,
    )
    def add_messages(self, batch, importance, ttl):
        """MSG-5, MSG-6, ENT-16, CMP-3: a batch of chat messages is stored whole as the next turns, or refused whole."""
        before, reads = len(self.reported), self.clock.reads
        try:
            entries = self.mem.add_messages(copy.deepcopy(batch), importance=importance, ttl=ttl)
        except ValueError as error:
            assert "answers no open call" in str(
                error
            )  # the only bad input in this pool: the invariants see nothing stored
            assert len(self.reported) == before
            return
        assert self.clock.reads == reads + 1  # one change, one clock read
        numbers = [int(entry.key[5:]) for entry in entries]
        assert numbers == list(range(numbers[0], numbers[0] + len(batch)))
        weight = importance if is_num(importance) and 0 <= importance <= 1 else 0.3
        expired, evicted = [], []
        for entry, message in zip(entries, batch, strict=True):
            gone, dropped = self.model.remember(entry.key, message, weight, ttl, self.now)
            expired += gone
            evicted += dropped
        new = self.reported[before:]
        if expired or evicted:
            assert len(new) == 1 and [e.key for e in new[0].evicted] == evicted
            assert [e.key for e in new[0].expired] == expired
        else:
            assert new == []

    @rule(
        budget=st.integers(0, 150),
        query=st.one_of(st.none(), queries),
        must_keep=st.sampled_from([None, 0.5, 0.9]),
        system=st.sampled_from([None, "Be brief.", "You are the waiter of a small restaurant."]),
        share=st.sampled_from([None, 0.0, 0.5, 1.0]),
    )
    def get_messages(self, budget, query, must_keep, system, share):
        """MSG-2, MSG-4, MSG-7, MSG-8, MSG-9: every request is valid and within the budget, with the must-keep facts and the newest question, or TokenBudgetError."""
        options = dict(token_budget=budget, query=query, must_keep=must_keep, system=system, facts_share=share)
        try:
            result = self.mem.get_messages(**options)
        except sm.TokenBudgetError as error:
            assert error.needed > budget == error.budget
            return
        note(f"messages {result!r}")
        # MSG-8, MSG-10: a valid request, or [] (flagged) when there is nothing to send
        assert sm.request_problems(result.messages) == ([] if result.messages else [sm.core.chat.EMPTY_REQUEST])
        assert result.messages or (system is None and result.entries == ())
        assert result.tokens <= budget
        assert len(result.entries) + result.omitted == self.mem.size()
        if system is not None:
            assert result.messages[0]["role"] == "system" and result.messages[0]["content"].startswith(system)
        taken = {e.key for e in result.entries}
        live = self.model.live(self.now)
        turns = {e.key: chat_message(e.data) for e in live if is_turn(e.key, e.data)}
        if must_keep is not None:
            assert all(e.key in taken for e in live if e.key not in turns and e.importance >= must_keep)
        users = [key for key, message in turns.items() if message["role"] == "user"]
        if users:
            assert max(users, key=lambda key: (int(key[5:]), self.model.entries[key].updated_at)) in taken
        result.messages.append({"role": "user", "content": "appended"})  # a new list: nothing stored changes
        assert self.mem.get_messages(**options).messages == result.messages[:-1]

    @rule(key=keys)
    def forget(self, key):
        """ENT-8, EXP-5: forget removes only a live entry and says so."""
        assert self.mem.forget(key) == self.model.forget(key, self.now)

    @rule()
    def clear(self):
        """ENT-9: clear empties the entries and nothing else."""
        self.mem.clear()
        self.model.clear()

    @rule(key=keys)
    def mutate_what_get_returns(self, key):
        """ENT-3, ENT-15: mutating data that get, mem[key], get_entry, items() or values() returned never changes the memory."""
        got = self.mem.get(key)
        assert got == self.model.get(key, self.now)
        mutate(got)
        if key in self.mem:
            mutate(self.mem[key])
            mutate(self.mem.get_entry(key).data)
        mutate([data for _, data in self.mem.items()])
        mutate(list(self.mem.values()))

    @rule(result=st.sampled_from(BAD_TOKEN_RESULTS), budget=st.integers(0, 50))
    def bad_tokenizer(self, result, budget):
        """CTX-5: a tokenizer result that is not a finite number >= 0 raises TypeError."""
        with pytest.raises(TypeError):
            self.mem.get_context(token_budget=budget, tokenizer=lambda text: result)

    # -- L0 and L1 -------------------------------------------------------------

    @rule(key=keys, value=json_data, ttl=ttls)
    def cache_put(self, key, value, ttl):
        """L0-1, L0-3, L0-4: put stores a copy until now + ttl (or cache_ttl)."""
        self.mem.cache.put(key, value, ttl=ttl)
        self.model.cache_put(key, value, ttl, self.now)
        mutate(value)

    @rule(key=keys)
    def cache_get(self, key):
        """L0-1, L0-3: get sees the model's live value, as a copy."""
        got = self.mem.cache.get(key)
        assert got == self.model.cache_get(key, self.now)
        mutate(got)

    @rule(key=keys)
    def cache_delete(self, key):
        """L0-2: delete reports whether a live item went."""
        assert self.mem.cache.delete(key) == self.model.cache_delete(key, self.now)

    @rule()
    def cache_clear(self):
        """L0-2: clear empties the cache."""
        self.mem.cache.clear()
        self.model.cache = {}

    @rule(patch=st.dictionaries(st.sampled_from(["task", "step", "tool"]), json_data, max_size=3))
    def working_set(self, patch):
        """L1-1, L1-2: set shallow-merges, into {} once idle."""
        self.mem.working.set(patch)
        self.model.working_set(patch, self.now)
        mutate(patch)

    @rule()
    def mutate_what_working_get_returns(self):
        """ENT-3, L1-1: changing anything nested in what working.get() returned never changes the working memory."""
        got = self.mem.working.get()
        assert got == self.model.working_get(self.now)
        mutate(got)

    @rule()
    def working_clear(self):
        """L1-3: clear empties the working memory."""
        self.mem.working.clear()
        self.model.working_clear()

    # -- persistence -------------------------------------------------------------

    @rule()
    def save_and_reload_fresh(self):
        """PER-1, PER-3, PER-12, L1-4, L0-2: save, then load into a fresh memory: same entries, order, working; no cache."""
        self.mem.save()
        document = self.store.load()
        assert list(document) == ["version", "generation", "entries", "working"] and document["version"] == 1
        assert document["generation"] == self.mem.generation
        model_order = [e.key for e in sorted(self.model.entries.values(), key=lambda e: (e.updated_at, e.seq))]
        assert [e["key"] for e in document["entries"]] == model_order
        assert all(
            list(e) == ["key", "data", "importance", "createdAt", "updatedAt", "expiresAt"] for e in document["entries"]
        )
        fresh = sm.create_memory(
            store=self.store,
            clock=self.clock,
            limit=self.model.limit,
            recency_window=self.model.recency_window,
            working_ttl=self.model.working_ttl,
            cache_ttl=self.model.cache_ttl,
        )
        assert core.to_document(fresh.state) == core.to_document(self.mem.state)
        assert [entry_fields(e) for e in fresh.get_recent(10**6)] == [
            entry_fields(e) for e in self.mem.get_recent(10**6)
        ]
        assert fresh.working.get() == self.mem.working.get()
        assert fresh.stats()["cache"] == 0

    @rule()
    def save_and_load_in_place(self):
        """PER-3, PER-8: load replaces entries and working memory, keeps cache and counters."""
        self.mem.save()
        result = self.mem.load()
        assert result == sm.LoadResult(loaded=len(self.model.entries), dropped=0)
        ordered = sorted(self.model.entries.values(), key=lambda e: (e.updated_at, e.seq))
        for e in ordered:
            e.seq = self.model.seq
            self.model.seq += 1

    @rule(
        damage=st.lists(
            st.tuples(st.sampled_from(["invalid", "earlier-duplicate", "later-duplicate", "new"]), st.integers(0, 99)),
            min_size=1,
            max_size=4,
        )
    )
    def load_damaged_document(self, damage):
        """PER-6, PER-8, PER-14, PER-19, ENT-17: a document with invalid, repeated and extra entries loads as PER-6 says, and the writes after it go on.

        The store is rewritten behind the memory's back with entries that a
        load drops (invalid ones, the earlier of two with one key) at any
        position and entries it may have to compact away; the model loads
        the same list by PER-6 restated, numbering what it keeps in file
        order. Then the memory writes and saves, as a bot's next turn would.
        """
        self.mem.save()
        document = self.store.load()
        raws, invalid = list(document["entries"]), []
        for number, (kind, at) in enumerate(damage):
            if kind == "invalid":
                bad = {"key": f"bad:{number}", "data": 1, "importance": 2, "createdAt": self.now, "updatedAt": self.now}
                invalid.append(bad)
                raws.insert(at % (len(raws) + 1), bad)
            elif kind == "new":
                raws.insert(at % (len(raws) + 1), model_record(f"loaded:{number}", f"refund note {number}", self.now))
            elif raws:
                where = at % len(raws)
                original = raws[where]
                if any(original is bad for bad in invalid):
                    continue
                twin = dict(original, data=f"{kind} of {original['key']}")
                raws.insert(where if kind == "earlier-duplicate" else where + 1 + at % (len(raws) - where), twin)
        document["entries"] = raws
        document["generation"] += 1
        self.store.save(document)

        before = len(self.reported)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = self.mem.load()
        kept: dict[str, dict] = {}
        for raw in raws:
            if any(raw is bad for bad in invalid):
                continue
            kept.pop(raw["key"], None)  # PER-6: of two with one key, the later is kept, at its own place
            kept[raw["key"]] = raw
        self.model.entries = {}
        for raw in kept.values():
            self.model.entries[raw["key"]] = ModelEntry(
                raw["key"],
                copy.deepcopy(raw["data"]),
                raw["importance"],
                raw["createdAt"],
                raw["updatedAt"],
                raw.get("expiresAt"),
                self.model.seq,
            )
            self.model.seq += 1
        compacted = 0
        if len(kept) > self.model.limit:  # PER-8
            expired, evicted = self.model.compact(self.now)
            compacted = len(expired) + len(evicted)
            if compacted:  # passed to on_evict like any automatic compaction
                (reported,) = self.reported[before:]
                assert ([e.key for e in reported.expired], [e.key for e in reported.evicted]) == (expired, evicted)
        assert result == sm.LoadResult(loaded=len(kept), dropped=len(raws) - len(kept), compacted=compacted)
        assert bool([w for w in caught if issubclass(w.category, sm.LoadWarning)]) == bool(result.lost)
        check_well_formed(self.mem.state)
        # The step after: a write, and a save that preserves the lossy original first (PER-14).
        self.remember_one(KEY_POOL[0], "written after the load", 0.5, None)
        turn = self.mem.add_turn("user", "and a turn").key
        assert turn not in kept  # ENT-16: the next turn after every loaded one
        self.model.remember(turn, {"role": "user", "content": "and a turn"}, 0.3, None, self.now)  # ENT-16: 0.3
        self.mem.save()
        preserved = sorted(self.folder.glob("memory.json.*.orig"))
        if isinstance(self.store, sm.JsonFileStore):
            assert len(preserved) == (1 if result.lost else 0)
            for path in preserved:
                path.unlink()
        check_well_formed(self.mem.state)

    # -- invariants ----------------------------------------------------------------


def mutate(value) -> None:
    """Change a JSON value in place, at every depth, where that is possible (ENT-3 checks rely on it).

    Nested containers are changed too: a copy that is only shallow would
    share them with the memory, and only a change down there shows it.
    """
    containers, seen, pending = [], set(), [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            containers.append(item)
            pending.extend(item.values() if isinstance(item, dict) else item)
    for item in containers:
        if isinstance(item, dict):
            item["__mutated__"] = True
        else:
            item.append("__mutated__")


def model_record(key: str, data: Any, now: int | float) -> dict[str, Any]:
    """A valid saved entry (PER-1), as a load finds it."""
    return {"key": key, "data": data, "importance": 0.3, "createdAt": now, "updatedAt": now, "expiresAt": None}


def as_entry(model_entry) -> sm.Entry:
    return sm.Entry(
        key=model_entry.key,
        data=copy.deepcopy(model_entry.data),
        importance=model_entry.importance,
        created_at=model_entry.created_at,
        updated_at=model_entry.updated_at,
        expires_at=model_entry.expires_at,
        seq=model_entry.seq,
    )


TestRankingComparison = RankingComparison.TestCase
TestMemoryComparison = MemoryComparison.TestCase
