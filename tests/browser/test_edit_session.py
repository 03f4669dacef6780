"""Edit sessions in a real browser: start from a gallery image, edit in several turns, branch,
switch versions, compare a turn with its parent, and come back to the same head after a reload."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def source_asset(user):
    from studio.gateway.storage import store_bytes

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


def test_a_blocked_turn_shows_the_reason_and_strangers_get_404(page, live_asgi, alice, make_account):
    from studio.gateway import edit_sessions

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
