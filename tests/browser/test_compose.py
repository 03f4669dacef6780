"""Compose in a real browser: pick gallery images, give each a role, get one picture whose
lineage shows the images it was made from."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in
from tests.web.library_factories import make_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FINAL = ".job figure.final img"


@pytest.mark.parametrize("model", ["delta-3.1-flash-image", "kappa-image-1"])
def test_compose_two_gallery_images(page, live_asgi, alice, model):
    cat = make_image(alice.user, "a ginger cat", minutes_ago=2)
    room = make_image(alice.user, "a green living room", minutes_ago=1)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/compose/")
    page.get_by_role("button", name="Add: a ginger cat").click()
    page.get_by_role("button", name="Add: a green living room").click()
    page.get_by_label("Image 1 · what to take from it").fill("the cat")
    page.get_by_label("Image 2 · what to take from it").fill("the room as background")
    page.get_by_label("Model").select_option(model)
    page.get_by_label("Prompt").fill("the cat asleep in the room")
    page.get_by_role("button", name="Compose", exact=True).click()
    final = page.locator(FINAL)
    final.wait_for(timeout=30000)
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=15000)
    made_from = page.get_by_role("list", name="Made from").locator("img")
    assert made_from.evaluate_all("imgs => imgs.map(i => i.alt)") == [
        "Input 1: the cat", "Input 2: the room as background"]

    from studio.models import Generation

    generation = Generation.objects.get(outputs__id=final.get_attribute("data-asset"))
    assert generation.parameters["tool"] == {"name": "compose", "inputs": [
        {"asset": str(cat.id), "role": "the cat"}, {"asset": str(room.id), "role": "the room as background"}]}
    assert generation.parent_id == cat.generation_id
    # The result's detail page shows where it came from.
    page.goto(f"{live_asgi}/assets/{final.get_attribute('data-asset')}/")
    assert page.locator("#lineage-parents img").count() == 1


def test_compose_needs_a_role_for_each_image(page, live_asgi, alice):
    make_image(alice.user, "a ginger cat", minutes_ago=2)
    make_image(alice.user, "a green living room", minutes_ago=1)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/compose/")
    page.get_by_role("button", name="Add: a ginger cat").click()
    page.get_by_role("button", name="Add: a green living room").click()
    page.get_by_label("Image 1 · what to take from it").fill("the cat")
    page.get_by_label("Prompt").fill("the cat in the room")
    page.get_by_role("button", name="Compose", exact=True).click()
    page.locator("#form-status.error", has_text="say what to take from image 2").wait_for()
