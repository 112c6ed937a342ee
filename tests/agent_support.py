"""A scripted chat model for LangChain v1 agents, and the checks every request it received must pass (LC-7, INT-1).

``ScriptedToolModel`` is a ``BaseChatModel`` that binds tools by returning
itself and decides from the messages it is given, as a real model would:
after a user's question it calls the tools its script names for that turn
(the turn's number is read from the question, so the script survives a
restart), after tool results it answers with what they said. It keeps every
request it received in ``seen``, the system message included, as the model
saw it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

import sentinel_memory as sm
from sentinel_memory.core.chat import body_of

#: MSG-3: what each message adds to its text's count.
MESSAGE_TOKENS = 3

Script = Callable[[int], list[tuple[str, dict[str, Any]]]]


class ScriptedToolModel(BaseChatModel):
    """A chat model that calls tools from a script and answers from their results; ``seen`` is every request."""

    script: Any
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        questions = [m for m in messages if isinstance(m, HumanMessage)]
        if not questions:
            return AIMessage("I was given no question.")
        found = re.search(r"turn (\d+)", questions[-1].text)
        turn = int(found.group(1)) if found else 0
        if isinstance(messages[-1], HumanMessage):
            calls = self.script(turn)
            if calls:
                return AIMessage(
                    "",
                    tool_calls=[
                        {"name": name, "args": args, "id": f"call-{turn}-{i}", "type": "tool_call"}
                        for i, (name, args) in enumerate(calls)
                    ],
                )
            return AIMessage(f"Answer {turn}: nothing to look up.")
        results = []
        for message in reversed(messages):
            if not isinstance(message, ToolMessage):
                break
            results.append(message.text)
        return AIMessage(f"Answer {turn}: " + "; ".join(reversed(results)))


def request_tokens(request: Sequence[BaseMessage], tokenizer: Callable[[str], int]) -> int:
    """MSG-3: what a request the model received counts, in LangChain's own chat-completions form."""
    return sum(tokenizer(body_of(message)) + MESSAGE_TOKENS for message in convert_to_openai_messages(list(request)))


def check_requests(
    seen: Sequence[Sequence[BaseMessage]],
    budget: int,
    tokenizer: Callable[[str], int],
    *,
    system: str | None = None,
    fact: str | None = None,
) -> list[int]:
    """Every request within the budget, valid (MSG-8), holding the newest question; returns each one's count."""
    counts = []
    for i, request in enumerate(seen):
        chat = convert_to_openai_messages(list(request))
        assert sm.request_problems(chat) == [], (i, sm.request_problems(chat))
        count = request_tokens(request, tokenizer)
        assert count <= budget, (i, count, budget)
        counts.append(count)
        if system is not None:
            assert chat[0]["role"] == "system" and chat[0]["content"].startswith(system), (i, chat[0])
        if fact is not None:
            assert fact in chat[0]["content"], (i, chat[0])
    return counts
