"""Which client-supplied URLs the gateway may fetch: syntax, address policy and DNS resolution.

This is the checking half of :mod:`studio.gateway.media.safe_fetch` (which does the pinned fetching),
kept apart because other code — the video routes checking URLs up front, the webhook sender —
needs the same verdicts without the HTTP machinery. A URL is refused unless it is a plain
``http``/``https`` URL without credentials whose host resolves *only* to public addresses:
``http://169.254.169.254/`` (cloud credentials), ``http://localhost:6379/`` or an internal
admin page must never be reachable through the gateway. Cloud metadata endpoints and
link-local addresses stay refused even when the operator allows private networks with
``STUDIO_FETCH_ALLOW_PRIVATE = True``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import urllib.parse
from typing import Any

from studio.core.errors import BadRequest

__all__ = [
    "MAX_URL_LENGTH",
    "UnsafeURL",
    "check_url_syntax",
    "check_public_target",
    "is_public_address",
    "private_addresses_allowed",
    "resolve_public",
    "unsafe_url",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 8192


class UnsafeURL(BadRequest):
    """The URL is malformed or points somewhere the gateway must not go."""

    def __init__(self, message: str, **kw: Any) -> None:
        kw.setdefault("code", "invalid_url")
        super().__init__(message, **kw)



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
    # Looked up as a module global so a test can substitute the policy
    # (monkeypatch studio.gateway.media.url_safety.is_public_address).
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


def private_addresses_allowed(override: bool | None) -> bool:
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


def unsafe_url(field: str, why: str) -> UnsafeURL:
    """The refusal for ``field``; the message names the field so clients know which URL failed."""
    return UnsafeURL(f"{field}: {why}", param=field)


def check_url_syntax(url: str, *, field: str) -> urllib.parse.SplitResult:
    """Parse ``url`` and refuse anything but a plain ``http``/``https`` URL with a host.

    Whitespace, control characters and backslashes are refused outright rather than cleaned:
    parsers disagree about them (``urllib`` silently drops tabs and newlines), and a URL that
    two parsers read differently is how host checks get bypassed.
    """
    if not isinstance(url, str) or not url:
        raise unsafe_url(field, "must be a non-empty URL string")
    if len(url) > MAX_URL_LENGTH:
        raise unsafe_url(field, f"the URL is longer than {MAX_URL_LENGTH} characters")
    if any(c <= " " or c == "\x7f" or c == "\\" for c in url):
        raise unsafe_url(field, "the URL contains whitespace, control characters or backslashes")
    try:
        split = urllib.parse.urlsplit(url)
    except ValueError:
        raise unsafe_url(field, "is not a valid URL") from None
    if split.scheme.lower() not in ("http", "https"):
        raise unsafe_url(
            field, f"only http and https URLs are accepted, not {split.scheme or 'a relative URL'!r}"
        )
    if "@" in split.netloc or split.username is not None or split.password is not None:
        raise unsafe_url(field, "the URL must not contain credentials (user:password@)")
    host = split.hostname
    if not host:
        raise unsafe_url(field, "the URL has no host")
    if "%" in host:
        raise unsafe_url(field, "the URL's host must not contain '%' (encoded characters or IPv6 zone IDs)")
    try:
        port = split.port
    except ValueError:
        raise unsafe_url(field, "the URL's port is not a number between 1 and 65535") from None
    if port is not None and not 1 <= port <= 65535:
        raise unsafe_url(field, "the URL's port is not a number between 1 and 65535")
    return split


async def resolve_public(host: str, port: int, *, field: str, allow_private: bool | None = None) -> list[str]:
    """Resolve ``host`` and return its addresses, refusing if *any* of them is not public.

    All addresses are checked, not just the first: the connection may use any of them. Numeric
    hosts go through the resolver too, which normalises the decimal/octal/hex IPv4 spellings
    (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) into the address they really are.
    """
    allow = private_addresses_allowed(allow_private)
    name = _normalize_host(host)
    if not name:
        raise unsafe_url(field, "the URL has no host")
    if _is_blocked_hostname(name, allow):
        raise unsafe_url(
            field, "the URL points to a private or reserved network address, which is not allowed"
        )
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
            raise unsafe_url(field, "the URL's host resolved to an unusable address") from None
        if not _address_allowed(ip, allow):
            # Deliberately not naming the address: that would let clients map internal DNS.
            raise unsafe_url(
                field, "the URL points to a private or reserved network address, which is not allowed"
            )
        if str(ip) not in addresses:
            addresses.append(str(ip))
    if not addresses:
        raise BadRequest(
            f"{field}: could not resolve the URL's host {host!r}", param=field, code="unresolvable_host"
        )
    return addresses


async def check_public_target(url: str, *, field: str, allow_private: bool | None = None) -> None:
    """Refuse, before it is stored, a URL the gateway will later connect to (a client's webhook)
    whose host is private or reserved, by the same rules as every fetch.

    A name that does not resolve today is accepted: DNS may be briefly down, and the delivery
    checks the name again (and refuses it then) before every connection.
    """
    split = check_url_syntax(url, field=field)
    port = split.port or (443 if split.scheme.lower() == "https" else 80)
    try:
        await resolve_public(split.hostname or "", port, field=field, allow_private=allow_private)
    except UnsafeURL:
        raise
    except BadRequest as exc:
        if exc.code != "unresolvable_host":
            raise
