"""The studio's static files (scripts, styles, icons), served by WhiteNoise in async mode.

WhiteNoise's own middleware is synchronous. Under Django's async handler each page request
therefore crossed to a thread at it and back, and a static file went out as a synchronous file
iterator, which Django reads whole in another thread (warning each time that it must). As an
async middleware, a request for anything else passes on without a thread, and a static file is
opened and read in one worker thread and answered whole: WhiteNoise's headers (caching, ETag,
a compressed variant, a range), its status (200, 206, 304) and the bytes its answer would send.
Under a synchronous handler (WSGI, the test client) it is WhiteNoise's middleware as it is.
"""

from __future__ import annotations

import asyncio

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.responders import StaticFile


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, settings=settings) -> None:
        super().__init__(get_response, settings)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if self.async_mode:
            return self._serve_async(request)
        return super().__call__(request)

    async def _serve_async(self, request: HttpRequest):
        path = request.path_info
        static_file = await asyncio.to_thread(self.find_file, path) if self.autorefresh else self.files.get(path)
        if static_file is None:
            return await self.get_response(request)
        return await asyncio.to_thread(whole_response, static_file, request)


def whole_response(static_file: StaticFile, request: HttpRequest) -> HttpResponse:
    """WhiteNoise's answer for ``request`` with its body read (a worker thread's work)."""
    answer = static_file.get_response(request.method, request.META)
    body = b""
    if answer.file is not None:
        with answer.file as file:
            body = file.read()
    response = HttpResponse(body, status=int(answer.status))
    del response["content-type"]  # WhiteNoise's headers name it, as they name everything
    for name, value in answer.headers:
        response[name] = value
    return response
