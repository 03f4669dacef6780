"""The images engine called directly: preparing jobs from bodies and uploads, failover, records."""

from __future__ import annotations

import asyncio
import base64

import orjson
import pytest

from studio.core.errors import BadRequest, NotFound
from studio.core.images import EDITS, GENERATIONS
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.images import engine
from studio.models import Generation
from tests.gateway.catalog import model_entry
from tests.gateway.client_leaving import post_and_leave
from tests.gateway.images.conftest import png
from tests.providers.fake_text_vendor import Answer, FakeVendor, add_upstream, json_answer

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "http://engine-images.test/v1"
BACKUP = "http://engine-images-backup.test/v1"


def uri(color: str = "red", size=(24, 16)) -> str:
    return "data:image/png;base64," + base64.b64encode(png(color, size)).decode()


@pytest.fixture
async def vendors(catalog):
    fakes = []
    for base, priority in ((BASE, 30), (BACKUP, 20)):
        fake = FakeVendor(base)
        fake.mount()
        await add_upstream("openai", base, {"kappa-image-1": "gpt-image-unit"}, priority=priority)
        fakes.append(fake)
    yield fakes
    for fake in fakes:
        fake.unmount()


def who(account) -> Principal:
    return Principal(user_id=account.user.id, key_id=account.key.id)


def test_family_of():
    assert engine.family_of(model_entry("kappa-image-1")) == "standard"
    assert engine.family_of(model_entry("sigma-5.0-image")) == "layered"
    assert engine.family_of(model_entry("delta-3.1-flash-image")) == "native"


async def test_generation_model_checks(alice):
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_generation(who(alice), {"prompt": "x"})
    assert exc.value.param == "model"
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_generation(who(alice), {"model": "omicron-4-mini", "prompt": "x"})
    assert (exc.value.param, exc.value.code) == ("model", "model_not_supported")
    with pytest.raises(NotFound):
        await engine.prepare_generation(who(alice), {"model": "nope", "prompt": "x"})
    with pytest.raises(BadRequest) as exc:  # sigma has no edits route
        await engine.prepare_edit(who(alice), {"model": "sigma-5.0-image", "prompt": "x", "images": []})
    assert exc.value.code == "model_not_supported"


async def test_generation_with_reference_images_where_offered(alice):
    job = await engine.prepare_generation(who(alice), {"model": "sigma-5.0-image", "prompt": "x",
                                                       "image": [uri("red"), uri("blue")], "size": "2K"})
    assert job.image_as_list and [i.field for i in job.images] == ["image[0]", "image[1]"]
    assert "image" not in job.fields and job.fields["size"] == "2K"
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_generation(who(alice), {"model": "kappa-image-1", "prompt": "x", "image": uri()})
    assert (exc.value.param, exc.value.code) == ("image", "unsupported_parameter")
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_generation(who(alice), {"model": "sigma-5.0-image", "layer_decomposition": True,
                                                     "image": [uri(), uri()]})
    assert exc.value.param == "image"


async def test_edit_from_json_and_from_uploads(alice):
    job = await engine.prepare_edit(who(alice), {"model": "kappa-image-1", "prompt": "bluer",
                                                 "images": [{"image_url": uri()}], "mask": {"image_url": uri("white")},
                                                 "background": "transparent"})
    assert job.route == EDITS and job.mask.field == "mask.image_url" and job.fields["background"] == "transparent"
    uploads = {"image[]": [(png("red"), "a.png"), (png("blue"), "b.png")], "background": [(png("gray"), "bg.png")]}
    multipart = await engine.prepare_edit(who(alice), {"model": "kappa-image-1", "prompt": "frame it"}, uploads)
    assert [i.field for i in multipart.images] == ["image[0]", "image[1]"]
    assert multipart.backdrop.field == "background" and "background" not in multipart.fields


async def test_edit_refusals_name_the_field(alice):
    base = {"model": "kappa-image-1", "prompt": "x"}
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_edit(who(alice), base)
    assert (exc.value.param, exc.value.code) == ("images", "missing_required_parameter")
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_edit(who(alice), {**base, "images": uri()})
    assert exc.value.param == "images"
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_edit(who(alice), {**base, "images": [{"image_url": uri()}],
                                               "mask": {"image_url": uri("white", (10, 10))}})
    assert exc.value.code == "invalid_mask_size"
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_edit(who(alice), {"model": "delta-3.1-flash-lite-image", "prompt": "x",
                                               "images": [{"image_url": uri()}] * 4})
    assert (exc.value.param, exc.value.code) == ("images", "too_many_images")
    with pytest.raises(BadRequest) as exc:
        await engine.prepare_edit(who(alice), {"model": "delta-3.1-flash-image", "prompt": "x",
                                               "images": [{"image_url": uri()}], "mask": {"image_url": uri()}})
    assert exc.value.param == "mask"


async def test_run_fails_over_and_records(alice, vendors):
    primary, backup = vendors
    primary.answer = lambda request: json_answer({"error": {"message": "overloaded"}}, status=503)
    picture = base64.b64encode(png("teal")).decode()
    backup.answer = lambda request: json_answer({"created": 1, "data": [{"b64_json": picture}],
                                                "usage": {"total_tokens": 9}})
    job = await engine.prepare_generation(who(alice), {"model": "kappa-image-1", "prompt": "a kite"})
    result, record = await engine.run(who(alice), job)
    assert result.items[0].b64 == picture and len(primary.requests) == 1 and len(backup.requests) == 1
    assert record.submitted and record.usage == {"total_tokens": 9}
    await recording.drain()
    generation = await Generation.objects.aget(id=record.generation_id)
    assert generation.status == "succeeded" and generation.route == GENERATIONS
    assert generation.upstream_id == record.upstream_id


@pytest.mark.parametrize("stall", [False, True], ids=["reading", "stalled"])
async def test_a_stream_the_client_leaves_stops_its_upstream_call_before_the_request_ends(alice, vendors, stall):
    """The vendor's connection is closed while the request is ending (it stops generating and
    billing at once), not when the garbage collector finds the relay."""
    release, vendor_tasks = asyncio.Event(), []
    partial = orjson.dumps({"type": "image_generation.partial_image", "b64_json": base64.b64encode(png()).decode(),
                            "partial_image_index": 0, "size": "1024x1024", "quality": "low",
                            "background": "opaque", "output_format": "png"})

    async def partial_then_wait(request: dict):
        vendor_tasks.append(asyncio.current_task())
        yield b"event: image_generation.partial_image\ndata: " + partial + b"\n\n"
        await release.wait()  # the vendor keeps the stream open until the test ends

    vendors[0].answer = lambda request: Answer(content_type="text/event-stream", chunks=partial_then_wait(request))
    body = {"model": "kappa-image-1", "prompt": "a comet", "stream": True, "partial_images": 1}
    try:
        await post_and_leave("/v1/images/generations", alice, body, b"partial_image_index", stall=stall)
        [task] = vendor_tasks
        assert task.done() or task.cancelling()  # already on its way out when the request ended
    finally:
        release.set()
    await recording.drain()
