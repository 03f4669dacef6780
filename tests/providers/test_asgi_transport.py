"""The in-process transport hands a response over as the app sends it, passes the request on
whole, and turns an app's crash into a broken connection."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from studio.providers.asgi_transport import HIGH_WATER, StreamingASGITransport


async def test_body_pieces_arrive_before_the_app_finishes():
    reader_saw_first = asyncio.Event()

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await reader_saw_first.wait()  # released only by a reader that got the first piece
        await send({"type": "http.response.body", "body": b"second"})

    pieces = []
    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://app.test") as client, \
            client.stream("GET", "/") as response:
        async def read():
            async for piece in response.aiter_raw():
                pieces.append(piece)
                reader_saw_first.set()
        await asyncio.wait_for(read(), 10)
    assert pieces == [b"first", b"second"]


async def test_an_app_ahead_of_its_reader_waits_by_bytes_not_by_messages():
    piece = b"x" * (HIGH_WATER // 4 + 1)  # four of these are more than may wait unread
    sent = 0

    async def app(scope, receive, send):
        nonlocal sent
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(20):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            sent += 1
        await send({"type": "http.response.body", "body": b""})

    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://app.test") as client, \
            client.stream("GET", "/") as response:
        await asyncio.sleep(0.05)  # nobody reads: the app runs as far as it may
        assert sent == 3
        body = b"".join([chunk async for chunk in response.aiter_raw()])
    assert sent == 20 and body == piece * 20


async def test_the_app_sees_the_request_as_sent():
    seen = {}

    async def app(scope, receive, send):
        message = await receive()
        seen.update(method=scope["method"], path=scope["path"], query=scope["query_string"], body=message["body"],
                    headers=dict(scope["headers"]), server=scope["server"])
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async with httpx.AsyncClient(transport=StreamingASGITransport(app)) as client:
        response = await client.post("https://vendor.test/v1/x?a=1", content=b"payload", headers={"X-Key": "k"})
    assert (response.status_code, response.content) == (201, b"ok")
    assert seen["method"] == "POST" and seen["path"] == "/v1/x" and seen["query"] == b"a=1"
    assert seen["body"] == b"payload" and seen["headers"][b"x-key"] == b"k" and seen["server"] == ("vendor.test", 443)


async def test_a_crash_before_answering_is_a_protocol_error():
    async def app(scope, receive, send):
        raise ValueError("vendor bug")

    async with httpx.AsyncClient(transport=StreamingASGITransport(app)) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="vendor bug"):
            await client.get("http://vendor.test/")


async def test_a_crash_mid_body_breaks_the_stream():
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise ValueError("vendor died")

    async with httpx.AsyncClient(transport=StreamingASGITransport(app)) as client, \
            client.stream("GET", "http://vendor.test/") as response:
        with pytest.raises(httpx.RemoteProtocolError, match="vendor died"):
            await response.aread()
