"""Reading token usage out of each text format, buffered and streamed.

Streams are watched without decoding every event: only the events that carry usage in that
format (chat's usage chunk, messages' ``message_start``/``message_delta``, responses' final
``response.*``) are parsed. ``StreamedText`` keeps the text a stream has sent, in case the client
leaves before the upstream's final usage: the call is then charged for that text.
"""

from __future__ import annotations

from typing import Any

import orjson

from studio.gateway.cost import Usage
from studio.gateway.text.tokens import estimate_request_tokens, text_tokens
from studio.gateway.token_counts import count
from studio.providers.sse import SSEEvent

FINAL_RESPONSE_EVENTS = {"response.completed", "response.incomplete", "response.failed"}
# How a chat event that carries usage is told from the rest without decoding it (compact or spaced).
CHAT_USAGE_MARKS = (b'"usage":{', b'"usage": {')


def from_body(fmt: str, body: dict[str, Any]) -> tuple[int, int, int]:
    """(input, output, cached input) tokens of a body's ``usage`` in format ``fmt``."""
    usage = body.get("usage") or {}
    if not isinstance(usage, dict):
        return 0, 0, 0
    if fmt == "chat":
        return count(usage, "prompt_tokens"), count(usage, "completion_tokens"), _detail(usage, "prompt_tokens_details")
    if fmt == "messages":
        cached = count(usage, "cache_read_input_tokens")
        return (count(usage, "input_tokens") + cached + count(usage, "cache_creation_input_tokens"),
                count(usage, "output_tokens"), cached)
    return count(usage, "input_tokens"), count(usage, "output_tokens"), _detail(usage, "input_tokens_details")


def _detail(usage: dict[str, Any], name: str) -> int:
    details = usage.get(name)
    return count(details, "cached_tokens", f"usage.{name}") if isinstance(details, dict) else 0


class UsageTap:
    """Watches an upstream stream in its own format and keeps the latest usage seen."""

    __slots__ = ("cached_tokens", "complete", "final", "final_event", "fmt", "input_tokens", "output_tokens")

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.final = False  # the event just observed carried the call's final usage
        self.final_event: dict[str, Any] = {}  # that event, decoded (``{}`` if it was no JSON object)
        self.complete = False  # some event carried the call's final usage

    def observe(self, event: SSEEvent) -> None:
        self.final = False
        if self.fmt == "chat":
            if CHAT_USAGE_MARKS[0] in event.data or CHAT_USAGE_MARKS[1] in event.data:
                self.final_event = decoded = _loads(event.data)
                self.input_tokens, self.output_tokens, self.cached_tokens = from_body("chat", decoded)
                self.final = True
        elif self.fmt == "messages":
            if event.event == "message_start":
                message = _loads(event.data).get("message") or {}
                self.input_tokens, self.output_tokens, self.cached_tokens = from_body("messages", message)
            elif event.event == "message_delta":
                self.final_event = decoded = _loads(event.data)
                usage = decoded.get("usage") or {}
                if usage.get("input_tokens") is not None:
                    self.input_tokens, _, self.cached_tokens = from_body("messages", {"usage": usage})
                self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
                self.final = True
        elif event.event in FINAL_RESPONSE_EVENTS:
            self.final_event = decoded = _loads(event.data)
            self.input_tokens, self.output_tokens, self.cached_tokens = from_body(
                "responses", decoded.get("response") or {})
            self.final = True
        self.complete = self.complete or self.final

    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                     cached_tokens=self.cached_tokens)


class StreamedText:
    """The text (answer, reasoning, tool arguments) a stream has sent, read from the events in
    the client's format. Relayed bytes are only kept as they pass (a list append per event); the
    string values of the fields that carry text are cut out of them, and decoded, only if the
    text is counted (a stream that ended without the upstream's usage)."""

    __slots__ = ("fmt", "keys", "pieces", "relayed", "spaced")

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.keys, self.spaced = _TEXT_KEYS[fmt]
        self.pieces: list[str] = []
        self.relayed: list[bytes] = []

    def observe_raw(self, name: str | None, data: bytes) -> None:
        """An event as relayed bytes (a pass-through stream)."""
        if self.carries_text(name):
            self.relayed.append(data)

    def observe_read(self, raw: bytes) -> None:
        """Several events' relayed bytes at once: events that carry text, and others with none of
        the text fields (their ``event:`` and ``data:`` framing does not matter: only the text
        fields' values are cut out of them)."""
        self.relayed.append(raw)

    def _raw_pieces(self) -> list[bytes]:
        """The text fields' string values in the relayed events, still JSON-escaped."""
        out: list[bytes] = []
        for data in self.relayed:
            for key in self.spaced if b'": "' in data else self.keys:
                start = data.find(key)
                while start >= 0:
                    start += len(key)
                    end = data.find(b'"', start)
                    while end > 0 and _escaped(data, end):
                        end = data.find(b'"', end + 1)
                    if end < 0:
                        break
                    if end > start:
                        out.append(data[start:end])
                    start = data.find(key, end)
        return out

    def observe(self, name: str | None, data: dict[str, Any]) -> None:
        """An event as decoded JSON (a translated stream)."""
        if not self.carries_text(name):
            return
        if self.fmt == "chat":
            for choice in data.get("choices") or ():
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if isinstance(delta, dict):
                    self._add(delta.get("content"), delta.get("reasoning_content"))
                    for call in delta.get("tool_calls") or ():
                        function = call.get("function") if isinstance(call, dict) else None
                        if isinstance(function, dict):
                            self._add(function.get("name"), function.get("arguments"))
        elif self.fmt == "messages":
            delta = data.get("delta")
            if isinstance(delta, dict):
                self._add(delta.get("text"), delta.get("thinking"), delta.get("partial_json"))
        else:
            self._add(data.get("delta"))

    def carries_text(self, name: str | None) -> bool:
        """Whether an event of this name carries text of the answer (every chat event does)."""
        if self.fmt == "chat":
            return True
        if self.fmt == "messages":
            return name == "content_block_delta"
        return name is not None and name.endswith(".delta")

    def _add(self, *values: Any) -> None:
        self.pieces.extend(value for value in values if isinstance(value, str) and value)

    def text(self) -> str:
        """What was sent (a stream is read either as bytes or decoded, never both)."""
        return "".join(self.pieces) + "".join(_loads_string(piece) for piece in self._raw_pieces())

    def tokens(self) -> int:
        text = self.text()
        return text_tokens(text) if text else 0


# The fields whose string values are text a stream sends: compact, and with the spaced variants
# too for a writer that puts a space after the colon.
_TEXT_KEYS = {fmt: (tuple(b'"' + name + b'":"' for name in names),
                    tuple(b'"' + name + sep + b'"' for name in names for sep in (b'":', b'": ')))
              for fmt, names in (("chat", (b"content", b"reasoning_content", b"arguments")),
                                 ("messages", (b"text", b"thinking", b"partial_json")),
                                 ("responses", (b"delta",)))}


def _escaped(data: bytes, quote: int) -> bool:
    """The quote at ``quote`` is preceded by an odd number of backslashes."""
    n = quote - 1
    while n >= 0 and data[n] == 0x5C:
        n -= 1
    return (quote - 1 - n) % 2 == 1


def _loads_string(piece: bytes) -> str:
    try:
        value = orjson.loads(b'"' + piece + b'"')
    except orjson.JSONDecodeError:
        return piece.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def cut_usage(tap: UsageTap | None, sent: StreamedText | None, fmt: str, body: dict[str, Any]) -> tuple[int, int, int]:
    """(input, output, cached input) tokens of a stream cut short after it started (``tap`` and
    ``sent``: what it had seen and sent): the upstream's own counts when its final usage had
    arrived, else the larger of what it had reported and the estimates of the request (``body``,
    as the upstream got it in format ``fmt``) and of the text sent so far."""
    if tap is None or sent is None:
        return 0, 0, 0
    if tap.complete:
        return tap.input_tokens, tap.output_tokens, tap.cached_tokens
    input_tokens = tap.input_tokens or estimate_request_tokens(fmt, body)
    return input_tokens, max(tap.output_tokens, sent.tokens()), tap.cached_tokens


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
