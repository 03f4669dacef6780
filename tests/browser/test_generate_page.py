"""Sign in, generate, and see the image appear as it streams; then find it in the gallery."""

from __future__ import annotations

import pytest

from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_generate_and_see_the_image(page, live_asgi, alice):
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model").select_option("delta-3-pro-image")
    # The controls follow the model's capabilities: the pro model has no 512 tier.
    sizes = page.locator("#image_size option").all_inner_texts()
    assert sizes == ["1K", "2K", "4K"]
    page.get_by_label("Prompt").fill("a golden sun over blue mountains")
    page.get_by_label("Aspect ratio").select_option("3:2")
    page.get_by_role("button", name="Generate").click()
    final = page.locator("#images figure.final img")
    final.wait_for(timeout=30000)
    assert page.locator("#thoughts .thought").count() >= 1  # thoughts streamed before the image
    size = final.evaluate("img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")
    assert size == [1264, 848]
    page.locator("#form-status", has_text="Done").wait_for(timeout=10000)
    assert "Here is your image" in page.locator("#text").inner_text()

    page.get_by_role("link", name="Gallery").click()
    tile = page.locator(".gallery .tile img").first
    tile.wait_for()
    assert "golden sun" in tile.get_attribute("alt")
