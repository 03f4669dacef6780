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
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import httpcore
import httpx

from studio.gateway.errors import BadRequest, PayloadTooLarge

__all__ = [
    "FetchedMedia",
    "UnsafeURL",
    "check_url_syntax",
    "fetch_public",
    "is_public_address",
    "resolve_public",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 8192
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = "studio-gateway-media-fetch/1.0"


class UnsafeURL(BadRequest):
    """The URL is malformed or points somewhere the gateway must not go."""

    def __init__(self, message: str, **kw: Any) -> None:
        kw.setdefault("code", "invalid_url")
        super().__init__(message, **kw)


@dataclass(frozen=True, slots=True)
class FetchedMedia:
    # repr=False: media bodies are large and must not end up in logs.
    data: bytes = dataclass_field(repr=False)
    content_type: str | None
    final_url: str


# --------------------------------------------------------------------------------------------
# Address policy
# --------------------------------------------------------------------------------------------

# ``ipaddress``'s ``is_global`` is the base, but its tables vary between Python patch releases
# (3.11.7 calls ``2002:7f00:1::1`` and ``::127.0.0.1`` global), so the special-purpose ranges
# that matter are listed explicitly as well.
_V4_BLOCKED = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",  # "this network"; 0.0.0.0 reaches localhost on Linux
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT, also used by some clouds internally
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, including the 169.254.169.254 metadata service
        "172.16.0.0/12",
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation (TEST-NET-1)
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "192.168.0.0/16",
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation (TEST-NET-2)
        "203.0.113.0/24",  # documentation (TEST-NET-3)
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, includes 255.255.255.255
    )
)
_V6_BLOCKED = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/128",
        "::1/128",
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments, including Teredo 2001::/32
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # deprecated site-local
        "ff00::/8",  # multicast
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

# Cloud metadata services: never fetched, not even when private addresses are allowed.
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, ...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS DNS
        "100.100.100.200",  # Alibaba Cloud
        "fd00:ec2::254",  # AWS over IPv6
    )
)
_METADATA_HOSTNAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
_LOCALHOST_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, when it is one of the embedding forms.

    Whatever the transition mechanism, a packet to ``::ffff:127.0.0.1`` or to the 6to4/NAT64
    form of a private address ends up at that IPv4 address, so it is judged as that address.
    """
    if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d
        return ip.ipv4_mapped
    value = int(ip)
    if value >> 32 == 0:  # deprecated IPv4-compatible ::a.b.c.d (and :: / ::1)
        return ipaddress.IPv4Address(value)
    if value >> 32 == 0xFFFF0000:  # SIIT IPv4-translated ::ffff:0:a.b.c.d
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if ip in _NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if ip.sixtofour is not None:  # 2002:AABB:CCDD::/48
        return ip.sixtofour
    return None


def is_public_address(ip: IPAddress) -> bool:
    """Whether ``ip`` is an ordinary public unicast address the gateway may connect to."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return is_public_address(embedded)
        if ip.teredo is not None or ip.is_site_local:
            return False
        blocked: tuple[ipaddress.IPv4Network, ...] | tuple[ipaddress.IPv6Network, ...] = _V6_BLOCKED
    else:
        blocked = _V4_BLOCKED
    if (
        not ip.is_global
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    ):
        return False
    return not any(ip in net for net in blocked)


def _is_metadata_address(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _METADATA_ADDRESSES:
            return True
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            ip = embedded
    # Nothing legitimate serves media on link-local addresses; metadata services live there.
    return ip in _METADATA_ADDRESSES or ip.is_link_local


def _address_allowed(ip: IPAddress, allow_private: bool) -> bool:
    if _is_metadata_address(ip):
        return False
    # Looked up through the module so a test can substitute the policy.
    return allow_private or is_public_address(ip)


def _normalize_host(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    # "localhost." is the same name as "localhost" (fully qualified).
    return host[:-1] if host.endswith(".") else host


def _is_blocked_hostname(host: str, allow_private: bool) -> bool:
    name = _normalize_host(host)
    if name in _METADATA_HOSTNAMES:
        return True
    return not allow_private and (name in _LOCALHOST_NAMES or name.endswith(".localhost"))


def _allow_private(override: bool | None) -> bool:
    """The explicit override, else the operator setting; unconfigured settings mean no."""
    if override is not None:
        return override
    try:
        from django.conf import settings

        return bool(getattr(settings, "STUDIO_FETCH_ALLOW_PRIVATE", False))
    except Exception:  # ImproperlyConfigured outside a configured Django process
        return False


# --------------------------------------------------------------------------------------------
# URL syntax and resolution
# --------------------------------------------------------------------------------------------


def _refuse(field: str, why: str) -> UnsafeURL:
    return UnsafeURL(f"{field}: {why}", param=field)


def check_url_syntax(url: str, *, field: str) -> urllib.parse.SplitResult:
    """Parse ``url`` and refuse anything but a plain ``http``/``https`` URL with a host.

    Whitespace, control characters and backslashes are refused outright rather than cleaned:
    parsers disagree about them (``urllib`` silently drops tabs and newlines), and a URL that
    two parsers read differently is how host checks get bypassed.
    """
    if not isinstance(url, str) or not url:
        raise _refuse(field, "must be a non-empty URL string")
    if len(url) > MAX_URL_LENGTH:
        raise _refuse(field, f"the URL is longer than {MAX_URL_LENGTH} characters")
    if any(c <= " " or c == "\x7f" or c == "\\" for c in url):
        raise _refuse(field, "the URL contains whitespace, control characters or backslashes")
    try:
        split = urllib.parse.urlsplit(url)
    except ValueError:
        raise _refuse(field, "is not a valid URL") from None
    if split.scheme.lower() not in ("http", "https"):
        raise _refuse(
            field, f"only http and https URLs are accepted, not {split.scheme or 'a relative URL'!r}"
        )
    if "@" in split.netloc or split.username is not None or split.password is not None:
        raise _refuse(field, "the URL must not contain credentials (user:password@)")
    host = split.hostname
    if not host:
        raise _refuse(field, "the URL has no host")
    if "%" in host:
        raise _refuse(field, "the URL's host must not contain '%' (encoded characters or IPv6 zone IDs)")
    try:
        port = split.port
    except ValueError:
        raise _refuse(field, "the URL's port is not a number between 1 and 65535") from None
    if port is not None and not 1 <= port <= 65535:
        raise _refuse(field, "the URL's port is not a number between 1 and 65535")
    return split


async def resolve_public(host: str, port: int, *, field: str, allow_private: bool | None = None) -> list[str]:
    """Resolve ``host`` and return its addresses, refusing if *any* of them is not public.

    All addresses are checked, not just the first: the connection may use any of them. Numeric
    hosts go through the resolver too, which normalises the decimal/octal/hex IPv4 spellings
    (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) into the address they really are.
    """
    allow = _allow_private(allow_private)
    name = _normalize_host(host)
    if not name:
        raise _refuse(field, "the URL has no host")
    if _is_blocked_hostname(name, allow):
        raise _refuse(field, "the URL points to a private or reserved network address, which is not allowed")
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise BadRequest(
            f"{field}: could not resolve the URL's host {host!r}", param=field, code="unresolvable_host"
        ) from None
    addresses: list[str] = []
    for family, *_rest, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        text = str(sockaddr[0]).split("%", 1)[0]
        try:
            ip = ipaddress.ip_address(text)
        except ValueError:
            raise _refuse(field, "the URL's host resolved to an unusable address") from None
        if not _address_allowed(ip, allow):
            # Deliberately not naming the address: that would let clients map internal DNS.
            raise _refuse(
                field, "the URL points to a private or reserved network address, which is not allowed"
            )
        if str(ip) not in addresses:
            addresses.append(str(ip))
    if not addresses:
        raise BadRequest(
            f"{field}: could not resolve the URL's host {host!r}", param=field, code="unresolvable_host"
        )
    return addresses


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
            raise _refuse(self._field, "the URL's host was not checked before connecting")
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
        raise _refuse(self._field, "unix sockets are never fetched")

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
        raise _refuse(field, "is not a valid URL") from None
    scheme = split.scheme.lower()
    port = split.port or _default_port(scheme)
    # The check above and the request below must be about the same host and port; if the two
    # parsers disagree the URL is ambiguous and refused.
    if (
        target.scheme != scheme
        or target.host.lower() != (split.hostname or "")
        or (target.port or _default_port(target.scheme)) != port
    ):
        raise _refuse(field, "the URL could not be parsed unambiguously")
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
                    raise _refuse(field, "the URL redirected to an invalid URL") from None
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
    allow = _allow_private(allow_private)
    check_url_syntax(url, field=field)  # fail fast on the cheap checks, before any I/O
    backend = _PinnedBackend(field)
    headers = {"Accept": accept or "*/*", "Accept-Encoding": "identity", "User-Agent": _USER_AGENT}
    try:
        async with (
            asyncio.timeout(timeout),
            httpx.AsyncClient(
                transport=_PinnedTransport(backend),
                timeout=httpx.Timeout(timeout),
                follow_redirects=False,
                trust_env=False,  # no environment proxies and no .netrc credentials
            ) as client,
        ):
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
        raise _refuse(field, "is not a valid URL") from None
    except httpx.HTTPError as exc:
        raise BadRequest(
            f"{field}: could not fetch the URL ({type(exc).__name__})", param=field, code="fetch_failed"
        ) from None
