"""A smoke benchmark: the gateway's cost per chat request stays within a generous multiple of
calling the upstream directly (a ratio of CPU time, never an absolute time)."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest

from studio.gateway import snapshot
from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = orjson.dumps({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1757000000, "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hello!"}}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
})
REQUESTS = 300
# The gateway authenticates, validates, routes and relays; the direct path does none of it.
# Measured here: about 3.5x. The bound only catches a hot path that regressed badly.
MAX_RATIO = 15


async def fake_openai(scope, receive, send) -> None:
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": ANSWER})


@pytest.fixture
def fake_upstream(catalog):
    from studio.models import Upstream

    Upstream.objects.filter(name="Sandbox").update(enabled=False)
    row = Upstream(name="fast-openai", protocol="openai", base_url="http://fast-openai.test",
                   model_map={"omicron-4-mini": "gpt-4o-mini"})
    row.credential = "sk-test"
    row.save()
    http.mount("http://fast-openai.test", StreamingASGITransport(fake_openai))
    snapshot.invalidate()
    yield
    http.unmount("http://fast-openai.test")


async def cpu_per_request(client: httpx.AsyncClient, url: str, headers: dict) -> float:
    body = {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(20):  # warm caches, connections and the snapshot
        assert (await client.post(url, json=body, headers=headers)).status_code == 200
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for _ in range(REQUESTS // 3):
            await client.post(url, json=body, headers=headers)
        best = min(best, (time.process_time() - started) / (REQUESTS // 3))
    return best


async def test_gateway_costs_a_bounded_multiple_of_the_direct_path(alice, fake_upstream, monkeypatch):
    from studio.asgi import application

    # Records are written by a background thread whose CPU would blur the measurement.
    monkeypatch.setattr("studio.gateway.recording.submit", lambda record, **_: None)
    async with httpx.AsyncClient(transport=StreamingASGITransport(fake_openai), base_url="http://fast-openai.test") as c:
        direct = await cpu_per_request(c, "/v1/chat/completions", {"Authorization": "Bearer sk-test"})
    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url="http://testserver") as c:
        gateway = await cpu_per_request(c, "/v1/chat/completions", {"Authorization": f"Bearer {alice.secret}"})
    ratio = gateway / direct
    print(f"direct {direct * 1e6:.0f} µs, gateway {gateway * 1e6:.0f} µs per request: ratio {ratio:.1f}")
    assert ratio < MAX_RATIO
