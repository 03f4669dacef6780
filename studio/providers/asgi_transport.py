"""An httpx transport that calls an in-process ASGI app and streams its response.

httpx's own ASGITransport collects the whole response body before returning, which would turn
the sandbox's SSE streams into one late burst. This one hands the body over chunk by chunk as
the app sends it, with back-pressure by bytes: the app waits while more than ``HIGH_WATER`` bytes
it sent are still unread (as a server's socket buffer makes it wait), whatever the size of its
messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx

_END = object()
HIGH_WATER = 256 * 1024


class _Pipe:
    """What the app has sent and the reader has not read yet, in bytes."""

    __slots__ = ("held", "items", "room")

    def __init__(self) -> None:
        self.items: asyncio.Queue = asyncio.Queue()
        self.held = 0
        self.room = asyncio.Event()
        self.room.set()

    async def put(self, chunk: bytes) -> None:
        while self.held and self.held + len(chunk) > HIGH_WATER:  # one bigger chunk may wait alone
            self.room.clear()
            await self.room.wait()
        self.held += len(chunk)
        self.items.put_nowait(chunk)

    def end(self, last: Any) -> None:
        """The end of the body, or the error that cut it: queued without waiting for room."""
        self.items.put_nowait(last)

    async def get(self) -> Any:
        item = await self.items.get()
        if isinstance(item, bytes):
            self.held -= len(item)
            self.room.set()
        return item


class _QueueStream(httpx.AsyncByteStream):
    def __init__(self, queue: _Pipe, task: asyncio.Task) -> None:
        self._queue = queue
        self._task = task

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        # An iterator of its own, not an async generator: one a reader leaves unfinished (a stream
        # read up to its end marker) would be closed by a task of its own once collected.
        item = await self._queue.get()
        if item is _END:
            self._queue.end(_END)  # the end again, for any later read
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        return item

    async def aclose(self) -> None:
        if not self._task.done():
            self._task.cancel()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    def __init__(self, app: Any, client: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        url = request.url
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "client": self.client,
            "root_path": "",
        }
        loop = asyncio.get_running_loop()
        started: asyncio.Future = loop.create_future()
        queue = _Pipe()
        body_sent = False
        disconnected = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        ended = False

        async def send(message: dict[str, Any]) -> None:
            nonlocal ended
            if message["type"] == "http.response.start":
                started.set_result(message)
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk:
                    await queue.put(bytes(chunk))
                if not message.get("more_body", False):
                    ended = True
                    queue.end(_END)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # A crash inside the in-process vendor looks to us like a broken connection.
                error = httpx.RemoteProtocolError(f"in-process upstream failed: {exc!r}")
                error.__cause__ = exc
                if not started.done():
                    started.set_exception(error)
                else:
                    queue.end(error)
                return
            finally:
                disconnected.set()
            if not started.done():
                started.set_exception(RuntimeError("in-process app returned without a response"))
            elif not ended:  # as a server does, the connection is dropped: the client sees the body cut
                queue.end(httpx.RemoteProtocolError("in-process app returned without completing its response"))

        task = loop.create_task(run())
        try:
            start = await started
        except BaseException:
            task.cancel()
            raise
        headers = [(bytes(k), bytes(v)) for k, v in start.get("headers", [])]
        return httpx.Response(
            start["status"], headers=headers, stream=_QueueStream(queue, task), request=request
        )
