"""SSRF-safe fetching: address policy, URL checks, pinning, redirects, limits and deadlines.

Everything runs against a raw HTTP server on the loopback interface, reached with
``allow_private=True`` or with the address policy/resolver substituted — no real network.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import time
import types
import urllib.parse
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpcore
import pytest

from studio.gateway import safe_fetch as sf
from studio.gateway import url_safety
from studio.gateway.errors import BadRequest, PayloadTooLarge
from studio.gateway.safe_fetch import (
    FetchedMedia,
    UnsafeURL,
    check_url_syntax,
    fetch_public,
    is_public_address,
    resolve_public,
)

FIELD = "image_url"
BIG_STREAM_CAP = 64 * 1024 * 1024


# --- a tiny raw HTTP server ------------------------------------------------------------------


@dataclass
class Server:
    port: int
    requests: list[dict[str, str]] = field(default_factory=list)
    stream_sent: int = 0
    stream_done: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


async def _respond(
    writer: asyncio.StreamWriter, status: str, headers: dict[str, str], body: bytes = b""
) -> None:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    writer.write(head.encode("latin-1") + body)
    await writer.drain()


async def _handle(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = raw.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
        server.requests.append({"method": method, "target": target, **headers})
        url = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(url.query))
        close = {"Connection": "close"}

        if url.path == "/ok":
            body = b"\x89PNG\r\n\x1a\nfake image body"
            await _respond(
                writer,
                "200 OK",
                {"Content-Type": "image/png", "Content-Length": str(len(body)), **close},
                body,
            )
        elif url.path == "/redirect":
            status = query.get("status", "302") + " Redirect"
            await _respond(writer, status, {"Location": query["to"], "Content-Length": "0", **close})
        elif url.path == "/loop":
            await _respond(writer, "302 Found", {"Location": "/loop", "Content-Length": "0", **close})
        elif url.path == "/no-location":
            await _respond(writer, "302 Found", {"Content-Length": "0", **close})
        elif url.path == "/missing":
            await _respond(writer, "404 Not Found", {"Content-Length": "9", **close}, b"not found")
        elif url.path == "/claims-big":
            # Announces 10 MB: must be refused from the header, before the body is read.
            await _respond(writer, "200 OK", {"Content-Length": str(10_000_000), **close}, b"x" * 1000)
            await asyncio.sleep(5)
        elif url.path == "/endless":
            # No Content-Length: a body that never ends, until the client hangs up.
            await _respond(writer, "200 OK", {"Content-Type": "application/octet-stream", **close})
            chunk = b"x" * 65536
            try:
                while server.stream_sent < BIG_STREAM_CAP:
                    writer.write(chunk)
                    await writer.drain()
                    server.stream_sent += len(chunk)
            finally:
                server.stream_done.set()
        elif url.path == "/hang":
            await asyncio.sleep(3600)
        elif url.path == "/drip":
            # Every read is quick, the whole response never finishes: only a total deadline helps.
            await _respond(writer, "200 OK", {"Content-Length": "100000", **close})
            for _ in range(100000):
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(0.05)
        else:
            await _respond(writer, "400 Bad Request", {"Content-Length": "0", **close})
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server(port=0)
    handlers: set[asyncio.Task[Any]] = set()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await _handle(state, reader, writer)
        finally:
            handlers.discard(task)

    srv = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    state.port = srv.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        srv.close()
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


def _fake_resolver(mapping: dict[str, list[str]], calls: list[str]) -> Callable[..., Any]:
    """A stand-in for ``loop.getaddrinfo`` answering from ``mapping`` (lists are consumed in turn)."""

    async def getaddrinfo(host: str, port: int, **kw: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        answers = mapping[host]
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    return getaddrinfo


def _only_public(*addresses: str) -> Callable[[Any], bool]:
    allowed = {ipaddress.ip_address(a) for a in addresses}
    return lambda ip: ip in allowed


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
        asyncio.get_running_loop(), "getaddrinfo", _fake_resolver({"cdn.example": ["93.184.216.34"]}, calls)
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


# --- fetch_public: refusals ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.0.0.1:8000/admin",
        "http://localhost/",
        "http://localhost:6379/",
        "http://[::1]/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::]/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://0x7f.1/",
        "http://017700000001/",
        "https://127.0.0.1/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "file:///etc/passwd",
        "ftp://example.com/a.png",
        "gopher://127.0.0.1:6379/_INFO",
        "http://user:pass@example.com/",
        "http://example.com@127.0.0.1/",
    ],
)
async def test_fetch_refuses(url: str) -> None:
    with pytest.raises(UnsafeURL) as exc:
        await fetch_public(url, field=FIELD, max_bytes=1000, allow_private=False)
    assert exc.value.param == FIELD and exc.value.message.startswith(FIELD)


async def test_metadata_refused_even_when_private_allowed() -> None:
    for url in ("http://169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/"):
        with pytest.raises(UnsafeURL):
            await fetch_public(url, field=FIELD, max_bytes=1000, allow_private=True)


async def test_refused_before_connecting(server: Server) -> None:
    with pytest.raises(UnsafeURL):
        await fetch_public(server.url("/ok"), field=FIELD, max_bytes=1000, allow_private=False)
    assert server.requests == []


# --- fetch_public: the happy path and the setting --------------------------------------------


async def test_fetch_loopback_when_private_allowed(server: Server) -> None:
    got = await fetch_public(
        server.url("/ok"), field=FIELD, max_bytes=1000, accept="image/*", allow_private=True
    )
    assert isinstance(got, FetchedMedia)
    assert got.data == b"\x89PNG\r\n\x1a\nfake image body"
    assert got.content_type == "image/png"
    assert got.final_url == server.url("/ok")
    request = server.requests[-1]
    assert request["accept"] == "image/*"
    assert request["host"] == f"127.0.0.1:{server.port}"
    assert "fake image body" not in repr(got)


async def test_setting_enables_private_and_keyword_overrides(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    import django.conf

    monkeypatch.setattr(django.conf, "settings", types.SimpleNamespace(STUDIO_FETCH_ALLOW_PRIVATE=True))
    got = await fetch_public(server.url("/ok"), field=FIELD, max_bytes=1000)
    assert got.data.startswith(b"\x89PNG")
    with pytest.raises(UnsafeURL):
        await fetch_public(server.url("/ok"), field=FIELD, max_bytes=1000, allow_private=False)


def test_unconfigured_settings_mean_private_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import django.conf

    class Unconfigured:
        def __getattr__(self, name: str) -> Any:
            raise django.conf.ImproperlyConfigured("settings are not configured")

    monkeypatch.setattr(django.conf, "settings", Unconfigured())
    assert sf._allow_private(None) is False
    assert sf._allow_private(True) is True


# --- redirects -------------------------------------------------------------------------------


async def test_relative_redirect_is_followed(server: Server) -> None:
    url = server.url("/redirect?to=/ok&status=301")
    got = await fetch_public(url, field=FIELD, max_bytes=1000, allow_private=True)
    assert got.final_url == server.url("/ok")
    assert [r["target"] for r in server.requests] == ["/redirect?to=/ok&status=301", "/ok"]


async def test_every_redirect_hop_is_rechecked(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    # 127.0.0.1 counts as public for this test; 127.0.0.2 (same loopback net) does not.
    monkeypatch.setattr(url_safety, "is_public_address", _only_public("127.0.0.1"))
    good = server.url("/redirect?to=" + urllib.parse.quote(server.url("/ok"), safe=""))
    assert (
        await fetch_public(good, field=FIELD, max_bytes=1000, allow_private=False)
    ).final_url == server.url("/ok")

    server.requests.clear()
    bad = server.url("/redirect?to=" + urllib.parse.quote(server.url("/ok", host="127.0.0.2"), safe=""))
    with pytest.raises(UnsafeURL) as exc:
        await fetch_public(bad, field=FIELD, max_bytes=1000, allow_private=False)
    assert exc.value.param == FIELD
    assert len(server.requests) == 1  # the redirect target was never contacted


@pytest.mark.parametrize(
    "target",
    ["http://169.254.169.254/latest/meta-data/", "file:///etc/passwd", "http://localhost/", "gopher://x/"],
)
async def test_redirect_to_forbidden_targets(
    server: Server, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.setattr(url_safety, "is_public_address", _only_public("127.0.0.1"))
    url = server.url("/redirect?status=307&to=" + urllib.parse.quote(target, safe=""))
    with pytest.raises(UnsafeURL):
        await fetch_public(url, field=FIELD, max_bytes=1000, allow_private=False)


async def test_redirect_limit(server: Server) -> None:
    with pytest.raises(BadRequest, match="redirected too many times") as exc:
        await fetch_public(
            server.url("/loop"), field=FIELD, max_bytes=1000, max_redirects=3, allow_private=True
        )
    assert exc.value.param == FIELD
    assert len(server.requests) == 4  # the original request and three redirects


async def test_no_redirects_allowed(server: Server) -> None:
    with pytest.raises(BadRequest, match="too many"):
        await fetch_public(
            server.url("/redirect?to=/ok"), field=FIELD, max_bytes=1000, max_redirects=0, allow_private=True
        )


async def test_redirect_without_location(server: Server) -> None:
    with pytest.raises(BadRequest, match="without a Location"):
        await fetch_public(server.url("/no-location"), field=FIELD, max_bytes=1000, allow_private=True)


async def test_http_error_status_names_field_and_status(server: Server) -> None:
    with pytest.raises(BadRequest) as exc:
        await fetch_public(server.url("/missing"), field=FIELD, max_bytes=1000, allow_private=True)
    assert exc.value.param == FIELD and "404" in exc.value.message and FIELD in exc.value.message
    assert exc.value.details["status"] == 404


# --- pinning ---------------------------------------------------------------------------------


async def test_connection_is_pinned_to_the_checked_address(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rebinding resolver: the first answer passes the check, later answers point elsewhere.
    calls: list[str] = []
    resolver = _fake_resolver({"media.example": ["127.0.0.1", "10.255.255.1"]}, calls)
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    monkeypatch.setattr(url_safety, "is_public_address", _only_public("127.0.0.1"))

    got = await fetch_public(server.url("/ok", host="media.example"), field=FIELD, max_bytes=1000)
    assert got.data.startswith(b"\x89PNG")
    assert calls == ["media.example"]  # resolved once, by us; the HTTP client did not resolve again
    assert server.requests[-1]["host"] == f"media.example:{server.port}"  # Host header kept

    # A redirect to the same host is re-resolved and re-checked: the rebound answer is refused.
    calls.clear()
    server.requests.clear()
    resolver = _fake_resolver({"media.example": ["127.0.0.1", "10.255.255.1"]}, calls)
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    with pytest.raises(UnsafeURL):
        await fetch_public(server.url("/redirect?to=/ok", host="media.example"), field=FIELD, max_bytes=1000)
    assert calls == ["media.example", "media.example"]
    assert len(server.requests) == 1


async def test_tls_keeps_hostname_for_sni_while_connecting_to_pinned_ip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}

    class FakeStream(httpcore.AsyncNetworkStream):
        async def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: Any = None
        ) -> Any:
            seen["server_hostname"] = server_hostname
            seen["check_hostname"] = ssl_context.check_hostname
            raise httpcore.ConnectError("stop here")

        async def aclose(self) -> None:
            pass

    class FakeBackend(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host: str, port: int, **kw: Any) -> httpcore.AsyncNetworkStream:
            seen["connect"] = (host, port)
            return FakeStream()

        async def sleep(self, seconds: float) -> None:
            pass

    calls: list[str] = []
    monkeypatch.setattr(
        asyncio.get_running_loop(), "getaddrinfo", _fake_resolver({"cdn.example": ["93.184.216.34"]}, calls)
    )
    monkeypatch.setattr(sf._PinnedBackend, "inner_factory", FakeBackend)
    with pytest.raises(BadRequest, match="could not fetch"):
        await fetch_public("https://cdn.example/a.png", field=FIELD, max_bytes=1000)
    assert seen == {
        "connect": ("93.184.216.34", 443),
        "server_hostname": "cdn.example",
        "check_hostname": True,
    }


async def test_backend_refuses_unchecked_hosts() -> None:
    backend = sf._PinnedBackend(FIELD)
    backend.pin("checked.example", ["127.0.0.1"])
    with pytest.raises(UnsafeURL):
        await backend.connect_tcp("other.example", 80)
    with pytest.raises(UnsafeURL):
        await backend.connect_unix_socket("/var/run/docker.sock")


# --- limits ----------------------------------------------------------------------------------


async def test_content_length_over_limit_is_refused_from_the_header(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(PayloadTooLarge) as exc:
        await fetch_public(server.url("/claims-big"), field=FIELD, max_bytes=100_000, allow_private=True)
    assert exc.value.param == FIELD and FIELD in exc.value.message
    assert time.monotonic() - started < 2


async def test_streamed_body_is_abandoned_past_the_limit(server: Server) -> None:
    with pytest.raises(PayloadTooLarge):
        await fetch_public(server.url("/endless"), field=FIELD, max_bytes=200_000, allow_private=True)
    # The server notices the hang-up long before it has pushed its whole body.
    await asyncio.wait_for(server.stream_done.wait(), 5)
    assert server.stream_sent < BIG_STREAM_CAP // 2


async def test_exact_limit_is_accepted(server: Server) -> None:
    size = len(b"\x89PNG\r\n\x1a\nfake image body")
    got = await fetch_public(server.url("/ok"), field=FIELD, max_bytes=size, allow_private=True)
    assert len(got.data) == size
    with pytest.raises(PayloadTooLarge):
        await fetch_public(server.url("/ok"), field=FIELD, max_bytes=size - 1, allow_private=True)


async def test_silent_server_times_out(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(BadRequest) as exc:
        await fetch_public(server.url("/hang"), field=FIELD, max_bytes=1000, timeout=0.5, allow_private=True)
    assert exc.value.message == f"{FIELD}: fetching the URL timed out"
    assert exc.value.param == FIELD
    assert time.monotonic() - started < 3


async def test_total_deadline_covers_a_dripping_body(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(BadRequest, match="timed out"):
        await fetch_public(
            server.url("/drip"), field=FIELD, max_bytes=1_000_000, timeout=0.6, allow_private=True
        )
    assert time.monotonic() - started < 3


async def test_connection_refused_is_a_bad_request() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BadRequest, match="could not fetch") as exc:
        await fetch_public(f"http://127.0.0.1:{port}/", field=FIELD, max_bytes=1000, allow_private=True)
    assert exc.value.param == FIELD
