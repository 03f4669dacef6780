"""Alibaba DashScope protocol: asynchronous video synthesis tasks (reference §5)."""

from __future__ import annotations

from typing import Any, ClassVar

from studio.gateway.errors import GatewayError, UpstreamError, UpstreamRejected, from_upstream_status
from studio.gateway.video_state import DASHSCOPE_STATUS, UpstreamVideoState

from .base import Provider, json_body

SYNTHESIS_PATH = "/api/v1/services/aigc/video-generation/video-synthesis"
TASKS_PATH = "/api/v1/tasks"


class DashScopeProvider(Provider):
    protocol = "dashscope"
    video_callback_field: ClassVar[str | None] = None  # DashScope has no task callbacks

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """``{"request_id", "code", "message"}``, no wrapper object (reference §5.3)."""
        data = json_body(body)
        if not data.get("code") and not data.get("message"):
            return super().error_from_response(status, body)
        return from_upstream_status(
            status, str(data.get("message") or f"HTTP {status}"), code=str(data.get("code") or "") or None,
            details={"upstream_status": status, "request_id": data.get("request_id")},
        )

    async def video_create(self, body: dict[str, Any]) -> str:
        # HTTP calls are asynchronous only: without this header the API refuses the call.
        response = await self.request("POST", SYNTHESIS_PATH, json=body, headers={"X-DashScope-Async": "enable"})
        data = json_body(response.content)
        output = data.get("output") if isinstance(data.get("output"), dict) else {}
        if output.get("task_id"):
            return str(output["task_id"])
        if data.get("code"):
            # Some errors arrive with HTTP 200 and a top-level code (reference §5.2, ⚠).
            raise UpstreamRejected(str(data.get("message") or data["code"]), code=str(data["code"]))
        raise UpstreamError("the upstream accepted the video task but returned no task id")

    async def video_get(self, task_id: str) -> dict[str, Any]:
        response = await self.request("GET", f"{TASKS_PATH}/{task_id}")
        data = json_body(response.content)
        if not data:
            raise UpstreamError("the upstream answered the task query with a body that is not a JSON object")
        return data

    async def video_cancel(self, task_id: str) -> None:
        await self.request("POST", f"{TASKS_PATH}/{task_id}/cancel")

    def video_state(self, record: dict[str, Any]) -> UpstreamVideoState:
        return dashscope_video_state(record)


def dashscope_video_state(record: dict[str, Any]) -> UpstreamVideoState:
    output = record.get("output") if isinstance(record.get("output"), dict) else {}
    raw = str(output.get("task_status") or "")
    # Failed tasks carry code/message in ``output`` (official) or at the top level (seen in relays).
    code = output.get("code") or record.get("code") or ""
    message = output.get("message") or record.get("message") or ""
    return UpstreamVideoState(
        status=DASHSCOPE_STATUS.get(raw.upper(), "running" if raw else "queued"),
        upstream_status=raw,
        record=record,
        video_url=str(output.get("video_url") or ""),
        last_frame_url=str(output.get("last_frame_url") or ""),
        error_code=str(code),
        error_message=str(message),
    )
