"""The video poll loop: leases, backoff, expiry, final states, killed workers, two workers at once."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from studio.workers import video as worker
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/alpha/video/generations"
BODY = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "waves"}], "resolution": "480p",
        "duration": 4}


def make_rows(user, count: int, **fields) -> list[str]:
    from studio.models import Upstream, VideoTask

    upstream = Upstream.objects.get(name="Sandbox")
    now = timezone.now()
    rows = [VideoTask(user=user, protocol="ark", model_id="alpha-2.0", upstream=upstream, upstream_protocol="ark",
                      upstream_model="m", upstream_task_id=f"cgt-{i}", next_poll_at=now - timedelta(seconds=1),
                      expires_at=now + timedelta(days=1), **fields) for i in range(count)]
    VideoTask.objects.bulk_create(rows)
    return [r.id for r in rows]


def claim_concurrently(workers: int) -> list[list[str]]:
    barrier = threading.Barrier(workers)
    results: list[list[str]] = [[] for _ in range(workers)]

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = worker.claim_due(f"w{index}", limit=100)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def assert_disjoint_and_complete(results: list[list[str]], ids: list[str]) -> None:
    claimed = [task_id for batch in results for task_id in batch]
    assert len(claimed) == len(set(claimed)), "a task was claimed by two workers"
    assert sorted(claimed) == sorted(ids)


def test_two_workers_never_claim_the_same_task_sqlite_or_any(alice):
    ids = make_rows(alice.user, 40)
    assert_disjoint_and_complete(claim_concurrently(4), ids)
    # Leased rows are not due again until the lease ends.
    assert worker.claim_due("late") == []


@pytest.mark.postgres
def test_two_workers_never_claim_the_same_task_postgres(alice):
    if connection.vendor != "postgresql":
        pytest.skip("needs DATABASE_URL pointing at PostgreSQL")
    assert connection.features.has_select_for_update_skip_locked
    ids = make_rows(alice.user, 60)
    assert_disjoint_and_complete(claim_concurrently(6), ids)


def test_lease_release_schedules_next_poll_with_backoff(alice, settings):
    from studio.gateway.video.poll import next_delay

    settings.STUDIO_VIDEO_POLL_SCALE = 1
    assert [next_delay(i) for i in range(7)] == [2, 3, 5, 8, 12, 12, 12]


async def test_killed_worker_lease_expires_and_task_still_finishes(client, alice):
    from studio.models import VideoTask

    task_id = (await client.post(URL, json=BODY, headers=auth(alice.secret))).json()["id"]
    # A worker claims the row and dies before polling it.
    claimed = await asyncio.to_thread(worker.claim_due, "dead-worker")
    assert claimed == [task_id]
    assert await worker.run_once("survivor") == 0  # the lease holds while it lasts
    await VideoTask.objects.filter(id=task_id).aupdate(lease_expires_at=timezone.now() - timedelta(seconds=1))
    await poll_until_terminal(task_id)
    row = await VideoTask.objects.aget(id=task_id)
    assert row.status == "succeeded" and row.lease_owner == "" and row.video_id is not None


async def test_expiry_marks_expired_and_terminal_state_never_changes(client, alice):
    from studio.core.video_states import UpstreamVideoState
    from studio.gateway.video.apply import apply_state
    from studio.models import VideoTask

    task_id = (await client.post(URL, json=BODY, headers=auth(alice.secret))).json()["id"]
    await VideoTask.objects.filter(id=task_id).aupdate(expires_at=timezone.now() - timedelta(seconds=1))
    await worker.run_once("w")
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "expired" and record["error"]["code"] == "TaskExpired"

    row = await VideoTask.objects.aget(id=task_id)
    late = UpstreamVideoState(status="succeeded", upstream_status="succeeded", record={"status": "succeeded"},
                              video_url="http://sandbox.studio.internal/x.mp4")
    assert await apply_state(row, late) is False
    row.status = "running"  # even a stale in-memory copy cannot overwrite the final state
    assert await apply_state(row, late) is False
    assert (await VideoTask.objects.aget(id=task_id)).status == "expired"


async def test_poll_loop_runs_as_registered_job(client, alice):
    from studio.models import VideoTask
    from studio.workers.runner import jobs, run_forever

    assert any(job.path == "studio.workers.video.poll_due_videos" for job in jobs())
    task_id = (await client.post(URL, json=BODY, headers=auth(alice.secret))).json()["id"]
    stop = asyncio.Event()
    loop_task = asyncio.create_task(run_forever(stop))
    try:
        for _ in range(600):
            if (await VideoTask.objects.aget(id=task_id)).is_terminal:
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await loop_task
    assert (await VideoTask.objects.aget(id=task_id)).status == "succeeded"
