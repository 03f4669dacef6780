"""Housekeeping: stored responses past the retention period are deleted by the worker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.models import StoredResponse
from studio.workers import maintenance, runner

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_worker_deletes_expired_stored_responses(alice, settings):
    now = timezone.now()
    for name, age in (("resp_old", timedelta(days=30, minutes=1)), ("resp_new", timedelta(days=29))):
        await StoredResponse.objects.acreate(id=name, user=alice.user, model_id="omicron-4-mini",
                                             response={"id": name}, created=now - age)
    assert "studio.workers.maintenance.prune_expired_responses" in [job.path for job in runner.jobs()]
    await maintenance.prune_expired_responses()
    assert [r.id async for r in StoredResponse.objects.all()] == ["resp_new"]
    settings.STUDIO_RESPONSE_RETENTION_DAYS = 7
    await maintenance.prune_expired_responses()
    assert await StoredResponse.objects.acount() == 0
