"""Closing a stream that is left before its end, and hearing how a streamed answer's sending went."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextvars import ContextVar
from types import AsyncGeneratorType
from typing import Any, Protocol

from studio.core.errors import ClientClosedRequest

CLIENT_CLOSED = ClientClosedRequest.status  # what a stream the client left before its end is reported with


class Cut(Exception):
    """The answer can no longer be completed (it failed inside a part already sent): the server
    ends the connection without the stream's end, so the client knows it was cut short."""


async def close(stream: AsyncIterator[Any]) -> None:
    """Close ``stream`` now if it is an async generator, so its ``finally`` (a cut stream's charge,
    its upstream's release) runs at once. Leaving an ``async for`` over it does not close it: that
    waits for the garbage collector. Closing one that has ended does nothing; other iterators have
    nothing to close."""
    if type(stream) is AsyncGeneratorType:  # an exact type: the ABC's check is a call through ``abc``
        await stream.aclose()


class Delivered(Protocol):
    def __call__(self, status: int, first_part: float | None) -> None:
        """The answer's stream has ended: ``status`` as sent, ``CLIENT_CLOSED`` when the client left
        before its end, 500 when it failed; ``first_part``: ``time.perf_counter()`` when its first
        part went out (None: none did)."""


# Who hears how the current request's streamed answer went. Set by the /v1 middleware that
# reports the request (in the request's own task and context) and called by the server's handler
# once the stream has ended and been closed: the parts go out without another generator to watch
# them on their way.
delivered: ContextVar[Delivered | None] = ContextVar("delivered", default=None)
