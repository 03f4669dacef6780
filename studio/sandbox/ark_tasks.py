"""Ark Seedance video tasks, offline (reference §4): create, get, cancel/delete; real MP4 results."""

from __future__ import annotations

from typing import Any

from studio.models.sandbox import SandboxVideoJob
from studio.sandbox import video_jobs
from studio.sandbox.app import Request, Response, json_response, route

TASKS = "/api/v3/contents/generations/tasks"
RATIOS = {"16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"}
RESOLUTIONS = {"480p", "720p", "1080p", "4k"}


def ark_error(status: int, code: str, message: str, param: str = "", kind: str = "BadRequest") -> Response:
    return json_response({"error": {"code": code, "message": message, "param": param, "type": kind}}, status)


def _unauthorized(request: Request) -> Response | None:
    if not request.headers.get("authorization", "").lower().startswith("bearer "):
        return ark_error(401, "AuthenticationError", "the API key or AK/SK in the request is missing or invalid",
                         kind="Unauthorized")
    return None


@route("POST", TASKS)
async def create(request: Request) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    body = request.json() or {}
    if not body.get("model"):
        return ark_error(400, "MissingParameter", "the parameter `model` is required", "model")
    content = body.get("content")
    if not isinstance(content, list) or not content:
        return ark_error(400, "MissingParameter", "the parameter `content` is required", "content")
    prompt = " ".join(str(i.get("text", "")) for i in content if isinstance(i, dict) and i.get("type") == "text")
    if video_jobs.REJECT_MARKER in prompt:
        return ark_error(400, "InputTextSensitiveContentDetected", "the input text may contain sensitive content")
    images = {"first_frame": None, "last_frame": None}
    references = []
    for item in content:
        if not isinstance(item, dict) or item.get("type") != "image_url":
            continue
        image = video_jobs.decode_image((item.get("image_url") or {}).get("url", ""))
        role = item.get("role") or "first_frame"
        if image is None:
            continue
        if role in images:
            images[role] = image
        else:
            references.append(image)
    ratio = str(body.get("ratio") or "16:9")
    resolution = str(body.get("resolution") or "720p").lower()
    if ratio not in RATIOS:
        return ark_error(400, "InvalidParameter", f"ratio {ratio!r} is not supported", "ratio")
    if resolution not in RESOLUTIONS:
        return ark_error(400, "InvalidParameter", f"resolution {resolution!r} is not supported", "resolution")
    frames = body.get("frames")
    duration = frames / 24 if isinstance(frames, int) and frames > 0 else body.get("duration", 5)
    if not isinstance(duration, int | float) or duration <= 0:
        duration = 5  # -1: the model chooses
    width, height = video_jobs.size_for(resolution, ratio, images["first_frame"])
    seed = body.get("seed", -1)
    host = request.headers.get("host", "sandbox")
    job = video_jobs.NewVideoJob(
        id=video_jobs.new_id("cgt-"), model=str(body["model"]), prompt=prompt, width=width, height=height,
        duration=float(duration), seed=seed if isinstance(seed, int) and seed >= 0 else 1276,
        audio=bool(body.get("generate_audio", True)), want_last_frame=bool(body.get("return_last_frame")),
        ratio=ratio, resolution=resolution, first_frame=images["first_frame"], last_frame=images["last_frame"],
        references=references, extra=body, callback_url=str(body.get("callback_url") or ""), host=host,
    )
    created = await video_jobs.submit(job, record=lambda j: task_record(j, host))
    return json_response({"id": created.id})


def task_record(job: SandboxVideoJob, host: str) -> dict[str, Any]:
    status = video_jobs.phase(job)
    body = job.request
    updated = video_jobs.finished_at(job) or video_jobs.started_at(job) or job.created
    record: dict[str, Any] = {
        "id": job.id, "model": job.model, "status": status,
        "created_at": int(job.created), "updated_at": int(updated),
        "seed": job.seed, "resolution": job.resolution, "ratio": job.ratio, "framespersecond": 24,
        "service_tier": body.get("service_tier", "default"),
        "execution_expires_after": body.get("execution_expires_after", 172800),
        "generate_audio": job.audio, "draft": bool(body.get("draft", False)), "priority": body.get("priority", 0),
    }
    if isinstance(body.get("frames"), int):
        record["frames"] = body["frames"]
    else:
        record["duration"] = round(job.duration)
    if body.get("safety_identifier"):
        record["safety_identifier"] = body["safety_identifier"]
    if status == "succeeded":
        video_url, last_frame_url = video_jobs.urls(job, host)
        record["content"] = {"video_url": video_url, **({"last_frame_url": last_frame_url} if last_frame_url else {})}
        tokens = int(job.width * job.height * 24 * job.duration / 1024)
        record["usage"] = {"completion_tokens": tokens, "total_tokens": tokens}
        record["error"] = None
    elif status == "failed":
        record["error"] = {"code": "OutputVideoSensitiveContentDetected",
                           "message": "the output video may contain sensitive content"}
    return record


@route("GET", TASKS + r"/(?P<task_id>[^/]+)")
async def get(request: Request) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    job = await video_jobs.get(request.params["task_id"])
    if job is None:
        return ark_error(404, "ResourceNotFound", "the specified task is not found", kind="NotFound")
    return json_response(task_record(job, request.headers.get("host", "sandbox")))


@route("DELETE", TASKS + r"/(?P<task_id>[^/]+)")
async def delete(request: Request) -> Response:
    if (denied := _unauthorized(request)) is not None:
        return denied
    found = await video_jobs.cancel(request.params["task_id"])
    if found is None:
        return ark_error(404, "ResourceNotFound", "the specified task is not found", kind="NotFound")
    if found == "running":
        return ark_error(400, "OperationDenied.InvalidState", "a running task cannot be cancelled")
    return json_response({})
