"""The studio as a designer uses it, on a desktop and on a 390×844 phone: result actions (viewer,
get code, reuse, variations), layers with exports, a key made once, the mask canvas on a phone,
the compact header and the error page. One server for the module; screenshots in test-artifacts/."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from tests.browser.conftest import PHONE, VIEWPORTS, no_sideways_scroll, open_on, open_page, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FINAL = ".job figure.final"


@pytest.fixture
def studio(server, catalog, django_user_model):
    from studio.models import ApiKey

    user = django_user_model.objects.create_user(username="dana", password="pw-dana-123")
    ApiKey.issue(user, name="laptop")
    return {"url": server, "user": user}


def fits(page, viewport) -> bool:
    """On a phone, nothing scrolls sideways; a desktop has room to spare."""
    return viewport != PHONE or no_sideways_scroll(page)


@VIEWPORTS
def test_result_actions(browser, request, studio, viewport):
    page, errors = open_on(browser, request, viewport)
    name = "phone" if viewport == PHONE else "desktop"
    url = studio["url"]
    sign_in(page, url, "dana", "pw-dana-123")
    assert "per image" in page.locator("#model-card").inner_text()  # the catalog's price, on the picker
    page.get_by_label("Model", exact=True).select_option("delta-3.1-flash-lite-image")
    assert "per 1M tokens" in page.locator("#model-card").inner_text()
    page.get_by_label("Prompt", exact=True).fill("a lighthouse on a cliff at dusk")
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state[data-kind=done]").wait_for(timeout=30000)
    figure = page.locator(FINAL).first
    # The cost its usage record keeps, next to the latency.
    assert re.fullmatch(r"\$\d+(\.\d+)?", page.locator(".job .meta .job-cost").inner_text())
    for action in ("Open", "Download", "Variations", "Upscale", "Reuse prompt & seed", "Edit from here", "Get code"):
        assert figure.get_by_role("button", name=action).or_(figure.get_by_role("link", name=action)).count() == 1

    figure.focus()
    page.keyboard.press("Enter")  # the viewer, full screen
    viewer = page.locator("dialog.viewer[open]")
    viewer.wait_for()
    assert viewer.locator(".viewer-caption").inner_text().startswith("1 / 1")
    assert fits(page, viewport)
    shot(page, f"viewer-{name}")
    page.keyboard.press("Escape")

    figure.get_by_role("button", name="Get code").click()
    dialog = page.locator("dialog.code-dialog[open]")
    dialog.wait_for()
    assert '"laptop"' in dialog.inner_text() and "curl -s" in dialog.locator("code").inner_text()
    dialog.get_by_role("tab", name="Python").click()
    assert "from google import genai" in dialog.locator("code").inner_text()
    assert fits(page, viewport)
    shot(page, f"get-code-{name}")
    dialog.get_by_role("button", name="Close").click()

    page.get_by_label("Prompt", exact=True).fill("")
    figure.get_by_role("button", name="Reuse prompt & seed").click()
    page.wait_for_function("document.getElementById('opt-seed').value !== ''")
    assert page.get_by_label("Prompt", exact=True).input_value() == "a lighthouse on a cliff at dusk"
    assert "seed" in page.locator("#form-status").inner_text()

    figure.get_by_role("button", name="Variations").click()
    page.wait_for_function("document.querySelectorAll('.job .job-state[data-kind=done]').length === 4",
                           timeout=60000)
    assert page.locator(".group-title-bar").inner_text().startswith("4 variations")
    sources = set(page.locator(f"{FINAL} img").evaluate_all("els => els.map(e => e.naturalWidth + ':' + e.src)"))
    assert len(sources) == 4
    assert fits(page, viewport)
    shot(page, f"variations-{name}")
    assert errors == []


@VIEWPORTS
def test_layers_grouped_with_exports(browser, request, studio, viewport):
    from tests.web.test_layers_views import layered_generation

    generation = layered_generation(studio["user"], {
        "Sky background": [0, 0, 600, 400], "Red subject (centre)": [200, 120, 400, 300],
        "Title text": [80, 330, 520, 380]})
    from studio.models import Asset

    base = Asset.objects.get(generation=generation, metadata__z_index=0)
    page, errors = open_on(browser, request, viewport)
    name = "phone" if viewport == PHONE else "desktop"
    sign_in(page, studio["url"], "dana", "pw-dana-123")
    page.goto(f"{studio['url']}/assets/{base.id}/layers")
    groups = [re.sub(r"\s+", " ", g).strip().lower() for g in page.locator(".layer-group h2").all_inner_texts()]
    assert groups == ["text 1", "subjects 1", "background 1", "original"]  # top of the stack first
    page.get_by_label("Show the subjects group").uncheck()
    assert page.locator('.stage img[data-layer]:not([hidden])').count() == 3
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PSD").click()
    assert download.value.suggested_filename.endswith(".psd")
    with page.expect_download() as download:
        page.get_by_role("link", name="PNGs + manifest (ZIP)").click()
    assert download.value.suggested_filename.endswith(".zip")
    assert fits(page, viewport)
    shot(page, f"layers-{name}")
    assert errors == []


@VIEWPORTS
def test_a_key_is_made_once_even_after_a_reload(browser, request, studio, viewport):
    from studio.models import ApiKey

    page, errors = open_on(browser, request, viewport)
    sign_in(page, studio["url"], "dana", "pw-dana-123")
    page.goto(f"{studio['url']}/keys/")
    page.get_by_label("Name", exact=True).first.fill("render farm")
    page.get_by_role("button", name="Create key").click()
    page.wait_for_url(f"{studio['url']}/keys/")
    assert re.search(r"sgw-[A-Za-z0-9_-]{40,}", page.content()) and fits(page, viewport)
    page.reload()
    assert not re.search(r"sgw-[A-Za-z0-9_-]{40,}", page.content())
    assert ApiKey.objects.filter(owner=studio["user"], name="render farm").count() == 1
    assert errors == []


def test_phone_generate_header_and_error_page(browser, request, studio):
    page, errors = open_page(browser, request, PHONE, touch=True)
    url = studio["url"]
    sign_in(page, url, "dana", "pw-dana-123")
    assert not page.get_by_role("navigation", name="Main").is_visible()  # compact header
    page.get_by_role("button", name="Menu").click()
    assert page.get_by_role("link", name="Gallery").is_visible()
    shot(page, "menu-phone")
    page.get_by_role("button", name="Menu").click()
    page.get_by_label("Prompt", exact=True).fill("a paper crane on a desk")
    page.get_by_role("button", name="Generate").click()
    page.locator(".job .job-state[data-kind=done]").wait_for(timeout=30000)
    assert no_sideways_scroll(page)
    shot(page, "generate-phone")
    page.goto(f"{url}/nowhere/")
    assert page.get_by_role("heading", name="Nothing here").is_visible() and no_sideways_scroll(page)
    shot(page, "404-phone")
    assert [e for e in errors if "404" not in e] == []  # the one 404 is the page asked for


def test_mask_canvas_fits_a_phone_and_paints_by_touch(browser, request, studio):
    from studio.gateway.media.storage import store_bytes

    data = io.BytesIO()
    Image.new("RGB", (1480, 986), (40, 120, 200)).save(data, "PNG")
    asset = store_bytes(data.getvalue(), "image/png", owner_id=studio["user"].id)
    page, errors = open_page(browser, request, PHONE, touch=True)
    sign_in(page, studio["url"], "dana", "pw-dana-123")
    page.goto(f"{studio['url']}/canvas/{asset.id}/")
    canvas = page.locator("#mask")
    page.wait_for_function("document.getElementById('mask').getBoundingClientRect().width < 390")
    box = canvas.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and no_sideways_scroll(page)
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.touchscreen.tap(cx, cy)  # a touch dab paints the mask
    page.evaluate("""([x, y]) => {
      const c = document.getElementById('mask');
      for (const [type, dx] of [['pointerdown', 0], ['pointermove', 30], ['pointerup', 30]]) {
        c.dispatchEvent(new PointerEvent(type, { pointerId: 7, pointerType: 'touch', clientX: x + dx, clientY: y,
                                                 bubbles: true, isPrimary: true }));
      }
    }""", [cx, cy])
    assert not page.get_by_role("button", name="Undo").is_disabled()
    before = page.locator("#zoom-value").inner_text()
    page.evaluate("""([x, y]) => {
      const c = document.getElementById('mask');
      const fire = (type, id, px) => c.dispatchEvent(new PointerEvent(type, { pointerId: id, pointerType: 'touch',
        clientX: px, clientY: y, bubbles: true }));
      fire('pointerdown', 1, x - 20); fire('pointerdown', 2, x + 20);
      fire('pointermove', 1, x - 60); fire('pointermove', 2, x + 60);
      fire('pointerup', 1, x - 60); fire('pointerup', 2, x + 60);
    }""", [cx, cy])
    assert page.locator("#zoom-value").inner_text() != before  # a pinch zooms
    page.get_by_role("button", name="Fit").click()
    assert no_sideways_scroll(page)
    shot(page, "canvas-phone")
    assert errors == []
