"""Polling a task: with the upstream that created it, rescheduled by attempts, expired when overdue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from studio.core.errors import UpstreamError
from studio.gateway.video import leases, poll
from studio.models.videos import VideoTask
from tests.gateway.video.conftest import TASKS

pytestmark = pytest.mark.django_db(transaction=True)


def test_next_delay_follows_the_schedule_and_stays_at_its_end(settings):
    settings.STUDIO_VIDEO_POLL_SCALE = 1
    assert [poll.next_delay(n) for n in range(7)] == [2.0, 3.0, 5.0, 8.0, 12.0, 12.0, 12.0]


async def test_poll_asks_the_creating_upstream_with_its_credential(alice, make_task, ark):
    fake, upstream = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, {"id": "cgt-up-1", "status": "failed",
                                                        "error": {"code": "InputTextSensitive", "message": "no"}})
    task = await sync_to_async(make_task)(alice.user)
    assert await poll.poll_task(task) is True
    assert fake.requests[0]["headers"]["authorization"] == "Bearer ark-unit-credential"
    assert (task.status, task.error_code) == ("failed", "InputTextSensitive")
    assert await poll.poll_task(task) is False  # terminal: the upstream is not asked again
    assert len(fake.requests) == 1


async def test_a_disabled_upstream_still_finishes_its_tasks(alice, make_task, ark):
    fake, upstream = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, {"id": "cgt-up-1", "status": "running"})
    task = await sync_to_async(make_task)(alice.user)
    upstream.enabled = False
    await upstream.asave()
    entry = await poll.upstream_of(task)
    assert (entry.id, entry.base_url, entry.credential) == (upstream.id, "https://ark-unit.test",
                                                            "ark-unit-credential")
    assert await poll.poll_task(task) is False and len(fake.requests) == 1


async def test_an_overdue_task_expires_and_is_cancelled_upstream(alice, make_task, ark):
    fake, _ = ark
    fake.replies[("DELETE", f"{TASKS}/cgt-up-1")] = (200, {})
    task = await sync_to_async(make_task)(alice.user, expires_at=timezone.now() - timedelta(seconds=1))
    assert await poll.poll_task(task) is True
    assert task.status == "expired"
    assert [(r["method"], r["path"]) for r in fake.requests] == [("DELETE", f"{TASKS}/cgt-up-1")]


async def test_process_releases_the_lease_and_schedules_the_next_poll(alice, make_task, ark, settings):
    settings.STUDIO_VIDEO_POLL_SCALE = 1
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, {"id": "cgt-up-1", "status": "running"})
    task = await sync_to_async(make_task)(alice.user, poll_attempts=1)
    assert await sync_to_async(leases.claim)(task.id, "w1")
    before = timezone.now()
    await poll.process(task.id, "w1")
    row = await VideoTask.objects.aget(id=task.id)
    assert (row.lease_owner, row.lease_expires_at, row.poll_attempts) == ("", None, 2)
    assert timedelta(seconds=2.9) < row.next_poll_at - before < timedelta(seconds=4)


async def test_process_backs_off_after_an_upstream_error(alice, make_task, ark, settings):
    settings.STUDIO_VIDEO_POLL_SCALE = 1
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (500, {"error": {"code": "InternalServiceError"}})
    task = await sync_to_async(make_task)(alice.user)
    assert await sync_to_async(leases.claim)(task.id, "w1")
    before = timezone.now()
    await poll.process(task.id, "w1")
    row = await VideoTask.objects.aget(id=task.id)
    assert row.status == "running" and row.poll_attempts == 1
    assert row.next_poll_at - before > timedelta(seconds=7.9)  # three steps further along the schedule


async def test_process_skips_rows_leased_to_someone_else(alice, make_task, ark):
    fake, _ = ark
    task = await sync_to_async(make_task)(alice.user)
    assert await sync_to_async(leases.claim)(task.id, "other")
    await poll.process(task.id, "w1")
    assert fake.requests == []
    assert (await VideoTask.objects.aget(id=task.id)).lease_owner == "other"


async def test_refresh_soon_polls_in_the_background(alice, make_task, ark):
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, {"id": "cgt-up-1", "status": "cancelled"})
    task = await sync_to_async(make_task)(alice.user)
    poll.refresh_soon(task.id)
    await poll.drain()
    assert (await VideoTask.objects.aget(id=task.id)).status == "cancelled"


async def test_a_task_the_upstream_does_not_know_fails_for_good(alice, make_task, ark, caplog):
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (404, {"error": {"code": "ResourceNotFound", "type": "NotFound",
                                                                  "message": "the specified task is not found"}})
    task = await sync_to_async(make_task)(alice.user)
    with pytest.raises(UpstreamError):  # just created: maybe not visible upstream yet, asked again later
        await poll.poll_task(task)
    assert task.status == "running"
    task = await sync_to_async(make_task)(alice.user, created=timezone.now() - timedelta(minutes=5))
    assert await sync_to_async(leases.claim)(task.id, "w1")
    await poll.process(task.id, "w1")
    row = await VideoTask.objects.aget(id=task.id)
    assert (row.status, row.error_code) == ("failed", "TaskNotFound")
    assert "the specified task is not found" in row.error_message and "model" not in row.error_message
    assert not any("failed" in r.getMessage() for r in caplog.records)  # an outcome, not a polling error
    assert await poll.poll_task(row) is False and len(fake.requests) == 2  # never polled again


async def test_no_task_is_polled_past_the_maximum_age(alice, make_task, ark, settings):
    settings.STUDIO_VIDEO_MAX_TASK_AGE = 3600
    fake, _ = ark
    fake.replies[("DELETE", f"{TASKS}/cgt-up-1")] = (200, {})
    task = await sync_to_async(make_task)(alice.user, created=timezone.now() - timedelta(hours=2),
                                          expires_at=timezone.now() + timedelta(days=2))
    assert await poll.poll_task(task) is True
    assert (task.status, task.error_code) == ("expired", "TaskExpired")
    assert [r["method"] for r in fake.requests] == ["DELETE"]


async def _process_once(task_id: str) -> VideoTask:
    assert await sync_to_async(leases.claim)(task_id, "w1")
    await poll.process(task_id, "w1")
    return await VideoTask.objects.aget(id=task_id)


async def test_a_task_whose_answers_cannot_be_read_fails_after_so_many_in_a_row(alice, make_task, ark, settings):
    from studio.models import UsageRecord

    settings.STUDIO_VIDEO_UNREADABLE_POLLS = 3
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, {"id": "cgt-up-1", "status": ["running"]})
    fake.replies[("DELETE", f"{TASKS}/cgt-up-1")] = (200, {})
    task = await sync_to_async(make_task)(alice.user)
    for n in (1, 2):  # not yet: the next answer may be readable
        row = await _process_once(task.id)
        assert (row.status, row.unreadable_polls, row.error_code) == ("running", n, "")
    row = await _process_once(task.id)
    assert (row.status, row.error_code) == ("failed", "UpstreamUnreadable")
    assert "3 queries of the task in a row" in row.error_message and "'status'" in row.error_message
    assert row.finished_at is not None and row.settled and row.cost_usd == 0
    assert [(r["method"]) for r in fake.requests] == ["GET", "GET", "GET", "DELETE"]  # cancelled upstream
    usage = await UsageRecord.objects.aget(route="video.ark", user_id=alice.user.id)
    assert (usage.status_code, usage.cost_usd) == (502, 0)


async def test_a_readable_answer_starts_the_count_of_unreadable_ones_again(alice, make_task, ark, settings):
    settings.STUDIO_VIDEO_UNREADABLE_POLLS = 3
    fake, _ = ark
    unreadable = (200, {"id": "cgt-up-1", "status": "running", "content": {"video_url": 7}})
    task = await sync_to_async(make_task)(alice.user)
    fault = (500, {"error": {"code": "InternalServiceError"}})  # no answer read: the count stands
    for reply, count in ((unreadable, 1), (fault, 1), (unreadable, 2), ((200, {"id": "cgt-up-1", "status": "running"}), 0),
                         (unreadable, 1)):
        fake.replies[("GET", f"{TASKS}/cgt-up-1")] = reply
        row = await _process_once(task.id)
        assert (row.status, row.unreadable_polls) == ("running", count)


async def test_answers_that_are_not_json_are_a_passing_fault_not_counted(alice, make_task, ark, settings):
    settings.STUDIO_VIDEO_UNREADABLE_POLLS = 1
    fake, _ = ark
    fake.replies[("GET", f"{TASKS}/cgt-up-1")] = (200, b"<html>502 bad gateway</html>")
    task = await sync_to_async(make_task)(alice.user)
    for _ in range(2):
        row = await _process_once(task.id)
        assert (row.status, row.unreadable_polls) == ("running", 0)
