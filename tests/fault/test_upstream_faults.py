"""Upstream faults at the HTTP boundary (a real loopback server): refused connections, 500s, a hang
before the first byte, a death mid-stream. Each is a typed error in the client's format, fails
over while nothing was sent, trips and half-opens the breaker, and is recorded once at most.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time

import orjson
import pytest

from tests.fault import tally
from tests.fault.conftest import is_family_error

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fault]

MODEL = "omicron-4-mini"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}]}
MESSAGES = {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "hello"}]}
COMPLETION = {"id": "c1", "object": "chat.completion", "created": 1, "model": "vendor-model",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


class FaultyVendor:
    """A loopback OpenAI-protocol vendor whose ``mode`` says how it fails: ``500``, ``hang``, ``die``
    (two stream chunks, then the connection is cut) or ``ok``; ``refuse`` closes its port."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests = 0
        vendor = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = self.request.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += self.request.recv(65536)
                vendor.requests += 1
                vendor.answer(self.request, orjson.loads(body or b"{}"))

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, sock: socket.socket, request: dict) -> None:
        if self.mode == "hang":
            time.sleep(5)
            return
        if self.mode == "500":
            payload = orjson.dumps({"error": {"message": "boom", "type": "server_error", "code": None}})
            sock.sendall(b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n"
                         b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(payload), payload))
            return
        if self.mode == "die":
            sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            for word in ("hel", "lo"):
                event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                         "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
                frame = b"data: " + orjson.dumps(event) + b"\n\n"
                sock.sendall(b"%x\r\n%s\r\n" % (len(frame), frame))
            sock.shutdown(socket.SHUT_RDWR)
            return
        payload = orjson.dumps(COMPLETION)
        sock.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                     b"connection: close\r\n\r\n%s" % (len(payload), payload))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def faulty(catalog, settings):
    from studio.gateway import snapshot
    from studio.models import Upstream

    settings.STUDIO_UPSTREAM_DEADLINES = {**settings.STUDIO_UPSTREAM_DEADLINES,
                                          "text": {"connect": 1.0, "first_byte": 0.5, "total": 3.0}}
    vendor, backup = FaultyVendor(), FaultyVendor()
    rows = []
    for name, server, priority in (("Faulty", vendor, 1000), ("Backup", backup, 500)):
        row = Upstream(name=name, protocol="openai", base_url=server.base_url, priority=priority,
                       model_map={MODEL: "vendor-model"})
        row.credential = f"sk-{name}"
        row.save()
        rows.append(row)
    snapshot.invalidate()
    yield vendor, rows[0], backup, rows[1]
    vendor.close()
    backup.close()


async def _use(row, vendor: FaultyVendor, mode: str) -> None:
    from studio.gateway import snapshot

    vendor.mode = mode
    base = f"http://127.0.0.1:{closed_port()}/v1" if mode == "refuse" else vendor.base_url
    if row.base_url != base:
        row.base_url = base
        await row.asave()
        snapshot.invalidate()


async def _usage_count() -> int:
    from studio.gateway import recording
    from studio.models import UsageRecord

    await recording.drain()
    return await UsageRecord.objects.acount()


@pytest.mark.parametrize("mode", ["refuse", "500", "hang"])
async def test_a_failing_upstream_fails_over_before_anything_is_sent(client, alice, faulty, mode):
    vendor, row, backup, _ = faulty
    await _use(row, vendor, mode)
    response = await client.post("/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {alice.secret}"})
    tally.add("fault scenarios")
    tally.add("requests tried")
    assert response.status_code == 200, response.text  # answered by the next real upstream
    assert response.json()["choices"][0]["message"]["content"] == "hi" and backup.requests == 1
    assert await _usage_count() == 1


EXPECTED = {"refuse": 503, "500": 502, "hang": 504}


@pytest.mark.parametrize("mode", ["refuse", "500", "hang"])
@pytest.mark.parametrize(("url", "body", "family", "headers"), [
    ("/v1/chat/completions", CHAT, "openai", lambda s: {"Authorization": f"Bearer {s}"}),
    ("/v1/messages", MESSAGES, "messages", lambda s: {"x-api-key": s, "anthropic-version": "2023-06-01"}),
])
async def test_with_no_other_upstream_each_fault_is_a_typed_error_and_trips_the_breaker(
        client, alice, faulty, mode, url, body, family, headers):
    from studio.gateway import health
    from studio.models import Upstream

    vendor, row, _, backup_row = faulty
    await Upstream.objects.filter(id=backup_row.id).aupdate(enabled=False)
    await _use(row, vendor, mode)
    for _ in range(health.FAILURES_TO_OPEN):
        response = await client.post(url, json=body, headers=headers(alice.secret))
        tally.add("fault scenarios")
        tally.add("requests tried")
        assert response.status_code == EXPECTED[mode], response.text
        assert is_family_error(family, response.json()), response.text
    assert health.view.is_open(row.id)
    assert await _usage_count() <= health.FAILURES_TO_OPEN  # a failed call is recorded once, or not at all

    # Half-open: once the open period is over the upstream is tried again, and a success closes it.
    health.view.open_until[row.id] = time.time() - 1
    await _use(row, vendor, "ok")
    response = await client.post(url, json=body, headers=headers(alice.secret))
    assert response.status_code == 200, response.text
    assert not health.view.is_open(row.id) and health.view.failures.get(row.id) is None


async def test_an_upstream_dying_mid_stream_ends_the_stream_with_an_error_recorded_once(client, alice, faulty):
    from studio.models import Upstream

    vendor, row, _, backup_row = faulty
    await Upstream.objects.filter(id=backup_row.id).aupdate(enabled=False)
    await _use(row, vendor, "die")
    response = await client.post("/v1/chat/completions", json={**CHAT, "stream": True},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    tally.add("fault scenarios")
    tally.add("requests tried")
    assert response.status_code == 200  # the stream had started: the error comes inside it
    frames = [line[6:] for line in response.text.split("\n") if line.startswith("data: ")]
    assert any('"hel"' in f for f in frames)
    errors = [orjson.loads(f) for f in frames if f.startswith("{") and '"error"' in f]
    assert errors and is_family_error("openai", errors[-1]), response.text
    records = await _usage_count()
    if records > 1:
        tally.add("records written twice")
    assert records <= 1
