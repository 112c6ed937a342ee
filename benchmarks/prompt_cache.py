"""How much of each request a prompt cache can serve: a chat replayed through get_messages (MSG-11 .. MSG-14).

Run ``python benchmarks/prompt_cache.py [path/to/locomo.json]`` (default
``../shared/locomo/locomo-dev.json``; the LoCoMo conversations are read
from that path and never copied; without the file only the agent history
runs). Each conversation is replayed as a chat: its first speaker is the
user, the second the assistant, consecutive turns of one speaker merged.
Before each user turn the app asks for ``get_messages(token_budget=B,
system=SYSTEM, query=turn, must_keep=0.9)`` (two facts of importance 1 are
in the memory) and sends it with the turn appended; then the turn and the
reply are stored. The agent history is a tool-using agent's (a question,
tool calls and their results, an answer), replayed the same way with each
model call of a run a request.

Per request: its tokens (the result's ``tokens`` and the appended turn,
MSG-3) and its *cached* tokens, the messages it shares from its start with
the previous request, exactly. Reported per conversation and budget:

* cacheable share: cached tokens / all request tokens;
* mean request / budget;
* estimated input cost, in fresh-token units: fresh + 0.1 x cached + 0.25 x
  newly cached (a cache breakpoint on each request's message before the
  last, as Anthropic's incremental caching puts it: what it holds beyond
  the cached tokens is written), and that cost relative to today's
  ``get_messages``;
* the time of ``get_messages`` relative to today's: beside each request the
  same memory is asked for today's request too (right before it every other
  request, right after it the others, so neither order is favoured), and the
  ratio is the median over the requests of the request's time over today's
  (``time_vs_today``), and the same over the requests made with ``LONG`` =
  200 stored turns or more (``time_vs_today_200``); a median, because on a
  shared machine a request now and then waits for the processor. For
  ``trim`` and ``whole``, their replay's time over today's replay's.

``--figure`` draws the last requests of an agent run as bars of their
messages (``docs/prompt-cache.png``).

Strategies: ``today`` (``get_messages`` with its defaults), ``stable``
(``cut="stable", facts_at="start"``), ``clear`` (the same with
``keep_results=1``: old tool results cleared, MSG-15), ``clear_low`` (and
``low_mark=0.3``), ``adapters`` (what the LangChain middleware and
pydantic-ai's ``SentinelHistory`` ask for unless told otherwise, INT-2),
``trim`` (langchain-core's
``trim_messages(strategy="last")`` over the whole history with the same
counter, the system message holding the prompt and the facts as today), and
``whole`` (the whole history, no budget).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sentinel_memory import Memory, create_memory, estimate_tokens, request_problems
from sentinel_memory.core import MESSAGE_TOKENS
from sentinel_memory.core.chat import body_of
from sentinel_memory.serving import ADAPTER_CUT, ADAPTER_KEEP_RESULTS, ADAPTER_LOW_MARK

#: Where the dev half of LoCoMo is looked for: ``../shared/locomo`` beside the checkout (or beside its parent).
LOCOMO = next(
    (
        p
        for p in (Path(__file__).resolve().parents[i] / "shared" / "locomo" / "locomo-dev.json" for i in (2, 3))
        if p.is_file()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "locomo" / "locomo-dev.json",
)
SYSTEM = "You are a warm, attentive friend. Answer in one or two sentences and remember what you are told."
FACTS = [
    ("user:name", "The user's name and the assistant's are the two speakers of this chat."),
    ("user:style", "The user prefers short, friendly answers without lists."),
]
BUDGETS = (1_000, 2_000, 4_000)
#: The options of the stable strategy.
STABLE: dict[str, Any] = {"cut": "stable", "facts_at": "start"}
#: The stable strategy with old tool results cleared, all but the newest unit's (MSG-15).
CLEAR: dict[str, Any] = {**STABLE, "keep_results": 1}
#: The same with a lower low mark: cuts that move less of the request.
CLEAR_LOW: dict[str, Any] = {**CLEAR, "low_mark": 0.3}
#: What the LangChain middleware and pydantic-ai's ``SentinelHistory`` ask for unless told otherwise (INT-2).
ADAPTERS: dict[str, Any] = {"cut": ADAPTER_CUT, "low_mark": ADAPTER_LOW_MARK, "keep_results": ADAPTER_KEEP_RESULTS}
#: The options of each strategy that asks ``get_messages``.
OPTIONS: dict[str, dict[str, Any]] = {
    "today": {},
    "stable": STABLE,
    "clear": CLEAR,
    "clear_low": CLEAR_LOW,
    "adapters": ADAPTERS,
}
STRATEGIES = ("today", "stable", "clear", "clear_low", "adapters", "trim", "whole")
#: The speed ratio is also reported for the requests made with this many stored turns or more.
LONG = 200


def locomo_chats(path: Path) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Each conversation as ``(sample_id, [(role, text), ...])``, speaker A the user, one speaker's turns merged."""
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        first = conversation["speaker_a"]
        turns: list[tuple[str, str]] = []
        numbers = sorted(int(k.split("_")[1]) for k in conversation if k.startswith("session_") and k.count("_") == 1)
        for n in numbers:
            for turn in conversation[f"session_{n}"]:
                role = "user" if turn["speaker"] == first else "assistant"
                if turns and turns[-1][0] == role:
                    turns[-1] = (role, turns[-1][1] + "\n" + turn["text"])
                else:
                    turns.append((role, turn["text"]))
        yield sample["sample_id"], turns


def agent_history(steps: int = 240, seed: int = 7) -> list[dict[str, Any]]:
    """A tool-using agent's messages: per run a question, one to three tool calls with their results, an answer."""
    rng = random.Random(seed)
    cities = ["Brno", "Prague", "Vienna", "Lyon", "Porto", "Oslo", "Kyoto", "Quito"]
    words = "the of a to in is it you that was for on are with as at be this have from or one had by".split()

    def prose(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."

    out: list[dict[str, Any]] = []
    for step in range(steps):
        out.append({"role": "user", "content": f"What about {rng.choice(cities)}? {prose(rng.randint(6, 30))}"})
        for call in range(rng.randint(1, 3)):
            ident = f"call_{step}_{call}"
            tool = rng.choice(["weather", "search", "calendar"])
            arguments = json.dumps({"city": rng.choice(cities), "day": rng.randint(1, 28)})
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": ident, "type": "function", "function": {"name": tool, "arguments": arguments}}
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": ident, "content": prose(rng.randint(20, 120))})
        out.append({"role": "assistant", "content": prose(rng.randint(10, 50))})
    return out


def _count(message: dict[str, Any]) -> int:
    return estimate_tokens(body_of(message)) + MESSAGE_TOKENS


def _trim(history: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages, trim_messages

    kept = trim_messages(
        convert_to_messages(history),
        max_tokens=budget,
        token_counter=lambda ms: sum(_count(m) for m in convert_to_openai_messages(ms)),
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
    return list(convert_to_openai_messages(kept))


class Replay:
    """The requests of one strategy at one budget, and what each counts and shares with the one before."""

    def __init__(self, strategy: str, budget: int, *, timed: bool = False) -> None:
        self.strategy, self.budget, self.timed = strategy, budget, timed
        self.memory: Memory = create_memory(limit=100_000)
        for key, text in FACTS:
            self.memory.remember(key, text, importance=1)
        self.history: list[dict[str, Any]] = []  # for trim and whole
        self.previous: list[dict[str, Any]] = []
        self.tokens = self.cached = self.written = 0
        self.requests = 0
        self.seconds = 0.0
        self.problems: list[str] = []
        self.over = 0
        #: Per request of get_messages: the turns stored, its seconds and today's over the same memory.
        self.paired: list[tuple[int, float, float]] = []
        #: Per request, each message's count, whether the previous request began with it, whether it is cleared.
        self.log: list[list[tuple[int, bool, bool]]] = []

    def request(self, query: str, tail: list[dict[str, Any]]) -> None:
        """One model call: the budgeted history, then ``tail`` (the new turn, or nothing inside a run)."""
        today = 0.0
        if self.timed and self.requests % 2:  # today's request over the same memory, first every other time
            again = time.perf_counter()
            self.memory.get_messages(token_budget=self.budget, system=SYSTEM, query=query, must_keep=0.9)
            today = time.perf_counter() - again
        started = time.perf_counter()
        if self.strategy in OPTIONS:
            options = OPTIONS[self.strategy]
            result = self.memory.get_messages(
                token_budget=self.budget, system=SYSTEM, query=query, must_keep=0.9, **options
            )
            took = time.perf_counter() - started
            body = result.messages
            if result.tokens > self.budget:
                self.over += 1
            if self.timed and not self.requests % 2:  # and right after it every other time
                again = time.perf_counter()
                self.memory.get_messages(token_budget=self.budget, system=SYSTEM, query=query, must_keep=0.9)
                today = time.perf_counter() - again
            if self.timed:
                self.paired.append((len(self.history), took, today))
        else:
            facts = "\n".join(f"{k}: {t}" for k, t in FACTS)
            head = [{"role": "system", "content": SYSTEM + "\n\n" + facts}]
            body = head + (_trim(self.history, self.budget) if self.strategy == "trim" else list(self.history))
        self.seconds += time.perf_counter() - started
        sent = body + tail
        self.problems.extend(request_problems(sent))
        counts = [_count(m) for m in sent]
        same = 0
        while same < min(len(sent), len(self.previous)) and sent[same] == self.previous[same]:
            same += 1
        self.log.append(
            [
                (n, i < same, m.get("role") == "tool" and m.get("content") == "[cleared]")
                for i, (n, m) in enumerate(zip(counts, sent, strict=True))
            ]
        )
        cached = sum(counts[:same])
        self.tokens += sum(counts)
        self.cached += cached
        self.written += max(0, sum(counts[:-1]) - cached)  # the breakpoint on the message before the last
        self.requests += 1
        self.previous = sent

    def store(self, messages: list[dict[str, Any]]) -> None:
        self.memory.add_messages(messages)
        self.history.extend(messages)

    def speed(self, least: int = 0) -> float:
        """The median, over the requests with ``least`` stored turns or more, of its time over today's on the same memory."""
        ratios = [mine / today for turns, mine, today in self.paired if turns >= least and today > 0]
        return statistics.median(ratios) if ratios else float("nan")

    def report(self) -> dict[str, float]:
        fresh = self.tokens - self.cached
        return {
            "speed": self.speed(),
            "speed_200": self.speed(LONG),
            "share": self.cached / self.tokens,
            "mean": self.tokens / self.requests / self.budget,
            "cost": fresh + 0.1 * self.cached + 0.25 * self.written,
            "seconds": self.seconds,
            "problems": len(self.problems),
            "over": self.over,
            "requests": self.requests,
        }


def replay_chat(turns: list[tuple[str, str]], strategy: str, budget: int, *, timed: bool = False) -> Replay:
    """The chat replayed: before each user turn one request, then the turn and the reply stored."""
    run = Replay(strategy, budget, timed=timed)
    at = 0
    while at < len(turns):
        role, text = turns[at]
        if role != "user":
            run.store([{"role": role, "content": text}])
            at += 1
            continue
        question = {"role": "user", "content": text}
        run.request(text, [question])
        reply = [{"role": "assistant", "content": turns[at + 1][1]}] if at + 1 < len(turns) else []
        run.store([question, *reply])
        at += 2
    return run


def replay_agent(messages: list[dict[str, Any]], strategy: str, budget: int, *, timed: bool = False) -> Replay:
    """The agent replayed: the question stored, then a request before each model message (a call or the answer)."""
    run = Replay(strategy, budget, timed=timed)
    query = ""
    for message in messages:
        if message["role"] == "user":
            query = message["content"]
            run.store([message])
        elif message["role"] == "assistant":
            run.request(query, [])
            run.store([message])
        else:
            run.store([message])
    return run


def workloads(path: Path) -> Iterator[tuple[str, Callable[[str, int], Replay]]]:
    """The dev LoCoMo conversations (when the file is there), then the agent history."""
    if path.is_file():
        for name, turns in locomo_chats(path):
            yield name, lambda strategy, budget, turns=turns: replay_chat(turns, strategy, budget, timed=True)
    agent = agent_history()
    yield "agent", lambda strategy, budget: replay_agent(agent, strategy, budget, timed=True)


#: Where ``--figure`` writes the picture of consecutive requests.
FIGURE = Path(__file__).resolve().parent.parent / "docs" / "prompt-cache.png"


def figure(out: Path, budget: int = 1_000, steps: int = 60, shown: int = 30) -> None:
    """Consecutive requests of the agent history, one bar each: cached, new and cleared messages, per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agent = agent_history(steps=steps)
    panels = [("today", "get_messages today"), ("clear", 'cut="stable", facts_at="start", keep_results=1')]
    fig, axes = plt.subplots(1, len(panels), figsize=(10, 5.2), dpi=110, sharey=True)
    colours = {"cached": "#4c9a6a", "new": "#d9822b", "cleared": "#9db8d9"}
    for ax, (strategy, title) in zip(axes, panels, strict=True):
        run = replay_agent(agent, strategy, budget)
        rows = run.log[-shown:]
        for y, request in enumerate(rows):
            left = 0
            for count, cached, cleared in request:
                kind = "cleared" if cleared and cached else "cached" if cached else "new"
                ax.barh(y, count, left=left, color=colours[kind], edgecolor="white", linewidth=0.4, height=0.85)
                left += count
        report = run.report()
        ax.set_title(
            f"{title}\ncacheable {report['share']:.2f}, cost {report['cost'] / replay_agent(agent, 'today', budget).report()['cost']:.2f}x today's",
            fontsize=9,
        )
        ax.set_xlabel("tokens of the request, first message on the left")
        ax.set_xlim(0, budget)
    axes[0].invert_yaxis()  # the axes share y: once turns both
    axes[0].set_ylabel(f"the last {shown} requests of a {steps}-question agent run, oldest at the top")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    labels = ["repeats the previous request's start (cached)", "new to the cache", "cleared tool result, cached"]
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=8)
    fig.suptitle(
        f"Consecutive requests at a budget of {budget:,} tokens (benchmarks/prompt_cache.py --figure)", fontsize=10
    )
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    fig.savefig(out)
    plt.close(fig)


def main(argv: list[str]) -> None:
    if "--figure" in argv:
        figure(FIGURE)
        print(f"wrote {FIGURE}")
        return
    path = Path(argv[1]) if len(argv) > 1 else LOCOMO
    strategies = argv[2].split(",") if len(argv) > 2 else list(STRATEGIES)
    if not path.is_file():
        print(f"{path} is absent: the LoCoMo rows are skipped", file=sys.stderr)
    print(
        "workload,budget,strategy,share,mean,cost,cost_vs_today,time_vs_today,"
        f"time_vs_today_{LONG},requests,problems,over"
    )
    for name, replay in workloads(path):
        for budget in BUDGETS:
            rows = {s: replay(s, budget).report() for s in strategies}
            base = rows.get("today")
            for strategy, row in rows.items():
                cost = row["cost"] / base["cost"] if base else float("nan")
                if strategy in OPTIONS:  # paired with today's request over the same memory
                    speed, long = row["speed"], row["speed_200"]
                else:  # not get_messages: its replay's time over today's
                    speed = row["seconds"] / base["seconds"] if base else float("nan")
                    long = float("nan")
                print(
                    f"{name},{budget},{strategy},{row['share']:.2f},{row['mean']:.2f},{row['cost']:.0f},"
                    f"{cost:.2f},{speed:.2f},{long:.2f},{row['requests']},{row['problems']},{row['over']}",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv)
