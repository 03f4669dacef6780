"""Variants of a valid request body with one field, in turn, of the wrong JSON type or left out
(the wrong-type sweeps of the gateway's routes and of the sandbox's vendors)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import orjson

# One value of each JSON type, and a list and an object that hold the wrong thing.
WRONG = (None, 1, 1.5, True, "x", [], {}, [1])
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def chat_body(model: str) -> dict[str, Any]:
    """A chat request with every kind of turn: a picture, a tool call, its result, a forced tool."""
    return {
        "model": model, "max_tokens": 20, "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hi"},
                                         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "done"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}}}


def _paths(value: Any, at: tuple = (), depth: int = 5) -> Iterator[tuple]:
    if depth <= 0:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield (*at, key)
        yield from _paths(inner, (*at, key), depth - 1)


def variants(body: dict[str, Any], under: tuple = (), depth: int = 5) -> Iterator[tuple[str, dict[str, Any]]]:
    """(what changed, the body) for each field at or under ``under``, down to ``depth`` levels:
    each wrong value, then the field left out."""
    for path in _paths(body, depth=depth):
        if path[:len(under)] != under:
            continue
        for value in (*WRONG, ...):
            changed = copy.deepcopy(body)
            holder = changed
            for key in path[:-1]:
                holder = holder[key]
            if value is ...:
                del holder[path[-1]]
            else:
                holder[path[-1]] = value
            shown = "(left out)" if value is ... else orjson.dumps(value).decode()
            yield f"{'.'.join(map(str, path))} = {shown}", changed
