"""The one upstream HTTP client per process and event loop.

Real vendors are reached over the transport chosen in settings (``STUDIO_UPSTREAM_TRANSPORT``:
httpx's own pool, or aiohttp underneath httpx's API, which costs far less CPU per request). The
sandbox vendor cloud is mounted at ``STUDIO_SANDBOX_BASE_URL`` as an in-process transport, so the
same provider code talks to it without a socket.
"""

from __future__ import annotations

import asyncio
import weakref

import httpx
from django.conf import settings

from .asgi_transport import StreamingASGITransport

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()
_extra_mounts: dict[str, httpx.AsyncBaseTransport] = {}


def default_timeout() -> httpx.Timeout:
    return httpx.Timeout(
        settings.STUDIO_UPSTREAM_TIMEOUT,
        connect=settings.STUDIO_UPSTREAM_CONNECT_TIMEOUT,
        pool=settings.STUDIO_UPSTREAM_CONNECT_TIMEOUT,
    )


def _network_transport() -> httpx.AsyncBaseTransport:
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=200, keepalive_expiry=30)
    if settings.STUDIO_UPSTREAM_TRANSPORT == "aiohttp":
        from httpx_aiohttp import AiohttpTransport

        return AiohttpTransport(limits=limits)
    return httpx.AsyncHTTPTransport(limits=limits)


def _build_client() -> httpx.AsyncClient:
    from studio.sandbox.app import application as sandbox_app

    mounts: dict[str, httpx.AsyncBaseTransport] = {
        settings.STUDIO_SANDBOX_BASE_URL: StreamingASGITransport(sandbox_app),
        **_extra_mounts,
    }
    return httpx.AsyncClient(
        transport=_network_transport(), mounts=mounts, timeout=default_timeout(), follow_redirects=False
    )


def get_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = _build_client()
    return client


def mount(base_url: str, transport: httpx.AsyncBaseTransport) -> None:
    """Route ``base_url`` to ``transport`` in clients built from now on (tests, benchmarks)."""
    _extra_mounts[base_url] = transport
    _clients.clear()


def unmount(base_url: str) -> None:
    _extra_mounts.pop(base_url, None)
    _clients.clear()


async def close_client() -> None:
    loop = asyncio.get_running_loop()
    client = _clients.pop(loop, None)
    if client is not None:
        await client.aclose()
