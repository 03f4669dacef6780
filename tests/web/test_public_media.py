"""The /m/<token> view: a link to a missing asset answers at once unless it was just minted."""

from __future__ import annotations

import time
import uuid

import pytest

from studio.gateway.media import links
from studio.web import public_media

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def waits(monkeypatch):
    """Counts the view's waits for a late asset, and makes each one instant."""
    seen: list[float] = []
    clock = [time.monotonic()]

    async def fake_sleep(seconds: float) -> None:
        seen.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(public_media.asyncio, "sleep", fake_sleep)
    monkeypatch.setattr(public_media.time, "monotonic", lambda: clock[0])
    return seen


async def test_an_old_link_to_a_missing_asset_is_404_without_waiting(async_client, monkeypatch, waits):
    path = links.signed_path(uuid.uuid4())
    later = time.time() + public_media.ARRIVAL_WAIT + 1
    monkeypatch.setattr(links.time, "time", lambda: later)
    response = await async_client.get(path)
    assert response.status_code == 404
    assert waits == []


async def test_a_fresh_link_waits_for_its_asset_before_giving_up(async_client, waits):
    response = await async_client.get(links.signed_path(uuid.uuid4()))
    assert response.status_code == 404
    assert len(waits) > 10  # it looked again and again while the link was young
