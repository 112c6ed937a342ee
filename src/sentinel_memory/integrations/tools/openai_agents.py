"""The model's memory tools as OpenAI Agents SDK function tools, each call on the memory of the run's user (FWT-1, FWT-2); the extra ``[openai-agents]``.

``memory_tools(MemoryFolder("./memories"))`` is a list of five
``FunctionTool``s (``remember``, ``recall``, ``forget``, ``get_context``,
``stats``; TOOL-1 .. TOOL-4) for ``Agent(tools=...)``. Whose memory a call
reaches is read from the run's context (``Runner.run(agent, input,
context=...)``): the context itself when a ``str``, else its ``user_id``
item or attribute; never from an argument the model writes (TOOL-5). A bad
argument comes back to the model as the tool's output, ``"error: "`` and a
message naming the argument and what it accepts; nothing is changed and the
run goes on. Each call runs the memory in a worker thread, so the store's
I/O never blocks the event loop.

The package never imports this module, so ``import sentinel_memory`` never
imports the SDK (DEP-1); importing it without ``openai-agents`` raises an
``ImportError`` that names the extra.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from . import operations
from .operations import SCHEMAS, TOOL_DESCRIPTIONS, Memories, ToolArgumentError, user_id_from

try:
    from agents import FunctionTool
    from agents.tool_context import ToolContext
except ImportError as error:  # pragma: no cover - exercised by a test that hides the SDK
    raise ImportError(
        "sentinel_memory.integrations.tools.openai_agents needs the OpenAI Agents SDK; install it with: "
        "pip install 'sentinel-memory[openai-agents]'"
    ) from error

__all__ = ["ERROR_PREFIX", "memory_tools"]

#: FWT-2: how a refused call's output starts, so the model reads it as an error.
ERROR_PREFIX = "error: "


def memory_tools(memories: Memories, *, user_key: str = "user_id") -> list[FunctionTool]:
    """The five memory tools over ``memories``, each call on the memory of the run's user (FWT-1, FWT-2).

    Args:
        memories: A ``MemoryFolder``, a ``RedisMemories``, anything with ``open(user_id)``; every call
            opens the user's memory from it, so runs in many threads and processes lose nothing (FLD-3).
        user_key: The item or attribute of the run's context that holds the user id, when the
            context is not the id itself. Defaults to ``"user_id"``.

    Returns:
        ``[remember, recall, forget, get_context, stats]``, each answering with its result as JSON text.

    Raises:
        TypeError: ``memories`` has no ``open`` or ``user_key`` is not a non-empty ``str``.

    Examples:
        >>> from sentinel_memory.integrations.tools.openai_agents import memory_tools
        >>> [tool.name for tool in memory_tools(MemoryFolder(tmp))]
        ['remember', 'recall', 'forget', 'get_context', 'stats']
    """
    if not callable(getattr(memories, "open", None)):
        raise TypeError(f"memories must have open(user_id), got {type(memories).__name__}")
    if not isinstance(user_key, str) or not user_key:
        raise TypeError(f"user_key must be a non-empty str, got {user_key!r}")

    def make(name: str) -> FunctionTool:
        async def invoke(ctx: ToolContext[Any], text: str) -> str:
            user_id = user_id_from(ctx.context, user_key)
            try:
                arguments = json.loads(text) if text.strip() else {}
            except ValueError:
                return f"{ERROR_PREFIX}the arguments must be a JSON object of {name}'s arguments, got {text[:80]!r}"

            def call() -> dict[str, Any]:
                return operations.call(memories.open(user_id), name, arguments)

            try:
                result = await asyncio.to_thread(call)
            except ToolArgumentError as error:
                return f"{ERROR_PREFIX}{error}"
            return json.dumps(result, ensure_ascii=False)

        return FunctionTool(
            name=name,
            description=TOOL_DESCRIPTIONS[name],
            params_json_schema=SCHEMAS[name],
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    return [make(name) for name in SCHEMAS]
