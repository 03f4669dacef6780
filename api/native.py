"""``POST /v1/models/{model}:generateContent`` and ``:streamGenerateContent`` (spec/images.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Router

from studio.gateway import native_image
from studio.gateway.errors import BadRequest

from .auth import native_key, principal_for
from .sse import start_stream

router = Router(tags=["native images"])

# Big bodies leave in pieces of this size: each piece is copied once into the response, the
# whole 10-20 MB answer never is.
PIECE = 1024 * 1024

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


def pieces(payload: bytes | bytearray) -> list[bytes | memoryview]:
    if len(payload) <= PIECE:
        return [bytes(payload)]
    view = memoryview(payload)
    return [view[i:i + PIECE] for i in range(0, len(view), PIECE)]


def sse_frame(payload: bytes | bytearray) -> list[bytes | memoryview]:
    """``data: <one response JSON>`` and a blank line: no event names, no ``[DONE]`` (spec: Events)."""
    if len(payload) <= PIECE:
        return [b"data: " + bytes(payload) + b"\n\n"]
    return [b"data: ", *pieces(payload), b"\n\n"]


async def _body(payload: bytes | bytearray) -> AsyncIterator[bytes | memoryview]:
    for piece in pieces(payload):
        yield piece


async def _prepare(request: HttpRequest, model: str, *, stream: bool) -> native_image.NativeCall:
    principal = await principal_for(native_key(request))
    return await native_image.prepare(principal, model, parse_json(request), stream=stream, raw=request.body)


@router.post("/models/{model}:generateContent", openapi_extra=BODY_DOC, summary="Generate (buffered)")
async def generate_content(request: HttpRequest, model: str) -> HttpResponse:
    call = await _prepare(request, model, stream=False)
    body = await native_image.generate(call)
    if len(body) <= PIECE:
        return HttpResponse(bytes(body), content_type="application/json")
    response = StreamingHttpResponse(_body(body), content_type="application/json")
    response["Content-Length"] = str(len(body))
    return response


@router.post("/models/{model}:streamGenerateContent", openapi_extra=BODY_DOC, summary="Generate (SSE)")
async def stream_generate_content(request: HttpRequest, model: str) -> HttpResponse:
    call = await _prepare(request, model, stream=True)
    return await start_stream(request.path, native_image.stream(call), frame=sse_frame, error_frame=sse_frame)
