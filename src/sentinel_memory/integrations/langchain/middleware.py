"""A LangChain v1 agent middleware whose model sees a memory's budgeted request (LC-7, LC-8).

``create_agent(model, tools, middleware=[SentinelMemoryMiddleware(memory,
token_budget=...)])`` gives the agent a memory as its conversation: before
each model call the middleware records the messages of the agent's state it
has not recorded yet as the memory's turns (the user's question, the tool
results), and replaces the model's input with the memory's ``get_messages``
(MSG-2 .. MSG-9): the app's system prompt with the must-keep and
query-relevant facts in one system message, then the recent turns that fit,
tool calls kept whole with their results and the newest question always in.
The model's replies are recorded with what follows them: a call with its
results before the next model call, the last reply when the run ends. The agent's state itself is left
as it is (``wrap_model_call`` rewrites the request, not the state), so
nothing the graph holds is lost and a checkpointer still sees every message.

Which messages were recorded is kept in the agent's state, under the private
key ``sentinel_memory_recorded`` (the message ids LangGraph gives each
message), so with a checkpointer a thread's later runs record none twice;
without one, each run's state starts with the messages given to ``invoke``,
and the memory is the whole history: give each run only the new messages.

This module needs ``langchain`` (v1) beside ``langchain-core``; the package
never imports it (LC-5).
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired, cast

from ...core.jsondata import clone
from ...core.options import Duration
from ...core.shown import shown
from ...core.tokens import TokenizerLike, as_tokenizer, count_tokens
from ...folder import MemoryFolder
from ...memory import Memory
from ...serving import (
    ADAPTER_CUT,
    ADAPTER_KEEP_RESULTS,
    ADAPTER_LOW_MARK,
    UserMemories,
    check_reserve,
    held,
    is_memories,
    request_options,
    run_view,
    unseen,
)
from . import message_from_turn, turns_from_messages

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ModelCallResult,
        ModelRequest,
        ModelResponse,
        PrivateStateAttr,
    )
    from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.runnables.config import run_in_executor
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command
except ImportError as error:  # pragma: no cover - exercised by a test that hides langchain
    raise ImportError(
        "sentinel_memory.integrations.langchain.middleware needs langchain (v1); "
        "install it with: pip install 'sentinel-memory[langchain]'"
    ) from error

__all__ = ["RECORDED", "RUN", "SentinelMemoryMiddleware", "SentinelMemoryState"]

#: LC-8: the private state key that lists the ids of the messages already recorded as turns.
RECORDED = "sentinel_memory_recorded"

#: LC-12: the private state key of the current run: whose memory (``user``) and the turns it stored (``keys``).
RUN = "sentinel_memory_run"


class SentinelMemoryState(AgentState[Any]):
    """The agent state with the ids of the messages the middleware has recorded (LC-8)."""

    sentinel_memory_recorded: NotRequired[Annotated[list[str], PrivateStateAttr]]
    sentinel_memory_run: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


#: LC-14: the LangChain messages of a memory's last request, by the identity of each turn's data: (the turn, its message).
_Known = dict[int, tuple[dict[str, Any], BaseMessage]]


#: LC-14: the shallow copy of a message as pydantic makes it (``BaseModel.__copy__``), which ``_copied`` makes faster.
_SHALLOW = BaseMessage.__copy__ if BaseMessage.__copy__.__module__ == "pydantic.main" else None
_SET = object.__setattr__


def _copied(message: BaseMessage) -> BaseMessage:
    """A new copy of a kept message: the model copied, and each of its dicts and lists (content parts, tool calls) anew (LC-14).

    Its fields hold JSON data (MSG-5, the arguments parsed from JSON text) and
    values that never change, so rebuilding the dicts and lists is a deep copy.
    The model is copied as ``model_copy()`` copies it (pydantic's
    ``__copy__``: its ``__dict__``, extra fields and set fields, each a new
    container), done here with the containers' own copy methods; a message
    with private values, or of a class with a copy of its own, is copied by
    ``model_copy()``. The dicts and lists among the extra fields are copied
    too, as the fields' are.
    """
    kind = type(message)
    if kind.__copy__ is not _SHALLOW or getattr(message, "__pydantic_private__", None) is not None:
        copied = message.model_copy()
        fields = copied.__dict__
    else:
        copied = kind.__new__(kind)
        fields = message.__dict__.copy()
        _SET(copied, "__dict__", fields)
        extra = message.__pydantic_extra__
        _SET(copied, "__pydantic_extra__", None if extra is None else extra.copy())
        _SET(copied, "__pydantic_fields_set__", message.__pydantic_fields_set__.copy())
        _SET(copied, "__pydantic_private__", None)
    _renew(fields)
    if copied.__pydantic_extra__:  # extra fields, set by an app on a message it passed: copied as the others
        _renew(copied.__pydantic_extra__)
    return copied


def _renew(fields: dict[str, Any]) -> None:
    """Each dict and list among ``fields``' values replaced by a copy of its own, to its depth."""
    for name, value in fields.items():
        if type(value) is dict or type(value) is list:
            fields[name] = clone(value) if value else value.copy()  # an empty one holds nothing to copy


class SentinelMemoryMiddleware(AgentMiddleware[SentinelMemoryState, Any, Any]):
    """An agent middleware: the model sees the memory's budgeted request; new messages become turns (LC-7, LC-8).

    Before each model call (``before_model``) the messages of the agent's
    state not yet recorded are stored as the memory's next turns, in order,
    in one ``memory.add_messages`` (LC-2's conversion, INT-1: content blocks
    whole); the model's input is then replaced (``wrap_model_call``) with
    ``memory.get_messages(token_budget, system=<the agent's system prompt>,
    query=<the newest user message's text>, must_keep=, facts_share=,
    tokenizer=)`` as LangChain messages, the system message as the request's
    ``system_message``. After the call (``after_model``) and at the end of the
    run (``after_agent``, for a tool that returns directly) the new messages
    are recorded the same way. The async hooks do the same in LangChain's
    executor, so the memory's file or network I/O never blocks the event loop.

    One memory is one conversation: runs that share it share its history, one
    at a time (a tool result must answer the newest open call, MSG-6).

    One agent serves many users when ``memory`` is a ``MemoryFolder`` (or a
    ``RedisMemories``): each call's memory is the folder's memory of the
    user the run names (LC-9): ``user(runtime)`` when ``user`` is given,
    else the ``user_id`` of the run's context (``agent.invoke(...,
    context={"user_id": ...})``, a dict or an object with that attribute),
    else the run's ``thread_id`` (``config={"configurable": {"thread_id":
    ...}}``).

    Messages the client sends again (its whole transcript with each new
    question) are recognised by their place and not stored twice (LC-10,
    SRV-3): those leading the run's new messages that equal the memory's
    newest turns.

    Args:
        memory: The ``Memory`` that holds the conversation (and whatever facts it holds), or a
            ``MemoryFolder`` / ``RedisMemories`` whose memory of each run's user is used (LC-9).
        token_budget: The most tokens a request's messages may count (MSG-3), a number >= 0.
        tokenizer: Counts tokens, as for ``get_messages``. None, the default, means the memory's.
        must_keep: Facts of at least this importance are always in (MSG-9). Defaults to None.
        facts_share: The share of the budget kept for facts. None, the default, means 0.5.
        importance: The importance of the turns recorded, in [0, 1]. Defaults to None (0.3, ENT-16).
        ttl: How long the recorded turns live, in milliseconds or a ``timedelta``. Defaults to None.
        user: With a folder, the user id of a run from LangGraph's ``Runtime`` (LC-9). Defaults to
            None: the context's ``user_id``, else the ``thread_id``.
        reserve: Tokens kept out of ``token_budget`` for what the model is sent beside the messages
            and this middleware cannot see (a provider's own framing, a margin), LC-13. Defaults to 0.
            The tools' schemas are counted by themselves.
        cut: How each request's history is cut (MSG-11): ``"stable"``, the default, only at marks, so
            consecutive requests share their start and a model API's prompt cache serves it; None or
            ``"newest"`` fills it newest first (INT-2).
        low_mark: With the stable cut, about the share of the budget a request fills right after a cut.
            Defaults to 0.5 (``ADAPTER_LOW_MARK``, INT-2).
        facts_at: Where the facts go: ``"system"`` (None, the default), ``"end"`` or ``"start"`` (MSG-12).
        keep_results: Clear the tool results of all but the newest ``keep_results`` turns before any turn
            is left out (MSG-15). Defaults to None (``ADAPTER_KEEP_RESULTS``, INT-2): none cleared.
        exclude_tools: Names of tools whose results are never cleared (MSG-16).

    Raises:
        TypeError: ``memory`` is not a ``Memory``, a ``MemoryFolder`` or a ``RedisMemories``; or
            ``user`` is given with a single memory.

    Examples:
        >>> from langchain.agents import create_agent
        >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> from sentinel_memory.integrations.langchain.middleware import SentinelMemoryMiddleware
        >>> model = GenericFakeChatModel(messages=iter([AIMessage("Welcome!")]))
        >>> agent = create_agent(model, middleware=[SentinelMemoryMiddleware(mem, token_budget=500)])
        >>> agent.invoke({"messages": [{"role": "user", "content": "Hi"}]})["messages"][-1].content
        'Welcome!'
        >>> mem["chat:1"], mem["chat:2"]["content"]
        ({'role': 'user', 'content': 'Hi'}, 'Welcome!')
    """

    state_schema = SentinelMemoryState

    def __init__(
        self,
        memory: Memory | MemoryFolder | Any,
        token_budget: int | float,
        *,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        user: Callable[[Any], str] | None = None,
        reserve: int | float = 0,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = ADAPTER_KEEP_RESULTS,
        exclude_tools: Sequence[str] | None = None,
    ) -> None:
        self._reserve = check_reserve(reserve, token_budget)
        self._options = request_options(
            cut=cut, low_mark=low_mark, facts_at=facts_at, keep_results=keep_results, exclude_tools=exclude_tools
        )
        self._users: UserMemories | None = None
        if is_memories(memory):
            self._users = UserMemories(memory)
        elif not isinstance(memory, Memory):
            raise TypeError(
                "memory must be a Memory (create_memory(), MemoryFolder.open()) or a MemoryFolder / "
                f"RedisMemories for one agent of many users, got {shown(memory)}"
            )
        elif user is not None:
            raise TypeError("user= picks each run's memory from a folder; this middleware has one memory")
        super().__init__()
        self._memory = memory
        self._user = user
        self._token_budget = token_budget
        self._tokenizer = tokenizer
        self._must_keep = must_keep
        self._facts_share = facts_share
        self._importance = importance
        self._ttl = ttl
        self.tools = []
        # LC-14: each memory's last request, its LangChain messages by the identities of its turns' data.
        self._read_known: weakref.WeakKeyDictionary[Memory, _Known] = weakref.WeakKeyDictionary()
        self._read_lock = threading.Lock()

    @classmethod
    def from_folder(
        cls,
        folder: MemoryFolder | str | os.PathLike[str],
        user_id: str,
        token_budget: int | float,
        *,
        tokenizer: TokenizerLike | None = None,
        must_keep: float | None = None,
        facts_share: float | None = None,
        importance: float | None = None,
        ttl: Duration | None = None,
        cut: str | None = ADAPTER_CUT,
        low_mark: float | None = ADAPTER_LOW_MARK,
        facts_at: str | None = None,
        keep_results: int | None = ADAPTER_KEEP_RESULTS,
        exclude_tools: Sequence[str] | None = None,
        **options: Any,
    ) -> SentinelMemoryMiddleware:
        """The middleware over ``MemoryFolder(folder).open(user_id, **options)`` (FLD-2): autosaved and shared.

        Args:
            folder: A ``MemoryFolder``, or the path of one.
            user_id: Whose memory: any str (a user id, a conversation id), FLD-1.
            token_budget: As for the constructor.
            tokenizer: As for the constructor.
            must_keep: As for the constructor.
            facts_share: As for the constructor.
            importance: As for the constructor.
            ttl: As for the constructor.
            cut: As for the constructor.
            low_mark: As for the constructor.
            facts_at: As for the constructor.
            keep_results: As for the constructor.
            exclude_tools: As for the constructor.
            **options: More options for the memory, as ``MemoryFolder.open`` takes them.

        Returns:
            A new middleware over that memory.
        """
        if not isinstance(folder, MemoryFolder):
            folder = MemoryFolder(folder)
        return cls(
            folder.open(user_id, **options),
            token_budget,
            tokenizer=tokenizer,
            must_keep=must_keep,
            facts_share=facts_share,
            importance=importance,
            ttl=ttl,
            cut=cut,
            low_mark=low_mark,
            facts_at=facts_at,
            keep_results=keep_results,
            exclude_tools=exclude_tools,
        )

    @property
    def memory(self) -> Memory:
        """The memory that holds the conversation.

        Raises:
            TypeError: The middleware serves many users: use ``memory_for(runtime)``.
        """
        if self._users is not None:
            raise TypeError("this middleware serves a folder's users: memory_for(runtime) is a run's memory")
        return cast("Memory", self._memory)

    def user_of(self, runtime: Any) -> str:
        """The user id a run names (LC-9): ``user(runtime)``, else the context's ``user_id``, else the ``thread_id``.

        Args:
            runtime: LangGraph's ``Runtime`` of the run.

        Returns:
            A non-empty str.

        Raises:
            ValueError: The run names no user: no ``user`` given, no ``user_id`` in its context, no ``thread_id``.
        """
        if self._user is not None:
            found: object = self._user(runtime)
        else:
            context = getattr(runtime, "context", None)
            found = context.get("user_id") if isinstance(context, Mapping) else getattr(context, "user_id", None)
            if found is None:
                found = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
        if not isinstance(found, str) or not found:
            raise ValueError(
                f"this middleware serves a folder's users, and the run names none (got {shown(found)}): invoke with "
                "context={'user_id': ...} or config={'configurable': {'thread_id': ...}}, or give user="
            )
        return found

    def memory_for(self, runtime: Any) -> Memory:
        """The memory of a run: the one memory given, or the folder's memory of ``user_of(runtime)`` (LC-9).

        Args:
            runtime: LangGraph's ``Runtime`` of the run.

        Returns:
            The run's ``Memory``.
        """
        if self._users is None:
            return cast("Memory", self._memory)
        return self._users.get(self.user_of(runtime))

    def __repr__(self) -> str:
        return f"SentinelMemoryMiddleware({self._memory!r}, token_budget={self._token_budget!r})"

    # -- recording (LC-8) -------------------------------------------------------------------------

    def _record(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """Store the state's messages not recorded yet as the next turns, in one batch (LC-8, LC-10, MSG-6)."""
        messages: Sequence[AnyMessage] = state["messages"]
        recorded = set(cast("list[str]", state.get(RECORDED, [])))
        new = [message for message in messages if message.id is None or message.id not in recorded]
        if not new:
            return None
        turns = turns_from_messages(new)  # every message checked before any is stored (INT-1)
        user = None if self._users is None else self.user_of(runtime)
        memory = self.memory_for(runtime)
        stored: list[str] = []
        with held(memory):  # the newest turns compared are the ones the batch follows (LC-10)
            turns = turns[unseen(memory, turns) :]
            if turns:
                entries = memory.add_messages(turns, importance=self._importance, ttl=self._ttl)
                stored = [entry.key for entry in entries]
        run = cast("dict[str, Any]", state.get(RUN) or {})
        # The ids still in the state: a message removed from it (RemoveMessage) never comes back.
        return {
            RECORDED: [message.id for message in messages if message.id is not None],
            RUN: {"user": user, "keys": [*run.get("keys", []), *stored]},
        }

    def _undo(self, state: Any) -> None:
        """LC-12: forget the turns the failing run stored, in one transaction, so the memory is as before it."""
        run = (state.get(RUN) if isinstance(state, dict) else None) or {}
        keys = run.get("keys") or []
        if not keys:
            return
        memory = cast("Memory", self._memory) if self._users is None else self._users.get(run["user"])
        with held(memory):
            for key in keys:
                memory.forget(key)

    def before_agent(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """Start the run's record of the turns it stores, empty (LC-12).

        Args:
            state: The agent's state.
            runtime: LangGraph's runtime of the run (not used).

        Returns:
            The state update that empties the run's record.
        """
        return {RUN: {"user": None, "keys": []}}

    def before_model(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """Record the new messages before the model is called: the question, or a call and its results (LC-8).

        Args:
            state: The agent's state: its ``messages`` and the recorded ids (LC-8).
            runtime: LangGraph's runtime of the run: with a folder, whose memory (LC-9).

        Returns:
            The state update that lists the recorded ids when messages were recorded, else None.
        """
        return self._record(state, runtime)

    async def abefore_model(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """``before_model`` in LangChain's executor, so the memory's I/O never blocks the event loop (LC-8).

        Args:
            state: The agent's state: its ``messages`` and the recorded ids (LC-8).
            runtime: LangGraph's runtime of the run: with a folder, whose memory (LC-9).

        Returns:
            The state update that lists the recorded ids when messages were recorded, else None.
        """
        return await run_in_executor(None, self._record, state, runtime)

    def after_agent(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """Record what came after the last model call: its reply, or a tool's that returns directly (LC-8).

        Args:
            state: The agent's state: its ``messages`` and the recorded ids (LC-8).
            runtime: LangGraph's runtime of the run: with a folder, whose memory (LC-9).

        Returns:
            The state update that lists the recorded ids when messages were recorded, else None.
        """
        return self._record(state, runtime)

    async def aafter_agent(self, state: SentinelMemoryState, runtime: Any) -> dict[str, Any] | None:
        """``after_agent`` in LangChain's executor (LC-8).

        Args:
            state: The agent's state: its ``messages`` and the recorded ids (LC-8).
            runtime: LangGraph's runtime of the run: with a folder, whose memory (LC-9).

        Returns:
            The state update that lists the recorded ids when messages were recorded, else None.
        """
        return await run_in_executor(None, self._record, state, runtime)

    # -- the model's input (LC-7) -----------------------------------------------------------------

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the memory's budgeted messages in place of the state's (LC-7)."""
        system = None
        if request.system_message is not None:
            content = request.system_message.content
            if not isinstance(content, str) and not all(
                isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text") for block in content
            ):
                raise TypeError(
                    "the agent's system message has content blocks that are not text, which the memory's "
                    "system message cannot carry; pass create_agent a str system_prompt"
                )
            system = request.system_message.text
        query = next((m.text for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
        run = cast("dict[str, Any]", request.state.get(RUN) or {})
        memory = self.memory_for(request.runtime)
        result = run_view(  # the run's own turns last, whatever runs of the same memory stored meanwhile (LC-12)
            memory,
            run.get("keys") or [],
            token_budget=max(0, self._token_budget - self._reserve - self._tools_tokens(request, memory)),
            query=query or None,
            tokenizer=self._tokenizer,
            must_keep=self._must_keep,
            facts_share=self._facts_share,
            system=system,
            shared=True,  # read, not copied: the messages handed out are new copies (MSG-18, LC-14)
            **self._options,
        )
        messages = cast("list[AnyMessage]", self._read(memory, result.messages))
        head = messages.pop(0) if messages and isinstance(messages[0], SystemMessage) else None
        return request.override(messages=messages, system_message=cast("SystemMessage | None", head))

    def _read(self, memory: Memory, turns: Sequence[dict[str, Any]]) -> list[BaseMessage]:
        """``messages_from_turns`` of a request built in place; a turn read before is not read again (LC-14).

        The turns are the memory's own data (MSG-18), never changed: each
        stored turn's message is kept by the identity of its data until the
        memory's next request, which keeps only its own. What is returned is
        a new copy of each (``_copied``), so the caller may change it.
        """
        with self._read_lock:
            known = self._read_known.get(memory, {})  # replaced, never changed: requests may run at once
        now_known: _Known = {}
        out = []
        for turn in turns:
            hit = known.get(id(turn))  # a kept turn is held, so no other data can take its id meanwhile
            if hit is None:
                hit = (
                    turn,
                    message_from_turn(
                        turn["role"],
                        turn.get("content"),
                        tool_calls=turn.get("tool_calls", ()),
                        tool_call_id=turn.get("tool_call_id"),
                        name=turn.get("name"),
                    ),
                )
            now_known[id(turn)] = hit
            out.append(_copied(hit[1]))
        with self._read_lock:
            self._read_known[memory] = now_known
        return out

    def _tools_tokens(self, request: ModelRequest[Any], memory: Memory) -> int | float:
        """LC-13: the tokens of the tools' schemas the model is sent, each as its OpenAI function JSON."""
        if not request.tools:
            return 0
        counting = as_tokenizer(self._tokenizer) or memory.state.config.tokenizer
        schemas = [convert_to_openai_tool(tool) for tool in request.tools]
        return count_tokens(counting, json.dumps(schemas, ensure_ascii=False, sort_keys=True))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelCallResult[Any]:
        """Call the model with the memory's budgeted request instead of the state's messages (LC-7).

        Args:
            request: The model request the agent built: its system message and the state's messages.
            handler: Calls the model (and the middleware inside this one) with a request.

        Returns:
            What ``handler`` returns for the request with the memory's messages.

        Raises:
            TokenBudgetError: The budget cannot hold the system prompt, the must-keep facts and the
                newest question (MSG-9); the model is not called.
            TypeError: The agent's system message holds a block that is not text.
        """
        try:
            return handler(self._request(request))
        except BaseException:
            self._undo(request.state)
            raise

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """``wrap_model_call``, the memory read in LangChain's executor (LC-7).

        Args:
            request: The model request the agent built: its system message and the state's messages.
            handler: Calls the model (and the middleware inside this one) with a request.

        Returns:
            What ``handler`` returns for the request with the memory's messages.

        Raises:
            TokenBudgetError: The budget cannot hold the system prompt, the must-keep facts and the
                newest question (MSG-9); the model is not called.
            TypeError: The agent's system message holds a block that is not text.
        """
        try:
            return await handler(await run_in_executor(None, self._request, request))
        except BaseException:
            await run_in_executor(None, self._undo, request.state)
            raise

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        """Run the tool; when it raises, the run fails, and the turns it stored are forgotten first (LC-12).

        Args:
            request: The tool call LangChain is about to run.
            handler: Runs the tool.

        Returns:
            What ``handler`` returns.
        """
        try:
            return handler(request)
        except BaseException:
            self._undo(request.state)
            raise

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """``wrap_tool_call``, the memory's work in LangChain's executor (LC-12).

        Args:
            request: The tool call LangChain is about to run.
            handler: Runs the tool.

        Returns:
            What ``handler`` returns.
        """
        try:
            return await handler(request)
        except BaseException:
            await run_in_executor(None, self._undo, request.state)
            raise
