"""A backend for Anthropic's client-side memory tool, ``memory_20250818``, over a memory (AMT-1 .. AMT-4); the extra ``[anthropic]``.

Claude's memory tool asks the app to ``view``, ``create``, ``str_replace``,
``insert``, ``delete`` and ``rename`` files under ``/memories``. The SDK's
own backend writes them to a directory; ``SentinelMemoryTool`` keeps each
file as one entry of a user's memory, its key the path
(``/memories/notes/diet.md``) and its data the file's text. So the files
live beside the app's own facts, come back after a restart, are found by
``recall``, and writers in many threads and processes lose nothing: every
command is one transaction of the user's memory, checked whole before it
writes, and saved once (AMT-3).

The commands answer as the SDK's file-system backend does (AMT-1): line
numbers in ``view``, the directory listing two levels deep, ``str_replace``
only on a unique match, ``insert`` at a line. A path outside ``/memories``,
with ``..`` or ``.``, an empty part, a backslash, a control character or
percent-encoding is refused, and so is a file over ``max_file_chars`` or a
memory over ``max_files`` files (AMT-2); every refusal is the SDK's
``ToolError``, which the tool runner hands Claude as an error result.

The package never imports this module, so ``import sentinel_memory`` never
imports the SDK (DEP-1); importing this module without ``anthropic`` raises
an ``ImportError`` that names the extra.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...core.jsondata import text_of
from ...memory import Memory
from .operations import Memories

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
    from anthropic.types.beta import (
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
except ImportError as error:  # pragma: no cover - exercised by a test that hides anthropic
    raise ImportError(
        "sentinel_memory.integrations.tools.anthropic needs the anthropic SDK; install it with: "
        "pip install 'sentinel-memory[anthropic]'"
    ) from error

__all__ = ["DEFAULT_MAX_FILES", "DEFAULT_MAX_FILE_CHARS", "MAX_PATH_CHARS", "ROOT", "SentinelMemoryTool"]

#: AMT-1: the directory every path lives in.
ROOT = "/memories"
#: AMT-2: the longest path accepted, in characters.
MAX_PATH_CHARS = 255
#: AMT-2: the most characters one file may hold unless the tool is given another bound.
DEFAULT_MAX_FILE_CHARS = 50_000
#: AMT-2: the most files one user's memory may hold unless the tool is given another bound.
DEFAULT_MAX_FILES = 200
#: AMT-1: the width line numbers are right-justified to, as the SDK's backend does.
LINE_NUMBER_WIDTH = 6

#: What each command takes: its arguments, and which of them are paths.
COMMANDS: dict[str, tuple[str, ...]] = {
    "view": ("path",),
    "create": ("path", "file_text"),
    "str_replace": ("path", "old_str", "new_str"),
    "insert": ("path", "insert_line", "insert_text"),
    "delete": ("path",),
    "rename": ("old_path", "new_path"),
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class SentinelMemoryTool(BetaAbstractMemoryTool):
    """Anthropic's memory tool kept in one user's memory: each ``/memories/...`` file an entry (AMT-1 .. AMT-4).

    Give it to ``client.beta.messages.tool_runner(tools=[tool], ...)``, or call
    ``tool.call(block.input)`` with each ``tool_use`` block named ``memory``.

    Args:
        memories: Where users' memories are: a ``MemoryFolder``, a ``RedisMemories``, anything
            with ``open(user_id, autosave=False)``. Give it with ``user_id``, or give ``memory``.
        user_id: Whose memory the files are in: the app's choice, never Claude's (AMT-4).
        memory: One ``Memory`` to keep the files in, instead of ``memories`` and ``user_id``. With
            autosave on, a command that changes several files (a directory's ``delete`` or
            ``rename``) saves once per file; over ``memories`` every command saves once.
        max_file_chars: The most characters a file may hold. Defaults to 50,000.
        max_files: The most files the memory may hold. Defaults to 200.
        importance: The importance each file is stored with, in [0, 1]. Defaults to None (0.5).

    Raises:
        TypeError: Neither or both of ``memory`` and ``memories`` (with ``user_id``), or a bound
            that is not a whole number >= 1.

    Examples:
        >>> from sentinel_memory.integrations.tools.anthropic import SentinelMemoryTool
        >>> tool = SentinelMemoryTool(MemoryFolder(tmp), user_id="alice")
        >>> tool.call({"command": "create", "path": "/memories/diet.md", "file_text": "vegetarian"})
        'File created successfully at: /memories/diet.md'
        >>> tool.call({"command": "view", "path": "/memories/diet.md"}).splitlines()[1].split()
        ['1', 'vegetarian']
    """

    def __init__(
        self,
        memories: Memories | None = None,
        user_id: str | None = None,
        *,
        memory: Memory | None = None,
        max_file_chars: int = DEFAULT_MAX_FILE_CHARS,
        max_files: int = DEFAULT_MAX_FILES,
        importance: float | None = None,
    ) -> None:
        super().__init__()
        if memory is not None:
            if memories is not None or user_id is not None:
                raise TypeError("give either memory, or memories and user_id, not both")
            if not isinstance(memory, Memory):
                raise TypeError(f"memory must be a Memory, got {type(memory).__name__}")
        elif memories is None or not callable(getattr(memories, "open", None)):
            raise TypeError("give memories (with open(user_id)) and user_id, or memory")
        elif not isinstance(user_id, str) or not user_id:
            raise TypeError(f"user_id must be a non-empty str, got {user_id!r}")
        for name, bound in (("max_file_chars", max_file_chars), ("max_files", max_files)):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
                raise TypeError(f"{name} must be a whole number >= 1, got {bound!r}")
        self._memory = memory
        self._memories = memories
        self._user_id = user_id
        self.max_file_chars = max_file_chars
        self.max_files = max_files
        self.importance = importance

    # -- the handler -----------------------------------------------------------

    def call(self, input: object) -> str:
        """Run one ``tool_use`` block's input, checked first: a missing or wrong argument is a ``ToolError`` naming it (AMT-2).

        Args:
            input: The block's ``input``: ``{"command": ..., ...}``.

        Returns:
            The text Claude reads as the tool's result.

        Raises:
            ToolError: The command was refused; nothing was changed.
        """
        if not isinstance(input, dict):
            raise ToolError(f"the memory tool's input must be an object, got {type(input).__name__}")
        command = input.get("command")
        if command not in COMMANDS:
            raise ToolError(f"command: must be one of {', '.join(COMMANDS)}; got {command!r}")
        for argument in COMMANDS[command]:
            if argument not in input:
                raise ToolError(f"{argument}: {command} needs it; it takes {', '.join(COMMANDS[command])}")
        for argument in ("path", "old_path", "new_path", "file_text", "old_str", "new_str", "insert_text"):
            if argument in input and argument in COMMANDS[command] and not isinstance(input[argument], str):
                raise ToolError(f"{argument}: must be a string, got {type(input[argument]).__name__}")
        if command == "insert" and (
            isinstance(input["insert_line"], bool) or not isinstance(input["insert_line"], int)
        ):
            raise ToolError(f"insert_line: must be a whole number, got {input['insert_line']!r}")
        view_range = input.get("view_range") if command == "view" else None
        if view_range is not None and (
            not isinstance(view_range, list)
            or len(view_range) != 2
            or any(isinstance(n, bool) or not isinstance(n, int) for n in view_range)
        ):
            raise ToolError(
                f"view_range: must be two whole numbers [start, end] (end -1 for the last line), got {view_range!r}"
            )
        return str(super().call(input))

    # -- the commands (AMT-1) ---------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A file with its lines numbered, or a directory's listing two levels deep (AMT-1).

        Args:
            command: The ``view`` command: ``path``, optionally ``view_range``.
        """
        path = self._path(command.path, "path")
        with self._open() as memory:
            files = self._files(memory)
            if path in files:
                return self._view_file(path, files[path], command.view_range)
            if not self._is_dir(path, files):
                raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
            return self._view_dir(path, files)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """A new file of ``file_text``; an existing path is refused (AMT-1, AMT-2).

        Args:
            command: The ``create`` command: ``path`` and ``file_text``.
        """
        path = self._path(command.path, "path")
        with self._open() as memory:
            files = self._files(memory)
            if path in files:
                raise ToolError(f"File {path} already exists")
            self._can_be_file(path, files)
            self._fits(command.file_text, "file_text")
            if len(files) >= self.max_files:
                raise ToolError(
                    f"The memory holds {len(files)} files, the most it takes is {self.max_files}: "
                    "delete or merge files first"
                )
            memory.remember(path, command.file_text, importance=self.importance)
        return f"File created successfully at: {path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """Replace the one occurrence of ``old_str`` with ``new_str`` (AMT-1).

        Args:
            command: The ``str_replace`` command: ``path``, ``old_str`` and ``new_str``.
        """
        path = self._path(command.path, "path")
        with self._open() as memory:
            content = self._file(path, self._files(memory))
            count = content.count(command.old_str) if command.old_str else 0
            if count == 0:
                raise ToolError(
                    f"No replacement was performed, old_str `{command.old_str}` did not appear verbatim in {path}."
                )
            if count > 1:
                lines, start = [], 0
                while (found := content.find(command.old_str, start)) != -1:
                    lines.append(content[:found].count("\n") + 1)
                    start = found + 1
                raise ToolError(
                    f"No replacement was performed. Multiple occurrences of old_str `{command.old_str}` in lines: "
                    f"{', '.join(map(str, lines))}. Please ensure it is unique"
                )
            changed_line = content[: content.find(command.old_str)].count("\n")
            new_content = content.replace(command.old_str, command.new_str)
            self._fits(new_content, "new_str")
            memory.remember(path, new_content, importance=self.importance)
        new_lines = new_content.split("\n")
        first, last = max(0, changed_line - 2), min(len(new_lines), changed_line + 3)
        snippet = [_numbered(n + 1, new_lines[n]) for n in range(first, last)]
        return (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            + "\n".join(snippet)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """Insert ``insert_text`` as a line after the first ``insert_line`` lines (AMT-1).

        Args:
            command: The ``insert`` command: ``path``, ``insert_line`` and ``insert_text``.
        """
        path = self._path(command.path, "path")
        with self._open() as memory:
            content = self._file(path, self._files(memory))
            lines = content.split("\n")
            if lines[-1] == "":
                lines.pop()
            if not 0 <= command.insert_line <= len(lines):
                raise ToolError(
                    f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}]."
                )
            lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
            new_content = "\n".join(lines)
            if not new_content.endswith("\n"):
                new_content += "\n"
            self._fits(new_content, "insert_text")
            memory.remember(path, new_content, importance=self.importance)
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """Forget a file, or a directory and every file under it, at once (AMT-1, AMT-3).

        Args:
            command: The ``delete`` command: ``path``.
        """
        path = self._path(command.path, "path")
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        with self._open() as memory:
            files = self._files(memory)
            doomed = [key for key in files if key == path or key.startswith(path + "/")]
            if not doomed:
                raise ToolError(f"The path {path} does not exist")
            for key in doomed:
                memory.forget(key)
        return f"Successfully deleted {path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """Move a file, or a directory and every file under it, to a free path, at once (AMT-1, AMT-3).

        Args:
            command: The ``rename`` command: ``old_path`` and ``new_path``.
        """
        old = self._path(command.old_path, "old_path")
        new = self._path(command.new_path, "new_path")
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        with self._open() as memory:
            files = self._files(memory)
            if new in files or self._is_dir(new, files):
                raise ToolError(f"The destination {new} already exists")
            if old in files:
                moves = {old: new}
            elif self._is_dir(old, files):
                if new.startswith(old + "/"):
                    raise ToolError(f"Cannot move the directory {old} into itself ({new})")
                moves = {key: new + key[len(old) :] for key in files if key.startswith(old + "/")}
            else:
                raise ToolError(f"The path {old} does not exist")
            for target in moves.values():
                self._path(target, "new_path")
                self._can_be_file(target, {key: text for key, text in files.items() if key not in moves})
            for source, target in moves.items():
                entry = memory.get_entry(source)
                memory.forget(source)
                memory.remember(target, files[source], importance=entry.importance)
        return f"Successfully renamed {old} to {new}"

    def clear_all_memory(self) -> str:
        """Forget every ``/memories`` file of the user's memory, in one transaction; the app's other entries stay."""
        with self._open() as memory:
            for key in self._files(memory):
                memory.forget(key)
        return "All memory cleared"

    # -- helpers -----------------------------------------------------------------

    @contextmanager
    def _open(self) -> Iterator[Memory]:
        """The user's memory, held for one command (MW-6): reloaded, changed, and saved once at the end (AMT-3)."""
        if self._memory is not None:
            memory = self._memory
        else:
            assert self._memories is not None and self._user_id is not None
            memory = self._memories.open(self._user_id, autosave=False)  # type: ignore[call-arg]
        with memory.transaction():
            yield memory
            if not memory._autosave:
                memory.save()

    @staticmethod
    def _files(memory: Memory) -> dict[str, str]:
        return {key: text_of(data) for key, data in memory.items() if key.startswith(ROOT + "/")}

    @staticmethod
    def _is_dir(path: str, files: dict[str, str]) -> bool:
        return path == ROOT or any(key.startswith(path + "/") for key in files)

    def _can_be_file(self, path: str, files: dict[str, str]) -> None:
        if self._is_dir(path, files):
            raise ToolError(f"The path {path} is a directory")
        parent = path.rsplit("/", 1)[0]
        while parent != ROOT:
            if parent in files:
                raise ToolError(f"The path {parent} is a file, so {path} cannot be inside it")
            parent = parent.rsplit("/", 1)[0]

    @staticmethod
    def _file(path: str, files: dict[str, str]) -> str:
        if path in files:
            return files[path]
        if any(key.startswith(path + "/") for key in files) or path == ROOT:
            raise ToolError(f"The path {path} is not a file.")
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    def _fits(self, text: str, argument: str) -> None:
        if len(text) > self.max_file_chars:
            raise ToolError(
                f"{argument}: the file would hold {len(text)} characters; the most a memory file takes is "
                f"{self.max_file_chars}. Nothing was changed: split it into several files"
            )

    @staticmethod
    def _path(path: str, argument: str) -> str:
        """The path, checked (AMT-2): inside /memories, no '.', '..' or empty part, nothing encoded or hidden."""
        accepted = "a path such as /memories/notes.md: inside /memories, of parts other than '', '.' and '..'"
        if len(path) > MAX_PATH_CHARS:
            raise ToolError(f"{argument}: is {len(path)} characters, the most accepted is {MAX_PATH_CHARS}")
        if _CONTROL.search(path) or "\\" in path or "%" in path:
            raise ToolError(f"{argument}: {path!r} holds a control character, a backslash or a '%'; must be {accepted}")
        if path != ROOT and path.endswith("/") and len(path) > 1:
            path = path[:-1]
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise ToolError(f"{argument}: Path must start with /memories, got: {path}; must be {accepted}")
        if any(part in ("", ".", "..") for part in path[len(ROOT) + 1 :].split("/")) and path != ROOT:
            raise ToolError(f"{argument}: Path {path} would escape /memories directory; must be {accepted}")
        return path

    def _view_file(self, path: str, content: str, view_range: Any) -> str:
        lines = content.split("\n")
        first = 1
        if view_range:
            start, end = view_range
            if not 1 <= start <= len(lines) or not (end == -1 or start <= end <= len(lines)):
                raise ToolError(
                    f"view_range: {view_range} is outside the file's lines; start must be from 1 to {len(lines)} "
                    f"and end from start to {len(lines)}, or -1 for the last line"
                )
            lines = lines[start - 1 : None if end == -1 else end]
            first = start
        numbered = [_numbered(first + n, line) for n, line in enumerate(lines)]
        return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)

    @staticmethod
    def _view_dir(path: str, files: dict[str, str]) -> str:
        tree: dict[str, Any] = {}
        for key, text in files.items():
            if key.startswith(path + "/"):
                *folders, name = key[len(path) + 1 :].split("/")
                node = tree
                for folder in folders:
                    node = node.setdefault(folder, {})
                node[name] = len(text.encode("utf-8"))
        lines = [f"{_size(_total(tree))}\t{path}"]

        def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
            for name in sorted(node):
                if name.startswith("."):
                    continue
                child = node[name]
                if isinstance(child, dict):
                    lines.append(f"{_size(_total(child))}\t{prefix}{name}/")
                    if depth < 2:
                        walk(child, f"{prefix}{name}/", depth + 1)
                else:
                    lines.append(f"{_size(child)}\t{prefix}{name}")

        walk(tree, path + "/", 1)
        header = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        return header + "\n" + "\n".join(lines)


def _total(node: Any) -> int:
    """A file's size, or the sum of a directory's files' sizes, in UTF-8 bytes."""
    return sum(_total(child) for child in node.values()) if isinstance(node, dict) else int(node)


def _numbered(number: int, line: str) -> str:
    return f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{line}"


def _size(size: int) -> str:
    """A size as the SDK's backend shows it: ``0B``, ``512B``, ``1.5K``, ``2M``."""
    if size == 0:
        return "0B"
    index = min((size.bit_length() - 1) // 10, 3)
    value = size / (1024**index)
    unit = "BKMG"[index]
    return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
