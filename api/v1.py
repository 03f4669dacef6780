"""The /v1 API: one NinjaAPI, one router per endpoint family, errors rendered per family."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError

from studio.gateway.errors import BadRequest, GatewayError, NotFound

from . import (
    chat,
    files,
    images,
    messages,
    models_list,
    native,
    responses,
    video_alpha,
    video_beta,
    video_generic,
)
from .errors import error_response

logger = logging.getLogger(__name__)

api = NinjaAPI(
    title="Studio gateway",
    version="1.0.0",
    description="Image, video and text generation in the established wire formats.",
    urls_namespace="v1",
    docs_url="/docs",
)
api.add_router("", native.router)
api.add_router("", models_list.router)
api.add_router("", video_alpha.router)
api.add_router("", video_beta.router)
api.add_router("", video_generic.router)
api.add_router("", images.router)
api.add_router("", files.router)
api.add_router("", chat.router)
api.add_router("", messages.router)
api.add_router("", responses.router)


@api.exception_handler(GatewayError)
def on_gateway_error(request: HttpRequest, exc: GatewayError) -> HttpResponse:
    return error_response(request, exc)


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or "body"
    return error_response(request, BadRequest(f"'{loc}': {first.get('msg', 'invalid value')}", param=loc))


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(request, GatewayError(str(exc), status=exc.status_code))


@api.exception_handler(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unhandled error on %s", request.path)
    return error_response(request, GatewayError("internal error"))


async def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Unknown /v1 paths answer in the family's body, not Django's HTML page."""
    return error_response(request, NotFound(f"no route for {request.method} {request.path}"))
