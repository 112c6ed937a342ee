"""Memory the model uses itself: tools it calls to remember, recall and forget (TOOL-1 .. TOOL-6, MCP-1 .. MCP-4, AMT-1 .. AMT-4).

``operations`` holds the five operations a model calls (``remember``,
``recall``, ``forget``, ``get_context``, ``stats``) with the checks a model's
arguments get, and needs nothing beyond the package. Each other module hands
them to one framework and needs its extra; none is imported by
``import sentinel_memory`` or by this package:

* ``mcp``: an MCP server (``pip install 'sentinel-memory[mcp]'``), also
  ``sentinel-memory mcp --folder PATH --user ID``;
* ``langchain``: LangChain tools (``[langchain]``);
* ``pydantic_ai``: a pydantic-ai toolset (``[pydantic-ai]``);
* ``openai_agents``: OpenAI Agents SDK function tools (``[openai-agents]``);
* ``anthropic``: a backend for Anthropic's client-side memory tool (``[anthropic]``).

Every tool acts on the memory of one user, chosen by the app (the server's
configuration, the run's context or config), never by an argument the model
writes.
"""
