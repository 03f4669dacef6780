"""Seedance video tasks on the Ark protocol (``VideoTaskUpstream`` of ``ArkProvider``; reference §4).

The upstream speaks the ``ark`` video wire format (the gateway's protocol A): bodies pass
through. It posts task records to the create body's ``callback_url``, where the gateway puts its
signed address; a posted record has the same shape as a queried one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from studio.core.errors import BadRequest, GatewayError, UnreadableAnswer, UpstreamError
from studio.core.video_states import (
    TASK_NOT_FOUND,
    StateMap,
    UpstreamVideoState,
    VideoStatus,
    created_task_id,
    map_state,
    text_field,
)
from studio.providers.contracts import CallbackRecord

if TYPE_CHECKING:
    from studio.providers.base import Provider

    _Base = Provider
else:
    _Base = object

TASKS_PATH = "/contents/generations/tasks"
# How Ark spells task states (lower-cased first); unknown words keep the task running.
STATES: StateMap = {
    "queued": VideoStatus.QUEUED, "pending": VideoStatus.QUEUED,
    "running": VideoStatus.RUNNING, "processing": VideoStatus.RUNNING,
    "succeeded": VideoStatus.SUCCEEDED, "failed": VideoStatus.FAILED,
    "cancelled": VideoStatus.CANCELLED, "canceled": VideoStatus.CANCELLED,
    "expired": VideoStatus.EXPIRED,
}


class ArkTasksMixin(_Base):
    video_format: ClassVar[str] = "ark"
    callback_field: ClassVar[str | None] = "callback_url"
    video_states: ClassVar[StateMap] = STATES

    async def video_create(self, body: dict[str, Any]) -> str:
        """``POST /api/v3/contents/generations/tasks`` → ``{"id": "cgt-…"}``."""
        response = await self.request("POST", TASKS_PATH, json=body)
        try:
            answer = response.json()
        except ValueError:  # accepted (2xx): the task may exist, so the answer is not retried
            answer = None
        return created_task_id(answer, "id")

    async def video_get(self, task_id: str) -> dict[str, Any]:
        """The task's record; a task the upstream no longer knows (404) is a failed record."""
        try:
            response = await self.request("GET", f"{TASKS_PATH}/{task_id}")
        except GatewayError as exc:
            if exc.details.get("upstream_status") != 404:
                raise
            return task_not_found_record(task_id, exc.message)
        return _json(response)

    async def video_cancel(self, task_id: str) -> None:
        """Cancels a queued task (a terminal one's record is deleted); the body is ignored."""
        await self.request("DELETE", f"{TASKS_PATH}/{task_id}")

    def video_state(self, record: dict[str, Any]) -> UpstreamVideoState:
        return ark_video_state(record)

    def parse_callback(self, payload: Any) -> CallbackRecord:
        if not isinstance(payload, dict) or not isinstance(payload.get("id"), str) or not payload["id"]:
            raise BadRequest("the callback body is not a task record: 'id' is missing", param="id")
        try:
            state = ark_video_state(payload)
        except UnreadableAnswer as exc:  # the upstream posted it: its own 400, naming the field
            raise BadRequest(f"the callback body is not a task record: {exc.message}", param=exc.param) from None
        return CallbackRecord(upstream_task_id=payload["id"], state=state)


def task_not_found_record(task_id: str, message: str) -> dict[str, Any]:
    """What the gateway stores for a task its upstream answers 404 for: failed, for good
    (polling it again would only ever get the same answer)."""
    return {"id": task_id, "status": "failed",
            "error": {"code": TASK_NOT_FOUND, "message": f"the upstream does not know this task ({message})"}}


def ark_video_state(record: dict[str, Any]) -> UpstreamVideoState:
    raw = text_field(record, "status")
    content = record.get("content") if isinstance(record.get("content"), dict) else {}
    error = record.get("error") if isinstance(record.get("error"), dict) else {}
    return UpstreamVideoState(
        status=map_state(STATES, raw.lower()),
        upstream_status=raw,
        record=record,
        video_url=text_field(content, "video_url", "content."),
        last_frame_url=text_field(content, "last_frame_url", "content."),
        error_code=str(error.get("code") or ""),
        error_message=str(error.get("message") or ""),
    )


def _json(response: Any) -> dict[str, Any]:
    try:
        value = response.json()
    except ValueError:
        # Not JSON at all (a proxy's error page, a body cut short): a fault that passes.
        raise UpstreamError("the upstream answered with a body that is not JSON") from None
    if not isinstance(value, dict):
        # JSON of another shape: the upstream does not speak this protocol.
        raise UnreadableAnswer("the upstream answered with a JSON body that is not an object")
    return value
