"""A video task as the inbound protocols show it: the row's facts, our links, the effective error.

The inbound layer renders this in each protocol's task record (``api/video/render.py``); the
engine never spells a protocol's record itself, and the inbound layer never reads a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from studio.core.video_states import VideoStatus
from studio.gateway.video.signing import file_url
from studio.gateway.video.translations import pair, protocol_format
from studio.models.videos import VideoProtocol, VideoTask


@dataclass(frozen=True, slots=True)
class TaskView:
    id: str
    protocol: str  # the inbound video format the task was created with: ark, dashscope or generic
    model_id: str
    status: str  # a ``VideoStatus``
    is_terminal: bool
    prompt: str
    request: dict[str, Any]
    upstream_record: dict[str, Any]
    created: datetime
    updated: datetime
    finished_at: datetime | None
    expires_at: datetime
    video_url: str
    last_frame_url: str
    error_code: str
    error_message: str
    cost_usd: Decimal | None = None  # charged when the task succeeded
    # The generic format's record fields (resolution, ratio, video_duration, usage) read from whichever
    # protocol's upstream record the task has.
    generic_fields: dict[str, Any] = field(default_factory=dict)


def video_url(task: VideoTask) -> str:
    """Our mirrored copy when we have it (it outlives the upstream's 24 h URL), else the upstream's."""
    if task.video_id:
        return file_url(task.id, "video.mp4")
    return task.video_upstream_url


def last_frame_url(task: VideoTask) -> str:
    if task.last_frame_id:
        return file_url(task.id, "last_frame.png")
    return task.last_frame_upstream_url


def error_of(task: VideoTask) -> tuple[str, str]:
    if task.status == VideoStatus.EXPIRED and not task.error_code:
        return "TaskExpired", "the task did not finish before execution_expires_after elapsed"
    return task.error_code, task.error_message


def view_of(task: VideoTask) -> TaskView:
    code, message = error_of(task)
    generic = (pair(VideoProtocol.GENERIC, protocol_format(task.upstream_protocol)).record_fields(task)
               if task.protocol == VideoProtocol.GENERIC else {})
    return TaskView(
        id=task.id, protocol=task.protocol, model_id=task.model_id, status=task.status,
        is_terminal=task.is_terminal, prompt=task.prompt, request=task.request or {},
        upstream_record=task.upstream_record or {}, created=task.created, updated=task.updated,
        finished_at=task.finished_at, expires_at=task.expires_at, video_url=video_url(task),
        last_frame_url=last_frame_url(task), error_code=code, error_message=message, generic_fields=generic,
        cost_usd=task.cost_usd,
    )
