"""OpenAI ``POST /v1/embeddings``, offline: deterministic vectors (``embedding_vectors``), the
vendor's validation of ``input`` (texts or arrays of token ids), ``dimensions`` and
``encoding_format``, and its error bodies."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import orjson

from studio.sandbox.app import Request, Response, json_response, route
from studio.sandbox.embedding_vectors import token_count, token_vector, vector

# Full size of each model, and whether it takes ``dimensions`` (the text-embedding-3 models do).
MODELS = {"text-embedding-3-small": (1536, True), "text-embedding-3-large": (3072, True),
          "text-embedding-ada-002": (1536, False)}
MAX_INPUTS = 2048
MAX_TOKENS = 8192  # an input's tokens at most


def _error(status: int, message: str, param: str | None, code: str | None) -> Response:
    return json_response({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                    "code": code}}, status)


def _ids(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value)


def _inputs(value: Any) -> list[str] | list[list[int]] | None:
    """The vendor's four shapes: a text, texts, one array of token ids, arrays of token ids."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, str) for v in value):
        return value
    if _ids(value):
        return [value]
    if all(_ids(v) for v in value):
        return value
    return None


def _embedded(item: str | list[int], size: int) -> list[float]:
    return vector(item, size) if isinstance(item, str) else token_vector(item, size)


@route("POST", r"/v1/embeddings")
async def embeddings(request: Request) -> Response:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer ") or not header[7:].strip():
        return _error(401, "You didn't provide an API key.", None, "invalid_api_key")
    try:
        body = request.json()
    except orjson.JSONDecodeError:
        return _error(400, "We could not parse the JSON body of your request.", None, None)
    if not isinstance(body, dict):
        return _error(400, "The request body must be a JSON object.", None, None)
    model = body.get("model")
    if not isinstance(model, str) or model not in MODELS:
        return _error(404, f"The model '{model}' does not exist or you do not have access to it.", None,
                      "model_not_found")
    size, flexible = MODELS[model]
    inputs = _inputs(body.get("input"))
    if inputs is None or any(not item for item in inputs) or len(inputs) > MAX_INPUTS:
        return _error(400, "'$.input' is invalid. Please check the API reference: "
                      "https://platform.openai.com/docs/api-reference.", "input", None)
    counts = [token_count(item) if isinstance(item, str) else len(item) for item in inputs]
    if max(counts) > MAX_TOKENS:
        return _error(400, f"This model's maximum context length is {MAX_TOKENS} tokens, however you requested "
                      f"{max(counts)} tokens ({max(counts)} in your prompt; 0 for the completion). Please reduce "
                      "your prompt; or completion length.", None, None)
    dimensions = body.get("dimensions")
    if dimensions is not None:
        if not flexible:
            return _error(400, "This model does not support specifying dimensions.", "dimensions", None)
        if not isinstance(dimensions, int) or isinstance(dimensions, bool) or not 1 <= dimensions <= size:
            return _error(400, f"Invalid 'dimensions': must be between 1 and {size}.", "dimensions",
                          "invalid_value")
        size = dimensions
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        return _error(400, f"Invalid value: '{encoding}'. Supported values are: 'float' and 'base64'.",
                      "encoding_format", "invalid_value")
    data = []
    for index, item in enumerate(inputs):
        values: Any = _embedded(item, size)
        if encoding == "base64":
            values = base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()
        data.append({"object": "embedding", "index": index, "embedding": values})
    tokens = sum(counts)
    return json_response({"object": "list", "data": data, "model": model,
                          "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
