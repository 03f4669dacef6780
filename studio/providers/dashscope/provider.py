"""Alibaba DashScope protocol: asynchronous video synthesis tasks (reference §5).

The upstream speaks the ``dashscope`` video wire format (the gateway's protocol B): bodies pass
through. It has no task callbacks: tasks are polled.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import orjson

from studio.core import video_states
from studio.core.errors import BadRequest, UnreadableAnswer, UpstreamError, UpstreamRejected
from studio.core.video_states import StateMap, UpstreamVideoState, VideoStatus, map_state, text_field
from studio.providers.base import BaseUrlRule, Provider, json_body
from studio.providers.contracts import CallbackRecord, Capability
from studio.providers.dashscope.errors import map_error

SYNTHESIS_PATH = "/services/aigc/video-generation/video-synthesis"
# First/last-frame (``kf2v``) models have their own task path, as the vendor's SDK chooses it.
KEYFRAMES_PATH = "/services/aigc/image2video/video-synthesis"
TASKS_PATH = "/tasks"
# How DashScope spells task states (upper-cased first); unknown words keep the task running.
STATES: StateMap = {
    "PENDING": VideoStatus.QUEUED, "SUSPENDED": VideoStatus.QUEUED,
    "RUNNING": VideoStatus.RUNNING, "SUCCEEDED": VideoStatus.SUCCEEDED,
    "FAILED": VideoStatus.FAILED, "CANCELED": VideoStatus.CANCELLED, "UNKNOWN": VideoStatus.UNKNOWN,
}


class DashScopeProvider(Provider):
    protocol = "dashscope"
    capabilities = frozenset({Capability.VIDEO_TASKS})
    # ``https://dashscope.aliyuncs.com/api/v1`` or the bare host.
    base_url = BaseUrlRule("/api/v1", re.compile(r"/api/v1$"))
    error_mapping = staticmethod(map_error)
    video_format: ClassVar[str] = "dashscope"
    callback_field: ClassVar[str | None] = None  # DashScope has no task callbacks
    video_states: ClassVar[StateMap] = STATES

    def check_path(self) -> str:
        return f"{TASKS_PATH}?page_no=1&page_size=1"

    async def video_create(self, body: dict[str, Any]) -> str:
        # HTTP calls are asynchronous only: without this header the API refuses the call.
        path = KEYFRAMES_PATH if "kf2v" in str(body.get("model") or "") else SYNTHESIS_PATH
        response = await self.request("POST", path, json=body, headers={"X-DashScope-Async": "enable"})
        data = json_body(response.content)
        output = data.get("output")
        if isinstance(output, dict) and output.get("task_id"):
            return video_states.created_task_id(output, "task_id", "output.")
        if data.get("code"):
            # Some errors arrive with HTTP 200 and a top-level code (reference §5.2, ⚠).
            raise UpstreamRejected(str(data.get("message") or data["code"]), code=str(data["code"]))
        # Accepted (2xx) without a task id: the task may exist, so the answer is not retried.
        return video_states.created_task_id(output, "task_id", "output.")

    async def video_get(self, task_id: str) -> dict[str, Any]:
        response = await self.request("GET", f"{TASKS_PATH}/{task_id}")
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError:  # a proxy's error page, a body cut short: a fault that passes
            raise UpstreamError("the upstream answered the task query with a body that is not JSON") from None
        if not isinstance(data, dict) or not data:  # the upstream does not speak this protocol
            raise UnreadableAnswer("the upstream answered the task query with JSON that is not a task record")
        return data

    async def video_cancel(self, task_id: str) -> None:
        await self.request("POST", f"{TASKS_PATH}/{task_id}/cancel")

    def video_state(self, record: dict[str, Any]) -> UpstreamVideoState:
        return dashscope_video_state(record)

    def parse_callback(self, payload: Any) -> CallbackRecord:
        raise BadRequest("DashScope tasks are never registered for callbacks", param="taskId")


def dashscope_video_state(record: dict[str, Any]) -> UpstreamVideoState:
    output = record.get("output") if isinstance(record.get("output"), dict) else {}
    raw = text_field(output, "task_status", "output.")
    # Failed tasks carry code/message in ``output`` (official) or at the top level (seen in relays).
    code = output.get("code") or record.get("code") or ""
    message = output.get("message") or record.get("message") or ""
    return UpstreamVideoState(
        status=map_state(STATES, raw.upper()),
        upstream_status=raw,
        record=record,
        video_url=text_field(output, "video_url", "output."),
        last_frame_url=text_field(output, "last_frame_url", "output."),
        error_code=str(code),
        error_message=str(message),
    )
