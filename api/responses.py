"""``POST /v1/responses`` (spec/text.md): buffered JSON or ``event:``/``data:`` pairs with
increasing ``sequence_number``. The stream ends after ``response.completed``, ``.incomplete``
or ``.failed``; an upstream failure mid-stream is sent as ``event: error`` followed by
``response.failed`` carrying ``error.code`` and ``error.message``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from django.http import HttpRequest, HttpResponse
from ninja import Router

from studio.gateway import text_engine
from studio.gateway.errors import GatewayError
from studio.gateway.responses_to_chat import response_object

from .auth import bearer_key, principal_for
from .errors import openai_body
from .sse import named_frame, ready_frame, start_stream

router = Router(tags=["text"])

BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["model", "input"], "properties": {
        "model": {"type": "string"}, "input": {}, "instructions": {"type": "string"},
        "max_output_tokens": {"type": "integer"}, "stream": {"type": "boolean"},
        "tools": {"type": "array", "items": {"type": "object"}},
    }}}}}}
ERROR_CODES = {429: "rate_limit_exceeded", 400: "invalid_prompt"}


def _failure_frames(call: text_engine.TextCall, exc: GatewayError, sequence: int) -> list[bytes]:
    error = openai_body(exc)["error"]
    code = ERROR_CODES.get(exc.status, "server_error")
    failed = response_object(call.ctx, "failed", [], None)
    failed["error"] = {"code": code, "message": exc.message}
    # The event's own fields, plus the ``error`` object that SDKs raise from.
    frames = named_frame("error", orjson.dumps({"type": "error", "sequence_number": sequence, "code": code,
                                                "message": exc.message, "param": error["param"],
                                                "error": {**error, "code": code}}))
    frames += named_frame("response.failed", orjson.dumps({"type": "response.failed",
                                                           "sequence_number": sequence + 1, "response": failed}))
    return frames


async def _with_failure_events(call: text_engine.TextCall) -> AsyncIterator[bytes]:
    """The engine's frames; after the first one, a failure becomes the format's own events."""
    sent = 0
    try:
        async for piece in text_engine.stream(call):
            sent += 1
            yield piece
    except GatewayError as exc:
        if not sent:
            raise
        for piece in _failure_frames(call, exc, sent):
            yield piece


@router.post("/responses", openapi_extra=BODY_DOC, summary="Responses")
async def responses(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    call = await text_engine.prepare(principal, "responses", request.body)
    if call.stream:
        return await start_stream(request.path, _with_failure_events(call), frame=ready_frame)
    return HttpResponse(await text_engine.complete(call), content_type="application/json")
