"""Leases on task rows: due rows go to one worker at a time, until the lease expires."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.gateway.video import leases
from studio.models.videos import VideoTask

pytestmark = pytest.mark.django_db(transaction=True)


def test_claim_due_takes_due_active_rows_in_schedule_order(alice, make_task, settings):
    settings.STUDIO_VIDEO_LEASE_SECONDS = 60
    now = timezone.now()
    later = make_task(alice.user, next_poll_at=now - timedelta(seconds=1))
    earlier = make_task(alice.user, next_poll_at=now - timedelta(seconds=30))
    make_task(alice.user, next_poll_at=now + timedelta(minutes=5))  # not due yet
    make_task(alice.user, status="succeeded")  # finished rows are never polled
    assert leases.claim_due("w1", now=now) == [earlier.id, later.id]
    row = VideoTask.objects.get(id=earlier.id)
    assert row.lease_owner == "w1"
    assert row.lease_expires_at == now + timedelta(seconds=60)


def test_a_leased_row_is_not_claimed_again_until_the_lease_expires(alice, make_task, settings):
    settings.STUDIO_VIDEO_LEASE_SECONDS = 60
    task = make_task(alice.user)
    now = timezone.now()
    assert leases.claim_due("w1", now=now) == [task.id]
    assert leases.claim_due("w2", now=now + timedelta(seconds=30)) == []
    assert leases.claim(task.id, "w2") is False
    assert leases.claim_due("w2", now=now + timedelta(seconds=61)) == [task.id]
    assert VideoTask.objects.get(id=task.id).lease_owner == "w2"


def test_limit_and_released_rows(alice, make_task):
    ids = {make_task(alice.user).id for _ in range(3)}
    first = leases.claim_due("w1", limit=2)
    assert len(first) == 2
    second = leases.claim_due("w2", limit=5)
    assert set(first) | set(second) == ids and not set(first) & set(second)
    VideoTask.objects.filter(id=first[0]).update(lease_owner="")  # released by its worker
    assert leases.claim_due("w3") == [first[0]]


def test_claim_ignores_the_schedule_but_not_the_status(alice, make_task):
    waiting = make_task(alice.user, next_poll_at=timezone.now() + timedelta(hours=1))
    finished = make_task(alice.user, status="failed")
    assert leases.claim(waiting.id, "query") is True
    assert VideoTask.objects.get(id=waiting.id).lease_owner == "query"
    assert leases.claim(finished.id, "query") is False


def test_worker_ids_are_unique_per_process():
    assert leases.WORKER_ID.count(":") == 2 and str(__import__("os").getpid()) in leases.WORKER_ID
