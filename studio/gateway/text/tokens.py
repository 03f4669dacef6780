"""Estimated input tokens of a request, where no upstream counts them.

``POST /v1/messages/count_tokens`` asks an upstream that counts tokens itself (the messages
protocol's ``count_tokens``) and uses this estimate for the others. A messages stream rebuilt
from a chat upstream announces it in ``message_start`` (chat reports usage only at the end); its
final ``message_delta`` carries the upstream's own count. A stream the client cut short before
the upstream's usage arrived is charged with these estimates (``estimate_request_tokens``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from studio.gateway.text.translation import text_of

MESSAGE_OVERHEAD = 3  # tokens each turn costs besides its content
IMAGE_TOKENS = 1600  # an image at the size vendors scale large images down to
_PIECES = re.compile(r"\w+|[^\w\s]")


def text_tokens(text: str) -> int:
    """About four characters a token for words, one per punctuation mark."""
    return sum(max(1, math.ceil(len(piece) / 4)) for piece in _PIECES.findall(text))


def _block_tokens(block: Any) -> int:
    if isinstance(block, str):
        return text_tokens(block)
    if not isinstance(block, dict):
        return 0
    kind = block.get("type")
    if kind in ("image", "image_url", "input_image"):
        return IMAGE_TOKENS
    if kind == "tool_use":
        return text_tokens(str(block.get("name") or "")) + text_tokens(orjson.dumps(block.get("input") or {}).decode())
    if kind == "tool_result":
        inner = block.get("content")
        return text_tokens(inner) if isinstance(inner, str) else sum(_block_tokens(b) for b in inner or ())
    if kind == "thinking":
        return text_tokens(str(block.get("thinking") or ""))
    return text_tokens(str(block.get("text") or ""))


def estimate_input_tokens(body: dict[str, Any]) -> int:
    """A messages-format request's input tokens, estimated (no vendor tokenizer offline)."""
    system = body.get("system")
    total = text_tokens(system if isinstance(system, str) else text_of(system)) if system else 0
    for message in body.get("messages") or ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        total += MESSAGE_OVERHEAD + sum(_block_tokens(b) for b in blocks)
    for tool in body.get("tools") or ():
        if isinstance(tool, dict):
            total += text_tokens(str(tool.get("name") or "")) + text_tokens(str(tool.get("description") or ""))
            total += text_tokens(orjson.dumps(tool.get("input_schema") or {}).decode())
    return max(total, 1)


def estimate_request_tokens(fmt: str, body: dict[str, Any]) -> int:
    """A request's input tokens in any text format, estimated: the messages estimate, with a
    chat body's messages as they are and a responses body's ``instructions`` and input items
    as its system text and messages."""
    if fmt == "responses":
        value = body.get("input")
        items = [{"content": value}] if isinstance(value, str) else value if isinstance(value, list) else []
        return estimate_input_tokens({"system": body.get("instructions") or "", "messages": items,
                                      "tools": body.get("tools") or ()})
    return estimate_input_tokens(body)
