"""Layers (stacked layers with bounding boxes) and sequential sets (filmstrip) in a real browser."""

from __future__ import annotations

import base64
import time

import httpx
import pytest
from django.db import OperationalError

from studio.models import Asset, Generation
from tests.browser.conftest import ARTIFACTS, sign_in
from tests.web.test_layers_views import shapes_png

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def generate(base_url: str, secret: str, body: dict) -> Generation:
    response = httpx.post(f"{base_url}/v1/images/generations", json=body, timeout=60,
                          headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 200, response.text
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # records are written off the response path
        try:
            generation = Generation.objects.filter(model_id=body["model"]).order_by("-created").first()
            if generation is not None and generation.outputs.count():
                return generation
        except OperationalError:  # the recorder is writing right now (SQLite locks the table)
            pass
        time.sleep(0.1)
    raise AssertionError("the generation was not recorded")


def test_layers_view_draws_boxes_where_the_layers_are(page, live_asgi, alice):
    image = "data:image/png;base64," + base64.b64encode(shapes_png()).decode()
    generation = generate(live_asgi, alice.secret, {"model": "sigma-5.0-image", "image": image, "output_format": "png",
                                                    "layer_decomposition": True, "response_format": "b64_json"})
    layers = [a for a in generation.outputs.order_by("index") if a.metadata.get("bounding_box")]
    assert len(layers) >= 2
    base = generation.outputs.get(metadata__z_index=0)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{base.id}/")
    page.get_by_role("link", name="Layers").click()
    page.wait_for_url(f"**/assets/{base.id}/layers")
    page.locator("#layer-stage img.base").evaluate("img => img.decode()")

    stage = page.locator("#layer-stage").bounding_box()
    scale = stage["width"] / base.width
    assert abs(stage["height"] - base.height * scale) < 1.5
    for layer in layers:
        x1, y1, x2, y2 = layer.metadata["bounding_box"]["absolute"]
        box = page.locator(f'.box[data-layer="{layer.id}"]')
        rect = box.bounding_box()
        assert abs(rect["x"] - stage["x"] - x1 * scale) < 1.5
        assert abs(rect["y"] - stage["y"] - y1 * scale) < 1.5
        assert abs(rect["width"] - (x2 - x1) * scale) < 1.5 and abs(rect["height"] - (y2 - y1) * scale) < 1.5
        assert box.locator(".box-label").inner_text() == layer.metadata["name"]
        # the layer's pixels sit exactly in its box
        pixels = page.locator(f'#layer-stage img.layer[data-layer="{layer.id}"]').bounding_box()
        assert abs(pixels["x"] - rect["x"]) < 1.5 and abs(pixels["width"] - rect["width"]) < 1.5

    red = next(a for a in layers if a.metadata["name"].lower().startswith("red"))
    red_img = page.locator(f'#layer-stage img.layer[data-layer="{red.id}"]')
    assert red_img.is_visible()
    page.get_by_label(f"Show {red.metadata['name']}").uncheck()
    assert not red_img.is_visible() and not page.locator(f'.box[data-layer="{red.id}"]').is_visible()
    page.get_by_role("button", name="Show all").click()
    assert red_img.is_visible()
    page.get_by_label("Show bounding boxes").uncheck()
    assert not page.locator("#layer-boxes").is_visible()
    page.get_by_label("Show bounding boxes").check()

    download = page.get_by_role("link", name=f"Download {red.metadata['name']}")
    with page.expect_download() as info:
        download.click()
    assert info.value.path().read_bytes().startswith(b"\x89PNG")


def test_sequential_set_strip_with_keyboard(page, live_asgi, alice):
    generation = generate(live_asgi, alice.secret, {
        "model": "sigma-5.0-image", "prompt": "a story in 3 panels of a fox and the moon", "size": "1K",
        "sequential_image_generation": "auto", "sequential_image_generation_options": {"max_images": 3},
        "response_format": "b64_json", "watermark": False})
    frames = list(Asset.objects.filter(generation=generation, is_input=False).order_by("index"))
    assert len(frames) == 3
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{frames[0].id}/")
    page.get_by_role("link", name="View the set").click()
    page.wait_for_url(f"**/assets/{frames[0].id}/set")
    image = page.locator("#set-image")
    assert page.locator("#filmstrip .frame").count() == 3
    assert page.locator("#set-position").inner_text() == "1 / 3"
    page.keyboard.press("ArrowRight")
    assert page.locator("#set-position").inner_text() == "2 / 3"
    assert image.get_attribute("src") == f"/assets/{frames[1].id}/file"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # wraps round to the last one
    assert page.locator("#set-position").inner_text() == "3 / 3"
    page.get_by_role("button", name="Image 2").click()
    assert page.locator("#set-position").inner_text() == "2 / 3"
    assert page.get_by_role("button", name="Image 2").get_attribute("aria-current") == "true"
    assert page.get_by_role("link", name="Open this image").get_attribute("href") == f"/assets/{frames[1].id}/"
    image.evaluate("img => img.decode()")
    image.click()
    lightbox = page.locator("#set-lightbox")
    assert lightbox.is_visible()
    assert page.locator("#lightbox-image").get_attribute("src") == f"/assets/{frames[1].id}/file"
    page.screenshot(path=str(ARTIFACTS / "test_sequential_set_lightbox.png"))
    page.keyboard.press("Escape")
    assert not lightbox.is_visible()
