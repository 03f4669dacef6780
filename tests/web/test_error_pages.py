"""Styled error pages, a skip link and a favicon on every page."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_404_is_a_styled_studio_page(web, alice):
    web.force_login(alice.user)
    response = web.get("/no-such-page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="error-page' in html and "Nothing here" in html and 'href="/gallery/"' in html
    assert "Skip to content" in html and "favicon.svg" in html


def test_403_for_a_forged_form_is_styled(alice):
    from django.test import Client

    csrf_checked = Client(enforce_csrf_checks=True)
    csrf_checked.force_login(alice.user)
    response = csrf_checked.post("/keys/", {"name": "no token"})
    assert response.status_code == 403
    assert "You cannot do that here" in response.content.decode()


def test_500_page_renders_without_a_request(settings):
    from django.template.loader import render_to_string

    html = render_to_string("500.html")
    assert "Something went wrong on our side" in html and "studio.css" in html


def test_favicon(web):
    response = web.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("studio/favicon.svg")
