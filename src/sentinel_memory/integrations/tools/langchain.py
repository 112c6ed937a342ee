"""The model's memory tools as LangChain tools, each call on the memory of the run's user (FWT-1, FWT-2); the extra ``[langchain]``.

``memory_tools(MemoryFolder("./memories"))`` is a list of five LangChain
``StructuredTool``s (``remember``, ``recall``, ``forget``, ``get_context``,
``stats``; TOOL-1 .. TOOL-4) for ``create_agent(model, tools=...)`` or
``model.bind_tools(...)``. Whose memory a call reaches is read from the
run's config, ``config["configurable"]["user_id"]``, that the app passes to
``agent.invoke(..., config=...)``: never from an argument the model writes
(TOOL-5). A bad argument comes back to the model as the tool's error
message (a ``ToolMessage`` with ``status="error"``), naming the argument and
what it accepts, and nothing is changed.

The package never imports this module, so ``import sentinel_memory`` never
imports LangChain (DEP-1); importing it without ``langchain-core`` raises an
``ImportError`` that names the extra.
"""

from __future__ import annotations

import json
from typing import Any

from . import operations
from .operations import SCHEMAS, TOOL_DESCRIPTIONS, Memories, ToolArgumentError, user_id_from

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as error:  # pragma: no cover - exercised by a test that hides langchain-core
    raise ImportError(
        "sentinel_memory.integrations.tools.langchain needs langchain-core; install it with: "
        "pip install 'sentinel-memory[langchain]'"
    ) from error

__all__ = ["memory_tools"]


def memory_tools(memories: Memories, *, user_key: str = "user_id") -> list[StructuredTool]:
    """The five memory tools over ``memories``, each call on the memory of the run's user (FWT-1, FWT-2).

    Args:
        memories: A ``MemoryFolder``, a ``RedisMemories``, anything with ``open(user_id)``; every call
            opens the user's memory from it, so runs in many threads and processes lose nothing (FLD-3).
        user_key: The item of the run's ``configurable`` that holds the user id. Defaults to ``"user_id"``.

    Returns:
        ``[remember, recall, forget, get_context, stats]``, each answering with its result as JSON text.

    Raises:
        TypeError: ``memories`` has no ``open`` or ``user_key`` is not a non-empty ``str``.

    Examples:
        >>> from sentinel_memory.integrations.tools.langchain import memory_tools
        >>> tools = memory_tools(MemoryFolder(tmp))
        >>> remember = tools[0]
        >>> remember.invoke({"key": "user:diet", "text": "vegetarian"}, config={"configurable": {"user_id": "u1"}})
        '{"key": "user:diet", "importance": 0.5, "ttl_seconds": null, "replaced": false}'
    """
    if not callable(getattr(memories, "open", None)):
        raise TypeError(f"memories must have open(user_id), got {type(memories).__name__}")
    if not isinstance(user_key, str) or not user_key:
        raise TypeError(f"user_key must be a non-empty str, got {user_key!r}")

    def make(name: str) -> StructuredTool:
        def run(config: RunnableConfig, **arguments: Any) -> str:
            user_id = user_id_from(config.get("configurable") or {}, user_key)
            try:
                result = operations.call(memories.open(user_id), name, arguments)
            except ToolArgumentError as error:
                raise ToolException(str(error)) from error
            return json.dumps(result, ensure_ascii=False)

        return StructuredTool.from_function(
            run,
            name=name,
            description=TOOL_DESCRIPTIONS[name],
            args_schema=SCHEMAS[name],
            handle_tool_error=True,
        )

    return [make(name) for name in SCHEMAS]
