"""The gallery in a real browser: search, filter, star (click and keyboard), infinite scroll."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in
from tests.web.library_factories import make_image

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_search_filter_and_star(page, live_asgi, make_account):
    alice = make_account("alice")
    make_image(alice.user, "a lighthouse in a storm", minutes_ago=3)
    make_image(alice.user, "a cat asleep on a sofa", model="kappa-image-1", minutes_ago=2)
    make_image(alice.user, "a lighthouse at dawn", minutes_ago=1)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/gallery/")
    tiles = page.locator("#grid .tile")
    assert tiles.count() == 3

    page.get_by_label("Search prompts").fill("lighthouse")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**/gallery/?q=lighthouse*")
    assert page.locator("#grid .tile img").evaluate_all("imgs => imgs.map(i => i.alt)") == [
        "a lighthouse at dawn", "a lighthouse in a storm"]
    # thumbnails are real WebP images the browser decodes
    size = page.locator("#grid .tile img").first.evaluate(
        "img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")
    assert max(size) == 320

    page.locator("#grid .tile").first.locator(".star").click()
    page.locator("#grid .tile.starred").first.wait_for()
    # keyboard: / focuses search, j moves to the next tile, s stars it
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Escape")
    page.locator("#grid .tile .open").first.focus()
    page.keyboard.press("j")
    page.keyboard.press("s")
    page.locator("#grid .tile.starred").nth(1).wait_for()

    page.goto(f"{live_asgi}/gallery/")
    page.get_by_label("Starred only").check()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**starred=1*")
    assert page.locator("#grid .tile").count() == 2

    page.goto(f"{live_asgi}/gallery/")
    page.get_by_label("Model").select_option("kappa-image-1")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**model=kappa-image-1*")
    assert page.locator("#grid .tile img").get_attribute("alt") == "a cat asleep on a sofa"


def test_infinite_scroll_loads_every_page(page, live_asgi, make_account):
    alice = make_account("alice")
    for i in range(130):
        make_image(alice.user, f"study {i:03d}", minutes_ago=i)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(f"{live_asgi}/gallery/")
    assert page.locator("#grid .tile").count() == 60
    for _ in range(20):
        page.mouse.wheel(0, 20000)
        if page.locator("#grid .tile").count() == 130:
            break
        page.wait_for_timeout(200)
    assert page.locator("#grid .tile").count() == 130
    page.locator("#gallery-status", has_text="All 130 items shown").wait_for()
    alts = page.locator("#grid .tile img").evaluate_all("imgs => imgs.map(i => i.alt)")
    assert alts == [f"study {i:03d}" for i in range(130)]


def test_bulk_select_and_delete_with_confirm(page, live_asgi, make_account):
    alice = make_account("alice")
    for i in range(3):
        make_image(alice.user, f"variant {i}", minutes_ago=i)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/gallery/")
    page.get_by_label("Select variant 0").check()
    page.get_by_label("Select variant 1").check()
    assert page.locator("#bulk-count").inner_text() == "2 selected"
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#bulk").get_by_role("button", name="Delete").click()
    page.locator("#gallery-status", has_text="delete: 2 done").wait_for()
    assert page.locator("#grid .tile img").evaluate_all("imgs => imgs.map(i => i.alt)") == ["variant 2"]
