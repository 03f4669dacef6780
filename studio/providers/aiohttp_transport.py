"""aiohttp underneath httpx's API, reading each answer as it arrives.

``httpx-aiohttp``'s transport reads bodies with ``iter_chunked(16 KiB)``: aiohttp copies each
16 KiB slice out of what it has received, and a 15 MB Gemini frame crosses every layer above
(the deadline, the frame reader, the relay) about 960 times. This transport is the library's,
except that it hands over what aiohttp has received, as it received it (``iter_any``), as a
byte relay does.

``send`` is the vendor calls' own way in: a plain call (a bytes body, plain headers) goes to
aiohttp as it is, without first becoming an ``httpx.Request`` whose headers aiohttp would then
turn back into its own (building, normalising and converting them cost about a tenth of a chat
call's CPU). The answer is the same ``httpx.Response``, its errors the same httpx errors.

Its connections use ``ArrivingHandler``, aiohttp's own protocol, which skips the empty parser
feed aiohttp 3.14 makes after every HTTP chunk a reader takes, and keeps one read timer per
silence instead of making one per piece received (see the class).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import httpx
from aiohttp import ClientSession, ClientTimeout
from aiohttp.client_proto import ResponseHandler
from httpx_aiohttp import transport as library

from studio.providers.bodies import WholeBodyStream

HTTP_11 = b"HTTP/1.1"


class _MapErrors:
    """The library's ``map_aiohttp_exceptions`` (aiohttp's errors as httpx's), as a class: it
    is entered for every call and every piece of a stream, where a generator-based context
    manager costs several times as much."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or not isinstance(exc, Exception):
            return
        mapped: type[Exception] | None = None
        for from_exc, to_exc in library.AIOHTTP_EXC_MAP.items():
            if isinstance(exc, from_exc) and (mapped is None or issubclass(to_exc, mapped)):
                mapped = to_exc
        if mapped is not None:
            raise mapped(str(exc)) from exc


map_errors = _MapErrors()


class ArrivingStream(library.AiohttpResponseStream, WholeBodyStream):
    """An answer's body in the pieces aiohttp received it (no re-slicing, no copy), or whole."""

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _Arriving(self._aiohttp_response.content.iter_any())

    async def read_pieces(self) -> list[bytes]:
        """The pieces as aiohttp received them, none copied. (aiohttp's own ``read`` joins what it
        holds at each wake-up and then joins those joins: under load, when several pieces wait
        for every wake-up, a 1.5 MB image answer was copied twice before its reader had it.)"""
        content = self._aiohttp_response.content
        pieces = []
        with map_errors:
            while True:
                piece, chunk_end = await content.readchunk()
                if piece:
                    pieces.append(piece)
                elif not chunk_end:  # (b"", False) is the end; (b"", True) only an HTTP chunk's
                    return pieces

    async def aclose(self) -> None:
        """The library's, its errors mapped by ``map_errors`` (no generator-based context manager)."""
        with map_errors:
            await self._aiohttp_response.__aexit__(None, None, None)


class _Arriving:
    """The pieces, aiohttp's errors mapped to httpx's. A plain iterator, not an async generator:
    one a reader leaves unfinished (a stream read up to its end marker) would be closed by a
    task of its own, scheduled through the event loop's wake-up pipe, when it is collected."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: AsyncIterator[bytes]) -> None:
        self.pieces = pieces

    def __aiter__(self) -> _Arriving:
        return self

    async def __anext__(self) -> bytes:
        with map_errors:
            return await self.pieces.__anext__()


@functools.lru_cache(maxsize=64)
def client_timeout(connect: float | None, read: float | None, pool: float | None) -> ClientTimeout:
    """aiohttp's spelling of an httpx timeout, as the library maps it (built once per value)."""
    return ClientTimeout(sock_connect=connect, sock_read=read, connect=pool)


class ArrivingHandler(ResponseHandler):
    """aiohttp's protocol for an upstream connection, except that a request to resume reading
    when reading is not paused does nothing.

    From aiohttp 3.14 on, the stream reader makes that request after every HTTP chunk it hands
    over, paused or not, and each one feeds the parser an empty piece (for a decompression it
    had paused to go on) and resumes the transport: about 5,000 instructions for every event of
    a streamed answer, a vendor sending each event as a chunk of its own. Reading is paused,
    and the parser holds input back, only through ``pause_reading``, which sets
    ``_reading_paused`` until the next resume; without it there is nothing to resume. aiohttp up
    to 3.13 made the same check before asking. (tests/providers/test_aiohttp_transport.py reads a
    body big enough to pause and resume reading through it.)"""

    def resume_reading(self, resume_parser: bool = True) -> None:
        if self._reading_paused:
            super().resume_reading(resume_parser)

    # aiohttp's read timeout (``sock_read``: the longest silence between two reads) cancels its
    # timer and makes a new one for every piece that arrives, about 1.8 µs each on uvloop. Here
    # a piece only moves the deadline; the timer, made once, looks at the deadline when it goes
    # off and waits out the rest when a piece came meanwhile. Dropping it (the answer's end, a
    # pause) is aiohttp's own ``_drop_timeout``.
    _read_deadline = 0.0

    def _reschedule_timeout(self) -> None:
        timeout = self._read_timeout
        if not timeout:
            self._drop_timeout()
            return
        loop = self._loop
        self._read_deadline = deadline = loop.time() + timeout
        if self._read_timeout_handle is None:
            self._read_timeout_handle = loop.call_at(deadline, self._on_read_deadline)

    def _on_read_deadline(self) -> None:
        loop = self._loop
        if loop.time() < self._read_deadline:  # a piece came after it was set: wait out the rest
            self._read_timeout_handle = loop.call_at(self._read_deadline, self._on_read_deadline)
            return
        self._read_timeout_handle = None
        self._on_read_timeout()


class AiohttpTransport(library.AiohttpTransport):
    def get_client(self) -> ClientSession:
        """The library's session, its connections made with ``ArrivingHandler``."""
        session = super().get_client()
        connector = session.connector
        if connector is not None:
            connector._factory = functools.partial(ArrivingHandler, loop=connector._loop)
        return session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, library.AiohttpResponseStream)
        response.stream = ArrivingStream(stream._aiohttp_response)
        return response

    async def send(self, method: str, url: str, *, content: bytes | None, headers: dict[str, str],
                   timeout: httpx.Timeout) -> httpx.Response:
        """Send a plain call; the answer with its body not yet read (read or close it)."""
        if not isinstance(self.client, ClientSession):
            self.client = self.get_client()
        if self.proxy is not None:  # the library's path knows proxies
            return await self.handle_async_request(httpx.Request(
                method, url, content=content, headers=headers, extensions={"timeout": timeout.as_dict()}))
        with map_errors:
            response = await self.client.request(
                method, url, headers=headers, data=content or None, allow_redirects=False,
                auto_decompress=False, compress=False,
                timeout=client_timeout(timeout.connect, timeout.read, timeout.pool),
            ).__aenter__()
        extensions = {"http_version": HTTP_11}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx.Response(status_code=response.status, headers=answer_headers(response.raw_headers),
                              stream=ArrivingStream(response), extensions=extensions)


def answer_headers(raw: tuple[tuple[bytes, bytes], ...]) -> httpx.Headers:
    """``httpx.Headers(raw)`` for the raw header lines aiohttp received: the same name, lower-cased
    name and value triples, without normalising each byte string again. When every line is ASCII
    the headers' encoding is set to ``ascii`` up front, which is what httpx would work out on the
    first look-up by trying to decode each line (any other line leaves it to httpx). httpx is
    bounded to 0.28 in pyproject.toml; tests/providers/test_aiohttp_transport.py compares the
    result with httpx's own."""
    headers = httpx.Headers()
    found = headers._list = [(name, name.lower(), value) for name, value in raw]
    if all(name.isascii() and value.isascii() for name, _, value in found):
        headers._encoding = "ascii"
    return headers
