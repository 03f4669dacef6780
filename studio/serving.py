"""ASGI plumbing: /v1 on its own lean handler, everything else on Django's, and the lifespan.

/v1 requests carry their own key and need none of the studio's session, CSRF or message
middleware; giving them a handler with ``API_MIDDLEWARE`` keeps those (and their thread hops)
off the gateway's hot path. The hottest routes (``api.direct``) are answered without Django's URL
resolver and ninja's operation wrapper; every other /v1 address is resolved as usual.

Measured (buffered and streamed chat through the whole ASGI app in one process, the sandbox
upstream and the httpx client included, 3 interleaved rounds of 150 requests, median CPU time
per request): ``ApiASGIHandler`` 2.6 ms buffered / 3.0 ms streamed; Django's ``ASGIHandler``
with the same lean middleware 4.5 / 4.9 ms; Django's handler with the studio's ``MIDDLEWARE``
(what /v1 gets without this module) 8.0 / 8.0 ms. It saves about 1.9 ms of CPU per request over
Django's ``handle`` alone (its thread hops for signals, response closing and 4xx logging), and
``tests/perf/test_hot_path.py`` (no thread hop on /v1) holds only with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.urls import set_script_prefix
from django.utils.module_loading import import_string

from studio.api_request import ApiRequest
from studio.core import memory, streams
from studio.core.hot_settings import hot, script_prefix
from studio.core.memo import Memo

logger = logging.getLogger("studio.serving")

API_PREFIXES = ("/v1/", "/v1beta/")  # /v1beta: the native family under the Gemini API's version

# Response header names as sent, by the name a response holds: the views' names are a few dozen
# constants, so each is encoded once rather than for every response (its ``encode`` and
# ``isinstance`` were about a fifth of what this module spends on a header).
_NAMES: Memo[str | bytes, bytes] = Memo(lambda name: name.encode("ascii") if isinstance(name, str) else bytes(name),
                                        512)


class ApiASGIHandler(ASGIHandler):
    """Django's ASGI handler for /v1, without its per-request thread hops.

    Django's handler sends ``request_started``/``request_finished`` through ``asend`` (whose sync
    database receivers each cost a hop to a worker thread), closes the response and logs 4xx
    answers via ``sync_to_async``, and runs every request inside a ``ThreadSensitiveContext``.
    /v1 views are async end to end and never touch the ORM on the request path (the database
    receivers have nothing to do in the event loop's thread), so all of that is done inline
    here. It also uses the API's own, async-only middleware list.
    """

    request_class = ApiRequest

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.handle(scope, receive, send)

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        limit = hot.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            body_file, size, whole = await self.read_limited_body(receive, limit)
        except RequestAborted:
            return
        if limit is not None and size > limit:
            # Only the limit was kept: the request states the size it really had (a streamed body
            # has no Content-Length), so Django's checks and the API's 413 (``api.body_limit``) see it.
            headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(size).encode())]}
            whole = None
        prefix = script_prefix(scope)
        if prefix:  # no prefix is the default ("/"): the request's context already reads it
            set_script_prefix(prefix)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            body_file.close()
            await self.send_response(error_response, send)
            error_response.close()
            return
        if whole is not None:
            # The body is at hand and within the limit: ``request.body`` is these bytes, without
            # Django's size checks, seeks, read and second copy of them on first use.
            request._body = whole

        # As Django does, watch for a disconnect while the view runs, so an abandoned stream stops
        # pulling from its upstream; but the view runs in this task, and the watcher cancels it,
        # which spares a second task and an ``asyncio.wait`` per request.
        loop = asyncio.get_running_loop()  # found once: each look-up asks the system for the process id
        this = asyncio.current_task(loop)
        assert this is not None
        state = _Watch()
        watcher = loop.create_task(self.watch_for_disconnect(receive, this, state))
        response = None
        memory.request_started()
        try:
            response = await self.run_get_response(request)
            with contextlib.suppress(asyncio.CancelledError):  # the client went away mid-send
                await self.send_response(response, send)
        except asyncio.CancelledError:
            if not state.client_left:
                raise  # cancelled from outside (the server is stopping)
        except RequestAborted:
            pass
        except streams.Cut as exc:  # returning without the stream's end: the server drops the connection
            logger.warning("%s: answer cut off: %s", request.path, exc)
        finally:
            state.finished = True
            watcher.cancel()
            if state.client_left:
                this.uncancel()
            if response is not None:
                close_response(response)
            body_file.close()
            memory.request_ended()

    @staticmethod
    async def watch_for_disconnect(receive: Any, task: asyncio.Task, state: _Watch) -> None:
        """Cancel ``task`` (the request's) when the client disconnects before its answer is done."""
        message = await receive()
        if message["type"] == "http.disconnect" and not state.finished:
            state.client_left = True
            task.cancel()

    async def read_limited_body(self, receive: Any, limit: int | None) -> tuple[Any, int, bytes | None]:
        """Django's ``read_body``, keeping at most the body limit (plus one byte) of what is sent:
        a client streaming gigabytes fills neither memory nor disk. A body within
        ``FILE_UPLOAD_MAX_MEMORY_SIZE`` stays in memory; a larger one goes to a temporary file, as
        Django's does. Returns the file, the size sent, and the body's bytes when it stayed in
        memory."""
        in_memory = hot.FILE_UPLOAD_MAX_MEMORY_SIZE
        chunks: list[bytes] = []
        spool = None  # a file, once the body is larger than Django keeps in memory
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                if spool is not None:
                    spool.close()
                raise RequestAborted()
            chunk = message.get("body", b"")
            size += len(chunk)
            if limit is None or size <= limit + 1:
                if spool is None and size > in_memory:
                    spool = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - closed with the request
                        max_size=in_memory, mode="w+b")
                    spool.writelines(chunks)
                    chunks = []
                if spool is None:
                    chunks.append(chunk)
                else:
                    spool.write(chunk)
            if not message.get("more_body", False):
                break
        if spool is None:
            whole = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            return io.BytesIO(whole), size, whole
        spool.seek(0)
        return spool, size, None

    async def send_response(self, response: Any, send: Any) -> None:
        """Django's, without cutting the body into 64 KiB slices (each a copy and a message of its
        own): a buffered body leaves in one message, a stream's parts as they come. Views cut a
        big body into 1 MiB pieces themselves (``api.native.routes.pieces``)."""
        # The header store's ``(name, value)`` pairs as they are: ``response.items()`` would look
        # each one up again by its lower-cased name through three Python frames. A name is
        # encoded once per process (``_NAMES``).
        headers = [(_NAMES[name],
                    value.encode("latin1") if isinstance(value, str) else bytes(value))
                   for name, value in response.headers._store.values()]
        headers += [(b"Set-Cookie", c.output(header="").encode("ascii").strip()) for c in response.cookies.values()]
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        if not response.streaming:
            await send({"type": "http.response.body", "body": response.content})
            return
        # A synchronous iterator goes through Django's adapter (it warns, and reads it in a thread).
        content = response._iterator if response.is_async else aiter(response)
        await send_parts(content, response.make_bytes, send, streams.delivered.get(), response.status_code)
        await send({"type": "http.response.body"})

    async def get_response_async(self, request: Any) -> Any:
        # (Django's handler calls ``set_urlconf(settings.ROOT_URLCONF)`` first: with no urlconf set,
        # which /v1 never does, the resolver reads ``ROOT_URLCONF`` itself.)
        response = await self._middleware_chain(request)
        response._resource_closers.append(request.close)
        if response.status_code >= 500:
            logger.error("%s: %s", response.reason_phrase, request.path)
        return response

    async def _respond(self, request: Any) -> Any:
        """The innermost handler: a direct route (``api.direct``) without the URL resolver, else Django's."""
        found = self._find_direct(request.method, request.path_info)
        if found is None:
            return await self._get_response_async(request)
        return await self._respond_direct(request, *found)

    def load_middleware(self, is_async: bool = False) -> None:
        from api import direct

        self._find_direct, self._respond_direct = direct.find, direct.respond
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        handler = convert_exception_to_response(self._respond)
        for path in reversed(settings.API_MIDDLEWARE):
            middleware = import_string(path)
            if not getattr(middleware, "async_capable", False):
                raise RuntimeError(f"API middleware {path} must be async-capable")
            handler = convert_exception_to_response(middleware(handler))
        self._middleware_chain = handler


async def send_parts(content: AsyncIterator[Any], make_bytes: Callable[[Any], bytes], send: Any,
                     delivered: streams.Delivered | None = None, status: int = 200) -> None:
    """Send a stream's parts as they come, straight from the view's own iterator.

    Django's ``StreamingHttpResponse.__aiter__`` reads it through two generators of its own (one
    over ``streaming_content``, which converts each part), a frame switch each per part; here a
    part that is not ``bytes`` yet is converted as Django would, except a ``memoryview`` (a big
    body's 1 MiB slices, ``api.native.routes.pieces``): the server writes it as it is (uvicorn's
    transports take any buffer), where ``bytes(view)`` would copy every byte of a 15 MB picture
    once more in the event loop's thread. The iterator is closed here when the send ends early
    (the client left), so the view's clean-up (a cut stream's usage) runs before the request
    ends, not when the garbage collector finds it. ``delivered`` then hears how it went (``status``
    unless the client left or the stream failed) and when its first part was sent."""
    first: float | None = None
    try:
        async for part in content:
            kind = type(part)
            if kind is bytearray:  # (Django would send its repr)
                part = bytes(part)
            elif kind is not bytes and kind is not memoryview:
                part = make_bytes(part)
            if part:
                if first is None:
                    first = time.perf_counter()
                await send({"type": "http.response.body", "body": part, "more_body": True})
    except (GeneratorExit, asyncio.CancelledError):
        status = streams.CLIENT_CLOSED
        raise
    except Exception:
        status = 500
        raise
    finally:
        try:
            await streams.close(content)  # a cut stream's charge is made before it is reported
        finally:
            if delivered is not None:
                delivered(status, first)


class _Watch:
    __slots__ = ("client_left", "finished")

    def __init__(self) -> None:
        self.client_left = False
        self.finished = False


def close_response(response: Any) -> None:
    """``HttpResponseBase.close`` without its ``request_finished`` signal: its receivers (database
    connections, caches) have nothing to do in the event loop's thread, where /v1 never opens one."""
    for closer in response._resource_closers:
        with contextlib.suppress(Exception):
            closer()
    response._resource_closers.clear()
    response.closed = True


class HttpDispatcher:
    """Send /v1 to the API handler and the rest to the studio's handler."""

    def __init__(self, api: Any, studio: Any) -> None:
        self.api = api
        self.studio = studio

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if path.startswith(API_PREFIXES) or path in ("/v1", "/v1beta"):
            await self.api(scope, receive, send)
        elif path == HEALTHZ:
            await healthz(send)
        else:
            await self.studio(scope, receive, send)


RENDER_GRACE = 10.0  # seconds a shutdown waits for the sandbox videos this process is rendering

HEALTHZ = "/healthz"


async def healthz(send: Any) -> None:
    """The process answers: nothing else is touched (no database, cache or Django)."""
    body = b'{"status":"ok"}'
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class Lifespan:
    """Starts the in-process background worker with the server and stops it with the server."""

    def __init__(self) -> None:
        self.worker_task: asyncio.Task | None = None
        self.release_task: asyncio.Task | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    logger.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def startup(self) -> None:
        from studio.gateway import events, health, snapshot  # noqa: F401 - health registers its handlers

        if memory.keep_freed_memory(settings.STUDIO_MALLOC_KEEP_BYTES):
            self.release_task = asyncio.get_running_loop().create_task(
                memory.release_when_idle(settings.STUDIO_MALLOC_IDLE_SECONDS))

        events.start()  # config changes and breaker state from the other processes

        try:
            await sync_to_async(snapshot.load_now)()
        except Exception:  # e.g. not migrated yet: the first request will retry
            logger.warning("could not warm the gateway snapshot at startup", exc_info=True)
        if settings.STUDIO_INPROCESS_WORKER:
            from studio.workers.runner import run_forever

            self.worker_task = asyncio.get_running_loop().create_task(run_forever())
            logger.info("in-process background worker started")
        memory.settle_heap()

    async def shutdown(self) -> None:
        from studio.gateway import admission, budget_alerts, events, health, metrics, recording
        from studio.providers.http import close_client
        from studio.sandbox import video_jobs

        for task in (self.worker_task, self.release_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:  # settlements still queued, and the counter units this process holds, go back
            await asyncio.wait_for(admission.drain(), 10)
        except Exception:
            logger.warning("could not settle the spend counters at shutdown", exc_info=True)
        await video_jobs.stop_callbacks()
        if not await video_jobs.wait_renders(RENDER_GRACE):  # e.g. a long video: the lease passes it on
            logger.info("sandbox video renders still under way at shutdown")
        await recording.drain()
        await asyncio.to_thread(budget_alerts.wait_for_webhooks)  # an alert's webhook under way is sent
        await health.drain()
        await events.stop()
        await close_client()
        metrics.process_exited()
