"""What a video upstream says about a task, normalized: one shape for every vendor protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studio.models.videos import TERMINAL_STATUSES, VideoStatus


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


# How each vendor spells its states; unknown words keep the task running (tolerant, reference §4.3).
ARK_STATUS = {
    "queued": VideoStatus.QUEUED, "pending": VideoStatus.QUEUED,
    "running": VideoStatus.RUNNING, "processing": VideoStatus.RUNNING,
    "succeeded": VideoStatus.SUCCEEDED, "failed": VideoStatus.FAILED,
    "cancelled": VideoStatus.CANCELLED, "canceled": VideoStatus.CANCELLED,
    "expired": VideoStatus.EXPIRED,
}
DASHSCOPE_STATUS = {
    "PENDING": VideoStatus.QUEUED, "SUSPENDED": VideoStatus.QUEUED,
    "RUNNING": VideoStatus.RUNNING, "SUCCEEDED": VideoStatus.SUCCEEDED,
    "FAILED": VideoStatus.FAILED, "CANCELED": VideoStatus.CANCELLED, "UNKNOWN": VideoStatus.UNKNOWN,
}
