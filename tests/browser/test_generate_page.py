"""The Generate page in a real browser: live frames for each model family, compare (on a desktop and
on a phone), the star and download shortcuts, and a page reloaded mid-job that catches up from the
stored record. Every page here fails its test on a console error."""

from __future__ import annotations

import re
import time
from decimal import Decimal

import pytest

from tests.browser.conftest import PHONE, VIEWPORTS, no_sideways_scroll, open_on, open_page, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FINAL = ".job figure.final img"


def natural_size(locator) -> list[int]:
    return locator.evaluate("img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")


def test_sign_in_generate_native_with_live_frames(watched, live_asgi, alice):
    page, errors = watched
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("delta-3-pro-image")
    # The controls follow the model's capabilities: the pro model has no 512 tier, no n, a seed.
    assert page.locator("#opt-image_size option").all_inner_texts() == ["1K", "2K", "4K"]
    assert page.get_by_label("Seed").is_visible()
    assert not page.get_by_label("Size", exact=True).is_visible()
    page.get_by_label("Prompt", exact=True).fill("a golden sun over blue mountains")
    page.get_by_label("Aspect ratio").select_option("3:2")
    page.get_by_role("button", name="Generate").click()
    final = page.locator(FINAL)
    final.wait_for(timeout=30000)
    assert page.locator(".job .thoughts .thought").count() >= 1  # thoughts streamed before the image
    assert natural_size(final) == [1264, 848]
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=10000)
    assert "Here is your image" in page.locator(".job .model-text").inner_text()
    assert re.search(r"\d+\.\d s · first frame \d+ ms · 1 image · \d+ tokens", page.locator(".job .meta").inner_text())
    assert "job=" in page.url  # the page can be reopened on this job

    page.get_by_role("link", name="Gallery").click()
    tile = page.locator(".gallery .tile img").first
    tile.wait_for()
    assert errors == []


def test_kappa_shows_partial_previews_then_images(watched, live_asgi, alice, settings):
    page, errors = watched
    settings.STUDIO_SANDBOX_DELAY = 0.6
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("kappa-image-1")
    assert page.locator("#opt-size option").all_inner_texts() == ["1024x1024", "1536x1024", "1024x1536", "auto"]
    assert not page.get_by_label("Aspect ratio").is_visible()
    page.get_by_label("Size", exact=True).select_option("1536x1024")
    page.get_by_label("Quality").select_option("low")
    page.get_by_label("Images", exact=True).fill("2")
    page.get_by_label("Previews while streaming").fill("2")
    page.get_by_label("Prompt", exact=True).fill("a paper boat on a pond")
    page.keyboard.press("Control+Enter")
    page.locator(".job .partials figure.partial img").first.wait_for(timeout=30000)
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=30000)
    finals = page.locator(FINAL)
    assert finals.count() == 2
    assert natural_size(finals.first) == [1536, 1024]
    assert page.locator(".job .partials figure").count() == 0  # previews give way to the images
    assert "2 images" in page.locator(".job .meta").inner_text()
    assert errors == []


def test_sigma_sequential_set(watched, live_asgi, alice):
    page, errors = watched
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("sigma-5.0-image")
    assert not page.get_by_label("Images in the set (at most)").is_visible()
    page.get_by_label("Sequential set").check()
    page.get_by_label("Images in the set (at most)").fill("3")
    page.get_by_label("Watermark").check()
    page.get_by_label("Size", exact=True).select_option("1K")
    page.get_by_label("Prompt", exact=True).fill("a set of 5 images: a seed, a sprout, a tree")
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state[data-kind=done]").wait_for(timeout=30000)
    assert page.locator(FINAL).count() == 3
    # One group with its count; max_images caps the set, as at the vendor, with no error per image.
    assert page.locator(".job .set-heading").inner_text().startswith("Set of 3 images")
    assert page.locator(".job .item-error").count() == 0
    assert "generated_images" not in page.locator(".job .meta").inner_text()
    assert "3 billed images" in page.locator(".job .meta").inner_text()
    assert errors == []


def test_star_and_download_shortcuts(watched, live_asgi, alice):
    from studio.models import Asset

    page, errors = watched
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("delta-3.1-flash-lite-image")
    page.get_by_label("Prompt", exact=True).fill("a red kite over a beach")
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state[data-kind=done]").wait_for(timeout=30000)
    figure = page.locator(".job figure.final").first
    asset = figure.get_attribute("data-asset")
    figure.focus()
    for starred in (True, False, True):  # `s` toggles the star, and the asset keeps it
        page.keyboard.press("s")
        figure.locator(f".star[aria-pressed={str(starred).lower()}]").wait_for()
        assert Asset.objects.get(id=asset).starred is starred
    assert figure.locator(".star").inner_text() == "★ Starred"

    with page.expect_download() as info:
        page.keyboard.press("d")  # the original file, as stored
    original = page.request.get(f"{live_asgi}/assets/{asset}/file").body()
    assert info.value.path().read_bytes() == original

    page.goto(f"{live_asgi}/gallery/?starred=1")
    page.locator(f'.tile.starred[data-id="{asset}"] .star[aria-pressed=true]').wait_for()
    page.goto(f"{live_asgi}/assets/{asset}/")  # the image's own page knows it is starred
    star = page.locator('.result-actions .star[aria-pressed="true"]')
    star.wait_for()
    assert star.inner_text() == "★ Starred"
    assert errors == []


def recorded_cost(generation_id: str) -> Decimal:
    """The cost the job's record keeps (written off the response path: wait for it)."""
    from studio.models import Generation

    deadline = time.monotonic() + 20
    while True:
        generation = Generation.objects.get(id=generation_id)
        if generation.cost_usd or time.monotonic() > deadline:
            return generation.cost_usd
        time.sleep(0.1)


@VIEWPORTS
def test_compare_two_models(browser, request, live_asgi, alice, viewport):
    page, errors = open_on(browser, request, viewport)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Prompt", exact=True).fill("a lemon on a blue plate")
    if viewport == PHONE:
        page.get_by_label("Compare models").check()
    else:
        page.locator("body").click()
        page.keyboard.press("c")  # the compare shortcut
    assert page.get_by_role("group", name="Models to compare (2 to 4)").is_visible()
    page.get_by_label("Delta 3.1 Flash Lite Image").check()
    page.get_by_label("Kappa Image 1").check()
    page.get_by_role("button", name="Compare").click()
    panels = page.locator(".results.compare .job")
    page.wait_for_function("document.querySelectorAll('.job .job-state[data-kind=done]').length === 2",
                           timeout=30000)
    assert panels.count() == 2
    names = sorted(panels.locator(".job-model").all_inner_texts())
    assert names == ["Delta 3.1 Flash Lite Image", "Kappa Image 1"]
    for meta in panels.locator(".meta").all_inner_texts():
        assert re.search(r"\d+\.\d s", meta) and "tokens" in meta
    for i in range(2):  # each column's cost, as its usage record keeps it, next to its latency
        cost = panels.nth(i).locator(".meta .job-cost").inner_text()
        assert re.fullmatch(r"\$\d+\.\d\d", cost), cost
        assert Decimal(cost[1:]) == round(recorded_cost(panels.nth(i).get_attribute("data-job")), 2)
    boxes = [panels.nth(i).bounding_box() for i in range(2)]
    if viewport == PHONE:  # one above the other, each as wide as the screen allows
        assert boxes[0]["x"] == boxes[1]["x"] and boxes[1]["y"] > boxes[0]["y"] and no_sideways_scroll(page)
    else:
        assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] != boxes[1]["x"]  # side by side
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.matches('figure.final')")
    assert errors == []


def test_reload_mid_job_catches_up_and_another_device_follows(watched, browser, request, live_asgi, alice,
                                                             make_account, settings):
    page, errors = watched
    settings.STUDIO_SANDBOX_DELAY = 0.8
    make_account("bob")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("delta-3-pro-image")
    page.get_by_label("Prompt", exact=True).fill("a snowy village at night")
    page.get_by_role("button", name="Generate").click()
    page.wait_for_url(re.compile(r"job="), timeout=10000)
    page.locator(".job .thoughts .thought").first.wait_for(timeout=20000)
    assert page.locator(FINAL).count() == 0  # still under way
    job_url = page.url

    page.reload()  # the socket is gone; the new page replays the record, then follows live
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=30000)
    assert page.locator(".job .thoughts .thought").count() >= 1  # what happened before the reload
    assert page.locator(FINAL).count() == 1
    assert page.get_by_label("Prompt", exact=True).input_value() == "a snowy village at night"

    phone, phone_errors = open_page(browser, request, PHONE, touch=True)
    sign_in(phone, live_asgi, "alice", "pw-alice-123")
    phone.goto(job_url)
    phone.locator(FINAL).wait_for(timeout=20000)
    assert no_sideways_scroll(phone) and phone_errors == []

    outsider = browser.new_context()
    bobs = outsider.new_page()
    sign_in(bobs, live_asgi, "bob", "pw-bob-123")
    bobs.goto(job_url)
    bobs.locator(".job .job-state", has_text="Not found").wait_for(timeout=10000)
    assert bobs.locator(FINAL).count() == 0
    outsider.close()
    assert errors == []


def test_upload_a_reference_and_use_a_result_as_input(watched, live_asgi, alice, tmp_path):
    page, errors = watched
    from PIL import Image

    picture = tmp_path / "sketch.png"
    Image.new("RGB", (320, 240), "purple").save(picture)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_label("Model", exact=True).select_option("delta-3.1-flash-lite-image")
    page.get_by_label("Add reference images").set_input_files(str(picture))
    page.get_by_role("img", name="Reference image 1").wait_for(timeout=10000)
    assert "(1 of at most 3)" in page.locator("#reference-count").inner_text()
    page.get_by_label("Prompt", exact=True).fill("turn this sketch into a painting")
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=30000)
    # A result goes back in as a reference with one click, and the URL of the gallery's
    # "use as input" link pre-fills it the same way.
    page.get_by_role("button", name="Use as input").first.click()
    assert page.get_by_role("img", name="Reference image 2").is_visible()
    asset = page.locator(FINAL).first.get_attribute("data-asset")
    page.goto(f"{live_asgi}/generate/?input={asset}&model=sigma-5.0-image&prompt=a+variation")
    assert page.get_by_role("img", name="Reference image 1").is_visible()
    assert page.get_by_label("Prompt", exact=True).input_value() == "a variation"
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state", has_text="Done").wait_for(timeout=30000)
    assert page.locator(FINAL).count() == 1
    assert errors == []
