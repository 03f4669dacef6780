"""Layer stacks and sequential sets: what the engine stores, and the pages built from it."""

from __future__ import annotations

import base64
import io
import re

import pytest
from asgiref.sync import sync_to_async
from PIL import Image, ImageDraw

from studio.gateway import recording
from studio.gateway.media.storage import store_bytes
from studio.models import Asset, Generation, GenerationStatus
from studio.web.layers_views import stack_layers
from tests.web.library_factories import png

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/v1/images/generations"


def shapes_png() -> bytes:
    image = Image.new("RGB", (600, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((60, 80, 260, 230), fill=(220, 30, 30))
    draw.ellipse((380, 200, 540, 360), fill=(30, 60, 220))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def layered_generation(owner, boxes: dict[str, list[int]], size=(600, 400)) -> Generation:
    generation = Generation.objects.create(user=owner, model_id="sigma-5.0-image", route="images.generations",
                                           prompt="", status=GenerationStatus.SUCCEEDED,
                                           parameters={"layer_decomposition": True})
    store_bytes(png("white", size), "image/png", owner_id=owner.id, generation_id=generation.id,
                metadata={"z_index": 0, "name": "Base image"})
    for z, (name, (x1, y1, x2, y2)) in enumerate(boxes.items(), start=1):
        asset = store_bytes(png("red", (x2 - x1, y2 - y1)), "image/png", owner_id=owner.id,
                            generation_id=generation.id, metadata={
                                "z_index": z, "name": name, "bounding_box": {"absolute": [x1, y1, x2, y2]}})
        Asset.objects.filter(id=asset.id).update(index=z)
    return generation


async def test_engine_stores_layers_and_a_capped_set(client, alice):
    image = "data:image/png;base64," + base64.b64encode(shapes_png()).decode()
    response = await client.post(URL, json={"model": "sigma-5.0-image", "image": image, "layer_decomposition": True,
                                            "output_format": "png", "response_format": "b64_json"},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200, response.text
    sent = response.json()["data"]
    response = await client.post(URL, json={
        "model": "sigma-5.0-image", "prompt": "a story in 4 panels of a cat", "size": "1K",
        "sequential_image_generation": "auto", "sequential_image_generation_options": {"max_images": 2},
        "response_format": "b64_json", "watermark": False}, headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200, response.text
    await recording.drain()

    def check() -> None:
        layered = Generation.objects.get(parameters__layer_decomposition=True)
        assets = list(layered.outputs.filter(is_input=False).order_by("index"))
        assert len(assets) == len(sent) >= 3
        base, layers = stack_layers(assets)
        assert base.asset.metadata["z_index"] == 0 and (base.asset.width, base.asset.height) == (600, 400)
        red = next(layer for layer in layers if layer.name.lower().startswith("red"))
        assert red.box == tuple(next(s for s in sent if s.get("name") == red.name)["bounding_box"]["absolute"])
        assert (red.asset.width, red.asset.height) == (red.box[2] - red.box[0], red.box[3] - red.box[1])
        assert red.left == pytest.approx(100 * red.box[0] / 600) and red.width == pytest.approx(
            100 * (red.box[2] - red.box[0]) / 600)
        story = Generation.objects.get(parameters__sequential_image_generation="auto")
        assert story.outputs.filter(is_input=False).count() == 2
        # max_images caps the set as at the vendor: no per-item errors are invented for the panels past it
        # (an upstream's real per-item errors are stored, see tests/gateway/images/test_record.py).
        assert "item_errors" not in story.parameters

    await sync_to_async(check)()


def test_layers_page_draws_each_box_where_it_is_stored(web, alice):
    generation = layered_generation(alice.user, {"Red square": [60, 80, 261, 231], "Blue disc": [380, 200, 541, 361]})
    layer = generation.outputs.get(metadata__name="Blue disc")
    web.force_login(alice.user)
    page = web.get(f"/assets/{layer.id}/layers").content.decode()
    boxes = re.findall(r'class="box" data-layer="([^"]+)" data-box="([^"]+)"\s+style="left: ([\d.]+)%; top: ([\d.]+)%; '
                       r'width: ([\d.]+)%; height: ([\d.]+)%"', page)
    assert len(boxes) == 2
    _, box, left, top, width, height = next(b for b in boxes if b[0] == str(layer.id))
    assert box == "380,200,541,361"
    assert float(left) == pytest.approx(380 / 6, abs=1e-3) and float(top) == pytest.approx(50, abs=1e-3)
    assert float(width) == pytest.approx(161 / 6, abs=1e-3) and float(height) == pytest.approx(161 / 4, abs=1e-3)
    assert "Red square" in page and page.count("?download=1") == 3  # every layer, the base included
    detail = web.get(f"/assets/{layer.id}/").content.decode()
    assert f'href="/assets/{layer.id}/layers"' in detail


def test_grouped_pages_respect_visibility_and_kind(web, alice, make_account):
    generation = layered_generation(alice.user, {"Red": [0, 0, 10, 10]})
    asset = generation.outputs.first()
    bob = make_account("bob")
    web.force_login(bob.user)
    assert web.get(f"/assets/{asset.id}/layers").status_code == 404  # not bob's: looks missing
    web.force_login(alice.user)
    assert web.get(f"/assets/{asset.id}/set").status_code == 404  # a layer stack is not a set
    web.logout()
    assert web.get(f"/assets/{asset.id}/layers").status_code == 302  # sign in first


def test_set_strip_is_ordered_and_shows_item_errors(web, alice):
    generation = Generation.objects.create(
        user=alice.user, model_id="sigma-5.0-image", route="images.generations", prompt="four panels",
        status=GenerationStatus.SUCCEEDED, parameters={
            "sequential_image_generation": "auto",
            "item_errors": [{"index": 3, "code": "OutputImageSensitiveContentDetected", "message": "blocked"}]})
    ids = []
    for index, color in enumerate(["red", "green", "blue"]):
        asset = store_bytes(png(color), "image/png", owner_id=alice.user.id, generation_id=generation.id)
        Asset.objects.filter(id=asset.id).update(index=index)
        ids.append(str(asset.id))
    web.force_login(alice.user)
    page = web.get(f"/assets/{ids[1]}/set").content.decode()
    assert re.findall(r'data-file="/assets/([^/]+)/file"', page) == ids
    assert 'id="set-position">2 / 3' in page
    assert "Image 4: OutputImageSensitiveContentDetected — blocked" in page
    assert f'href="/assets/{ids[0]}/set"' in web.get(f"/assets/{ids[0]}/").content.decode()
