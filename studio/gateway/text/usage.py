"""Reading token usage out of each text format, buffered and streamed.

Streams are watched without decoding every event: only the events that carry usage in that
format (chat's usage chunk, messages' ``message_start``/``message_delta``, responses' final
``response.*``) are parsed.
"""

from __future__ import annotations

from typing import Any

import orjson

from studio.gateway.cost import Usage
from studio.providers.sse import SSEEvent

FINAL_RESPONSE_EVENTS = {"response.completed", "response.incomplete", "response.failed"}


def from_body(fmt: str, body: dict[str, Any]) -> tuple[int, int, int]:
    """(input, output, cached input) tokens of a body's ``usage`` in format ``fmt``."""
    usage = body.get("usage") or {}
    if not isinstance(usage, dict):
        return 0, 0, 0
    if fmt == "chat":
        return (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                _detail(usage, "prompt_tokens_details"))
    if fmt == "messages":
        prompt = sum(int(usage.get(k) or 0) for k in
                     ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        return prompt, int(usage.get("output_tokens") or 0), int(usage.get("cache_read_input_tokens") or 0)
    return (int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
            _detail(usage, "input_tokens_details"))


def _detail(usage: dict[str, Any], name: str) -> int:
    details = usage.get(name)
    return int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0


class UsageTap:
    """Watches an upstream stream in its own format and keeps the latest usage seen."""

    __slots__ = ("cached_tokens", "final", "fmt", "input_tokens", "output_tokens")

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.final = False  # the event just observed carried the call's final usage

    def observe(self, event: SSEEvent) -> None:
        self.final = False
        if self.fmt == "chat":
            if b'"usage":{' in event.data or b'"usage": {' in event.data:
                self.input_tokens, self.output_tokens, self.cached_tokens = from_body("chat", _loads(event.data))
                self.final = True
        elif self.fmt == "messages":
            if event.event == "message_start":
                message = _loads(event.data).get("message") or {}
                self.input_tokens, self.output_tokens, self.cached_tokens = from_body("messages", message)
            elif event.event == "message_delta":
                usage = _loads(event.data).get("usage") or {}
                if usage.get("input_tokens") is not None:
                    self.input_tokens, _, self.cached_tokens = from_body("messages", {"usage": usage})
                self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
                self.final = True
        elif event.event in FINAL_RESPONSE_EVENTS:
            self.input_tokens, self.output_tokens, self.cached_tokens = from_body(
                "responses", _loads(event.data).get("response") or {})
            self.final = True

    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                     cached_tokens=self.cached_tokens)


def add_cost(fmt: str, name: str | None, data: dict[str, Any], cost: float) -> bool:
    """Put the call's cost (``cost_usd``, US dollars) into the usage of a stream's final event in
    the client's format; False when this event has no usage to carry it."""
    if fmt == "chat" or (fmt == "messages" and name == "message_delta"):
        usage = data.get("usage")
    elif fmt == "responses" and name in FINAL_RESPONSE_EVENTS:
        usage = (data.get("response") or {}).get("usage")
    else:
        return False
    if not isinstance(usage, dict):
        return False
    usage["cost_usd"] = cost
    return True


def _loads(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
