"""aiohttp underneath httpx's API, reading each answer as it arrives.

``httpx-aiohttp``'s transport reads bodies with ``iter_chunked(16 KiB)``: aiohttp copies each
16 KiB slice out of what it has received, and a 15 MB Gemini frame crosses every layer above
(the deadline, the frame reader, the relay) about 960 times. This transport is the library's,
except that it hands over what aiohttp has received, as it received it (``iter_any``), as a
byte relay does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
from httpx_aiohttp import transport as library


class ArrivingStream(library.AiohttpResponseStream):
    """An answer's body in the pieces aiohttp received it (no re-slicing, no copy)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with library.map_aiohttp_exceptions():
            async for chunk in self._aiohttp_response.content.iter_any():
                yield chunk


class AiohttpTransport(library.AiohttpTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, library.AiohttpResponseStream)
        response.stream = ArrivingStream(stream._aiohttp_response)
        return response
