"""Checking a text request before anything is sent: required fields, types, bounds.

The rules are data (one table per format); a failure is a 400 naming the field. Fields not in
the tables are not checked here and travel on unchanged.
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.text.images import check_images

NUMBER = "number"
INTEGER = "integer"
STRING = "string"
BOOLEAN = "boolean"
ARRAY = "array"
OBJECT = "object"
STRING_OR_ARRAY = "string or array"

_CHECKS = {
    NUMBER: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
    STRING: lambda v: isinstance(v, str),
    BOOLEAN: lambda v: isinstance(v, bool),
    ARRAY: lambda v: isinstance(v, list),
    OBJECT: lambda v: isinstance(v, dict),
    STRING_OR_ARRAY: lambda v: isinstance(v, (str, list)),
}

_CHAT_STRINGS = ("prompt_cache_key", "prompt_cache_retention", "safety_identifier", "service_tier",
                 "reasoning_effort", "verbosity", "user")
FIELD_TYPES: dict[str, dict[str, str]] = {
    "chat": {
        "model": STRING, "messages": ARRAY, "stream": BOOLEAN, "stream_options": OBJECT,
        "temperature": NUMBER, "top_p": NUMBER, "frequency_penalty": NUMBER, "presence_penalty": NUMBER,
        "max_tokens": INTEGER, "max_completion_tokens": INTEGER, "n": INTEGER, "seed": INTEGER,
        "top_logprobs": INTEGER, "logprobs": BOOLEAN, "parallel_tool_calls": BOOLEAN, "logit_bias": OBJECT,
        "response_format": OBJECT, "tools": ARRAY, "functions": ARRAY, "modalities": ARRAY, "metadata": OBJECT,
        **{name: STRING for name in _CHAT_STRINGS},
    },
    "messages": {
        "model": STRING, "messages": ARRAY, "max_tokens": INTEGER, "system": STRING_OR_ARRAY,
        "temperature": NUMBER, "top_p": NUMBER, "top_k": INTEGER, "stop_sequences": ARRAY, "stream": BOOLEAN,
        "tool_choice": OBJECT, "tools": ARRAY, "metadata": OBJECT, "thinking": OBJECT, "output_config": OBJECT,
        "cache_control": OBJECT, "inference_geo": STRING, "service_tier": STRING,
    },
    "responses": {
        "model": STRING, "input": STRING_OR_ARRAY, "instructions": STRING, "previous_response_id": STRING,
        "prompt_cache_key": STRING, "safety_identifier": STRING, "user": STRING, "max_output_tokens": INTEGER,
        "max_tool_calls": INTEGER, "top_logprobs": INTEGER, "temperature": NUMBER, "top_p": NUMBER,
        "parallel_tool_calls": BOOLEAN, "background": BOOLEAN, "store": BOOLEAN, "stream": BOOLEAN,
        "include": ARRAY, "metadata": OBJECT, "reasoning": OBJECT, "text": OBJECT, "tools": ARRAY,
        "stream_options": OBJECT, "context_management": ARRAY, "conversation": OBJECT,
    },
}
# A messages token count (``/v1/messages/count_tokens``) is a messages body without ``max_tokens``.
FIELD_TYPES["count_tokens"] = FIELD_TYPES["messages"]
# The real vendors require these; messages requires max_tokens.
REQUIRED: dict[str, tuple[str, ...]] = {
    "chat": ("model", "messages"),
    "messages": ("model", "messages", "max_tokens"),
    "responses": ("model", "input"),
    "count_tokens": ("model", "messages"),
}
AT_LEAST_ONE = {"max_tokens", "max_completion_tokens", "max_output_tokens", "n", "max_tool_calls"}
# Bounds above 1 the vendors apply: the responses API refuses fewer than 16 output tokens.
MINIMUM: dict[tuple[str, str], int] = {("responses", "max_output_tokens"): 16}
CHAT_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
MESSAGES_ROLES = {"user", "assistant"}


def validate(fmt: str, body: Any, raw: bytes | None = None) -> dict[str, Any]:
    """``body`` as a request of format ``fmt``, or ``BadRequest`` naming the field (``raw``: the
    JSON it was read from, which spares a body without images the walk for them)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    for name in REQUIRED[fmt]:
        if body.get(name) is None:
            raise BadRequest(f"'{name}' is required", param=name)
    types = FIELD_TYPES[fmt]
    for name, value in body.items():  # a body names a few of the fields the table knows
        kind = types.get(name)
        if kind is None or value is None:
            continue
        if not _CHECKS[kind](value):
            raise BadRequest(f"'{name}' must be {'an' if kind[0] in 'aeio' else 'a'} {kind}", param=name)
        least = MINIMUM.get((fmt, name), 1 if name in AT_LEAST_ONE else None)
        if least is not None and value < least:
            raise BadRequest(f"'{name}' must be at least {least}, got {value}", param=name,
                             code="integer_below_min_value")
    _ITEM_CHECKS[fmt](body)
    check_images(fmt, body, raw)
    return body


def _chat_items(body: dict[str, Any]) -> None:
    if not body["messages"]:
        raise BadRequest("'messages' must contain at least one message", param="messages")
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            raise BadRequest(f"'messages[{i}]' must be an object", param=f"messages[{i}]")
        role = message.get("role")
        if not isinstance(role, str) or role not in CHAT_ROLES:
            raise BadRequest(f"'messages[{i}].role' must be one of {', '.join(sorted(CHAT_ROLES))}",
                             param=f"messages[{i}].role")
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise BadRequest(f"'messages[{i}].tool_call_id' is required for a tool message",
                             param=f"messages[{i}].tool_call_id")
    _tools(body, lambda t: isinstance(t.get("function"), dict) and isinstance(t["function"].get("name"), str),
           "function.name")


def _messages_items(body: dict[str, Any]) -> None:
    if not body["messages"]:
        raise BadRequest("'messages' must contain at least one message", param="messages")
    for i, message in enumerate(body["messages"]):
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(role, str) or role not in MESSAGES_ROLES:
            raise BadRequest(f"'messages[{i}].role' must be 'user' or 'assistant'", param=f"messages[{i}].role")
        if not isinstance(message.get("content"), (str, list)):
            raise BadRequest(f"'messages[{i}].content' must be a string or an array of blocks",
                             param=f"messages[{i}].content")
    stops = body.get("stop_sequences") or []
    if not all(isinstance(s, str) for s in stops):
        raise BadRequest("'stop_sequences' must be an array of strings", param="stop_sequences")
    _tools(body, lambda t: isinstance(t.get("name"), str), "name")


def _responses_items(body: dict[str, Any]) -> None:
    value = body["input"]
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise BadRequest(f"'input[{i}]' must be an object", param=f"input[{i}]")
    _tools(body, lambda t: t.get("type") != "function" or isinstance(t.get("name"), str), "name")


def _tools(body: dict[str, Any], ok: Any, field: str) -> None:
    for i, tool in enumerate(body.get("tools") or ()):
        if not isinstance(tool, dict) or not ok(tool):
            raise BadRequest(f"'tools[{i}].{field}' is required", param=f"tools[{i}].{field}")


_ITEM_CHECKS = {"chat": _chat_items, "messages": _messages_items, "responses": _responses_items,
                "count_tokens": _messages_items}
