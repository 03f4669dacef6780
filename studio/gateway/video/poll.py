"""Polling one task's upstream: always with the upstream (and credential) that created it."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from asgiref.sync import sync_to_async
from django.utils import timezone

from studio.core.entries import UpstreamEntry
from studio.core.errors import GatewayError, UnreadableAnswer, UpstreamError
from studio.core.video_states import TASK_NOT_FOUND, UNREADABLE, VideoStatus
from studio.gateway import snapshot
from studio.gateway.video import settings as video_settings
from studio.gateway.video.apply import apply_state, end_here, expire
from studio.gateway.video.leases import WORKER_ID, claim
from studio.models import Upstream
from studio.models.videos import VideoTask
from studio.providers.registry import video_upstream

logger = logging.getLogger(__name__)
_background: set[asyncio.Task] = set()


def _entry_from_row(up: Upstream) -> UpstreamEntry:
    return UpstreamEntry(id=up.id, name=up.name, protocol=up.protocol, base_url=up.base_url.rstrip("/"),
                         credential=up.credential, priority=up.priority, weight=up.weight, timeout=up.timeout,
                         model_map=dict(up.model_map or {}))


async def upstream_of(task: VideoTask) -> UpstreamEntry:
    snap = await snapshot.get()
    entry = snap.upstreams.get(task.upstream_id)
    if entry is None:  # disabled since: the task still finishes where it started
        entry = _entry_from_row(await Upstream.objects.aget(id=task.upstream_id))
    return entry


def deadline(task: VideoTask) -> datetime:
    """When the task expires: its own ``expires_at``, capped by the gateway's maximum task age."""
    return min(task.expires_at, task.created + timedelta(seconds=video_settings.max_task_age()))


async def poll_task(task: VideoTask) -> bool:
    """Ask the upstream once and apply the answer; True when the status changed."""
    if task.is_terminal:
        return False
    if timezone.now() >= deadline(task):
        changed = await expire(task)
        if changed:
            await _cancel_quietly(task)
        return changed
    provider = video_upstream(task.upstream_protocol, await upstream_of(task))
    record = await provider.video_get(task.upstream_task_id)
    state = provider.video_state(record)
    if state.error_code == TASK_NOT_FOUND and timezone.now() - task.created < timedelta(
            seconds=video_settings.not_found_grace()):
        # A task just created may not be visible upstream yet: asked again later, not failed.
        raise UpstreamError(f"the upstream does not know task {task.upstream_task_id} yet")
    return await apply_state(task, state)


async def _cancel_quietly(task: VideoTask) -> None:
    try:
        provider = video_upstream(task.upstream_protocol, await upstream_of(task))
        await provider.video_cancel(task.upstream_task_id)
    except Exception:  # best effort: the upstream expires it on its own too
        logger.info("cancelling expired task %s upstream failed", task.id)


async def fail_unreadable(task: VideoTask, polls: int, message: str) -> bool:
    """Fail a task whose upstream's last ``polls`` answers about it could not be read: its state
    cannot be known, so it ends now (its reservation released, its video slot freed) rather than
    running until the maximum task age; the upstream is asked to cancel it."""
    changed = await end_here(task, VideoStatus.FAILED, UNREADABLE,
                             f"the upstream's answers to {polls} queries of the task in a row could not be read; "
                             f"the last: {message}")
    if changed:
        await _cancel_quietly(task)
    return changed


def next_delay(attempts: int) -> float:
    schedule = video_settings.poll_schedule()
    return schedule[min(attempts, len(schedule) - 1)]


async def process(task_id: str, worker_id: str) -> None:
    """Poll a task this worker holds the lease on, then schedule its next poll and release it."""
    task = await VideoTask.objects.filter(id=task_id, lease_owner=worker_id).afirst()
    if task is None:
        return
    error = ""
    unreadable = task.unreadable_polls  # only a readable answer starts the count again
    try:
        await poll_task(task)
        unreadable = 0
    except UnreadableAnswer as exc:
        error, unreadable = exc.message, unreadable + 1
        logger.info("polling video task %s: answer %d in a row not readable: %s", task_id, unreadable, exc.message)
        if unreadable >= video_settings.unreadable_polls():
            try:
                await fail_unreadable(task, unreadable, exc.message)
            except Exception:  # asked again at the next unreadable answer
                logger.exception("failing video task %s failed", task_id)
    except GatewayError as exc:
        error = exc.message
        logger.info("polling video task %s failed: %s", task_id, exc.message)
    except Exception as exc:
        error = repr(exc)
        logger.exception("polling video task %s failed", task_id)
    now = timezone.now()
    await VideoTask.objects.filter(id=task_id, lease_owner=worker_id).aupdate(
        lease_owner="", lease_expires_at=None, last_polled_at=now, poll_attempts=task.poll_attempts + 1,
        unreadable_polls=unreadable,
        next_poll_at=now + timedelta(seconds=next_delay(task.poll_attempts + (3 if error else 0))),
    )


async def refresh(task_id: str, worker_id: str) -> None:
    if await sync_to_async(claim)(task_id, worker_id):
        await process(task_id, worker_id)


def refresh_soon(task_id: str) -> None:
    """A non-blocking refresh for a query that found a stale row (skipped if another holds it)."""
    job = asyncio.get_running_loop().create_task(refresh(task_id, WORKER_ID + ":query"))
    _background.add(job)
    job.add_done_callback(_background.discard)


async def drain() -> None:
    while _background:
        await asyncio.gather(*list(_background), return_exceptions=True)
