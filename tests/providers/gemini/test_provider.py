"""The Gemini protocol adapter against a fake vendor at the HTTP boundary (reference §1)."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import base64

import orjson
import pytest

from studio.gateway import recording
from tests.api.native.native_fakes import (  # noqa: F401
    Reply,
    error_reply,
    fake_gemini,
    image_frame,
    json_reply,
    make_vendors,
    sse_reply,
    text_frame,
    with_cost,
)

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"
URL = f"/v1/models/{MODEL}:generateContent"
STREAM_URL = f"/v1/models/{MODEL}:streamGenerateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "a red kite"}]}]}


# -- requests ---------------------------------------------------------------------------------

async def test_buffered_call_uses_vendor_path_header_and_body(client, alice, fake_gemini):
    fake = fake_gemini["fake-gemini"]
    fake.queue(json_reply(image_frame(base64.b64encode(b"\x89PNG\r\n\x1a\n").decode())))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    seen = fake.requests[0]
    assert seen.path == "/v1beta/models/gemini-3.1-flash-image-preview:generateContent" and seen.query == ""
    assert seen.headers["x-goog-api-key"] == "AIza-fake-gemini-credential"
    assert alice.secret not in str(seen.headers)  # the client's key never goes upstream
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == BODY


async def test_stream_call_uses_alt_sse_and_relays_every_frame(client, alice, fake_gemini):
    fake = fake_gemini["fake-gemini"]
    frames = [text_frame("thinking", thought=True), text_frame("Here", thoughtSignature="c2lnQQ=="),
              image_frame(base64.b64encode(b"img").decode())]
    fake.queue(sse_reply(*frames))
    response = await client.post(STREAM_URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    assert fake.requests[0].path.endswith(":streamGenerateContent") and fake.requests[0].query == "alt=sse"
    relayed = [orjson.loads(line[6:]) for line in response.text.split("\n") if line]
    named = [{**frame, "modelVersion": MODEL} for frame in frames]  # named after the platform model
    assert relayed == [*named[:-1], with_cost(named[-1])]


# -- vendor errors ----------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "status", "google_status"), [
    (error_reply(400, "INVALID_ARGUMENT", "Unsupported aspect ratio"), 400, "INVALID_ARGUMENT"),
    (error_reply(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                 [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]),
     502, "UNAVAILABLE"),
    (error_reply(403, "PERMISSION_DENIED", "The caller does not have permission"), 502, "UNAVAILABLE"),
    (error_reply(404, "NOT_FOUND", "models/x is not found for API version v1beta"), 502, "UNAVAILABLE"),
    (error_reply(500, "INTERNAL", "An internal error has occurred"), 502, "UNAVAILABLE"),
    (error_reply(503, "UNAVAILABLE", "The model is overloaded"), 503, "UNAVAILABLE"),
    (error_reply(504, "DEADLINE_EXCEEDED", "Deadline exceeded"), 504, "DEADLINE_EXCEEDED"),
    (Reply(502, [b"<html>bad gateway</html>"], content_type="text/html"), 503, "UNAVAILABLE"),
])
@pytest.mark.parametrize("url", [URL, STREAM_URL])
async def test_vendor_errors_become_typed_native_errors(client, alice, fake_gemini, reply, status, google_status,
                                                         url):
    fake_gemini["fake-gemini"].queue(reply)
    response = await client.post(url, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and error["status"] == google_status and error["message"]
    if status == 400:
        assert "Unsupported aspect ratio" in error["message"]
    await recording.drain()
    from studio.models import Generation
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.status == "failed" and generation.error["status"] == status


async def test_rate_limit_carries_retry_after(client, alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(error_reply(429, "RESOURCE_EXHAUSTED", "Quota exceeded", [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "41s"}]))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "41"
    assert response.json()["error"]["status"] == "RESOURCE_EXHAUSTED"


@pytest.fixture
def slow_gemini(catalog):
    """A fake vendor on a real loopback port (timeouts live in the network transport)."""
    import threading
    import time

    import uvicorn

    from studio.gateway import snapshot
    from studio.models import Upstream
    from tests.api.native.native_fakes import FakeGemini
    from tests.conftest import free_port

    fake = FakeGemini()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(fake, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    Upstream.objects.filter(name="Sandbox").update(enabled=False)
    row = Upstream(name="slow", protocol="gemini", base_url=f"http://127.0.0.1:{port}", timeout=0.3,
                   model_map={MODEL: "gemini-3.1-flash-image-preview"})
    row.credential = "AIza-slow"
    row.save()
    snapshot.invalidate()
    yield fake
    server.should_exit = True
    thread.join(timeout=5)


@pytest.mark.parametrize("url", [URL, STREAM_URL])
async def test_upstream_timeout_is_504(client, alice, slow_gemini, url):
    slow_gemini.queue(Reply(200, [b"{}"], delay=1.5))
    response = await client.post(url, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 504
    assert response.json()["error"]["status"] == "DEADLINE_EXCEEDED"


async def test_empty_stream_is_an_upstream_error_not_an_empty_200(client, alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(Reply(200, [b": keepalive\n\n"], content_type="text/event-stream"))
    response = await client.post(STREAM_URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 502


async def test_non_json_200_is_an_upstream_error(client, alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(Reply(200, [b"<html>oops</html>"], content_type="text/html"))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 502


@pytest.mark.parametrize("body", [b'{"candidates": [{"content": <html>oops', b'{"candidates": [{"content": {"parts"'])
async def test_a_200_that_is_cut_short_or_not_json_is_an_upstream_error_and_costs_nothing(client, alice, fake_gemini,
                                                                                           body):
    from studio.models import UsageRecord

    fake_gemini["fake-gemini"].queue(Reply(200, [body]))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 502 and response.json()["error"]["code"] == 502, response.text
    await recording.drain()
    assert not await UsageRecord.objects.filter(cost_usd__gt=0).aexists()


async def test_error_event_after_first_frame_ends_stream_with_error_frame(client, alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(sse_reply(
        text_frame("thinking", thought=True),
        {"error": {"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"}},
    ))
    response = await client.post(STREAM_URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    frames = [orjson.loads(line[6:]) for line in response.text.split("\n") if line]
    assert frames[0]["candidates"][0]["content"]["parts"][0]["thought"] is True
    assert frames[-1]["error"]["status"] == "UNAVAILABLE" and frames[-1]["error"]["code"] == 503


# -- HTTP 200 without an image ------------------------------------------------------------------

BLOCKED = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
           "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}, "modelVersion": "m", "responseId": "r"}
IMAGE_SAFETY = {"candidates": [{"finishReason": "IMAGE_SAFETY", "index": 0}], "modelVersion": "m"}
NO_IMAGE = {"candidates": [{"content": {"role": "model", "parts": [{"text": "I cannot draw that."}]},
                            "finishReason": "NO_IMAGE", "index": 0}], "modelVersion": "m"}


@pytest.mark.parametrize(("answer", "reason"), [(BLOCKED, "PROHIBITED_CONTENT"), (IMAGE_SAFETY, "IMAGE_SAFETY"),
                                                (NO_IMAGE, "NO_IMAGE")])
@pytest.mark.parametrize("streamed", [False, True])
async def test_200_without_image_is_passed_on_and_recorded_blocked(client, alice, fake_gemini, answer, reason,
                                                                   streamed):
    from studio.models import Asset, Generation

    fake_gemini["fake-gemini"].queue(sse_reply(answer) if streamed else json_reply(answer))
    response = await client.post(STREAM_URL if streamed else URL, json=BODY,
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    received = orjson.loads(response.text[6:]) if streamed else response.json()
    assert received == {**answer, "modelVersion": MODEL}  # as the vendor sent it, named after the platform model
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.status == "blocked" and generation.finish_reason == reason
    assert not await Asset.objects.filter(generation=generation).aexists()
