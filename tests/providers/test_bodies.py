"""Buffered answers are read whole in one step where the stream can, decoded as httpx decodes,
and still bounded by the overall deadline; streamed ones arrive in the pieces they came in."""

from __future__ import annotations

import asyncio
import contextlib
import gzip

import httpx
import pytest

from studio.core.errors import UpstreamTimeout
from studio.providers.aiohttp_transport import AiohttpTransport
from studio.providers.bodies import WholeBodyStream, arriving, close_answer, read_answer, read_pieces
from studio.providers.deadlines import DeadlineStream
from tests.providers.test_aiohttp_transport import vendor

PATH = "/v1/chat/completions"


class Whole(WholeBodyStream):
    """A body that can only be read whole (iterating it fails the test)."""

    def __init__(self, body: bytes) -> None:
        self.body, self.reads = body, 0

    def __aiter__(self):
        raise AssertionError("a whole body was read chunk by chunk")

    async def read_pieces(self) -> list[bytes]:
        self.reads += 1
        return [self.body]


async def test_a_whole_body_is_read_in_one_step_and_reads_like_any_answer():
    stream = Whole(b'{"id":"chat-1","choices":[]}')
    response = await read_answer(httpx.Response(200, headers={"content-type": "application/json"}, stream=stream))
    assert stream.reads == 1
    assert response.content == b'{"id":"chat-1","choices":[]}' and response.json() == {"id": "chat-1", "choices": []}
    assert response.text.startswith('{"id"') and response.status_code == 200


async def test_an_encoded_whole_body_is_decoded():
    stream = Whole(gzip.compress(b'{"ok":true}'))
    response = await read_answer(httpx.Response(200, headers={"content-encoding": "gzip"}, stream=stream))
    assert response.json() == {"ok": True}


async def test_an_encoded_body_asked_for_in_pieces_comes_decoded():
    stream = Whole(gzip.compress(b'{"ok":true}'))
    assert await read_pieces(httpx.Response(200, headers={"content-encoding": "gzip"}, stream=stream)) == [b'{"ok":true}']


async def test_any_other_stream_is_read_as_httpx_reads_it():
    response = await read_answer(httpx.Response(200, stream=httpx.ByteStream(b"plain")))
    assert response.content == b"plain"


def dripping(drip: float, pieces: int):
    """A vendor's answer of ``pieces`` chunks of ``x``, ``drip`` seconds apart."""
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            for _ in range(pieces):
                writer.write(b"1\r\nx\r\n")
                await writer.drain()
                await asyncio.sleep(drip)
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    return answer


async def bounded(url: str, total: float) -> httpx.Response:
    transport = AiohttpTransport()
    sent = await transport.send("POST", url, content=b"{}", headers={}, timeout=httpx.Timeout(5.0))
    loop = asyncio.get_running_loop()
    sent.stream = DeadlineStream(sent.stream, loop.time() + total,
                                 lambda: UpstreamTimeout("too slow", details={"timeout": "total"}))
    try:
        return await read_answer(sent)
    finally:
        await sent.aclose()
        await transport.aclose()


async def test_a_body_sent_in_pieces_is_read_whole_from_the_network():
    async with vendor(dripping(drip=0.01, pieces=5)) as base:
        response = await bounded(base + PATH, total=5)
    assert response.content == b"xxxxx" and response.headers["content-type"] == "text/plain"


async def test_a_whole_read_past_the_overall_deadline_is_a_timeout():
    async with vendor(dripping(drip=0.2, pieces=20)) as base:
        with pytest.raises(UpstreamTimeout) as caught:
            await bounded(base + PATH, total=0.5)
    assert caught.value.details["timeout"] == "total"


class Pieces(httpx.AsyncByteStream):
    """A streamed body in the pieces it arrives in; counts the times it was iterated."""

    def __init__(self, *pieces: bytes) -> None:
        self.pieces, self.iterated, self.closed = list(pieces), 0, False

    async def __aiter__(self):
        self.iterated += 1
        for piece in self.pieces:
            yield piece

    async def aclose(self) -> None:
        self.closed = True


async def test_a_streamed_body_arrives_in_its_pieces_once_and_is_closed_by_the_caller():
    stream = Pieces(b"data: 1\n\n", b"data: 2\n\n")
    response = httpx.Response(200, stream=stream)
    assert [piece async for piece in arriving(response)] == [b"data: 1\n\n", b"data: 2\n\n"]
    assert stream.iterated == 1 and not stream.closed  # closed by the caller, as after aiter_raw
    with pytest.raises(httpx.StreamConsumed):
        arriving(response)
    await close_answer(response)
    assert stream.closed and response.is_closed
    unread = httpx.Response(200, stream=Pieces(b"x"))
    await close_answer(unread)
    with pytest.raises(httpx.StreamClosed):
        arriving(unread)


async def test_a_streamed_body_with_its_request_is_read_as_httpx_reads_it():
    request = httpx.Request("POST", "http://vendor.test" + PATH)
    response = httpx.Response(200, stream=Pieces(b"a", b"", b"b"), request=request)
    assert [piece async for piece in arriving(response)] == [b"a", b"b"]  # httpx's aiter_raw skips empty pieces
    assert response.is_closed  # aiter_raw closes the answer at its end


async def test_a_stream_read_from_the_network_arrives_as_it_was_sent():
    async with vendor(dripping(drip=0.01, pieces=3)) as base:
        transport = AiohttpTransport()
        try:
            response = await transport.send("POST", base + PATH, content=b"{}", headers={},
                                            timeout=httpx.Timeout(5))
            try:
                assert b"".join([piece async for piece in arriving(response)]) == b"xxx"
            finally:
                await close_answer(response)
        finally:
            await transport.aclose()


def in_pieces(*pieces: bytes):
    """A vendor's answer with a length, its body written in ``pieces`` a moment apart."""
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                     % sum(map(len, pieces)))
        with contextlib.suppress(ConnectionError):
            for piece in pieces:
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(0.02)

    return answer


async def test_a_body_held_in_several_pieces_is_handed_over_in_them_and_joined_once():
    """The pieces aiohttp holds when the reader comes are handed over as they are (aiohttp's own
    ``read`` would join them, and the reader joins its buffer once more), whole or in pieces."""
    pieces = (b'{"data":"' + b"A" * 70_000, b"B" * 70_000, b"C" * 70_000 + b'"}')
    transport = AiohttpTransport()
    try:
        async with vendor(in_pieces(*pieces)) as base:
            for whole in (False, True):
                sent = await transport.send("POST", base + PATH, content=b"{}", headers={},
                                            timeout=httpx.Timeout(5.0))
                await asyncio.sleep(0.3)  # every piece has arrived and waits in aiohttp's buffer
                try:
                    if whole:
                        assert (await read_answer(sent)).content == b"".join(pieces)
                    else:
                        got = await read_pieces(sent)
                        assert len(got) > 1 and b"".join(got) == b"".join(pieces)
                finally:
                    await close_answer(sent)
    finally:
        await transport.aclose()
