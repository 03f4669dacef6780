"""A video task rendered as each inbound protocol's task record (spec/video.md).

Pure formatting of the engine's ``TaskView``; also what the engine relays to a client's
``callback_url`` (registered with ``studio.gateway.video.webhooks.use_renderer``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from studio.core.video_states import VideoStatus
from studio.gateway.video.view import TaskView

A_STATUS = {VideoStatus.UNKNOWN: "failed"}
B_STATUS = {
    VideoStatus.QUEUED: "PENDING", VideoStatus.RUNNING: "RUNNING", VideoStatus.SUCCEEDED: "SUCCEEDED",
    VideoStatus.FAILED: "FAILED", VideoStatus.CANCELLED: "CANCELED", VideoStatus.EXPIRED: "FAILED",
    VideoStatus.UNKNOWN: "UNKNOWN",
}
C_STATUS = {VideoStatus.UNKNOWN: "failed"}
A_FIELDS_FROM_REQUEST = ("resolution", "ratio", "service_tier", "execution_expires_after", "generate_audio",
                         "safety_identifier", "seed", "priority", "draft", "frames", "duration")


def render_ark(task: TaskView) -> dict[str, Any]:
    record = {k: v for k, v in task.upstream_record.items() if k not in ("content", "error", "usage")}
    for name in A_FIELDS_FROM_REQUEST:
        if name not in record and name in task.request:
            record[name] = task.request[name]
    if "frames" in task.request:
        record.pop("duration", None)  # only one of the two is returned: frames when it was specified
    record.update({
        "id": task.id, "model": task.model_id, "status": A_STATUS.get(task.status, task.status),
        "created_at": int(task.created.timestamp()), "updated_at": int(task.updated.timestamp()),
    })
    record.setdefault("execution_expires_after", int((task.expires_at - task.created).total_seconds()))
    record.setdefault("service_tier", "default")
    if task.status == VideoStatus.SUCCEEDED:
        content = {"video_url": task.video_url}
        if task.last_frame_url:
            content["last_frame_url"] = task.last_frame_url
        record["content"] = content
        usage = task.upstream_record.get("usage")
        if isinstance(usage, dict):
            record["usage"] = usage
    elif task.is_terminal:
        code, message = task.error_code, task.error_message
        record["error"] = {"code": code or "InternalServiceError", "message": message or "the task did not succeed"}
    return record


def _stamp(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if moment else ""


def render_dashscope(task: TaskView) -> dict[str, Any]:
    upstream_output = task.upstream_record.get("output") or {}
    output: dict[str, Any] = {
        "task_id": task.id,
        "task_status": B_STATUS.get(task.status, "UNKNOWN"),
        "submit_time": upstream_output.get("submit_time") or _stamp(task.created),
    }
    for name in ("scheduled_time", "end_time", "orig_prompt", "actual_prompt"):
        if upstream_output.get(name):
            output[name] = upstream_output[name]
    if task.is_terminal and "end_time" not in output:
        output["end_time"] = _stamp(task.finished_at or task.updated)
    output.setdefault("orig_prompt", task.prompt)
    if task.status == VideoStatus.SUCCEEDED:
        output["video_url"] = task.video_url
    elif task.is_terminal:
        code, message = task.error_code, task.error_message
        output["code"] = code or "InternalError"
        output["message"] = message or "the task did not succeed"
    record: dict[str, Any] = {"request_id": str(uuid.uuid4()), "output": output}
    usage = task.upstream_record.get("usage")
    if isinstance(usage, dict):
        record["usage"] = usage
    return record


def _millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def render_generic(task: TaskView) -> dict[str, Any]:
    fields = task.generic_fields
    record: dict[str, Any] = {
        "task_id": task.id,
        "status": C_STATUS.get(task.status, task.status),
        "model": task.model_id,
        "created": _millis(task.created),
        "updated": _millis(task.updated),
        "resolution": fields.get("resolution"),
        "ratio": fields.get("ratio"),
        "usage": fields.get("usage") or {},
    }
    if task.status == VideoStatus.SUCCEEDED:
        record["video_url"] = task.video_url
        record["video_duration"] = fields.get("video_duration")
    elif task.is_terminal:
        code, message = task.error_code, task.error_message
        record["error_code"] = code or "failed"
        record["error_message"] = message or "the task did not succeed"
    return record


RENDERERS: dict[str, Callable[[TaskView], dict[str, Any]]] = {"ark": render_ark, "dashscope": render_dashscope, "generic": render_generic}


def render(task: TaskView) -> dict[str, Any]:
    return RENDERERS[task.protocol](task)
