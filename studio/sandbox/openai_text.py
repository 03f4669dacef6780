"""OpenAI ``/v1/chat/completions`` and ``/v1/responses``, offline (reference §2.5, §6, §8).

Answers come from ``textgen``; the framing is the vendor's: chat chunks as bare ``data:`` lines
ending with ``data: [DONE]`` (a usage chunk with empty ``choices`` when asked), responses events
as ``event:``/``data:`` pairs with increasing ``sequence_number`` and no terminator.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from studio.sandbox import textgen
from studio.sandbox.app import Request, Response, json_response, route, sse_response
from studio.sandbox.textgen import Completion, Prompt, Tool, Turn

OPENAI_TEXT_MODELS = ("gpt-", "o1", "o3", "o4", "chatgpt-")
RESPONSES_MIN_OUTPUT = 16  # the responses API refuses a smaller max_output_tokens
MAX_CHOICES = 128
FINISH = {"stop": "stop", "stop_sequence": "stop", "length": "length", "tool_call": "tool_calls"}
ERROR_TYPE = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
              404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}


class OpenAIError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": ERROR_TYPE.get(self.status, "server_error"),
                          "param": self.param, "code": self.code}}

    def response(self) -> Response:
        return json_response(self.body(), self.status)


def _authorize(request: Request) -> None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise OpenAIError(401, "You didn't provide an API key.", code="invalid_api_key")


def _body(request: Request) -> dict[str, Any]:
    try:
        body = request.json()
    except orjson.JSONDecodeError as exc:
        raise OpenAIError(400, "We could not parse the JSON body of your request.") from exc
    if not isinstance(body, dict):
        raise OpenAIError(400, "The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIError(400, "you must provide a model parameter", param="model")
    if not model.startswith(OPENAI_TEXT_MODELS):
        raise OpenAIError(404, f"The model `{model}` does not exist or you do not have access to it.",
                          code="model_not_found")
    return body


def _parts_text(content: Any) -> tuple[str, int]:
    """Text and image count of a content value (string or list of parts)."""
    if isinstance(content, str):
        return content, 0
    texts, images = [], 0
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            texts.append(str(part.get("text") or ""))
        elif kind in ("image_url", "input_image"):
            images += 1
    return " ".join(texts), images


def _budget(value: Any, param: str, minimum: int = 1) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise OpenAIError(400, f"Invalid '{param}': integer below minimum value. Expected a value >= {minimum}, "
                               f"but got {value} instead.", param=param, code="integer_below_min_value")
    return value


def _stop(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


def _tools(body: dict[str, Any]) -> list[Any]:
    """The request's ``tools`` (none when absent), as the vendor checks their type."""
    tools = body.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise OpenAIError(400, f"Invalid type for 'tools': expected an array, but got {type(tools).__name__} instead.",
                          param="tools", code="invalid_type")
    return tools


def _apply_tool_choice(prompt: Prompt, tool_choice: Any) -> None:
    """``auto`` (the default), ``none``, ``required`` or a named function, as the vendor reads them."""
    if tool_choice in (None, "auto"):
        return
    if tool_choice == "none":
        prompt.tools_disabled = True
    elif tool_choice == "required":
        prompt.tool_required = True
    elif isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        name = (function.get("name") if isinstance(function, dict) else None) or tool_choice.get("name")
        if not isinstance(name, str) or name not in {t.name for t in prompt.tools}:
            raise OpenAIError(400, f"Invalid value for 'tool_choice': function '{name}' is not among the tools.",
                              param="tool_choice", code="invalid_value")
        prompt.forced_tool = str(name)
    else:
        raise OpenAIError(400, "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a function.",
                          param="tool_choice", code="invalid_value")


def _json_schema(fmt: Any, param: str) -> dict[str, Any] | None:
    """The JSON shape a ``response_format`` (chat) or ``text.format`` (responses) asks for."""
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") == "json_object":
        return textgen.JSON_OBJECT_SCHEMA
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") if "json_schema" in fmt else fmt  # chat nests it, responses does not
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise OpenAIError(400, f"Missing required parameter: '{param}.schema'.", param=f"{param}.schema",
                              code="missing_required_parameter")
        return schema
    raise OpenAIError(400, f"Invalid value: '{fmt.get('type')}'. Supported values are: 'text', 'json_object' and "
                           "'json_schema'.", param=f"{param}.type", code="invalid_value")


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
        if self.unanswered:
            raise OpenAIError(400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                   "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                   f"response messages: {', '.join(self.unanswered)}",
                              param=f"messages.[{self.asked_at}].role")
        calls = message.get("tool_calls") if role == "assistant" else None
        ids = [str(call.get("id")) for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
        self.calls, self.unanswered, self.asked_at = set(ids), ids, i


def chat_prompt(body: dict[str, Any]) -> Prompt:
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise OpenAIError(400, "Invalid type for 'stream_options': expected an object, but got "
                               f"{type(options).__name__} instead.", param="stream_options", code="invalid_type")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise OpenAIError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                          param="messages")
    prompt = Prompt(max_tokens=_budget(body.get("max_completion_tokens"), "max_completion_tokens")
                    or _budget(body.get("max_tokens"), "max_tokens"), stop=_stop(body.get("stop")))
    tool_names: dict[str, str] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise OpenAIError(400, f"Invalid 'messages[{i}]': expected an object with a role.", param=f"messages[{i}]")
        role = message["role"]
        text, images = _parts_text(message.get("content"))
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
    for tool in _tools(body):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            prompt.tools.append(Tool(str(function["name"]), function.get("parameters") or {},
                                     str(function.get("description") or "")))
    _apply_tool_choice(prompt, body.get("tool_choice"))
    prompt.json_schema = _json_schema(body.get("response_format"), "response_format")
    prompt.thinking = bool(body.get("reasoning_effort")) and body.get("reasoning_effort") != "none"
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


def _generate(prompt: Prompt) -> Completion:
    try:
        return textgen.generate(prompt)
    except textgen.StatusRequested as exc:
        raise OpenAIError(exc.status, f"The sandbox was asked to answer HTTP {exc.status}.",
                          code=ERROR_TYPE.get(exc.status, "server_error")) from None


def _choices(body: dict[str, Any]) -> int:
    n = body.get("n")
    if n is None:
        return 1
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_CHOICES:
        raise OpenAIError(400, f"Invalid 'n': expected an integer between 1 and {MAX_CHOICES}.", param="n",
                          code="invalid_value")
    return n


MIDSTREAM_ERROR = OpenAIError(500, "The server had an error while processing your request.", code="server_error")


@route("POST", r"/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    try:
        _authorize(request)
        body = _body(request)
        n = _choices(body)
        result = _generate(chat_prompt(body))
    except OpenAIError as exc:
        return exc.response()
    completion_id = textgen.stable_id("chatcmpl-", request.body.decode("utf-8", "replace"), str(time.time_ns()))
    result = textgen.for_answer(result, completion_id)
    created = int(time.time())
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return sse_response(_chat_chunks(completion_id, created, body["model"], result, include_usage, n))
    message: dict[str, Any] = {"role": "assistant", "content": result.text or None, "refusal": None,
                               "annotations": []}
    if result.thinking:
        message["reasoning_content"] = result.thinking
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
    at_once = bool(opens) and not result.pieces and not result.thinking
    for index in range(n):  # each choice in turn, every chunk naming its choice
        if at_once:
            yield chunk({"role": "assistant", "content": None, "tool_calls": opens, "refusal": None}, index=index)
        else:
            yield chunk({"role": "assistant", "content": "", "refusal": None}, index=index)
        if result.thinking:
            yield chunk({"reasoning_content": result.thinking}, index=index)
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


# -- responses ------------------------------------------------------------------------------------
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
                    max_tokens=_budget(body.get("max_output_tokens"), "max_output_tokens", RESPONSES_MIN_OUTPUT))
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
            text, images = _parts_text(item.get("content"))
            role = item.get("role", "user")
            if role in ("system", "developer"):
                prompt.system = f"{prompt.system}\n{text}".strip()
            else:
                prompt.turns.append(Turn("assistant" if role == "assistant" else "user", text, images))
    _check_call_outputs(items)
    for tool in _tools(body):
        if isinstance(tool, dict) and tool.get("type") == "function" and tool.get("name"):
            prompt.tools.append(Tool(str(tool["name"]), tool.get("parameters") or {}, str(tool.get("description") or "")))
    _apply_tool_choice(prompt, body.get("tool_choice"))
    text = body.get("text") if isinstance(body.get("text"), dict) else {}
    prompt.json_schema = _json_schema(text.get("format"), "text.format")
    effort = _reasoning(body)["effort"]
    prompt.thinking = bool(effort) and effort != "none"
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
        items.append({"id": f"rs_{response_id[5:]}", "type": "reasoning", "summary": summary})
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
        _authorize(request)
        body = _body(request)
        result = _generate(responses_prompt(body))
    except OpenAIError as exc:
        return exc.response()
    response_id = textgen.stable_id("resp_", request.body.decode("utf-8", "replace"), str(time.time_ns()))
    result = textgen.for_answer(result, response_id)
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
    for index, item in enumerate(_output_items(response_id, body, result)):
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
    final = _response_object(response_id, body, created, status, _output_items(response_id, body, result), result)
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
