"""Helpers shared by the video tests: fast sandbox pacing and driving tasks to completion."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from studio.gateway.video import poll as video_poll
from studio.gateway.video import webhooks as video_webhooks


@pytest.fixture
def fast_video(settings):
    """Sandbox tasks finish as soon as their video is rendered; the first poll is due at once."""
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 0
    settings.STUDIO_VIDEO_FIRST_POLL = 0
    settings.STUDIO_VIDEO_POLL_SCALE = 0
    settings.STUDIO_VIDEO_CALLBACKS = True
    yield
    video_webhooks._pending.clear()
    video_poll._background.clear()


def auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


async def poll_until_terminal(task_id: str, timeout: float = 60.0) -> None:
    """Drive the worker's poll function (as the in-process worker would) until the task is final."""
    from studio.models import VideoTask
    from studio.workers import video as worker

    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        task = await VideoTask.objects.aget(id=task_id)
        if task.is_terminal:
            return
        await VideoTask.objects.filter(id=task_id).aupdate(next_poll_at=timezone.now() - timedelta(seconds=1))
        await worker.run_once("test-worker")
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} did not finish in {timeout} s")
