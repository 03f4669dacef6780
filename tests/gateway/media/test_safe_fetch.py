"""SSRF-safe fetching: address policy, URL checks, pinning, redirects, limits and deadlines.

Everything runs against a raw HTTP server on the loopback interface, reached with
``allow_private=True`` or with the address policy/resolver substituted — no real network.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import types
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpcore
import pytest

from studio.core.errors import BadRequest, PayloadTooLarge
from studio.gateway.media import safe_fetch as sf
from studio.gateway.media import url_safety
from studio.gateway.media.safe_fetch import (
    FetchedMedia,
    UnsafeURL,
    fetch_public,
)
from tests.gateway.media.resolvers import fake_resolver, only_public

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
    monkeypatch.setattr(url_safety, "is_public_address", only_public("127.0.0.1"))
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
    monkeypatch.setattr(url_safety, "is_public_address", only_public("127.0.0.1"))
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
    resolver = fake_resolver({"media.example": ["127.0.0.1", "10.255.255.1"]}, calls)
    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", resolver)
    monkeypatch.setattr(url_safety, "is_public_address", only_public("127.0.0.1"))

    got = await fetch_public(server.url("/ok", host="media.example"), field=FIELD, max_bytes=1000)
    assert got.data.startswith(b"\x89PNG")
    assert calls == ["media.example"]  # resolved once, by us; the HTTP client did not resolve again
    assert server.requests[-1]["host"] == f"media.example:{server.port}"  # Host header kept

    # A redirect to the same host is re-resolved and re-checked: the rebound answer is refused.
    calls.clear()
    server.requests.clear()
    resolver = fake_resolver({"media.example": ["127.0.0.1", "10.255.255.1"]}, calls)
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
        asyncio.get_running_loop(), "getaddrinfo", fake_resolver({"cdn.example": ["93.184.216.34"]}, calls)
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
