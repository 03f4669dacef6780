"""Reading an answer's body: a buffered one in one piece, a streamed one as it arrives.

httpx reads a body through its stream's chunks, each crossing the content decoder, the chunker,
the overall deadline (a timer armed and cancelled per chunk) and the transport's iterator, and
then once more to learn that the body has ended. A vendor's buffered answer is read whole in
one step where the stream can: aiohttp reads it to its end at once, under one deadline. A
streamed answer is read from the transport's own iterator (``arriving``).
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator

import httpx


class WholeBodyStream(httpx.AsyncByteStream, abc.ABC):
    """A body stream that can also be read to its end in one step."""

    @abc.abstractmethod
    async def read_pieces(self) -> list[bytes]:
        """The rest of the body, as it was sent (not decoded), in the pieces it arrived in: not
        joined yet, so a caller that wants it in a buffer of its own copies it only once."""

    async def read_whole(self) -> bytes:
        """The rest of the body in one piece (a body that came in one piece is not copied)."""
        pieces = await self.read_pieces()
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)


async def read_answer(response: httpx.Response) -> httpx.Response:
    """``response`` with its body read: in one step where the stream can, else as httpx reads
    it. The caller still closes ``response``."""
    stream = response.stream
    if not isinstance(stream, WholeBodyStream):
        await response.aread()
        return response
    body = await stream.read_whole()
    if "content-encoding" in response.headers:  # built with its body, it is decoded as httpx decodes
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              extensions=response.extensions)
    # What ``aread`` leaves behind: the body, held where ``content``, ``text`` and ``json`` read it
    # (httpx is bounded to 0.28 in pyproject.toml; tests/providers/test_bodies.py checks it). A
    # new ``httpx.Response`` built around the body would cost more than the chunked read saves.
    response._content = body
    return response


async def read_pieces(response: httpx.Response) -> list[bytes]:
    """``response``'s body in the pieces it arrived in, for a caller that joins them into a buffer
    of its own (a body the stream cannot read in pieces, or an encoded one, comes decoded in one
    piece). The caller still closes ``response``."""
    stream = response.stream
    if isinstance(stream, WholeBodyStream) and "content-encoding" not in response.headers:
        return await stream.read_pieces()
    return [(await read_answer(response)).content]


async def close_answer(response: httpx.Response) -> None:
    """``response.aclose()``. An answer made by a transport's ``send`` carries no request, so the
    request context httpx's ``aclose`` enters (a generator-based context manager that names the
    request in an httpx error) has nothing to add: its stream is closed directly."""
    if not _sent_directly(response):
        await response.aclose()
    elif not response.is_closed:
        response.is_closed = True
        await response.stream.aclose()


def _sent_directly(response: httpx.Response) -> bool:
    """Whether ``response`` came from a transport's ``send`` (no request) with a byte stream of
    httpx's own kind: what httpx's reading and closing add around that stream has nothing to do."""
    return response._request is None and isinstance(response.stream, httpx.AsyncByteStream)


def arriving(response: httpx.Response) -> AsyncIterator[bytes]:
    """``response.aiter_raw()``: the body's pieces as the transport receives them. An answer made
    by a transport's ``send`` carries no request, so what httpx's generator adds around the
    transport's iterator (a request context that names the request in an httpx error, a chunker
    that passes each piece on as it is without a chunk size) has nothing to do: the pieces come
    from that iterator itself, and an empty one is passed on too. The caller closes ``response``
    (``close_answer``), as it does after ``aiter_raw``."""
    if not _sent_directly(response):
        return response.aiter_raw()
    if response.is_stream_consumed:
        raise httpx.StreamConsumed()
    if response.is_closed:
        raise httpx.StreamClosed()
    response.is_stream_consumed = True
    return aiter(response.stream)
