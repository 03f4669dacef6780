"""The gallery at 10,000 items: the first page and a page deep in the scroll cost the same."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studio.models import Asset, Generation
from tests.web.library_factories import login

pytestmark = pytest.mark.django_db(transaction=True)
ITEMS = 10_000


def timed_page(web, params: dict) -> tuple[dict, float, int]:
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        response = web.get("/gallery/page", params)
        elapsed = time.perf_counter() - started
    assert response.status_code == 200
    return response.json(), elapsed, len(captured.captured_queries)


def test_deep_pages_are_as_cheap_as_the_first(web, make_account):
    alice = make_account("alice")
    now = timezone.now()
    generations = Generation.objects.bulk_create(
        Generation(user=alice.user, model_id="delta-3.1-flash-image", route="native", prompt=f"study {i}")
        for i in range(ITEMS))
    Asset.objects.bulk_create(
        Asset(file=f"assets/x/{i}.png", mime="image/png", owner=alice.user, generation=g,
              created=now - timedelta(seconds=i))
        for i, g in enumerate(generations))
    login(web, alice)
    web.get("/gallery/page", {"limit": 1})  # warm the session and URL caches
    first, first_time, first_queries = timed_page(web, {"limit": 100})
    cursor = first["next"]
    for _ in range(89):  # walk to item ~9,000
        cursor = web.get("/gallery/page", {"limit": 100, "cursor": cursor}).json()["next"]
    deep, deep_time, deep_queries = timed_page(web, {"limit": 100, "cursor": cursor})
    assert deep["items"][0]["prompt"] == "study 9000"
    assert deep_queries == first_queries
    assert deep_time < max(first_time * 3, 0.25), (first_time, deep_time)
    print(f"\ngallery page of 100 at 10k items: first {first_time * 1000:.1f} ms, "
          f"at 9,000 {deep_time * 1000:.1f} ms, {deep_queries} queries")
