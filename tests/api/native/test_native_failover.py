"""Failover between upstreams serving one model: only before anything reached the client."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import base64

import orjson
import pytest

from studio.gateway import recording
from tests.api.native.native_fakes import (  # noqa: F401
    error_reply,
    image_frame,
    json_reply,
    sse_reply,
    text_frame,
    two_geminis,
    with_cost,
)

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"
URL = f"/v1/models/{MODEL}:generateContent"
STREAM_URL = f"/v1/models/{MODEL}:streamGenerateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "a red kite"}]}]}
IMAGE = base64.b64encode(b"\x89PNG\r\n\x1a\n-backup").decode()


def frames_of(text: str) -> list[dict]:
    return [orjson.loads(line[6:]) for line in text.split("\n") if line]


@pytest.mark.parametrize("failure", [
    error_reply(429, "RESOURCE_EXHAUSTED", "quota"),
    error_reply(500, "INTERNAL", "boom"),
    error_reply(503, "UNAVAILABLE", "overloaded"),
    error_reply(404, "NOT_FOUND", "model retired"),
])
@pytest.mark.parametrize("streamed", [False, True])
async def test_retryable_failure_moves_to_the_next_upstream(client, alice, two_geminis, failure, streamed):
    from studio.models import Generation

    two_geminis["primary"].queue(failure)
    answer = image_frame(IMAGE)
    two_geminis["backup"].queue(sse_reply(answer) if streamed else json_reply(answer))
    response = await client.post(STREAM_URL if streamed else URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200, response.text
    received = frames_of(response.text)[0] if streamed else response.json()
    named = {**answer, "modelVersion": MODEL}  # named after the platform model
    assert received == (with_cost(named) if streamed else named)
    assert len(two_geminis["primary"].requests) == 1 and len(two_geminis["backup"].requests) == 1
    assert two_geminis["backup"].requests[0].body == two_geminis["primary"].requests[0].body
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.upstream_id == two_geminis.upstreams["backup"].id


@pytest.mark.parametrize("streamed", [False, True])
async def test_connection_drop_before_any_frame_fails_over(client, alice, two_geminis, streamed):
    from tests.api.native.native_fakes import Reply

    two_geminis["primary"].queue(Reply(200, [b"data: {\"cand"], content_type="text/event-stream", break_after=0))
    two_geminis["backup"].queue(sse_reply(image_frame(IMAGE)) if streamed else json_reply(image_frame(IMAGE)))
    response = await client.post(STREAM_URL if streamed else URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    assert len(two_geminis["backup"].requests) == 1


async def test_client_errors_do_not_fail_over(client, alice, two_geminis):
    two_geminis["primary"].queue(error_reply(400, "INVALID_ARGUMENT", "Unable to process input image."))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400
    assert "Unable to process input image" in response.json()["error"]["message"]
    assert two_geminis["backup"].requests == []


async def test_failure_after_first_frame_never_switches_upstream(client, alice, two_geminis):
    from studio.models import Generation

    two_geminis["primary"].queue(sse_reply(text_frame("thinking", thought=True), image_frame(IMAGE), break_after=1))
    two_geminis["backup"].queue(sse_reply(image_frame(IMAGE)))
    response = await client.post(STREAM_URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    frames = frames_of(response.text)
    assert frames[0]["candidates"][0]["content"]["parts"][0]["text"] == "thinking"
    assert frames[-1]["error"]["code"] == 503  # the stream ends with the family's error frame
    assert len(frames) == 2
    assert two_geminis["backup"].requests == []  # never spliced with another upstream's answer
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.status == "failed" and generation.upstream_id == two_geminis.upstreams["primary"].id


async def test_all_upstreams_failing_returns_the_last_error(client, alice, two_geminis):
    two_geminis["primary"].queue(error_reply(503, "UNAVAILABLE", "overloaded"))
    two_geminis["backup"].queue(error_reply(429, "RESOURCE_EXHAUSTED", "quota", [{"retryDelay": "3s"}]))
    response = await client.post(URL, json=BODY, headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 429 and response.headers["retry-after"] == "3"


async def test_priority_then_weight_orders_the_upstreams(catalog):
    """Within one priority tier the weight splits traffic; a higher tier always goes first."""
    import random

    from studio.gateway import routing, snapshot
    from tests.api.native.native_fakes import make_vendors

    gen = make_vendors([("top", 10, 1), ("heavy", 5, 9), ("light", 5, 1)])
    next(gen)
    try:
        snap = await snapshot.get()
        rng = random.Random(7)
        orders = [[u.name for u in routing.candidates(snap, MODEL, rng)] for _ in range(400)]
        assert all(order[0] == "top" for order in orders)
        heavy_second = sum(order[1] == "heavy" for order in orders) / len(orders)
        assert 0.8 < heavy_second < 0.97
    finally:
        gen.close()
