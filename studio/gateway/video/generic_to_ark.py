"""Generic video format (protocol C) → ``ark`` (protocol A: Seedance tasks), and the generic
record fields read from an ark task record."""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.video.generic import check_common, rename_param
from studio.gateway.video.rules_ark import validate_ark
from studio.models.videos import VideoTask

SOURCE = "generic"
TARGET = "ark"
ITEM_TYPE = {"image": "image_url", "video": "video_url", "audio": "audio_url"}
COPIED = ("duration", "seed", "watermark", "generate_audio", "ratio", "callback_url")


def translate(body: dict[str, Any], model_id: str, caps: dict[str, Any]) -> dict[str, Any]:
    """The Ark create body (without ``model``), validated by the ark rules."""
    medias = check_common(body)
    content: list[dict[str, Any]] = []
    param_map: dict[str, str] = {}
    if body.get("prompt"):
        param_map["content[0]"] = "prompt"
        content.append({"type": "text", "text": body["prompt"]})
    for media in medias:
        kind = ITEM_TYPE[media["kind"]]
        param_map[f"content[{len(content)}]"] = f"medias[{media['index']}]"
        content.append({"type": kind, kind: {"url": media["url"]}, "role": media["role"]})
    upstream: dict[str, Any] = {"content": content}
    for name in COPIED:
        if body.get(name) is not None:
            upstream[name] = body[name]
    if isinstance(body.get("resolution"), str):
        upstream["resolution"] = body["resolution"].lower()
    param_map["content"] = "medias"
    try:
        validate_ark(upstream, model_id, caps)
    except BadRequest as exc:
        raise rename_param(exc, param_map) from None
    return upstream


def record_fields(task: VideoTask) -> dict[str, Any]:
    record = task.upstream_record or {}
    request = task.request or {}
    frames = record.get("frames")
    seconds = record.get("duration")
    if seconds is None and isinstance(frames, int):
        seconds = round(frames / (record.get("framespersecond") or 24), 2)
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    return {
        "resolution": record.get("resolution") or (request.get("resolution") or "").lower() or None,
        "ratio": record.get("ratio") or request.get("ratio"),
        "video_duration": seconds,
        "usage": {"total_tokens": usage.get("total_tokens")} if usage else {},
    }
