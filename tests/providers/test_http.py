"""The process's upstream client: mounted base URLs reach their transport, the sandbox is
mounted by default, and one client serves an event loop until the mounts change."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from studio.providers import http


def answering(text: bytes):
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": text + scope["path"].encode()})
    return app


@pytest.fixture(autouse=True)
async def fresh_client():
    yield
    await http.close_client()


@pytest.fixture
def mounted():
    base = "https://mounted-vendor.test"
    http.mount(base, httpx.ASGITransport(app=answering(b"mounted:")))
    yield base
    http.unmount(base)


async def test_a_mounted_base_url_reaches_its_transport(mounted):
    client = http.get_client()
    response = await client.send_direct("GET", mounted + "/v1/models")
    await response.aread()
    assert response.content == b"mounted:/v1/models"


async def test_one_client_per_loop_until_the_mounts_change(mounted):
    first = http.get_client()
    assert http.get_client() is first
    http.mount("https://another.test", httpx.ASGITransport(app=answering(b"")))
    try:
        second = http.get_client()
        assert second is not first
        # The new client keeps the network pool (its open connections, closed with it) instead
        # of dropping it unclosed.
        assert second._network is first._network
        response = await second.send_direct("GET", "https://another.test/x")
        await response.aread()
        assert response.status_code == 200
    finally:
        http.unmount("https://another.test")
    assert http.get_client()._network is first._network


async def test_the_sandbox_is_mounted(settings):
    response = await http.get_client().send_direct("GET", settings.STUDIO_SANDBOX_BASE_URL + "/no-such-route")
    await response.aread()
    assert response.status_code == 404  # answered by the in-process sandbox, no socket


async def test_a_host_that_is_not_mounted_goes_to_the_network():
    async def vendor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nnetwork")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(vendor, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        response = await http.get_client().send_direct("GET", f"http://127.0.0.1:{port}/v1/models")
        await response.aread()
    finally:
        server.close()
    assert response.content == b"network"


async def test_close_client_makes_a_fresh_one():
    first = http.get_client()
    await http.close_client()
    assert first.is_closed and http.get_client() is not first


def test_default_timeout_follows_settings(settings):
    settings.STUDIO_UPSTREAM_TIMEOUT, settings.STUDIO_UPSTREAM_CONNECT_TIMEOUT = 42.0, 3.0
    timeout = http.default_timeout()
    assert (timeout.read, timeout.connect, timeout.pool) == (42.0, 3.0, 3.0)


async def test_each_url_is_routed_once_and_a_bounded_number_are_kept(mounted, monkeypatch):
    client = http.get_client()
    monkeypatch.setattr(http, "ROUTES_KEPT", 3)
    for path in ("/a", "/b", "/a", "/c", "/d", "/e"):
        response = await client.send_direct("GET", mounted + path)
        await response.aread()
        assert response.content == b"mounted:" + path.encode()  # each reaches the mounted vendor
    assert sorted(client._routes) == [mounted + "/a", mounted + "/b", mounted + "/c"]
    other = "https://not-mounted.test/v1/x"
    assert client._route(other)[1] is client._network
