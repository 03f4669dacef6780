"""Applying what an upstream says about a task (from a poll or a callback) to its row.

Every write is conditional on the row still being active, so a terminal state never changes
again and two observers of the same change (callback and poll) apply it once. Each change is
published to the owner's live group and relayed to the client's webhook, if any.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from studio.core.video_states import ACTIVE_STATUSES, UpstreamVideoState, VideoStatus
from studio.gateway.cost import display
from studio.gateway.live import make_event, publish, user_group
from studio.gateway.video import media as video_media
from studio.gateway.video import spend as video_spend
from studio.gateway.video import webhooks as video_webhooks
from studio.gateway.video.signing import file_url
from studio.gateway.video.view import last_frame_url, video_url
from studio.models.videos import VideoTask

logger = logging.getLogger(__name__)


def event_data(task: VideoTask) -> dict[str, Any]:
    request = task.request if isinstance(task.request, dict) else {}
    return {
        "task_id": task.id, "model": task.model_id, "protocol": task.protocol, "status": task.status,
        "prompt": task.prompt[:300], "video_url": video_url(task) if task.status == VideoStatus.SUCCEEDED else "",
        "last_frame_url": last_frame_url(task) if task.status == VideoStatus.SUCCEEDED else "",
        "error_code": task.error_code, "error_message": task.error_message,
        "created": task.created.isoformat(), "updated": task.updated.isoformat(),
        "video_asset": str(task.video_id or ""),  # the mirrored copy's gallery entry
        # For the studio's cards: a still to show before playing, what it cost,
        # the options asked for, and the raw fields its "Advanced" panel lists.
        "poster_url": file_url(task.id, "poster.jpg") if task.video_id else "",
        "cost_usd": display(task.cost_usd) if task.settled else "",
        "options": {name: request[name] for name in ("duration", "resolution", "ratio", "generate_audio", "seed")
                    if name in request},
        "upstream_status": task.upstream_status,
    }


async def announce(task: VideoTask) -> None:
    """Tell the owner's pages and the client's webhook about the task's current state.

    ``event_seq`` counts the row's status changes (1 at creation), so pages drop replays.
    """
    try:
        await publish(user_group(task.user_id), make_event("video.status", task.id, task.event_seq,
                                                           event_data(task)))
    except Exception:  # the channel layer only notifies; the row is the truth
        logger.warning("publishing video task %s failed", task.id, exc_info=True)
    if task.client_callback_url:
        video_webhooks.deliver_soon(task.id)


def _commit(task_id: str, changes: dict[str, Any]) -> VideoTask | None:
    """Apply the change if the task is still active, with its webhook outbox row, atomically."""
    with transaction.atomic():
        if not VideoTask.objects.filter(id=task_id, status__in=ACTIVE_STATUSES).update(**changes):
            return None
        fresh = VideoTask.objects.get(id=task_id)
        video_webhooks.enqueue(fresh)
        return fresh


def insert_new(task: VideoTask) -> None:
    """Store a new task with the outbox row of its first change (``queued``), atomically."""
    with transaction.atomic():
        task.save(force_insert=True)
        video_webhooks.enqueue(task)


async def apply_state(task: VideoTask, state: UpstreamVideoState) -> bool:
    """Store ``state`` on the task; True when the task's status changed."""
    if task.is_terminal:
        return False
    now = timezone.now()
    if state.status == task.status:
        await VideoTask.objects.filter(id=task.id, status=task.status).aupdate(
            upstream_record=state.record, upstream_status=state.upstream_status)
        task.upstream_record, task.upstream_status = state.record, state.upstream_status
        return False
    changes: dict[str, Any] = {
        "status": state.status, "upstream_status": state.upstream_status, "upstream_record": state.record,
        "updated": now, "event_seq": F("event_seq") + 1,
    }
    mirrored = video_media.Mirrored()
    if state.status == VideoStatus.SUCCEEDED:
        mirrored = await video_media.mirror(task.id, task.user_id, task.team_id, state)
        changes.update(video_upstream_url=state.video_url, last_frame_upstream_url=state.last_frame_url,
                       video=mirrored.video, last_frame=mirrored.last_frame, mirror_error=mirrored.error)
    if state.terminal:
        changes["finished_at"] = now
        if state.status != VideoStatus.SUCCEEDED:
            changes.update(error_code=state.error_code[:120], error_message=state.error_message)
    fresh = await sync_to_async(_commit)(task.id, changes)
    if fresh is None:
        await _discard(mirrored)
        return False
    _copy_into(task, fresh)
    if state.terminal:
        try:
            await video_spend.finish(task, state)
        except Exception:  # the task's outcome stands; its cost is logged as missing
            logger.exception("charging video task %s failed", task.id)
    await announce(task)
    return True


async def end_here(task: VideoTask, status: str, code: str, message: str) -> bool:
    """End an unfinished task on the gateway's own account (its upstream's record kept as it was)."""
    state = UpstreamVideoState(status=status, upstream_status=task.upstream_status, record=task.upstream_record,
                               error_code=code, error_message=message)
    return await apply_state(task, state)


async def expire(task: VideoTask) -> bool:
    """Mark an unfinished task ``expired`` once ``execution_expires_after`` has elapsed."""
    return await end_here(task, VideoStatus.EXPIRED, "TaskExpired",
                          "the task did not finish before execution_expires_after elapsed")


def _copy_into(task: VideoTask, fresh: VideoTask) -> None:
    for field in fresh._meta.concrete_fields:
        setattr(task, field.attname, getattr(fresh, field.attname))


async def _discard(mirrored: video_media.Mirrored) -> None:
    if mirrored.video is None and mirrored.last_frame is None:
        return
    await sync_to_async(video_media.discard)(mirrored)
