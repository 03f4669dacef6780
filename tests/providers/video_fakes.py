"""A tiny recording ASGI vendor: answers each (method, path) with a canned JSON reply."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import orjson

from studio.core.entries import UpstreamEntry
from studio.providers import http


class FakeVendor:
    def __init__(self, replies: dict[tuple[str, str], tuple[int, object]]) -> None:
        self.replies = replies
        self.requests: list[dict] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append({"method": scope["method"], "path": scope["path"], "headers": headers,
                              "json": orjson.loads(body) if body else None})
        status, reply = self.replies.get((scope["method"], scope["path"]), (404, {"message": "no route"}))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        body = reply if isinstance(reply, bytes) else orjson.dumps(reply)  # bytes: a body that is not JSON
        await send({"type": "http.response.body", "body": body})


def mount_vendors(base: str) -> Iterator[Callable[[dict], FakeVendor]]:
    """Body of a fixture: mount a FakeVendor with given replies at ``base``; unmount afterwards."""
    def mount(replies: dict) -> FakeVendor:
        fake = FakeVendor(replies)
        http.mount(base, httpx.ASGITransport(app=fake))
        return fake

    yield mount
    http.unmount(base)


def upstream(protocol: str, base: str, credential: str, id: int = 1) -> UpstreamEntry:
    return UpstreamEntry(id=id, name=protocol, protocol=protocol, base_url=base, credential=credential,
                         priority=0, weight=1, timeout=None, model_map={})
