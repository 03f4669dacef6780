"""``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` (spec/text.md): the key in
``X-Api-Key`` (or Bearer), the version in ``epsilon-version`` (``anthropic-version`` accepted as
its alias); streams end with ``message_stop``, or with ``event: error`` when the upstream fails
mid-stream. Every answer names itself in ``request-id`` (error bodies carry it as ``request_id``);
``anthropic-beta`` travels to an upstream that speaks the messages format."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from api.auth import messages_key, principal_for
from api.body import JsonAnswer, json_response
from api.errors import MESSAGES, new_request_id
from api.headers import header
from api.sse import named_error_frame, ready_frame, start_stream
from studio.core.errors import BadRequest
from studio.gateway.text import engine as text_engine
from studio.gateway.text import token_count

VERSION_HEADERS = ("epsilon-version", "anthropic-version")
FORWARDED_HEADERS = ("anthropic-beta",)
REQUEST_ID_HEADER = (MESSAGES.request_id_header or "request-id").lower()


def require_version(request: HttpRequest) -> str:
    for name in VERSION_HEADERS:
        value = header(request, name)
        if value:
            return value
    raise BadRequest("epsilon-version: header is required", param="epsilon-version")


def forwarded(request: HttpRequest) -> dict[str, str]:
    return {name: value for name in FORWARDED_HEADERS if (value := header(request, name))}


def named(response: HttpResponse) -> HttpResponse:
    # Straight into the header store (as ``api.spend_headers`` does): a lower-case constant name
    # and an ASCII id, which Django's checks would pass unchanged.
    response.headers._store[REQUEST_ID_HEADER] = (REQUEST_ID_HEADER, new_request_id())
    return response


async def messages(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(messages_key(request))
    require_version(request)
    call = await text_engine.prepare(principal, "messages", request.body, headers=forwarded(request))
    if call.stream:
        return named(await start_stream(request, text_engine.stream(call), frame=ready_frame,
                                        error_frame=named_error_frame))
    return named(JsonAnswer(await text_engine.complete(call)))


async def count_tokens(request: HttpRequest) -> HttpResponse:
    principal = await principal_for(messages_key(request))
    require_version(request)
    return named(json_response(await token_count.count_tokens(principal, request.body, forwarded(request))))
