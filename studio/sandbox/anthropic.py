"""Anthropic ``POST /v1/messages``, offline (reference §7).

Checks the vendor's headers (``x-api-key``, or the key as ``Authorization: Bearer`` as newer
official SDKs send it; ``anthropic-version``) and required fields
(``model``, ``max_tokens``, ``messages``), answers from ``textgen`` with ``thinking``, ``text``
and ``tool_use`` blocks, and streams ``message_start`` … ``message_stop`` with pings, cumulative
``message_delta`` usage and ``event: error`` for a failure mid-stream.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from studio.core import crypto
from studio.sandbox import textgen
from studio.sandbox.app import Request, Response, json_response, route, sse_response
from studio.sandbox.textgen import Completion, Prompt, Tool, Turn

ANTHROPIC_MODELS = ("claude-",)
STOP_REASON = {"stop": "end_turn", "stop_sequence": "stop_sequence", "length": "max_tokens", "tool_call": "tool_use"}
ERROR_TYPE = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
              403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
              500: "api_error", 504: "timeout_error", 529: "overloaded_error"}


class AnthropicError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": ERROR_TYPE.get(self.status, "api_error"), "message": self.message},
                "request_id": textgen.stable_id("req_", self.message)}

    def response(self) -> Response:
        return json_response(self.body(), self.status, headers={"request-id": self.body()["request_id"]})


def _invalid(message: str) -> AnthropicError:
    return AnthropicError(400, message)


def _check_headers(request: Request) -> None:
    if not request.headers.get("x-api-key") and not request.headers.get("authorization", "").startswith("Bearer "):
        raise AnthropicError(401, "x-api-key header is required")
    if not request.headers.get("anthropic-version"):
        raise _invalid("anthropic-version: header is required")


def _blocks_text(content: Any, names: dict[str, str], where: str = "content") -> list[Turn]:
    """One message's content (at ``where``) as turns: its text (with images counted) and any tool
    results."""
    if isinstance(content, str):
        return [Turn("user", content)]
    turns: list[Turn] = []
    texts, images = [], 0
    for j, block in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "image":
            images += 1
        elif kind == "tool_use":
            names[str(block.get("id"))] = str(block.get("name") or "")
        elif kind == "tool_result":
            inner = block.get("content")
            if inner is not None and not isinstance(inner, str | list):
                raise _invalid(f"{where}.{j}.tool_result.content: Input should be a valid string or list")
            text = inner if isinstance(inner, str) else " ".join(
                str(b.get("text") or "") for b in inner or () if isinstance(b, dict) and b.get("type") == "text")
            turns.append(Turn("tool", text, tool_name=names.get(str(block.get("tool_use_id")), "")))
    if texts or images or not turns:
        turns.append(Turn("user", " ".join(texts), images))
    return turns


def _check_tool_results(i: int, message: dict[str, Any], asked: list[str], used: set[str]) -> list[str]:
    """The vendor's rule on tool calls: the message after one with ``tool_use`` blocks answers each
    of them with a ``tool_result``, a ``tool_result`` answers a ``tool_use`` of the message before,
    and no two ``tool_use`` blocks of a conversation share an id. ``asked``: the ``tool_use`` ids of
    the message before; ``used``: every one so far (this message's are added). Returns this
    message's."""
    content = message.get("content")
    blocks = [(j, b) for j, b in enumerate(content) if isinstance(b, dict)] if isinstance(content, list) else []
    answered = []
    if message["role"] == "user":
        for j, block in blocks:
            if block.get("type") == "tool_result":
                found = str(block.get("tool_use_id"))
                if found not in asked:
                    raise _invalid(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                                   f"blocks: {found}. Each `tool_result` block must have a corresponding `tool_use` "
                                   "block in the previous message.")
                answered.append(found)
    missing = [found for found in asked if found not in answered]
    if missing:
        raise _invalid(f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                       f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                       "in the next message.")
    if message["role"] != "assistant":
        return []
    ids = []
    for j, block in blocks:
        if block.get("type") == "tool_use":
            found = str(block.get("id"))
            if found in used:
                raise _invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
            used.add(found)
            ids.append(found)
    return ids


def messages_prompt(body: dict[str, Any], counting: bool = False) -> Prompt:
    """The conversation of a messages body; ``counting``: a token count, which has no ``max_tokens``."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model: Field required")
    if not model.startswith(ANTHROPIC_MODELS):
        raise AnthropicError(404, f"model: {model}")
    max_tokens = body.get("max_tokens")
    if max_tokens is None and not counting:
        raise _invalid("max_tokens: Field required")
    if not counting and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise _invalid("max_tokens: Input should be greater than or equal to 1")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages: Field required" if messages is None else "messages: at least one message is required")
    system = body.get("system") or ""
    if isinstance(system, list):
        system = " ".join(str(b.get("text") or "") for b in system if isinstance(b, dict))
    for name in ("stop_sequences", "tools"):
        if body.get(name) is not None and not isinstance(body[name], list):
            raise _invalid(f"{name}: Input should be a valid list")
    prompt = Prompt(system=str(system), max_tokens=None if counting else max_tokens,
                    stop=[s for s in body.get("stop_sequences") or () if isinstance(s, str)], announces_calls=True)
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise _invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        turns = _blocks_text(message.get("content"), names, f"messages.{i}.content")
        if message["role"] == "assistant":
            turns = [Turn("assistant", t.text) for t in turns if t.role == "user"]
        prompt.turns.extend(turns)
    _check_signatures(messages)
    asked: list[str] = []  # the tool_use ids of the message before (checked once every message is well formed)
    used: set[str] = set()
    for i, message in enumerate(messages):
        asked = _check_tool_results(i, message, asked, used)
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("name"):
            if str(tool["name"]) in {known.name for known in prompt.tools}:
                raise _invalid("tools: Tool names must be unique.")
            prompt.tools.append(Tool(str(tool["name"]), tool.get("input_schema") or {}, str(tool.get("description") or "")))
    choice = body.get("tool_choice") if isinstance(body.get("tool_choice"), dict) else {}
    prompt.tools_disabled = choice.get("type") == "none"
    prompt.tool_required = choice.get("type") == "any"
    if choice.get("type") == "tool":
        if not isinstance(choice.get("name"), str) or choice["name"] not in {t.name for t in prompt.tools}:
            raise _invalid(f"tool_choice.name: Tool '{choice.get('name')}' not found in tools")
        prompt.forced_tool = str(choice.get("name"))
    thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
    prompt.thinking = thinking.get("type") in ("enabled", "adaptive")
    if prompt.thinking:
        _check_thinking_leads_tool_use(messages)
    return prompt


THINKING_PURPOSE = "studio.sandbox.anthropic.thinking"


def _signature(thinking: str) -> str:
    """A thinking block's ``signature`` as the vendor makes it: the thinking itself, encrypted, so a
    block sent back with its text omitted still carries it, and one changed or made elsewhere is
    told apart (standard base64 around the token, as opaque as the vendor's)."""
    return base64.b64encode(crypto.seal(thinking.encode(), THINKING_PURPOSE).encode()).decode()


def _signed_thinking(signature: Any) -> str | None:
    """The thinking a ``_signature`` holds; None for any other value."""
    if not isinstance(signature, str):
        return None
    try:
        token = base64.b64decode(signature, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    opened = crypto.unseal(token, THINKING_PURPOSE)
    return None if opened is None else opened.decode()


def _check_signatures(messages: list[Any]) -> None:
    """The vendor's check of each thinking block sent back: its signature is one it made, for this
    text (or for a text omitted). Another model's block (another vendor's, or a gateway's own
    signature) is refused, which a conversation switched between models meets."""
    for i, message in enumerate(messages):
        content = message.get("content") if message.get("role") == "assistant" else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(block, dict) or block.get("type") != "thinking":
                continue
            if "signature" not in block:
                raise _invalid(f"messages.{i}.content.{j}.thinking.signature: Field required")
            signed = _signed_thinking(block.get("signature"))
            if signed is None or (block.get("thinking") and block.get("thinking") != signed):
                raise _invalid(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")


def _check_thinking_leads_tool_use(messages: list[Any]) -> None:
    """The vendor's rule while thinking: the last assistant message, when it calls tools (a tool
    loop going on), starts with the thinking block that led to the calls, sent back."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        calls = any(b.get("type") == "tool_use" for b in blocks)
        if calls and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
            raise _invalid(
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must start "
                "with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
                "recommend you include thinking blocks from previous turns. To avoid this requirement, disable "
                "`thinking`. Please consult our documentation at "
                "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
        return


def _usage(result: Completion) -> dict[str, Any]:
    return {"input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"}


def _content(result: Completion, omit_thinking: bool) -> list[dict[str, Any]]:
    """The answer's blocks; a thinking block's text left out (its signature kept) when the
    request's ``thinking.display`` is ``omitted``, as the vendor does."""
    blocks: list[dict[str, Any]] = []
    if result.thinking:
        blocks.append({"type": "thinking", "thinking": "" if omit_thinking else result.thinking,
                       "signature": _signature(result.thinking)})
    if result.pieces:
        blocks.append({"type": "text", "text": result.text})
    if result.tool_call:
        call = result.tool_call
        blocks.append({"type": "tool_use", "id": "toolu_" + call.id[5:], "name": call.name,
                       "input": orjson.loads(call.arguments)})
    return blocks


def _body(request: Request) -> dict[str, Any]:
    _check_headers(request)
    try:
        body = request.json()
    except orjson.JSONDecodeError:
        raise _invalid("There was an error parsing the body of your request.") from None
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object.")
    return body


@route("POST", r"/v1/messages/count_tokens")
async def count_tokens(request: Request) -> Response:
    try:
        prompt = messages_prompt(_body(request), counting=True)
    except AnthropicError as exc:
        return exc.response()
    return json_response({"input_tokens": prompt.input_tokens()})


@route("POST", r"/v1/messages")
async def messages(request: Request) -> Response:
    try:
        body = _body(request)
        prompt = messages_prompt(body)
        try:
            result = textgen.generate(prompt)
        except textgen.StatusRequested as exc:
            raise AnthropicError(exc.status, f"The sandbox was asked to answer HTTP {exc.status}.") from None
    except AnthropicError as exc:
        return exc.response()
    message_id = textgen.stable_id("msg_", request.body.decode("utf-8", "replace"), str(time.time_ns()))
    result = textgen.for_answer(result, message_id)
    if body.get("stream"):
        return sse_response(_events(message_id, body["model"], result, _omits_thinking(body)))
    return json_response({
        "id": message_id, "type": "message", "role": "assistant", "model": body["model"],
        "content": _content(result, _omits_thinking(body)), "stop_reason": STOP_REASON[result.finish],
        "stop_sequence": result.stop_sequence, "usage": _usage(result),
    })


def _frame(kind: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **payload}) + b"\n\n"


def _omits_thinking(body: dict[str, Any]) -> bool:
    return isinstance(body.get("thinking"), dict) and body["thinking"].get("display") == "omitted"


async def _events(message_id: str, model: str, result: Completion, omit_thinking: bool) -> AsyncIterator[bytes]:
    start_usage = {**_usage(result), "output_tokens": 1}
    yield _frame("message_start", {"message": {
        "id": message_id, "type": "message", "role": "assistant", "content": [], "model": model,
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
    yield _frame("ping", {})
    delay = textgen.word_delay()
    for index, block in enumerate(_content(result, omit_thinking)):
        kind = block["type"]
        if kind == "thinking":
            yield _frame("content_block_start", {"index": index,
                                                 "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            if block["thinking"]:
                yield _frame("content_block_delta", {"index": index,
                                                     "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
            yield _frame("content_block_delta", {"index": index,
                                                 "delta": {"type": "signature_delta", "signature": block["signature"]}})
        elif kind == "text":
            yield _frame("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            for sent, piece in enumerate(result.pieces):
                if result.fail_after is not None and sent >= result.fail_after:
                    yield _frame("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
                    return
                if delay:
                    await asyncio.sleep(delay)
                yield _frame("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
        else:
            yield _frame("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            arguments = orjson.dumps(block["input"]).decode()
            half = len(arguments) // 2
            for fragment in (arguments[:half], arguments[half:]):
                yield _frame("content_block_delta", {"index": index,
                                                     "delta": {"type": "input_json_delta", "partial_json": fragment}})
        yield _frame("content_block_stop", {"index": index})
    yield _frame("message_delta", {"delta": {"stop_reason": STOP_REASON[result.finish],
                                             "stop_sequence": result.stop_sequence},
                                   "usage": {"output_tokens": result.output_tokens}})
    yield _frame("message_stop", {})
