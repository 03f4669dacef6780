"""Error bodies per inbound family, and which family a /v1 path belongs to.

The engine raises typed errors (``studio.gateway.errors``); this module is the only place that
knows how each wire format spells them. One registry, looked up by path.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from studio.gateway.errors import GatewayError

logger = logging.getLogger(__name__)

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 501: "UNIMPLEMENTED",
    502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
OPENAI_TYPE = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
    409: "conflict_error", 413: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error",
}
ANTHROPIC_TYPE = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
    502: "api_error", 503: "overloaded_error", 504: "timeout_error", 529: "overloaded_error",
}
ARK_TYPE = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 429: "TooManyRequests"}
ARK_CODE = {400: "InvalidParameter", 401: "AuthenticationError", 403: "AccessDenied", 404: "NotFound",
            429: "RateLimitExceeded", 413: "InvalidParameter"}
DASHSCOPE_CODE = {400: "InvalidParameter", 401: "InvalidApiKey", 403: "AccessDenied", 404: "ModelNotFound",
                  413: "InvalidParameter", 429: "Throttling"}


def native_body(exc: GatewayError) -> dict[str, Any]:
    return {"error": {"code": exc.status, "message": exc.message, "status": GOOGLE_STATUS.get(exc.status, "INTERNAL")}}


def openai_body(exc: GatewayError) -> dict[str, Any]:
    default_code = {401: "invalid_api_key", 404: "model_not_found"}.get(exc.status)
    return {"error": {
        "message": exc.message,
        "type": OPENAI_TYPE.get(exc.status, "api_error" if exc.status < 504 else "timeout_error"),
        "param": exc.param,
        "code": exc.code or default_code,
    }}


def messages_body(exc: GatewayError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ANTHROPIC_TYPE.get(exc.status, "api_error"), "message": exc.message}}


def ark_body(exc: GatewayError) -> dict[str, Any]:
    return {"error": {
        "code": exc.code or ARK_CODE.get(exc.status, "InternalServiceError"),
        "message": exc.message,
        "param": exc.param or "",
        "type": ARK_TYPE.get(exc.status, "InternalServerError"),
    }}


def dashscope_body(exc: GatewayError) -> dict[str, Any]:
    return {"request_id": str(uuid.uuid4()), "code": exc.code or DASHSCOPE_CODE.get(exc.status, "InternalError"),
            "message": exc.message}


Renderer = Callable[[GatewayError], dict[str, Any]]

# First match wins; the last entry is the default family.
FAMILIES: list[tuple[str, re.Pattern[str], Renderer]] = [
    ("native", re.compile(r"^/v1/models/[^/]+:(generateContent|streamGenerateContent)$"), native_body),
    ("messages", re.compile(r"^/v1/messages(/|$)"), messages_body),
    ("ark", re.compile(r"^/v1/alpha/"), ark_body),
    ("dashscope", re.compile(r"^/v1/beta/"), dashscope_body),
    ("openai", re.compile(r""), openai_body),
]


def family_of(path: str) -> tuple[str, Renderer]:
    for name, pattern, renderer in FAMILIES:
        if pattern.search(path):
            return name, renderer
    raise AssertionError("the default family matches every path")


def error_response(request: HttpRequest, exc: GatewayError) -> HttpResponse:
    _, renderer = family_of(request.path)
    response = HttpResponse(orjson.dumps(renderer(exc)), status=exc.status, content_type="application/json")
    if exc.retry_after:
        response["Retry-After"] = str(int(exc.retry_after + 0.999))
    return response


def error_bytes(path: str, exc: GatewayError) -> bytes:
    """The family's error body, for an error that happens after a stream has started."""
    return orjson.dumps(family_of(path)[1](exc))
