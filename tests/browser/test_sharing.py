"""Sharing in a real browser: to a team (the other member sees it, an outsider gets 404), and by
a link that works signed out until the owner revokes it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS, sign_in
from tests.web.library_factories import make_image, make_team

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_share_to_a_team_member_sees_it_outsider_gets_404(browser, page, live_asgi, make_account):
    alice, bob = make_account("alice"), make_account("bob")
    make_account("eve")  # an outsider
    make_team(alice.user, "Design", bob=(bob.user, "member"))
    asset = make_image(alice.user, "poster for the launch")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{asset.id}/")
    page.get_by_label("Share with team").select_option(label="Design")
    page.get_by_role("button", name="Share", exact=True).click()
    assert "Team · Design" in page.locator("#visibility").inner_text()

    for name, expected in (("bob", 200), ("eve", 404)):
        context = browser.new_context()
        other = context.new_page()
        sign_in(other, live_asgi, name, f"pw-{name}-123")
        response = other.goto(f"{live_asgi}/assets/{asset.id}/")
        assert response.status == expected, name
        assert other.request.get(f"{live_asgi}/assets/{asset.id}/file").status == expected
        if name == "bob":
            other.goto(f"{live_asgi}/gallery/")
            assert other.locator("#grid .tile img").first.get_attribute("alt") == "poster for the launch"
        else:
            other.goto(f"{live_asgi}/gallery/")
            assert other.locator("#grid .tile").count() == 0
        other.screenshot(path=str(ARTIFACTS / f"sharing-team-as-{name}.png"), full_page=True)
        context.close()


def test_link_sharing_and_revoking(browser, page, live_asgi, make_account):
    alice = make_account("alice")
    asset = make_image(alice.user, "moodboard for the client")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.goto(f"{live_asgi}/assets/{asset.id}/")
    page.get_by_role("button", name="Share by link").click()
    link = page.get_by_label("Anyone with this link can see it").input_value()
    assert "/s/" in link

    anonymous = browser.new_context()
    visitor = anonymous.new_page()
    assert visitor.goto(link).status == 200
    image = visitor.locator("article img")
    assert image.evaluate("img => img.decode().then(() => img.naturalWidth)") == 640
    assert "moodboard for the client" in visitor.content()
    visitor.screenshot(path=str(ARTIFACTS / "sharing-link-visitor.png"), full_page=True)

    page.get_by_role("button", name="Revoke link").click()
    page.get_by_role("button", name="Share by link").wait_for()
    assert visitor.goto(link).status == 404
    assert visitor.request.get(link + "/file").status == 404
    anonymous.close()
