"""Validation of dashscope (protocol B) create bodies (three variants chosen by the model's group).

``beta3.0-*`` follows the all-in-one media table; ``beta2.7-*`` and ``gamma-*`` accept the media
types their catalog entry lists. Limits come from the model's ``capabilities``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from studio.gateway.video.media_checks import check_media_url, inline_seconds
from studio.gateway.video.rules_ark import (
    SEED_MAX_DASHSCOPE,
    bad,
    check_choice,
    check_duration,
    opt_bool,
    opt_int,
    opt_str,
)

FRAME_TYPES = ("first_frame", "last_frame")
REFERENCE_TYPES = ("reference_image", "reference_video", "reference_audio")
DOCUMENT_TYPES = ("file", "link")
MEDIA_KIND = {
    "first_frame": "image", "last_frame": "image", "reference_image": "image", "reference_video": "video",
    "video": "video", "first_clip": "video", "reference_audio": "audio", "reference_voice": "audio",
    "driving_audio": "audio", "file": "file",
}


def validate_dashscope(body: dict[str, Any], model_id: str, caps: dict[str, Any]) -> None:
    data_input = body.get("input")
    if data_input is None:
        data_input = {}
    if not isinstance(data_input, dict):
        raise bad("input", "must be an object")
    params = body.get("parameters")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise bad("parameters", "must be an object")
    prompt = opt_str(data_input, "prompt", "input.")
    opt_str(data_input, "negative_prompt", "input.")
    media = data_input.get("media")
    if media is not None and not isinstance(media, list):
        raise bad("input.media", "must be an array of {type, url} objects")
    media = media or []
    if prompt and len(prompt) > caps.get("max_prompt", 20000):
        raise bad("input.prompt", f"must be at most {caps.get('max_prompt', 20000)} characters")
    counts, video_seconds = _check_media(media, model_id, caps)
    _check_mode(prompt, counts, params, caps, model_id)
    _check_parameters(params, caps, model_id, video_seconds, counts)


def _check_media(media: list[Any], model_id: str, caps: dict[str, Any]) -> tuple[dict[str, int], float]:
    allowed: dict[str, int] = caps.get("media") or {}
    seconds: dict[str, float] = {}
    counts: dict[str, int] = {}
    for index, item in enumerate(media):
        param = f"input.media[{index}]"
        if not isinstance(item, dict):
            raise bad(param, "must be an object with type and url")
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in allowed:
            listed = ", ".join(allowed) or "none (this model takes a prompt only)"
            raise bad(f"{param}.type", f"{kind!r} is not accepted by model '{model_id}'; accepted: {listed}")
        url = item.get("url")
        if kind == "link":
            check_media_url(url, f"{param}.url", "link")
        elif kind == "file":
            _check_document(url, f"{param}.url", caps)
        else:
            limit = (caps.get("media_bytes") or {}).get(kind, 100 * 1024 * 1024)
            check_media_url(url, f"{param}.url", MEDIA_KIND.get(kind, "image"), max_bytes=limit)
            if kind in ("reference_video", "reference_audio", "video"):
                clip = inline_seconds(url)
                if clip is not None:
                    seconds[kind] = seconds.get(kind, 0.0) + clip
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] > allowed[kind]:
            raise bad("input.media", f"at most {allowed[kind]} {kind} item(s) for model '{model_id}'")
    for kind, limit in (caps.get("reference_seconds") or {}).items():
        if seconds.get(kind, 0.0) > limit + 0.05:
            raise bad("input.media", f"{kind} clips must total at most {limit} seconds, got {seconds[kind]:.1f}")
    return counts, seconds.get("reference_video", 0.0) + seconds.get("video", 0.0)


def _check_document(url: Any, param: str, caps: dict[str, Any]) -> None:
    check_media_url(url, param, "file")
    if isinstance(url, str) and not url.startswith("data:"):
        suffix = urlsplit(url).path.rsplit(".", 1)[-1].lower() if "." in urlsplit(url).path else ""
        types = caps.get("file_types") or []
        if suffix not in types:
            raise bad(param, f"the document must be one of: {', '.join(types)}")


def _check_mode(prompt: str | None, counts: dict[str, int], params: dict[str, Any], caps: dict[str, Any],
                model_id: str) -> None:
    mode = caps.get("mode")
    has_media = bool(counts)
    if not (prompt or "").strip() and not has_media:
        raise bad("input.prompt", "send input.prompt, input.media or both")
    if mode == "t2v" and not (prompt or "").strip():
        raise bad("input.prompt", f"model '{model_id}' makes video from text: input.prompt is required")
    if mode == "i2v" and not (counts.get("first_frame") or counts.get("first_clip")):
        raise bad("input.media", f"model '{model_id}' needs a first_frame image")
    if mode == "videoedit" and not counts.get("video"):
        raise bad("input.media", f"model '{model_id}' needs the video to edit (type 'video')")
    if counts.get("last_frame") and not counts.get("first_frame"):
        raise bad("input.media", "last_frame is accepted only together with first_frame")
    frames = any(counts.get(t) for t in FRAME_TYPES)
    others = [t for t in (*REFERENCE_TYPES, *DOCUMENT_TYPES) if counts.get(t)]
    if frames and others:
        raise bad("input.media", f"first_frame/last_frame cannot be combined with {', '.join(others)}")
    if counts.get("file") and counts.get("link"):
        raise bad("input.media", "send a file or a link, not both")
    if (counts.get("file") or counts.get("link")) and params.get("prompt_extend") is False:
        raise bad("parameters.prompt_extend", "must be true or omitted when a file or link is given")


def _check_parameters(params: dict[str, Any], caps: dict[str, Any], model_id: str, video_seconds: float,
                      counts: dict[str, int]) -> None:
    prefix = "parameters."
    check_choice(prefix + "resolution", opt_str(params, "resolution", prefix), caps["resolutions"], model_id)
    check_choice(prefix + "ratio", opt_str(params, "ratio", prefix), caps["ratios"], model_id)
    duration = opt_int(params, "duration", prefix)
    check_duration(prefix + "duration", duration, caps["duration"], model_id)
    total = caps.get("max_total_seconds")
    has_video = counts.get("reference_video") or counts.get("video")
    if total and has_video and duration not in (None, -1) and duration + video_seconds > total:
        raise bad(prefix + "duration", f"input video ({video_seconds:.1f} s) plus output must be at most {total} s")
    seed = opt_int(params, "seed", prefix)
    if seed is not None and seed != -1 and not 0 <= seed <= SEED_MAX_DASHSCOPE:
        raise bad(prefix + "seed", f"must be -1 or between 0 and {SEED_MAX_DASHSCOPE}")
    for name in ("audio", "watermark", "prompt_extend"):
        opt_bool(params, name, prefix)
    setting = opt_str(params, "audio_setting", prefix)
    if setting is not None:
        if not caps.get("audio_setting"):
            raise bad(prefix + "audio_setting", f"is accepted by video editing models only, not '{model_id}'")
        check_choice(prefix + "audio_setting", setting, ["auto", "origin"], model_id)
