"""Fetching a URL a client gave us, without letting the client reach our private network.

Routes that accept an image/video/audio *URL* must download it themselves when the upstream
cannot (or must not) see the URL. Done naively that is server-side request forgery: the client
names ``http://169.254.169.254/`` (cloud credentials), ``http://localhost:6379/`` or an internal
admin page, and the gateway fetches it from inside the network. So:

* only ``http``/``https`` URLs without credentials are accepted;
* the host is resolved once and *every* address it resolves to must be public;
* the connection is pinned to those checked addresses — a custom ``httpcore`` network backend
  substitutes the checked IP when connecting, while the Host header, TLS SNI and certificate
  verification keep using the hostname — so a DNS answer that changes between the check and
  the connect (DNS rebinding) cannot redirect us;
* redirects are followed by hand, every hop re-checked and re-pinned;
* the body is streamed and abandoned as soon as it exceeds the byte limit, and the whole fetch
  (resolution, redirects, body) runs under one deadline.

Operators whose media lives on a private network can set ``STUDIO_FETCH_ALLOW_PRIVATE = True``;
cloud metadata endpoints and link-local addresses stay refused even then, and all other limits
still apply.

The checks themselves (URL syntax, the public-address policy, DNS resolution) live in
:mod:`studio.gateway.media.url_safety`; this module pins connections to what they approved and
performs the fetch.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import httpcore
import httpx

from studio.core.errors import BadRequest, PayloadTooLarge
from studio.gateway.media.url_safety import (
    UnsafeURL,
    check_url_syntax,
    is_public_address,
    private_addresses_allowed,
    resolve_public,
    unsafe_url,
)

__all__ = [
    "FetchedMedia",
    "UnsafeURL",
    "check_url_syntax",
    "fetch_public",
    "is_public_address",
    "resolve_public",
]

# The names this module had before the checks moved to url_safety; video_webhooks and the
# tests still reach them here.
_allow_private = private_addresses_allowed

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = "studio-gateway-media-fetch/1.0"


@dataclass(frozen=True, slots=True)
class FetchedMedia:
    # repr=False: media bodies are large and must not end up in logs.
    data: bytes = dataclass_field(repr=False)
    content_type: str | None
    final_url: str


# --------------------------------------------------------------------------------------------
# Pinned connections
# --------------------------------------------------------------------------------------------


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses that were resolved and checked for the requested host.

    httpcore asks to connect to the URL's hostname; this backend connects to the pinned IP
    instead. TLS is started afterwards by httpcore on the returned stream with
    ``server_hostname`` still the URL's host, so SNI and certificate verification are those of
    the hostname, and the Host header is untouched. A host that was never checked (which the
    fetch loop never asks for) is refused rather than resolved.
    """

    inner_factory: Any = httpcore.AnyIOBackend

    def __init__(self, field: str) -> None:
        self._field = field
        self._inner: httpcore.AsyncNetworkBackend = self.inner_factory()
        self._pins: dict[str, list[str]] = {}

    def pin(self, host: str, addresses: list[str]) -> None:
        self._pins[host.lower()] = list(addresses)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = self._pins.get(host.lower())
        if not addresses:
            raise unsafe_url(self._field, "the URL's host was not checked before connecting")
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise unsafe_url(self._field, "unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for all fetches: building one loads the CA bundle (~10 ms)."""
    return httpx.create_ssl_context(trust_env=False)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (request/response mapping, error translation) over a pinned pool."""

    def __init__(self, backend: _PinnedBackend) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False)
        if not hasattr(self, "_pool"):  # pragma: no cover - guards against an httpx internals change
            raise RuntimeError("httpx.AsyncHTTPTransport no longer keeps its pool in _pool")
        # The pool the base class built is never used (no connection was opened); replace it
        # with one that connects through the pinning backend. No proxies, ever: a proxy would
        # resolve the host itself and undo the check.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=4,
            max_keepalive_connections=2,
            http1=True,
            http2=False,
            network_backend=backend,
        )


# --------------------------------------------------------------------------------------------
# Fetching
# --------------------------------------------------------------------------------------------


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


async def _prepare_hop(url: str, *, field: str, allow_private: bool, backend: _PinnedBackend) -> httpx.URL:
    """Check one hop's URL, resolve and check its host, and pin the connection to the result."""
    split = check_url_syntax(url, field=field)
    try:
        target = httpx.URL(url)
        raw_host = target.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError):
        raise unsafe_url(field, "is not a valid URL") from None
    scheme = split.scheme.lower()
    port = split.port or _default_port(scheme)
    # The check above and the request below must be about the same host and port; if the two
    # parsers disagree the URL is ambiguous and refused.
    if (
        target.scheme != scheme
        or target.host.lower() != (split.hostname or "")
        or (target.port or _default_port(target.scheme)) != port
    ):
        raise unsafe_url(field, "the URL could not be parsed unambiguously")
    addresses = await resolve_public(raw_host, port, field=field, allow_private=allow_private)
    backend.pin(raw_host, addresses)
    return target


def _timed_out(field: str) -> BadRequest:
    # The client's URL, not an upstream of ours, was slow: a 400, not a 504.
    return BadRequest(f"{field}: fetching the URL timed out", param=field, code="fetch_timeout")


def _too_large(field: str, max_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"{field}: the file at the URL is larger than the {max_bytes} bytes accepted",
        param=field,
        code="payload_too_large",
        details={"max_bytes": max_bytes},
    )


async def _read_limited(response: httpx.Response, *, field: str, max_bytes: int) -> bytes:
    length = response.headers.get("content-length")
    if length is not None and length.strip().isdigit() and int(length) > max_bytes:
        raise _too_large(field, max_bytes)
    body = bytearray()
    # Decoded bytes are counted, so a compressed body cannot inflate past the limit either.
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise _too_large(field, max_bytes)
    return bytes(body)


async def _fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    field: str,
    max_bytes: int,
    max_redirects: int,
    headers: dict[str, str],
    allow_private: bool,
    backend: _PinnedBackend,
) -> FetchedMedia:
    current = url
    for _hop in range(max_redirects + 1):
        target = await _prepare_hop(current, field=field, allow_private=allow_private, backend=backend)
        response = await client.send(client.build_request("GET", target, headers=headers), stream=True)
        try:
            if response.status_code in _REDIRECT_STATUSES:
                location = response.headers.get("location")
                if not location:
                    raise BadRequest(
                        f"{field}: the URL answered HTTP {response.status_code} without a Location",
                        param=field,
                        code="fetch_failed",
                    )
                try:
                    current = str(target.join(location))
                except httpx.InvalidURL:
                    raise unsafe_url(field, "the URL redirected to an invalid URL") from None
                continue
            if not 200 <= response.status_code < 300:
                raise BadRequest(
                    f"{field}: fetching the URL failed with HTTP {response.status_code}",
                    param=field,
                    code="fetch_failed",
                    details={"status": response.status_code},
                )
            data = await _read_limited(response, field=field, max_bytes=max_bytes)
            return FetchedMedia(
                data=data, content_type=response.headers.get("content-type"), final_url=str(target)
            )
        finally:
            await response.aclose()
    raise BadRequest(
        f"{field}: the URL redirected too many times (more than {max_redirects})",
        param=field,
        code="too_many_redirects",
    )


def _pinned_client(backend: _PinnedBackend, timeout: float) -> httpx.AsyncClient:
    """A client that connects only through ``backend``'s checked addresses and follows no redirect
    itself (a fetch checks each hop first; a post follows none)."""
    return httpx.AsyncClient(
        transport=_PinnedTransport(backend),
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        trust_env=False,  # no environment proxies and no .netrc credentials
    )


async def fetch_public(
    url: str,
    *,
    field: str,
    max_bytes: int,
    timeout: float = 20.0,
    max_redirects: int = 5,
    accept: str | None = None,
    allow_private: bool | None = None,
) -> FetchedMedia:
    """GET a client-supplied URL safely and return its body.

    ``accept`` is sent as the Accept header. ``timeout`` bounds the *whole* fetch — resolution,
    every redirect hop and the body — so a server dripping one byte at a time cannot hold a
    request open. ``allow_private`` overrides the ``STUDIO_FETCH_ALLOW_PRIVATE`` setting.

    Raises ``UnsafeURL`` (a ``BadRequest``) for refused URLs/addresses, ``PayloadTooLarge``
    past ``max_bytes``, and ``BadRequest`` for timeouts, failed connections, non-2xx answers
    and too many redirects — always naming ``field``.
    """
    allow = private_addresses_allowed(allow_private)
    check_url_syntax(url, field=field)  # fail fast on the cheap checks, before any I/O
    backend = _PinnedBackend(field)
    headers = {"Accept": accept or "*/*", "Accept-Encoding": "identity", "User-Agent": _USER_AGENT}
    try:
        async with asyncio.timeout(timeout), _pinned_client(backend, timeout) as client:
            return await _fetch(
                client,
                url,
                field=field,
                max_bytes=max_bytes,
                max_redirects=max_redirects,
                headers=headers,
                allow_private=allow,
                backend=backend,
            )
    except (TimeoutError, httpx.TimeoutException):
        raise _timed_out(field) from None
    except httpx.InvalidURL:
        raise unsafe_url(field, "is not a valid URL") from None
    except httpx.HTTPError as exc:
        raise BadRequest(
            f"{field}: could not fetch the URL ({type(exc).__name__})", param=field, code="fetch_failed"
        ) from None


async def post_public(url: str, body: bytes, headers: dict[str, str], *, field: str, timeout: float) -> int:
    """POST ``body`` to a URL under the same rules as a fetch (http(s) only, every resolved address
    public, the connection pinned to the checked address, no redirects followed): the receiver's
    status code. ``timeout`` bounds the whole post. Raises ``UnsafeURL`` for a refused URL, and
    httpx's errors or ``TimeoutError`` for a receiver that does not answer."""
    backend = _PinnedBackend(field)
    async with asyncio.timeout(timeout), _pinned_client(backend, timeout) as client:
        target = await _prepare_hop(url, field=field, allow_private=private_addresses_allowed(None), backend=backend)
        response = await client.post(target, content=body, headers=headers)
        return response.status_code
