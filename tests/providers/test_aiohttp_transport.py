"""The network transport: answers come in the pieces they arrive in (a big write is not cut into
16 KiB slices), bodies and headers are whole, and aiohttp's failures are httpx's errors."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from studio.providers.aiohttp_transport import AiohttpTransport

BIG = bytes(range(256)) * 1024  # 256 KiB in one write


@contextlib.asynccontextmanager
async def vendor(answer):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await answer(writer)
        with contextlib.suppress(ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()


async def chunked(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-vendor: yes\r\n"
                 b"transfer-encoding: chunked\r\n\r\n")
    writer.write(b"%x\r\n" % len(BIG) + BIG + b"\r\n")
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.write(b"5\r\nhello\r\n0\r\n\r\n")
    await writer.drain()


async def test_answers_arrive_whole_and_not_in_16_kib_slices():
    transport = AiohttpTransport()
    try:
        async with vendor(chunked) as base:
            request = httpx.Request("GET", base + "/stream", extensions={"timeout": {"read": 5, "connect": 5}})
            response = await transport.handle_async_request(request)
            pieces = [piece async for piece in response.stream]
            await response.aclose()
    finally:
        await transport.aclose()
    assert response.status_code == 200 and response.headers["x-vendor"] == "yes"
    assert b"".join(pieces) == BIG + b"hello"
    assert max(len(p) for p in pieces) > 16 * 1024  # what arrived together is handed over together


async def test_a_silent_vendor_is_a_read_timeout():
    async def silent(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    transport = AiohttpTransport()
    try:
        async with vendor(silent) as base:
            request = httpx.Request("POST", base + "/v1/chat/completions", content=b"{}",
                                    extensions={"timeout": {"read": 0.2, "connect": 5}})
            with pytest.raises(httpx.TimeoutException):
                await transport.handle_async_request(request)
    finally:
        await transport.aclose()

