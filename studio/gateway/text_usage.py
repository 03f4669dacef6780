"""Reading token usage out of each text format, buffered and streamed.

Streams are watched without decoding every event: only the events that carry usage in that
format (chat's usage chunk, messages' ``message_start``/``message_delta``, responses' final
``response.*``) are parsed.
"""

from __future__ import annotations

from typing import Any

import orjson

from studio.providers.sse import SSEEvent

FINAL_RESPONSE_EVENTS = {"response.completed", "response.incomplete", "response.failed"}


def from_body(fmt: str, body: dict[str, Any]) -> tuple[int, int]:
    usage = body.get("usage") or {}
    if not isinstance(usage, dict):
        return 0, 0
    if fmt == "chat":
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    if fmt == "messages":
        prompt = sum(int(usage.get(k) or 0) for k in
                     ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        return prompt, int(usage.get("output_tokens") or 0)
    return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)


class UsageTap:
    """Watches an upstream stream in its own format and keeps the latest usage seen."""

    __slots__ = ("fmt", "input_tokens", "output_tokens")

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.input_tokens = 0
        self.output_tokens = 0

    def observe(self, event: SSEEvent) -> None:
        if self.fmt == "chat":
            if b'"usage":{' in event.data or b'"usage": {' in event.data:
                self.input_tokens, self.output_tokens = from_body("chat", _loads(event.data))
        elif self.fmt == "messages":
            if event.event == "message_start":
                message = _loads(event.data).get("message") or {}
                self.input_tokens, self.output_tokens = from_body("messages", message)
            elif event.event == "message_delta":
                usage = _loads(event.data).get("usage") or {}
                if usage.get("input_tokens") is not None:
                    self.input_tokens = from_body("messages", {"usage": usage})[0]
                self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
        elif event.event in FINAL_RESPONSE_EVENTS:
            self.input_tokens, self.output_tokens = from_body("responses", _loads(event.data).get("response") or {})


def _loads(data: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
