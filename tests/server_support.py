"""Echoing stub models for the three frameworks, shared by the serving tests and properties (SRV-1 .. SRV-3)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agents import Usage
from agents.items import ModelResponse as SdkResponse
from agents.models.interface import Model
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo

SEEN: list[list[BaseMessage]] = []
SEEN_LOCK = threading.Lock()


class EchoChatModel(BaseChatModel):
    """Answers the newest question by repeating it; keeps every request it got."""

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        with SEEN_LOCK:
            SEEN.append(list(messages))
        question = [m for m in messages if isinstance(m, HumanMessage)][-1].text
        return ChatResult(generations=[ChatGeneration(message=AIMessage(f"ok: {question}"))])

    @property
    def _llm_type(self) -> str:
        return "echo"


class EchoModel(Model):
    """Answers the newest user item by repeating it; keeps every request's text."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.last_input: list[Any] = []

    async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.requests.append(repr(input))
        self.last_input = list(input)
        question = [item for item in input if item.get("role") == "user"][-1]["content"]
        reply = ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=f"ok: {question}", annotations=[])],
        )
        return SdkResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        raise NotImplementedError


class Echo:
    """A FunctionModel script: answers the newest question by repeating it; keeps every request."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    def __call__(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        self.requests.append(repr(messages))
        asked = [
            p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)
        ]
        return ModelResponse(parts=[TextPart(f"ok: {asked[-1]}")])


class SlowEchoChatModel(EchoChatModel):
    """EchoChatModel that takes a while, so runs started together overlap."""

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        time.sleep(0.05)
        return super()._generate(messages, stop, run_manager, **kwargs)


class SlowEchoModel(EchoModel):
    """EchoModel that takes a while, so runs started together overlap."""

    async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        await asyncio.sleep(0.05)
        return await super().get_response(system_instructions, input, *args, **kwargs)


async def slow_echo(messages: list[Any], info: AgentInfo) -> ModelResponse:
    """A FunctionModel function: the Echo script's answer, after a while."""
    await asyncio.sleep(0.05)
    return Echo()(messages, info)
