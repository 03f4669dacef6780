"""What OpenAI's text routes share, offline: the key check, the body and its model, the parts
of a message, the tool fields and the answer's format as the vendor reads them, and its error
body (``chat/completions`` in ``openai_text``, ``responses`` in ``openai_responses``)."""

from __future__ import annotations

import time
from typing import Any

import orjson

from studio.sandbox import textgen
from studio.sandbox.app import Request, Response, json_response
from studio.sandbox.textgen import Completion, Prompt

OPENAI_TEXT_MODELS = ("gpt-", "o1", "o3", "o4", "chatgpt-")
REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")  # the ones that reason (GPT-5's chat models do not)
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


def authorize(request: Request) -> None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise OpenAIError(401, "You didn't provide an API key.", code="invalid_api_key")


def read_body(request: Request) -> dict[str, Any]:
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


def reasoning_model(model: str) -> bool:
    return model.startswith(REASONING_MODELS) and "-chat" not in model


def reasons(model: str, effort: Any, param: str) -> bool:
    """Whether ``model`` thinks before it answers: a reasoning model does unless ``effort`` is
    ``none`` (its default effort is not); any other model refuses an effort with the vendor's 400."""
    if reasoning_model(model):
        return effort != "none"
    if effort is not None:
        raise OpenAIError(400, f"Unsupported parameter: '{param}' is not supported with this model.",
                          param=param, code="unsupported_parameter")
    return False


def parts_text(content: Any) -> tuple[str, int]:
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


def budget(value: Any, param: str, minimum: int = 1) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise OpenAIError(400, f"Invalid '{param}': integer below minimum value. Expected a value >= {minimum}, "
                               f"but got {value} instead.", param=param, code="integer_below_min_value")
    return value


def tools_of(body: dict[str, Any]) -> list[Any]:
    """The request's ``tools`` (none when absent), as the vendor checks their type."""
    tools = body.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise OpenAIError(400, f"Invalid type for 'tools': expected an array, but got {type(tools).__name__} instead.",
                          param="tools", code="invalid_type")
    return tools


def apply_tool_choice(prompt: Prompt, tool_choice: Any) -> None:
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


def json_schema(fmt: Any, param: str) -> dict[str, Any] | None:
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


def generate(prompt: Prompt) -> Completion:
    try:
        return textgen.generate(prompt)
    except textgen.StatusRequested as exc:
        raise OpenAIError(exc.status, f"The sandbox was asked to answer HTTP {exc.status}.",
                          code=ERROR_TYPE.get(exc.status, "server_error")) from None


def answered(request: Request, prefix: str, result: Completion) -> tuple[str, Completion]:
    """The answer's id (``prefix``, then a hash of the body and the time) and ``result`` with its
    tool call named after that answer (``textgen.for_answer``)."""
    answer_id = textgen.stable_id(prefix, request.body.decode("utf-8", "replace"), str(time.time_ns()))
    return answer_id, textgen.for_answer(result, answer_id)


MIDSTREAM_ERROR = OpenAIError(500, "The server had an error while processing your request.", code="server_error")
