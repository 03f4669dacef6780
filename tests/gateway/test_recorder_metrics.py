"""The recorder's Prometheus metrics: records waiting, failed writes, records given up."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from studio.gateway import recording
from tests.gateway.test_recording import Flaky

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ("studio_record_failures_total", "studio_records_retried_total", "studio_records_dropped_total")


def sample(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def counts() -> dict[str, float]:
    return {name: sample(name) for name in NAMES}


async def test_a_write_that_fails_then_succeeds_counts_a_failure_and_a_retry_and_waits_as_pending(settings):
    settings.STUDIO_RECORDER_RETRY_DELAYS = (1.0,)
    before = counts()
    recording.submit(Flaky(failures=1))
    for _ in range(200):  # until the first write has failed and the record waits for its retry
        if sample("studio_records_pending") == 1:
            break
        await asyncio.sleep(0.01)
    assert sample("studio_records_pending") == 1 and sample(NAMES[0]) == before[NAMES[0]] + 1
    await recording.drain()
    after = counts()
    assert [after[name] - before[name] for name in NAMES] == [1, 1, 0]
    assert sample("studio_records_pending") == 0


async def test_a_record_given_up_is_counted_as_dropped(settings):
    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.01, 0.01)
    before = counts()
    recording.submit(Flaky(failures=99))
    await recording.drain()
    after = counts()
    assert [after[name] - before[name] for name in NAMES] == [3, 2, 1]


async def test_nothing_is_counted_when_metrics_are_off(settings):
    settings.STUDIO_METRICS = False
    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.01,)
    before = counts()
    recording.submit(Flaky(failures=99))
    await recording.drain()
    assert counts() == before
