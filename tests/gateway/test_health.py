"""Honest upstream failures: a model routed to a real vendor is never answered by the sandbox, and
every outcome updates the upstream's health (rows; breaker shared through Redis when there is one)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from asgiref.sync import sync_to_async

from studio.gateway import events, health, snapshot
from studio.sandbox.app import SandboxApp
from tests.providers.fake_text_vendor import Answer, FakeVendor, add_upstream, json_answer

pytestmark = pytest.mark.django_db(transaction=True)
DOWN = "https://down.test"
OVERLOADED = Answer(status=503, body=b'{"error": {"message": "vendor overloaded", "type": "server_error"}}')

# (route family, path, protocol the model's vendor speaks, model id, body, auth header name)
FAMILIES = [
    ("chat", "/v1/chat/completions", "openai", "omicron-4-mini",
     {"model": "omicron-4-mini", "messages": [{"role": "user", "content": "hi"}]}, "bearer"),
    ("chat-stream", "/v1/chat/completions", "openai", "omicron-4-mini",
     {"model": "omicron-4-mini", "stream": True, "messages": [{"role": "user", "content": "hi"}]}, "bearer"),
    ("messages", "/v1/messages", "anthropic", "epsilon-4.5",
     {"model": "epsilon-4.5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}, "x-api-key"),
    ("native", "/v1/models/delta-3.1-flash-image:generateContent", "gemini", "delta-3.1-flash-image",
     {"contents": [{"parts": [{"text": "a kite"}]}]}, "x-delta-api-key"),
    ("native-stream", "/v1/models/delta-3.1-flash-image:streamGenerateContent", "gemini", "delta-3.1-flash-image",
     {"contents": [{"parts": [{"text": "a kite"}]}]}, "x-delta-api-key"),
    ("images", "/v1/images/generations", "openai", "kappa-image-1",
     {"model": "kappa-image-1", "prompt": "a kite"}, "bearer"),
    ("video", "/v1/alpha/video/generations", "ark", "alpha-2.0",
     {"model": "alpha-2.0", "content": [{"type": "text", "text": "a kite"}]}, "bearer"),
]


def auth(kind: str, secret: str) -> dict[str, str]:
    if kind == "bearer":
        return {"Authorization": f"Bearer {secret}"}
    return {kind: secret, **({"epsilon-version": "2023-06-01"} if kind == "x-api-key" else {})}


@pytest.fixture
def sandbox_calls(monkeypatch):
    seen: list[str] = []
    original = SandboxApp.dispatch

    async def dispatch(self, request):
        seen.append(request.path)
        return await original(self, request)

    monkeypatch.setattr(SandboxApp, "dispatch", dispatch)
    return seen


@pytest.fixture
def down_vendor():
    vendor = FakeVendor(DOWN, answer=lambda request: OVERLOADED)
    vendor.mount()
    yield vendor
    vendor.unmount()


@pytest.mark.parametrize("family, path, protocol, model_id, body, header", FAMILIES, ids=[f[0] for f in FAMILIES])
async def test_a_failing_vendor_is_answered_with_an_error_never_sandbox_content(
        client, alice, down_vendor, sandbox_calls, family, path, protocol, model_id, body, header):
    await add_upstream(protocol, DOWN, {model_id: "vendor-model"})
    response = await client.post(path, json=body, headers=auth(header, alice.secret))
    assert down_vendor.requests, "the vendor was not called"
    assert sandbox_calls == []
    if response.status_code == 200:  # a stream that had started: the error is its only event
        assert family.endswith("stream") and "error" in response.text.lower()
        assert "vendor overloaded" in response.text or "overloaded" in response.text.lower()
    else:
        assert response.status_code >= 500 and "error" in response.json()


async def test_failover_goes_to_another_real_vendor_not_the_sandbox(client, alice, down_vendor, sandbox_calls):
    up = FakeVendor("https://up.test", answer=lambda request: json_answer({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "vendor-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "from the second vendor"},
                     "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}))
    up.mount()
    try:
        await add_upstream("openai", DOWN, {"omicron-4-mini": "vendor-model"}, priority=10)
        await add_upstream("openai", "https://up.test", {"omicron-4-mini": "vendor-model"}, priority=5)
        response = await client.post("/v1/chat/completions", json=FAMILIES[0][4],
                                     headers=auth("bearer", alice.secret))
    finally:
        up.unmount()
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "from the second vendor"
    assert sandbox_calls == [] and len(down_vendor.requests) == 1


async def test_failures_and_successes_update_the_upstream_row(client, alice, down_vendor):
    from studio.models import Upstream

    row = await add_upstream("openai", DOWN, {"omicron-4-mini": "vendor-model"})
    for _ in range(3):
        await client.post("/v1/chat/completions", json=FAMILIES[0][4], headers=auth("bearer", alice.secret))
    await health.drain()
    await row.arefresh_from_db()
    assert row.consecutive_failures == 3 and "vendor overloaded" in row.last_error and row.last_error_at
    assert row.breaker_open_until is not None  # three in a row open it
    down_vendor.answer = lambda request: json_answer({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "vendor-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "back"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
    response = await client.post("/v1/chat/completions", json=FAMILIES[0][4], headers=auth("bearer", alice.secret))
    assert response.status_code == 200  # the open breaker still lets the only upstream be tried
    await health.drain()
    row = await Upstream.objects.aget(id=row.id)
    assert row.consecutive_failures == 0 and row.last_success_at is not None and row.breaker_open_until is None


def test_a_model_mapped_to_a_disabled_vendor_is_not_given_back_to_the_sandbox(catalog):
    from studio.models import Upstream

    vendor = Upstream(name="v", protocol="openai", base_url="https://v.test", enabled=False,
                      model_map={"omicron-4-mini": "m"})
    vendor.save()
    snap = snapshot.load()
    assert "omicron-4-mini" not in snap.upstreams_for
    assert [u.name for u in snap.upstreams_for["epsilon-4.5"]] == ["Sandbox"]  # other models stay


redis_only = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")


@pytest.fixture
async def listening(settings):
    settings.STUDIO_REDIS_PREFIX = f"test-{os.getpid()}"
    ready = asyncio.Event()
    task = asyncio.get_running_loop().create_task(events.listen(ready))
    await asyncio.wait_for(ready.wait(), 10)
    yield
    task.cancel()
    client = events.async_client()
    await client.delete(*health._keys())
    await client.aclose()


@redis_only
async def test_a_breaker_opened_elsewhere_reaches_this_process_through_redis(catalog, listening):
    from studio.models import Upstream

    up = await sync_to_async(Upstream.objects.get)(name="Sandbox")
    # Another process's three failures, pushed to the shared counters.
    await health._push_shared({up.id: health.Outcomes(failures_after_success=3, last_error="x")})
    for _ in range(100):
        if health.view.is_open(up.id):
            break
        await asyncio.sleep(0.05)
    assert health.view.is_open(up.id) and health.view.failures[up.id] == 3
    await health._push_shared({up.id: health.Outcomes(succeeded=True)})
    for _ in range(100):
        if not health.view.is_open(up.id):
            break
        await asyncio.sleep(0.05)
    assert not health.view.is_open(up.id)


@redis_only
async def test_shared_failures_add_up_across_pushes_open_the_breaker_and_a_success_resets_them(listening):
    failures_key, breakers_key = health._keys()
    first = await health._push_shared({901: health.Outcomes(failures_after_success=2, last_error="x"),
                                       902: health.Outcomes(succeeded=True)})
    assert first == {901: (2, 0.0), 902: (0, 0.0)}  # under the threshold: no breaker yet
    second = await health._push_shared({901: health.Outcomes(failures_after_success=1, last_error="x")})
    count, open_until = second[901]
    assert count == 3 and open_until > time.time() + health.OPEN_SECONDS - 5  # 2 + 1 opens it
    client = events.loop_client()
    assert float(await client.hget(breakers_key, "901")) == open_until
    after = await health._push_shared({901: health.Outcomes(succeeded=True, failures_after_success=1)})
    assert after == {901: (1, 0.0)}  # a success, then one failure: counted from the success, closed
    assert await client.hget(breakers_key, "901") is None
    assert int(await client.hget(failures_key, "901")) == 1


@redis_only
async def test_a_config_change_published_elsewhere_drops_this_snapshot(catalog, listening):
    await snapshot.get()
    assert snapshot._state.snapshot is not None
    await asyncio.to_thread(events.publish_sync, {"kind": snapshot.INVALIDATE})
    for _ in range(100):
        if snapshot._state.snapshot is None:
            break
        await asyncio.sleep(0.05)
    assert snapshot._state.snapshot is None


@pytest.fixture
def fresh_view():
    health.reset()
    yield
    health.reset()


def test_a_healthy_upstreams_successes_are_written_once_per_interval_as_set(settings, monkeypatch, fresh_view):
    from types import SimpleNamespace

    settings.STUDIO_UPSTREAM_SUCCESS_NOTE_SECONDS = 30
    now = SimpleNamespace(t=1000)
    monkeypatch.setattr(health, "time", SimpleNamespace(monotonic=lambda: now.t, time=lambda: 1000.0))
    queued: list[tuple[int, str | None]] = []
    monkeypatch.setattr(health, "_reporter", lambda: SimpleNamespace(add=lambda *outcome: queued.append(outcome)))
    health.record(7, None)
    health.record(7, None)
    now.t += 29
    health.record(7, None)
    assert queued == [(7, None)]  # one write for a steady stream of successes
    now.t += 1
    health.record(7, None)
    health.record(8, None)  # another upstream has its own interval
    assert queued == [(7, None), (7, None), (8, None)]
    health.record(7, "HTTP 503")  # a failure is always written, and the next success too
    health.record(7, None)
    assert queued[-2:] == [(7, "HTTP 503"), (7, None)]
