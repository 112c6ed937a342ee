"""Integrations: adapters between a memory and the frameworks apps build with.

Each module adapts one framework and needs that framework's extra; none is
imported by ``import sentinel_memory``:

* ``langchain``: ``SentinelChatMessageHistory``, a LangChain chat history
  kept as a memory's turns (``pip install 'sentinel-memory[langchain]'``);
* ``langgraph``: ``SentinelStore``, a LangGraph ``BaseStore`` whose
  namespaces are memories of a folder (``pip install 'sentinel-memory[langgraph]'``);
* ``openai_agents``: ``SentinelSession``, an OpenAI Agents SDK ``Session``
  whose items are kept whole as a memory's turns, with a budgeted history
  (``pip install 'sentinel-memory[openai-agents]'``);
* ``tools``: the memory tools a model calls itself (remember, recall,
  forget, get_context, stats): an MCP server (``[mcp]``), LangChain,
  pydantic-ai and Agents SDK tools, and a backend for Anthropic's memory
  tool (``[anthropic]``), each module with its own extra.

An integration may import the shells (``memory``, ``aio``, ``folder``,
``redismemories``), the stores and the core, and never another integration,
the command line, the store kit or the conformance suite: each stands alone,
so an app installs only the framework it uses. The import contracts in
``pyproject.toml`` check this.
"""
