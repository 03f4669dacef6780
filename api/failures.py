"""What a /v1 handler's exception becomes: the route family's error body (a typed error, a body
over the limit) or, for anything else, a logged 500 in that body.

The ninja APIs (``api.v1``) register these as their exception handlers; ``api.direct`` calls
``answer`` for the routes it serves itself.
"""

from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from api.body_limit import too_large_response
from api.errors import error_response
from studio.core.errors import GatewayError

logger = logging.getLogger("api.v1")


def on_gateway_error(request: HttpRequest, exc: GatewayError) -> HttpResponse:
    return error_response(request, exc)


def on_body_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return too_large_response(request)


def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unhandled error on %s", request.path)
    return error_response(request, GatewayError("internal error"))


def answer(request: HttpRequest, exc: Exception) -> HttpResponse:
    if isinstance(exc, GatewayError):
        return on_gateway_error(request, exc)
    if isinstance(exc, RequestDataTooBig):
        return on_body_too_big(request, exc)
    return on_unexpected(request, exc)
