"""The sandbox vendor cloud: one ASGI app speaking the real vendors' protocols, offline.

Each protocol module contributes routes (``@route``) when imported. Which modules make up the
cloud is not listed here: each vendor's registry entry (``studio.providers.registry``) names the
sandbox modules that imitate it, and the app is given them once at start-up (``install``, from
the Django app's ``ready``). Requests reach it in-process through the shared upstream client (no
socket), or over a port (``python manage.py run_sandbox``) for benchmarks.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import orjson

logger = logging.getLogger(__name__)


# The most of a streamed answer one message carries (about what one socket read returns).
WIRE_PIECE = 64 * 1024


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return orjson.loads(self.body) if self.body else None


@dataclass(slots=True)
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    stream: AsyncIterator[bytes] | None = None


def json_response(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status=status, body=orjson.dumps(obj), headers=headers or {})


def sse_response(events: AsyncIterator[bytes]) -> Response:
    return Response(content_type="text/event-stream", stream=events, headers={"cache-control": "no-cache"})


Handler = Callable[[Request], Awaitable[Response]]
_routes: list[tuple[str, re.Pattern[str], Handler]] = []


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    """Register a handler; ``pattern`` is a regex over the path with named groups."""

    def decorator(handler: Handler) -> Handler:
        _routes.append((method, re.compile(pattern + r"$"), handler))
        return handler

    return decorator


class SandboxApp:
    def __init__(self) -> None:
        self.modules: tuple[str, ...] = ()
        self._loaded = False

    def install(self, modules: tuple[str, ...]) -> None:
        """The protocol modules (names inside this package) to serve; imported on the first request."""
        self.modules = modules
        self._loaded = False

    def _load_protocols(self) -> None:
        for name in self.modules:
            importlib.import_module(f"{__package__}.{name}")

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if not self._loaded:
            self._load_protocols()
            self._loaded = True
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        request = Request(scope["method"], scope["path"], query, headers, bytes(body))
        response = await self.dispatch(request)
        raw_headers = [(b"content-type", response.content_type.encode())]
        raw_headers += [(k.encode(), v.encode()) for k, v in response.headers.items()]
        await send({"type": "http.response.start", "status": response.status, "headers": raw_headers})
        if response.stream is None:
            await send({"type": "http.response.body", "body": response.body})
            return
        async for chunk in response.stream:
            # A vendor's big event (a picture) reaches a client in pieces, as the network delivers
            # it, not as one read: the gateway's readers meet it here as they do there.
            for start in range(0, len(chunk), WIRE_PIECE):
                await send({"type": "http.response.body", "body": chunk[start:start + WIRE_PIECE], "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def dispatch(self, request: Request) -> Response:
        allowed = False
        for method, pattern, handler in _routes:
            match = pattern.match(request.path)
            if match is None:
                continue
            if method != request.method:
                allowed = True
                continue
            request.params = match.groupdict()
            try:
                return await handler(request)
            except Exception as exc:  # a real vendor answers 500, it does not hang up
                logger.exception("sandbox handler failed")
                return json_response({"error": {"code": 500, "message": f"internal error: {exc!r}",
                                                "status": "INTERNAL"}}, 500)
        status = 405 if allowed else 404
        return json_response({"error": {"code": status, "message": f"no route for {request.path}"}}, status)


application = SandboxApp()
