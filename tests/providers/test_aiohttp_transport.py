"""The network transport: answers come in the pieces they arrive in (a big write is not cut into
16 KiB slices), bodies and headers are whole, and aiohttp's failures are httpx's errors."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from studio.providers.aiohttp_transport import AiohttpTransport, ArrivingHandler, answer_headers
from studio.providers.bodies import close_answer

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


async def silent(writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(5)


async def through_httpx(transport: AiohttpTransport, url: str) -> httpx.Response:
    request = httpx.Request("POST", url, content=b"{}", extensions={"timeout": {"read": 0.2, "connect": 5}})
    return await transport.handle_async_request(request)


async def plain(transport: AiohttpTransport, url: str) -> httpx.Response:
    return await transport.send("POST", url, content=b"{}", headers={}, timeout=httpx.Timeout(0.2, connect=5))


@pytest.mark.parametrize("call", [through_httpx, plain])
async def test_a_silent_vendor_is_a_read_timeout(call):
    transport = AiohttpTransport()
    try:
        async with vendor(silent) as base:
            with pytest.raises(httpx.TimeoutException):
                await call(transport, base + "/v1/chat/completions")
    finally:
        await transport.aclose()


async def test_a_plain_call_sends_its_headers_and_body_as_given():
    seen: dict[str, bytes] = {}

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        seen["head"], seen["body"] = head, await reader.readexactly(length)
        writer.write(b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    transport = AiohttpTransport()
    try:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
        response = await transport.send("POST", url, content=b'{"model":"m"}',
                                        headers={"authorization": "Bearer vendor-key", "x-request-id": "r-1"},
                                        timeout=httpx.Timeout(5.0))
        await response.aread()
        await response.aclose()
    finally:
        await transport.aclose()
        server.close()
    assert response.status_code == 201 and response.reason_phrase == "Created"
    assert response.json() == {"ok": True} and response.headers["content-type"] == "application/json"
    head = seen["head"].lower()
    assert head.startswith(b"post /v1/chat/completions http/1.1")
    assert b"authorization: bearer vendor-key" in head and b"x-request-id: r-1" in head
    assert seen["body"] == b'{"model":"m"}'


async def test_a_plain_call_to_a_closed_port_is_a_transport_error():
    async with vendor(silent) as base:
        pass  # the server is gone: nothing listens there any more
    transport = AiohttpTransport()
    try:
        with pytest.raises(httpx.TransportError):
            await transport.send("GET", base + "/v1/models", content=None, headers={}, timeout=httpx.Timeout(2.0))
    finally:
        await transport.aclose()


@pytest.mark.parametrize("raw", [
    ((b"Content-Type", b"application/json"), (b"X-Vendor", b"a"), (b"x-vendor", b"b"), (b"Set-Cookie", b"k=v")),
    ((b"Content-Type", b"text/plain"), (b"X-Name", "café".encode())),  # UTF-8: httpx finds the encoding itself
    ((b"Content-Type", b"text/plain"), (b"X-Name", "café".encode("latin-1"))),  # neither ASCII nor UTF-8
    (),
])
def test_an_answer_s_headers_read_as_httpx_s_own(raw):
    ours, theirs = answer_headers(raw), httpx.Headers(raw)
    assert ours.raw == theirs.raw and ours.encoding == theirs.encoding
    assert ours.multi_items() == theirs.multi_items() and dict(ours) == dict(theirs)
    assert ("x-vendor" in ours) == ("x-vendor" in theirs) and ours.get_list("x-vendor") == theirs.get_list("x-vendor")


async def test_a_plain_call_s_answer_closes_once_and_frees_its_connection():
    calls = []

    async def answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        calls.append(1)
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"
        writer.write(head if len(calls) == 1 else head + b"{}")  # the first body never comes
        await writer.drain()
        with contextlib.suppress(ConnectionError):
            await reader.read()
        writer.close()

    server = await asyncio.start_server(answers, "127.0.0.1", 0)
    transport = AiohttpTransport(limits=httpx.Limits(max_connections=1))
    try:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/models"
        # One connection at most: the second call waits until the first answer is closed.
        first = await transport.send("GET", url, content=None, headers={}, timeout=httpx.Timeout(5.0))
        await close_answer(first)
        await close_answer(first)  # a second close does nothing
        assert first.is_closed
        second = await asyncio.wait_for(
            transport.send("GET", url, content=None, headers={}, timeout=httpx.Timeout(5.0)), 5)
        await second.aread()
        await close_answer(second)
    finally:
        await transport.aclose()
        server.close()
    assert second.json() == {} and len(calls) == 2


def events(count: int, size: int) -> list[bytes]:
    """``count`` SSE events of ``size`` bytes, each numbered, as a vendor streams them."""
    return [(b"data: %06d " % n).ljust(size - 2, b"x") + b"\n\n" for n in range(count)]


def streaming(pieces: list[bytes]):
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for piece in pieces:  # one HTTP chunk per event, as a vendor flushes each
            writer.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    return answer


@pytest.fixture
def protocol_calls(monkeypatch):
    """How often the connections (``ArrivingHandler``s) paused reading, were fed what arrived,
    and were fed an empty piece to resume parsing."""
    calls = {"paused": 0, "feeds": 0, "empty feeds": 0}
    pause, feed = ArrivingHandler.pause_reading, ArrivingHandler.data_received

    def counted_pause(self) -> None:
        calls["paused"] += 1
        pause(self)

    def counted_feed(self, data: bytes) -> None:
        calls["feeds"] += bool(data)
        calls["empty feeds"] += not data
        feed(self, data)

    monkeypatch.setattr(ArrivingHandler, "pause_reading", counted_pause)
    monkeypatch.setattr(ArrivingHandler, "data_received", counted_feed)
    return calls


@pytest.mark.parametrize("call", [through_httpx, plain])
async def test_a_stream_of_small_events_is_read_without_a_parser_feed_per_event(call, protocol_calls):
    sent = events(200, 120)
    transport = AiohttpTransport()
    try:
        async with vendor(streaming(sent)) as base:
            response = await call(transport, base + "/v1/responses")
            await asyncio.sleep(0.05)  # the whole stream has arrived before it is read
            pieces = [piece async for piece in response.stream]
            await close_answer(response)
    finally:
        await transport.aclose()
    assert b"".join(pieces) == b"".join(sent)
    assert len(pieces) < len(sent)  # what had arrived is handed over together
    assert protocol_calls["feeds"] > 0  # the connection is the transport's own protocol
    assert (protocol_calls["paused"], protocol_calls["empty feeds"]) == (0, 0)


async def test_a_stream_read_slowly_pauses_and_resumes_reading_and_arrives_whole(protocol_calls):
    """Flow control still works: more than the reader's buffer holds (in bytes, and in chunks)
    pauses reading, and each resume goes on where the parser stopped."""
    sent = events(3000, 100) + events(40, 64 * 1024)
    transport = AiohttpTransport()
    try:
        async with vendor(streaming(sent)) as base:
            response = await plain(transport, base + "/v1/responses")
            pieces = []
            async for piece in response.stream:
                pieces.append(piece)
                await asyncio.sleep(0.02)
            await close_answer(response)
    finally:
        await transport.aclose()
    assert b"".join(pieces) == b"".join(sent)
    assert protocol_calls["paused"] > 0 and protocol_calls["empty feeds"] > 0


def trickling(pieces: list[bytes], gap: float, then_silent: float = 0.0):
    """A vendor sending one HTTP chunk every ``gap`` seconds (then, with ``then_silent``, nothing
    for that long before its end)."""
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
            await writer.drain()
            await asyncio.sleep(gap)
        await asyncio.sleep(then_silent)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    return answer


@pytest.fixture
async def read_timers(monkeypatch):
    """The read timers the connections set on this event loop."""
    loop = asyncio.get_running_loop()
    made: list[float] = []
    call_at = loop.call_at

    def counted(when, callback, *args, **kwargs):
        if getattr(callback, "__func__", None) is ArrivingHandler._on_read_deadline:
            made.append(when)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counted)
    return made


async def test_a_stream_longer_than_its_read_timeout_arrives_whole_on_a_timer_per_silence(read_timers):
    """The read timeout bounds each silence, not the whole answer, and a piece that arrives
    moves the deadline without a new timer."""
    sent = events(12, 100)
    transport = AiohttpTransport()
    try:
        async with vendor(trickling(sent, gap=0.05)) as base:
            response = await through_httpx(transport, base + "/v1/responses")  # read timeout 0.2 s
            pieces = [piece async for piece in response.stream]
            await close_answer(response)
    finally:
        await transport.aclose()
    assert b"".join(pieces) == b"".join(sent)  # 0.6 s of answer, never 0.2 s without a piece
    assert 1 <= len(read_timers) < len(sent) // 2


async def test_a_vendor_silent_midway_for_longer_than_the_read_timeout_is_a_read_timeout():
    sent = events(3, 100)
    transport = AiohttpTransport()
    got: list[bytes] = []
    try:
        async with vendor(trickling(sent, gap=0.05, then_silent=2.0)) as base:
            response = await through_httpx(transport, base + "/v1/responses")  # read timeout 0.2 s
            started = asyncio.get_running_loop().time()
            with pytest.raises(httpx.ReadTimeout):
                async for piece in response.stream:
                    got.append(piece)
            waited = asyncio.get_running_loop().time() - started
            await close_answer(response)
    finally:
        await transport.aclose()
    assert b"".join(got) == b"".join(sent)  # what came before the silence was handed over
    assert waited < 1.5  # cut by the read timeout, not by the vendor's end
