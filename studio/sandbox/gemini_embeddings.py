"""Gemini ``models/{m}:embedContent`` and ``:batchEmbedContents``, offline: deterministic vectors
(``embedding_vectors``), ``outputDimensionality`` and the vendor's error bodies."""

from __future__ import annotations

from typing import Any

import orjson

from studio.sandbox.app import Request, Response, json_response, route
from studio.sandbox.embedding_vectors import vector

# Full size and the smallest ``outputDimensionality`` of each model.
MODELS = {"gemini-embedding-001": (3072, 128), "text-embedding-004": (768, 1)}
MAX_BATCH = 100


class EmbedError(Exception):
    def __init__(self, status: int, state: str, message: str) -> None:
        super().__init__(message)
        self.status, self.state, self.message = status, state, message

    def response(self) -> Response:
        return json_response({"error": {"code": self.status, "message": self.message, "status": self.state}},
                             self.status)


def _check(request: Request) -> tuple[str, dict[str, Any]]:
    if not (request.headers.get("x-goog-api-key") or request.query.get("key")):
        raise EmbedError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers. Please use an API key.")
    name = request.params["model"]
    if name not in MODELS:
        raise EmbedError(404, "NOT_FOUND", f"models/{name} is not found for API version v1beta, or is not "
                         "supported for embedContent.")
    try:
        body = request.json()
    except orjson.JSONDecodeError as exc:
        raise EmbedError(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. {exc}") from exc
    if not isinstance(body, dict):
        raise EmbedError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
    return name, body


def _embed(name: str, request: Any, where: str) -> dict[str, Any]:
    content = request.get("content") if isinstance(request, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    texts = [str(p["text"]) for p in (parts if isinstance(parts, list) else ())
             if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if not texts or not "".join(texts).strip():
        raise EmbedError(400, "INVALID_ARGUMENT", f"* {where}content: must have at least one text part")
    size, smallest = MODELS[name]
    wanted = request.get("outputDimensionality")
    if wanted is not None:
        if not isinstance(wanted, int) or not smallest <= wanted <= size:
            raise EmbedError(400, "INVALID_ARGUMENT",
                             f"* {where}output_dimensionality: must be between {smallest} and {size}")
        size = wanted
    return {"values": vector(" ".join(texts), size)}


@route("POST", r"/v1beta/models/(?P<model>[^/:]+):embedContent")
async def embed_content(request: Request) -> Response:
    try:
        name, body = _check(request)
        return json_response({"embedding": _embed(name, body, "")})
    except EmbedError as exc:
        return exc.response()


@route("POST", r"/v1beta/models/(?P<model>[^/:]+):batchEmbedContents")
async def batch_embed_contents(request: Request) -> Response:
    try:
        name, body = _check(request)
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests or len(requests) > MAX_BATCH:
            raise EmbedError(400, "INVALID_ARGUMENT", f"* requests: between 1 and {MAX_BATCH} requests are needed")
        for index, item in enumerate(requests):
            model = item.get("model") if isinstance(item, dict) else None
            if model != f"models/{name}":
                raise EmbedError(400, "INVALID_ARGUMENT", f"* requests[{index}].model: must be models/{name}, the "
                                 "model of the batch request")
        return json_response({"embeddings": [_embed(name, item, f"requests[{i}].") for i, item in enumerate(requests)]})
    except EmbedError as exc:
        return exc.response()
