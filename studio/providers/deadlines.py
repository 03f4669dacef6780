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
from studio.providers.contracts import Capability

FAMILY_OF = {Capability.TEXT: "text", Capability.IMAGES: "images", Capability.NATIVE_IMAGE: "images",
             Capability.VIDEO_TASKS: "video", Capability.TOKEN_COUNT: "text", Capability.EMBEDDINGS: "text"}


@dataclass(frozen=True, slots=True)
class Deadlines:
    connect: float
    first_byte: float
    total: float


def deadlines_for(capability: Capability) -> Deadlines:
    return Deadlines(**settings.STUDIO_UPSTREAM_DEADLINES[FAMILY_OF[capability]])


class DeadlineStream(httpx.AsyncByteStream):
    """An answer's body whose every read ends by ``deadline`` (the event loop's clock)."""

    def __init__(self, inner: httpx.AsyncByteStream, deadline: float, expired: Callable[[], UpstreamTimeout]) -> None:
        self.inner = inner
        self.deadline = deadline
        self.expired = expired

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self.inner)
        loop = asyncio.get_running_loop()
        while True:
            if loop.time() >= self.deadline:
                raise self.expired()
            try:
                async with asyncio.timeout_at(self.deadline):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise self.expired() from None
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()
