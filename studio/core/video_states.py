"""What a video upstream says about a task, normalized: one shape for every vendor protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import models

from studio.core.errors import UnreadableAnswer


class VideoStatus(models.TextChoices):
    """Normalized states; each inbound protocol renders them in its own words."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    EXPIRED = "expired", "Expired"
    UNKNOWN = "unknown", "Unknown"


TERMINAL_STATUSES = frozenset({
    VideoStatus.SUCCEEDED, VideoStatus.FAILED, VideoStatus.CANCELLED, VideoStatus.EXPIRED, VideoStatus.UNKNOWN,
})
ACTIVE_STATUSES = (VideoStatus.QUEUED, VideoStatus.RUNNING)


@dataclass(frozen=True, slots=True)
class UpstreamVideoState:
    status: str  # a VideoStatus value
    upstream_status: str
    record: dict[str, Any]
    video_url: str = ""
    last_frame_url: str = ""
    error_code: str = ""
    error_message: str = ""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


def is_terminal(status: str) -> bool:
    return status in TERMINAL_STATUSES


StateMap = dict[str, VideoStatus]
# The error code of a task its upstream does not know (any protocol): failed for good, once the
# task is older than the grace period a just-created task may need to become visible upstream.
TASK_NOT_FOUND = "TaskNotFound"
# The error code of a task failed because its upstream's answers about it could not be read
# (``STUDIO_VIDEO_UNREADABLE_POLLS`` queries in a row).
UNREADABLE = "UpstreamUnreadable"


def text_field(record: Mapping[str, Any], name: str, where: str = "") -> str:
    """A text field of a task record (its state word, a media address): absent or null reads as
    "", a string as itself; anything else means the record is not of its protocol's shape."""
    value = record.get(name)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise UnreadableAnswer(f"the upstream's task record has a '{where}{name}' that is not a string "
                           f"(a {type(value).__name__})", param=f"{where}{name}")


def created_task_id(record: Any, name: str, where: str = "") -> str:
    """The task id of a create call's 2xx answer. The upstream may have made the task whatever
    the answer looks like, so an answer without a readable id is an ``UnreadableAnswer`` (not
    retried: a retry on another upstream could make the task twice)."""
    value = record.get(name) if isinstance(record, Mapping) else None
    if isinstance(value, str) and value:
        return value
    found = "none" if value is None or value == "" else f"a {type(value).__name__}"
    raise UnreadableAnswer(f"the upstream accepted the video task but its answer has no task id in "
                           f"'{where}{name}' ({found}); not retried, as the task may have been made",
                           param=f"{where}{name}")


def map_state(states: StateMap, raw: str) -> str:
    """A vendor's state word as a ``VideoStatus``; an unknown word keeps the task running
    (tolerant, reference §4.3) and an empty one means it has not started."""
    return states.get(raw, VideoStatus.RUNNING if raw else VideoStatus.QUEUED)
