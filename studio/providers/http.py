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

from studio.providers.aiohttp_transport import AiohttpTransport
from studio.providers.asgi_transport import StreamingASGITransport

ROUTES_KEPT = 4096
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, UpstreamClient] = weakref.WeakKeyDictionary()
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
        return AiohttpTransport(limits=limits)
    return httpx.AsyncHTTPTransport(limits=limits)


class UpstreamClient(httpx.AsyncClient):
    """httpx's client, plus ``send_direct`` for the vendor calls on the hot path.

    The client's own send path (cookie jar, auth flow, redirect handling, event hooks, URL
    merging) costs about a tenth of a /v1 request's CPU and does nothing for vendor APIs:
    they set no cookies we keep and we never follow their redirects. ``send_direct`` builds
    the request and hands it to the same transports the client uses.
    """

    def __init__(self, network: httpx.AsyncBaseTransport, mounts: dict[str, httpx.AsyncBaseTransport],
                 timeout: httpx.Timeout) -> None:
        super().__init__(transport=network, mounts=mounts, timeout=timeout, follow_redirects=False)
        self._network = network
        self._direct = [(httpx.URL(base), transport) for base, transport in mounts.items()]
        self._routes: dict[str, tuple[httpx.URL, httpx.AsyncBaseTransport]] = {}

    def _direct_transport(self, url: httpx.URL) -> httpx.AsyncBaseTransport:
        for base, transport in self._direct:
            if url.scheme == base.scheme and url.host == base.host and url.port == base.port:
                return transport
        return self._network

    def _route(self, url: str) -> tuple[httpx.URL, httpx.AsyncBaseTransport]:
        """The parsed URL and the transport it goes to, found once per URL (a vendor's calls
        repeat a handful; task polls, each its own URL, are not kept past ``ROUTES_KEPT``)."""
        found = self._routes.get(url)
        if found is None:
            parsed = httpx.URL(url)
            found = (parsed, self._direct_transport(parsed))
            if len(self._routes) < ROUTES_KEPT:
                self._routes[url] = found
        return found

    async def send_direct(self, method: str, url: str, *, content: bytes | None = None,
                          headers: dict[str, str] | None = None, params: dict | None = None,
                          timeout: httpx.Timeout | None = None) -> httpx.Response:
        """Send and return the response with its body not yet read (read or close it)."""
        parsed, transport = self._route(url)
        if isinstance(transport, AiohttpTransport) and params is None:
            return await transport.send(method, url, content=content, headers=headers or {},
                                        timeout=timeout or self.timeout)
        request = httpx.Request(method, parsed, content=content, headers=headers, params=params,
                                extensions={"timeout": (timeout or self.timeout).as_dict()})
        return await transport.handle_async_request(request)


def _build_client(network: httpx.AsyncBaseTransport | None = None) -> UpstreamClient:
    from studio.sandbox.app import application as sandbox_app

    mounts: dict[str, httpx.AsyncBaseTransport] = {
        settings.STUDIO_SANDBOX_BASE_URL: StreamingASGITransport(sandbox_app),
        **_extra_mounts,
    }
    return UpstreamClient(network or _network_transport(), mounts, default_timeout())


def get_client() -> UpstreamClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = _build_client()
    return client


def _remount() -> None:
    """Each event loop's client rebuilt with today's mounts around the network transport it had
    (its open connections kept, and closed with the client, not left to the garbage collector)."""
    for loop, client in list(_clients.items()):
        if not client.is_closed:
            _clients[loop] = _build_client(client._network)


def mount(base_url: str, transport: httpx.AsyncBaseTransport) -> None:
    """Route ``base_url`` to ``transport`` (tests, benchmarks)."""
    _extra_mounts[base_url] = transport
    _remount()


def unmount(base_url: str) -> None:
    _extra_mounts.pop(base_url, None)
    _remount()


async def close_client() -> None:
    loop = asyncio.get_running_loop()
    client = _clients.pop(loop, None)
    if client is not None:
        await client.aclose()
