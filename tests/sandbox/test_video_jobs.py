"""The sandbox's video callbacks: posted on each status change by a task of the event loop, which
ends with the task's last status or when the callbacks are stopped, never touching the database later."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from studio.models.sandbox import SandboxVideoJob
from studio.sandbox import video_jobs
from tests.loopback_hook import Hook

pytestmark = pytest.mark.django_db(transaction=True)


def failing_job(callback_url: str) -> video_jobs.NewVideoJob:
    return video_jobs.NewVideoJob(
        id=video_jobs.new_id("cgt-"), model="alpha-2.0-fast", prompt="a storm [fail]", width=64, height=36,
        duration=1, seed=1, audio=False, want_last_frame=False, ratio="16:9", resolution="480p",
        callback_url=callback_url)


def record(job) -> dict:
    return {"id": job.id, "status": video_jobs.phase(job)}


@pytest.fixture
def hook():
    receiver = Hook()
    yield receiver
    receiver.close()


async def test_each_status_change_is_posted_and_the_sender_ends_with_the_task(settings, hook):
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 0
    job = await video_jobs.submit(failing_job(hook.url), record=record)
    for _ in range(400):
        if not video_jobs.callback_senders():
            break
        await asyncio.sleep(video_jobs.CALLBACK_TICK)
    assert video_jobs.callback_senders() == 0
    assert [orjson.loads(body) for _, body in hook.received] == [{"id": job.id, "status": "failed"}]


async def test_stopping_callbacks_ends_the_senders_of_unfinished_tasks(settings, hook):
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 3600
    await video_jobs.submit(failing_job(hook.url), record=record)
    await video_jobs.submit(failing_job(hook.url), record=record)
    assert video_jobs.callback_senders() == 2
    await asyncio.sleep(video_jobs.CALLBACK_TICK * 3)  # they are looking at their tasks
    await video_jobs.stop_callbacks()
    assert video_jobs.callback_senders() == 0 and hook.received == []


async def test_waiting_for_renders_returns_once_the_video_is_stored(settings):
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 3600  # the task's clock has nothing to do with its render
    new = failing_job("")
    new.prompt = "a lighthouse at dusk"
    job = await video_jobs.submit(new)
    assert await video_jobs.wait_renders(timeout=60)
    stored = await SandboxVideoJob.objects.aget(id=job.id)
    assert stored.rendered_at is not None and stored.video_name.endswith(".mp4") and not stored.render_error
    assert await video_jobs.wait_renders(timeout=0)  # nothing left under way
