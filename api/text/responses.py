"""``POST /v1/responses`` (spec/text.md): buffered JSON or ``event:``/``data:`` pairs with
increasing ``sequence_number``. The stream ends after ``response.completed``, ``.incomplete``
or ``.failed``; an upstream failure mid-stream is sent as ``event: error`` followed by
``response.failed`` carrying ``error.code`` and ``error.message`` (and the id ``response.created``
announced). ``GET``/``DELETE /v1/responses/{id}`` and ``GET /v1/responses/{id}/input_items`` read
the responses the gateway stored for the caller's user."""

from __future__ import annotations

import functools

import orjson
from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import JsonAnswer, json_response
from api.errors import openai_body
from api.sse import named_frame, ready_frame, start_stream
from studio.core.errors import BadRequest, GatewayError
from studio.gateway.text import engine as text_engine
from studio.gateway.text import stored
from studio.gateway.text.failed_response import failed_response

ERROR_CODES = {429: "rate_limit_exceeded", 400: "invalid_prompt"}


def _failure_frames(call: text_engine.TextCall, exc: GatewayError, sequence: int) -> list[bytes]:
    """A stream's end after a failure: ``error`` and ``response.failed``, numbered on from the
    ``sequence`` events sent before it."""
    error = openai_body(exc)["error"]
    code = ERROR_CODES.get(exc.status, "server_error")
    failed = failed_response(call, code, exc.message)
    # The event's own fields, plus the ``error`` object that SDKs raise from.
    frames = named_frame("error", orjson.dumps({"type": "error", "sequence_number": sequence, "code": code,
                                                "message": exc.message, "param": error["param"],
                                                "error": {**error, "code": code}}))
    frames += named_frame("response.failed", orjson.dumps({"type": "response.failed",
                                                           "sequence_number": sequence + 1, "response": failed}))
    return frames


async def responses(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    call = await text_engine.prepare(principal, "responses", request.body)
    if call.stream:
        failure = functools.partial(_failure_frames, call)
        return await start_stream(request, text_engine.stream(call, failure), frame=ready_frame)
    return JsonAnswer(await text_engine.complete(call))


async def retrieve_response(request: HttpRequest, response_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    return json_response(await stored.retrieve(principal, response_id))


async def delete_response(request: HttpRequest, response_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    return json_response(await stored.delete(principal, response_id))


def _limit(request: HttpRequest) -> int:
    value = request.GET.get("limit", "20")
    if not value.isdigit():
        raise BadRequest("'limit' must be an integer", param="limit")
    return int(value)


async def list_input_items(request: HttpRequest, response_id: str) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    page = await stored.list_input_items(principal, response_id, limit=_limit(request),
                                         order=request.GET.get("order", "desc"), after=request.GET.get("after"))
    return json_response(page)
