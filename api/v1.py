"""The /v1 API: one NinjaAPI, one router per endpoint family, errors rendered per family."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from ninja.errors import HttpError, ValidationError

from api import embeddings, failures, models_list
from api.docs import OfflineSwagger
from api.errors import error_response
from api.images import files
from api.images import router as images
from api.native import models as native_models
from api.native import router as native
from api.openapi import Api
from api.text import routes as text
from api.video import ark, dashscope, generic
from studio.core.errors import BadRequest, GatewayError, NotFound

api = Api(
    title="Studio gateway",
    version="1.0.0",
    description="Image, video and text generation in the established wire formats.",
    urls_namespace="v1",
    docs=OfflineSwagger(),
    docs_url="/docs",
)
# Order matters where paths overlap: ``models/{model}:generateContent`` before ``models/{model}``.
for router in (native.router, models_list.router, ark.router, dashscope.router, generic.router, images.router,
               files.router, text.chat_router, text.messages_router, text.responses_router, embeddings.router):
    api.add_router("", router)

# The native family again under ``/v1beta``, the Gemini API's own version, so its official client
# works with its defaults; there the model list answers in Gemini's shape.
beta = Api(title="Studio gateway (native, v1beta)", version="1.0.0", urls_namespace="v1beta", docs_url=None,
           openapi_url=None)
for router in (native.router, native_models.router):
    beta.add_router("", router)


for answering in (api, beta):  # the handlers ``api.direct`` shares
    answering.add_exception_handler(GatewayError, failures.on_gateway_error)
    answering.add_exception_handler(RequestDataTooBig, failures.on_body_too_big)
    answering.add_exception_handler(Exception, failures.on_unexpected)


@api.exception_handler(ValidationError)
@beta.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or "body"
    return error_response(request, BadRequest(f"'{loc}': {first.get('msg', 'invalid value')}", param=loc))


@api.exception_handler(HttpError)
@beta.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(request, GatewayError(str(exc), status=exc.status_code))


async def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Unknown /v1 paths answer in the nearest family's body, not Django's HTML page."""
    return error_response(request, NotFound(f"no route for {request.method} {request.path}"))
