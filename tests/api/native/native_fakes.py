"""A Gemini-protocol vendor faked at the HTTP boundary (reference §1), and upstream rows for it.

The fake answers from a queue of scripted replies and records every request (path, headers,
body), so tests can check both what the gateway sent and what it did with the answer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson
import pytest

from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "application/json"
    # After sending this many chunks the connection breaks (the app raises).
    break_after: int | None = None
    delay: float = 0.0  # before the response starts (timeouts)
    hold: asyncio.Event | None = None  # the connection stays open after the chunks until this is set
    then: list[bytes] = field(default_factory=list)  # sent once ``hold`` is set


@dataclass
class Seen:
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        return orjson.loads(self.body)


class FakeGemini:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.tasks: list[asyncio.Task] = []  # the task serving each request

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        self.tasks.append(asyncio.current_task())
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests.append(Seen(
            path=scope["path"], query=scope["query_string"].decode(),
            headers={k.decode(): v.decode() for k, v in scope["headers"]}, body=body,
        ))
        reply = self.replies.popleft() if self.replies else Reply(500, [error_body(500, "INTERNAL", "no reply")])
        if reply.delay:
            await asyncio.sleep(reply.delay)
        await send({"type": "http.response.start", "status": reply.status,
                    "headers": [(b"content-type", reply.content_type.encode())]})
        for i, chunk in enumerate(reply.chunks):
            if reply.break_after is not None and i >= reply.break_after:
                raise ConnectionResetError("the vendor dropped the connection")
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if reply.hold is not None:
            await reply.hold.wait()
        for chunk in reply.then:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def sse(*frames: dict | bytes, newline: bytes = b"\r\n") -> list[bytes]:
    """One chunk per event, in the vendor's framing (CRLF by default, no [DONE])."""
    return [b"data: " + (f if isinstance(f, bytes) else orjson.dumps(f)) + newline + newline for f in frames]


def error_body(code: int, status: str, message: str, details: list | None = None) -> bytes:
    """A Google error body, pretty-printed over several lines as the vendor sends it."""
    error = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return orjson.dumps({"error": error}, option=orjson.OPT_INDENT_2)


def error_reply(code: int, status: str, message: str = "failure", details: list | None = None) -> Reply:
    return Reply(code, [error_body(code, status, message, details)])


def json_reply(obj: dict) -> Reply:
    return Reply(200, [orjson.dumps(obj)])


def sse_reply(*frames: dict | bytes, break_after: int | None = None) -> Reply:
    return Reply(200, sse(*frames), content_type="text/event-stream", break_after=break_after)


def image_frame(data_b64: str, *, signature: str = "c2ln", finish: str | None = "STOP", usage: bool = True) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": data_b64}, "thoughtSignature": signature}]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    frame: dict = {"candidates": [candidate], "modelVersion": "gemini-3.1-flash-image-preview", "responseId": "r1"}
    if usage:
        frame["usageMetadata"] = {"promptTokenCount": 5, "candidatesTokenCount": 1120, "totalTokenCount": 1125}
    return frame


# The seeded price of delta-3.1-flash-image applied to image_frame's usage:
# (5 x $0.50 + 1120 x $60) per million tokens.
IMAGE_FRAME_COST = 0.0672025


def with_cost(frame: dict, cost: float = IMAGE_FRAME_COST) -> dict:
    """A stream's final frame as the gateway relays it: the call's cost joins its usage."""
    return {**frame, "usageMetadata": {"costUsd": cost, **frame["usageMetadata"]}}


def text_frame(text: str, **part_extra) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text, **part_extra}]}, "index": 0}],
            "modelVersion": "gemini-3.1-flash-image-preview", "responseId": "r1"}


@dataclass
class FakeVendors:
    fakes: dict[str, FakeGemini]
    upstreams: dict[str, object]

    def __getitem__(self, name: str) -> FakeGemini:
        return self.fakes[name]


def make_vendors(specs: list[tuple[str, int, int]], *, timeout: float | None = None) -> Iterator[FakeVendors]:
    """Mount one fake per (name, priority, weight) and route the native models to them only."""
    from studio.gateway import snapshot
    from studio.models import Upstream

    Upstream.objects.filter(name="Sandbox").update(enabled=False)
    fakes, rows = {}, {}
    for name, priority, weight in specs:
        base = f"http://{name}.test"
        fakes[name] = FakeGemini()
        http.mount(base, StreamingASGITransport(fakes[name]))
        row = Upstream(name=name, protocol="gemini", base_url=base, priority=priority, weight=weight, timeout=timeout,
                       model_map={"delta-3.1-flash-image": "gemini-3.1-flash-image-preview",
                                  "delta-3-pro-image": "gemini-3-pro-image-preview",
                                  "delta-3.1-flash-lite-image": "gemini-2.5-flash-image"})
        row.credential = f"AIza-{name}-credential"
        row.save()
        rows[name] = row
    snapshot.invalidate()
    try:
        yield FakeVendors(fakes, rows)
    finally:
        for name in fakes:
            http.unmount(f"http://{name}.test")


@pytest.fixture
def fake_gemini(catalog):
    """One Gemini-protocol upstream (the only one serving the native models)."""
    yield from make_vendors([("fake-gemini", 10, 1)])


@pytest.fixture
def two_geminis(catalog):
    """Two Gemini-protocol upstreams: ``primary`` (priority 10) before ``backup`` (priority 5)."""
    yield from make_vendors([("primary", 10, 1), ("backup", 5, 1)])
