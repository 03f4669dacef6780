"""A client that leaves a /v1 stream part-way, through the whole ASGI application."""

from __future__ import annotations

import asyncio

import orjson


async def post_and_leave(path: str, account, body: dict, leave_when: bytes, headers: dict | None = None, *,
                         stall: bool = False, query: str = "") -> bytes:
    """POST through the ASGI application and disconnect once ``leave_when`` has been received
    (``stall``: and read nothing more, so the server is stuck sending when the client goes)."""
    from studio.asgi import application

    raw_body, gone, received = orjson.dumps(body), asyncio.Event(), []
    incoming = [{"type": "http.request", "body": raw_body, "more_body": False}]

    async def receive() -> dict:
        if incoming:  # the request, then the disconnect once the client has left
            return incoming.pop()
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.body":
            received.append(message.get("body", b""))
            if leave_when in b"".join(received):
                gone.set()
                if stall:
                    await asyncio.Event().wait()

    sent_headers = {"content-type": "application/json", "authorization": f"Bearer {account.secret}",
                    "content-length": str(len(raw_body)), **(headers or {})}
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(k.encode(), v.encode()) for k, v in sent_headers.items()],
             "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}
    await asyncio.wait_for(application(scope, receive, send), timeout=30)
    assert gone.is_set()
    return b"".join(received)
