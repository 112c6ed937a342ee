"""The ``sentinel-memory`` command: look into and tidy a saved memory file (CLI-1 .. CLI-3).

Every command works on a file written by ``JsonFileStore``,
read as strictly as the library reads it:

* ``show FILE``: the entries as a table (key, importance, retention now, age,
  expiry, a preview of the data);
* ``stats FILE``, ``recall FILE QUERY``, ``context FILE --budget N``;
* ``compact FILE [--limit N] [--dry-run]`` and ``forget FILE KEY``, which
  save the file;
* ``demo``: the restaurant story from the README;
* ``mcp --folder PATH [--user ID]``: an MCP server of the model's memory
  tools over a folder of memories (MCP-4; the ``[mcp]`` extra, loaded only
  by this command).

Every command takes ``--json``; those that save take ``--wait SECONDS``.
Exit status (CLI-3): 0 when it worked, 1 when the file is missing, damaged
or not a memory (the message names the file and the problem), 2 for a usage
error, 3 when another process held the file's lock for all of ``--wait``
(the message names the lock file; nothing was changed). Only the standard
library's ``argparse`` is used: the command adds no dependency.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import core
from .core.errors import ConflictError, DamagedStoreError, LoadWarning, LockTimeoutError
from .core.retention import retention
from .core.tokens import TokenizerLike, estimate_tokens, upper_bound_tokens
from .core.values import Compaction, Entry
from .memory import Memory, create_memory, wall_clock
from .stores.filestore import JsonFileStore

__all__ = ["main"]

#: CLI-3: the exit status when another process held the file's lock for all of ``--wait``.
LOCKED = 3
#: CLI-3: how many seconds a command that saves waits for the file's lock by default.
DEFAULT_WAIT = 10.0

#: The tokenizers ``context --tokenizer`` offers; the o200k and cl100k encodings need bpe-openai.
TOKENIZERS: dict[str, Callable[[], TokenizerLike]] = {
    "estimate": lambda: estimate_tokens,
    "upper-bound": lambda: upper_bound_tokens,
    "o200k_base": lambda: _bpe("o200k_base"),
    "cl100k_base": lambda: _bpe("cl100k_base"),
}


class FileProblem(Exception):
    """The file cannot be used: exit status 1 with this message."""


def _bpe(name: str) -> TokenizerLike:
    try:
        bpe_openai = importlib.import_module("bpe_openai")
    except ImportError:
        raise FileProblem(f"--tokenizer {name} needs the bpe-openai package (pip install bpe-openai)") from None
    encoding: TokenizerLike = bpe_openai.get_encoding(name)
    return encoding


def _open(
    path: Path,
    limit: int | None,
    *,
    wait: float = DEFAULT_WAIT,
    on_evict: Callable[[Compaction], None] | None = None,
    autosave: bool = False,
) -> Memory:
    """The memory saved at ``path``; a limit that holds every stored entry unless one is given (CLI-1, CLI-2).

    What the load itself compacts away to fit ``limit`` (PER-8) goes to
    ``on_evict``, and with ``autosave`` it is saved at once, like any
    automatic compaction.
    """
    if not path.exists():
        raise FileProblem(f"{path}: no such file")
    store = JsonFileStore(path, lock_wait=wait)
    try:
        document = store.load()
    except DamagedStoreError as error:
        raise FileProblem(str(error)) from None
    except OSError as error:
        raise FileProblem(f"{path}: {error.strerror or error}") from None
    if limit is None:
        stored = document.get("entries") if isinstance(document, dict) else None
        limit = max(1000, len(stored) if isinstance(stored, list) else 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        memory = create_memory(store=store, limit=limit, on_evict=on_evict, autosave=autosave)
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    return memory


def _age(ms: float) -> str:
    """A duration for people: 45s, 12m, 3h, 2d."""
    seconds = abs(ms) / 1000
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{'-' if ms < 0 else ''}{seconds / size:.0f}{unit}"
    return f"{'-' if ms < 0 else ''}{seconds:.0f}s"


def _preview(entry: Entry, width: int = 48) -> str:
    text = entry.text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _live(memory: Memory, now: int) -> list[Entry]:
    """The live entries, oldest first, all at one ``now`` (TIME-1)."""
    state = memory.state
    return [core.get_entry(state, key, now=now) for key, _ in core.live_items(state, now=now)]


def _rows(entries: Sequence[Entry], now: int, window: int | float) -> list[dict[str, Any]]:
    return [
        {
            **entry.to_dict(),
            "retention": retention(entry, now, window),
            "ageMs": now - entry.updated_at,
            "expiresInMs": None if entry.expires_at is None else entry.expires_at - now,
        }
        for entry in entries
    ]


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [headers, *rows]
    ]
    return "\n".join(lines)


def _show(memory: Memory, options: argparse.Namespace, _loaded: Compaction) -> Any:
    now = wall_clock()
    entries = _live(memory, now)
    rows = _rows(entries, now, memory.state.config.recency_window)
    if options.json:
        return rows
    table = [
        (
            row["key"],
            f"{row['importance']:g}",
            f"{row['retention']:.3f}",
            _age(row["ageMs"]),
            "-" if row["expiresInMs"] is None else "in " + _age(row["expiresInMs"]),
            _preview(entry),
        )
        for row, entry in zip(rows, entries, strict=True)
    ]
    return _table(("key", "importance", "retention", "age", "expires", "data"), table) + f"\n{len(rows)} live entries"


def _stats(memory: Memory, options: argparse.Namespace, _loaded: Compaction) -> Any:
    stats = memory.stats()
    return stats if options.json else "\n".join(f"{name:12} {value}" for name, value in stats.items())


def _recall(memory: Memory, options: argparse.Namespace, _loaded: Compaction) -> Any:
    hits = memory.recall(options.query, limit=options.limit_hits)
    if options.json:
        return [{"entry": hit.entry.to_dict(), "score": hit.score} for hit in hits]
    if not hits:
        return "no entry shares a word with the query"
    return _table(("score", "key", "data"), [(f"{hit.score:.4f}", hit.entry.key, _preview(hit.entry)) for hit in hits])


def _context(memory: Memory, options: argparse.Namespace, _loaded: Compaction) -> Any:
    tokenizer: TokenizerLike = TOKENIZERS[options.tokenizer]()
    ctx = memory.get_context(
        token_budget=options.budget, query=options.query, tokenizer=tokenizer, must_keep=options.must_keep
    )
    if options.json:
        return {
            "text": ctx.text,
            "entries": [e.to_dict() for e in ctx.entries],
            "tokens": ctx.tokens,
            "omitted": ctx.omitted,
        }
    return (
        f"{ctx.text}\n-- {ctx.tokens} tokens ({options.tokenizer}) of {options.budget:g}, {ctx.omitted} entries omitted"
    )


def _compact(memory: Memory, options: argparse.Namespace, loaded: Compaction) -> Any:
    """CLI-2: what the load compacted away to fit ``--limit`` (already saved), then the expired entries."""
    if options.dry_run:
        _, dropped = core.compact(memory.state, now=wall_clock())
    else:
        with memory.transaction():  # under the file's lock, after reloading what another process saved since
            dropped = memory.compact()  # autosaved when it dropped something
    dropped = loaded + dropped
    expired, evicted = [e.key for e in dropped.expired], [e.key for e in dropped.evicted]
    if options.json:
        return {"expired": expired, "evicted": evicted, "saved": bool(dropped) and not options.dry_run}
    verb = "would drop" if options.dry_run else "dropped"
    return f"{verb} {len(expired)} expired ({', '.join(expired) or '-'}) and {len(evicted)} evicted ({', '.join(evicted) or '-'})"


def _forget(memory: Memory, options: argparse.Namespace, _loaded: Compaction) -> Any:
    with memory.transaction():  # under the file's lock, after reloading what another process saved since
        forgotten = memory.forget(options.key)
        if forgotten:
            memory.save()
    if options.json:
        return {"key": options.key, "forgotten": forgotten}
    return f"forgot {options.key}" if forgotten else f"no live entry {options.key}; nothing changed"


def demo() -> str:
    """The restaurant story: a memory of five keeps the name and the allergy through six small-talk messages."""
    clock = _Clock()
    mem = create_memory(limit=5, clock=clock)
    lines = ["The restaurant: a memory that holds five things, one minute per message.", ""]
    messages = [("user:name", "Jakub", 0.9), ("user:allergy", "allergic to peanuts", 1.0)]
    messages += [(f"chat:{i}", f"small talk message {i}", 0.1) for i in range(1, 7)]
    for key, text, importance in messages:
        mem.remember(key, text, importance=importance)
        clock.now += 60_000
    lines.append("keep the last five would hold: " + ", ".join(key for key, _, _ in messages[-5:]))
    lines.append("sentinel-memory holds:         " + ", ".join(e.key for e in mem.get_recent(5)))
    lines.append("stats: " + json.dumps(mem.stats()))
    ctx = mem.get_context(token_budget=30, query="what should I not eat?", must_keep=0.9)
    lines += ["", "context for the next model call (budget 30, must_keep 0.9):", ctx.text, f"-- {ctx.tokens} tokens"]
    return "\n".join(lines)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_792_310_400_000

    def __call__(self) -> int:
        return self.now


#: Every command with what it requires, for ``--help`` and the README (CLI-1 .. CLI-3).
USAGE = f"""commands and what each requires:
  show FILE                   the live entries as a table
  stats FILE                  the counters
  recall FILE QUERY           entries sharing a word with QUERY
  context FILE --budget N     the prompt context within N tokens
  compact FILE                drop expired entries (--limit N: evict down to N) and save
  forget FILE KEY             remove one entry and save
  demo                        the restaurant story

exit status: 0 done; 1 the file is missing, damaged or not a memory;
2 a usage error; {LOCKED} another process held the file's lock for all of --wait,
or changed the file while the command ran (nothing changed)"""


def _limit(text: str) -> int:
    """``--limit``: a whole number of entries >= 1; anything else is a usage error, never a default (CLI-4)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of entries: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """``--wait``: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sentinel-memory",
        description="Look into and tidy a sentinel-memory JSON file.",
        epilog=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def file_command(name: str, help: str, *, read: bool = True) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help, description=help)
        command.add_argument("file", type=Path, metavar="FILE", help="a memory file written by JsonFileStore")
        command.add_argument(
            "--limit", type=_limit, help="the memory's limit (default: enough for every stored entry, at least 1000)"
        )
        command.add_argument("--json", action="store_true", help="print JSON instead of text")
        return command

    file_command("show", "the live entries as a table")
    file_command("stats", "the counters: size, stored, limit, ...")
    recall = file_command("recall", "entries sharing a word with QUERY, best first")
    recall.add_argument("query", metavar="QUERY")
    recall.add_argument("--hits", dest="limit_hits", type=int, default=10, help="at most this many hits (default 10)")
    context = file_command("context", "the prompt context that fits a token budget")
    required = context.add_argument_group("required")
    required.add_argument("--budget", type=float, required=True, metavar="N", help="the token budget")
    context.add_argument("--query", help="rank entries sharing its words first")
    context.add_argument(
        "--tokenizer", choices=sorted(TOKENIZERS), default="estimate", help="how to count tokens (default: estimate)"
    )
    context.add_argument(
        "--must-keep", type=float, help="entries of at least this importance first, whatever the query"
    )
    compact = file_command("compact", "drop expired entries (and, with --limit, the least important over it) and save")
    compact.add_argument("--dry-run", action="store_true", help="only say what would be dropped")
    forget = file_command("forget", "remove one entry and save")
    forget.add_argument("key", metavar="KEY")
    for saving in (compact, forget):
        saving.add_argument(
            "--wait",
            type=_seconds,
            default=DEFAULT_WAIT,
            metavar="SECONDS",
            help=f"wait at most this long for another process's lock on the file, then exit {LOCKED} (default {DEFAULT_WAIT:g})",
        )
    commands.add_parser("demo", help="the restaurant story from the README")
    serve = commands.add_parser(
        "mcp",
        help="serve a folder of memories to a model as MCP tools (the [mcp] extra)",
        description="Serve one user's memory of a folder as MCP tools: remember, recall, forget, get_context, stats.",
    )
    serve.add_argument(
        "--folder", type=Path, required=True, metavar="PATH", help="the folder of memories (MemoryFolder)"
    )
    serve.add_argument(
        "--user", default="default", metavar="ID", help="whose memory the tools reach (default: default)"
    )
    serve.add_argument("--limit", type=_limit, help="each memory's limit (default 1000)")
    serve.add_argument(
        "--transport", choices=["stdio", "streamable-http"], default="stdio", help="how clients connect (default stdio)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="with streamable-http: the address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="with streamable-http: the port (default 8000)")
    return parser


def _serve_mcp(options: argparse.Namespace) -> int:
    """``sentinel-memory mcp``: the MCP server of ``sentinel_memory.integrations.tools.mcp`` (MCP-4).

    The module is loaded by name here, so the command line imports the SDK only for this command.
    """
    try:
        module = importlib.import_module("sentinel_memory.integrations.tools.mcp")
    except ImportError as error:
        print(f"sentinel-memory: {error}", file=sys.stderr)
        return 2
    try:
        server = module.create_server(options.folder, user_id=options.user, limit=options.limit)
    except TypeError as error:
        print(f"sentinel-memory: {error}", file=sys.stderr)
        return 2
    if options.transport == "stdio":
        server.run()
    else:  # pragma: no cover - serves until stopped
        server.run("streamable-http", host=options.host, port=options.port)
    return 0


#: Each command, given the memory, the options and what the load compacted away (PER-8).
COMMANDS: dict[str, Callable[[Memory, argparse.Namespace, Compaction], Any]] = {
    "show": _show,
    "stats": _stats,
    "recall": _recall,
    "context": _context,
    "compact": _compact,
    "forget": _forget,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (CLI-3)."""
    options = _parser().parse_args(argv)
    if options.command == "demo":
        print(demo())
        return 0
    if options.command == "mcp":
        return _serve_mcp(options)
    loaded: list[Compaction] = []
    # Only compact saves what its own load dropped to fit --limit (CLI-2); a read never writes (CLI-1).
    compacting = options.command == "compact"
    try:
        memory = _open(
            options.file,
            None if options.command == "forget" else options.limit,  # forget removes one entry, nothing more
            wait=getattr(options, "wait", DEFAULT_WAIT),
            on_evict=loaded.append,
            autosave=compacting and not options.dry_run,
        )
        result = COMMANDS[options.command](memory, options, sum(loaded, Compaction()))
    except FileProblem as problem:
        print(f"sentinel-memory: {problem}", file=sys.stderr)
        return 1
    except LockTimeoutError as error:
        print(
            f"sentinel-memory: {error.location} is locked by another process; gave up after {error.waited:g} s, nothing changed (--wait SECONDS waits longer)",
            file=sys.stderr,
        )
        return LOCKED
    except ConflictError as error:
        print(f"sentinel-memory: {error}; nothing changed, run the command again", file=sys.stderr)
        return LOCKED
    except (ValueError, TypeError) as error:  # a bad budget or query: the user's input, not the file
        print(f"sentinel-memory: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, ensure_ascii=False, indent=1) if options.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
