"""Task records an upstream posts to our signed callback address.

The address carries an HMAC of the task id; a missing or wrong signature is refused (403)
before anything is read or changed. The record is applied like a poll result, so a repeated
or late callback changes nothing (terminal states are final). Polling continues as a safety net.
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest, NotFound, PermissionDenied
from studio.gateway.video.apply import apply_state
from studio.gateway.video.poll import upstream_of
from studio.gateway.video.signing import callback_valid
from studio.models.videos import VideoTask
from studio.providers.registry import video_upstream


def verify(task_id: str, signature: str | None) -> None:
    if not callback_valid(task_id, signature):
        raise PermissionDenied("the callback signature is missing or invalid", code="invalid_signature")


async def receive(task_id: str, signature: str, record: dict[str, Any]) -> bool:
    verify(task_id, signature)
    task = await VideoTask.objects.filter(id=task_id).afirst()
    if task is None or not task.callback_injected:
        raise NotFound(f"task '{task_id}' was not found")
    posted = video_upstream(task.upstream_protocol, await upstream_of(task)).parse_callback(record)
    if posted.upstream_task_id != task.upstream_task_id:
        raise BadRequest("the callback record is for another task", param="id")
    return await apply_state(task, posted.state)
