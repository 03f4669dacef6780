"""``POST /v1/chat/completions`` (spec/text.md): buffered JSON or ``data:`` chunks ending with
``data: [DONE]``; an upstream failure mid-stream is sent as ``data: {"error": …}``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.body import JsonAnswer
from api.sse import data_frame, ready_frame, start_stream
from studio.gateway.text import engine as text_engine


async def chat_completions(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    call = await text_engine.prepare(principal, "chat", request.body)
    if call.stream:
        return await start_stream(request, text_engine.stream(call), frame=ready_frame, error_frame=data_frame)
    return JsonAnswer(await text_engine.complete(call))
