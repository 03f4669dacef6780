"""A chat completions client on a messages upstream: request, answer and stream.

Chat keeps system prompts, tool calls and tool results as messages of their own; messages keeps
the system prompt apart, tool calls as ``tool_use`` blocks of the assistant and tool results as
``tool_result`` blocks of the next user turn (consecutive turns of one role are merged, as the
messages format requires alternation). A ``file`` part (a PDF, plain text) becomes a document;
a part the format cannot take (audio, a file id) is a 400 naming it, never dropped.

``response_format`` (``json_schema`` or ``json_object``) becomes a tool the model is made to call
with the answer as its input (forced when it is the only tool; "any tool" next to the client's
own tools; left to the model, with a system note, when thinking is on, which forbids forcing);
that call comes back as the message's JSON content, not as a tool call. A schema whose root is
not an object is wrapped in ``{"value": …}`` (tool inputs are objects) and unwrapped again.

``reasoning_effort`` asks for thinking (on a model that can think). The vendor wants a thinking
tool loop's last assistant turn to start with the signed thinking block that led to its calls:
the answer's message carries its signed blocks as ``thinking_blocks`` (LiteLLM's name for them;
the official OpenAI SDKs keep such a field on a message appended to the conversation, and send it
back), and a turn that brings them back starts with them, so the loop goes on thinking. A turn
without them (a client that writes its own messages) makes the step go without thinking (the
vendor's own advice) rather than fail. In a chain the same field carries the blocks to a
responses client (``responses_to_chat``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson

from studio.core.errors import BadRequest
from studio.gateway.text.translation import Context, Event, loads_arguments, text_of

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


def document_block(file: Any, param: str) -> dict[str, Any]:
    """A chat ``file`` part as the messages format's document: a PDF as it is, plain text as text
    (the two kinds of file the format reads); a file id, which only its own vendor knows, is a 400."""
    data = file.get("file_data") if isinstance(file, dict) else None
    match = _DATA_URL.match(data) if isinstance(data, str) else None
    if match is None:
        raise BadRequest(f"'{param}.file_data' (a base64 data URL) is required for this model (file ids are not "
                         "supported)", param=f"{param}.file_data")
    media_type, encoded = match.group(1), match.group(2)
    if media_type == "application/pdf":
        source = {"type": "base64", "media_type": media_type, "data": encoded}
    elif media_type == "text/plain":
        try:
            source = {"type": "text", "media_type": media_type, "data": base64.b64decode(encoded).decode()}
        except (ValueError, UnicodeDecodeError):
            raise BadRequest(f"'{param}.file_data' is not base64 of UTF-8 text", param=f"{param}.file_data") from None
    else:
        raise BadRequest(f"'{param}.file_data': files of type {media_type} are not supported for this model (PDF "
                         "and plain text are)", param=f"{param}.file_data")
    block: dict[str, Any] = {"type": "document", "source": source}
    if file.get("filename"):
        block["title"] = str(file["filename"])
    return block


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
        elif part.get("type") == "file":
            blocks.append(document_block(part.get("file"), f"{param}[{i}].file"))
        else:  # (input_audio: the messages format hears nothing)
            raise BadRequest(f"content part type '{part.get('type')}' is not supported for this model",
                             param=f"{param}[{i}].type")
    return blocks


ANSWER_TOOL = "json_response"
WRAPPED = "value"


@dataclass(frozen=True, slots=True)
class AnswerTool:
    """The tool that carries a ``response_format`` answer."""

    name: str
    description: str
    schema: dict[str, Any]
    wrapped: bool  # the client's schema is under ``value``

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.schema}

    def content(self, tool_input: Any) -> str:
        value = tool_input.get(WRAPPED) if self.wrapped and isinstance(tool_input, dict) else tool_input
        return orjson.dumps(value).decode()


def answer_tool(body: dict[str, Any]) -> AnswerTool | None:
    """The tool standing for the request's ``response_format`` (None for text answers)."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    taken = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or () if isinstance(t, dict)}
    if fmt.get("type") == "json_object":
        return AnswerTool(ANSWER_TOOL if ANSWER_TOOL not in taken else f"{ANSWER_TOOL}_", "Give the answer as a JSON object.",
                          {"type": "object", "additionalProperties": True}, wrapped=False)
    if fmt.get("type") != "json_schema":
        raise BadRequest("'response_format.type' must be 'text', 'json_object' or 'json_schema'",
                         param="response_format.type")
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema", {}), dict):
        raise BadRequest("'response_format.json_schema' must be an object with a 'schema' object",
                         param="response_format.json_schema")
    schema = spec.get("schema") or {"type": "object"}
    name = str(spec.get("name") or ANSWER_TOOL)
    if name in taken:
        name = ANSWER_TOOL if ANSWER_TOOL not in taken else f"{ANSWER_TOOL}_"
    description = str(spec.get("description") or "Give the answer in this JSON shape.")
    if schema.get("type") == "object":
        return AnswerTool(name, description, schema, wrapped=False)
    return AnswerTool(name, description, {"type": "object", "properties": {WRAPPED: schema}, "required": [WRAPPED]},
                      wrapped=True)


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


THINKING_BLOCKS = ("thinking", "redacted_thinking")


def signed_block(block: Any) -> dict[str, Any] | None:
    """A thinking block as the vendor signed it (``thinking`` and ``signature``, or a redacted
    one's ``data``), without anything else; None for anything that is not one."""
    if not isinstance(block, dict):
        return None
    if block.get("type") == "thinking" and isinstance(block.get("signature"), str) and block["signature"]:
        return {"type": "thinking", "thinking": str(block.get("thinking") or ""), "signature": block["signature"]}
    if block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
        return {"type": "redacted_thinking", "data": block["data"]}
    return None


# What a chat vendor is not sent on a message: the signed blocks this translation writes (no chat
# vendor's API has the field: OpenAI refuses it as an unknown parameter) and, to a model that
# takes no reasoning back, reasoning (OpenAI's chat models refuse ``reasoning_content`` the same
# way).
_NOT_SENT = frozenset({"thinking_blocks"})
_NOT_SENT_WITHOUT_REASONING = frozenset({"thinking_blocks", "reasoning_content"})


def holds_thinking_fields(body: dict[str, Any], raw: bytes | None, takes_reasoning: bool) -> bool:
    """Whether a chat body's messages hold a field ``without_thinking_fields`` leaves out for a
    model that does (or does not) take reasoning back. With the request's ``raw`` JSON the
    messages are walked only when a field's name is in it."""
    if (raw is not None and b'"thinking_blocks"' not in raw
            and (takes_reasoning or b'"reasoning_content"' not in raw)):
        return False
    messages = body.get("messages")
    drop = _NOT_SENT if takes_reasoning else _NOT_SENT_WITHOUT_REASONING
    return isinstance(messages, list) and any(isinstance(m, dict) and not drop.isdisjoint(m) for m in messages)


def without_thinking_fields(messages: list[Any], takes_reasoning: bool) -> list[Any]:
    """The messages for a chat vendor: the signed ``thinking_blocks`` a client brought back left
    out, and any ``reasoning_content`` too unless the model ``takes_reasoning`` (a chat model that
    shows its reasoning, DeepSeek's, wants it back)."""
    drop = _NOT_SENT if takes_reasoning else _NOT_SENT_WITHOUT_REASONING
    return [{k: v for k, v in m.items() if k not in drop} if isinstance(m, dict) and not drop.isdisjoint(m) else m
            for m in messages]


def _in_tool_loop(messages: list[dict[str, Any]]) -> bool:
    """Whether the last assistant turn called tools without the signed thinking that led to them
    (a chat message brings it only as ``thinking_blocks``). While thinking, the vendor wants that
    turn to start with it (400 "Expected `thinking` or `redacted_thinking`, but found
    `tool_use`"): such a tool loop's next step goes without thinking, as the vendor's error
    advises."""
    for message in reversed(messages):
        if message["role"] == "assistant":
            blocks = message["content"]
            return blocks[0].get("type") not in THINKING_BLOCKS and any(
                block.get("type") == "tool_use" for block in blocks)
    return False


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
                if isinstance(message.get("thinking_blocks"), list):
                    signed = [signed_block(block) for block in message["thinking_blocks"]]
                    blocks[:0] = [block for block in signed if block is not None]
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
        if effort in EFFORT_BUDGET and ctx.thinks and not _in_tool_loop(messages):
            budget = EFFORT_BUDGET[effort]
            out["thinking"] = {"type": "enabled", "budget_tokens": budget}
            out["max_tokens"] = max(out["max_tokens"], budget + 1)
        answer = answer_tool(body)
        if answer is not None:
            _ask_for_answer_tool(out, answer, choice)
        if ctx.stream:
            out["stream"] = True
        return out

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        texts, reasoning, calls, signed = [], [], [], []
        answer = answer_tool(ctx.request)
        for block in body.get("content") or ():
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind in THINKING_BLOCKS:
                reasoning.append(block.get("thinking") or "")
                kept = signed_block(block)
                if kept is not None:
                    signed.append(kept)
            elif kind == "tool_use" and answer is not None and block.get("name") == answer.name:
                texts.append(answer.content(block.get("input") or {}))
            elif kind == "tool_use":
                calls.append({"id": block.get("id"), "type": "function", "function": {
                    "name": block.get("name"), "arguments": orjson.dumps(block.get("input") or {}).decode()}})
        message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None, "refusal": None,
                                   "annotations": []}
        if any(reasoning):
            message["reasoning_content"] = "".join(reasoning)
        if signed:
            message["thinking_blocks"] = signed
        if calls:
            message["tool_calls"] = calls
        finish = STOP_TO_FINISH.get(body.get("stop_reason") or "", "stop")
        if finish == "tool_calls" and not calls:
            finish = "stop"  # the only call was the answer itself
        return {"id": "chatcmpl-" + str(body.get("id") or ctx.id("")), "object": "chat.completion",
                "created": ctx.created, "model": ctx.model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": chat_usage(body.get("usage") or {})}

    async def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]:
        chunk_id, usage, finish = ctx.id("chatcmpl-"), {}, None
        tool_index: dict[int, int] = {}  # messages block index → chat tool_calls index
        answer = answer_tool(ctx.request)
        answer_blocks: dict[int, list[str]] = {}  # index of the answer tool's block → JSON fragments
        thinking: dict[int, dict[str, Any]] = {}  # index of a thinking block → the block so far

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
                if block.get("type") in THINKING_BLOCKS:
                    thinking[data.get("index", 0)] = dict(block)
                elif block.get("type") == "tool_use" and answer is not None and block.get("name") == answer.name:
                    answer_blocks[data.get("index", 0)] = []
                elif block.get("type") == "tool_use":
                    index = tool_index[data.get("index", 0)] = len(tool_index)
                    yield chunk({"tool_calls": [{"index": index, "id": block.get("id"), "type": "function",
                                                 "function": {"name": block.get("name"), "arguments": ""}}]})
            elif name == "content_block_delta":
                delta = data.get("delta") or {}
                kind = delta.get("type")
                if kind == "text_delta":
                    yield chunk({"content": delta.get("text") or ""})
                elif kind == "thinking_delta":
                    if data.get("index", 0) in thinking:
                        block = thinking[data.get("index", 0)]
                        block["thinking"] = (block.get("thinking") or "") + (delta.get("thinking") or "")
                    yield chunk({"reasoning_content": delta.get("thinking") or ""})
                elif kind == "signature_delta" and data.get("index", 0) in thinking:
                    thinking[data.get("index", 0)]["signature"] = delta.get("signature") or ""
                elif kind == "input_json_delta" and data.get("index", 0) in answer_blocks:
                    fragment = delta.get("partial_json") or ""
                    if answer is not None and answer.wrapped:
                        answer_blocks[data.get("index", 0)].append(fragment)  # unwrapped when complete
                    elif fragment:
                        yield chunk({"content": fragment})
                elif kind == "input_json_delta" and data.get("index", 0) in tool_index:
                    yield chunk({"tool_calls": [{"index": tool_index[data.get("index", 0)],
                                                 "function": {"arguments": delta.get("partial_json") or ""}}]})
            elif name == "content_block_stop" and data.get("index", 0) in thinking:
                kept = signed_block(thinking.pop(data.get("index", 0)))
                if kept is not None:
                    yield chunk({"thinking_blocks": [kept]})
            elif name == "content_block_stop" and answer is not None and answer.wrapped \
                    and data.get("index", 0) in answer_blocks:
                yield chunk({"content": answer.content(loads_arguments("".join(answer_blocks[data.get("index", 0)])))})
            elif name == "message_delta":
                usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
                finish = STOP_TO_FINISH.get((data.get("delta") or {}).get("stop_reason") or "", "stop")
                if finish == "tool_calls" and not tool_index:
                    finish = "stop"  # the only call was the answer itself
            elif name == "message_stop":
                break
        yield chunk({}, finish or "stop")
        if ctx.include_usage:
            yield None, {"id": chunk_id, "object": "chat.completion.chunk", "created": ctx.created,
                         "model": ctx.model, "choices": [], "usage": chat_usage(usage)}


def _ask_for_answer_tool(out: dict[str, Any], answer: AnswerTool, choice: dict[str, Any] | None) -> None:
    """Offer the answer tool and make the model use it, as far as the request allows."""
    own_tools = out.get("tools") or []
    out["tools"] = [*own_tools, answer.definition()]
    if "thinking" in out:  # the vendor refuses forced tool use while thinking
        note = f"Give your final answer by calling the {answer.name} tool."
        out["system"] = f"{out['system']}\n\n{note}" if out.get("system") else note
        out["tool_choice"] = {"type": "auto"}
    elif not own_tools or (choice or {}).get("type") == "none":
        out["tool_choice"] = {"type": "tool", "name": answer.name}
        if own_tools:  # "none" kept the client's tools out of reach; the answer tool is the only one now
            out["tools"] = [answer.definition()]
    elif (choice or {}).get("type") in (None, "auto"):
        out["tool_choice"] = {"type": "any", **({"disable_parallel_tool_use": True}
                                                 if (choice or {}).get("disable_parallel_tool_use") else {})}


def chat_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}}


TRANSLATOR = ChatToMessages()
