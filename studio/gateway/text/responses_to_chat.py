"""A responses client on a chat completions upstream: request, answer and stream.

``instructions`` become a system message and ``input`` (a string or an item array of messages,
``function_call`` and ``function_call_output`` items) becomes chat messages (an output's images in
a user message after the turn's tool messages, which hold text only; an ``input_file`` a ``file``
part); the chat answer becomes output items (``reasoning``, ``message``, ``function_call``), a
truncated one an ``incomplete`` response with ``incomplete_details.reason = max_output_tokens``.
Streams are rebuilt as the full event sequence with increasing ``sequence_number``.

A chat upstream's ``reasoning_content`` is the model's own reasoning, not a summary of it: it
becomes the reasoning item's ``content`` (``reasoning_text`` parts, streamed in
``response.reasoning_text.delta`` events), as OpenAI's API gives the raw reasoning of its
open-weight models, and the item's ``summary`` stays empty (no summary was written).

A messages upstream's signed thinking (in the middle of a chain: ``Context.signed_thinking``)
reaches a client that asks for ``reasoning.encrypted_content`` sealed in the reasoning item's
``encrypted_content``, as OpenAI's own stateless reasoning does; given back, it is the signed
blocks Claude wants at the head of a tool loop's last turn, so a Codex-style client's loop on a
Claude model goes on thinking. Content the gateway did not seal (another vendor's) is left out.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from studio.core import crypto
from studio.core.errors import BadRequest
from studio.gateway.text.translation import Context, Event, output_limit

ECHOED = ("instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "previous_response_id",
          "temperature", "tool_choice", "tools", "top_p", "user", "text", "reasoning", "store")


def _content(content: Any, role: str, param: str) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for i, part in enumerate(content if isinstance(content, list) else ()):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text") or "")})
        elif kind == "refusal":
            parts.append({"type": "text", "text": str(part.get("refusal") or "")})
        elif kind == "input_image":
            url = part.get("image_url")
            if not url:
                raise BadRequest(f"'{param}[{i}].image_url' is required for this model (file ids are not supported)",
                                 param=f"{param}[{i}].image_url")
            image: dict[str, Any] = {"url": url}
            if part.get("detail"):
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        elif kind == "input_file":
            if not part.get("file_data"):
                raise BadRequest(f"'{param}[{i}].file_data' is required for this model (file ids and URLs are not "
                                 "supported)", param=f"{param}[{i}].file_data")
            parts.append({"type": "file", "file": {"filename": str(part.get("filename") or "document.pdf"),
                                                   "file_data": str(part["file_data"])}})
        elif kind is not None:
            raise BadRequest(f"content part type '{kind}' is not supported for this model", param=f"{param}[{i}].type")
    if role != "user" or all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts if p["type"] == "text")
    return parts


def _reasoning_text(item: dict[str, Any]) -> str:
    """The text of a reasoning item's ``reasoning_text`` parts (a summary is not the reasoning)."""
    parts = item.get("content") if isinstance(item.get("content"), list) else ()
    return "".join(str(part.get("text") or "") for part in parts
                   if isinstance(part, dict) and part.get("type") == "reasoning_text")


SEAL_PURPOSE = "studio.gateway.text.reasoning"


def seal_blocks(blocks: list[dict[str, Any]]) -> str:
    """Signed thinking blocks as a reasoning item's ``encrypted_content``."""
    return crypto.seal(orjson.dumps(blocks), SEAL_PURPOSE)


def unseal_blocks(content: Any) -> list[dict[str, Any]]:
    """The blocks ``seal_blocks`` sealed in ``content``; none for anything else."""
    sealed = crypto.unseal(content, SEAL_PURPOSE)
    blocks = orjson.loads(sealed) if sealed is not None else []
    return [block for block in blocks if isinstance(block, dict)] if isinstance(blocks, list) else []


def _messages(body: dict[str, Any], signed_thinking: bool, takes_reasoning: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    reasoning = ""  # a reasoning item's text, for the assistant message that follows it
    signed: list[dict[str, Any]] = []  # its sealed thinking blocks (``signed_thinking``)
    # Images (and files) of function call outputs: a chat tool message holds text only, so they
    # follow in a user message once the outputs of that turn are in (tool messages must follow
    # their calls).
    images: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": str(body["instructions"])})
    value = body.get("input")
    if isinstance(value, str):
        messages.append({"role": "user", "content": value})
        return messages
    for i, item in enumerate(value or ()):
        kind = item.get("type", "message")
        if images and kind != "function_call_output":
            messages.append({"role": "user", "content": images})
            images = []
        if kind == "message":
            # ``developer`` (Codex's instructions, for one) as chat's ``system``, which every chat
            # upstream takes: DeepSeek's refuses the newer role ("unknown variant `developer`").
            role = "system" if item.get("role") == "developer" else item.get("role") or "user"
            messages.append({"role": role, "content": _content(item.get("content"), role, f"input[{i}].content")})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"}}
            last = messages[-1] if messages else None
            if last and last["role"] == "assistant" and last.get("tool_calls") is not None:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):  # parts: the text for the tool, the rest after the turn
                parts = _content(output, "user", f"input[{i}].output")
                if isinstance(parts, list):
                    images += [part for part in parts if part["type"] != "text"]
                    parts = "".join(part["text"] for part in parts if part["type"] == "text")
                output = parts
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": output if isinstance(output, str) else "" if output is None else str(output)})
        elif kind == "reasoning":
            # Given back with the assistant message it led to: a chat upstream that shows its
            # reasoning wants it back (DeepSeek's refuses a turn of tool calls without it).
            if takes_reasoning:  # others refuse it (OpenAI's: an unknown parameter)
                reasoning += _reasoning_text(item)
            if signed_thinking:
                signed += unseal_blocks(item.get("encrypted_content"))
            continue
        else:
            raise BadRequest(f"input item type '{kind}' is not supported for this model", param=f"input[{i}].type")
        if (reasoning or signed) and messages and messages[-1]["role"] == "assistant":
            if reasoning:
                messages[-1].setdefault("reasoning_content", reasoning)
            if signed:
                messages[-1].setdefault("thinking_blocks", signed)
            reasoning, signed = "", []
    if images:
        messages.append({"role": "user", "content": images})
    return messages


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return choice if choice in ("auto", "none", "required") else None


class ResponsesToChat:
    source = "responses"
    target = "chat"

    def request(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        out: dict[str, Any] = {"model": ctx.upstream_model, "messages": _messages(body, ctx.signed_thinking, ctx.takes_reasoning)}
        if body.get("max_output_tokens") is not None:
            out[output_limit(ctx.upstream_model)] = body["max_output_tokens"]
        for name in ("temperature", "top_p", "parallel_tool_calls", "user", "safety_identifier", "prompt_cache_key"):
            if body.get(name) is not None:
                out[name] = body[name]
        tools = []
        for i, tool in enumerate(body.get("tools") or ()):
            if tool.get("type") != "function":
                raise BadRequest(f"tool type '{tool.get('type')}' is not supported for this model",
                                 param=f"tools[{i}].type")
            function = {"name": tool.get("name"), "description": tool.get("description") or "",
                        "parameters": tool.get("parameters") or {"type": "object", "properties": {}}}
            if tool.get("strict") is not None:
                function["strict"] = tool["strict"]
            tools.append({"type": "function", "function": function})
        if tools:
            out["tools"] = tools
            choice = _tool_choice(body.get("tool_choice"))
            if choice is not None:
                out["tool_choice"] = choice
        fmt = ((body.get("text") or {}).get("format") or {}) if isinstance(body.get("text"), dict) else {}
        if fmt.get("type") == "json_schema":
            out["response_format"] = {"type": "json_schema", "json_schema": {
                k: fmt[k] for k in ("name", "description", "schema", "strict") if k in fmt}}
        elif fmt.get("type") == "json_object":
            out["response_format"] = {"type": "json_object"}
        effort = (body.get("reasoning") or {}).get("effort") if isinstance(body.get("reasoning"), dict) else None
        if effort and effort != "none" and ctx.thinks:
            out["reasoning_effort"] = effort
        if ctx.stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        items: list[dict[str, Any]] = []
        signed = message.get("thinking_blocks") if _seals(ctx) else None
        if message.get("reasoning_content") or signed:
            item = reasoning_item(ctx, message.get("reasoning_content") or "")
            if signed:
                item["encrypted_content"] = seal_blocks(signed)
            items.append(item)
        if message.get("content"):
            items.append(message_item(ctx, str(message["content"])))
        for n, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            items.append(call_item(ctx, n, call.get("id"), function.get("name"), function.get("arguments") or ""))
        status = "incomplete" if choice.get("finish_reason") == "length" else "completed"
        return response_object(ctx, status, items, responses_usage(body.get("usage") or {}))

    async def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]:
        writer = _EventWriter(ctx)
        finish, usage, started = None, {}, False
        async for _, chunk in events:
            if not started:
                # Nothing is sent before the upstream answers, so its errors keep their HTTP status.
                started = True
                for event in writer.begin():
                    yield event
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or ():
                change = choice.get("delta") or {}
                if change.get("reasoning_content"):
                    for event in writer.reasoning(change["reasoning_content"]):
                        yield event
                if change.get("thinking_blocks") and _seals(ctx):
                    for event in writer.signed(change["thinking_blocks"]):
                        yield event
                if change.get("content"):
                    for event in writer.text(change["content"]):
                        yield event
                for call in change.get("tool_calls") or ():
                    for event in writer.tool_call(call):
                        yield event
                finish = choice.get("finish_reason") or finish
        if not started:
            for event in writer.begin():
                yield event
        for event in writer.end("incomplete" if finish == "length" else "completed", responses_usage(usage)):
            yield event


class _EventWriter:
    """Builds the responses event sequence item by item, numbering every event."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.sequence = -1
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.calls: dict[int, dict[str, Any]] = {}
        self.blocks: list[dict[str, Any]] = []  # the open reasoning item's signed thinking

    def event(self, kind: str, **payload: Any) -> Event:
        self.sequence += 1
        return kind, {"type": kind, "sequence_number": self.sequence, **payload}

    def begin(self) -> list[Event]:
        pending = response_object(self.ctx, "in_progress", [], None)
        return [self.event("response.created", response=pending), self.event("response.in_progress", response=pending)]

    def _add(self, item: dict[str, Any], announced: dict[str, Any]) -> list[Event]:
        events = self.close()
        self.items.append(item)
        self.open = item
        if "status" in item:  # (a reasoning item has none)
            announced = {**announced, "status": "in_progress"}
        events.append(self.event("response.output_item.added", output_index=len(self.items) - 1, item=announced))
        return events

    def reasoning(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self.open is None or self.open["type"] != "reasoning":
            item = reasoning_item(self.ctx, "", len(self.items))
            events += self._add(item, {**item, "content": []})
            events.append(self.event("response.content_part.added", item_id=item["id"],
                                     output_index=len(self.items) - 1, content_index=0,
                                     part={"type": "reasoning_text", "text": ""}))
        item = self.open
        item["content"][0]["text"] += text
        events.append(self.event("response.reasoning_text.delta", item_id=item["id"],
                                 output_index=len(self.items) - 1, content_index=0, delta=text))
        return events

    def signed(self, blocks: list[dict[str, Any]]) -> list[Event]:
        """Signed thinking blocks of the open reasoning item (opening one if none is: redacted
        thinking has no text), sealed in its ``encrypted_content`` when it closes."""
        events = self.reasoning("") if self.open is None or self.open["type"] != "reasoning" else []
        self.blocks += blocks
        return events

    def text(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self.open is None or self.open["type"] != "message":
            item = message_item(self.ctx, "", len(self.items))
            events += self._add(item, {**item, "content": []})
            events.append(self.event("response.content_part.added", item_id=item["id"],
                                     output_index=len(self.items) - 1, content_index=0,
                                     part={"type": "output_text", "text": "", "annotations": []}))
        item = self.open
        item["content"][0]["text"] += text
        events.append(self.event("response.output_text.delta", item_id=item["id"], output_index=len(self.items) - 1,
                                 content_index=0, delta=text, logprobs=[]))
        return events

    def tool_call(self, call: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        index = call.get("index", 0)
        function = call.get("function") or {}
        item = self.calls.get(index)
        if item is None:
            item = self.calls[index] = call_item(self.ctx, index, call.get("id"), function.get("name"), "")
            events += self._add(item, dict(item))
        if function.get("arguments"):
            item["arguments"] += function["arguments"]
            events.append(self.event("response.function_call_arguments.delta", item_id=item["id"],
                                     output_index=self.items.index(item), delta=function["arguments"]))
        return events

    def close(self) -> list[Event]:
        item, self.open = self.open, None
        if item is None:
            return []
        index = self.items.index(item)
        events: list[Event] = []
        if item["type"] == "message":
            part = item["content"][0]
            events.append(self.event("response.output_text.done", item_id=item["id"], output_index=index,
                                     content_index=0, text=part["text"], logprobs=[]))
            events.append(self.event("response.content_part.done", item_id=item["id"], output_index=index,
                                     content_index=0, part=part))
        elif item["type"] == "reasoning":
            if self.blocks:
                item["encrypted_content"], self.blocks = seal_blocks(self.blocks), []
            part = item["content"][0]
            events.append(self.event("response.reasoning_text.done", item_id=item["id"], output_index=index,
                                     content_index=0, text=part["text"]))
            events.append(self.event("response.content_part.done", item_id=item["id"], output_index=index,
                                     content_index=0, part=part))
        elif item["type"] == "function_call":
            events.append(self.event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                                     name=item["name"], arguments=item["arguments"]))
        if "status" in item:
            item["status"] = "completed"
        events.append(self.event("response.output_item.done", output_index=index, item=item))
        return events

    def end(self, status: str, usage: dict[str, Any]) -> list[Event]:
        events = self.close()
        final = response_object(self.ctx, status, self.items, usage)
        events.append(self.event(f"response.{status}", response=final))
        return events


def _seals(ctx: Context) -> bool:
    """Signed thinking is sealed for the client: it comes from the middle of a chain, and the
    client asked for the reasoning's encrypted content."""
    include = ctx.request.get("include")
    return ctx.signed_thinking and isinstance(include, list) and "reasoning.encrypted_content" in include


_OWN_REASONING_ID = re.compile(r"rs_\d+_")  # ``reasoning_item``'s ids (a vendor's: ``rs_`` and hex)


def own_reasoning(item: Any) -> bool:
    """A reasoning item this translation wrote: its reasoning came from a chat upstream (or a
    messages one, through the chain), so a responses vendor knows neither its id nor its content
    (OpenAI refuses it: an item it never stored, content it cannot verify)."""
    return (isinstance(item, dict) and item.get("type") == "reasoning" and isinstance(item.get("id"), str)
            and _OWN_REASONING_ID.match(item["id"]) is not None)


def holds_own_reasoning(body: dict[str, Any], raw: bytes | None) -> bool:
    """Whether a responses body's input holds ``own_reasoning`` items. With the request's ``raw``
    JSON, the input is walked only when an item id may start in it (one behind a ``\\u`` escape
    is missed, and the vendor refuses it as it would without the gateway)."""
    items = body.get("input")
    return (raw is None or b'"rs_' in raw) and isinstance(items, list) and any(map(own_reasoning, items))


def without_own_reasoning(items: list[Any]) -> list[Any]:
    """The input for a responses vendor: the ``own_reasoning`` items left out, as OpenAI advises
    for an item it does not know ("remove this item from your input")."""
    return [item for item in items if not own_reasoning(item)]


def reasoning_item(ctx: Context, text: str, n: int = 0) -> dict[str, Any]:
    """The upstream's reasoning as the item's text: no summary was written, and the item has no
    ``status`` (OpenAI's reasoning items carry none)."""
    return {"type": "reasoning", "id": ctx.id(f"rs_{n}_"), "summary": [],
            "content": [{"type": "reasoning_text", "text": text}]}


def message_item(ctx: Context, text: str, n: int = 0) -> dict[str, Any]:
    return {"type": "message", "id": ctx.id(f"msg_{n}_"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


def call_item(ctx: Context, n: int, call_id: Any, name: Any, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "id": ctx.id(f"fc_{n}_"), "call_id": call_id or ctx.id(f"call_{n}_"),
            "name": name, "arguments": arguments, "status": "completed"}


def responses_usage(usage: dict[str, Any]) -> dict[str, Any]:
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {"input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": int((usage.get("prompt_tokens_details") or {})
                                                          .get("cached_tokens") or 0)},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": int((usage.get("completion_tokens_details") or {})
                                                              .get("reasoning_tokens") or 0)},
            "total_tokens": prompt + completion}


def response_object(ctx: Context, status: str, output: list[dict[str, Any]],
                    usage: dict[str, Any] | None) -> dict[str, Any]:
    request = ctx.request
    done = status in ("completed", "incomplete", "failed")
    body: dict[str, Any] = {
        "id": ctx.id("resp_"), "object": "response", "created_at": ctx.created, "status": status,
        "completed_at": int(time.time()) if status == "completed" else None, "background": False,
        "error": None, "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "model": ctx.model, "output": output if done else [], "truncation": "disabled",
        "usage": usage if done else None,
    }
    for name in ECHOED:
        body[name] = request.get(name)
    body["parallel_tool_calls"] = request.get("parallel_tool_calls", True)
    body["tool_choice"] = request.get("tool_choice") or "auto"
    body["tools"] = request.get("tools") or []
    body["metadata"] = request.get("metadata") or {}
    body["text"] = request.get("text") or {"format": {"type": "text"}}
    body["reasoning"] = request.get("reasoning") or {"effort": None, "summary": None}
    body["store"] = bool(request.get("store", False))
    return body


TRANSLATOR = ResponsesToChat()
