"""How long an upstream call may take, per route family: connect, first byte, and in all.

``STUDIO_UPSTREAM_DEADLINES`` holds the seconds for each family (``text``, ``images``, ``video``);
the registry hands each provider the deadlines of the capability it is built for. A body read
past the overall deadline stops at the next chunk: the read is bounded, never the caller's
code between chunks (a stream's consumer may be sending to its own client meanwhile).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx
from django.conf import settings

from studio.core.errors import UpstreamTimeout
from studio.providers.bodies import WholeBodyStream
from studio.providers.contracts import Capability

FAMILY_OF = {Capability.TEXT: "text", Capability.IMAGES: "images", Capability.NATIVE_IMAGE: "images",
             Capability.VIDEO_TASKS: "video", Capability.TOKEN_COUNT: "text", Capability.EMBEDDINGS: "text"}


@dataclass(frozen=True, slots=True)
class Deadlines:
    connect: float
    first_byte: float
    total: float


_made: dict[Capability, tuple[object, Deadlines]] = {}


def deadlines_for(capability: Capability) -> Deadlines:
    """The family's deadlines, made once per setting (every upstream call asks for them)."""
    table = settings.STUDIO_UPSTREAM_DEADLINES
    made = _made.get(capability)
    if made is None or made[0] is not table:
        made = _made[capability] = (table, Deadlines(**table[FAMILY_OF[capability]]))
    return made[1]


class DeadlineStream(WholeBodyStream):
    """An answer's body whose every read ends by ``deadline`` (the event loop's clock)."""

    def __init__(self, inner: httpx.AsyncByteStream, deadline: float, expired: Callable[[], UpstreamTimeout]) -> None:
        self.inner = inner
        self.deadline = deadline
        self.expired = expired

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _Bounded(aiter(self.inner), self.deadline, self.expired)

    async def read_whole(self) -> bytes:
        """The whole body by the deadline: in one read where the inner stream can."""
        if asyncio.get_running_loop().time() >= self.deadline:
            raise self.expired()
        try:
            async with asyncio.timeout_at(self.deadline):
                if isinstance(self.inner, WholeBodyStream):
                    return await self.inner.read_whole()
                return b"".join([chunk async for chunk in self.inner])
        except TimeoutError:
            raise self.expired() from None

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Bounded:
    """The reads of a ``DeadlineStream``. A plain iterator, not an async generator: one a reader
    leaves unfinished would be closed, once collected, by a task scheduled through the event
    loop's wake-up pipe."""

    __slots__ = ("chunks", "deadline", "expired", "loop")

    def __init__(self, chunks: AsyncIterator[bytes], deadline: float, expired: Callable[[], UpstreamTimeout]) -> None:
        self.chunks, self.deadline, self.expired = chunks, deadline, expired
        self.loop = asyncio.get_running_loop()

    def __aiter__(self) -> _Bounded:
        return self

    async def __anext__(self) -> bytes:
        if self.loop.time() >= self.deadline:
            raise self.expired()
        try:
            async with asyncio.timeout_at(self.deadline):
                return await self.chunks.__anext__()
        except TimeoutError:
            raise self.expired() from None
