"""The prompt library in a real browser: save with tags, filter by tag, reuse on Generate."""

from __future__ import annotations

import pytest

from studio.gateway import prompt_library
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_save_tag_search_and_reuse(page, live_asgi, make_account):
    alice = make_account("alice")
    prompt_library.remember(alice.user.id, "a paper boat on a puddle")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_role("link", name="Prompts").click()
    page.get_by_label("Prompt", exact=True).fill("neon city at night, rain")
    page.get_by_label("Tags (comma separated)").last.fill("city, night")
    page.get_by_role("button", name="Save prompt").click()
    saved = page.locator("#saved-prompts")
    assert "neon city at night, rain" in saved.inner_text()
    assert "a paper boat on a puddle" in page.locator("#recent-prompts").inner_text()

    page.locator("#recent-prompts").get_by_role("button", name="Save").click()
    assert "a paper boat on a puddle" in page.locator("#saved-prompts").inner_text()
    page.get_by_label("Tag", exact=True).select_option("night")
    page.get_by_role("button", name="Search").click()
    assert "a paper boat" not in page.locator("#saved-prompts").inner_text()

    page.locator("#saved-prompts").get_by_role("link", name="Use").first.click()
    page.wait_for_url("**/generate/?prompt=neon+city+at+night%2C+rain")
