"""The native engine called directly: checks before any network, failover, bytes relayed unchanged."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import asyncio
import base64

import orjson
import pytest

from studio.core.errors import BadRequest, CapabilityMissing, NotFound, PermissionDenied, UpstreamRejected
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.native import engine
from tests.api.native.native_fakes import (  # noqa: F401
    Reply,
    error_reply,
    fake_gemini,
    image_frame,
    json_reply,
    sse,
    sse_reply,
    two_geminis,
    with_cost,
)
from tests.gateway.client_leaving import post_and_leave

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"
BODY = {"contents": [{"role": "user", "parts": [{"text": "a red kite"}]}], "vendorExtension": {"keep": True}}
IMAGE = base64.b64encode(b"\x89PNG\r\n\x1a\n-kite").decode()


def principal_of(account, allowed=None) -> Principal:
    return Principal(user_id=account.user.id, key_id=account.key.id, allowed_models=allowed)


async def test_prepare_checks_model_allowance_and_body_before_any_call(alice, two_geminis):
    who = principal_of(alice)
    with pytest.raises(NotFound) as exc:
        await engine.prepare(who, "no-such-model", BODY, stream=False)
    assert exc.value.param == "model"
    with pytest.raises(CapabilityMissing):
        await engine.prepare(who, "omicron-4-mini", BODY, stream=False)  # a text model has no native route
    with pytest.raises(PermissionDenied) as exc:
        await engine.prepare(principal_of(alice, frozenset({"delta-3-pro-image"})), MODEL, BODY, stream=False)
    assert exc.value.param == "model"
    with pytest.raises(BadRequest) as exc:
        await engine.prepare(who, MODEL, {"contents": []}, stream=False)
    assert exc.value.param == "contents"
    assert two_geminis["primary"].requests == [] and two_geminis["backup"].requests == []


async def test_prepare_orders_upstreams_by_priority_and_keeps_the_clients_bytes(alice, two_geminis):
    raw = b'{"contents":[{"role":"user","parts":[{"text":"a red kite"}]}],  "n":1.50}'
    call = await engine.prepare(principal_of(alice), MODEL, orjson.loads(raw), stream=False, raw=raw)
    assert [u.name for u in call.upstreams] == ["primary", "backup"]
    assert call.encoded is raw
    encoded = await engine.prepare(principal_of(alice), MODEL, BODY, stream=False)
    assert orjson.loads(encoded.encoded) == BODY


async def test_generate_fails_over_and_returns_the_upstream_bytes(alice, two_geminis):
    from studio.models import Generation

    two_geminis["primary"].queue(error_reply(503, "UNAVAILABLE", "overloaded"))
    answer = image_frame(IMAGE)
    two_geminis["backup"].queue(json_reply(answer))
    call = await engine.prepare(principal_of(alice), MODEL, BODY, stream=False)
    body = await engine.generate(call)
    assert orjson.loads(body) == {**answer, "modelVersion": MODEL}  # the platform model, not the vendor's
    sent = two_geminis["backup"].requests[0]
    assert sent.json() == BODY and "gemini-3.1-flash-image-preview" in sent.path
    assert call.record.upstream_id == two_geminis.upstreams["backup"].id and call.record.submitted
    await recording.drain()
    generation = await Generation.objects.aget(id=call.record.generation_id)
    assert generation.status == "succeeded" and generation.upstream_id == two_geminis.upstreams["backup"].id


async def test_generate_does_not_fail_over_on_the_clients_mistake(alice, two_geminis):
    from studio.models import Generation

    two_geminis["primary"].queue(error_reply(400, "INVALID_ARGUMENT", "bad prompt"))
    call = await engine.prepare(principal_of(alice), MODEL, BODY, stream=False)
    with pytest.raises(UpstreamRejected):
        await engine.generate(call)
    assert two_geminis["backup"].requests == []
    await recording.drain()
    generation = await Generation.objects.aget(id=call.record.generation_id)
    assert generation.status == "failed" and generation.error["status"] == 400


async def test_stream_yields_each_frame_and_records_first_byte(alice, two_geminis):
    from studio.models import Generation

    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sketching"}]}, "index": 0}]}
    two_geminis["primary"].queue(sse_reply(first, image_frame(IMAGE)))
    call = await engine.prepare(principal_of(alice), MODEL, BODY, stream=True)
    frames = [orjson.loads(bytes(f)) async for f in engine.stream(call)]
    assert frames == [first, with_cost({**image_frame(IMAGE), "modelVersion": MODEL})]
    assert call.record.first_byte_ms is not None and call.record.upstream_id == two_geminis.upstreams["primary"].id
    await recording.drain()
    generation = await Generation.objects.aget(id=call.record.generation_id)
    assert generation.status == "succeeded" and generation.text == "Sketching"
    assert generation.parameters["stream"] is True


async def test_stream_fails_over_before_the_first_frame(alice, two_geminis):
    two_geminis["primary"].queue(error_reply(500, "INTERNAL", "boom"))
    two_geminis["backup"].queue(sse_reply(image_frame(IMAGE)))
    call = await engine.prepare(principal_of(alice), MODEL, BODY, stream=True)
    frames = [f async for f in engine.stream(call)]
    assert len(frames) == 1 and call.record.upstream_id == two_geminis.upstreams["backup"].id


@pytest.mark.parametrize("stall", [False, True], ids=["reading", "stalled"])
async def test_a_stream_the_client_leaves_stops_its_upstream_call_before_the_request_ends(alice, fake_gemini, stall):
    """The vendor's connection is closed while the request is ending (it stops generating and
    billing at once), not when the garbage collector finds the relay."""
    vendor, release = fake_gemini["fake-gemini"], asyncio.Event()
    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sketching"}]}, "index": 0}]}
    vendor.queue(Reply(200, sse(first), content_type="text/event-stream", hold=release))
    try:
        await post_and_leave(f"/v1/models/{MODEL}:streamGenerateContent", alice, BODY, b"Sketching",
                             {"x-delta-api-key": alice.secret}, stall=stall, query="alt=sse")
        [task] = vendor.tasks
        assert task.done() or task.cancelling()  # already on its way out when the request ended
    finally:
        release.set()
    await recording.drain()
