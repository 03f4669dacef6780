"""DashScope video synthesis, offline (reference §5): async create, task query and cancel; real MP4s."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from studio.models.sandbox import SandboxVideoJob
from studio.sandbox import video_jobs
from studio.sandbox.app import Request, Response, json_response, route

SYNTHESIS = "/api/v1/services/aigc/video-generation/video-synthesis"
KEYFRAMES = "/api/v1/services/aigc/image2video/video-synthesis"  # first/last-frame (kf2v) models
TASKS = "/api/v1/tasks"
PHASES = {"queued": "PENDING", "running": "RUNNING", "succeeded": "SUCCEEDED", "failed": "FAILED",
          "cancelled": "CANCELED"}


def ds_error(status: int, code: str, message: str) -> Response:
    return json_response({"request_id": str(uuid.uuid4()), "code": code, "message": message}, status)


def _unauthorized(request: Request) -> Response | None:
    if not request.headers.get("authorization", "").lower().startswith("bearer "):
        return ds_error(401, "InvalidApiKey", "Invalid API-key provided.")
    return None


def _stamp(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


@route("POST", SYNTHESIS)
async def create(request: Request) -> Response:
    return await _create(request, keyframes=False)


@route("POST", KEYFRAMES)
async def create_from_keyframes(request: Request) -> Response:
    return await _create(request, keyframes=True)


async def _create(request: Request, *, keyframes: bool) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    if request.headers.get("x-dashscope-async", "").lower() != "enable":
        return ds_error(403, "AccessDenied", "current user api does not support synchronous calls")
    body = request.json() or {}
    if not body.get("model"):
        return ds_error(400, "BadRequest.EmptyModel", "Required parameter(s) missing or invalid: model")
    if ("kf2v" in str(body["model"])) != keyframes:
        # The vendor serves each model family on its own task path only.
        return ds_error(400, "InvalidParameter", f"Model {body['model']} is not supported by this API; first/last-"
                        "frame (kf2v) models use image2video/video-synthesis, the others video-generation")
    data_input = body.get("input") if isinstance(body.get("input"), dict) else {}
    params = body.get("parameters") if isinstance(body.get("parameters"), dict) else {}
    prompt = str(data_input.get("prompt") or "")
    if video_jobs.REJECT_MARKER in prompt:
        return ds_error(400, "DataInspectionFailed", "Input data may contain inappropriate content.")
    frames: dict[str, Any] = {"first_frame": None, "last_frame": None}
    references = []
    for item in data_input.get("media") or []:
        if not isinstance(item, dict):
            continue
        image = video_jobs.decode_image(item.get("url", ""))
        if image is None:
            continue
        if item.get("type") in frames:
            frames[item["type"]] = image
        elif item.get("type") == "reference_image":
            references.append(image)
    for key, slot in (("img_url", "first_frame"), ("first_frame_url", "first_frame"), ("last_frame_url", "last_frame")):
        if data_input.get(key) and frames[slot] is None:
            frames[slot] = video_jobs.decode_image(data_input[key])
    resolution = str(params.get("resolution") or "1080P").lower()
    ratio = str(params.get("ratio") or ("adaptive" if frames["first_frame"] is not None else "16:9"))
    duration = params.get("duration", 5)
    if not isinstance(duration, int | float) or duration <= 0:
        duration = 5
    width, height = video_jobs.size_for(resolution, ratio, frames["first_frame"])
    seed = params.get("seed")
    job = video_jobs.NewVideoJob(
        id=str(uuid.uuid4()), model=str(body["model"]), prompt=prompt, width=width, height=height,
        duration=float(duration), seed=seed if isinstance(seed, int) and seed >= 0 else 42,
        audio=bool(params.get("audio", True)), want_last_frame=False, ratio=ratio, resolution=resolution,
        first_frame=frames["first_frame"], last_frame=frames["last_frame"], references=references, extra=body,
        host=request.headers.get("host", "sandbox"),
    )
    await video_jobs.submit(job)
    return json_response({"output": {"task_id": job.id, "task_status": "PENDING"}, "request_id": str(uuid.uuid4())})


def task_record(job: SandboxVideoJob, host: str) -> dict[str, Any]:
    status = PHASES[video_jobs.phase(job)]
    started = video_jobs.started_at(job)
    output: dict[str, Any] = {
        "task_id": job.id, "task_status": status, "submit_time": _stamp(job.created),
        "orig_prompt": job.prompt,
    }
    if started is not None:
        output["scheduled_time"] = _stamp(started)
    record: dict[str, Any] = {"request_id": str(uuid.uuid4()), "output": output}
    if status in ("SUCCEEDED", "FAILED", "CANCELED"):
        output["end_time"] = _stamp(video_jobs.finished_at(job) or time.time())
    if status == "SUCCEEDED":
        output["video_url"] = video_jobs.urls(job, host)[0]
        seconds = round(job.duration)
        record["usage"] = {"duration": seconds, "input_video_duration": 0, "output_video_duration": seconds,
                           "video_count": 1, "SR": min(job.width, job.height), "ratio": job.ratio}
    elif status == "FAILED":
        output["code"] = "DataInspectionFailed"
        output["message"] = "Output data may contain inappropriate content."
    return record


@route("GET", TASKS + r"/(?P<task_id>[^/]+)")
async def get(request: Request) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    job = await video_jobs.get(request.params["task_id"])
    if job is None:  # DashScope answers unknown (or >24 h old) tasks with status UNKNOWN
        return json_response({"request_id": str(uuid.uuid4()),
                              "output": {"task_id": request.params["task_id"], "task_status": "UNKNOWN"}})
    return json_response(task_record(job, request.headers.get("host", "sandbox")))


@route("POST", TASKS + r"/(?P<task_id>[^/]+)/cancel")
async def cancel(request: Request) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    if await video_jobs.cancel(request.params["task_id"]) != "queued":
        return ds_error(400, "UnsupportedOperation", "only PENDING tasks can be canceled")
    return json_response({"request_id": str(uuid.uuid4())})
