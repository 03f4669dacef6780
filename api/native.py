"""``POST /v1/models/{model}:generateContent`` and ``:streamGenerateContent`` (spec/images.md)."""

from __future__ import annotations

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import native_image
from studio.gateway.errors import BadRequest

from .auth import native_key, principal_for
from .sse import start_stream

router = Router(tags=["native images"])

BODY_DOC = {
    "requestBody": {
        "content": {"application/json": {"schema": {"type": "object", "required": ["contents"], "properties": {
            "contents": {"type": "array", "items": {"type": "object"}},
            "systemInstruction": {"type": "object"},
            "generationConfig": {"type": "object"},
        }}}},
        "required": True,
    }
}


def parse_json(request: HttpRequest) -> object:
    try:
        return orjson.loads(request.body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}", param="body") from exc


@router.post("/models/{model}:generateContent", openapi_extra=BODY_DOC, summary="Generate (buffered)")
async def generate_content(request: HttpRequest, model: str) -> HttpResponse:
    principal = await principal_for(native_key(request))
    call = await native_image.prepare(principal, model, parse_json(request), stream=False)
    body = await native_image.generate(call)
    return HttpResponse(body, content_type="application/json")


@router.post("/models/{model}:streamGenerateContent", openapi_extra=BODY_DOC, summary="Generate (SSE)")
async def stream_generate_content(request: HttpRequest, model: str) -> HttpResponse:
    principal = await principal_for(native_key(request))
    call = await native_image.prepare(principal, model, parse_json(request), stream=True)
    return await start_stream(request.path, native_image.stream(call))
