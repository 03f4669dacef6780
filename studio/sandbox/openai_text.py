"""OpenAI ``/v1/chat/completions``, offline (reference §2.5, §6).

Answers come from ``textgen``; the framing is the vendor's: chat chunks as bare ``data:`` lines
ending with ``data: [DONE]`` (a usage chunk with empty ``choices`` when asked). A reasoning
model's reasoning is never shown, only counted (``completion_tokens_details.reasoning_tokens``),
as OpenAI keeps it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

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
    reasoning_model,
    reasons,
    tools_of,
)
from studio.sandbox.textgen import Completion, Prompt, Tool, Turn

MAX_CHOICES = 128
FINISH = {"stop": "stop", "stop_sequence": "stop", "length": "length", "tool_call": "tool_calls"}


def _stop(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


class _ToolAnswers:
    """The vendor's rule on a conversation's tool calls: the tool messages right after an assistant
    message with ``tool_calls`` answer each of its calls, and a tool message answers a call of the
    assistant message it follows."""

    def __init__(self) -> None:
        self.calls: set[str] = set()  # the ids of the last assistant message's calls
        self.unanswered: list[str] = []
        self.asked_at = 0

    def see(self, i: int, role: str, message: dict[str, Any]) -> None:
        if role == "tool":
            answered = str(message.get("tool_call_id"))
            if answered not in self.calls:
                raise OpenAIError(400, "Invalid parameter: messages with role 'tool' must be a response to a "
                                       "preceeding message with 'tool_calls'.", param=f"messages.[{i}].role")
            if answered in self.unanswered:
                self.unanswered.remove(answered)
            return
        self.done()
        calls = message.get("tool_calls") if role == "assistant" else None
        ids = [str(call.get("id")) for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        self.calls, self.unanswered, self.asked_at = set(ids), ids, i

    def done(self) -> None:
        """Refuse a call left unanswered, whether another message follows or the conversation ends."""
        if self.unanswered:
            raise OpenAIError(400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                   "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                   f"response messages: {', '.join(self.unanswered)}",
                              param=f"messages.[{self.asked_at}].role")


# The fields a message of each role may have. The vendor refuses any other one as an unknown
# parameter, the reasoning other vendors' chat APIs show (``reasoning_content``) included. An
# assistant message may bring back what the vendor's own answer held (``annotations``): the
# official SDK sends the answer's message as it came when a conversation appends it.
_FIELDS = {"system": {"content", "name"}, "developer": {"content", "name"}, "user": {"content", "name"},
           "assistant": {"content", "name", "refusal", "tool_calls", "function_call", "audio", "annotations"},
           "tool": {"content", "tool_call_id"}, "function": {"content", "name"}}


def _known_fields(i: int, role: str, message: dict[str, Any]) -> None:
    known = _FIELDS.get(role)
    if known is None:
        return
    for name in message:
        if name != "role" and name not in known:
            raise OpenAIError(400, f"Unknown parameter: 'messages[{i}].{name}'.", param=f"messages[{i}].{name}",
                              code="unknown_parameter")


def chat_prompt(body: dict[str, Any]) -> Prompt:
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise OpenAIError(400, "Invalid type for 'stream_options': expected an object, but got "
                               f"{type(options).__name__} instead.", param="stream_options", code="invalid_type")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise OpenAIError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                          param="messages")
    if body.get("max_tokens") is not None and reasoning_model(body["model"]):
        raise OpenAIError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                               "'max_completion_tokens' instead.", param="max_tokens", code="unsupported_parameter")
    prompt = Prompt(max_tokens=budget(body.get("max_completion_tokens"), "max_completion_tokens")
                    or budget(body.get("max_tokens"), "max_tokens"), stop=_stop(body.get("stop")))
    tool_names: dict[str, str] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise OpenAIError(400, f"Invalid 'messages[{i}]': expected an object with a role.", param=f"messages[{i}]")
        role = message["role"]
        _known_fields(i, role, message)
        text, images = parts_text(message.get("content"))
        if role in ("system", "developer"):
            prompt.system = f"{prompt.system}\n{text}".strip()
        elif role == "tool":
            prompt.turns.append(Turn("tool", text, tool_name=tool_names.get(str(message.get("tool_call_id")), "")))
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise OpenAIError(400, f"Invalid type for 'messages[{i}].tool_calls': expected an array of tool "
                                       "calls.", param=f"messages[{i}].tool_calls", code="invalid_type")
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    tool_names[str(call.get("id"))] = str(function.get("name") or "")
            prompt.turns.append(Turn("assistant", text))
        else:
            prompt.turns.append(Turn("user", text, images))
    answers = _ToolAnswers()  # once every message is well formed
    for i, message in enumerate(messages):
        answers.see(i, message["role"], message)
    answers.done()
    for tool in tools_of(body):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            prompt.tools.append(Tool(str(function["name"]), function.get("parameters") or {},
                                     str(function.get("description") or "")))
    apply_tool_choice(prompt, body.get("tool_choice"))
    prompt.json_schema = json_schema(body.get("response_format"), "response_format")
    prompt.thinking = reasons(body["model"], body.get("reasoning_effort"), "reasoning_effort")
    return prompt


def _usage(result: Completion, n: int = 1) -> dict[str, Any]:
    """Usage of ``n`` choices: the prompt is read once, every choice's output counts."""
    return {"prompt_tokens": result.input_tokens, "completion_tokens": result.output_tokens * n,
            "total_tokens": result.input_tokens + result.output_tokens * n,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": textgen.count_tokens(result.thinking), "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def _tool_calls(result: Completion) -> list[dict[str, Any]]:
    call = result.tool_call
    if call is None:
        return []
    return [{"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]


def _choices(body: dict[str, Any]) -> int:
    n = body.get("n")
    if n is None:
        return 1
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_CHOICES:
        raise OpenAIError(400, f"Invalid 'n': expected an integer between 1 and {MAX_CHOICES}.", param="n",
                          code="invalid_value")
    return n


@route("POST", r"/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    try:
        authorize(request)
        body = read_body(request)
        n = _choices(body)
        result = generate(chat_prompt(body))
    except OpenAIError as exc:
        return exc.response()
    completion_id, result = answered(request, "chatcmpl-", result)
    created = int(time.time())
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return sse_response(_chat_chunks(completion_id, created, body["model"], result, include_usage, n))
    message: dict[str, Any] = {"role": "assistant", "content": result.text or None, "refusal": None,
                               "annotations": []}
    if result.tool_call:
        message["tool_calls"] = _tool_calls(result)
    return json_response({
        "id": completion_id, "object": "chat.completion", "created": created, "model": body["model"],
        "choices": [{"index": i, "message": message, "logprobs": None, "finish_reason": FINISH[result.finish]}
                    for i in range(n)],
        "usage": _usage(result, n), "service_tier": "default", "system_fingerprint": "fp_sandbox",
    })


async def _chat_chunks(completion_id: str, created: int, model: str, result: Completion,
                       include_usage: bool, n: int = 1) -> AsyncIterator[bytes]:
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
            "system_fingerprint": "fp_sandbox"}
    extra = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> bytes:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + orjson.dumps({**base, "choices": [choice], **extra}) + b"\n\n"

    delay = textgen.word_delay()
    call = result.tool_call
    opens = [{"index": 0, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
             ] if call is not None else []
    # An answer that is a call and nothing else opens with the call, its content null, as OpenAI
    # streams it; one with text first opens with empty content.
    at_once = bool(opens) and not result.pieces
    for index in range(n):  # each choice in turn, every chunk naming its choice
        if at_once:
            yield chunk({"role": "assistant", "content": None, "tool_calls": opens, "refusal": None}, index=index)
        else:
            yield chunk({"role": "assistant", "content": "", "refusal": None}, index=index)
        for sent, piece in enumerate(result.pieces):
            if result.fail_after is not None and sent >= result.fail_after:
                yield b"data: " + orjson.dumps(MIDSTREAM_ERROR.body()) + b"\n\n"
                return
            if delay:
                await asyncio.sleep(delay)
            yield chunk({"content": piece}, index=index)
        if call is not None:
            if not at_once:
                yield chunk({"tool_calls": opens}, index=index)
            half = len(call.arguments) // 2
            for fragment in (call.arguments[:half], call.arguments[half:]):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}, index=index)
        yield chunk({}, FINISH[result.finish], index=index)
    if include_usage:
        yield b"data: " + orjson.dumps({**base, "choices": [], "usage": _usage(result, n)}) + b"\n\n"
    yield b"data: [DONE]\n\n"
