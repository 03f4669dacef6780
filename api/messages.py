"""``POST /v1/messages`` (spec/text.md): the key in ``X-Api-Key`` (or Bearer), the version in
``epsilon-version`` (``anthropic-version`` accepted as its alias); streams end with
``message_stop``, or with ``event: error`` when the upstream fails mid-stream."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import text_engine
from studio.gateway.errors import BadRequest

from .auth import messages_key, principal_for
from .sse import named_error_frame, ready_frame, start_stream

router = Router(tags=["text"])

VERSION_HEADERS = ("epsilon-version", "anthropic-version")
BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model", "messages", "max_tokens"], "properties": {
        "model": {"type": "string"}, "messages": {"type": "array", "items": {"type": "object"}},
        "max_tokens": {"type": "integer"}, "system": {}, "stream": {"type": "boolean"},
        "stop_sequences": {"type": "array", "items": {"type": "string"}},
        "tools": {"type": "array", "items": {"type": "object"}}, "tool_choice": {"type": "object"},
    }}}}}}


def require_version(request: HttpRequest) -> str:
    for header in VERSION_HEADERS:
        value = request.headers.get(header)
        if value:
            return value
    raise BadRequest("epsilon-version: header is required", param="epsilon-version")


@router.post("/messages", openapi_extra=BODY_DOC, summary="Messages")
async def messages(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(messages_key(request))
    require_version(request)
    call = await text_engine.prepare(principal, "messages", request.body)
    if call.stream:
        return await start_stream(request.path, text_engine.stream(call), frame=ready_frame,
                                  error_frame=named_error_frame)
    return HttpResponse(await text_engine.complete(call), content_type="application/json")
