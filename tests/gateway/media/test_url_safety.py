"""Which URLs the gateway may fetch: address policy, URL syntax, resolution checking every address."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import pytest

from studio.core.errors import BadRequest
from studio.gateway.media import url_safety
from studio.gateway.media.url_safety import (
    MAX_URL_LENGTH,
    UnsafeURL,
    check_url_syntax,
    is_public_address,
    private_addresses_allowed,
    resolve_public,
)
from tests.gateway.media.resolvers import fake_resolver

FIELD = "image_url"


# --- is_public_address -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.255.255.254",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "169.254.0.1",
        "100.64.0.1",
        "100.127.255.255",
        "0.0.0.0",
        "0.1.2.3",
        "198.18.0.1",
        "198.19.255.255",
        "192.0.2.1",
        "198.51.100.7",
        "203.0.113.9",
        "192.0.0.8",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "fec0::1",
        "ff02::1",
        "2001:db8::1",
        "3fff::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:0:7f00:1",  # IPv4-translated
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b:1::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "100::1",
        "fd00:ec2::254",
    ],
)
def test_non_public_addresses(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "100.63.255.255",  # just below carrier-grade NAT
        "100.128.0.0",  # just above it
        "172.15.255.255",
        "172.32.0.0",
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "2002:808:808::1",  # 6to4 of 8.8.8.8
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    ],
)
def test_public_addresses(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


# --- check_url_syntax ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.com/a.png", "only http and https"),
        ("gopher://example.com:70/_stats", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("//example.com/a.png", "only http and https"),
        ("http:///a.png", "no host"),
        ("http://user:pass@example.com/a.png", "credentials"),
        ("http://user@example.com/a.png", "credentials"),
        ("http://example.com\\@127.0.0.1/", "backslash"),
        ("http://exa mple.com/", "whitespace"),
        ("http://example.com/\na", "whitespace"),
        ("http://example.com:0/", "port"),
        ("http://example.com:65536/", "port"),
        ("http://example.com:http/", "port"),
        ("http://[fe80::1%25eth0]/", "'%'"),
        ("http://[::1/", "not a valid URL"),
        ("", "non-empty"),
        ("http://example.com/" + "a" * 9000, "longer than"),
    ],
)
def test_check_url_syntax_refusals(url: str, words: str) -> None:
    with pytest.raises(UnsafeURL) as exc:
        check_url_syntax(url, field=FIELD)
    assert exc.value.param == FIELD and exc.value.code == "invalid_url"
    assert exc.value.message.startswith(FIELD)
    assert words in exc.value.message


def test_unsafe_url_is_a_bad_request() -> None:
    assert issubclass(UnsafeURL, BadRequest)
    assert UnsafeURL("x").status == 400


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/a.png",
        "HTTPS://Example.COM:8443/a?b=c#d",
        "http://[2606:4700::1]/",
        "http://bücher.de/",
    ],
)
def test_check_url_syntax_accepts(url: str) -> None:
    split = check_url_syntax(url, field=FIELD)
    assert split.hostname


# --- resolve_public --------------------------------------------------------------------------


async def test_resolve_public_numeric_forms_are_normalised_and_refused() -> None:
    for host in ("127.0.0.1", "2130706433", "0x7f.0.0.1", "0x7f.1", "0177.0.0.1", "localhost", "LOCALHOST."):
        with pytest.raises(UnsafeURL):
            await resolve_public(host, 80, field=FIELD)


async def test_resolve_public_refuses_if_any_address_is_private(monkeypatch: pytest.MonkeyPatch) -> None:
    async def getaddrinfo(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("8.8.8.8", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port)),
        ]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
    with pytest.raises(UnsafeURL) as exc:
        await resolve_public("mixed.example", 80, field=FIELD)
    assert "10.1.2.3" not in exc.value.message  # internal DNS is not revealed


async def test_resolve_public_returns_public_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(
        asyncio.get_running_loop(), "getaddrinfo", fake_resolver({"cdn.example": ["93.184.216.34"]}, calls)
    )
    assert await resolve_public("cdn.example", 443, field=FIELD) == ["93.184.216.34"]


async def test_resolve_failure_is_a_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    async def getaddrinfo(*args: Any, **kw: Any) -> list[tuple[Any, ...]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
    with pytest.raises(BadRequest, match="could not resolve") as exc:
        await resolve_public("nowhere.example", 80, field=FIELD)
    assert exc.value.param == FIELD and not isinstance(exc.value, UnsafeURL)


async def test_metadata_hostnames_refused_without_resolving(monkeypatch: pytest.MonkeyPatch) -> None:
    async def getaddrinfo(*args: Any, **kw: Any) -> list[tuple[Any, ...]]:
        raise AssertionError("must not resolve")

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
    for host in ("metadata.google.internal", "Metadata.Google.Internal.", "metadata"):
        with pytest.raises(UnsafeURL):
            await resolve_public(host, 80, field=FIELD, allow_private=True)


# --- embedded IPv4, metadata and the private-network setting -------------------------------------


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "::ffff:0:10.0.0.1", "64:ff9b::c0a8:0101", "2002:0a00:0001::1",
                                     "::127.0.0.1"])
def test_ipv6_forms_of_private_ipv4_are_judged_as_that_address(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is False


def test_ipv6_form_of_a_public_ipv4_is_public() -> None:
    assert is_public_address(ipaddress.ip_address("::ffff:8.8.8.8")) is True


def test_private_addresses_allowed_override_wins_over_the_setting(settings) -> None:
    settings.STUDIO_FETCH_ALLOW_PRIVATE = True
    assert private_addresses_allowed(None) is True
    assert private_addresses_allowed(False) is False
    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    assert private_addresses_allowed(None) is False
    assert private_addresses_allowed(True) is True


async def test_private_address_allowed_when_the_operator_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo",
                        fake_resolver({"nas.internal": ["10.1.2.3"]}, calls))
    assert await resolve_public("nas.internal", 80, field=FIELD, allow_private=True) == ["10.1.2.3"]
    with pytest.raises(UnsafeURL) as exc:
        await resolve_public("nas.internal", 80, field=FIELD, allow_private=False)
    assert exc.value.param == FIELD and exc.value.code == "invalid_url"


@pytest.mark.parametrize("address", ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "::ffff:169.254.169.254"])
async def test_metadata_addresses_refused_even_with_private_allowed(monkeypatch: pytest.MonkeyPatch,
                                                                     address: str) -> None:
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo",
                        fake_resolver({"innocent.example": [address]}, []))
    with pytest.raises(UnsafeURL):
        await resolve_public("innocent.example", 80, field=FIELD, allow_private=True)


def test_url_length_limit_names_the_field() -> None:
    long_url = "https://example.com/" + "a" * MAX_URL_LENGTH
    with pytest.raises(UnsafeURL) as exc:
        check_url_syntax(long_url, field="content[1].image_url.url")
    assert exc.value.param == "content[1].image_url.url"
    assert exc.value.message.startswith("content[1].image_url.url:")
    assert isinstance(exc.value, BadRequest) and exc.value.status == 400


def test_duplicate_addresses_are_returned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    async def getaddrinfo(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
        entry = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))
        return [entry, entry]

    async def run() -> list[str]:
        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)
        return await url_safety.resolve_public("cdn.example", 443, field=FIELD)

    assert asyncio.run(run()) == ["93.184.216.34"]
