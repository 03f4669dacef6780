"""A chat completions client on a messages upstream: request, answer and stream.

Chat keeps system prompts, tool calls and tool results as messages of their own; messages keeps
the system prompt apart, tool calls as ``tool_use`` blocks of the assistant and tool results as
``tool_result`` blocks of the next user turn (consecutive turns of one role are merged, as the
messages format requires alternation).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import orjson

from .errors import BadRequest
from .text_translation import Context, Event, loads_arguments, text_of

STOP_TO_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                  "refusal": "content_filter", "pause_turn": "stop", "model_context_window_exceeded": "length"}
EFFORT_BUDGET = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384}
_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.DOTALL)


def image_block(url: str, param: str) -> dict[str, Any]:
    match = _DATA_URL.match(url)
    if match:
        return {"type": "image", "source": {"type": "base64", "media_type": match.group(1), "data": match.group(2)}}
    if url.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": url}}
    raise BadRequest(f"'{param}' must be an http(s) URL or a base64 data URL", param=param)


def _blocks(content: Any, param: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for i, part in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text") or "")})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            blocks.append(image_block(str(url or ""), f"{param}[{i}].image_url.url"))
        elif part.get("type") == "refusal":
            blocks.append({"type": "text", "text": str(part.get("refusal") or "")})
    return blocks


def _append(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    result: dict[str, Any] | None
    if choice == "none":
        result = {"type": "none"}
    elif choice == "required":
        result = {"type": "any"}
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        result = {"type": "tool", "name": choice["function"].get("name")}
    elif choice == "auto" or parallel is False:
        result = {"type": "auto"}
    else:
        result = None
    if result is not None and parallel is False and result["type"] != "none":
        result["disable_parallel_tool_use"] = True
    return result


class ChatToMessages:
    source = "chat"
    target = "messages"

    def request(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if (body.get("n") or 1) > 1:
            raise BadRequest("'n' greater than 1 is not supported for this model", param="n")
        system: list[str] = []
        messages: list[dict[str, Any]] = []
        for i, message in enumerate(body.get("messages") or []):
            role, content, param = message.get("role"), message.get("content"), f"messages[{i}].content"
            if role in ("system", "developer"):
                system.append(text_of(content))
            elif role == "user":
                _append(messages, "user", _blocks(content, param))
            elif role == "assistant":
                blocks = _blocks(content, param)
                for call in message.get("tool_calls") or ():
                    function = call.get("function") or {}
                    blocks.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name"),
                                   "input": loads_arguments(function.get("arguments"))})
                _append(messages, "assistant", blocks)
            elif role in ("tool", "function"):
                _append(messages, "user", [{"type": "tool_result",
                                            "tool_use_id": message.get("tool_call_id") or message.get("name"),
                                            "content": text_of(content)}])
        out: dict[str, Any] = {"model": ctx.upstream_model, "messages": messages,
                               "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens")
                               or ctx.default_max_tokens}
        if system:
            out["system"] = "\n\n".join(s for s in system if s)
        for name in ("temperature", "top_p"):
            if body.get(name) is not None:
                out[name] = body[name]
        stop = body.get("stop")
        if stop:
            out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        tools = [t.get("function") for t in body.get("tools") or () if isinstance(t, dict)]
        if tools:
            out["tools"] = [{"name": f.get("name"), "description": f.get("description") or "",
                             "input_schema": f.get("parameters") or {"type": "object", "properties": {}}}
                            for f in tools if isinstance(f, dict)]
        choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
        if choice is not None and tools:
            out["tool_choice"] = choice
        if body.get("user"):
            out["metadata"] = {"user_id": str(body["user"])}
        effort = body.get("reasoning_effort")
        if effort in EFFORT_BUDGET:
            budget = EFFORT_BUDGET[effort]
            out["thinking"] = {"type": "enabled", "budget_tokens": budget}
            out["max_tokens"] = max(out["max_tokens"], budget + 1)
        if ctx.stream:
            out["stream"] = True
        return out

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        texts, reasoning, calls = [], [], []
        for block in body.get("content") or ():
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "thinking":
                reasoning.append(block.get("thinking") or "")
            elif kind == "tool_use":
                calls.append({"id": block.get("id"), "type": "function", "function": {
                    "name": block.get("name"), "arguments": orjson.dumps(block.get("input") or {}).decode()}})
        message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None, "refusal": None,
                                   "annotations": []}
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        if calls:
            message["tool_calls"] = calls
        return {"id": "chatcmpl-" + str(body.get("id") or ctx.id("")), "object": "chat.completion",
                "created": ctx.created, "model": ctx.model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": STOP_TO_FINISH.get(body.get("stop_reason") or "", "stop")}],
                "usage": chat_usage(body.get("usage") or {})}

    async def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]:
        chunk_id, usage, finish = ctx.id("chatcmpl-"), {}, None
        tool_index: dict[int, int] = {}  # messages block index → chat tool_calls index

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Event:
            data = {"id": chunk_id, "object": "chat.completion.chunk", "created": ctx.created, "model": ctx.model,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
            if ctx.include_usage:
                data["usage"] = None
            return None, data

        async for name, data in events:
            if name == "message_start":
                message = data.get("message") or {}
                chunk_id = "chatcmpl-" + str(message.get("id") or ctx.token)
                usage.update(message.get("usage") or {})
                yield chunk({"role": "assistant", "content": ""})
            elif name == "content_block_start":
                block = data.get("content_block") or {}
                if block.get("type") == "tool_use":
                    index = tool_index[data.get("index", 0)] = len(tool_index)
                    yield chunk({"tool_calls": [{"index": index, "id": block.get("id"), "type": "function",
                                                 "function": {"name": block.get("name"), "arguments": ""}}]})
            elif name == "content_block_delta":
                delta = data.get("delta") or {}
                kind = delta.get("type")
                if kind == "text_delta":
                    yield chunk({"content": delta.get("text") or ""})
                elif kind == "thinking_delta":
                    yield chunk({"reasoning_content": delta.get("thinking") or ""})
                elif kind == "input_json_delta" and data.get("index", 0) in tool_index:
                    yield chunk({"tool_calls": [{"index": tool_index[data.get("index", 0)],
                                                 "function": {"arguments": delta.get("partial_json") or ""}}]})
            elif name == "message_delta":
                usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
                finish = STOP_TO_FINISH.get((data.get("delta") or {}).get("stop_reason") or "", "stop")
            elif name == "message_stop":
                break
        yield chunk({}, finish or "stop")
        if ctx.include_usage:
            yield None, {"id": chunk_id, "object": "chat.completion.chunk", "created": ctx.created,
                         "model": ctx.model, "choices": [], "usage": chat_usage(usage)}


def chat_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}}


TRANSLATOR = ChatToMessages()
