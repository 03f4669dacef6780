"""Reading a buffered answer's body in one piece.

httpx reads a body through its stream's chunks, each crossing the content decoder, the chunker,
the overall deadline (a timer armed and cancelled per chunk) and the transport's iterator, and
then once more to learn that the body has ended. A vendor's buffered answer is read whole in
one step where the stream can: aiohttp reads it to its end at once, under one deadline.
"""

from __future__ import annotations

import abc

import httpx


class WholeBodyStream(httpx.AsyncByteStream, abc.ABC):
    """A body stream that can also be read to its end in one step."""

    @abc.abstractmethod
    async def read_whole(self) -> bytes:
        """The rest of the body, as it was sent (not decoded)."""


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


async def close_answer(response: httpx.Response) -> None:
    """``response.aclose()``. An answer made by a transport's ``send`` carries no request, so the
    request context httpx's ``aclose`` enters (a generator-based context manager that names the
    request in an httpx error) has nothing to add: its stream is closed directly."""
    stream = response.stream
    if response._request is not None or not isinstance(stream, httpx.AsyncByteStream):
        await response.aclose()
    elif not response.is_closed:
        response.is_closed = True
        await stream.aclose()
