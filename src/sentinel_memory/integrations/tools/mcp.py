"""An MCP server over a folder of memories: the model's memory tools for any MCP client (MCP-1 .. MCP-4); the extra ``[mcp]``.

``create_server(folder, user_id="alice")`` is an ``MCPServer`` of the
official MCP Python SDK with five tools (``remember``, ``recall``,
``forget``, ``get_context``, ``stats``; TOOL-1 .. TOOL-4) and one resource,
``memory://context``, the memory's facts as prompt text. Run it with
``server.run()`` (stdio) or ``server.run("streamable-http")``, or from the
shell: ``sentinel-memory mcp --folder ./memories --user alice``.

Whose memory the tools reach is the server's to say, never the model's: the
``user_id`` it was started with, or ``user_id_from(ctx)`` of each request
(a request's authenticated client, a session), and no tool takes a user
argument (MCP-3). Every call opens the user's memory from the folder
(autosaved and shared, FLD-3) in a worker thread, so clients in many
sessions, threads and processes writing at once lose nothing, and a restart
keeps every write a tool acknowledged (MCP-4).

The package never imports this module, so ``import sentinel_memory`` never
imports the SDK (DEP-1); importing this module without ``mcp`` raises an
``ImportError`` that names the extra.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

from ...folder import MemoryFolder
from ...memory import Memory
from . import operations
from .operations import ARGUMENTS, MAX_TOKEN_BUDGET, SCHEMAS, TOOL_DESCRIPTIONS, Memories, ToolArgumentError

try:
    import anyio.to_thread
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
except ImportError as error:  # pragma: no cover - exercised by a test that hides mcp
    raise ImportError(
        "sentinel_memory.integrations.tools.mcp needs the MCP SDK; install it with: pip install 'sentinel-memory[mcp]'"
    ) from error

__all__ = ["CONTEXT_URI", "DEFAULT_RESOURCE_BUDGET", "MemoryServer", "create_server"]

#: MCP-2: the resource that holds the memory's facts as prompt text.
CONTEXT_URI = "memory://context"
#: MCP-2: the token budget of that resource unless the server is given another.
DEFAULT_RESOURCE_BUDGET = 2000


class MemoryServer(MCPServer[Any]):
    """An ``MCPServer`` whose tools refuse an argument they do not take, naming the ones they do (MCP-1).

    A model that writes ``ttl`` for ``ttl_seconds`` would otherwise have its
    fact stored with no expiry and never know.
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call tool ``name``, refusing first an argument it does not take (TOOL-4), as a tool error.

        Args:
            name: The tool.
            arguments: The arguments as the client sent them.
            context: The request's context, as the SDK passes it.
        """
        if name in ARGUMENTS:
            try:
                operations.check_names(name, arguments)
            except ToolArgumentError as error:
                raise ToolError(str(error)) from error
        return await super().call_tool(name, arguments, context)


def create_server(
    folder: str | os.PathLike[str] | Memories,
    user_id: str | None = None,
    *,
    user_id_from: Callable[[Context[Any, Any]], str] | None = None,
    resource_budget: int = DEFAULT_RESOURCE_BUDGET,
    name: str = "sentinel-memory",
    **options: Any,
) -> MemoryServer:
    """An MCP server whose tools act on one user's memory of ``folder`` (MCP-1 .. MCP-4).

    Args:
        folder: A folder path (``MemoryFolder(folder, **options)``), or anything with
            ``open(user_id) -> Memory``: a ``MemoryFolder``, a ``RedisMemories``.
        user_id: The user whose memory every call reaches. Give this or ``user_id_from``.
        user_id_from: Called with each request's ``Context`` and returns the user id: for a
            server of many users, from what the transport authenticated. A ``str`` that is empty
            or not a ``str`` fails the call with a tool error and touches no memory.
        resource_budget: The token budget of the ``memory://context`` resource, a whole number
            from 1 to ``MAX_TOKEN_BUDGET``. Defaults to 2000.
        name: The server's name, as clients show it. Defaults to ``"sentinel-memory"``.
        **options: ``MemoryFolder``'s options (``limit``, ``tokenizer``, ...), with a folder path only.

    Returns:
        The ``MemoryServer``; ``server.run()`` serves it on stdio.

    Raises:
        TypeError: Both or neither of ``user_id`` and ``user_id_from``, a ``user_id`` that is not
            a non-empty ``str``, options with a ``folder`` that is not a path, or a bad ``resource_budget``.

    Examples:
        >>> from sentinel_memory.integrations.tools.mcp import create_server
        >>> server = create_server(tmp / "memories", user_id="alice")
        >>> sorted(tool.name for tool in server._tool_manager.list_tools())
        ['forget', 'get_context', 'recall', 'remember', 'stats']
    """
    if (user_id is None) == (user_id_from is None):
        raise TypeError("create_server needs exactly one of user_id (one user) and user_id_from (a user per request)")
    if user_id is not None and (not isinstance(user_id, str) or not user_id):
        raise TypeError(f"user_id must be a non-empty str, got {user_id!r}")
    if isinstance(resource_budget, bool) or not isinstance(resource_budget, int):
        raise TypeError(f"resource_budget must be an int, got {type(resource_budget).__name__}")
    if not 1 <= resource_budget <= MAX_TOKEN_BUDGET:
        raise TypeError(f"resource_budget must be from 1 to {MAX_TOKEN_BUDGET}, got {resource_budget}")
    memories: Memories
    if isinstance(folder, (str, os.PathLike)):
        memories = MemoryFolder(folder, **options)
    elif options:
        raise TypeError("options are MemoryFolder's: give them with a folder path, or to the folder you pass")
    elif callable(getattr(folder, "open", None)):
        memories = folder
    else:
        raise TypeError(f"folder must be a path or have open(user_id), got {type(folder).__name__}")

    def whose(context: Context[Any, Any] | None) -> str:
        if user_id is not None:
            return user_id
        assert user_id_from is not None
        if context is None:  # pragma: no cover - the SDK always passes one
            raise ToolError("this server takes the user from each request, and this call came with none")
        chosen = user_id_from(context)
        if not isinstance(chosen, str) or not chosen:
            raise ToolError("the server could not tell whose memory this is; no memory was touched")
        return chosen

    async def run(context: Context[Any, Any] | None, operation: Callable[..., Any], *args: Any) -> Any:
        chosen = whose(context)

        def call() -> Any:
            memory: Memory = memories.open(chosen)
            return operation(memory, *args)

        try:
            return await anyio.to_thread.run_sync(call)
        except ToolArgumentError as error:
            raise ToolError(str(error)) from error

    server = MemoryServer(
        name,
        instructions=(
            "Long-term memory for this user. Store facts worth keeping with remember, look them up with "
            "recall before answering, and forget what the user asks you to forget."
        ),
    )

    # The SDK hands each argument over as it came (typed Any), so the tools' own checks word every
    # error (TOOL-4); the schema the model reads is operations.SCHEMAS, set below.
    async def remember(
        key: Any = None,
        text: Any = None,
        importance: Any = None,
        ttl_seconds: Any = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        return dict(await run(ctx, operations.remember, key, text, importance, ttl_seconds))

    async def recall(query: Any = None, limit: Any = None, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        return dict(await run(ctx, operations.recall, query, limit))

    async def forget(key: Any = None, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        return dict(await run(ctx, operations.forget, key))

    async def get_context(
        token_budget: Any = None, query: Any = None, ctx: Context[Any, Any] | None = None
    ) -> dict[str, Any]:
        return dict(await run(ctx, operations.get_context, token_budget, query))

    async def stats(ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        return dict(await run(ctx, operations.stats))

    reads = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    changes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    tools: dict[str, tuple[Callable[..., Any], ToolAnnotations]] = {
        "remember": (remember, changes),
        "recall": (recall, reads),
        "forget": (forget, ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)),
        "get_context": (get_context, reads),
        "stats": (stats, reads),
    }
    for tool_name, (function, hints) in tools.items():
        server.add_tool(function, name=tool_name, description=TOOL_DESCRIPTIONS[tool_name], annotations=hints)
        tool = server._tool_manager.get_tool(tool_name)
        assert tool is not None
        tool.parameters = copy.deepcopy(SCHEMAS[tool_name])

    if user_id is not None:
        # A static resource gets no request context in the SDK, so only a server of one user offers it;
        # a server of many users gives the same text through get_context (MCP-2).
        @server.resource(
            CONTEXT_URI,
            name="context",
            description=f"The user's stored facts as prompt text, the most important first, within {resource_budget} tokens.",
            mime_type="text/plain",
        )
        async def context_resource() -> str:
            result = await run(None, operations.get_context, resource_budget, None)
            text: str = result["text"]
            return text

    return server
