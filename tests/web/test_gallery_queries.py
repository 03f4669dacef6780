"""The gallery's queries do not grow with the number of items shown."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.web.library_factories import login, make_image, make_team

pytestmark = pytest.mark.django_db(transaction=True)


def queries_for(web, url: str, params: dict) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = web.get(url, params)
        assert response.status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("url", ["/gallery/", "/gallery/page"])
def test_queries_are_the_same_for_5_and_50_items(web, make_account, url):
    alice, bob = make_account("alice"), make_account("bob")
    team = make_team(alice.user, "Design", bob=(bob.user, "member"))
    for i in range(50):
        make_image(bob.user if i % 2 else alice.user, f"item {i}", team=team if i % 3 == 0 else None, minutes_ago=i)
    login(web, alice)
    web.get(url, {"limit": 5})  # warm the session and content type caches
    few = queries_for(web, url, {"limit": 5} if url.endswith("page") else {"q": "item 1"})
    many = queries_for(web, url, {"limit": 50} if url.endswith("page") else {})
    assert many == few
    assert many <= 9
