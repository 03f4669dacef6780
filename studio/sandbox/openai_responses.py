"""OpenAI ``/v1/responses``, offline (reference §2.5, §8).

Answers come from ``textgen``; the framing is the vendor's: events as ``event:``/``data:`` pairs
with increasing ``sequence_number`` and no terminator.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
from cryptography.fernet import Fernet, InvalidToken

from studio.sandbox import textgen
from studio.sandbox.app import Request, Response, json_response, route, sse_response
from studio.sandbox.openai_text_requests import (
    MIDSTREAM_ERROR,
    OpenAIError,
    answered,
    apply_tool_choice,
    authorize,
    budget,
    generate,
    json_schema,
    parts_text,
    read_body,
    reasons,
    tools_of,
)
from studio.sandbox.textgen import Completion, Prompt, Tool, Turn

RESPONSES_MIN_OUTPUT = 16  # the responses API refuses a smaller max_output_tokens


def _check_call_outputs(items: list[Any]) -> None:
    """The vendor's rule on an input's function calls: each output answers a call made before it
    in the input, and each call is answered."""
    called: list[str] = []
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        call_id = str(item.get("call_id"))
        if item.get("type") == "function_call":
            called.append(call_id)
        elif item.get("type") == "function_call_output":
            if call_id not in called:
                raise OpenAIError(400, f"No tool call found for function call output with call_id {call_id}.",
                                  param="input")
            answered.add(call_id)
    for call_id in called:
        if call_id not in answered:
            raise OpenAIError(400, f"No tool output found for function call {call_id}.", param="input")


# The vendor's reasoning, handed to a client that keeps no state with the vendor (``include:
# ["reasoning.encrypted_content"]``, Codex's way with ``store`` off), is a Fernet token only the
# vendor opens: one key for the whole sandbox, so every process opens what another made.
_REASONING_KEY = Fernet(base64.urlsafe_b64encode(hashlib.sha256(b"sandbox openai reasoning").digest()))
ENCRYPTED_REASONING = "reasoning.encrypted_content"


def _check_reasoning_items(items: list[Any], store: bool) -> None:
    """The vendor's rule on reasoning items given back: one carrying encrypted content must be
    the vendor's own (400 ``invalid_encrypted_content`` otherwise); one without is looked up among
    stored items, which there are none of with ``store`` off (404)."""
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "reasoning":
            continue
        content = item.get("encrypted_content")
        if isinstance(content, str) and content:
            try:
                _REASONING_KEY.decrypt(content.encode())
            except (InvalidToken, ValueError):
                shown = f"{content[:4]}...{content[-4:]}" if len(content) > 8 else content
                raise OpenAIError(400, f"The encrypted content {shown} could not be verified. Reason: Encrypted "
                                       "content could not be decrypted or parsed.",
                                  code="invalid_encrypted_content") from None
        elif not store:
            raise OpenAIError(404, f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` "
                                   "is set to false. Try again with `store` set to true, or remove this item from "
                                   "your input.", param="input")


SUMMARIES = ("auto", "concise", "detailed")


def _reasoning(body: dict[str, Any]) -> dict[str, Any]:
    """The request's ``reasoning`` as the response repeats it: the effort and the summary asked
    for (null where not asked). A summary of the model's reasoning is only given when asked."""
    asked = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else {}
    summary = asked.get("summary")
    if summary is not None and summary not in SUMMARIES:
        raise OpenAIError(400, f"Invalid value: '{summary}'. Supported values are: 'auto', 'concise', and "
                               "'detailed'.", param="reasoning.summary", code="invalid_value")
    return {"effort": asked.get("effort"), "summary": summary}


def responses_prompt(body: dict[str, Any]) -> Prompt:
    value = body.get("input")
    if value is None:
        raise OpenAIError(400, "Missing required parameter: 'input'.", param="input", code="missing_required_parameter")
    prompt = Prompt(system=str(body.get("instructions") or ""),
                    max_tokens=budget(body.get("max_output_tokens"), "max_output_tokens", RESPONSES_MIN_OUTPUT))
    call_names: dict[str, str] = {}
    items = [{"role": "user", "content": value}] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise OpenAIError(400, "Invalid type for 'input': expected a string or an array.", param="input")
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            call_names[str(item.get("call_id"))] = str(item.get("name") or "")
        elif kind == "function_call_output":
            prompt.turns.append(Turn("tool", str(item.get("output") or ""),
                                     tool_name=call_names.get(str(item.get("call_id")), "")))
        elif kind == "message":
            text, images = parts_text(item.get("content"))
            role = item.get("role", "user")
            if role in ("system", "developer"):
                prompt.system = f"{prompt.system}\n{text}".strip()
            else:
                prompt.turns.append(Turn("assistant" if role == "assistant" else "user", text, images))
    _check_call_outputs(items)
    _check_reasoning_items(items, body.get("store", True) is not False)
    for tool in tools_of(body):
        if isinstance(tool, dict) and tool.get("type") == "function" and tool.get("name"):
            prompt.tools.append(Tool(str(tool["name"]), tool.get("parameters") or {}, str(tool.get("description") or "")))
    apply_tool_choice(prompt, body.get("tool_choice"))
    text = body.get("text") if isinstance(body.get("text"), dict) else {}
    prompt.json_schema = json_schema(text.get("format"), "text.format")
    prompt.thinking = reasons(body["model"], _reasoning(body)["effort"], "reasoning.effort")
    return prompt


def _response_object(response_id: str, body: dict[str, Any], created: int, status: str,
                     output: list[dict[str, Any]], result: Completion | None) -> dict[str, Any]:
    incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
    usage = None
    if result is not None and status != "in_progress":
        reasoning = textgen.count_tokens(result.thinking)
        usage = {"input_tokens": result.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": result.output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning},
                 "total_tokens": result.input_tokens + result.output_tokens}
    return {
        "id": response_id, "object": "response", "created_at": created, "status": status,
        "completed_at": int(time.time()) if status in ("completed", "incomplete") else None,
        "background": False, "error": None, "incomplete_details": incomplete,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "model": body["model"], "output": output, "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"), "reasoning": _reasoning(body),
        "store": body.get("store", True), "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}}, "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [], "top_p": body.get("top_p", 1.0), "truncation": "disabled",
        "usage": usage, "user": body.get("user"), "metadata": body.get("metadata") or {},
    }


def _output_items(response_id: str, body: dict[str, Any], result: Completion) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if result.thinking:  # its text only as a summary, and only when one was asked for
        summary = [{"type": "summary_text", "text": result.thinking}] if _reasoning(body)["summary"] else []
        item = {"id": f"rs_{response_id[5:]}", "type": "reasoning", "summary": summary}
        include = body.get("include")
        if isinstance(include, list) and ENCRYPTED_REASONING in include:
            item["encrypted_content"] = _REASONING_KEY.encrypt(result.thinking.encode()).decode()
        items.append(item)
    if result.pieces:
        items.append({"type": "message", "id": f"msg_{response_id[5:]}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": result.text, "annotations": [], "logprobs": []}]})
    if result.tool_call:
        call = result.tool_call
        items.append({"type": "function_call", "id": f"fc_{response_id[5:]}", "call_id": call.id,
                      "name": call.name, "arguments": call.arguments, "status": "completed"})
    return items


@route("POST", r"/v1/responses")
async def responses(request: Request) -> Response:
    try:
        authorize(request)
        body = read_body(request)
        result = generate(responses_prompt(body))
    except OpenAIError as exc:
        return exc.response()
    response_id, result = answered(request, "resp_", result)
    created = int(time.time())
    status = "incomplete" if result.finish == "length" else "completed"
    if body.get("stream"):
        return sse_response(_response_events(response_id, body, created, status, result))
    return json_response(_response_object(response_id, body, created, status,
                                          _output_items(response_id, body, result), result))


async def _response_events(response_id: str, body: dict[str, Any], created: int, status: str,
                           result: Completion) -> AsyncIterator[bytes]:
    sequence = -1

    def event(kind: str, **payload: Any) -> bytes:
        nonlocal sequence
        sequence += 1
        data = orjson.dumps({"type": kind, "sequence_number": sequence, **payload})
        return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"

    pending = _response_object(response_id, body, created, "in_progress", [], None)
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    delay = textgen.word_delay()
    items = _output_items(response_id, body, result)  # (once: each encrypted content is its own)
    for index, item in enumerate(items):
        # A reasoning item has no status; the others are in progress until done.
        progress = {"status": "in_progress"} if "status" in item else {}
        yield event("response.output_item.added", output_index=index, item={**item, **progress, **_empty(item)})
        if item["type"] == "reasoning":
            for at, part in enumerate(item["summary"]):
                where = {"item_id": item["id"], "output_index": index, "summary_index": at}
                yield event("response.reasoning_summary_part.added", **where, part={**part, "text": ""})
                yield event("response.reasoning_summary_text.delta", **where, delta=part["text"])
                yield event("response.reasoning_summary_text.done", **where, text=part["text"])
                yield event("response.reasoning_summary_part.done", **where, part=part)
        elif item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            yield event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                        part=part)
            for sent, piece in enumerate(result.pieces):
                if result.fail_after is not None and sent >= result.fail_after:
                    yield event("error", code="server_error", message=MIDSTREAM_ERROR.message, param=None,
                                error=MIDSTREAM_ERROR.body()["error"])
                    failed = _response_object(response_id, body, created, "failed", [], None)
                    failed["error"] = {"code": "server_error", "message": MIDSTREAM_ERROR.message}
                    yield event("response.failed", response=failed)
                    return
                if delay:
                    await asyncio.sleep(delay)
                yield event("response.output_text.delta", item_id=item["id"], output_index=index,
                            content_index=0, delta=piece, logprobs=[])
            yield event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                        text=result.text, logprobs=[])
            yield event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                        part={**part, "text": result.text})
        elif item["type"] == "function_call":
            yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                        delta=item["arguments"])
            yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                        name=item["name"], arguments=item["arguments"])
        yield event("response.output_item.done", output_index=index, item=item)
    final = _response_object(response_id, body, created, status, items, result)
    yield event(f"response.{status}", response=final)


def _empty(item: dict[str, Any]) -> dict[str, Any]:
    """How an output item looks when it is first announced, before its content streams."""
    if item["type"] == "message":
        return {"content": []}
    if item["type"] == "function_call":
        return {"arguments": ""}
    if item["type"] == "reasoning":
        return {"summary": []}
    return {}
