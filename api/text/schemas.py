"""Request bodies of chat completions, messages and responses (spec/text.md)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field


class Open(Schema):
    """Fields not listed here are forwarded unchanged to an upstream of the same format."""

    model_config = ConfigDict(extra="allow")


class ChatMessage(Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


class StreamOptions(Open):
    include_usage: bool | None = None


class ChatCompletionRequest(Open):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    n: int | None = None
    stop: str | list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    seed: int | None = None
    user: str | None = None


class Message(Open):
    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class Thinking(Open):
    type: Literal["enabled", "disabled", "adaptive"]
    budget_tokens: int | None = None
    display: str | None = None


class MessagesRequest(Open):
    model: str
    messages: list[Message] = Field(min_length=1)
    max_tokens: int
    system: str | list[dict[str, Any]] | None = None
    stream: bool | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    thinking: Thinking | None = None
    metadata: dict[str, Any] | None = None


class MessagesCountTokensRequest(Open):
    """A messages request without ``max_tokens``: what it would cost to send."""

    model: str
    messages: list[Message] = Field(min_length=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    thinking: Thinking | None = None


class ResponsesRequest(Open):
    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    max_output_tokens: int | None = Field(default=None, ge=16)
    max_tool_calls: int | None = None
    stream: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    context_management: dict[str, Any] | None = None
    previous_response_id: str | None = None
    store: bool | None = None
    user: str | None = None
