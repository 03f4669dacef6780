"""Edit sessions in a real browser: start from a gallery image, edit in several turns, branch,
switch versions, compare a turn with its parent, and come back to the same head after a reload."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.browser.conftest import DESKTOP, PHONE, no_sideways_scroll, open_page, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def source_asset(user):
    from studio.gateway.media.storage import store_bytes

    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), (40, 120, 160)).save(buffer, "PNG")
    return store_bytes(buffer.getvalue(), "image/png", owner_id=user.id)


def send(page, text: str) -> None:
    page.get_by_label("What should change?").fill(text)
    page.get_by_role("button", name="Send").click()


def wait_turns(page, count: int) -> None:
    page.locator("#thread .turn.status-succeeded").nth(count - 1).wait_for(timeout=30000)


def test_multi_turn_edit_with_a_branch_and_a_compare(page, live_asgi, alice):
    asset = source_asset(alice.user)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{asset.id}/")
    page.get_by_role("link", name="Edit in turns").click()
    page.get_by_label("Title").fill("Harbour poster")
    page.get_by_role("button", name="Start editing").click()
    page.get_by_role("heading", name="Harbour poster").wait_for()

    send(page, "make the sky purple")
    wait_turns(page, 1)
    assert "Here is the edited image" in page.locator("#thread .turn").nth(1).inner_text()
    send(page, "add a crescent moon")
    wait_turns(page, 2)
    # Branch from the first turn: a sibling of the moon turn.
    first = page.locator("#thread .turn").nth(1)
    first.get_by_role("button", name="Branch from here").click()
    assert "make the sky purple" in page.locator("#continue-label").inner_text()
    send(page, "add falling snow")
    page.locator("#thread .turn").nth(2).locator(".instruction", has_text="add falling snow").wait_for(timeout=30000)
    wait_turns(page, 2)
    latest = page.locator("#thread .turn").nth(2)
    assert latest.locator(".sibling-count").inner_text() == "2/2"
    latest.get_by_role("button", name="Previous version").click()
    page.locator("#thread .turn").nth(2).locator(".instruction", has_text="add a crescent moon").wait_for()
    assert page.locator("#thread .turn").nth(2).locator(".sibling-count").inner_text() == "1/2"
    assert page.locator("#tree .node").count() == 3

    # The head is remembered: after a reload the moon version is still the one shown.
    page.wait_for_load_state("networkidle")
    page.reload()
    page.locator("#thread .turn").nth(2).locator(".instruction", has_text="add a crescent moon").wait_for()

    page.locator("#thread .turn").nth(2).get_by_role("button", name="Compare with parent").click()
    compare = page.locator("#compare")
    compare.wait_for()
    assert page.locator("#compare-before").get_attribute("src") == page.locator("#thread .turn").nth(1).locator(".turn-image").get_attribute("src")
    page.locator("#compare-range").fill("30")
    assert "inset(0px 70% 0px 0px)" in page.locator("#compare-before").evaluate("img => getComputedStyle(img).clipPath")
    page.get_by_role("button", name="Side by side").click()
    assert page.locator("#side-view").is_visible() and not page.locator("#slider-view").is_visible()
    page.get_by_role("button", name="Slider").click()
    assert page.locator("#slider-view").is_visible() and not page.locator("#side-view").is_visible()
    page.locator("#compare-range").fill("55")


# Holds back every answer of the session's tree that still shows a turn running, so that it
# reaches the page after the one asked for when the turn completed.
SLOW_RUNNING_TREES = """
const realFetch = window.fetch;
window.fetch = async (url, options) => {
  const response = await realFetch(url, options);
  if (String(url).includes("/tree")) {
    const tree = await response.clone().json();
    if (Object.values(tree.turns || {}).some((t) => t.status === "running")) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  }
  return response;
};
"""


def test_a_finished_turn_stays_finished_when_an_older_tree_answers_last(page, live_asgi, alice):
    """The tree asked for when a turn started may come back after the one asked for when it
    completed: the page keeps the newer one, not a turn running forever."""
    from studio.gateway.native import edit_sessions

    session = edit_sessions.create_session(alice.user, source_asset(alice.user), "delta-3.1-flash-image",
                                           title="Out of order")
    page.add_init_script(SLOW_RUNNING_TREES)
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/edit/{session.id}/")
    send(page, "make the sky purple")
    page.locator("#thread .turn.status-succeeded").first.wait_for(timeout=10000)
    page.wait_for_timeout(2500)  # the held-back tree has come by now
    assert page.locator("#thread .turn.status-running").count() == 0
    assert page.locator("#thread .turn.status-succeeded").count() == 1


def test_a_blocked_turn_shows_the_reason_and_strangers_get_404(page, live_asgi, alice, make_account):
    from studio.gateway.native import edit_sessions

    asset = source_asset(alice.user)
    session = edit_sessions.create_session(alice.user, asset, "delta-3.1-flash-image", title="Blocked")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/edit/{session.id}/")
    send(page, "[block] anything")
    alert = page.locator("#thread .turn.status-blocked [role=alert]")
    alert.wait_for(timeout=30000)
    assert "PROHIBITED_CONTENT" in alert.inner_text()
    assert page.locator(".spinner").count() == 0

    make_account("bob")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, live_asgi, "bob", "pw-bob-123")
    response = page.goto(f"{live_asgi}/edit/{session.id}/")
    assert response.status == 404


def scene_asset(user):
    """A picture the offline model painted: it knows its cat, its house, its sky."""
    from studio.gateway.media.storage import store_bytes
    from studio.sandbox.imaging import encode_image, render_prompt_image

    data = encode_image(render_prompt_image("an orange cat by a house in a sunny meadow", 768, 512, seed=7))
    return store_bytes(data, "image/png", owner_id=user.id)


def turn_picture(page, index: int) -> Image.Image:
    """The picture a turn shows, fetched as the browser sees it."""
    src = page.locator("#thread .turn").nth(index).locator(".turn-image").evaluate("img => img.currentSrc || img.src")
    data = page.request.get(src).body()
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_region_edits_follow_the_instruction_in_turns(browser, request, live_asgi, alice, viewport):
    from studio.sandbox import regions

    asset = scene_asset(alice.user)
    page, errors = open_page(browser, request, viewport, touch=viewport is PHONE)
    name = "desktop" if viewport is DESKTOP else "phone"
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{asset.id}/")
    page.get_by_role("link", name="Edit in turns").click()
    page.get_by_label("Title").fill("Meadow")
    page.get_by_role("button", name="Start editing").click()
    page.get_by_role("heading", name="Meadow").wait_for()
    # Every model that edits is offered, the images family too.
    offered = page.locator("#turn-model option").evaluate_all("options => options.map((o) => o.value)")
    assert {"kappa-image-1", "sigma-5.0-image"} <= set(offered)

    send(page, "remove the cat")
    wait_turns(page, 1)
    removed = turn_picture(page, 1)
    assert [r.kind for r in regions.noted(removed) if r.kind == "cat"] == []
    page.get_by_label("Model", exact=True).select_option("kappa-image-1")
    send(page, "make the house blue")
    wait_turns(page, 2)
    recoloured = turn_picture(page, 2)
    house = next(r for r in regions.noted(recoloured) if r.kind == "house")
    x1, y1, x2, y2 = house.pixels(recoloured.size)
    r, g, b = (sum(channel) / len(channel) for channel in zip(*recoloured.convert("RGB").crop(
        (x1 + (x2 - x1) // 4, y1 + (y2 - y1) // 2, x2 - (x2 - x1) // 4, y2 - 4)).getdata(), strict=True))
    assert b > r + 30  # the walls are blue now
    page.locator("#thread .turn").nth(2).scroll_into_view_if_needed()
    shot(page, f"region-edits-{name}", prefix="edit")
    if viewport is PHONE:
        assert no_sideways_scroll(page)
    assert errors == []
