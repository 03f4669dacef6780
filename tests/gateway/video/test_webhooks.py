"""Client webhooks sent directly: signed bodies, retries with backoff, SSRF rules, no redirects."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections import deque
from dataclasses import dataclass, field

import orjson
import pytest

from studio.gateway.video import webhooks
from studio.gateway.video.signing import webhook_secret

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Receiver:
    """A loopback HTTP endpoint answering from a queue of statuses (200 once the queue is empty)."""

    port: int = 0
    statuses: deque = field(default_factory=deque)
    received: list[dict] = field(default_factory=list)
    delay: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if self.delay:
            await asyncio.sleep(self.delay)
        self.received.append({"line": lines[0], "headers": headers, "body": body})
        status = self.statuses.popleft() if self.statuses else 200
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        writer.close()


@pytest.fixture
async def receiver(settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = True  # the receiver is on loopback
    settings.STUDIO_VIDEO_WEBHOOK_BACKOFF = 0
    state = Receiver()
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    yield state
    await webhooks.drain()
    server.close()


async def test_delivery_is_signed_with_the_keys_secret(receiver):
    body = orjson.dumps({"id": "cgt-1", "status": "succeeded"})
    secret = webhook_secret(4, 1)
    assert await webhooks.deliver(receiver.url, body, secret, task_id="cgt-1", status="succeeded")
    got = receiver.received[0]
    assert got["line"].startswith("POST /hooks ") and got["body"] == body
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert got["headers"][webhooks.SIGNATURE_HEADER.lower()] == expected
    assert got["headers"]["x-studio-task-id"] == "cgt-1"
    assert got["headers"]["x-studio-task-status"] == "succeeded"
    assert got["headers"]["content-type"] == "application/json"


async def test_failed_attempts_are_retried_until_success(receiver):
    receiver.statuses.extend([500, 503])
    assert await webhooks.deliver(receiver.url, b"{}", "whsec_x", task_id="t", status="running")
    assert len(receiver.received) == 3


async def test_gives_up_after_the_last_retry(receiver):
    receiver.statuses.extend([500] * 10)
    assert not await webhooks.deliver(receiver.url, b"{}", "whsec_x", task_id="t", status="running")
    assert len(receiver.received) == 1 + len([1.0, 4.0, 16.0, 60.0])


async def test_private_targets_are_refused_without_retrying(receiver, settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    assert not await webhooks.deliver(receiver.url, b"{}", "whsec_x", task_id="t", status="running")
    assert receiver.received == []


async def test_redirects_are_not_followed(receiver):
    receiver.statuses.extend([302] * 5)
    assert not await webhooks.deliver(receiver.url, b"{}", "whsec_x", task_id="t", status="running")
    assert all(r["line"].startswith("POST /hooks") for r in receiver.received)
