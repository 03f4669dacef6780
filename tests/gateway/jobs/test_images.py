"""Studio jobs on the images-API models: kappa-image-1 with streamed previews, the sigma extension's
sequential sets and layers, reference images, and what lands in the record."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from asgiref.sync import sync_to_async
from PIL import Image

from studio.gateway import recording
from studio.gateway.jobs.base import wait_for_running_jobs
from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Generation, UsageRecord
from tests.realtime.socket_helpers import connect, of_kind, run_job

pytestmark = pytest.mark.django_db(transaction=True)


def png(color: str = "red", size: tuple[int, int] = (64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


async def settle() -> None:
    await wait_for_running_jobs()
    await recording.drain()


async def test_kappa_streams_partial_previews_then_the_images(alice):
    socket = await connect(alice.user)
    job, events = await run_job(socket, {
        "model": "kappa-image-1", "prompt": "a lighthouse in a storm",
        "options": {"size": "1536x1024", "quality": "low", "output_format": "png", "n": 2, "partial_images": 2},
    })
    partials = of_kind(events, "job.partial")
    finals = of_kind(events, "job.image")
    assert [p["data"]["partial_index"] for p in partials] == [0, 1, 0, 1]
    assert len(finals) == 2 and all(f["data"]["width"] == 1536 and f["data"]["height"] == 1024 for f in finals)
    # Each preview comes before its image, and nothing carries image bytes inline.
    assert events.index(partials[1]) < events.index(finals[0]) < events.index(partials[2])
    assert all(len(str(e)) < 2000 for e in events)
    completed = events[-1]
    assert completed["type"] == "job.completed" and completed["data"]["images"] == 2
    assert completed["data"]["usage"]["total_tokens"] > 0 and completed["data"]["duration_ms"] > 0
    await socket.disconnect()
    await settle()

    generation = await Generation.objects.aget(id=job)
    assert generation.status == "succeeded" and generation.model_id == "kappa-image-1"
    assert generation.usage["total_tokens"] == completed["data"]["usage"]["total_tokens"]
    assert [e["seq"] for e in generation.events] == list(range(1, len(generation.events) + 1))
    outputs = [a async for a in Asset.objects.filter(generation_id=job, is_draft=False)]
    assert sorted(str(a.id) for a in outputs) == sorted(f["data"]["asset"] for f in finals)
    assert await Asset.objects.filter(generation_id=job, is_draft=True).acount() == 4
    assert await UsageRecord.objects.filter(model_id="kappa-image-1", images=2).acount() == 1


async def test_sigma_sequential_set_arrives_image_by_image(alice):
    socket = await connect(alice.user)
    job, events = await run_job(socket, {
        "model": "sigma-5.0-image", "prompt": "a set of 4 images: the four seasons in one valley",
        "options": {"size": "1K", "sequential": True, "max_images": 3, "watermark": True},
    })
    finals = of_kind(events, "job.image")
    failed = of_kind(events, "job.item_failed")
    assert [f["data"]["index"] for f in finals] == [0, 1, 2]
    assert failed == []  # max_images is an upper bound, as at the vendor: no invented per-item errors
    assert events[-1]["data"]["images"] == 3 and events[-1]["data"]["usage"]["generated_images"] == 3
    await socket.disconnect()
    await settle()
    generation = await Generation.objects.aget(id=job)
    assert generation.parameters["sequential_image_generation"] == "auto"
    assert generation.parameters["sequential_image_generation_options"] == {"max_images": 3}
    assert generation.parameters["watermark"] is True


async def test_sigma_layer_decomposition_reports_layers(alice):
    socket = await connect(alice.user)
    _job, events = await run_job(socket, {
        "model": "sigma-5.0-image", "prompt": "a poster with a title and a sun",
        "options": {"size": "1K", "layer_decomposition": True, "output_format": "png"},
    })
    layers = of_kind(events, "job.image")
    assert len(layers) >= 2
    assert layers[0]["data"]["z_index"] == 0
    assert all("bounding_box" in layer["data"] for layer in layers[1:])
    await socket.disconnect()
    await settle()


async def test_reference_image_from_the_gallery_drives_an_edit(alice):
    source = await sync_to_async(store_bytes)(png("blue", (512, 512)), "image/png", owner_id=alice.user.id)
    socket = await connect(alice.user)
    job, events = await run_job(socket, {
        "model": "kappa-image-1", "prompt": "make it look like a watercolor",
        "options": {"size": "1024x1024"}, "inputs": [str(source.id)],
    })
    assert events[-1]["type"] == "job.completed" and events[-1]["data"]["images"] == 1
    await socket.disconnect()
    await settle()
    generation = await Generation.objects.aget(id=job)
    assert generation.parameters["inputs"] == [{"role": "image", "field": "images[0].file_id"}]


async def test_native_job_sends_reference_images_inline(alice):
    source = await sync_to_async(store_bytes)(png("green", (300, 200)), "image/png", owner_id=alice.user.id)
    socket = await connect(alice.user)
    _job, events = await run_job(socket, {
        "model": "delta-3.1-flash-lite-image", "prompt": "turn this into a night scene",
        "inputs": [str(source.id)], "options": {"seed": 42},
    })
    finals = [e for e in of_kind(events, "job.image") if not e["data"]["thought"]]
    assert len(finals) == 1 and events[-1]["type"] == "job.completed"
    await socket.disconnect()
    await settle()


async def test_too_many_references_are_refused_naming_the_field(alice):
    ids = [str((await sync_to_async(store_bytes)(png(c), "image/png", owner_id=alice.user.id)).id)
           for c in ("red", "green", "blue", "white")]
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "generate", "ref": "x", "model": "delta-3.1-flash-lite-image",
                               "prompt": "combine", "inputs": ids})
    answer = await socket.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and answer["data"]["param"] == "inputs"
    assert "at most 3" in answer["data"]["message"]
    await socket.disconnect()


async def test_someone_elses_image_cannot_be_used_as_input(alice, make_account):
    bob = await sync_to_async(make_account)("bob")
    theirs = await sync_to_async(store_bytes)(png(), "image/png", owner_id=bob.user.id)
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "generate", "ref": "x", "model": "kappa-image-1", "prompt": "p",
                               "inputs": [str(theirs.id)]})
    answer = await socket.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and answer["data"]["param"] == "inputs[0]"
    await socket.disconnect()


async def test_bad_option_is_refused_with_the_field(alice):
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "generate", "ref": "x", "model": "kappa-image-1", "prompt": "p",
                               "options": {"size": "999x999"}})
    answer = await socket.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and answer["data"]["param"] == "size"
    await socket.disconnect()


async def test_stored_outputs_are_served_at_their_urls(alice, web):
    socket = await connect(alice.user)
    _job, events = await run_job(socket, {"model": "kappa-image-1", "prompt": "a cat",
                                          "options": {"size": "1024x1024", "output_format": "jpeg"}})
    await socket.disconnect()
    await settle()
    url = of_kind(events, "job.image")[0]["data"]["url"]
    await sync_to_async(web.force_login)(alice.user)
    response = await sync_to_async(web.get)(url)
    assert response.status_code == 200
    data = b"".join([chunk async for chunk in response.streaming_content])
    assert Image.open(io.BytesIO(data)).size == (1024, 1024)


async def test_events_unknown_actions_and_compare_need_two_models(alice):
    socket = await connect(alice.user)
    await socket.send_json_to({"action": "compare", "ref": "c", "models": ["kappa-image-1"], "prompt": "p"})
    answer = await socket.receive_json_from(timeout=5)
    assert answer["type"] == "job.rejected" and answer["data"]["param"] == "models"
    await socket.send_json_to({"action": "fly"})
    assert (await socket.receive_json_from(timeout=5))["type"] == "error"
    await socket.disconnect()



async def test_a_started_job_adds_its_prompt_to_the_history(alice):
    from studio.models import Prompt

    socket = await connect(alice.user)
    await run_job(socket, {"model": "kappa-image-1", "prompt": "a teapot shaped like a whale",
                           "options": {"size": "1024x1024"}})
    await run_job(socket, {"model": "kappa-image-1", "prompt": "a teapot shaped like a whale",
                           "options": {"size": "1024x1024"}})
    await socket.disconnect()
    await settle()
    prompt = await Prompt.objects.aget(owner_id=alice.user.id, text="a teapot shaped like a whale")
    assert prompt.use_count == 2 and not prompt.saved


async def test_the_finished_job_carries_the_cost_its_usage_record_keeps(alice):
    from django.utils import timezone

    from studio.models import Price

    await Price.objects.acreate(model_id="kappa-image-1", effective_from=timezone.now(), per_image={"*": "0.04"})
    socket = await connect(alice.user)
    job, events = await run_job(socket, {
        "model": "kappa-image-1", "prompt": "two lanterns",
        "options": {"size": "1024x1024", "quality": "low", "output_format": "png", "n": 2},
    })
    await socket.disconnect()
    await settle()
    completed = events[-1]["data"]
    generation = await Generation.objects.aget(id=job)
    assert completed["cost_usd"] == "0.08"
    assert generation.cost_usd == Decimal("0.08")
    assert (await UsageRecord.objects.aget(model_id="kappa-image-1")).cost_usd == Decimal("0.08")
