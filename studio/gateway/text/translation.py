"""Translation between text wire formats: the shared context, the translator contract, chaining.

Each pair lives in its own module named for it (``chat_to_messages``: a chat client on a
messages upstream, and so on); ``translators`` picks the pair or chain for a call. A translator
turns the client's request into the upstream's, and the upstream's answer (buffered, or as a
stream of events) back into the client's format.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from studio.core import request_id

# A stream event in any text format: (SSE event name or None, decoded JSON data).
Event = tuple[str | None, dict[str, Any]]


@dataclass(slots=True)
class Context:
    """What a translation needs besides the bodies."""

    model: str  # the platform model id the client sent (and sees in answers)
    upstream_model: str
    stream: bool
    include_usage: bool  # the client of this stage asked for a usage chunk (chat)
    default_max_tokens: int = 4096
    # The model can think (its catalog entry does not say ``thinking: false``): a client's ask for
    # thinking or reasoning crosses a translation only then, as the other format's field; a model
    # that cannot think answers without it instead of a 400 naming a field the client never sent.
    thinks: bool = True
    # The model takes its reasoning back with the turn it led to (``reasoning_content``): a chat
    # model that shows it does (DeepSeek's wants it back in a tool loop). One that cannot think does
    # not, nor one whose catalog entry says ``thinking: "hidden"`` (OpenAI's reasoning models, which
    # never show theirs): their vendor refuses the field as an unknown parameter.
    takes_reasoning: bool = True
    # This stage's chat side is the middle of a chain, where a messages upstream's signed thinking
    # travels as ``thinking_blocks`` on chat messages and deltas: a responses client gets it back
    # sealed in a reasoning item's ``encrypted_content``, and gives it back the same way (without a
    # chain the field is not made, as no chat vendor knows it).
    signed_thinking: bool = False
    request: dict[str, Any] = field(default_factory=dict)  # the client's body, for echoing fields
    created: int = field(default_factory=lambda: int(time.time()))
    token: str = ""  # made on first use: pass-through calls never need one

    def for_upstream(self, upstream_model: str) -> Context:
        """A copy naming the model as one upstream knows it (``dataclasses.replace`` does the same
        through the constructor and each field's definition, at several times the cost)."""
        copy = Context.__new__(Context)
        for name in Context.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.upstream_model = upstream_model
        return copy

    def id(self, prefix: str) -> str:
        if not self.token:
            self.token = request_id.new()[:24]
        return f"{prefix}{self.token}"


class Translator(Protocol):
    source: str  # the client's format
    target: str  # the upstream's format

    def request(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]: ...

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]: ...

    def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]: ...


@dataclass(slots=True)
class Chain:
    """Two pairs in a row (responses → chat → messages); the middle stage always carries usage."""

    first: Translator
    second: Translator

    @property
    def source(self) -> str:
        return self.first.source

    @property
    def target(self) -> str:
        return self.second.target

    @staticmethod
    def _outer(ctx: Context) -> Context:
        """The first stage's context: its upstream side is the middle (``signed_thinking``)."""
        return dataclasses.replace(ctx, signed_thinking=True)

    def _inner(self, ctx: Context, middle: dict[str, Any] | None = None) -> Context:
        """The second stage's context: its client's request is the middle format's body (what the
        answer is read against, e.g. a ``response_format``)."""
        if middle is None:
            middle = self.first.request(ctx.request, ctx)
        return dataclasses.replace(ctx, include_usage=True, request=middle)

    def request(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        outer = self._outer(ctx)
        middle = self.first.request(body, outer)
        return self.second.request(middle, self._inner(outer, middle))

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        outer = self._outer(ctx)
        return self.first.response(self.second.response(body, self._inner(outer)), outer)

    def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]:
        outer = self._outer(ctx)
        return self.first.stream(self.second.stream(events, self._inner(outer)), outer)


# -- small helpers shared by the pair modules ---------------------------------------------------
# OpenAI's reasoning models (the o-series, and GPT-5 but for its chat models) refuse the chat
# format's ``max_tokens`` with a 400 and take ``max_completion_tokens``; other chat upstreams
# (DeepSeek's among them) read ``max_tokens`` and silently ignore the newer name.
_COMPLETION_TOKENS_MODELS = ("o1", "o3", "o4", "gpt-5")


def output_limit(upstream_model: str) -> str:
    """The chat field that bounds an answer's length on ``upstream_model``."""
    name = upstream_model.rsplit("/", 1)[-1]  # (a router's "openai/o4-mini")
    if name.startswith(_COMPLETION_TOKENS_MODELS) and "-chat" not in name:
        return "max_completion_tokens"
    return "max_tokens"


def text_of(content: Any) -> str:
    """The text of a content value: a string, or a list of text-like parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(part.get("text") or "") for part in content
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
    )


def loads_arguments(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as an object; a model's malformed JSON is kept under ``_raw``."""
    import orjson

    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return {"_raw": str(arguments)}
    return value if isinstance(value, dict) else {"value": value}
