"""A scriptable vendor at the HTTP boundary: records each request and answers from a script."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json"
    # streamed body pieces, sent one by one (an async iterable sends each when it is produced)
    chunks: list[bytes] | AsyncIterable[bytes] | None = None


@dataclass
class FakeVendor:
    base_url: str
    answer: Callable[[dict[str, Any]], Answer] = lambda request: Answer()
    requests: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = {"path": scope["path"], "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
                   "body": orjson.loads(body) if body else None}
        self.requests.append(request)
        answer = self.answer(request)
        await send({"type": "http.response.start", "status": answer.status,
                    "headers": [(b"content-type", answer.content_type.encode())]})
        if isinstance(answer.chunks, AsyncIterable):
            async for chunk in answer.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        else:
            for chunk in answer.chunks or [answer.body]:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def mount(self) -> None:
        http.mount(self.base_url, StreamingASGITransport(self))

    def unmount(self) -> None:
        http.unmount(self.base_url)


def json_answer(obj: Any, status: int = 200) -> Answer:
    return Answer(status=status, body=orjson.dumps(obj))


def sse_answer(frames: list[bytes]) -> Answer:
    return Answer(content_type="text/event-stream", chunks=frames)


def fixture_answer(path: Path, status: int = 200) -> Answer:
    """A captured vendor body replayed as it was: JSON, or SSE sent one event per chunk."""
    raw = path.read_bytes()
    if path.suffix == ".sse":
        return sse_answer([frame + b"\n\n" for frame in raw.split(b"\n\n") if frame.strip()])
    return Answer(status=status, body=raw)


async def add_upstream(protocol: str, base_url: str, model_map: dict[str, str], priority: int = 10):
    from studio.models import Upstream

    upstream = Upstream(name=f"fake {protocol} {base_url}", protocol=protocol, base_url=base_url,
                        priority=priority, model_map=model_map)
    upstream.credential = f"vendor-secret-{protocol}"
    await upstream.asave()
    return upstream


async def mounted_vendor(protocol: str, base_url: str, model_map: dict[str, str]) -> AsyncIterator[FakeVendor]:
    """Body of a fixture: a FakeVendor at ``base_url``, the upstream routing ``model_map`` to it,
    unmounted afterwards."""
    fake = FakeVendor(base_url)
    fake.mount()
    await add_upstream(protocol, base_url, model_map)
    try:
        yield fake
    finally:
        fake.unmount()
