"""The "raw floor": the least a Python relay can do, uvicorn in front and aiohttp behind.

It forwards the method, path, body and the auth/content headers to ``BENCH_UPSTREAM`` and streams
the answer back chunk by chunk: no auth check, no routing, no records. What the gateway costs
beyond this is the price of its features. ``/v1/models/{m}:…`` becomes Gemini's
``/v1beta/models/{m}:…``; every other path is sent as it is.

Run: ``BENCH_UPSTREAM=http://127.0.0.1:9100 uvicorn bench.raw_relay:app --port 9101``.
"""

from __future__ import annotations

import os
from typing import Any

import aiohttp

FORWARDED_HEADERS = (b"content-type", b"authorization", b"x-goog-api-key", b"x-api-key", b"anthropic-version",
                     b"accept")
_session: aiohttp.ClientSession | None = None


def upstream_path(path: str) -> str:
    if path.startswith("/v1/models/") and ":" in path:
        return "/v1beta" + path[3:]
    return path


async def read_body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def lifespan(receive: Any, send: Any) -> None:
    global _session
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            _session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=None),
                timeout=aiohttp.ClientTimeout(total=None, sock_read=300),
                auto_decompress=False,
            )
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if _session is not None:
                await _session.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    assert _session is not None, "the relay needs the ASGI lifespan (uvicorn runs it by default)"
    body = await read_body(receive)
    headers = {k.decode(): v.decode() for k, v in scope["headers"] if k in FORWARDED_HEADERS}
    url = os.environ.get("BENCH_UPSTREAM", "http://127.0.0.1:9100") + upstream_path(scope["path"])
    if scope["query_string"]:
        url += "?" + scope["query_string"].decode()
    async with _session.request(scope["method"], url, data=body, headers=headers) as upstream:
        await send({
            "type": "http.response.start",
            "status": upstream.status,
            "headers": [(b"content-type", upstream.headers.get("content-type", "application/json").encode())],
        })
        async for chunk in upstream.content.iter_any():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})
