"""The worker heartbeat: no beat means no worker seen; a beat makes its age readable by any reader
of the same cache; deployments sharing a cache (another key prefix) do not see each other's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.core.cache import cache

from studio.gateway import heartbeat


@pytest.fixture
def clock(monkeypatch, settings) -> list[float]:
    """The heartbeat's wall clock, set by the test; a prefix no other test beats under."""
    settings.STUDIO_REDIS_PREFIX = "tests-heartbeat"
    now = [1_700_000_000.0]
    monkeypatch.setattr(heartbeat, "time", SimpleNamespace(time=lambda: now[0]))
    cache.delete("tests-heartbeat:worker-heartbeat")
    yield now
    cache.delete("tests-heartbeat:worker-heartbeat")


def test_no_worker_was_ever_seen(clock) -> None:
    assert heartbeat.age() is None


async def test_a_beat_is_seen_and_ages_with_the_clock(clock) -> None:
    await heartbeat.beat()
    assert heartbeat.age() == 0.0
    clock[0] += 12.5
    assert heartbeat.age() == 12.5


async def test_the_newest_beat_counts(clock) -> None:
    await heartbeat.beat()
    clock[0] += 40
    await heartbeat.beat()  # another worker (or the same one, later)
    clock[0] += 3
    assert heartbeat.age() == 3.0


async def test_a_beat_from_a_clock_ahead_of_ours_is_age_zero(clock) -> None:
    await heartbeat.beat()
    clock[0] -= 5  # the reading process's clock is behind the beating one's
    assert heartbeat.age() == 0.0


async def test_another_deployment_sharing_the_cache_is_not_seen(clock, settings) -> None:
    await heartbeat.beat()
    settings.STUDIO_REDIS_PREFIX = "tests-heartbeat-other"
    assert heartbeat.age() is None
