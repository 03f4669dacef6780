"""aiohttp underneath httpx's API, reading each answer as it arrives.

``httpx-aiohttp``'s transport reads bodies with ``iter_chunked(16 KiB)``: aiohttp copies each
16 KiB slice out of what it has received, and a 15 MB Gemini frame crosses every layer above
(the deadline, the frame reader, the relay) about 960 times. This transport hands over what
aiohttp has received, as it received it (``iter_any``), as a byte relay does, and builds the
read timeout of a call once per distinct timeout rather than per request. Connections, TLS,
proxies and the mapping of aiohttp's errors to httpx's are the library's.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import httpx
from aiohttp import BasicAuth, ClientResponse, ClientSession, ClientTimeout
from httpx_aiohttp import transport as library


class ArrivingStream(library.AiohttpResponseStream):
    """An answer's body in the pieces aiohttp received it (no re-slicing, no copy)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with library.map_aiohttp_exceptions():
            async for chunk in self._aiohttp_response.content.iter_any():
                yield chunk


@functools.lru_cache(maxsize=64)
def client_timeout(connect: float | None, read: float | None, pool: float | None) -> ClientTimeout:
    return ClientTimeout(sock_connect=connect, sock_read=read, connect=pool)


class AiohttpTransport(library.AiohttpTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(self.client, ClientSession):
            self.client = self.get_client()
        timeout = request.extensions.get("timeout", {})
        proxy = self.proxy
        with library.map_aiohttp_exceptions():
            data: bytes | httpx.AsyncByteStream | None
            try:
                data = request.content or None
            except httpx.RequestNotRead:
                data = request.stream  # type: ignore[assignment]
                request.headers.pop("transfer-encoding", None)  # aiohttp frames the body itself
            response: ClientResponse = await self.client.request(
                method=request.method, url=str(request.url), headers=request.headers, data=data,
                allow_redirects=False, auto_decompress=False, compress=False,
                timeout=client_timeout(timeout.get("connect"), timeout.get("read"), timeout.get("pool")),
                server_hostname=request.extensions.get("sni_hostname"),
                proxy=str(proxy.url) if proxy else None,
                proxy_auth=BasicAuth(proxy.auth[0], proxy.auth[1]) if proxy and proxy.auth else None,
                proxy_headers=proxy.headers if proxy else None,
            ).__aenter__()
        extensions = {"http_version": b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx.Response(status_code=response.status, headers=response.raw_headers,
                              stream=ArrivingStream(response), request=request, extensions=extensions)

