"""Error bodies per inbound family.

The engine raises typed errors (``studio.core.errors``); this module is the only place that
knows how each wire format spells them. Every route declares its family (``api.routing``);
the path is looked at only for a /v1 address that matches no route.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from studio.core.errors import GatewayError, LimitExceeded, QuotaExceeded
from studio.core.request_id import new as new_id

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    405: "UNIMPLEMENTED", 409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
    501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
# The OpenAI API answers every client error with ``invalid_request_error`` (the code says which);
# rate limits carry the limited resource (``requests``) and ``rate_limit_exceeded``; its own failures
# are ``server_error``. A 401 and a 429 always carry their fixed code (another vendor's code for
# them, relayed from an upstream, would mean nothing to an OpenAI client).
OPENAI_CODE = {401: "invalid_api_key", 405: "method_not_allowed", 429: "rate_limit_exceeded"}
OPENAI_FIXED_CODES = (401, 429)
ANTHROPIC_TYPE = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
    404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 502: "api_error", 503: "overloaded_error", 504: "timeout_error", 529: "overloaded_error",
}
ARK_TYPE = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            429: "TooManyRequests"}
ARK_CODE = {400: "InvalidParameter", 401: "AuthenticationError", 403: "AccessDenied", 404: "NotFound",
            405: "MethodNotAllowed", 413: "InvalidParameter", 429: "RateLimitExceeded"}
# Ark names an unknown model ``InvalidEndpointOrModel.NotFound``; DashScope ``ModelNotFound``.
ARK_MODEL_CODE = {"model_not_found": "InvalidEndpointOrModel.NotFound", "model_not_allowed": "AccessDenied",
                  "model_not_supported": "InvalidParameter", "task_not_cancellable": "OperationDenied.InvalidState"}
DASHSCOPE_CODE = {400: "InvalidParameter", 401: "InvalidApiKey", 403: "AccessDenied", 404: "NotFound",
                  405: "MethodNotAllowed", 413: "InvalidParameter", 429: "Throttling"}
DASHSCOPE_MODEL_CODE = {"model_not_found": "ModelNotFound", "model_not_allowed": "AccessDenied",
                        "model_not_supported": "InvalidParameter", "task_not_cancellable": "UnsupportedOperation"}


# The gateway's own limits (``LimitExceeded`` by what was limited, ``QuotaExceeded``) in each vendor's codes.
OPENAI_LIMIT_TYPE = {"requests": "requests", "tokens": "tokens", "images": "images", "videos": "requests"}
ARK_LIMIT_CODE = {"requests": "RateLimitExceeded.EndpointRPMExceeded",
                  "tokens": "RateLimitExceeded.EndpointTPMExceeded"}
ARK_QUOTA_CODE = "SetLimitExceeded"
DASHSCOPE_LIMIT_CODE = "Throttling.RateQuota"
DASHSCOPE_QUOTA_CODE = "Throttling.AllocationQuota"


def _limited(exc: GatewayError) -> str:
    return str(exc.details.get("limit") or "requests")


def native_body(exc: GatewayError) -> dict[str, Any]:
    error: dict[str, Any] = {"code": exc.status, "message": exc.message,
                             "status": GOOGLE_STATUS.get(exc.status, "INTERNAL")}
    if exc.status == 429 and exc.retry_after:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                             "retryDelay": f"{int(exc.retry_after + 0.999)}s"}]
    return {"error": error}


def openai_type(status: int) -> str:
    if status == 429:
        return "requests"
    return "invalid_request_error" if status < 500 else "server_error"


def openai_body(exc: GatewayError) -> dict[str, Any]:
    if isinstance(exc, QuotaExceeded):
        return {"error": {"message": exc.message, "type": "insufficient_quota", "param": None,
                          "code": "insufficient_quota"}}
    if isinstance(exc, LimitExceeded):
        return {"error": {"message": exc.message, "type": OPENAI_LIMIT_TYPE.get(_limited(exc), "requests"),
                          "param": None, "code": "rate_limit_exceeded"}}
    fixed = exc.status in OPENAI_FIXED_CODES
    return {"error": {
        "message": exc.message,
        "type": openai_type(exc.status),
        "param": exc.param,
        "code": OPENAI_CODE[exc.status] if fixed else _openai_code(exc) or OPENAI_CODE.get(exc.status),
    }}


def _openai_code(exc: GatewayError) -> str | None:
    """The error's code as OpenAI clients read it: ``model_not_found`` only for the client's own
    model (a 404 about ``model``; an upstream missing its model is the gateway's failure), and
    never another vendor's error type (``invalid_request_error``…), which is not a code there."""
    code = exc.code
    if code == "model_not_found" and not (exc.status == 404 and exc.param == "model"):
        return None
    if code in ANTHROPIC_TYPE.values() or code == "error":
        return None
    return code


def messages_body(exc: GatewayError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ANTHROPIC_TYPE.get(exc.status, "api_error"), "message": exc.message}}


def ark_body(exc: GatewayError) -> dict[str, Any]:
    code = ARK_MODEL_CODE.get(exc.code or "") or exc.code or ARK_CODE.get(exc.status, "InternalServiceError")
    if isinstance(exc, QuotaExceeded):
        code = ARK_QUOTA_CODE
    elif isinstance(exc, LimitExceeded):
        code = ARK_LIMIT_CODE.get(_limited(exc), "RateLimitExceeded")
    return {"error": {
        "code": code,
        "message": exc.message,
        "param": exc.param or "",
        "type": ARK_TYPE.get(exc.status, "InternalServerError"),
    }}


def dashscope_body(exc: GatewayError) -> dict[str, Any]:
    code = DASHSCOPE_MODEL_CODE.get(exc.code or "") or exc.code or DASHSCOPE_CODE.get(exc.status, "InternalError")
    if isinstance(exc, QuotaExceeded):
        code = DASHSCOPE_QUOTA_CODE
    elif isinstance(exc, LimitExceeded):
        code = DASHSCOPE_LIMIT_CODE
    return {"request_id": str(uuid.uuid4()), "code": code, "message": exc.message}


Renderer = Callable[[GatewayError], dict[str, Any]]


def new_request_id() -> str:
    """A request id in the messages format's spelling (``req_…``), for its header and error bodies."""
    return "req_" + new_id()


@dataclass(frozen=True, slots=True)
class Family:
    """An inbound wire format's error spelling, declared by each route (``api.routing.FamilyRouter``).

    ``request_id_header``: the format names every answer with a request id in this header, and
    its error bodies carry the same id as ``request_id`` (messages: ``request-id``).
    """

    name: str
    render: Renderer
    request_id_header: str | None = None

    def _body(self, exc: GatewayError, request_id: str | None) -> dict[str, Any]:
        body = self.render(exc)
        if request_id is not None:
            body["request_id"] = request_id
        return body

    def response(self, exc: GatewayError, headers: dict[str, str] | None = None) -> HttpResponse:
        request_id = new_request_id() if self.request_id_header else None
        response = HttpResponse(orjson.dumps(self._body(exc, request_id)), status=exc.status,
                                content_type="application/json", headers=headers)
        if self.request_id_header and request_id:
            response[self.request_id_header] = request_id
        if exc.retry_after:
            response["Retry-After"] = str(int(exc.retry_after + 0.999))
        for name, value in (exc.details.get("headers") or {}).items():  # e.g. x-ratelimit-* on a 429
            response[name] = value
        return response

    def body_bytes(self, exc: GatewayError) -> bytes:
        """The error body, for an error that happens after a stream has started."""
        return orjson.dumps(self._body(exc, new_request_id() if self.request_id_header else None))


NATIVE = Family("native", native_body)
OPENAI = Family("openai", openai_body)
MESSAGES = Family("messages", messages_body, request_id_header="request-id")
ARK = Family("ark", ark_body)
DASHSCOPE = Family("dashscope", dashscope_body)
FAMILIES = {family.name: family for family in (NATIVE, OPENAI, MESSAGES, ARK, DASHSCOPE)}

# Only for a /v1 address no route matched: the nearest family by its prefix; OpenAI-style otherwise.
UNROUTED: list[tuple[re.Pattern[str], Family]] = [
    (re.compile(r"^/v1/models/[^/]+:"), NATIVE),
    (re.compile(r"^/v1beta(/|$)"), NATIVE),
    (re.compile(r"^/v1/messages(/|$)"), MESSAGES),
    (re.compile(r"^/v1/alpha(/|$)"), ARK),
    (re.compile(r"^/v1/beta(/|$)"), DASHSCOPE),
]


def family_for(request: HttpRequest) -> Family:
    """The family the matched route declared (its URL name is ``<family>.<operation>``)."""
    match = request.resolver_match
    if match is not None and match.url_name:
        family = FAMILIES.get(match.url_name.partition(".")[0])
        if family is not None:
            return family
    for pattern, family in UNROUTED:
        if pattern.search(request.path):
            return family
    return OPENAI


def error_response(request: HttpRequest, exc: GatewayError) -> HttpResponse:
    return family_for(request).response(exc)
