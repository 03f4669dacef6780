"""Generic video format (protocol C) → ``dashscope`` (protocol B: video synthesis), and the generic
record fields read from a dashscope task record."""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.video.generic import check_common, rename_param
from studio.gateway.video.rules_dashscope import validate_dashscope
from studio.models.videos import VideoProtocol, VideoTask

SOURCE = "generic"
TARGET = "dashscope"
# A C role that the model's media table spells differently (the 2.7 and gamma edit models take "video").
ROLE_ALIASES = {"reference_video": ("video", "first_clip"), "edit_video": ("video",),
                "reference_audio": ("reference_voice", "driving_audio")}
PARAMETERS = {"duration": "duration", "seed": "seed", "watermark": "watermark", "ratio": "ratio"}


def _media_type(role: str, caps: dict[str, Any]) -> str:
    accepted = caps.get("media") or {}
    if role in accepted:
        return role
    for alias in ROLE_ALIASES.get(role, ()):
        if alias in accepted:
            return alias
    return role


def translate(body: dict[str, Any], model_id: str, caps: dict[str, Any]) -> dict[str, Any]:
    medias = check_common(body)
    data_input: dict[str, Any] = {}
    param_map = {"input.prompt": "prompt", "input.negative_prompt": "negative_prompt", "input.media": "medias"}
    if body.get("prompt"):
        data_input["prompt"] = body["prompt"]
    if body.get("negative_prompt"):
        data_input["negative_prompt"] = body["negative_prompt"]
    if medias:
        data_input["media"] = [{"type": _media_type(m["role"], caps), "url": m["url"]} for m in medias]
        for position, media in enumerate(medias):
            param_map[f"input.media[{position}]"] = f"medias[{media['index']}]"
    parameters: dict[str, Any] = {}
    for c_name, b_name in PARAMETERS.items():
        if body.get(c_name) is not None:
            parameters[b_name] = body[c_name]
            param_map[f"parameters.{b_name}"] = c_name
    if isinstance(body.get("resolution"), str):
        parameters["resolution"] = body["resolution"].upper()
        param_map["parameters.resolution"] = "resolution"
    if body.get("generate_audio") is not None:
        if caps.get("variant") != "beta3.0":
            raise BadRequest(f"generate_audio: not supported by model '{model_id}'", param="generate_audio",
                             code="InvalidParameter")
        parameters["audio"] = body["generate_audio"]
    upstream: dict[str, Any] = {"input": data_input}
    if parameters:
        upstream["parameters"] = parameters
    try:
        validate_dashscope(upstream, model_id, caps)
    except BadRequest as exc:
        raise rename_param(exc, param_map) from None
    return upstream


def record_fields(task: VideoTask) -> dict[str, Any]:
    record = task.upstream_record or {}
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    params = (task.request.get("parameters") or {}) if task.protocol == VideoProtocol.DASHSCOPE else task.request
    resolution = params.get("resolution")
    if not resolution and usage.get("SR"):
        resolution = f"{usage['SR']}p"
    return {
        "resolution": str(resolution).lower() if resolution else None,
        "ratio": usage.get("ratio") or params.get("ratio"),
        "video_duration": usage.get("output_video_duration") or usage.get("duration") or usage.get("video_duration"),
        "usage": {k: usage[k] for k in ("input_video_duration", "output_video_duration", "duration") if k in usage},
    }
