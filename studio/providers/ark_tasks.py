"""Ark Seedance video task calls (mixed into ``ArkProvider``; reference §4)."""

from __future__ import annotations

from typing import Any, ClassVar

from studio.gateway.errors import UpstreamError
from studio.gateway.video_state import ARK_STATUS, UpstreamVideoState

TASKS_PATH = "/api/v3/contents/generations/tasks"


class ArkTasksMixin:
    # Ark posts task records to ``callback_url``; the gateway puts its signed address there.
    video_callback_field: ClassVar[str | None] = "callback_url"

    async def video_create(self, body: dict[str, Any]) -> str:
        """``POST /api/v3/contents/generations/tasks`` → ``{"id": "cgt-…"}``."""
        response = await self.request("POST", TASKS_PATH, json=body)  # type: ignore[attr-defined]
        task_id = _json(response).get("id")
        if not task_id:
            raise UpstreamError("the upstream accepted the video task but returned no task id")
        return str(task_id)

    async def video_get(self, task_id: str) -> dict[str, Any]:
        response = await self.request("GET", f"{TASKS_PATH}/{task_id}")  # type: ignore[attr-defined]
        return _json(response)

    async def video_cancel(self, task_id: str) -> None:
        """Cancels a queued task (a terminal one's record is deleted); the body is ignored."""
        await self.request("DELETE", f"{TASKS_PATH}/{task_id}")  # type: ignore[attr-defined]

    def video_state(self, record: dict[str, Any]) -> UpstreamVideoState:
        return ark_video_state(record)


def ark_video_state(record: dict[str, Any]) -> UpstreamVideoState:
    raw = str(record.get("status") or "")
    content = record.get("content") if isinstance(record.get("content"), dict) else {}
    error = record.get("error") if isinstance(record.get("error"), dict) else {}
    return UpstreamVideoState(
        status=ARK_STATUS.get(raw.lower(), "running" if raw else "queued"),
        upstream_status=raw,
        record=record,
        video_url=str(content.get("video_url") or ""),
        last_frame_url=str(content.get("last_frame_url") or ""),
        error_code=str(error.get("code") or ""),
        error_message=str(error.get("message") or ""),
    )


def _json(response: Any) -> dict[str, Any]:
    try:
        value = response.json()
    except ValueError:
        raise UpstreamError("the upstream answered with a body that is not JSON") from None
    if not isinstance(value, dict):
        raise UpstreamError("the upstream answered with an unexpected JSON body")
    return value
