"""``POST /v1/chat/completions`` (spec/text.md): buffered JSON or ``data:`` chunks ending with
``data: [DONE]``; an upstream failure mid-stream is sent as ``data: {"error": …}``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from api.auth import bearer_key, principal_for
from api.errors import OPENAI
from api.openapi import BEARER, body_doc
from api.routing import FamilyRouter
from api.sse import data_frame, ready_frame, start_stream
from api.text.schemas import ChatCompletionRequest
from studio.gateway.text import engine as text_engine

router = FamilyRouter(OPENAI, security=BEARER, tags=["text"])



@router.post("/chat/completions", openapi_extra=body_doc(json=ChatCompletionRequest), summary="Chat completions")
async def chat_completions(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(bearer_key(request))
    call = await text_engine.prepare(principal, "chat", request.body)
    if call.stream:
        return await start_stream(request, text_engine.stream(call), frame=ready_frame, error_frame=data_frame)
    return HttpResponse(await text_engine.complete(call), content_type="application/json")
