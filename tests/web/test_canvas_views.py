"""The canvas endpoint: jobs it starts (mask stored as its own asset, only the masked area changed)
and the 4xx answers that name the field."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from django.test import AsyncClient
from PIL import Image, ImageChops, ImageDraw

from studio.gateway.images import masks
from studio.gateway.jobs.base import wait_for_running_jobs
from tests.web.library_factories import make_image

pytestmark = pytest.mark.django_db(transaction=True)


def layer(size=(64, 64), box: tuple | None = (16, 16, 40, 40)) -> str:
    picture = Image.new("RGBA", size, (0, 0, 0, 0))
    if box is not None:
        ImageDraw.Draw(picture).rectangle(box, fill=(255, 0, 0, 255))
    return "data:image/png;base64," + base64.b64encode(masks.png_bytes(picture)).decode()


def source_png() -> bytes:
    picture = Image.new("RGB", (64, 64), (20, 120, 200))
    ImageDraw.Draw(picture).line((0, 0, 63, 63), fill=(255, 255, 255), width=3)
    return masks.png_bytes(picture)


async def post(client: AsyncClient, url: str, body: dict):
    return await client.post(url, orjson.dumps(body), content_type="application/json")


async def signed_in(user) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


@pytest.fixture
def source(alice):
    return make_image(alice.user, "a blue card", data=source_png())


async def test_inpaint_job_keeps_the_mask_as_its_own_asset(alice, source):
    from studio.models import Asset, Generation

    client = await signed_in(alice.user)
    response = await post(client, f"/canvas/{source.id}/edit",
                          {"model": "kappa-image-1", "prompt": "a yellow star", "mode": "inpaint", "mask": layer()})
    assert response.status_code == 201, response.content
    answer = response.json()
    await wait_for_running_jobs()
    generation = await Generation.objects.aget(id=answer["job"])
    assert generation.status == "succeeded"
    mask = await Asset.objects.aget(id=answer["mask"])
    assert mask.is_input and mask.metadata["role"] == "mask" and mask.metadata["generation"] == answer["job"]
    output = await Asset.objects.filter(generation_id=generation.id, is_input=False).afirst()
    with output.file.open("rb") as handle:
        result = Image.open(io.BytesIO(handle.read())).convert("RGB")
    original = Image.open(io.BytesIO(source_png())).convert("RGB")
    outside = ImageChops.difference(result, original)
    outside.paste(0, (16, 16, 41, 41))
    assert outside.getbbox() is None
    assert ImageChops.difference(result.crop((18, 18, 38, 38)), original.crop((18, 18, 38, 38))).getbbox()
    events = [e["type"] for e in generation.events]
    assert events[0] == "job.started" and events[-1] == "job.completed"


@pytest.mark.parametrize("body, status, param", [
    ({"model": "delta-3.1-flash-image", "mode": "inpaint"}, 400, "mode"),
    ({"model": "kappa-image-1", "mode": "inpaint", "mask": ""}, 400, "mask"),
    ({"model": "kappa-image-1", "mode": "inpaint", "mask": layer(box=None)}, 400, "mask"),
    ({"model": "kappa-image-1", "mode": "paint"}, 400, "mode"),
    ({"model": "kappa-image-1", "mode": "outpaint", "frame": {"left": 0}}, 400, "frame"),
    ({"model": "kappa-image-1", "mode": "outpaint", "frame": {"left": -3}}, 400, "frame.left"),
    ({"model": "kappa-image-1", "mode": "outpaint", "frame": {"left": 8},
      "background": {"kind": "colour", "value": "blue"}}, 400, "background.value"),
    ({"model": "kappa-image-1", "mode": "outpaint", "frame": {"left": 8},
      "background": {"kind": "asset", "value": "00000000-0000-0000-0000-000000000000"}}, 400, "background.value"),
    ({"model": "gpt-nothing", "mode": "edit"}, 404, "model"),
    ({"model": "kappa-image-1", "mode": "edit", "prompt": ""}, 400, "prompt"),
])
async def test_bad_submissions_name_the_field(alice, source, body, status, param):
    from studio.models import Asset

    client = await signed_in(alice.user)
    response = await post(client, f"/canvas/{source.id}/edit", {"prompt": "a star", **body})
    assert response.status_code == status
    assert response.json()["error"]["param"] == param
    assert not await Asset.objects.filter(metadata__role="mask").aexists()  # nothing left behind


async def test_someone_elses_image_is_not_found(alice, make_account, source):
    bob = make_account("bob")
    client = await signed_in(bob.user)
    response = await post(client, f"/canvas/{source.id}/edit",
                          {"model": "kappa-image-1", "prompt": "x", "mode": "inpaint", "mask": layer()})
    assert response.status_code == 404
    page = await client.get(f"/canvas/{source.id}/")
    assert page.status_code == 404


async def test_outpaint_with_a_colour_grows_the_canvas(alice, source):
    from studio.models import Asset, Generation

    client = await signed_in(alice.user)
    response = await post(client, f"/canvas/{source.id}/edit", {
        "model": "kappa-image-1", "prompt": "sea", "mode": "outpaint",
        "frame": {"left": 16, "top": 0, "right": 16, "bottom": 32}, "background": {"kind": "colour", "value": "#ff8800"}})
    assert response.status_code == 201, response.content
    await wait_for_running_jobs()
    generation = await Generation.objects.aget(id=response.json()["job"])
    assert generation.parameters["tool"]["frame"] == {"width": 96, "height": 96, "x": 16, "y": 0}
    assert generation.parent_id == source.generation_id
    output = await Asset.objects.filter(generation_id=generation.id, is_input=False).afirst()
    assert (output.width, output.height) == (96, 96)


def test_the_page_offers_edit_models_with_their_mask_support(web, alice, source):
    web.force_login(alice.user)
    page = web.get(f"/canvas/{source.id}/")
    assert page.status_code == 200
    models = {m["id"]: m for m in page.context["models"]}
    assert models["kappa-image-1"]["mask"] and models["kappa-image-1"]["outpaint"]
    assert not models["delta-3.1-flash-image"]["mask"]
    assert "sigma-5.0-image" not in models
