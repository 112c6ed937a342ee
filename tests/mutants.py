"""Mutation check: deliberate one-line bugs that the tests must catch.

Run it with ``make mutants`` (or ``python tests/mutants.py [PART ...]`` for
the mutants whose names contain one of the parts, or whose file starts
with one: ``python tests/mutants.py shell.py stores/``). It ends with
killed / total for each module. For each mutant
it copies ``src/`` to a temporary folder, applies the one-line change, runs
the mutant's test files against that copy with a fixed seed, and reports
which rule, invariant, property or test caught the bug. It exits non-zero if
any mutant survives.

A mutant's test files are the spec (``tests/spec``: the state machines,
then the property tests) unless it names others: the stores, the command
line, the folder and the conformance runner are pinned by example tests
outside the spec, and their mutants say which.

``tests/test_mutants.py`` checks on every test run that each mutant still
applies to the current source, so this list cannot silently rot.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path("src/sentinel_memory")


#: The stable cut, the facts' places and the prefix: their example tests, then their properties.
CACHE_CUT = ("tests/test_cache_cut.py", "tests/spec/test_cache_cut_properties.py")
#: Old tool results cleared before turns are dropped: their example tests, then the properties.
CACHE_CLEAR = ("tests/test_cache_clear.py", "tests/spec/test_cache_cut_properties.py")
#: The adapters' cut, facts' place and clearing options.
ADAPTER_OPTIONS = ("tests/test_adapter_cache_options.py", "tests/spec/test_cache_cut_properties.py")
#: What a request hands out is the caller's own though built from the stored data: examples, then properties.
COPIES = ("tests/test_adapter_copies.py", "tests/spec/test_adapter_copies_properties.py")
#: The stable cut's memo: its example tests, then the property against the reference.
STABLE_MEMO = ("tests/test_stable_memo.py", "tests/spec/test_stable_memo_properties.py")
#: The test files a mutant runs unless it names its own: the spec's state machines and properties.
SPEC = ("tests/spec/test_machine.py", "tests/spec/test_properties.py")
#: The example tests of the exact edges and small contracts (issue 45).
EDGES = ("tests/test_edges.py",)
#: The async engine's and the async Redis store's example tests (issue 45).
ASYNC_ENGINE = ("tests/test_async_engine.py",)
#: The store kit's own checks, run against a broken store each (issue 45).
KIT = ("tests/test_store_kit_checks.py",)
#: The census of what the random mode sends (issue 45).
CENSUS = ("tests/test_random_census.py",)
#: The LangChain adapter's example tests, then the edges.
LANGCHAIN = ("tests/test_langchain.py", "tests/test_edges.py")
#: The pydantic-ai adapter's example tests, then its property.
PYDANTIC_AI = ("tests/test_pydantic_ai.py", "tests/spec/test_pydantic_ai_properties.py")
#: The OpenAI Agents SDK session's example tests, then its properties.
OPENAI_AGENTS = ("tests/test_openai_agents.py", "tests/spec/test_openai_agents_properties.py")
#: The telemetry's example tests, then its properties.
TELEMETRY = ("tests/test_telemetry.py", "tests/spec/test_telemetry_properties.py")
#: Errors that name what failed: deep parts, objects whose own methods raise, a prompt with a lone surrogate.
NAMED_ERRORS = ("tests/test_named_errors.py",)
#: Telemetry that fails, at each point, on each store and both memories (OTL-8).
TELEMETRY_FAILURES = ("tests/test_telemetry_failures.py",)
#: The LangChain agent middleware's end-to-end tests (create_agent over a scripted model).
AGENT = ("tests/test_langchain_agent.py",)
#: One agent for many users, histories sent again, overlapping and failed runs: the server tests, then their properties.
SERVING = ("tests/test_agent_server.py", "tests/spec/test_serving_properties.py")
#: The ranking saved with the memory: documents, stores, loads (BM-10, BM-11).
RANKING_SAVED = ("tests/test_ranking_saved.py",)
#: The BM25 ranking's and the scorer seam's example tests, then their properties.
BM25 = ("tests/test_bm25.py", "tests/spec/test_bm25_properties.py")
#: The exact pruning of the default ranking (REC-7): its boundaries, then the property against the naive ranking.
PRUNING = ("tests/spec/test_pruning_properties.py", "tests/spec/test_properties.py")
#: Group commit and durability: the example tests, then the properties.
GROUP = ("tests/test_group_commit.py", "tests/spec/test_group_properties.py")
#: Spans tied to a user and nested under the caller's span: the example tests, then the property.
CONVERSATION = ("tests/test_telemetry_conversation.py", "tests/spec/test_conversation_properties.py")
#: The model's memory tools: the operations' bounds, then their properties.
TOOLS = ("tests/test_model_tools.py", "tests/spec/test_model_tools_properties.py")
#: The MCP server through the SDK's client.
MCP = ("tests/test_mcp_server.py",)
#: The backend for Anthropic's memory tool.
ANTHROPIC = ("tests/test_anthropic_memory_tool.py",)
#: The framework tools' 10-turn runs, then the property that each answers as the operations.
FRAMEWORK_TOOLS = ("tests/test_framework_memory_tools.py", "tests/spec/test_model_tools_properties.py")


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    #: The test files that must catch it, run in this order (relative to the repository).
    tests: tuple[str, ...] = SPEC


MUTANTS = [
    Mutant(
        "the middleware hands the model its kept messages themselves",
        "integrations/langchain/middleware.py",
        "            out.append(_copied(hit[1]))",
        "            out.append(hit[1])",
        tests=COPIES,
    ),
    Mutant(
        "a kept LangChain message's copy shares its lists (content parts, tool calls)",
        "integrations/langchain/middleware.py",
        "        if type(value) is dict or type(value) is list:\n            fields[name] = clone(value)",
        "        if type(value) is dict:\n            fields[name] = clone(value)",
        tests=COPIES,
    ),
    Mutant(
        "a kept LangChain message's copy rebuilds only its outer dicts and lists",
        "integrations/langchain/middleware.py",
        "            fields[name] = clone(value)",
        "            fields[name] = value.copy()",
        tests=COPIES,
    ),
    Mutant(
        "the middleware keeps each memory's messages by the turn's place in the request, not its data",
        "integrations/langchain/middleware.py",
        '            hit = known.get(id(turn))  # a kept turn is held, so no other data can take its id meanwhile\n            if hit is None:\n                hit = (\n                    turn,\n                    message_from_turn(\n                        turn["role"],\n                        turn.get("content"),\n                        tool_calls=turn.get("tool_calls", ()),\n                        tool_call_id=turn.get("tool_call_id"),\n                        name=turn.get("name"),\n                    ),\n                )\n            now_known[id(turn)] = hit',
        '            hit = known.get(len(now_known))  # by place\n            if hit is None:\n                hit = (\n                    turn,\n                    message_from_turn(\n                        turn["role"],\n                        turn.get("content"),\n                        tool_calls=turn.get("tool_calls", ()),\n                        tool_call_id=turn.get("tool_call_id"),\n                        name=turn.get("name"),\n                    ),\n                )\n            now_known[len(now_known)] = hit',
        tests=COPIES,
    ),
    Mutant(
        "add_messages stores the caller's content parts themselves, since its checked copy is not copied again",
        "core/chat.py",
        "    return copy_json(content, what=where, inside=1)  # JSON data (ENT-2), copied (ENT-3), inside its message (ENT-13)",
        "    copy_json(content, what=where, inside=1)\n    return list(parts)",
        tests=COPIES,
    ),
    Mutant(
        "add_turn's text is stored as owned, unchecked",
        "core/conversation.py",
        '_add_message(state, {"role": role, "content": text}, now=now, importance=importance, ttl=ttl)',
        '_add_message(state, {"role": role, "content": text}, now=now, importance=importance, ttl=ttl, owned=True)',
        tests=COPIES,
    ),
    Mutant(
        "get_messages hands out the stored messages themselves",
        "core/request.py",
        "        messages=[clone(message) for message in result.messages],",
        "        messages=list(result.messages),",
        tests=COPIES,
    ),
    Mutant(
        "get_messages hands out the stored entries themselves",
        "core/request.py",
        "        entries=_copies(state, result.entries),",
        "        entries=result.entries,",
        tests=COPIES,
    ),
    Mutant(
        "the walk's memo keeps the messages of removed turns",
        "core/index.py",
        "            self.views.pop(entry.seq, None)",
        "            pass",
        tests=COPIES,
    ),
    Mutant(
        "the pydantic-ai view hands out its kept messages' lists and parts",
        "integrations/pydantic_ai.py",
        "    changing = [(name, _copier(item)) for name, item in fields.items() if type(item) not in _IMMUTABLE]",
        "    changing: list[Any] = []",
        tests=COPIES,
    ),
    Mutant(
        "the Agents SDK session hands out its kept items",
        "integrations/openai_agents.py",
        "        return [clone(item) for item in kept]  # the caller's own (OAI-12)",
        "        return kept",
        tests=COPIES,
    ),
    Mutant(
        "the Agents SDK session sends cleared outputs whole",
        "integrations/openai_agents.py",
        '            if sent.get("content") == CLEARED and stored.get("content") != CLEARED:  # MSG-15: cleared',
        "            if False:",
        tests=ADAPTER_OPTIONS,
    ),
    Mutant(
        "the Agents SDK session puts the facts of facts_at='end' first",
        "integrations/openai_agents.py",
        '        lead = int(self._system is not None) if self._cut["facts_at"] == "end" else extra',
        "        lead = extra",
        tests=ADAPTER_OPTIONS,
    ),
    # -- the stable cut's memo of every unit's count (MSG-17) ------------------------------------
    Mutant(
        "memo: a turn read live is taken as live after its deadline",
        "core/unitmemo.py",
        "        return not is_past(self.live_until, now) and (self.dead_since is None or is_past(self.dead_since, now))",
        "        return self.dead_since is None or is_past(self.dead_since, now)",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a turn read expired is taken as expired before its deadline",
        "core/unitmemo.py",
        "        return not is_past(self.live_until, now) and (self.dead_since is None or is_past(self.dead_since, now))",
        "        return not is_past(self.live_until, now)",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a turn removed from the middle is taken as one of the oldest",
        "core/unitmemo.py",
        "    if newest_removed is not None and below_newest_removed != len(removed) - 1:",
        "    if newest_removed is not None and below_newest_removed > len(removed):",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a turn added at the memo's newest is taken as after it",
        "core/unitmemo.py",
        "        if oldest_added is not None and memo.last is not None and oldest_added <= memo.last:",
        "        if oldest_added is not None and memo.last is not None and oldest_added < memo.last:",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: the next older user unit is never recorded",
        "core/unitmemo.py",
        "                newest_user = len(heads)",
        "                pass",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: the sums do not start again at the oldest unit kept",
        "core/unitmemo.py",
        "        elif first == 0:\n",
        "        elif True:\n",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: one memo more than MEMOS_KEPT is kept",
        "core/unitmemo.py",
        "    while len(memos) > MEMOS_KEPT:",
        "    while len(memos) > MEMOS_KEPT + 1:",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a float count is memoised",
        "core/unitmemo.py",
        "            exact = exact and type(cost) is int and type(cost_cleared) is int",
        "            exact = True",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: the request's walk is taken as reaching the frontier when it reaches it exactly",
        "core/request.py",
        "        while (unit := fill.get(at)) is not None and _turn_key(unit[0][0][0]) >= memo.frontier:",
        "        while (unit := fill.get(at)) is not None and _turn_key(unit[0][0][0]) > memo.frontier:",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: read on from the newest turn read, not from the frontier",
        "core/request.py",
        "    since: Key | tuple[()] = () if memo.frontier is None else memo.frontier",
        "    since: Key | tuple[()] = () if memo.last is None else memo.last",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: the newest keep_results units counted cleared too",
        "core/request.py",
        "    bound = 0 if keep is None else max(0, n - keep)  # the units before it count cleared",
        "    bound = 0 if keep is None else max(0, n - keep + 1)  # the units before it count cleared",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a history counting exactly the budget is judged not to fit",
        "core/request.py",
        "        if whole is not None and whole > token_budget:",
        "        if whole is not None and whole >= token_budget:",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: every removal of turns is taken as one of the oldest",
        "core/index.py",
        "            self.turns.count_below(max(gone)) if gone else 0,",
        "            len(gone) - 1 if gone else 0,",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "memo: a cleared LineCounter keeps its memos",
        "core/tokens.py",
        "            self.generation += 1",
        "            pass",
        tests=STABLE_MEMO,
    ),
    Mutant(
        "adapters: the newest-first fill by default",
        "serving.py",
        'ADAPTER_CUT = "stable"',
        'ADAPTER_CUT = "newest"',
        tests=ADAPTER_OPTIONS,
    ),
    # -- old tool results cleared before turns are dropped (MSG-15, MSG-16) ----------------------
    Mutant(
        "clearing: another placeholder",
        "core/cut.py",
        'CLEARED = "[cleared]"',
        'CLEARED = "[removed]"',
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: a result that counts as much as the placeholder is cleared",
        "core/cut.py",
        "            if cost(cleared) < cost(message):",
        "            if cost(cleared) <= cost(message):",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: excluded tools are cleared too",
        "core/cut.py",
        '        if message["role"] == "tool" and names.get(message["tool_call_id"]) not in excluded:',
        '        if message["role"] == "tool":',
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: the cleared result loses its tool_call_id",
        "core/cut.py",
        '            cleared = {**message, "content": CLEARED}',
        '            cleared = {"role": "tool", "content": CLEARED}',
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: the unit numbered keep_results is kept whole",
        "core/request.py",
        "            whole = len(self.units) < self._keep",
        "            whole = len(self.units) <= self._keep",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: a history that fits whole is cleared anyway",
        "core/request.py",
        "            if full:\n                return result",
        "            if False:\n                return result",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: never when the fill leaves a unit out",
        "core/request.py",
        "            if full:\n                return result",
        "            if True:\n                return result",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: the units always in are never cleared",
        "core/request.py",
        "    if recent is not None and own + required > token_budget:",
        "    if False:",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: must-keep facts that do not fit beside whole results raise",
        "core/request.py",
        "            full = False  # the must-keep facts do not fit beside the whole results: clear them, then judge",
        "            raise",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: the prefix runs past a result a later request clears",
        "core/request.py",
        "        if start >= result.prefix:",
        "        if True:",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "clearing: the prefix's tokens keep what it lost",
        "core/request.py",
        "        return attrs.evolve(result, prefix=start, prefix_tokens=result.prefix_tokens - dropped)",
        "        return attrs.evolve(result, prefix=start)",
        tests=CACHE_CLEAR,
    ),
    Mutant(
        "adapters: the LangChain middleware drops its request options",
        "integrations/langchain/middleware.py",
        "            shared=True,  # read, not copied: the messages handed out are new copies (MSG-18, LC-14)\n            **self._options,\n",
        "            shared=True,  # read, not copied: the messages handed out are new copies (MSG-18, LC-14)\n",
        tests=ADAPTER_OPTIONS,
    ),
    Mutant(
        "adapters: the pydantic-ai history drops its request options",
        "integrations/pydantic_ai.py",
        "            system=self._system,\n            **self._options,\n",
        "            system=self._system,\n",
        tests=ADAPTER_OPTIONS,
    ),
    Mutant(
        "adapters: the Agents SDK session drops its cut",
        "integrations/openai_agents.py",
        "            system=self._system,\n            **self._cut,\n",
        "            system=self._system,\n",
        tests=ADAPTER_OPTIONS,
    ),
    Mutant(
        "adapters: a bad cut is refused only at the first request",
        "serving.py",
        '    check_choice("cut", cut, CUTS)\n',
        "",
        tests=ADAPTER_OPTIONS,
    ),
    Mutant(
        "a newest cut with the facts elsewhere counts the turns MSG-9 drops",
        "core/request.py",
        "    spent = got.spent - sum(cost for _, cost in taken_units[: len(taken_units) - len(units)])  # MSG-9's drop",
        "    spent = got.spent",
        tests=CACHE_CUT,
    ),
    # -- requests a prompt cache can serve (MSG-11 .. MSG-13) -------------------------------------
    Mutant(
        "the stride is not floored",
        "core/cut.py",
        "    return max(0, math.floor(token_budget * (1 - low_mark)))",
        "    return max(0, token_budget * (1 - low_mark))",
        tests=CACHE_CUT,
    ),
    Mutant(
        "a mark needs a stride beyond the next one",
        "core/cut.py",
        "            mark = step == 0 or last is None or here > last",
        "            mark = step == 0 or last is None or here > last + 1",
        tests=CACHE_CUT,
    ),
    Mutant(
        "a mark is compared with the previous unit's stride whatever its role",
        "core/cut.py",
        "        if user:\n            here = 0 if step == 0 else math.floor(before / step)",
        "        if True:\n            here = 0 if step == 0 else math.floor(before / step)",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the position counts the unit itself",
        "core/cut.py",
        "            here = 0 if step == 0 else math.floor(before / step)",
        "            here = 0 if step == 0 else math.floor((before + cost) / step)",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the stable cut takes the newest mark, not the oldest",
        "core/cut.py",
        "    for at in range(taken - 1, must - 1, -1):  # the oldest taken unit first",
        "    for at in range(must, taken):  # the oldest taken unit first",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the stable cut is never applied",
        "core/cut.py",
        '    if cut == "stable":',
        "    if False:",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the facts' own message is not counted",
        "core/cut.py",
        "            return chosen, system, own, chosen.text, chosen.tokens + message_tokens",
        "            return chosen, system, own, chosen.text, chosen.tokens",
        tests=CACHE_CUT,
    ),
    Mutant(
        "a missing must-keep fact is not looked for again in all the room",
        "core/cut.py",
        "    if not complete and reserve < most:",
        "    if False:",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the history may reach exactly one token over the budget",
        "core/cut.py",
        "    while (got := unit(taken)) is not None and fixed + spent + got[1] <= token_budget:",
        "    while (got := unit(taken)) is not None and fixed + spent + got[1] <= token_budget + 1:",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the facts at the start go after the history",
        "core/request.py",
        '    if got.facts is not None and where == "start":',
        "    if False:",
        tests=CACHE_CUT,
    ),
    Mutant(
        "the prefix counts the facts' message at the end",
        "core/request.py",
        '        out.append({"role": "system", "content": got.facts})\n    elif picked:',
        '        out.append({"role": "system", "content": got.facts})\n        stable += 1\n    elif picked:',
        tests=CACHE_CUT,
    ),
    # -- the model's memory tools ----------------------------------------------------------------
    Mutant(
        "the tools' length bound refuses exactly the bound",
        "integrations/tools/operations.py",
        "    if len(value) > limit:",
        "    if len(value) >= limit:",
        tests=TOOLS,
    ),
    Mutant(
        "the tools take an importance up to 2",
        "integrations/tools/operations.py",
        "    if not _number(value) or not 0 <= value <= 1:",
        "    if not _number(value) or not 0 <= value <= 2:",
        tests=TOOLS,
    ),
    Mutant(
        "the tools let a model write a chat turn's key",
        "integrations/tools/operations.py",
        "    if is_turn_key(key):",
        "    if False:",
        tests=TOOLS,
    ),
    Mutant(
        "the tools pass the ttl in seconds where the memory takes milliseconds",
        "integrations/tools/operations.py",
        "    return float(value) * 1000",
        "    return float(value)",
        tests=TOOLS,
    ),
    Mutant(
        "the tools' recall gives chat turns",
        "integrations/tools/operations.py",
        "        if is_turn_key(hit.entry.key):\n            continue",
        "        if False:\n            continue",
        tests=TOOLS,
    ),
    Mutant(
        "the tools' get_context includes the chat turns",
        "integrations/tools/operations.py",
        'query=checked_query, only="facts")',
        "query=checked_query, only=None)",
        tests=TOOLS,
    ),
    Mutant(
        "the tools ignore an argument they do not take",
        "integrations/tools/operations.py",
        "        if argument not in known:",
        "        if False:",
        tests=TOOLS,
    ),
    Mutant(
        "the tools' recall ignores its limit",
        "integrations/tools/operations.py",
        "        if len(hits) == checked_limit:",
        "        if len(hits) == -1:",
        tests=TOOLS,
    ),
    Mutant(
        "the MCP resource reads the largest budget, not its own",
        "integrations/tools/mcp.py",
        "run(None, operations.get_context, resource_budget, None)",
        "run(None, operations.get_context, MAX_TOKEN_BUDGET, None)",
        tests=MCP,
    ),
    Mutant(
        "the MCP server ignores the user it was started with",
        "integrations/tools/mcp.py",
        "        if user_id is not None:\n            return user_id",
        "        if False:\n            return user_id",
        tests=MCP,
    ),
    Mutant(
        "a refused argument crashes the MCP tool instead of a tool error",
        "integrations/tools/mcp.py",
        "        except ToolArgumentError as error:\n            raise ToolError(str(error)) from error\n",
        "        except KeyError as error:\n            raise ToolError(str(error)) from error\n",
        tests=MCP,
    ),
    Mutant(
        "the memory tool's str_replace replaces the first of several matches",
        "integrations/tools/anthropic.py",
        "            if count > 1:",
        "            if count > 99:",
        tests=ANTHROPIC,
    ),
    Mutant(
        "the memory tool takes a '..' part",
        "integrations/tools/anthropic.py",
        'part in ("", ".", "..")',
        'part in ("", ".")',
        tests=ANTHROPIC,
    ),
    Mutant(
        "the memory tool's path bound refuses exactly 255 characters",
        "integrations/tools/anthropic.py",
        "        if len(path) > MAX_PATH_CHARS:",
        "        if len(path) >= MAX_PATH_CHARS:",
        tests=ANTHROPIC,
    ),
    Mutant(
        "the memory tool inserts one line past the end",
        "integrations/tools/anthropic.py",
        "            if not 0 <= command.insert_line <= len(lines):",
        "            if not 0 <= command.insert_line <= len(lines) + 1:",
        tests=ANTHROPIC,
    ),
    Mutant(
        "the memory tool's file bound refuses exactly the bound",
        "integrations/tools/anthropic.py",
        "        if len(text) > self.max_file_chars:",
        "        if len(text) >= self.max_file_chars:",
        tests=ANTHROPIC,
    ),
    Mutant(
        "the memory tool deletes a directory's path but not its files",
        "integrations/tools/anthropic.py",
        'doomed = [key for key in files if key == path or key.startswith(path + "/")]',
        "doomed = [key for key in files if key == path]",
        tests=ANTHROPIC,
    ),
    Mutant(
        "a refused argument raises out of the LangChain tool",
        "integrations/tools/langchain.py",
        "            handle_tool_error=True,",
        "            handle_tool_error=False,",
        tests=FRAMEWORK_TOOLS,
    ),
    Mutant(
        "the Agents SDK tools use one fixed user",
        "integrations/tools/openai_agents.py",
        "            user_id = user_id_from(ctx.context, user_key)",
        '            user_id = "alice"',
        tests=FRAMEWORK_TOOLS,
    ),
    Mutant(
        "a refused argument fails the pydantic-ai run",
        "integrations/tools/pydantic_ai.py",
        "                raise ToolFailed(str(error)) from error",
        "                raise",
        tests=FRAMEWORK_TOOLS,
    ),
    Mutant(
        "the fake clock's advance sets the time instead of moving it",
        "fakeclock.py",
        'self.now += _milliseconds(by, "by")',
        'self.now = _milliseconds(by, "by")',
        ("tests/test_fakeclock.py",),
    ),
    Mutant(
        "expiry uses > instead of >=",
        "core/expiry.py",
        "return deadline_at is not None and now >= deadline_at",
        "return deadline_at is not None and now > deadline_at",
    ),
    Mutant(
        "freshness cap 0.1 becomes 0.2",
        "core/retention.py",
        "FRESHNESS_WEIGHT = 0.1",
        "FRESHNESS_WEIGHT = 0.2",
    ),
    Mutant(
        "eviction tie goes to the newer instead of the older",
        "core/retention.py",
        "return (retention(entry, now, recency_window), entry.updated_at, entry.seq)",
        "return (retention(entry, now, recency_window), -entry.updated_at, -entry.seq)",
    ),
    Mutant(
        "importance above 1 is clamped instead of defaulted",
        "core/options.py",
        "    if _in_range(rule, value):\n        return int(value) if rule.integer else value  # type: ignore[call-overload]",
        "    if _in_range(rule, value) or (is_number(value) and rule.maximum is not None and value > rule.maximum):\n        return min(value, rule.maximum) if rule.maximum is not None else value  # type: ignore[call-overload]",
    ),
    Mutant(
        "greedy fill appends instead of re-rendering in age order",
        "core/prompt.py",
        "trial_lines = lines[:at] + [line] + lines[at:]",
        "trial_lines = lines + [line]",
    ),
    Mutant(
        "get hands out the stored data instead of a copy",
        "core/reads.py",
        "return default if entry is None else copy_json(entry.data)",
        "return default if entry is None else entry.data",
    ),
    Mutant(
        "save drops the working memory",
        "core/document.py",
        'return {"data": clone(dict(working.data)), "updatedAt": working.updated_at}',
        'return {"data": {}, "updatedAt": None}',
    ),
    Mutant(
        "budget counted per entry instead of on the rendered text",
        "core/prompt.py",
        "trial_tokens = count_tokens(tokenizer, trial)",
        "trial_tokens = tokens + count_tokens(tokenizer, line)",
    ),
    Mutant(
        "overwrite resets created_at",
        "core/entries.py",
        "        created_at, weight = (\n            old.created_at,",
        "        created_at, weight = (\n            now,",
    ),
    Mutant(
        "recall ties go to the older entry",
        "core/lexical.py",
        "order = sorted(order, key=ages.__getitem__)",
        "order = sorted(order, key=ages.__getitem__, reverse=True)",
    ),
    Mutant(
        "working memory never goes idle",
        "core/working.py",
        "return updated_at is not None and now - updated_at >= state.config.working_ttl",
        "return False",
    ),
    Mutant(
        "the estimator rounds down",
        "core/tokens.py",
        "return -(-units // 4)",
        "return units // 4",
    ),
    Mutant(
        "the fast fill renders newest first",
        "core/prompt.py",
        "chosen = sorted_by_age(picks, seq_is_age=seq_is_age)  # age order again",
        "chosen = sorted_by_age(picks, seq_is_age=seq_is_age)[::-1]",
    ),
    Mutant(
        "the fast fill stops at the first line that does not fit",
        "core/prompt.py",
        "if start < len(costs) and room >= min(costs[start:]):",
        "if False:",
    ),
    Mutant(
        "the ranking lets freshness go below 0",
        "core/retention.py",
        "stale_end = bisect.bisect_left(updated, True, key=not_stale)",
        "stale_end = 0",
    ),
    Mutant(
        "recall stops early without the freshness bound",
        "core/lexical.py",
        "if share * top_weight + bonus < worst:",
        "if share * top_weight < worst:",
    ),
    Mutant(
        "the quick eviction looks at the lowest importance only",
        "core/index.py",
        "while items and (best is None or items[0][0] <= best[0]):",
        "while items and best is None:",
    ),
    Mutant(
        "the quick eviction breaks a tie of retention for the newer entry",
        "core/index.py",
        "found = (low, *min(map(_age_order, lowest)))",
        "found = (low, *max(map(_age_order, lowest)))",
    ),
    Mutant(
        "the index misses entries that expire exactly now",
        "core/index.py",
        "return list(map(_entry, self.by_expiry.below((now,) + _AFTER)))",
        "return list(map(_entry, self.by_expiry.below((now,))))",
    ),
    Mutant(
        "recall's bound counts one reachable query word",
        "core/lexical.py",
        "    reach = len(reachable)",
        "    reach = min(1, len(reachable))",
    ),
    Mutant(
        "the walk past the start drops lines that fill the room exactly",
        "core/index.py",
        "return list(self._live(self._by_units.below((units + 1,)), now))",
        "return list(self._live(self._by_units.below((units,)), now))",
    ),
    Mutant(
        "the walk past the start, measured by a tokenizer, drops lines that fill the room exactly",
        "core/prompt.py",
        "map(operator.le, sizes_of(everyone), itertools.repeat(room - gap))",
        "map(operator.lt, sizes_of(everyone), itertools.repeat(room - gap))",
    ),
    Mutant(
        "the walk past the start ranks again a line it picked that fills the room exactly",
        "core/prompt.py",
        "seen = {order[i].seq for i in picked if sizes[i] <= room - gap}",
        "seen = {order[i].seq for i in picked if sizes[i] < room - gap}",
    ),
    Mutant(
        "the walk past the start goes on with the whole budget",
        "core/prompt.py",
        "more, room = _greedy(sizes_of(rest), gap, room)",
        "more, room = _greedy(sizes_of(rest), gap, cap + gap)",
    ),
    Mutant(
        "the holders of a word keep an entry that left",
        "core/index.py",
        "                leaving.setdefault(word, []).append(entry.seq)",
        "                pass",
    ),
    Mutant(
        "the lines by measure keep an entry that left",
        "core/index.py",
        "index._by_units = by_units.changed(_units_items(removed), _units_items(added), removed_ids=gone)",
        "index._by_units = by_units.changed((), _units_items(added))",
    ),
    Mutant(
        "MaxScore closes at a bound equal to the floor",
        "core/lexical.py",
        "if floor is None or not bound < floor:",
        "if floor is None or not bound <= floor:",
        PRUNING,
    ),
    Mutant(
        "MaxScore's bound of an unseen entry forgets what freshness adds",
        "core/lexical.py",
        "    return held / total * 1.0 + FRESHNESS_BONUS * 1.0",
        "    return held / total * 1.0",
        PRUNING,
    ),
    Mutant(
        "MaxScore's floor counts expired candidates",
        "core/lexical.py",
        "        seqs = [seq for seq in seqs if seq not in left_out]",
        "        seqs = list(seqs)",
        PRUNING,
    ),
    Mutant(
        "MaxScore drops a candidate that reaches the floor exactly",
        "core/lexical.py",
        "if _unseen_bound(held + rest, total) >= floor)",
        "if _unseen_bound(held + rest, total) > floor)",
        PRUNING,
    ),
    Mutant(
        "MaxScore's floor takes the freshness it is not sure of",
        "core/lexical.py",
        "    ratios = map(operator.truediv, map(counts.__getitem__, seqs), repeat(total))",
        "    ratios = map(operator.add, map(operator.truediv, map(counts.__getitem__, seqs), repeat(total)), repeat(0.05))",
        PRUNING,
    ),
    Mutant(
        "MaxScore never asks the first non-essential list",
        "core/maxscore.py",
        "            for j in range(i, lists):",
        "            for j in range(i + 1, lists):",
        PRUNING,
    ),
    Mutant(
        "the walk that gives up returns what it found so far",
        "core/lexical.py",
        "        if give_up is not None and read > give_up:\n            return None",
        "        if give_up is not None and read > give_up:\n            break",
        PRUNING,
    ),
    Mutant(
        "the walk gives up one entry early",
        "core/lexical.py",
        "if give_up is not None and read > give_up:",
        "if give_up is not None and read >= give_up:",
        PRUNING,
    ),
    Mutant(
        "the BM25 search closes at a floor equal to the rest's bound",
        "core/bm25.py",
        "return floor is not None and floor > rest[i] * (1.0 + _SLACK)",
        "return floor is not None and floor >= rest[i] * 0.0",
        ("tests/spec/test_pruning_properties.py", *BM25),
    ),
    Mutant(
        "a non-ASCII str passes as JSON text unchecked",
        "core/jsondata.py",
        "    if value.isascii():\n        return True",
        "    if value.isascii() or value:\n        return True",
    ),
    Mutant(
        "the start of a ranking lays its candidates out by importance, not age",
        "core/index.py",
        "near.sort(key=_id if self.in_order else _age_order)",
        "near.sort(key=_first if self.in_order else _age_order)",
    ),
    Mutant(
        "the start of a ranking keeps expired candidates",
        "core/index.py",
        "walk = (item for item in reversed(run) if item[-2] not in skip)",
        "walk = (item for item in reversed(run) if item[-2] not in ())",
    ),
    Mutant(
        "a walk by importance keeps expired entries",
        "core/index.py",
        "return (item[-1] for item in items if item[-2] not in expired)",
        "return (item[-1] for item in items)",
    ),
    Mutant(
        "the live run made at a later moment is read at an earlier one",
        "core/index.py",
        "if view is not None and view[0] == count:",
        "if view is not None and view[0] >= count:",
    ),
    Mutant(
        "the live run keeps one entry expired since it was made",
        "core/index.py",
        "since, run = self.by_expiry.below((now,) + _AFTER)[view[0] :], view[1]",
        "since, run = self.by_expiry.below((now,) + _AFTER)[view[0] + 1 :], view[1]",
    ),
    Mutant(
        "the start of a ranking among expired entries stops at the level's importance",
        "core/index.py",
        "near += itertools.takewhile(lambda item: item[0] + full >= level, walk)",
        "near += itertools.takewhile(lambda item: item[0] >= level, walk)",
    ),
    Mutant(
        "the picks and the expired are put in seq order when a clock went back",
        "core/values.py",
        "return by_seq if seq_is_age else sorted(by_seq, key=_updated_at)",
        "return by_seq",
    ),
    Mutant(
        "the search by holders scores expired entries",
        "core/lexical.py",
        "        seqs = list(counts.keys() - left_out) if left_out else list(counts)",
        "        seqs = list(counts)",
    ),
    Mutant(
        "the search that scores every holder lays them out newest first",
        "core/lexical.py",
        "        seqs.sort()\n",
        "        seqs.sort(reverse=True)\n",
    ),
    Mutant(
        "a band of age reaches into the fresher entries",
        "core/lexical.py",
        "end = bisect.bisect_right(group, moment, key=_updated, lo=start)",
        "end = bisect.bisect_right(group, now, key=_updated, lo=start)",
    ),
    Mutant(
        "a band's cap is the freshness of its newer end",
        "core/lexical.py",
        "        f = 1 - (now - at if now > at else 0) / recency_window\n",
        "        f = 1 - (now - at - recency_window // bands if now > at else 0) / recency_window\n",
    ),
    Mutant(
        "the best of several groups are taken to be in age order",
        "core/lexical.py",
        "in_age_order=seq_is_age and len(groups) == 1)",
        "in_age_order=seq_is_age)",
    ),
    Mutant(
        "the groups of the search by holders are not laid out oldest first",
        "core/lexical.py",
        "                part.sort()  # so the group lists its entries oldest first",
        "                pass",
    ),
    Mutant(
        "the search by holders forgets the group holding the fewest words",
        "core/lexical.py",
        "        groups.append((fewest, listed(list(itertools.compress(seqs, map(operator.eq, held, repeat(fewest)))))))",
        "        pass",
    ),
    Mutant(
        "a group's bound forgets the fewer than limit already kept",
        "core/lexical.py",
        "            bound = max(worst, min(floor, min(scores, default=math.inf)))",
        "            bound = max(worst, floor)",
    ),
    Mutant(
        "the best few are taken from the entries holding every word without a bound",
        "core/lexical.py",
        "    if not complete and (groups[-1][0] - 1) / total * 1.0 + full_bonus >= worst:",
        "    if False:",
    ),
    Mutant(
        "the start of a ranking of many equal scores keeps the oldest",
        "core/index.py",
        "        newest_tied = sorted(tied, key=age)[len(above) - at_least :]",
        "        newest_tied = sorted(tied, key=age)[: at_least - len(above)]",
    ),
    Mutant(
        "the search of the text takes a word for the start of a longer one",
        "core/lexical.py",
        'alone = re.compile(f"{word}(?<![a-z0-9]{word})(?![a-z0-9])")',
        'alone = re.compile(f"{word}(?<![a-z0-9]{word})")',
    ),
    Mutant(
        "the holders of the words searched for miss the changes after the search",
        "core/index.py",
        "            touched = set(known.having(touched))",
        "            return known",
    ),
    # The spec's blind spots, one class each: behaviours the mutants above left unpinned.
    Mutant(
        "expired entries reported in table order after the clock went back",
        "core/entries.py",
        "        expired = sorted_by_age(expired, seq_is_age=index.in_order)",
        "        expired.sort(key=_seq)",
    ),
    Mutant(
        "the saved document lists entries in table order, not by age",
        "core/document.py",
        'document["entries"] = [record(e) for e in state.index.all_by_age()]',
        'document["entries"] = [record(e) for e in state.entries.values()]',
    ),
    Mutant(
        "context ranks at most ten query matches first",
        "core/window.py",
        "matched = [entry for _, entry in _query_matches(count if at_least is None else at_least)]",
        "matched = [entry for _, entry in _query_matches(10)]",
    ),
    Mutant(
        "working memory handed out as a shallow copy",
        "core/working.py",
        "return {} if _working_idle(state, now) else copy_json(dict(state.working.data))",
        "return {} if _working_idle(state, now) else dict(state.working.data)",
    ),
    Mutant(
        "the start of the ranking ignores what freshness can lift",
        "core/index.py",
        "start = bisect.bisect_left(near, True, key=lambda item: item[0] + full >= level)",
        "start = bisect.bisect_left(near, True, key=lambda item: item[0] >= level)",
    ),
    Mutant(
        "the fast fill sums fractional line measures",
        "core/prompt.py",
        "if type(gap) is not int or set(map(type, measured.values())) != {int} or gap < 0 or min(measured.values()) < 0:",
        "if gap < 0 or min(measured.values()) < 0:",
    ),
    Mutant(
        "recall words fold compatibility characters (NFKD)",
        "core/lexical.py",
        'decomposed = unicodedata.normalize("NFD", lowered)',
        'decomposed = unicodedata.normalize("NFKD", lowered)',
    ),
    Mutant(
        "the circularity check never releases its marker",
        "core/jsondata.py",
        "            open_containers.discard(marker)",
        "            pass",
    ),
    Mutant(
        "the temp file is not fsynced before the rename",
        "stores/filestore.py",
        "        os.fsync(fd)\n    finally:",
        "        pass\n    finally:",
    ),
    Mutant(
        "a save creates only the last missing folder",
        "stores/filestore.py",
        "        missing.append(folder)\n        folder = folder.parent",
        "        missing.append(folder)\n        break",
    ),
    # Nothing lost, part 3: a lossy load, lock waits, Redis errors.
    Mutant(
        "a lossy load keeps each entry's position among all the file's entries as its seq",
        "core/document.py",
        "entries = [attrs.evolve(entry, seq=seq) for seq, entry in enumerate(by_key.values(), first_seq)]",
        "entries = list(by_key.values())",
    ),
    Mutant(
        "a flock wait that runs out goes on without the lock",
        "stores/locking.py",
        "                raise LockTimeoutError(location, wait) from None",
        "                return",
        tests=("tests/test_persistence.py",),
    ),
    Mutant(
        "a Redis server's refusal leaks as a redis-py error",
        "stores/redisstore.py",
        "        except redis.exceptions.RedisError as error:",
        "        except redis.exceptions.LockError as error:",
        tests=("tests/test_redis.py",),
    ),
    Mutant(
        "a process forked while a thread holds a file's lock keeps its copy of the flock",
        "stores/locking.py",
        "    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)",
        "    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent)",
        tests=("tests/test_many_writers.py",),
    ),
    # Chat messages (MSG-1 .. MSG-9).
    Mutant(
        "get_messages gives older units nothing the facts left over",
        "core/request.py",
        "        walk(head, token_budget)  # what the facts left over goes to older units",
        "        pass",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "step 1 takes only the units that are always in, leaving older turns to what the facts leave",
        "core/request.py",
        "        walk(own, token_budget - reserve)",
        "        pass",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "the history may start at an assistant message or a tool result",
        "core/request.py",
        '    while units and units[0][0][0][1]["role"] != "user":',
        "    while False:",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "calls unanswered at the end are sent instead of pending",
        "core/request.py",
        "                if open_calls:\n                    if first:",
        "                if False:\n                    if first:",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a stored turn of a role outside the chat API's is sent",
        "core/request.py",
        "            if role not in ROLES:\n                continue",
        "            if False:\n                continue",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "the newest question is not reserved: a small budget drops it",
        "core/request.py",
        "    must, required = newest.through_newest_user()",
        "    must, required = newest.through_newest_user()[0], 0",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "the app's system prompt is not counted while turns are taken",
        "core/request.py",
        "    own = 0 if system is None else count_tokens(per_message, system) + MESSAGE_TOKENS",
        "    own = 0",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a change forgets to put a new turn in the index's split of turns and facts",
        "core/index.py",
        "            map(_turn_item, old_turns), map(_turn_item, new_turns), removed_ids=set(map(_seq, old_turns))",
        "            map(_turn_item, old_turns), (), removed_ids=set(map(_seq, old_turns))",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a change leaves an evicted fact in the index's split",
        "core/index.py",
        "            split.facts_index = self.facts_index.changed(old_facts, new_facts, expired_at=expired_at)",
        "            split.facts_index = self.facts_index.changed((), new_facts, expired_at=None)",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a tool call renders as nothing, so it costs nothing",
        "core/message.py",
        "    calls = [f\"{call['function']['name']}({call['function']['arguments']})\" for call in message.get(\"tool_calls\", ())]",
        "    calls: list[str] = []",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a tool message may answer a call no one made",
        "core/chat.py",
        "            if pending is None or call_id not in pending:",
        "            if False:",
        tests=("tests/test_chat_messages.py",),
    ),
    Mutant(
        "the validator does not see calls left unanswered at the end",
        "core/chat.py",
        '    if pending:\n        problems.append(f"messages[{opened_at}]: calls {sorted(pending)} are not answered")\n    return problems',
        "    return problems",
        tests=("tests/test_chat_messages.py",),
    ),
    Mutant(
        "add_turn takes any role",
        "core/chat.py",
        "    if role not in ROLES:\n        hint",
        "    if False:\n        hint",
        tests=("tests/test_chat_messages.py",),
    ),
    Mutant(
        "a batch may answer one call twice",
        "core/chat.py",
        "            pending.discard(call_id)\n",
        "",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "a new call in a batch leaves the earlier message's calls open",
        "core/chat.py",
        '            pending = {call["id"] for call in checked["tool_calls"]}',
        '            pending = (pending or set()) | {call["id"] for call in checked["tool_calls"]}',
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "a user message between a call and its result leaves the call open",
        "core/chat.py",
        "        else:\n            pending = None\n        out.append(checked)",
        "        out.append(checked)",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "a stored message with content None and no calls is a valid turn",
        "core/message.py",
        "    if content is None:\n        if calls is None:\n            return False",
        "    if content is None:\n        if calls is None:\n            pass",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "a stored call list may repeat an id",
        "core/message.py",
        "if type(call_id) is not str or not call_id or call_id in ids:",
        "if type(call_id) is not str or not call_id:",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "the role hint reads the role as written, so 'Human' gets none",
        "core/chat.py",
        "hint = _HINTS.get(role.lower())",
        "hint = _HINTS.get(role)",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "get_messages takes the prompt and the facts joined when they exceed the budget by one token",
        "core/request.py",
        "            if over <= 0 or not chosen.entries:",
        "            if over <= 1 or not chosen.entries:",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "get_messages' pending are the stored entries, not copies",
        "core/request.py",
        "        pending=_copies(state, result.pending),",
        "        pending=result.pending,",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "the must-keep TokenBudgetError reports the need counted apart, within the budget",
        "core/request.py",
        "max(facts_cost + required, math.floor(token_budget) + 1),",
        "facts_cost + required,",
        tests=("tests/test_messages_edges.py",),
    ),
    Mutant(
        "a message costs its content alone, without the chat format's 3 tokens",
        "core/request.py",
        "MESSAGE_TOKENS = 3",
        "MESSAGE_TOKENS = 0",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a dict with a role and a content and more keys renders as a message",
        "core/jsondata.py",
        "        if len(data) == 2:",
        "        if len(data) >= 2:",
        tests=("tests/spec/test_messages_properties.py",),
    ),
    Mutant(
        "a required case declined with E_UNSUPPORTED does not fail the run",
        "conformance/runner.py",
        'bad = any(o.status in ("failed", "errored") or (o.status == "skipped" and o.required) for o in self.outcomes)',
        'bad = any(o.status in ("failed", "errored") for o in self.outcomes)',
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "an Encoding counts with encode, which refuses a special token in a chat message",
        "core/tokens.py",
        "            encode = ordinary",
        "            pass",
        tests=("tests/test_tokens.py",),
    ),
    # Issue 36: the stores, the command line, the folder, the conformance runner and the core's
    # corners. Each names the test files that pin the behaviour it breaks.
    Mutant(
        "SQLite syncs at checkpoints only (synchronous=NORMAL)",
        "stores/sqlitestore.py",
        '_SYNCHRONOUS = {"full": "FULL", "normal": "NORMAL", "none": "OFF"}',
        '_SYNCHRONOUS = {"full": "NORMAL", "normal": "NORMAL", "none": "OFF"}',
        tests=("tests/test_store_durability.py",),
    ),
    Mutant(
        "the SQLite database stays in rollback-journal mode",
        "stores/sqlitestore.py",
        'connection.execute("PRAGMA journal_mode=WAL")',
        'connection.execute("PRAGMA journal_mode=DELETE")',
        tests=("tests/test_store_durability.py",),
    ),
    Mutant(
        "a SQLite save that fails half way commits what it wrote",
        "stores/sqlitestore.py",
        '                connection.execute("ROLLBACK")\n                raise',
        '                connection.execute("COMMIT")\n                raise',
        tests=("tests/test_store_durability.py",),
    ),
    Mutant(
        "a SQLite database of another format version is read",
        "stores/sqlitestore.py",
        'if meta.get("format") != FORMAT or meta.get("version") != VERSION:',
        'if meta.get("format") != FORMAT:',
        tests=("tests/test_store_durability.py",),
    ),
    Mutant(
        "the sweep takes a neighbour's temp file whose name starts like this file's",
        "stores/filestore.py",
        'prefix = f".{target.name}."',
        'prefix = f".{target.name}"',
        tests=("tests/test_filestore_housekeeping.py",),
    ),
    Mutant(
        "the sweep takes the temp file of a file whose name extends this one's (memory.json.bak)",
        "stores/filestore.py",
        'return bool(middle) and "." not in middle',
        "return bool(middle)",
        tests=("tests/test_filestore_housekeeping.py",),
    ),
    Mutant(
        "the preserved .orig copy is 0600 instead of keeping the file's permission bits",
        "stores/filestore.py",
        "_write(fd, raw, mode)",
        "_write(fd, raw, None)",
        tests=("tests/test_filestore_housekeeping.py",),
    ),
    Mutant(
        "the nesting scan skips escaped quotes but not escaped backslashes",
        "stores/jsontext.py",
        r'_ESCAPE = re.compile(rb"\\.", re.DOTALL)',
        r"""_ESCAPE = re.compile(rb'\\"')""",
        tests=("tests/test_filestore_housekeeping.py",),
    ),
    Mutant(
        "a whole Redis save leaves the keys without the idle ttl",
        "stores/redisstore.py",
        'args += [_dumps(document.get("working", _EMPTY_WORKING)), self.idle_ms, ranking, *pairs]',
        'args += [_dumps(document.get("working", _EMPTY_WORKING)), 0, ranking, *pairs]',
        tests=("tests/test_redis_expiry.py",),
    ),
    Mutant(
        "a timedelta idle_ttl is taken in seconds",
        "stores/redisstore.py",
        "ms = milliseconds(idle_ttl) if isinstance(idle_ttl, datetime.timedelta) else idle_ttl",
        "ms = idle_ttl.total_seconds() if isinstance(idle_ttl, datetime.timedelta) else idle_ttl",
        tests=("tests/test_redis_expiry.py",),
    ),
    Mutant(
        "a read command autosaves what its load compacted",
        "cli.py",
        "autosave=compacting and not options.dry_run,",
        'autosave=not getattr(options, "dry_run", False),',
        tests=("tests/test_cli_reads.py",),
    ),
    Mutant(
        "compact saves even when nothing was dropped",
        "cli.py",
        "        dropped = memory.compact()  # autosaved when it dropped something",
        "        dropped, _ = memory.compact(), memory.save()",
        tests=("tests/test_cli_reads.py",),
    ),
    Mutant(
        "reading a file of more than 1000 entries compacts it to 1000",
        "cli.py",
        "limit = max(1000, len(stored) if isinstance(stored, list) else 0)",
        "limit = 1000",
        tests=("tests/test_cli_reads.py",),
    ),
    Mutant(
        "context ignores --must-keep",
        "cli.py",
        "tokenizer=tokenizer, must_keep=options.must_keep",
        "tokenizer=tokenizer, must_keep=None",
        tests=("tests/test_cli_reads.py",),
    ),
    Mutant(
        "an array with extra items compares equal",
        "conformance/compare.py",
        'return None if len(expected) == len(got) else f"{path} (length {len(expected)} != {len(got)})"',
        "return None",
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "an expired turn after a call closes it for add_message, though get_messages keeps the unit whole",
        "core/conversation.py",
        "        if is_past(entry.expires_at, now):\n            continue",
        "        if is_past(entry.expires_at, now):\n            return None",
        ("tests/test_chat_messages.py",),
    ),
    Mutant(
        "a turn of a role outside ROLES after a call closes it for add_message",
        "core/conversation.py",
        "        if role not in ROLES:\n            continue",
        "        if role not in ROLES:\n            return None",
        ("tests/test_chat_messages.py",),
    ),
    Mutant(
        "a tool turn without an id after a call closes it for add_message",
        "core/conversation.py",
        '            if "tool_call_id" in message:\n                answered.add(message["tool_call_id"])\n            continue',
        '            if "tool_call_id" in message:\n                answered.add(message["tool_call_id"])\n                continue\n            return None',
        ("tests/test_chat_messages.py",),
    ),
    Mutant(
        "an expected integer literal is compared as a double, so a rounded timestamp beyond 2**53 passes",
        "conformance/compare.py",
        "return math.isfinite(b) and b.is_integer() and int(b) == a",
        "return math.isfinite(b) and float(b) == float(a)",
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "an expected integer literal takes the claimed tolerance",
        "conformance/compare.py",
        "    if isinstance(a, int):  # the expected literal is an integer: exact, whatever the tolerance",
        "    if isinstance(a, int) and not tolerance:",
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "extra results from a backend are not an error",
        "conformance/runner.py",
        "if not isinstance(results, list) or len(results) != len(steps):",
        "if not isinstance(results, list) or len(results) < len(steps):",
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "an E_UNSUPPORTED config counts as a pass",
        "conformance/runner.py",
        'status="skipped", reason="the backend does not support this config", required=required, **base',
        'status="passed", reason="the backend does not support this config", required=required, **base',
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "any error code passes where a config error is expected",
        "conformance/runner.py",
        'if "error" in expected and answer.get("error") == expected["error"] and "results" not in answer:',
        'if "error" in expected and "results" not in answer:',
        tests=("tests/test_runner_verdicts.py",),
    ),
    Mutant(
        "timeouts that are not in a row stop the run",
        "conformance/runner.py",
        'timeouts = timeouts + 1 if outcome.reason.startswith("no answer within") else 0',
        'timeouts = timeouts + 1 if outcome.reason.startswith("no answer within") else timeouts',
        tests=("tests/test_runner_edges.py",),
    ),
    Mutant(
        "an answer without an id is judged as the case's",
        "conformance/runner.py",
        'if answer.get("id") != case["id"]:',
        'if answer.get("id", case["id"]) != case["id"]:',
        tests=("tests/test_runner_edges.py",),
    ),
    Mutant(
        "the run ignores its tolerance",
        "conformance/runner.py",
        "outcome = judge(case, backend.ask(request_of(case)), tolerance)",
        "outcome = judge(case, backend.ask(request_of(case)))",
        tests=("tests/test_runner_edges.py",),
    ),
    Mutant(
        "a blank line from a backend is read as its answer",
        "conformance/runner.py",
        "            if line.strip():",
        "            if line:",
        tests=("tests/test_runner_edges.py",),
    ),
    Mutant(
        "items() and values() hand out the stored data",
        "core/reads.py",
        "return [(entry.key, entry.copy().data) for entry in state.index.live_by_age(now)]",
        "return [(entry.key, entry.data) for entry in state.index.live_by_age(now)]",
    ),
    Mutant(
        "a chat key of non-ASCII digits counts as a turn",
        "core/state.py",
        "return max(map(int, filter(str.isdigit, filter(str.isascii, tails))), default=0)",
        "return max(map(int, filter(str.isdigit, tails)), default=0)",
        tests=("tests/test_turn_keys.py",),
    ),
    Mutant(
        "a load sets the turn counter to the loaded turns, forgetting those stored before",
        "core/persistence.py",
        "turns=max(state.turns, largest_turn(entry.key for entry in entries)),",
        "turns=largest_turn(entry.key for entry in entries),",
        tests=("tests/test_turn_keys.py",),
    ),
    Mutant(
        "an eviction of several entries breaks retention ties toward the newer",
        "core/index.py",
        "negated = (-retention_, -updated_at, -seq, item[-1])",
        "negated = (-retention_, updated_at, seq, item[-1])",
        tests=("tests/test_bulk_eviction.py",),
    ),
    Mutant(
        "the fast fill counts an empty selection as 0 tokens",
        "core/prompt.py",
        '    if not chosen:\n        return "", (), empty',
        '    if not chosen:\n        return "", (), 0',
        tests=("tests/test_context_empty_selection.py",),
    ),
    Mutant(
        "an autosave sends only the change to a store that is not in sync",
        "shell.py",
        "    if keys is not None and in_sync and incremental:",
        "    if keys is not None and incremental:",
        tests=("tests/test_incremental_sync.py",),
    ),
    Mutant(
        "a slug cut to its length can end in a dash",
        "folder.py",
        'slug = re.sub(r"[^a-z0-9]+", "-", ascii_only).strip("-")[:SLUG_LENGTH].strip("-")',
        'slug = re.sub(r"[^a-z0-9]+", "-", ascii_only).strip("-")[:SLUG_LENGTH]',
        tests=("tests/test_folder_slugs.py",),
    ),
    Mutant(
        "the counted fill's repair drops the highest-ranked pick",
        "core/prompt.py",
        "        ranked_picks = ranked_picks[:-1]",
        "        ranked_picks = ranked_picks[1:]",
        tests=("tests/test_counted.py", "tests/spec/test_counted_properties.py"),
    ),
    Mutant(
        "the counted fill keeps a text that counts over the budget",
        "core/prompt.py",
        "    if tokens <= token_budget:\n        return text, tuple(chosen), tokens  # the joins merged",
        "    if True:\n        return text, tuple(chosen), tokens  # the joins merged",
        tests=("tests/test_counted.py", "tests/spec/test_counted_properties.py"),
    ),
    Mutant(
        "the counted fill falls back to the naive fill when the joins merge",
        "core/prompt.py",
        '    if getattr(tokenizer, "fill", None) != "counted":\n        return naive()',
        "    if True:\n        return naive()",
        tests=("tests/test_counted.py", "tests/spec/test_counted_properties.py"),
    ),
    Mutant(
        "a Python of a later Unicode reads the code points assigned since 14.0.0",
        "core/lexical.py",
        "    if not unicode14.runtime_is_reference:",
        "    if False:",
        tests=("tests/test_text.py",),
    ),
    Mutant(
        "a store in the loop gets the protocol's generations, unshifted",
        "conformance/backend.py",
        "            shifted = self._shifted(document, -self.offset)",
        "            shifted = self._shifted(document, 0)",
        tests=("tests/test_store_kit.py",),
    ),
    Mutant(
        "the per-call counters drop the most recently used",
        "shell.py",
        "            found = kept.pop(id(tokenizer), None)",
        "            found = kept.get(id(tokenizer))",
        tests=("tests/test_counted.py",),
    ),
    Mutant(
        "the LangGraph store stores an item whose expires_at is exactly now",
        "integrations/langgraph.py",
        "            if left <= 0:  # already past",
        "            if left < 0:  # already past",
        tests=("tests/test_langgraph.py",),
    ),
    Mutant(
        "the LangGraph store ignores a read's refresh_ttl",
        "integrations/langgraph.py",
        "        return memory.remember(entry.key, entry.data, ttl=span) if span > 0 else entry",
        "        return entry",
        tests=("tests/test_langgraph.py",),
    ),
    Mutant(
        "the LangGraph store's wildcard matches nothing",
        "integrations/langgraph.py",
        'return all(wanted == "*" or label == wanted for label, wanted in pairs)',
        "return all(label == wanted for label, wanted in pairs)",
        tests=("tests/test_langgraph.py",),
    ),
    Mutant(
        "the LangGraph store evicts across namespaces (one memory for all)",
        "integrations/langgraph.py",
        '    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))',
        '    return "all"',
        tests=("tests/test_langgraph.py",),
    ),
    Mutant(
        "an item with a ttl and a later expires_at lives until the expires_at",
        "integrations/langgraph.py",
        "ttl_ms = left if ttl_ms is None else min(ttl_ms, left)",
        "ttl_ms = left",
        tests=("tests/test_langgraph_edges.py",),
    ),
    Mutant(
        "a match condition longer than a namespace matches it",
        "integrations/langgraph.py",
        "    if len(namespace) < len(path):\n        return False\n",
        "",
        tests=("tests/test_langgraph_edges.py",),
    ),
    Mutant(
        "a search without a query scores 0.0 instead of None",
        "integrations/langgraph.py",
        "item.score = score if op.query else None",
        "item.score = score",
        tests=("tests/test_langgraph_edges.py",),
    ),
    # -- the OpenAI Agents SDK session (issue 43) ------------------------------------------------
    Mutant(
        "the SDK session gives each call of a response a turn of its own",
        "integrations/openai_agents.py",
        "            if group is None:\n                group, calls, still_open = [], [], set()",
        "            if True:\n                group, calls, still_open = [], [], set()",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session keeps an item's text but not the item",
        "integrations/openai_agents.py",
        '        parts.append({"type": ITEM_PART, "item": item})',
        '        parts.append({"type": ITEM_PART, "item": {}})',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session keeps no text beside an item, so the budget counts none",
        "integrations/openai_agents.py",
        '        if text:\n            parts.append({"type": "text", "text": text})',
        '        if False:\n            parts.append({"type": "text", "text": text})',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session reads no refusal's text",
        "integrations/openai_agents.py",
        '            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):',
        '            elif part.get("type") == "refusal_" and isinstance(part.get("refusal"), str):',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session reads a custom call's input as no arguments",
        "integrations/openai_agents.py",
        '    arguments = item.get("arguments", item.get("input"))',
        '    arguments = item.get("arguments")',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's get_items(0) reads every item",
        "integrations/openai_agents.py",
        "            kept = kept[-limit:] if limit else []",
        "            kept = kept[-limit:]",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's negative limit reads a tail",
        "integrations/openai_agents.py",
        "        if limit is not None and limit >= 0:",
        "        if limit is not None:",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's get_items ignores its budget",
        "integrations/openai_agents.py",
        "        if resolved is None and self._token_budget is not None:",
        "        if False:",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's budgeted history loses its system message",
        "integrations/openai_agents.py",
        '        out: list[dict[str, Any]] = [{"role": "system", "content": message["content"]} for message in messages[:lead]]',
        "        out: list[dict[str, Any]] = []",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's filter passes every request unchanged",
        "integrations/openai_agents.py",
        "        if self._token_budget is None:\n            return model_data\n        try:",
        "        if True:\n            return model_data\n        try:",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK budget does not count the instructions",
        "integrations/openai_agents.py",
        "    fixed = [instructions] if instructions is not None else []",
        "    fixed = []",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK budget sends an output that answers no call",
        "integrations/openai_agents.py",
        "        if message is not None and not _is_orphan(message, turn):\n            kept.extend(turn)\n    return kept",
        "        if message is not None:\n            kept.extend(turn)\n    return kept",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK budget cuts the leading system items like any turn",
        "integrations/openai_agents.py",
        '    while lead < len(checked) and _kind(checked[lead]) == "input" and checked[lead]["role"] != "user":',
        "    while False:",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session forgets the calls the memory holds open",
        "integrations/openai_agents.py",
        "            messages = _turns(checked, self._open_calls())",
        "            messages = _turns(checked)",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's pop drops a whole response",
        "integrations/openai_agents.py",
        "                if len(items) == 1:\n                    self._memory.forget(key)",
        "                if True:\n                    self._memory.forget(key)",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's pop returns the oldest item of a turn",
        "integrations/openai_agents.py",
        "                last: dict[str, Any] = items[-1]",
        "                last: dict[str, Any] = items[0]",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session's clear forgets the facts too",
        "integrations/openai_agents.py",
        "            for key, _, _ in self._turns_now():\n                self._memory.forget(key)",
        "            for key in list(self._memory):\n                self._memory.forget(key)",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session lets a non-JSON item's error pass unexplained",
        "integrations/openai_agents.py",
        '        except TypeError as error:\n            raise TypeError(\n                f"items[{i}] (type',
        '        except OSError as error:\n            raise TypeError(\n                f"items[{i}] (type',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session forgets that a turn holds an item 3 containers deep",
        "integrations/openai_agents.py",
        '            copy_json([[[item]]], what="the turn")',
        '            copy_json([item], what="the turn")',
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "the SDK session writes on the event loop's thread",
        "integrations/openai_agents.py",
        "            await _settled(asyncio.to_thread(self.add, checked))",
        "            self.add(checked)",
        tests=OPENAI_AGENTS,
    ),
    Mutant(
        "a session turn stored with empty text gives back no item",
        "integrations/openai_agents.py",
        'if text or not message.get("tool_calls"):',
        "if text:",
        tests=("tests/test_openai_agents_edges.py",),
    ),
    Mutant(
        "the session's open calls include those already answered",
        "integrations/openai_agents.py",
        'return {call["id"] for call in message.get("tool_calls", ())} - answered',
        'return {call["id"] for call in message.get("tool_calls", ())}',
        tests=("tests/test_openai_agents_edges.py",),
    ),
    Mutant(
        "the session's request filter counts with the estimator, not the memory's tokenizer",
        "integrations/openai_agents.py",
        "tokenizer=self._tokenizer or self._memory.state.config.tokenizer,",
        "tokenizer=self._tokenizer,",
        tests=("tests/test_openai_agents_edges.py",),
    ),
    Mutant(
        "an assistant's output_text is not counted",
        "integrations/openai_agents.py",
        '_TEXT_PARTS = frozenset(("input_text", "output_text", "text"))',
        '_TEXT_PARTS = frozenset(("input_text", "text"))',
        tests=("tests/test_openai_agents_edges.py",),
    ),
    # -- issue 45: the code added since the last round ------------------------------------------
    Mutant(
        "the counted fill's repair refuses a text that counts exactly the budget",
        "core/prompt.py",
        '        if tokens <= token_budget:\n            return text, tuple(chosen), tokens\n    return "", (), empty\n\n\ndef _greedy',
        '        if tokens < token_budget:\n            return text, tuple(chosen), tokens\n    return "", (), empty\n\n\ndef _greedy',
        tests=EDGES,
    ),
    Mutant(
        "get_messages rounds the facts' share up",
        "core/request.py",
        "reserve = math.floor(token_budget * share)",
        "reserve = math.ceil(token_budget * share)",
        tests=EDGES,
    ),
    Mutant(
        "get_messages needs more than MESSAGE_TOKENS left for the facts",
        "core/request.py",
        'while left >= 0 and count_tokens(counting, "") <= left:',
        'while left > 0 and count_tokens(counting, "") <= left:',
        tests=EDGES,
    ),
    Mutant(
        "a turn key of exactly the digit limit is no turn",
        "core/turns.py",
        "len(tail) <= MAX_TURN_DIGITS",
        "len(tail) < MAX_TURN_DIGITS",
        tests=EDGES,
    ),
    Mutant(
        "two turns of one number are ordered by seq alone",
        "core/index.py",
        "    return (int(entry.key[5:]), entry.updated_at, entry.seq, entry)",
        "    return (int(entry.key[5:]), entry.seq, entry.seq, entry)",
        tests=EDGES,
    ),
    Mutant(
        "the line-count cache keeps its older half",
        "core/tokens.py",
        "kept = dict(itertools.islice(kept.items(), len(kept) // 2, None))",
        "kept = dict(itertools.islice(kept.items(), 0, len(kept) // 2))",
        tests=EDGES,
    ),
    Mutant(
        "the line-count cache keeps its old character total after halving",
        "core/tokens.py",
        "                self._chars = sum(map(len, kept))\n",
        "",
        tests=EDGES,
    ),
    Mutant(
        "the line-count cache counts a repeated line once per time it appears",
        "core/tokens.py",
        "missing = list(dict.fromkeys(itertools.compress(lines, map(operator.is_, counts, itertools.repeat(None)))))",
        "missing = list(itertools.compress(lines, map(operator.is_, counts, itertools.repeat(None))))",
        tests=EDGES,
    ),
    Mutant(
        "a legacy tool turn is a fact",
        "core/turns.py",
        'LEGACY_ROLES = frozenset({"user", "assistant", "system", "tool"})',
        'LEGACY_ROLES = frozenset({"user", "assistant", "system"})',
        tests=EDGES,
    ),
    Mutant(
        "a bare role string is a turn",
        "core/turns.py",
        "if found and role in LEGACY_ROLES:",
        "if role in LEGACY_ROLES:",
        tests=EDGES,
    ),
    Mutant(
        "a LangChain block that is not text is left out (kept in part, INT-1)",
        "integrations/langchain/__init__.py",
        "            parts.append(copy_json(block, what=where))",
        '            if block["type"] == "text":\n                parts.append(copy_json(block, what=where))',
        tests=EDGES,
    ),
    Mutant(
        "a huge integer is shown by repr until 100,000 bits",
        "core/shown.py",
        "if x.bit_length() > 1000:",
        "if x.bit_length() > 100_000:",
        tests=EDGES,
    ),
    Mutant(
        "an integer of 1,000 bits is shown by its size",
        "core/shown.py",
        "if x.bit_length() > 1000:",
        "if x.bit_length() >= 1000:",
        tests=EDGES,
    ),
    Mutant(
        "an argument that cannot be shown raises from the message",
        "core/shown.py",
        '        return f"<{type(value).__name__} object>"',
        "        raise",
        tests=EDGES,
    ),
    Mutant(
        "the entry table takes two entries with one key",
        "core/table.py",
        '        if len(self._by_key) != len(self._by_seq):\n            raise ValueError("a table holds one entry per key")\n\n    @classmethod',
        "\n    @classmethod",
        tests=EDGES,
    ),
    Mutant(
        "a changed entry table takes an added entry under a stored key",
        "core/table.py",
        "if len(by_key) != len(by_seq):",
        "if False:",
        tests=EDGES,
    ),
    Mutant(
        "the command line exits 1 on a conflicting save",
        "cli.py",
        '        print(f"sentinel-memory: {error}; nothing changed, run the command again", file=sys.stderr)\n        return LOCKED',
        '        print(f"sentinel-memory: {error}; nothing changed, run the command again", file=sys.stderr)\n        return 1',
        tests=EDGES,
    ),
    Mutant(
        "the command line waits for ever with --wait inf",
        "cli.py",
        'if not 0 <= value < float("inf"):',
        'if not 0 <= value <= float("inf"):',
        tests=EDGES,
    ),
    Mutant(
        "an async compaction that dropped nothing is saved",
        "shell.py",
        "return Outcome(state, dropped, persist=bool(dropped), keys=_dropped_keys(dropped), logged=dropped)",
        "return Outcome(state, dropped, persist=True, keys=_dropped_keys(dropped), logged=dropped)",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "an async forget of a missing key is saved",
        "shell.py",
        "return Outcome(state if removed else None, removed, keys=(key,))",
        "return Outcome(state, removed, keys=(key,))",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "an async cache.put is saved",
        "shell.py",
        "return Outcome(core.cache_put(start, key, value, now=now(), **options), persist=False)",
        "return Outcome(core.cache_put(start, key, value, now=now(), **options), persist=True)",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "on_evict runs after the autosave",
        "shell.py",
        "            if dropped and self.on_evict is not None:\n                self.on_evict(dropped)\n"
        "            if persist and self.autosave:\n                if self.groups:\n"
        "                    self.defer(before, keys)  # the group saves once, at its end (MW-10)\n"
        "                else:\n                    yield from self.save(before, state, keys)\n",
        "            if persist and self.autosave:\n                if self.groups:\n"
        "                    self.defer(before, keys)  # the group saves once, at its end (MW-10)\n"
        "                else:\n                    yield from self.save(before, state, keys)\n"
        "            if dropped and self.on_evict is not None:\n                self.on_evict(dropped)\n",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "an explicit compaction is not logged",
        "shell.py",
        "        logs.dropped(self.store, outcome.logged)\n",
        "",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async memory logs an explicit compaction a second time",
        "aio.py",
        'dropped: Compaction = await self._change("compact")  # logged by the plumbing (LOG-2), once',
        'dropped: Compaction = await self._change("compact")\n'
        '        __import__("sentinel_memory.logs").logs.dropped(self.store, dropped)',
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the native engine never makes a shared change a transaction",
        "aio.py",
        "        if plumbing.needs_transaction(name):",
        "        if False:",
        tests=("tests/test_async.py",),
    ),
    Mutant(
        "a cancel reaches a change that has its turn",
        "aio.py",
        "            return await asyncio.shield(inner)",
        "            return await inner",
        tests=("tests/test_async.py",),
    ),
    Mutant(
        "the async memory reads with a clock that is no number",
        "shell.py",
        "    if not is_number(now):",
        "    if False:",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async memory gives another task's change the turn it holds",
        "aio.py",
        "        if self._owner is not None and self._owner is task:",
        "        if self._owner is not None:",
        tests=("tests/test_async.py",),
    ),
    Mutant(
        "a compaction that dropped nothing is logged",
        "logs.py",
        "if not compaction or not logger.isEnabledFor(logging.INFO):",
        "if not logger.isEnabledFor(logging.INFO):",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the log swaps the expired and evicted counts",
        "logs.py",
        'logger.info("%r: %d expired, %d evicted", where, len(expired), len(evicted))',
        'logger.info("%r: %d expired, %d evicted", where, len(evicted), len(expired))',
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the debug log lists the expired keys as evicted",
        "logs.py",
        '[e.key for e in expired] or "-", [e.key for e in evicted] or "-"',
        '[e.key for e in expired] or "-", [e.key for e in expired] or "-"',
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async Redis store never notes an outage",
        "stores/aioredis.py",
        "self._unreachable = isinstance(mapped, StoreConnectionError) or self._unreachable",
        "self._unreachable = self._unreachable",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async Redis store says it is reachable again on every call",
        "stores/aioredis.py",
        "            self._unreachable = False\n",
        "",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async Redis store's preserved copy never expires",
        "stores/aioredis.py",
        "px=self.idle_ms or None",
        "px=None",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async Redis store forgets a lease set for a cancelled lock()",
        "stores/aioredis.py",
        "        except (StoreConnectionError, asyncio.CancelledError):\n"
        "            self._unreleased.append((lease, token))  # Redis may have set it and not answered",
        "        except StoreConnectionError:\n"
        "            self._unreleased.append((lease, token))  # Redis may have set it and not answered",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the async Redis store never releases the leases it could not",
        "stores/aioredis.py",
        "            await self._release_unreleased()",
        "            pass",
        tests=ASYNC_ENGINE,
    ),
    Mutant(
        "the kit lets a save over damage through",
        "testing.py",
        '        _refuses(lambda: store.save({"version": 1, "entries": []}), "store.save() over the damage (MW-7)")\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit lets a store that loads damage as empty through",
        "testing.py",
        '        _refuses(lambda: make(store=store, autosave=True), "a memory loading the damaged store")\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit does not time the lock wait",
        "testing.py",
        '            assert 0.18 <= waited < 2, f"lock_wait was 0.2 s, but the lock gave up after {waited:.2f} s"\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit never changes a document after saving it",
        "testing.py",
        '        entries.append("junk")\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit never changes a document after loading it",
        "testing.py",
        '        loaded["entries"].append("junk")\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit saves and reloads no expiresAt",
        "testing.py",
        "importance=1, ttl=10_000)",
        "importance=1)",
        tests=KIT,
    ),
    Mutant(
        "the kit takes an empty memory for a store never saved",
        "testing.py",
        "        assert store.load() is None\n",
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit does not reload the generation",
        "testing.py",
        "assert mem.generation == 3 and make(store=store).generation == 3",
        "assert mem.generation == 3",
        tests=KIT,
    ),
    Mutant(
        "the kit does not reload the working memory",
        "testing.py",
        '        assert again.working.get() == {"task": "refund", "step": 2} and again.cache.get("scratch") is None',
        '        assert again.cache.get("scratch") is None',
        tests=KIT,
    ),
    Mutant(
        "the kit's big number fits a double",
        "testing.py",
        '"czech": "Příliš žluťoučký", "n": 2**53 + 1,',
        '"czech": "Příliš žluťoučký", "n": 2**53,',
        tests=KIT,
    ),
    Mutant(
        "the kit does not reload the writes after a lossy load",
        "testing.py",
        '        assert dict(loaded.items()) == {"chat:3": 2, "x": 1, "chat:4": {"role": "user", "content": "hi"}}\n',
        "",
        tests=KIT,
    ),
    Mutant(
        "the kit does not look at the store after a conflicting autosave",
        "testing.py",
        '        assert not second.has("b") and _fields(make(store=store)) == _fields(first)',
        '        assert not second.has("b")',
        tests=KIT,
    ),
    Mutant(
        "the kit does not count what the shared writers left",
        "testing.py",
        "        assert final.size() == workers * each and final.generation == workers * each\n",
        "",
        tests=KIT,
    ),
    Mutant(
        "in_processes calls a worker that raised a success",
        "testing.py",
        "                work(worker)\n                code = 0",
        "                code = 0\n                work(worker)",
        tests=KIT,
    ),
    Mutant(
        "in_processes returns raw wait statuses",
        "testing.py",
        "os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])",
        "os.waitpid(pid, 0)[1]",
        tests=KIT,
    ),
    Mutant(
        "the history check misses two writers' acknowledged saves of one generation",
        "testing.py",
        'other = seen.setdefault(save["generation"], save)',
        'other = seen.setdefault((save["generation"], save["worker"]), save)',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check passes a read one generation stale",
        "testing.py",
        'elif read.get("generation") is not None and read["generation"] < floor:',
        'elif read.get("generation") is not None and read["generation"] < floor - 1:',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check counts a read that starts as a save ends as after it",
        "testing.py",
        'before = bisect.bisect_left(ends, read["start"])',
        'before = bisect.bisect_right(ends, read["start"])',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check passes a torn document missing an entry",
        "testing.py",
        'read["entries"] != read.get("generation")',
        'read["entries"] > read.get("generation")',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check misses an acknowledged remember absent from a final document that holds others",
        "testing.py",
        'if event["op"] == "remember" and "error" not in event and event["key"] not in stored:',
        'if event["op"] == "remember" and "error" not in event and not stored:',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check reports only a shared writer that conflicted",
        "testing.py",
        '            if "error" in event:',
        '            if "error" in event and "Conflict" in event["error"]:',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check passes a read that finds nothing after the first save",
        "testing.py",
        'if read.get("missing") and floor:',
        'if read.get("missing") and floor > 1:',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the history check misses two writers holding lock() at once",
        "testing.py",
        'if second["start"] < first["end"] and second["worker"] != first["worker"]:',
        'if second["start"] < first["start"] and second["worker"] != first["worker"]:',
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the lock check passes a lock() that keeps another store object out for only a moment",
        "testing.py",
        "taker.join(0.5)",
        "taker.join(0.005)",
        tests=("tests/test_store_kit_history.py",),
    ),
    Mutant(
        "the random mode's messages rule sends get_context",
        "tests/spec/test_differential.py",
        '        self.send("get_messages", wait, **args)',
        '        self.send("get_context", wait, **args)',
        tests=CENSUS,
    ),
    Mutant(
        # (Deleting the bad-arguments rule's get_messages is no mutant any more: three rules send failing ones.)
        "the random mode never sends get_messages a system prompt that is no str",
        "tests/spec/test_differential.py",
        'system=st.sampled_from([None, "You are a waiter.", 5]),',
        'system=st.sampled_from([None, "You are a waiter."]),',
        tests=CENSUS,
    ),
    Mutant(
        "the random mode's second memory is the first",
        "tests/spec/test_differential.py",
        'step = {"op": op, "args": args, "now": self.now, "memory": 2}',
        'step = {"op": op, "args": args, "now": self.now}',
        tests=CENSUS,
    ),
    Mutant(
        "the random mode never loads a store that holds nothing",
        "tests/spec/test_differential.py",
        '            st.just({"missing": True}),\n',
        "",
        tests=CENSUS,
    ),
    Mutant(
        "the random mode remembers text only",
        "tests/spec/test_differential.py",
        "@rule(key=st.sampled_from(KEYS), value=data, importance=importances, ttl=ttls, wait=waits)",
        "@rule(key=st.sampled_from(KEYS), value=texts, importance=importances, ttl=ttls, wait=waits)",
        tests=CENSUS,
    ),
    Mutant(
        "the random mode's clock never goes back",
        "tests/spec/test_differential.py",
        "st.sampled_from([-1, -15, 0.5 / MINUTE, 1e-3]),",
        "st.sampled_from([0.5 / MINUTE, 1e-3]),",
        tests=CENSUS,
    ),
    Mutant(
        "the random mode's turns always have a string role",
        "tests/spec/test_differential.py",
        'role=st.sampled_from(["user", "assistant", "", 5])',
        'role=st.sampled_from(["user", "assistant", ""])',
        tests=CENSUS,
    ),
    Mutant(
        "the random mode's get never has a default",
        "tests/spec/test_differential.py",
        'default=st.sampled_from([None, None, "<missing>", 0]),',
        "default=st.sampled_from([None]),",
        tests=CENSUS,
    ),
    Mutant(
        "the LangChain adapter keeps an AIMessage with invalid tool calls",
        "integrations/langchain/__init__.py",
        "        if message.invalid_tool_calls:\n            raise TypeError(",
        "        if False:\n            raise TypeError(",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain history lists turns in the order they were stored, not by N",
        "integrations/langchain/__init__.py",
        "        turns.sort(key=lambda turn: turn[0])  # stable: entries of one N stay oldest first\n",
        "",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain history's clear forgets a chat:N fact",
        "integrations/langchain/__init__.py",
        "keys = [key for key, data in self._memory.items() if is_turn_key(key) and chat_message(data) is not None]",
        "keys = [key for key, data in self._memory.items() if is_turn_key(key)]",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain history's turns never expire",
        "integrations/langchain/__init__.py",
        "self._memory.add_messages(turns, importance=self._importance, ttl=self._ttl)",
        "self._memory.add_messages(turns, importance=self._importance)",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter keeps a ChatMessage of a role no chat API takes (an empty one too)",
        "integrations/langchain/__init__.py",
        "        if role not in ROLES:\n            raise ValueError",
        "        if False:\n            raise ValueError",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter keeps a block with no JSON form by dropping it (INT-1)",
        "integrations/langchain/__init__.py",
        '        except TypeError as error:\n            raise TypeError(\n                f"{where}, the',
        '        except TypeError as error:\n            continue\n            raise TypeError(\n                f"{where}, the',
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter keeps a plain string block as an empty text",
        "integrations/langchain/__init__.py",
        'block = {"type": "text", "text": item} if isinstance(item, str) else item',
        'block = {"type": "text", "text": ""} if isinstance(item, str) else item',
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter keeps an empty list of blocks as an empty list",
        "integrations/langchain/__init__.py",
        '        return ""  # a chat API takes no empty list of parts',
        "        return []  # a chat API takes no empty list of parts",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter leaves a text block's type check to the memory (its error names no message type)",
        "integrations/langchain/__init__.py",
        '        if block["type"] == "text" and not isinstance(block.get("text"), str):',
        "        if False:",
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter drops a message's name",
        "integrations/langchain/__init__.py",
        '    if message.name is not None:\n        turn["name"] = message.name',
        '    if False:\n        turn["name"] = message.name',
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter reads a list of parts back as its text",
        "integrations/langchain/__init__.py",
        '    body: str | list[Any] = "" if content is None else copy_json(content, what="content")',
        '    body: str | list[Any] = content if isinstance(content, str) else ""',
        tests=LANGCHAIN,
    ),
    Mutant(
        "the LangChain adapter writes call args with no JSON form as their repr",
        "integrations/langchain/__init__.py",
        'arguments = json.dumps(copy_json(call["args"], what="args"), ensure_ascii=False)',
        'arguments = json.dumps(call["args"], ensure_ascii=False, default=repr)',
        tests=LANGCHAIN,
    ),
    Mutant(
        "the middleware records every message of the state again",
        "integrations/langchain/middleware.py",
        "new = [message for message in messages if message.id is None or message.id not in recorded]",
        "new = list(messages)",
        tests=AGENT,
    ),
    Mutant(
        "the middleware never notes what it recorded",
        "integrations/langchain/middleware.py",
        "            RECORDED: [message.id for message in messages if message.id is not None],",
        "            RECORDED: [],",
        tests=("tests/test_agent_server.py", *AGENT),
    ),
    Mutant(
        "the middleware's model sees the agent's messages, not the memory's request",
        "integrations/langchain/middleware.py",
        "        return handler(self._request(request))",
        "        return handler(request)",
        tests=AGENT,
    ),
    Mutant(
        "the middleware's async model call sees the agent's messages",
        "integrations/langchain/middleware.py",
        "        return await handler(await run_in_executor(None, self._request, request))",
        "        return await handler(request)",
        tests=AGENT,
    ),
    Mutant(
        "the middleware builds the async request on the event loop",
        "integrations/langchain/middleware.py",
        "        return await handler(await run_in_executor(None, self._request, request))",
        "        return await handler(self._request(request))",
        tests=AGENT,
    ),
    Mutant(
        "the middleware records on the event loop",
        "integrations/langchain/middleware.py",
        "        return await run_in_executor(None, self._record, state, runtime)\n\n    def after_agent",
        "        return self._record(state, runtime)\n\n    def after_agent",
        tests=AGENT,
    ),
    Mutant(
        "the middleware never records the last reply",
        "integrations/langchain/middleware.py",
        "        return self._record(state, runtime)\n\n    async def aafter_agent",
        "        return None\n\n    async def aafter_agent",
        tests=AGENT,
    ),
    Mutant(
        "the middleware ranks the facts by no query",
        "integrations/langchain/middleware.py",
        "            query=query or None,",
        "            query=None,",
        tests=AGENT,
    ),
    Mutant(
        "the middleware leaves the app's system prompt out",
        "integrations/langchain/middleware.py",
        "            system=system,\n",
        "            system=None,\n",
        tests=AGENT,
    ),
    Mutant(
        "the middleware keeps a system prompt's image block by dropping it",
        "integrations/langchain/middleware.py",
        "            if not isinstance(content, str) and not all(",
        "            if False and not all(",
        tests=AGENT,
    ),
    Mutant(
        "the middleware ranks the facts by the request's first question",
        "integrations/langchain/middleware.py",
        "query = next((m.text for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)",
        "query = next((m.text for m in request.messages if isinstance(m, HumanMessage)), None)",
        tests=("tests/test_langchain_middleware_options.py",),
    ),
    Mutant(
        "the middleware's recorded turns never expire",
        "integrations/langchain/middleware.py",
        "entries = memory.add_messages(turns, importance=self._importance, ttl=self._ttl)",
        "entries = memory.add_messages(turns, importance=self._importance, ttl=None)",
        tests=("tests/test_langchain_middleware_options.py",),
    ),
    Mutant(
        "the middleware ignores facts_share",
        "integrations/langchain/middleware.py",
        "            facts_share=self._facts_share,",
        "            facts_share=None,",
        tests=("tests/test_langchain_middleware_options.py",),
    ),
    Mutant(
        "from_folder drops must_keep",
        "integrations/langchain/middleware.py",
        "            must_keep=must_keep,\n",
        "",
        tests=("tests/test_langchain_middleware_options.py",),
    ),
    Mutant(
        "an async agent never records the question before the model call",
        "integrations/langchain/middleware.py",
        '            The state update that lists the recorded ids when messages were recorded, else None.\n        """\n        return await run_in_executor(None, self._record, state, runtime)\n\n    def after_agent(',
        '            The state update that lists the recorded ids when messages were recorded, else None.\n        """\n        return None\n\n    def after_agent(',
        tests=("tests/test_langchain_middleware_options.py",),
    ),
    Mutant(
        "the LangChain adapter passes a lone surrogate on",
        "integrations/langchain/__init__.py",
        "        if not is_json_text(content):",
        "        if False:",
        tests=LANGCHAIN,
    ),
    Mutant(
        "an empty table's last seq is 1 (found by mutmut)",
        "core/table.py",
        "return -1 if last is None else last[0]",
        "return 1 if last is None else last[0]",
        tests=EDGES,
    ),
    Mutant(
        "two entries with one seq raise TypeError (found by mutmut)",
        "core/table.py",
        'raise ValueError("a table holds one entry per seq") from None',
        'raise TypeError("a table holds one entry per seq") from None',
        tests=EDGES,
    ),
    Mutant(
        "a table holds no key (found by mutmut; its inverse hangs add_turn)",
        "core/table.py",
        "        return key in self._by_key",
        "        return False",
        tests=EDGES,
    ),
    Mutant(
        "a table's keys view iterates another table (found by mutmut)",
        "core/table.py",
        "class _Keys(KeysView[str]):\n    def __init__(self, table: Table) -> None:\n"
        "        super().__init__(table)\n        self._table = table",
        "class _Keys(KeysView[str]):\n    def __init__(self, table: Table) -> None:\n"
        "        super().__init__(table)\n        self._table = Table()",
        tests=EDGES,
    ),
    Mutant(
        "the pydantic-ai history stores a message it has seen again",
        "integrations/pydantic_ai.py",
        "(i, message) for i, message in enumerate(messages) if self._known.get(id(message)) is not message",
        "(i, message) for i, message in enumerate(messages)",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history never stores a run's final answer",
        "integrations/pydantic_ai.py",
        "        await self.arecord(result.all_messages(), deps=ctx.deps)\n        return result",
        "        return result",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "a pydantic-ai response's tool calls are not kept as calls",
        "integrations/pydantic_ai.py",
        'extra = {"tool_calls": calls} if calls else {}',
        "extra = {}",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "a pydantic-ai response's text is not counted",
        "integrations/pydantic_ai.py",
        "texts = [part.content for part in message.parts if isinstance(part, TextPart)]",
        "texts = []",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "a pydantic-ai system prompt alone is stored as a user turn",
        "integrations/pydantic_ai.py",
        '"system" if every_system else "user"',
        '"user"',
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the turns of two alike pydantic-ai messages merge",
        "integrations/pydantic_ai.py",
        "and place[0] == group[1] + 1 and group[2] == place[2]:",
        "and place[0] == group[1] + 1:",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "a pydantic-ai message's parts come back in turn order, not in their places",
        "integrations/pydantic_ai.py",
        "[placed[j] for j in sorted(placed)]",
        "list(placed.values())",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history ranks the facts without the newest question",
        "integrations/pydantic_ai.py",
        '                    return "\\n".join(_texts(part))',
        "                    return None",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history's async form does the I/O on the event loop",
        "integrations/pydantic_ai.py",
        "return await anyio.to_thread.run_sync(functools.partial(self.process, list(messages), deps=deps))",
        "return self.process(list(messages), deps=deps)",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history's load(limit) takes the oldest messages",
        "integrations/pydantic_ai.py",
        "out = out[len(out) - limit :] if limit > 0 else []",
        "out = out[:limit]",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history drops must_keep",
        "integrations/pydantic_ai.py",
        "            must_keep=self._must_keep,",
        "            must_keep=None,",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai history doubles its budget",
        "integrations/pydantic_ai.py",
        "            token_budget=self._budget - self._reserve,",
        "            token_budget=self._budget * 2 - self._reserve,",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "the pydantic-ai view's messages are unknown to the history",
        "integrations/pydantic_ai.py",
        "            self._read_known[memory] = known\n            self._remember(out)",
        "            self._read_known[memory] = known",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "pydantic-ai's own record parts become a user turn",
        "integrations/pydantic_ai.py",
        "if made and rest and not speaks:",
        "if False:",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "a pydantic-ai part with no JSON form is not named",
        "integrations/pydantic_ai.py",
        '                _ANY_PART.dump_python(part, mode="json")',
        "                pass",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "an item that is not a pydantic-ai message passes the check",
        "integrations/pydantic_ai.py",
        "if not isinstance(message, ModelRequest | ModelResponse):",
        "if message is None:",
        tests=PYDANTIC_AI,
    ),
    Mutant(
        "an empty request passes the validator",
        "core/chat.py",
        "    if not listed:  # what get_messages returns with nothing to send (MSG-10)",
        "    if False:  # what get_messages returns with nothing to send (MSG-10)",
        tests=("tests/test_chat_messages.py",),
    ),
    Mutant(
        "a cancel that lands inside a save cancels the save too",
        "aio.py",
        "            return await asyncio.shield(inner)\n        except asyncio.CancelledError:",
        "            return await inner\n        except asyncio.CancelledError:",
        tests=("tests/test_async_cancel_in_save.py",),
    ),
    Mutant(
        "a field name is compared through the caller's own ==",
        "core/chat.py",
        "        name = str.__str__(key) if isinstance(key, str) else None",
        "        name = key if isinstance(key, str) else None",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "a message's content is counted as if it were not inside the message",
        "core/chat.py",
        "return copy_json(content, what=where, inside=1)",
        "return copy_json(content, what=where, inside=0)",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "the depth error names the path's first word instead of the value the caller passed",
        "core/jsondata.py",
        'raise ValueError(f"{root[0]} is nested more than {MAX_DEPTH} containers deep")',
        "raise ValueError(f\"{root[0].split('[', 1)[0]} is nested more than {MAX_DEPTH} containers deep\")",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "the validator iterates the request through its own iteration",
        "core/chat.py",
        'listed = read_list(messages, "messages")',
        "listed = list(messages)",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "a system prompt with a lone surrogate reaches the tokenizer",
        "core/request.py",
        "        if not is_json_text(system):  # no request can carry it",
        "        if False:  # no request can carry it",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "a list whose iteration raises passes its own exception on",
        "core/jsondata.py",
        "        return list(value)\n    except Exception as error:",
        "        return list(value)\n    except ArithmeticError as error:",
        tests=NAMED_ERRORS,
    ),
    Mutant(
        "a span that failed to end leaves the contexts it was current in",
        "telemetry.py",
        "        finally:\n            # Both contexts go back",
        "        else:\n            # Both contexts go back",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a processor's on_end raising reaches the memory",
        "telemetry.py",
        "        except Exception as failure:  # OTL-8: a processor's on_end, after the change is committed",
        "        except ArithmeticError as failure:  # OTL-8: a processor's on_end, after the change is committed",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a sampler raising at a span's start reaches the memory",
        "telemetry.py",
        "    except Exception as error:  # OTL-8: a sampler or a processor's on_start: no span, the operation goes on",
        "    except ArithmeticError as error:  # OTL-8: a sampler or a processor's on_start: no span, the operation goes on",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a broken provider's get_tracer reaches the memory",
        "telemetry.py",
        "    except Exception as error:  # OTL-8: a broken provider is no provider",
        "    except ArithmeticError as error:  # OTL-8: a broken provider is no provider",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a span that cannot record an error hides the block's exception",
        "telemetry.py",
        '        except Exception as failure:  # OTL-8: the block\'s own exception, if any, goes on unchanged\n            _failed("error", failure)',
        "        except Exception as failure:  # OTL-8: the block's own exception, if any, goes on unchanged\n            raise",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "an annotation that raised is passed on",
        "telemetry.py",
        "        getattr(span, method)(*args)\n    except Exception as error:\n        _failed(method, error)",
        "        getattr(span, method)(*args)\n    except Exception as error:\n        raise",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a span that cannot say whether it records reaches the memory",
        "telemetry.py",
        "        recording = span.is_recording()\n    except Exception as error:",
        "        recording = span.is_recording()\n    except ArithmeticError as error:",
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "a telemetry failure is not logged",
        "telemetry.py",
        '    _LOGGER.warning(\n        "telemetry failed',
        '    _LOGGER.debug(\n        "telemetry failed',
        tests=TELEMETRY_FAILURES,
    ),
    Mutant(
        "the pydantic-ai history ranks the facts by the first question",
        "integrations/pydantic_ai.py",
        "    for message in reversed(messages):\n        if isinstance(message, ModelRequest):\n            for part in reversed(message.parts):",
        "    for message in messages:\n        if isinstance(message, ModelRequest):\n            for part in reversed(message.parts):",
        tests=("tests/test_pydantic_ai_edges.py",),
    ),
    Mutant(
        "the pydantic-ai history's turns never expire",
        "integrations/pydantic_ai.py",
        "memory.add_messages(turns[skip:], importance=self._importance, ttl=self._ttl)",
        "memory.add_messages(turns[skip:], importance=self._importance, ttl=None)",
        tests=("tests/test_pydantic_ai_edges.py",),
    ),
    Mutant(
        "a user prompt's TextContent parts are not counted",
        "integrations/pydantic_ai.py",
        "if isinstance(item, str | TextContent)",
        "if isinstance(item, str)",
        tests=("tests/test_pydantic_ai_edges.py",),
    ),
    Mutant(
        "the spans ignore the global tracer provider an app set",
        "telemetry.py",
        'provider = getattr(api, "_TRACER_PROVIDER", _UNKNOWN)',
        "provider = None",
        tests=TELEMETRY,
    ),
    Mutant(
        "a provider that never records still makes spans",
        "telemetry.py",
        "        tracer = None  # a provider that never records costs nothing either",
        "        pass",
        tests=TELEMETRY,
    ),
    Mutant(
        "the tracer made for one provider serves the next",
        "telemetry.py",
        "if cached is not None and cached[0] is provider:",
        "if cached is not None:",
        tests=TELEMETRY,
    ),
    Mutant(
        "uninstrument keeps sending spans to the provider",
        "telemetry.py",
        '    """Stop sending spans to ``instrument``\'s provider: the global provider\'s again, if an app set one (OTL-1)."""\n    _SETTINGS.provider = None',
        '    """Stop sending spans to ``instrument``\'s provider: the global provider\'s again, if an app set one (OTL-1)."""',
        tests=TELEMETRY,
    ),
    Mutant(
        "a span is not made current, so a save is not nested in its change",
        "telemetry.py",
        "_SETTINGS.context.attach(api.set_span_in_context(self._span))",
        "_SETTINGS.context.attach(api.set_span_in_context(api.INVALID_SPAN))",
        tests=TELEMETRY,
    ),
    Mutant(
        "an error span carries the exception's message",
        "telemetry.py",
        'span.add_event("exception", {_EXCEPTION_TYPE: name})',
        'span.add_event("exception", {_EXCEPTION_TYPE: name, "exception.message": str(error)})',
        tests=TELEMETRY,
    ),
    Mutant(
        "an error span keeps its status unset",
        "telemetry.py",
        "                span.set_status(_SETTINGS.api.Status(_SETTINGS.api.StatusCode.ERROR))\n",
        "",
        tests=TELEMETRY,
    ),
    Mutant(
        "error.type is the bare class name outside builtins",
        "telemetry.py",
        'return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"',
        "return kind.__qualname__",
        tests=TELEMETRY,
    ),
    Mutant(
        "a budget that is no number is recorded",
        "telemetry.py",
        "if isinstance(token_budget, (int, float)) and not isinstance(token_budget, bool):",
        "if token_budget is not None:",
        tests=TELEMETRY,
    ),
    Mutant(
        "a forget that removed nothing counts one removed",
        "telemetry.py",
        "removed = int(bool(result))",
        "removed = 1",
        tests=TELEMETRY,
    ),
    Mutant(
        "compact()'s expired entries are left off its span",
        "telemetry.py",
        '"sentinel_memory.entries.expired": len(automatic.expired) + len(explicit.expired),',
        '"sentinel_memory.entries.expired": len(automatic.expired),',
        tests=TELEMETRY,
    ),
    Mutant(
        "a change that changed nothing reports no entries held",
        "telemetry.py",
        "kept = before if state is None else state",
        "kept = MemoryState() if state is None else state",
        tests=TELEMETRY,
    ),
    Mutant(
        "a compaction that dropped nothing is an event",
        "telemetry.py",
        "if _CURRENT.get() is None or not compaction:",
        "if _CURRENT.get() is None:",
        tests=TELEMETRY,
    ),
    Mutant(
        "compact()'s event says it was automatic",
        "telemetry.py",
        '"sentinel_memory.compaction.automatic": automatic,',
        '"sentinel_memory.compaction.automatic": True,',
        tests=TELEMETRY,
    ),
    Mutant(
        "an incremental save says it sent the whole document",
        "telemetry.py",
        "incremental, entries, deletes = True, len(what.upserts), len(what.deletes)",
        "incremental, entries, deletes = False, len(what.upserts), len(what.deletes)",
        tests=TELEMETRY,
    ),
    Mutant(
        "a load's span swaps its dropped and compacted counts",
        "telemetry.py",
        '"sentinel_memory.load.dropped": result.dropped,\n            "sentinel_memory.load.compacted": result.compacted,',
        '"sentinel_memory.load.dropped": result.compacted,\n            "sentinel_memory.load.compacted": result.dropped,',
        tests=TELEMETRY,
    ),
    Mutant(
        "get_messages' pending count is its messages'",
        "telemetry.py",
        'attributes["sentinel_memory.entries.pending"] = len(result.pending)',
        'attributes["sentinel_memory.entries.pending"] = len(result.messages)',
        tests=TELEMETRY,
    ),
    Mutant(
        "telemetry: a save is no span of its own",
        "shell.py",
        'with telemetry.operation("save", self.store, conversation=self.conversation):',
        "with telemetry._OFF:",
        tests=TELEMETRY,
    ),
    Mutant(
        "telemetry: a compaction on load or in a change is no event",
        "shell.py",
        "        telemetry.dropped(dropped, automatic=True)\n",
        "",
        tests=TELEMETRY,
    ),
    Mutant(
        "a load whose on_evict raises forgets the unsaved changes",
        "shell.py",
        "                self.generation, self.dirty, self.in_sync, self.preserve_first = before\n                self.unsaved = unsaved\n",
        "                self.generation, self.dirty, self.in_sync, self.preserve_first = before\n",
        tests=("tests/test_shell_edges.py",),
    ),
    Mutant(
        "a transaction never reloads a store whose generation went back",
        "shell.py",
        "    if found == generation:\n        return False",
        "    if found <= generation:\n        return False",
        tests=("tests/test_shell_edges.py",),
    ),
    Mutant(
        "telemetry: the sync memory's changes are no spans",
        "memory.py",
        "with telemetry.operation(\n                name, plumbing.store, conversation=plumbing.conversation\n            ):",
        "with telemetry._OFF:",
        tests=TELEMETRY,
    ),
    Mutant(
        "telemetry: the async memory's native changes are no spans",
        "aio.py",
        "with telemetry.operation(\n            name, plumbing.store, conversation=plumbing.conversation\n        ):",
        "with telemetry._OFF:",
        tests=TELEMETRY,
    ),
    # -- the ranking saved with the memory (BM-10, BM-11) -----------------------------------------
    Mutant(
        "ranking saved: a document never names it",
        "core/document.py",
        '    if ranking != "words":\n        document["ranking"] = ranking',
        '    if ranking == "function":\n        document["ranking"] = ranking',
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: the app's function is saved as words",
        "core/values.py",
        '    return ranking if isinstance(ranking, str) else "function"',
        '    return ranking if isinstance(ranking, str) else "words"',
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: a load never takes the document's",
        "core/persistence.py",
        '    ranking = saved if isinstance(saved, str) and saved in RANKINGS else "words"',
        "    ranking = saved if isinstance(saved, str) and saved in RANKINGS else state.config.ranking",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: a load takes it even when the app gave one",
        "shell.py",
        "now=self.now(), adopt=not self.ranking_given",
        "now=self.now(), adopt=True",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: create_memory marks the ranking given always",
        "memory.py",
        "memory._plumbing.ranking_given = ranking is not None",
        "memory._plumbing.ranking_given = True",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: the native async engine marks it given always",
        "aio.py",
        "engine.plumbing.ranking_given = ranking is not None",
        "engine.plumbing.ranking_given = True",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: a load of another ranking keeps saving incrementally",
        "shell.py",
        "            same_ranking = saved == ranking_name(state.config.ranking)",
        "            same_ranking = True",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: a load of another ranking does not warn",
        "core/document.py",
        "    if saved == name:\n        return None",
        '    if saved == name or saved == "words":\n        return None',
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: an empty store warns",
        "shell.py",
        "mismatch = None if document is None else ranking_problem",
        "mismatch = None if False else ranking_problem",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: stats show no ranking",
        "core/reads.py",
        '        "ranking": ranking_name(state.config.ranking),\n',
        "",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: sqlite keeps an old ranking row",
        "stores/sqlitestore.py",
        "            connection.execute(\"DELETE FROM sentinel_memory_meta WHERE name = 'ranking'\")\n",
        "",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: sqlite loads without the ranking",
        "stores/sqlitestore.py",
        'ranking = f\',"ranking":{meta["ranking"]}\' if "ranking" in meta else ""',
        'ranking = ""',
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: redis keeps an old ranking field",
        "stores/redisstore.py",
        " else redis.call('HDEL', KEYS[1], 'ranking') end",
        " end",
        tests=RANKING_SAVED,
    ),
    Mutant(
        "ranking saved: redis loads without the ranking",
        "stores/redisstore.py",
        '        if "ranking" in meta:  # a whole save names it when the document does (BM-10)',
        "        if False:  # a whole save names it when the document does (BM-10)",
        tests=RANKING_SAVED,
    ),
    # -- the BM25 ranking and the scorer seam ---------------------------------------------------
    Mutant(
        "bm25: k1 is 1.5",
        "core/bm25.py",
        "K1 = 1.2",
        "K1 = 1.5",
        tests=BM25,
    ),
    Mutant(
        "bm25: b is 0.5",
        "core/bm25.py",
        "B = 0.75",
        "B = 0.5",
        tests=BM25,
    ),
    Mutant(
        "bm25: idf adds 1 below instead of 0.5",
        "core/bm25.py",
        "(count - holders + 0.5) / (holders + 0.5)",
        "(count - holders + 0.5) / (holders + 1.0)",
        tests=BM25,
    ),
    Mutant(
        "bm25: ln's series stops at s**13",
        "core/bm25.py",
        "for k in range(12, 0, -1))",
        "for k in range(6, 0, -1))",
        tests=BM25,
    ),
    Mutant(
        "bm25: stop words are kept",
        "core/bm25.py",
        "kept = [word for word in word_sequence(text) if word not in STOP_WORDS]",
        "kept = list(word_sequence(text))",
        tests=BM25,
    ),
    Mutant(
        "bm25: a hit carries only to the entry after it",
        "core/bm25.py",
        "for j in (i - 1, i + 1):",
        "for j in (i + 1,):",
        tests=BM25,
    ),
    Mutant(
        "bm25: neighbours get a quarter of the score",
        "core/bm25.py",
        "NEIGHBOUR = 0.5",
        "NEIGHBOUR = 0.25",
        tests=BM25,
    ),
    Mutant(
        "bm25: ties skip retention",
        "core/ranking.py",
        "retentions([e.importance for e in entries], [e.updated_at for e in entries], now, recency_window),",
        "[0.0] * len(entries),",
        tests=BM25,
    ),
    Mutant(
        "bm25: the pruned search closes too early",
        "core/bm25.py",
        "> rest[i] * (1.0 + _SLACK)",
        "> rest[i] * 0.5",
        tests=BM25,
    ),
    Mutant(
        "bm25: the pruned search counts expired entries",
        "core/bm25.py",
        "gone = {entry.seq for entry in expired}",
        "gone: set[int] = set()",
        tests=BM25,
    ),
    Mutant(
        "bm25: the pruned search's floor is too high",
        "core/bm25.py",
        "heapq.nlargest(limit, partial.values())[-1] * (1.0 - _SLACK)",
        "heapq.nlargest(limit, partial.values())[-1] * 1.5",
        tests=BM25,
    ),
    Mutant(
        "bm25: postings forget a removed entry's length",
        "core/bm25.py",
        "            total -= length\n",
        "            total -= 0\n",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbour after an entry is the entry itself",
        "core/index.py",
        "probe: tuple[Any, ...] = (entry.updated_at, entry.seq + 1)",
        "probe: tuple[Any, ...] = (entry.updated_at, entry.seq)",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbour before may be expired",
        "core/index.py",
        "            if item[-2] not in expired:\n                found.append(item[-1])",
        "            if True:\n                found.append(item[-1])",
        tests=BM25,
    ),
    Mutant(
        "ranking: a scorer may return bools",
        "core/ranking.py",
        "if isinstance(value, bool) or not isinstance(value, (int, float)):",
        "if not isinstance(value, (int, float)):",
        tests=BM25,
    ),
    Mutant(
        "ranking: a scorer may return too many scores",
        "core/ranking.py",
        "if len(values) != len(entries):",
        "if len(values) > len(entries):",
        tests=BM25,
    ),
    Mutant(
        "ranking: a scorer's zero matches",
        "core/ranking.py",
        "if value > 0 and (wanted is None or entry.seq in wanted)",
        "if value >= 0 and (wanted is None or entry.seq in wanted)",
        tests=BM25,
    ),
    Mutant(
        "ranking: a neighbour that is no hit carries nothing",
        "core/ranking.py",
        "                values[key] = carried\n            elif",
        "                values[key] = 0.0\n            elif",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbours of many hits take no neighbour after",
        "core/index.py",
        "            if after < len(items):\n                near.append(items[after][-1])",
        "            if False:\n                near.append(items[after][-1])",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbours of many hits may be expired, before",
        "core/index.py",
        "            while before >= 0 and items[before][-2] in expired:",
        "            while False:",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbours of many hits may be expired, after",
        "core/index.py",
        "            while after < len(items) and items[after][-2] in expired:",
        "            while False:",
        tests=BM25,
    ),
    Mutant(
        "index: the neighbours of many hits wrap around to the newest before the oldest",
        "core/index.py",
        "            if before >= 0:\n",
        "            if before >= -1:\n",
        tests=BM25,
    ),
    Mutant(
        "ranking: a neighbour's carried score replaces a larger own one",
        "core/ranking.py",
        "            elif value < carried:",
        "            else:",
        tests=BM25,
    ),
    Mutant(
        "ranking: the pruned context carries the whole score",
        "core/ranking.py",
        "carried = bm25.NEIGHBOUR * own[seq]",
        "carried = own[seq]",
        tests=BM25,
    ),
    Mutant(
        "values: any ranking name is taken",
        "core/values.py",
        "if ranking not in RANKINGS:",
        'if ranking == "":',
        tests=BM25,
    ),
    Mutant(
        "an old module path keeps a module of its own, with none of the new module's names",
        "_moved.py",
        "    sys.modules[old] = importlib.import_module(new)\n",
        "    importlib.import_module(new)\n",
        ("tests/spec/test_moved_paths.py",),
    ),
    Mutant(
        "an old module path's warning does not name the new path",
        "_moved.py",
        'f"{old} has moved to {new}: import it from there',
        'f"{old} has moved: import it from its new place',
        ("tests/spec/test_moved_paths.py",),
    ),
    Mutant(
        "an old module path's warning points at the import system, not the importing line",
        "_moved.py",
        "stacklevel=_importer_level(),",
        "stacklevel=2,",
        ("tests/spec/test_moved_paths.py",),
    ),
    Mutant(
        "a memory's own line counter is shared by its threads without a lock",
        "shell.py",
        "        shared(default)  # the memory's own counter, which its threads share\n",
        "",
        ("tests/spec/test_moved_paths.py",),
    ),
    Mutant(
        "a store call that raised is answered as if it had returned None",
        "shell.py",
        "        if error is None:\n            self._advance(self._steps.send, result)",
        "        if True:\n            self._advance(self._steps.send, result)",
        ("tests/test_wrapper.py",),
    ),
    Mutant(
        "the shared reads read a memory at the wrong moment: get_context sees no clock",
        "reading.py",
        "                core.context(\n                    self.state,\n                    now=self._now(),",
        "                core.context(\n                    self.state,\n                    now=0,",
        ("tests/test_wrapper.py", "tests/test_async.py"),
    ),
    Mutant(
        "a history sent again is matched by its shortest lead, not its longest",
        "core/turns.py",
        "    for k in range(most, 0, -1):",
        "    for k in range(1, most + 1):",
        tests=SERVING,
    ),
    Mutant(
        "a history sent again whole is not recognised",
        "core/turns.py",
        "    most = min(len(stored), len(new))",
        "    most = min(len(stored), len(new)) - 1",
        tests=SERVING,
    ),
    Mutant(
        "an adapter's read never reloads a shared memory",
        "serving.py",
        "    if memory._plumbing.shared:",
        "    if False:",
        tests=SERVING,
    ),
    Mutant(
        "the memories kept open are closed in the order they were opened, not least recently used first",
        "serving.py",
        "            if memory is not None:\n                self._open.move_to_end(user_id)\n                return memory",
        "            if memory is not None:\n                return memory",
        tests=SERVING,
    ),
    Mutant(
        "the open memories are kept one fewer than asked",
        "serving.py",
        "            while len(self._open) > self._keep:",
        "            while len(self._open) >= self._keep:",
        tests=SERVING,
    ),
    Mutant(
        "the newest turns come newest first",
        "serving.py",
        "    found.reverse()\n    return found",
        "    return found",
        tests=SERVING,
    ),
    Mutant(
        "a run's request never moves its own turns last",
        "serving.py",
        "    if not run or [key for key, _ in newest_turns(memory, len(run))] == list(run):",
        "    if True:",
        tests=SERVING,
    ),
    Mutant(
        "a reserve equal to the budget is refused",
        "serving.py",
        "    if is_number(token_budget) and reserve > token_budget:",
        "    if is_number(token_budget) and reserve >= token_budget:",
        tests=SERVING,
    ),
    Mutant(
        "the middleware does not count the tools' schemas",
        "integrations/langchain/middleware.py",
        "        if not request.tools:\n            return 0",
        "        if True:\n            return 0",
        tests=SERVING,
    ),
    Mutant(
        "a failed LangChain run keeps what it stored",
        "integrations/langchain/middleware.py",
        '        keys = run.get("keys") or []\n        if not keys:',
        '        keys = run.get("keys") or []\n        if True:',
        tests=SERVING,
    ),
    Mutant(
        "a failed pydantic-ai run keeps what it stored",
        "integrations/pydantic_ai.py",
        "            if stored:\n                with anyio.CancelScope(shield=True):",
        "            if False:\n                with anyio.CancelScope(shield=True):",
        tests=SERVING,
    ),
    Mutant(
        "pydantic-ai runs of one memory overlap",
        "integrations/pydantic_ai.py",
        "        while not lock.acquire(blocking=False):",
        "        while False:",
        tests=SERVING,
    ),
    Mutant(
        "a refused SDK run keeps its input",
        "integrations/openai_agents.py",
        "            if keys and len(items) <= len(request) and list(request[len(request) - len(items) :]) == items:",
        "            if False:",
        tests=SERVING,
    ),
    Mutant(
        "a LangGraph batch checks a put's value only when it runs",
        "integrations/langgraph.py",
        '    copy_json(op.value, what=f"{where}.value")',
        "    pass",
        tests=SERVING,
    ),
    Mutant(
        "a task stays the owner after its change, so its next change skips the turn",
        "aio.py",
        "            self._owner = None\n            turns.release()",
        "            turns.release()",
        tests=("tests/test_async_edges.py",),
    ),
    Mutant(
        "a transaction block that raised exits a custom store's lock() as a clean exit",
        "aio.py",
        "        await block.__aexit__(type(error) if error else None, error, error.__traceback__ if error else None)",
        "        await block.__aexit__(None, None, None)",
        tests=("tests/test_async_edges.py",),
    ),
    Mutant(
        "a shared async change ended by a BaseException keeps its reload",
        "aio.py",
        "                except BaseException:\n                    plumbing.restore(before)",
        "                except Exception:\n                    plumbing.restore(before)",
        tests=("tests/test_async_edges.py",),
    ),
    Mutant(
        "check_store accepts a store with load() but no save()",
        "stores/contract.py",
        'if not (callable(getattr(store, "load", None)) and callable(getattr(store, "save", None))):',
        'if not (callable(getattr(store, "load", None)) or callable(getattr(store, "save", None))):',
        tests=("tests/test_store_contract.py",),
    ),
    Mutant(
        "MemoryStore.preserve keeps only the last document",
        "stores/contract.py",
        "                self.preserved.append(json.loads(self._text))",
        "                self.preserved[:] = [json.loads(self._text)]",
        tests=("tests/test_store_contract.py",),
    ),
    # -- group commit and durability (MW-10, PER-23, PER-24, SRV-5) ---------------------------------
    Mutant(
        "group commit: a change in a group saves at once",
        "shell.py",
        "                if self.groups:\n                    self.defer(before, keys)",
        "                if False:\n                    self.defer(before, keys)",
        tests=GROUP,
    ),
    Mutant(
        "group commit: a group that raises keeps its changes",
        "shell.py",
        "            if not ok:\n                self.state, self.unsaved, self.dirty, self.deferred = point",
        "            if False:\n                self.state, self.unsaved, self.dirty, self.deferred = point",
        tests=GROUP,
    ),
    Mutant(
        "group commit: an inner group saves too",
        "shell.py",
        "            if ok and len(self.groups) == 1 and self.deferred is not None:",
        "            if ok and len(self.groups) >= 1 and self.deferred is not None:",
        tests=GROUP,
    ),
    Mutant(
        "group commit: a save inside a group is undone by a later raise",
        "shell.py",
        "            if self.groups:\n                self.saved_point(state)",
        "            if False:\n                self.saved_point(state)",
        tests=GROUP,
    ),
    Mutant(
        "group commit: the group's save forgets the keys its changes touched",
        "shell.py",
        "            touched.update(keys)",
        "            pass",
        tests=GROUP,
    ),
    Mutant(
        "group commit: a shared group does not hold the store",
        "memory.py",
        "            with self.transaction() if plumbing.shared else contextlib.nullcontext():",
        "            with contextlib.nullcontext():",
        tests=GROUP,
    ),
    Mutant(
        "group commit: the async group that raises is not undone",
        "aio.py",
        "                await self._run(plumbing.end_group(False))",
        "                await self._run(plumbing.end_group(True))",
        tests=GROUP,
    ),
    Mutant(
        "group commit: an adapter step is a transaction without a group",
        "serving.py",
        "    with memory.transaction(), memory.group():",
        "    with memory.transaction():",
        tests=GROUP,
    ),
    Mutant(
        "durability: normal still fsyncs the folder",
        "stores/filestore.py",
        '        if durability == "full":\n            _sync(folder)',
        '        if durability != "none":\n            _sync(folder)',
        tests=GROUP,
    ),
    Mutant(
        "durability: none still fsyncs the file",
        "stores/filestore.py",
        'sync=durability != "none")',
        "sync=True)",
        tests=GROUP,
    ),
    Mutant(
        "durability: SQLite's normal is FULL",
        "stores/sqlitestore.py",
        '_SYNCHRONOUS = {"full": "FULL", "normal": "NORMAL", "none": "OFF"}',
        '_SYNCHRONOUS = {"full": "FULL", "normal": "FULL", "none": "OFF"}',
        tests=GROUP,
    ),
    Mutant(
        "layout: the entries' closing bracket is not on a line of its own",
        "stores/jsontext.py",
        '",\\n".join(json_text(entry) for entry in value) + "\\n]"',
        '",\\n".join(json_text(entry) for entry in value) + "]"',
        tests=GROUP,
    ),
    Mutant(
        "conversation: spans never carry the conversation id",
        "telemetry.py",
        "    if conversation is not None:\n        attributes[_CONVERSATION_ID] = conversation",
        "    if False:\n        attributes[_CONVERSATION_ID] = conversation",
        tests=CONVERSATION,
    ),
    Mutant(
        "conversation: the hash is cut one digit short",
        "telemetry.py",
        'encode("utf-8", "surrogatepass")).hexdigest()[:32]',
        'encode("utf-8", "surrogatepass")).hexdigest()[:31]',
        tests=CONVERSATION,
    ),
    Mutant(
        "conversation: an id given with hashed=False is hashed all the same",
        "telemetry.py",
        "conversation_id(conversation) if hashed else str.__str__(conversation)",
        "conversation_id(conversation) if True else str.__str__(conversation)",
        tests=CONVERSATION,
    ),
    Mutant(
        "conversation: a folder's memory is not tagged",
        "folder.py",
        "        memory._plumbing.conversation = conversation_id(user_id)  # its spans from now on (OTL-9)",
        "        pass",
        tests=CONVERSATION,
    ),
]


def path_of(mutant: Mutant, root: Path) -> Path:
    """The mutated file under ``root``: a test file (``tests/...``) as it is, else one of the package."""
    return root / mutant.file if mutant.file.startswith("tests/") else root / PACKAGE / mutant.file


def apply(mutant: Mutant, root: Path) -> None:
    path = path_of(mutant, root)
    source = path.read_text(encoding="utf-8")
    if source.count(mutant.old) != 1:
        raise ValueError(f"{mutant.name}: the original text must appear exactly once in {mutant.file}")
    path.write_text(source.replace(mutant.old, mutant.new), encoding="utf-8")


def catcher(output: str) -> str:
    """The test's, rule's or invariant's frame that raised, from pytest's short traceback, and the failed test.

    The frame is the last one in a test file (``tests/`` or ``tests/spec/``),
    so a helper such as ``mutate`` or ``on_disk`` names itself; the failed
    test follows in brackets, without its ``tests/`` folder and parameters.
    """
    frames = re.findall(r"(?:^|/)tests/(?:spec/)?(\w+)\.py:\d+: in (\w+)", output, flags=re.MULTILINE)
    frames = [f"{module}.{func}" for module, func in frames if func not in {"runTest", "run_state_machine"}]
    failed = [
        re.sub(r"^tests/(?:spec/)?|\[.*$|\.py", "", name)
        for name in re.findall(r"^FAILED (\S+)", output, flags=re.MULTILINE)
    ]
    where = frames[-1] if frames else "?"
    if len(failed) == 1 and failed[0].replace("::", ".") == where:
        return failed[0]  # the test function itself raised
    return f"{where} ({', '.join(failed) or 'no FAILED line'})"


#: Seconds a mutant's tests may run: a mutant that makes them hang (a deadlock) is reported, not waited for.
TIMEOUT = 900


def run(mutant: Mutant) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="sentinel-mutant-") as tmp:
        shutil.copytree(ROOT / "src", Path(tmp) / "src")
        where = ROOT
        if mutant.file.startswith("tests/"):
            # A mutant of the tests' own machinery (the random mode): its tests run from a copy.
            for part in ("tests", "spec"):
                shutil.copytree(ROOT / part, Path(tmp) / part)
            shutil.copy(ROOT / "pyproject.toml", Path(tmp) / "pyproject.toml")
            where = Path(tmp)
        apply(mutant, Path(tmp))
        env = dict(os.environ, PYTHONPATH=str(Path(tmp) / "src"), HYPOTHESIS_PROFILE="mutants")
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    *mutant.tests,
                    "-x",
                    "-q",
                    "--tb=short",
                    "-p",
                    "no:cacheprovider",
                    "--hypothesis-seed=1",
                    "-o",
                    "addopts=",
                ],
                cwd=where,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return False, f"its tests hung for {TIMEOUT} s: choose a mutant that fails them"
        output = result.stdout + result.stderr
        if (
            f"{tmp}/src/sentinel_memory"
            not in subprocess.run(
                [sys.executable, "-c", "import sentinel_memory; print(sentinel_memory.__file__)"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        ):
            raise RuntimeError("the mutated copy did not shadow the installed package")
        return result.returncode != 0, catcher(output)


def chosen_mutants(names: list[str]) -> list[Mutant]:
    """Every mutant, or those whose name contains one of ``names`` or whose file starts with one of them."""
    return [m for m in MUTANTS if not names or any(name in m.name or m.file.startswith(name) for name in names)]


def per_module(results: list[tuple[Mutant, bool]]) -> list[tuple[str, int, int]]:
    """``(file, killed, total)`` for each mutated file, in the order of the list."""
    counts: dict[str, list[int]] = {}
    for mutant, caught in results:
        tally = counts.setdefault(mutant.file, [0, 0])
        tally[0] += caught
        tally[1] += 1
    return [(file, killed, total) for file, (killed, total) in counts.items()]


def main(names: list[str]) -> int:
    """Run every mutant, or those whose name contains one of ``names`` (or whose file starts with one)."""
    chosen = chosen_mutants(names)
    survivors = 0
    print("| mutant | module | caught | by |")
    print("|---|---|---|---|")
    # Two at a time: each run is one single-threaded pytest process.
    results = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        # Each row as soon as it and the rows before it are in: a long run shows its progress.
        for mutant, (caught, by) in zip(chosen, pool.map(run, chosen), strict=True):
            results.append((caught, by))
            survivors += not caught
            print(f"| {mutant.name} | {mutant.file} | {'yes' if caught else 'NO'} | {by} |", flush=True)
    print("\n| module | killed / total |\n|---|---|")
    for file, killed, total in per_module([(m, caught) for m, (caught, _) in zip(chosen, results, strict=True)]):
        print(f"| {file} | {killed} / {total} |")
    print(f"\n{len(chosen) - survivors} of {len(chosen)} mutants caught")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
