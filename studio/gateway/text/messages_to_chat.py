"""A messages client on a chat completions upstream: request, answer and stream.

The system prompt becomes the first chat message, ``tool_result`` blocks become ``tool``
messages (placed before the user's text of the same turn), ``tool_use`` blocks become the
assistant's ``tool_calls``, images become ``image_url`` parts (a tool result's in a user message
after the tool messages: a chat tool message holds text only), documents ``file`` parts (a plain
text one its text). The chat stream is rebuilt as
``message_start`` … ``message_stop`` with one content block per text run or tool call; the
final ``message_delta`` waits for the usage chunk, which is always requested upstream, and
``message_start`` announces the gateway's estimate of the input tokens until then.

A chat upstream's reasoning becomes a ``thinking`` block whose ``signature`` the gateway signs
(HMAC of the thinking text under a key derived from ``SECRET_KEY``); a client that sends the block
back is checked, and a changed block is refused with a 400 naming it, as the vendor does. A
checked block goes back upstream as its assistant message's ``reasoning_content``: a chat
upstream that shows its reasoning wants it back (DeepSeek's, in thinking mode, refuses a turn of
tool calls without it). A client that asks for ``thinking.display: omitted`` gets the block as the
vendor gives it then, its text empty and sealed (encrypted) inside the signature, which carries it
back upstream all the same.

A conversation switched between models holds the other side's blocks. Claude's thinking (a
signature in no form the gateway writes, which it cannot check) reaches a chat upstream as its
text. The gateway's own blocks are left out of a call to a messages vendor, which refuses a
signature it did not make (``without_own_thinking``).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import orjson
from django.utils.crypto import constant_time_compare, salted_hmac

from studio.core import crypto
from studio.core.errors import BadRequest
from studio.gateway.text.tokens import estimate_input_tokens
from studio.gateway.text.translation import Context, Event, loads_arguments, output_limit, text_of

# A thinking budget as the chat format's reasoning effort (the inverse of chat_to_messages' table).
BUDGET_EFFORT = ((1024, "low"), (8192, "medium"))
# Adaptive thinking's effort (``output_config.effort``; Claude's default is high) as the chat
# format's: ``max`` is the chat format's highest, ``high``.
ADAPTIVE_EFFORT = {"low": "low", "medium": "medium", "high": "high", "max": "high"}
FINISH_TO_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                  "content_filter": "refusal"}


def _image_part(block: dict[str, Any], param: str) -> dict[str, Any]:
    source = block.get("source")
    if not isinstance(source, dict):
        raise BadRequest(f"'{param}.source' must be an object with a type", param=f"{param}.source")
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source.get('data') or ''}"
    elif source.get("type") == "url":
        url = str(source.get("url") or "")
    else:
        raise BadRequest(f"'{param}.source.type' must be 'base64' or 'url' for this model", param=f"{param}.source")
    return {"type": "image_url", "image_url": {"url": url}}


def _document_part(block: dict[str, Any], param: str) -> dict[str, Any]:
    """A document as chat's: a base64 file (a PDF) as a ``file`` part, plain text as text."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "base64":
        file = {"filename": str(block.get("title") or "document.pdf"),
                "file_data": f"data:{source.get('media_type') or 'application/pdf'};base64,{source.get('data') or ''}"}
        return {"type": "file", "file": file}
    if kind == "text":
        return {"type": "text", "text": str(source.get("data") or "")}
    raise BadRequest(f"'{param}.source.type' must be 'base64' or 'text' for this model", param=f"{param}.source.type")


def _user_messages(content: Any, param: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    results, parts = [], []
    for i, block in enumerate(content if isinstance(content, list) else ()):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif kind == "image":
            parts.append(_image_part(block, f"{param}[{i}]"))
        elif kind == "document":
            parts.append(_document_part(block, f"{param}[{i}]"))
        elif kind == "tool_result":
            inner = block.get("content")
            text = text_of(inner) if not isinstance(inner, str) else inner
            if block.get("is_error"):
                text = f"Error: {text}"
            results.append({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text})
            # A chat tool message holds text only: the result's images (a screenshot, a file read)
            # follow in the user message after the tool messages, instead of being lost.
            for j, part in enumerate(inner if isinstance(inner, list) else ()):
                if isinstance(part, dict) and part.get("type") == "image":
                    parts.append(_image_part(part, f"{param}[{i}].content[{j}]"))
    if parts:
        only_text = all(p["type"] == "text" for p in parts)
        results.append({"role": "user", "content": "".join(p["text"] for p in parts) if only_text else parts})
    return results


SIGNATURE_SALT = "studio.gateway.text.thinking"
SIGNATURE_PREFIX = b"sgw1"


def sign_thinking(thinking: str) -> str:
    """The ``signature`` of a thinking block the gateway made: verifiable by any of its processes."""
    digest = salted_hmac(SIGNATURE_SALT, thinking, algorithm="sha256").digest()
    return base64.b64encode(SIGNATURE_PREFIX + digest).decode()


def seal_thinking(thinking: str) -> str:
    """The ``signature`` of a thinking block whose text is omitted: the text, sealed."""
    return crypto.seal(thinking.encode(), SIGNATURE_SALT)


# How every ``sign_thinking`` signature starts (base64 of ``SIGNATURE_PREFIX``'s four bytes).
_OWN_START = base64.b64encode(SIGNATURE_PREFIX).decode()[:5]


def own_signature(signature: Any) -> bool:
    """Whether a thinking block's ``signature`` has a form the gateway writes (an HMAC of
    ``sign_thinking``'s or a seal of ``seal_thinking``'s), whether or not it checks out. A
    vendor's (Claude's) has neither."""
    return isinstance(signature, str) and (signature.startswith(_OWN_START) or crypto.sealed_form(signature))


def _checked_thinking(block: dict[str, Any], param: str) -> str:
    """The text of a thinking block the gateway made (its own, or sealed in its signature); a
    changed one is refused. Another model's block (Claude's, in a conversation switched to this
    model) is one the gateway cannot check: its text goes as it came (none when its display was
    omitted), which a thinking chat model takes as the reasoning that led to the turn."""
    signature = block.get("signature")
    thinking = str(block.get("thinking") or "")
    if not own_signature(signature):
        return thinking
    unsealed = crypto.unseal(signature, SIGNATURE_SALT) if not thinking else None
    if unsealed is not None:
        return unsealed.decode()
    if constant_time_compare(signature, sign_thinking(thinking)):
        return thinking
    raise BadRequest(f"{param}: Invalid `signature` in `thinking` block", param=f"{param}.signature")


def _own_thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "thinking" and own_signature(block.get("signature"))


def holds_own_thinking(body: dict[str, Any], raw: bytes | None) -> bool:
    """Whether a messages body holds thinking blocks the gateway signed (a chat upstream's
    reasoning). With the request's ``raw`` JSON the messages are walked only when such a signature
    may start in it."""
    if raw is not None and b'"' + _OWN_START.encode() not in raw and b'"gAAAAA' not in raw:
        return False
    messages = body.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), list)
        and any(map(_own_thinking, m["content"])) for m in messages)


def without_own_thinking(body: dict[str, Any]) -> dict[str, Any]:
    """The body for a messages vendor, which refuses a thinking block it did not sign ("Invalid
    `signature`"): the gateway's blocks left out (a turn left empty with them; the vendor joins
    the turns of one role around it). When that leaves a thinking tool loop's last assistant turn
    without the thinking it must start with, the step goes without thinking, the vendor's own
    advice ("To avoid this requirement, disable `thinking`")."""
    messages: list[Any] = []
    cut: Any = None  # the last assistant turn that lost a block
    for message in body["messages"]:
        content = message.get("content") if isinstance(message, dict) and message.get("role") == "assistant" else None
        if isinstance(content, list) and any(map(_own_thinking, content)):
            kept = [block for block in content if not _own_thinking(block)]
            if not kept:
                continue
            message = cut = {**message, "content": kept}
        messages.append(message)
    out = {**body, "messages": messages}
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "assistant"), None)
    if last is not None and last is cut and isinstance(body.get("thinking"), dict):
        blocks = [block for block in last["content"] if isinstance(block, dict)]
        if (any(block.get("type") == "tool_use" for block in blocks)
                and blocks[0].get("type") not in ("thinking", "redacted_thinking")):
            del out["thinking"]
    return out


def omits_thinking(request: dict[str, Any]) -> bool:
    """The client asked for thinking blocks without their text (``thinking.display: omitted``)."""
    thinking = request.get("thinking")
    return isinstance(thinking, dict) and thinking.get("display") == "omitted"


def _assistant_message(content: Any, param: str, takes_reasoning: bool) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts, calls, thoughts = [], [], []
    for j, block in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "thinking":
            thoughts.append(_checked_thinking(block, f"{param}.{j}"))
        elif block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            calls.append({"id": block.get("id"), "type": "function", "function": {
                "name": block.get("name"), "arguments": orjson.dumps(block.get("input") or {}).decode()}})
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if takes_reasoning and any(thoughts):  # others refuse it (OpenAI's: an unknown parameter)
        message["reasoning_content"] = "".join(thoughts)
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_choice(choice: Any) -> tuple[Any, bool | None]:
    if not isinstance(choice, dict):
        return None, None
    parallel = False if choice.get("disable_parallel_tool_use") else None
    kind = choice.get("type")
    if kind == "any":
        return "required", parallel
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}, parallel
    return ("none" if kind == "none" else "auto"), parallel


class MessagesToChat:
    source = "messages"
    target = "chat"

    def request(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        system = body.get("system")
        if system:
            messages.append({"role": "system", "content": system if isinstance(system, str) else text_of(system)})
        for i, message in enumerate(body.get("messages") or []):
            if message.get("role") == "assistant":
                messages.append(_assistant_message(message.get("content"), f"messages.{i}.content", ctx.takes_reasoning))
            else:
                messages.extend(_user_messages(message.get("content"), f"messages[{i}].content"))
        out: dict[str, Any] = {"model": ctx.upstream_model, "messages": messages}
        if body.get("max_tokens") is not None:
            out[output_limit(ctx.upstream_model)] = body["max_tokens"]
        for name in ("temperature", "top_p"):
            if body.get(name) is not None:
                out[name] = body[name]
        if body.get("stop_sequences"):
            out["stop"] = list(body["stop_sequences"])
        tools = [t for t in body.get("tools") or () if isinstance(t, dict) and t.get("name")]
        if tools:
            out["tools"] = [{"type": "function", "function": {
                "name": t["name"], "description": t.get("description") or "",
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}} for t in tools]
            choice, parallel = _tool_choice(body.get("tool_choice"))
            if choice is not None:
                out["tool_choice"] = choice
            if parallel is not None:
                out["parallel_tool_calls"] = parallel
        user_id = (body.get("metadata") or {}).get("user_id") if isinstance(body.get("metadata"), dict) else None
        if user_id:
            out["user"] = str(user_id)
        output = body.get("output_config") if isinstance(body.get("output_config"), dict) else {}
        fmt = output.get("format") if isinstance(output.get("format"), dict) else {}
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            out["response_format"] = {"type": "json_schema",
                                      "json_schema": {"name": "output", "schema": fmt["schema"], "strict": True}}
        thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) and ctx.thinks else {}
        if thinking.get("type") == "enabled":
            budget = thinking.get("budget_tokens") or 0
            out["reasoning_effort"] = next((effort for limit, effort in BUDGET_EFFORT if budget <= limit), "high")
        elif thinking.get("type") == "adaptive":  # the model thinks as much as the effort asks
            out["reasoning_effort"] = ADAPTIVE_EFFORT.get(output.get("effort"), "high")
        if ctx.stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out

    def response(self, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content: list[dict[str, Any]] = []
        reasoning = message.get("reasoning_content")
        if reasoning:
            content.append({"type": "thinking", "thinking": "", "signature": seal_thinking(reasoning)}
                           if omits_thinking(ctx.request) else
                           {"type": "thinking", "thinking": reasoning, "signature": sign_thinking(reasoning)})
        text = message.get("content")
        if text:
            content.append({"type": "text", "text": text if isinstance(text, str) else text_of(text)})
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            content.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name"),
                            "input": loads_arguments(function.get("arguments"))})
        usage = body.get("usage") or {}
        return {"id": ctx.id("msg_"), "type": "message", "role": "assistant", "model": ctx.model,
                "content": content, "stop_reason": FINISH_TO_STOP.get(choice.get("finish_reason") or "", "end_turn"),
                "stop_sequence": None, "usage": messages_usage(usage)}

    async def stream(self, events: AsyncIterator[Event], ctx: Context) -> AsyncIterator[Event]:
        index = -1
        open_kind: str | None = None  # "text", "thinking" or "tool:<n>"
        stop_reason, usage = "end_turn", {}
        started = False
        thinking: list[str] = []
        omitted = omits_thinking(ctx.request)

        def start() -> list[Event]:
            message = {"id": ctx.id("msg_"), "type": "message", "role": "assistant", "content": [],
                       "model": ctx.model, "stop_reason": None, "stop_sequence": None,
                       "usage": {"input_tokens": estimate_input_tokens(ctx.request), "output_tokens": 0}}
            return [("message_start", {"type": "message_start", "message": message}),
                    ("ping", {"type": "ping"})]

        def close() -> list[Event]:
            nonlocal open_kind
            if open_kind is None:
                return []
            frames: list[Event] = []
            if open_kind == "thinking":
                text = "".join(thinking)
                frames.append(delta({"type": "signature_delta",
                                     "signature": seal_thinking(text) if omitted else sign_thinking(text)}))
                thinking.clear()
            open_kind = None
            frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            return frames

        def open_block(kind: str, block: dict[str, Any]) -> list[Event]:
            nonlocal index, open_kind
            frames = close()
            index += 1
            open_kind = kind
            frames.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": block}))
            return frames

        def delta(payload: dict[str, Any]) -> Event:
            return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload}

        async for _, chunk in events:
            if not started:
                started = True
                for frame in start():
                    yield frame
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or ():
                change = choice.get("delta") or {}
                if change.get("reasoning_content"):
                    if open_kind != "thinking":
                        for frame in open_block("thinking", {"type": "thinking", "thinking": "", "signature": ""}):
                            yield frame
                    thinking.append(change["reasoning_content"])
                    if not omitted:
                        yield delta({"type": "thinking_delta", "thinking": change["reasoning_content"]})
                if change.get("content"):
                    if open_kind != "text":
                        for frame in open_block("text", {"type": "text", "text": ""}):
                            yield frame
                    yield delta({"type": "text_delta", "text": change["content"]})
                for call in change.get("tool_calls") or ():
                    kind = f"tool:{call.get('index', 0)}"
                    if open_kind != kind:
                        function = call.get("function") or {}
                        block = {"type": "tool_use", "id": call.get("id"), "name": function.get("name"), "input": {}}
                        for frame in open_block(kind, block):
                            yield frame
                    arguments = (call.get("function") or {}).get("arguments")
                    if arguments:
                        yield delta({"type": "input_json_delta", "partial_json": arguments})
                if choice.get("finish_reason"):
                    stop_reason = FINISH_TO_STOP.get(choice["finish_reason"], "end_turn")
        if not started:
            for frame in start():
                yield frame
        for frame in close():
            yield frame
        final = messages_usage(usage)
        yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                "usage": {"input_tokens": final["input_tokens"],
                                          "output_tokens": final["output_tokens"]}}
        yield "message_stop", {"type": "message_stop"}


def messages_usage(usage: dict[str, Any]) -> dict[str, Any]:
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    return {"input_tokens": int(usage.get("prompt_tokens") or 0) - cached,
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}


TRANSLATOR = MessagesToChat()
