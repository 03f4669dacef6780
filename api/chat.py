"""``POST /v1/chat/completions`` (spec/text.md): buffered JSON or ``data:`` chunks ending with
``data: [DONE]``; an upstream failure mid-stream is sent as ``data: {"error": …}``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import text_engine

from .auth import bearer_key, principal_for
from .sse import data_frame, ready_frame, start_stream

router = Router(tags=["text"])

BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model", "messages"], "properties": {
        "model": {"type": "string"}, "messages": {"type": "array", "items": {"type": "object"}},
        "stream": {"type": "boolean"}, "stream_options": {"type": "object"}, "max_tokens": {"type": "integer"},
        "max_completion_tokens": {"type": "integer"}, "temperature": {"type": "number"},
        "tools": {"type": "array", "items": {"type": "object"}}, "stop": {},
    }}}}}}


@router.post("/chat/completions", openapi_extra=BODY_DOC, summary="Chat completions")
async def chat_completions(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    call = await text_engine.prepare(principal, "chat", request.body)
    if call.stream:
        return await start_stream(request.path, text_engine.stream(call), frame=ready_frame, error_frame=data_frame)
    return HttpResponse(await text_engine.complete(call), content_type="application/json")
