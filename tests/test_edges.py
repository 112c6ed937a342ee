"""Exact edges and small contracts the random tests rarely land on, each pinned by an example (issue 45).

Every test here was written against a named mistake (a mutant in
tests/mutants.py) and fails when that mistake is made.
"""

from __future__ import annotations

import pytest

import sentinel_memory as sm
from sentinel_memory.cli import main as cli_main
from sentinel_memory.core.shown import shown
from sentinel_memory.core.state import MAX_TURN_DIGITS
from sentinel_memory.core.table import Table
from sentinel_memory.core.turns import is_turn_key, message_of

# -- the counted fill's repair loop (CTX-12) --------------------------------------------------------


def merging_then_growing(text: str) -> int:
    """Words, plus 3 for any text of two or more lines: the separator alone counts 0, so joins cost extra."""
    return len(text.split()) + (3 if "\n" in text.strip() else 0)


def test_ctx_12_the_repair_keeps_a_text_that_counts_exactly_the_budget(make):
    """CTX-12: the repair drops the lowest pick and keeps the first text that counts exactly the budget, not one fewer."""
    mem = make(tokenizer=sm.per_line(merging_then_growing))
    mem.remember("p", "one two", importance=0.9)  # "p: one two": 3 words
    mem.remember("q", "three four", importance=0.6)  # 3 words
    mem.remember("r", "x", importance=0.3)  # 2 words: the walk takes it (3 + 3 + 2 <= 9), the text counts 11
    # The walk fits all three (8 tokens by the lines); joined they count 11, over 9. Without r: 6 + 3 = 9, exactly.
    context = mem.get_context(token_budget=9)
    assert [e.key for e in context.entries] == ["p", "q"] and context.tokens == 9
    assert context.text == "p: one two\nq: three four"


# -- get_messages: the facts' share, the system message's overhead, turn keys (MSG-2, ENT-16) ------------


def words(text: str) -> int:
    return len(text.split())


def test_msg_2_an_odd_budget_gives_the_turns_the_larger_half(make):
    """MSG-2: the facts keep floor(budget * share), so with a budget of 21 the older turns may spend 11, not 10."""
    mem = make(tokenizer=words)
    mem.remember("f1", "a b c d e")  # "f1: a b c d e": 6 words; both facts joined 12, 15 as a message
    mem.remember("f2", "g h i j k")
    mem.add_turn("user", "1 2 3 4")  # 4 words: 7 as a message, an older unit
    mem.add_turn("user", "5")  # 4 as a message, always in (MSG-9)
    prompt = mem.get_messages(token_budget=21)
    # Step 1 has 21 - 10 = 11 for the turns: both fit (4 + 7), leaving 21 - 11 - 3 = 7 for one fact's 6 words.
    # Had the facts kept ceil(10.5) = 11, the older turn would not fit in 10, and both facts would take its room.
    assert [m["role"] for m in prompt.messages] == ["system", "user", "user"]
    assert [m["content"] for m in prompt.messages[1:]] == ["1 2 3 4", "5"]
    assert prompt.tokens == 20


def zs_only(text: str) -> int:
    """Counts the letter z alone: a line without one costs nothing, and so does the empty text."""
    return text.count("z")


def test_msg_3_exactly_message_tokens_left_still_holds_a_free_system_message(make):
    """MSG-2, MSG-3: with exactly MESSAGE_TOKENS left after the turns, facts that count 0 still get their system message."""
    assert sm.core.MESSAGE_TOKENS == 3
    mem = make(tokenizer=zs_only)
    mem.remember("fact", "free")
    mem.add_turn("user", "zz")  # 2 + 3 = 5
    prompt = mem.get_messages(token_budget=8, facts_share=0)
    assert prompt.messages == [{"role": "system", "content": "fact: free"}, {"role": "user", "content": "zz"}]
    assert prompt.tokens == 8


def test_ent_16_a_turn_key_of_exactly_the_digit_limit_is_a_turn(make):
    """ENT-16, MSG-1: chat:N with exactly MAX_TURN_DIGITS digits is a turn; one digit more is a key like any other."""
    longest, too_long = "chat:" + "7" * MAX_TURN_DIGITS, "chat:" + "7" * (MAX_TURN_DIGITS + 1)
    assert is_turn_key(longest) and not is_turn_key(too_long)
    mem = make()
    mem.remember(longest, {"role": "user", "content": "a turn"})
    mem.remember(too_long, {"role": "user", "content": "a fact"})
    prompt = mem.get_messages(token_budget=10_000)
    assert [m["role"] for m in prompt.messages] == ["system", "user"] and prompt.messages[1]["content"] == "a turn"


def test_msg_2_two_turns_of_one_number_after_the_clock_went_back(make, clock):
    """MSG-2, ENT-6: chat:7 written later by the clock but earlier by seq is the newer of the two: kept first, listed last."""
    mem = make()
    clock.advance(60_000)
    mem.remember("chat:7", {"role": "user", "content": "later"})
    clock.advance(-30_000)  # the clock went back: chat:007 has the larger seq but the smaller updated_at
    mem.remember("chat:007", {"role": "user", "content": "earlier"})  # both user's: a history starts at one (MSG-9)
    assert [m["content"] for m in mem.get_messages(token_budget=100).messages] == ["earlier", "later"]
    assert [m["content"] for m in mem.get_messages(token_budget=5).messages] == ["later"]


# -- the line-count cache (CTX-14) ---------------------------------------------------------------------


class Counting:
    """A word-count tokenizer that records every text it was asked to count."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text: str) -> int:
        self.calls.append(text)
        return len(text.split())


def test_ctx_14_a_full_cache_forgets_its_older_half_and_keeps_the_newer():
    """CTX-14: past max_lines the oldest half is forgotten: the newer lines are still counted from memory, the older anew."""
    tokenizer = Counting()
    counter = sm.LineCounter(tokenizer, max_lines=4)
    counter.measure_many(["a", "b", "c", "d"])
    counter.measure("e")  # over the bound: a and b go, c, d and e stay
    assert counter.cached == 3
    tokenizer.calls.clear()
    counter.measure_many(["c", "d", "e"])
    assert tokenizer.calls == []
    counter.measure("a")
    assert tokenizer.calls == ["a"]


def test_ctx_14_the_character_total_is_recounted_after_the_cache_halves():
    """CTX-14: after forgetting half, the characters kept are recounted, so a new line that fits the bound is kept."""
    tokenizer = Counting()
    counter = sm.LineCounter(tokenizer, max_chars=10)
    counter.measure_many(["aaa", "bbb", "ccc"])  # 9 characters
    counter.measure("ddd")  # 12 > 10: aaa goes, 6 are kept, and ddd fits (9)
    assert counter.cached == 3
    tokenizer.calls.clear()
    counter.measure_many(["bbb", "ccc", "ddd"])
    assert tokenizer.calls == []


def test_ctx_14_a_batch_with_repeated_lines_counts_each_line_once():
    """CTX-14: a batch that holds one line three times asks the tokenizer once for it."""
    tokenizer = Counting()
    counter = sm.LineCounter(tokenizer)
    assert counter.measure_many(["x y", "z", "x y", "x y"]) == [2, 1, 2, 2]
    assert sorted(tokenizer.calls) == ["x y", "z"]


# -- turns stored as strings (MSG-1) -------------------------------------------------------------------


def test_msg_1_legacy_tool_turns_and_bare_roles():
    """MSG-1: "tool: ..." is a tool turn; a bare role with no ": " and "user:x" are no turn."""
    assert message_of("tool: 42 rows") == ("tool", "42 rows")
    assert message_of("system: be brief") == ("system", "be brief")
    assert message_of("user") is None and message_of("assistant") is None and message_of("user:x") is None
    assert message_of("user: ") == ("user", "")


# -- LangChain content blocks (LC-2) -------------------------------------------------------------------


def test_lc_2_int_1_a_block_that_is_not_text_is_kept_whole_and_counts_no_text():
    """LC-2, INT-1, TXT-4: an image block carrying a "text" caption is kept as it came and gives the turn no text."""
    from langchain_core.messages import HumanMessage

    import sentinel_memory as sm
    from sentinel_memory.integrations.langchain import SentinelChatMessageHistory, turn_from_message

    image = {"type": "image_url", "image_url": {"url": "x"}, "text": "a caption"}
    message = HumanMessage(content=["Is it ", image, {"type": "text", "text": "vegan?"}])
    parts = [{"type": "text", "text": "Is it "}, image, {"type": "text", "text": "vegan?"}]
    assert turn_from_message(message) == {"role": "user", "content": parts}
    mem = sm.create_memory()
    SentinelChatMessageHistory(mem).add_messages([message])
    assert mem.get_messages(token_budget=100).tokens == sm.estimate_tokens("Is it vegan?") + 3
    assert SentinelChatMessageHistory(mem).messages == [HumanMessage(content=parts)]


# -- error messages that show the argument (WRP-4) -----------------------------------------------------


class Unshowable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def no_iteration(self):
    raise RuntimeError("no iteration")


#: A mapping that cannot be iterated, named as the builtin: reprlib takes it for a dict, and its own guard does not cover that.
Uniterable = type("dict", (dict,), {"__iter__": no_iteration})


def test_wrp_4_huge_integers_are_shown_by_their_size():
    """WRP-4: an int of more than 1,000 bits is shown by its size, one of 1,000 bits by its (shortened) digits."""
    assert shown(10**5000) == f"<an int of {(10**5000).bit_length()} bits>"
    assert shown(2**1000) == "<an int of 1001 bits>"
    assert shown(2**999).startswith("535754303593133660") and "..." in shown(2**999)
    with pytest.raises(ValueError, match="an int of 16610 bits"):
        sm.create_memory().get_context(token_budget=-(10**5000))


def test_wrp_4_an_argument_whose_repr_fails_is_shown_by_its_type():
    """WRP-4: an argument that even reprlib cannot show is named by its type in the error, and the error is the documented one."""
    assert shown(Uniterable({"a": 1})) == "<dict object>"
    assert shown(Unshowable()).startswith("<Unshowable instance at")
    with pytest.raises(ValueError, match="got <dict object>"):
        sm.create_memory().get_context(token_budget=Uniterable({"a": 1}))


# -- the entry table (ENT-14) --------------------------------------------------------------------------


def entry(key: str, seq: int) -> sm.Entry:
    return sm.Entry(key=key, data=seq, importance=0.5, created_at=1, updated_at=1, expires_at=None, seq=seq)


def test_ent_14_a_table_refuses_two_entries_with_one_key():
    """ENT-14: two entries under one key raise ValueError, built at once or added to a table."""
    with pytest.raises(ValueError, match="one entry per key"):
        Table([entry("a", 1), entry("a", 2)])
    with pytest.raises(ValueError, match="one entry per key"):
        sm.MemoryState(entries=[entry("a", 1), entry("a", 2)])
    with pytest.raises(ValueError, match="one entry per key"):
        Table([entry("a", 1)]).changed(added=[entry("a", 2)])
    assert list(Table([entry("a", 1)]).changed(removed=[entry("a", 1)], added=[entry("a", 2)]).values()) == [
        entry("a", 2)
    ]


def test_ent_14_ent_17_a_table_refuses_two_entries_with_one_seq_and_knows_its_last():
    """ENT-14, ENT-17: two entries with one seq raise ValueError; the last seq is -1 for no entries, so a state starts at 0."""
    with pytest.raises(ValueError, match=r"^a table holds one entry per seq$"):
        Table([entry("a", 1), entry("b", 1)])
    assert Table().last_seq() == -1 and Table([entry("b", 9), entry("a", 4)]).last_seq() == 9
    assert sm.MemoryState().next_seq == 0 and sm.MemoryState(entries=[entry("a", 4)]).next_seq == 5
    with pytest.raises(ValueError, match="the largest stored seq is 4"):
        sm.MemoryState(entries=[entry("a", 4)], next_seq=4)


def test_ent_14_a_tables_views_are_in_seq_order():
    """ENT-14: membership, keys, values, items and repr of a table, in seq order, after a change too."""
    table = Table({"b": entry("b", 9), "a": entry("a", 4)})
    assert "a" in table and "c" not in table and len(table) == 2
    assert list(table) == list(table.keys()) == ["a", "b"]
    assert list(table.values()) == [entry("a", 4), entry("b", 9)]
    assert list(table.items()) == [("a", entry("a", 4)), ("b", entry("b", 9))]
    changed = table.changed(removed=[entry("a", 4)], added=[entry("c", 10)])
    assert list(changed.keys()) == ["b", "c"] and "a" not in changed and "a" in table
    assert repr(Table()) == "Table({})"


# -- the command line's exit statuses (CLI-3) ----------------------------------------------------------


def test_cli_3_a_compact_whose_save_conflicts_exits_3(tmp_path, monkeypatch, capsys):
    """CLI-3, MW-3: when another writer saves between compact's load and its save, compact --limit exits 3 and says so."""
    path = tmp_path / "memory.json"
    mem = sm.create_memory(store=sm.JsonFileStore(path), autosave=True)
    for i in range(5):
        mem.remember(f"k{i}", i)
    real_load = sm.JsonFileStore.load
    loads = []

    def load_then_someone_saves(store):
        document = real_load(store)
        loads.append(1)
        if len(loads) == 2:  # the memory's own load (the first is the command's look at the file)
            monkeypatch.setattr(sm.JsonFileStore, "load", real_load)
            sm.create_memory(store=sm.JsonFileStore(path), autosave=True).remember("other", 1)
        return document

    monkeypatch.setattr(sm.JsonFileStore, "load", load_then_someone_saves)
    assert cli_main(["compact", str(path), "--limit", "2"]) == 3
    assert "nothing changed" in capsys.readouterr().err
    assert sorted(sm.create_memory(store=sm.JsonFileStore(path))) == ["k0", "k1", "k2", "k3", "k4", "other"]


@pytest.mark.parametrize("wait", ["inf", "nan", "-1"])
def test_cli_3_a_wait_that_is_not_finite_is_a_usage_error(tmp_path, wait, capsys):
    """CLI-3, MW-8: --wait inf (or nan, or below 0) is a usage error, exit 2; no lock is waited for without end."""
    path = tmp_path / "memory.json"
    sm.create_memory(store=sm.JsonFileStore(path), autosave=True).remember("a", 1)
    with pytest.raises(SystemExit) as exited:
        cli_main(["compact", str(path), "--wait", wait])
    assert exited.value.code == 2 and "finite number of seconds" in capsys.readouterr().err
