"""One structured line per /v1 request, on the ``studio.requests`` logger.

The line is a JSON object: request id, key prefix, user, model, upstream, status, latency and
time to first byte, tokens, images and cost. Never a key or credential; the prompt only with
``STUDIO_LOG_PROMPTS=1``. ``STUDIO_REQUEST_LOG=0`` turns the line off.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

import orjson

from studio.core.logs import BatchedLineHandler, MessageFormatter
from studio.core.principal import Principal
from studio.gateway.cost import Usage

logger = logging.getLogger("studio.requests")

PROMPT_LIMIT = 2000  # characters of prompt kept in a line


def entry(*, request_id: str, method: str, path: str, family: str, status: int, latency_ms: float,
          first_byte_ms: float, principal: Principal | None = None, model: str = "", upstream: str = "",
          usage: Usage | None = None, cost: str | None = None, prompt: str | None = None) -> dict[str, Any]:
    """A line's fields (``cost``: the call's cost as ``cost.display`` writes it, None if unknown)."""
    fields: dict[str, Any] = {
        "request_id": request_id, "method": method, "path": path, "family": family,
        "key_prefix": principal.key_prefix if principal is not None else None,
        "user_id": principal.user_id if principal is not None else None,
        "model": model or None, "upstream": upstream or None, "status": status,
        # To a tenth of a millisecond, as a whole number of tenths: ``round(x, 1)`` goes through a
        # decimal string and cost four times as much (together about 3,000 instructions a line).
        "latency_ms": round(latency_ms * 10) / 10, "first_byte_ms": round(first_byte_ms * 10) / 10,
        "input_tokens": 0, "output_tokens": 0, "images": 0, "cost_usd": cost,
    }
    if usage is not None:
        fields["input_tokens"], fields["output_tokens"], fields["images"] = (
            usage.input_tokens, usage.output_tokens, usage.image_count)
    if prompt is not None:
        fields["prompt"] = prompt
    return fields


def emit(fields: dict[str, Any]) -> None:
    """Log a line of ``fields`` (``entry``) as one JSON object."""
    if not logger.isEnabledFor(logging.INFO):
        return
    text = orjson.dumps(fields).decode()
    handlers = logger.handlers
    if len(handlers) == 1 and not logger.propagate and not logger.filters:
        handler = handlers[0]
        if (type(handler) is BatchedLineHandler and not handler.filters
                and type(handler.formatter) is MessageFormatter and handler.level <= logging.INFO):
            # The settings' own set-up: the one handler would write the message as it is, so the
            # line goes straight to it, without a record for it to format.
            handler.write_line(text)
            return
    # ``handle`` of a record made here is ``logger.info`` without its walk up the stack for the
    # caller's file and line, which every line would name the same.
    logger.handle(_record(text))


# What the record constructor works out the same for every line of a thread (source file and
# module names, level name, thread and process names), once per thread and process.
_bases: dict[tuple[int, int], tuple[dict[str, Any], float]] = {}


def _record(message: str) -> logging.LogRecord:
    """The ``LogRecord`` ``makeRecord`` would make of ``message``, from the attributes that never
    change between lines plus the time (unless a record factory of someone else's is set)."""
    if logging.getLogRecordFactory() is not logging.LogRecord:
        return logger.makeRecord(logger.name, logging.INFO, __file__, 0, message, None, None)
    where = (threading.get_ident(), os.getpid())
    found = _bases.get(where)
    if found is None:
        if len(_bases) >= 256:  # threads come and go (an ident may even come back under another name)
            _bases.clear()
        first = logging.LogRecord(logger.name, logging.INFO, __file__, 0, "", None, None)
        found = _bases[where] = (dict(vars(first)), first.created - first.relativeCreated / 1000)
    base, started = found
    record = logging.LogRecord.__new__(logging.LogRecord)
    attributes = record.__dict__
    attributes.update(base)
    now = time.time()
    attributes["msg"] = message
    attributes["created"] = now
    attributes["msecs"] = int((now - int(now)) * 1000) + 0.0
    attributes["relativeCreated"] = (now - started) * 1000
    return record


def _text(value: Any) -> str | None:
    """The text of a prompt-ish value: a string, or the text parts of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in value if isinstance(p, str | dict)]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    if isinstance(value, dict):
        return _text(value.get("content") if "content" in value else value.get("parts", value.get("text")))
    return None


def prompt_of(body: bytes) -> str | None:
    """The prompt of a /v1 JSON body, whatever its family: ``prompt`` (images, video), the last
    of ``messages`` (chat, messages), ``input`` (responses) or the last of ``contents`` (native).
    Media (base64 images) are never included."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    text = None
    if "prompt" in data:
        text = _text(data["prompt"])
    elif isinstance(data.get("messages"), list) and data["messages"]:
        text = _text(data["messages"][-1])
    elif "input" in data:
        value = data["input"]
        text = _text(value[-1] if isinstance(value, list) and value and isinstance(value[-1], dict) else value)
    elif isinstance(data.get("contents"), list) and data["contents"]:
        text = _text(data["contents"][-1])
    elif isinstance(data.get("content"), list):  # video protocol A: a list of text and image parts
        text = _text(data["content"])
    return text[:PROMPT_LIMIT] if text else None
