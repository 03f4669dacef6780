"""Bodies over ``DATA_UPLOAD_MAX_MEMORY_SIZE``: a 413 in the route family's error body.

The limit holds for every /v1 body, JSON or multipart, with a ``Content-Length`` or streamed
without one (``studio.serving`` keeps no more than the limit of a body and gives the request
the size it really had). The answer comes before the view runs, in the family of the route the path names.
"""

from __future__ import annotations

import contextlib

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from api.errors import error_response
from api.middleware import AsyncMiddleware
from studio.core.errors import PayloadTooLarge
from studio.core.hot_settings import hot


def too_large() -> PayloadTooLarge:
    limit = hot.DATA_UPLOAD_MAX_MEMORY_SIZE
    return PayloadTooLarge(f"the request body is larger than the {limit} bytes accepted", param="body",
                           details={"max_bytes": limit})


def too_large_response(request: HttpRequest) -> HttpResponse:
    if request.resolver_match is None:
        with contextlib.suppress(Resolver404):  # an unknown path: the family its prefix suggests
            request.resolver_match = resolve(request.path_info)
    return error_response(request, too_large())


def over_limit(request: HttpRequest) -> bool:
    limit = hot.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None:
        return False
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    return declared > limit


class BodyLimitMiddleware(AsyncMiddleware):
    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if over_limit(request):
            return too_large_response(request)
        return await self.get_response(request)
