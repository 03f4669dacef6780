"""Keys in a real browser: create one (secret shown once, and it works on /v1), then revoke it."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_key_creation_and_revocation(page, live_asgi, make_account):
    make_account("alice")
    sign_in(page, live_asgi, "alice", "pw-alice-123")
    page.get_by_role("link", name="Keys").click()
    page.get_by_label("Name").first.fill("render farm")
    page.get_by_label("Allowed models (none selected = all)").select_option(["delta-3.1-flash-image"])
    page.get_by_role("button", name="Create key").click()
    secret = page.locator("#new-secret").inner_text().strip()
    assert secret.startswith("sgw-")
    row = page.locator('tr[data-key="render farm"]')
    assert "delta-3.1-flash-image" in row.inner_text() and "active" in row.inner_text()

    auth = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{live_asgi}/v1/models", headers=auth).status_code == 200

    page.goto(f"{live_asgi}/keys/")
    assert secret not in page.content()  # shown once
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke render farm").click()
    page.locator('tr[data-key="render farm"] .pill.bad', has_text="revoked").wait_for()
    assert httpx.get(f"{live_asgi}/v1/models", headers=auth).status_code == 401
