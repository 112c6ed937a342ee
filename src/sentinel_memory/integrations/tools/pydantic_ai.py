"""The model's memory tools as a pydantic-ai toolset, each call on the memory of the run's user (FWT-1, FWT-2); the extra ``[pydantic-ai]``.

``memory_toolset(MemoryFolder("./memories"))`` is a ``FunctionToolset`` of
five tools (``remember``, ``recall``, ``forget``, ``get_context``,
``stats``; TOOL-1 .. TOOL-4) for ``Agent(toolsets=[...])``. Whose memory a
call reaches is read from the run's ``deps`` (``agent.run(..., deps=...)``):
the deps themselves when a ``str``, else their ``user_id`` item or
attribute; never from an argument the model writes (TOOL-5). A bad argument
comes back to the model as a failed tool result (pydantic-ai's
``ToolFailed``) naming the argument and what it accepts; nothing is changed
and the run goes on.

The package never imports this module, so ``import sentinel_memory`` never
imports pydantic-ai (DEP-1); importing it without ``pydantic-ai-slim``
raises an ``ImportError`` that names the extra.
"""

from __future__ import annotations

from typing import Any

from . import operations
from .operations import SCHEMAS, TOOL_DESCRIPTIONS, Memories, ToolArgumentError, user_id_from

try:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as error:  # pragma: no cover - exercised by a test that hides pydantic-ai
    raise ImportError(
        "sentinel_memory.integrations.tools.pydantic_ai needs pydantic-ai; install it with: "
        "pip install 'sentinel-memory[pydantic-ai]'"
    ) from error

__all__ = ["memory_toolset"]


def memory_toolset(memories: Memories, *, user_key: str = "user_id") -> FunctionToolset[Any]:
    """The five memory tools over ``memories`` as a toolset, each call on the memory of the run's user (FWT-1, FWT-2).

    Each tool is a plain function, so pydantic-ai runs it in a worker thread
    and the store's I/O never blocks the event loop.

    Args:
        memories: A ``MemoryFolder``, a ``RedisMemories``, anything with ``open(user_id)``; every call
            opens the user's memory from it, so runs in many threads and processes lose nothing (FLD-3).
        user_key: The item or attribute of the run's ``deps`` that holds the user id, when the deps
            are not the id itself. Defaults to ``"user_id"``.

    Returns:
        A ``FunctionToolset`` of ``remember``, ``recall``, ``forget``, ``get_context`` and ``stats``.

    Raises:
        TypeError: ``memories`` has no ``open`` or ``user_key`` is not a non-empty ``str``.

    Examples:
        >>> from sentinel_memory.integrations.tools.pydantic_ai import memory_toolset
        >>> sorted(memory_toolset(MemoryFolder(tmp)).tools)
        ['forget', 'get_context', 'recall', 'remember', 'stats']
    """
    if not callable(getattr(memories, "open", None)):
        raise TypeError(f"memories must have open(user_id), got {type(memories).__name__}")
    if not isinstance(user_key, str) or not user_key:
        raise TypeError(f"user_key must be a non-empty str, got {user_key!r}")

    def make(name: str) -> Tool[Any]:
        def run(ctx: RunContext[Any], **arguments: Any) -> dict[str, Any]:
            user_id = user_id_from(ctx.deps, user_key)
            try:
                return operations.call(memories.open(user_id), name, arguments)
            except ToolArgumentError as error:
                raise ToolFailed(str(error)) from error

        return Tool.from_schema(
            run, name=name, description=TOOL_DESCRIPTIONS[name], json_schema=SCHEMAS[name], takes_ctx=True
        )

    return FunctionToolset([make(name) for name in SCHEMAS])
