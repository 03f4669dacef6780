"""``POST /v1/embeddings`` in OpenAI's shape: ``input`` (a text, a list of texts, an array of token ids
or a list of them), ``dimensions``,
``encoding_format`` (``float``, or ``base64``: little-endian float32, which the official client asks
for by default). Errors use the OpenAI-style body."""

from __future__ import annotations

import base64
import struct
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Schema
from pydantic import ConfigDict, Field

from api.auth import bearer_key, principal_for
from api.body import json_object, json_response
from api.errors import OPENAI
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from studio.core.embeddings import EmbeddingInput, EmbeddingJob
from studio.core.errors import BadRequest
from studio.gateway.embeddings import engine as embeddings_engine

router = FamilyRouter(OPENAI, security=BEARER, tags=["embeddings"])


class EmbeddingRequest(Schema):
    model_config = ConfigDict(extra="allow")

    model: str
    input: str | list[str] | list[int] | list[list[int]] = Field(
        description="A text, a list of texts, the token ids of a text, or a list of those (token ids need a "
                    "model served over the OpenAI protocol)")
    dimensions: int | None = Field(None, description="Fewer dimensions than the model's full size")
    encoding_format: Literal["float", "base64"] | None = None
    user: str | None = None


def read_job(body: dict[str, Any]) -> tuple[str, EmbeddingJob, str]:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("model: a platform model identifier is required", param="model")
    inputs = read_inputs(body.get("input"))
    dimensions = body.get("dimensions")
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise BadRequest("dimensions: must be an integer", param="dimensions")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise BadRequest("encoding_format: must be 'float' or 'base64'", param="encoding_format")
    user = body.get("user") if isinstance(body.get("user"), str) else None
    return model, EmbeddingJob(inputs=inputs, dimensions=dimensions, user=user), encoding


def _token_ids(value: list[Any]) -> bool:
    return all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value)


def read_inputs(raw: Any) -> tuple[EmbeddingInput, ...]:
    """OpenAI's four shapes of ``input``: a text, a list of texts, one array of token ids, or a
    list of such arrays (never a mix)."""
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list):
        if all(isinstance(t, str) for t in raw):
            return tuple(raw)
        if _token_ids(raw):
            return (tuple(raw),)
        if all(isinstance(t, list) and _token_ids(t) for t in raw):
            return tuple(tuple(t) for t in raw)
    raise BadRequest("input: send a text, a list of texts, an array of token ids (integers from 0) or a list "
                     "of such arrays, not a mix", param="input")


def encoded(values: list[float], encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return values


@router.post("/embeddings", openapi_extra=body_doc(json=EmbeddingRequest), summary="Create embeddings")
async def create_embeddings(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    model, job, encoding = read_job(json_object(request))
    result = await embeddings_engine.embed(principal, model, job, route=embeddings_engine.OPENAI_ROUTE,
                                           field="input", dimensions_field="dimensions")
    data = [{"object": "embedding", "index": i, "embedding": encoded(v, encoding)}
            for i, v in enumerate(result.vectors)]
    return json_response({"object": "list", "data": data, "model": model,
                          "usage": {"prompt_tokens": result.input_tokens, "total_tokens": result.input_tokens}})
