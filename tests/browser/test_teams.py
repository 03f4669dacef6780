"""Teams in a real browser: create a team, add a member with a role, make a collection."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_create_team_add_member_and_collection(page, live_asgi, make_account):
    make_account("alice")
    make_account("bob")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_role("link", name="Teams").click()
    page.get_by_label("Team name").fill("Night Shift")
    page.get_by_role("button", name="Create team").click()
    page.get_by_role("heading", name="Night Shift").wait_for()
    page.get_by_label("Username").fill("bob")
    page.get_by_label("Role", exact=True).select_option("viewer")
    page.get_by_role("button", name="Add member").click()
    assert "bob joined Night Shift as viewer" in page.locator(".flash").inner_text()
    assert "Viewer" in page.locator('tr[data-username="bob"]').inner_text()
    page.get_by_label("New collection").fill("Moodboard")
    page.get_by_role("button", name="Create collection").click()
    page.get_by_role("link", name="Moodboard").click()
    page.wait_for_url("**/gallery/?collection=*")
