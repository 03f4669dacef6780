"""Validation of ark (protocol A) create bodies, and the checks dashscope (protocol B) shares, against the
model's capabilities (catalog data).

Every rule reads the model's ``capabilities`` (see ``studio/catalog_data.py``), so a model's
limits change by editing data, not code. Each violation is a ``BadRequest`` naming the field.
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.media.safe_fetch import check_url_syntax
from studio.gateway.video.media_checks import check_media_url

SEED_MAX_ARK = 2**32 - 1
SEED_MAX_DASHSCOPE = 2_147_483_647
EXPIRES_RANGE = (3600, 259200)
IMAGE_ROLES = ("first_frame", "last_frame", "reference_image")
A_ITEM_TYPES = ("text", "image_url", "video_url", "audio_url", "draft_task")


def bad(param: str, message: str) -> BadRequest:
    return BadRequest(f"{param}: {message}", param=param, code="InvalidParameter")


# -- typed field readers --------------------------------------------------------------------------

def opt_bool(body: dict[str, Any], name: str, prefix: str = "") -> bool | None:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise bad(prefix + name, "must be a boolean")
    return value


def opt_int(body: dict[str, Any], name: str, prefix: str = "") -> int | None:
    value = body.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise bad(prefix + name, "must be an integer")
    return value


def opt_str(body: dict[str, Any], name: str, prefix: str = "") -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise bad(prefix + name, "must be a string")
    return value


def check_choice(param: str, value: str | None, allowed: list[str], model_id: str) -> None:
    if value is not None and value not in allowed:
        raise bad(param, f"{value!r} is not supported by model '{model_id}'; use one of {', '.join(allowed)}")


def check_duration(param: str, value: int | None, spec: dict[str, Any], model_id: str) -> None:
    if value is None:
        return
    if value == -1 and spec.get("auto"):
        return
    low, high = spec["min"], spec["max"]
    if not low <= value <= high:
        auto = " or -1 (the model chooses)" if spec.get("auto") else ""
        raise bad(param, f"must be between {low} and {high} seconds{auto} for model '{model_id}', got {value}")


def check_callback_url(url: str | None, param: str = "callback_url") -> None:
    if url:
        check_url_syntax(url, field=param)


# -- ark, protocol A (Seedance) --------------------------------------------------------------------

def validate_ark(body: dict[str, Any], model_id: str, caps: dict[str, Any]) -> None:
    check_callback_url(opt_str(body, "callback_url"))
    return_last_frame = opt_bool(body, "return_last_frame")
    tier = opt_str(body, "service_tier")
    if tier is not None and tier not in ("default", "flex"):
        raise bad("service_tier", "must be 'default' or 'flex'")
    flex = tier == "flex"
    if flex and not caps.get("flex"):
        raise bad("service_tier", f"model '{model_id}' supports online inference only; 'flex' is not available")
    expires = opt_int(body, "execution_expires_after")
    if expires is not None and not EXPIRES_RANGE[0] <= expires <= EXPIRES_RANGE[1]:
        raise bad("execution_expires_after", f"must be between {EXPIRES_RANGE[0]} and {EXPIRES_RANGE[1]} seconds")
    audio = opt_bool(body, "generate_audio")
    if audio and not caps.get("generate_audio"):
        raise bad("generate_audio", f"synchronized audio is not supported by model '{model_id}'")
    safety = opt_str(body, "safety_identifier")
    if safety is not None and (len(safety) > 64 or not safety.isascii()):
        raise bad("safety_identifier", "must be at most 64 ASCII characters")
    check_choice("resolution", opt_str(body, "resolution"), caps["resolutions"], model_id)
    check_choice("ratio", opt_str(body, "ratio"), caps["ratios"], model_id)
    frames = opt_int(body, "frames")
    if frames is not None:
        if not caps.get("frames"):
            raise bad("frames", f"is not supported by model '{model_id}'; use duration")
        if not 29 <= frames <= 289 or (frames - 25) % 4:
            raise bad("frames", "must be of the form 25 + 4n between 29 and 289")
    duration = opt_int(body, "duration")
    if frames is None:  # frames wins over duration when both are sent
        check_duration("duration", duration, caps["duration"], model_id)
    seed = opt_int(body, "seed")
    if seed is not None:
        if not caps.get("seed"):
            raise bad("seed", f"is not supported by model '{model_id}'")
        if not -1 <= seed <= SEED_MAX_ARK:
            raise bad("seed", f"must be between -1 and {SEED_MAX_ARK}")
    opt_bool(body, "watermark")
    draft = opt_bool(body, "draft")
    if draft:
        if not caps.get("draft"):
            raise bad("draft", f"draft mode is not supported by model '{model_id}'")
        if return_last_frame:
            raise bad("draft", "draft mode cannot be combined with return_last_frame")
        if flex:
            raise bad("draft", "draft mode cannot be combined with service_tier 'flex'")
    priority = opt_int(body, "priority")
    if priority is not None:
        if not caps.get("priority"):
            raise bad("priority", f"is not supported by model '{model_id}'")
        if not 0 <= priority <= 9:
            raise bad("priority", "must be between 0 and 9")
        if flex:
            raise bad("priority", "cannot be used with service_tier 'flex'")
    roles = validate_ark_content(body.get("content"), model_id, caps)
    if opt_bool(body, "camera_fixed"):
        if not caps.get("camera_fixed"):
            raise bad("camera_fixed", f"is not supported by model '{model_id}'")
        if roles.get("reference_image"):
            raise bad("camera_fixed", "is not supported with reference images")


def validate_ark_content(content: Any, model_id: str, caps: dict[str, Any]) -> dict[str, int]:
    if not isinstance(content, list) or not content:
        raise bad("content", "must be a non-empty array of content items")
    counts: dict[str, int] = {}
    for index, item in enumerate(content):
        param = f"content[{index}]"
        if not isinstance(item, dict):
            raise bad(param, "must be an object")
        kind = item.get("type")
        if kind not in A_ITEM_TYPES:
            raise bad(f"{param}.type", f"must be one of {', '.join(A_ITEM_TYPES)}")
        if kind == "text":
            if not isinstance(item.get("text"), str):
                raise bad(f"{param}.text", "must be a string")
            continue
        if kind == "draft_task":
            draft = item.get("draft_task")
            if not isinstance(draft, dict) or not isinstance(draft.get("id"), str):
                raise bad(f"{param}.draft_task.id", "must be a task id string")
            counts["draft_task"] = counts.get("draft_task", 0) + 1
            continue
        holder = item.get(kind)
        if not isinstance(holder, dict) or not isinstance(holder.get("url"), str) or not holder["url"]:
            raise bad(f"{param}.{kind}.url", "must be a URL string")
        role = _ark_role(item, kind, param, model_id, caps)
        check_media_url(holder["url"], f"{param}.{kind}.url", kind.split("_")[0], allow_asset=True)
        counts[role] = counts.get(role, 0) + 1
    _check_ark_counts(counts, model_id, caps)
    return counts


def _ark_role(item: dict[str, Any], kind: str, param: str, model_id: str, caps: dict[str, Any]) -> str:
    role = item.get("role")
    if kind == "image_url":
        role = role or "first_frame"
        if role not in IMAGE_ROLES:
            raise bad(f"{param}.role", f"must be one of {', '.join(IMAGE_ROLES)}")
        return role
    if kind == "video_url":
        role = role or "reference_video"
        allowed = caps.get("video_roles") or []
        if role not in allowed:
            if role in ("edit_video", "extend_forward", "extend_backward"):
                raise bad(f"{param}.role", f"video editing and extension are not supported by model '{model_id}'")
            if not allowed:
                raise bad(param, f"reference videos are not supported by model '{model_id}'")
            raise bad(f"{param}.role", f"must be one of {', '.join(allowed)}")
        return role
    role = role or "reference_audio"
    if role != "reference_audio":
        raise bad(f"{param}.role", "must be 'reference_audio'")
    return role


def _check_ark_counts(counts: dict[str, int], model_id: str, caps: dict[str, Any]) -> None:
    for role in ("first_frame", "last_frame"):
        if counts.get(role, 0) > 1:
            raise bad("content", f"at most one {role} image")
    if counts.get("last_frame") and not counts.get("first_frame"):
        raise bad("content", "a last_frame image needs a first_frame image")
    references = counts.get("reference_image", 0)
    limit = caps.get("max_reference_images", 0)
    if references > limit:
        what = "reference images are not supported" if not limit else f"at most {limit} reference images"
        raise bad("content", f"{what} by model '{model_id}'")
    for role, key in (("reference_video", "max_reference_videos"), ("reference_audio", "max_reference_audios")):
        if counts.get(role, 0) > caps.get(key, 0):
            raise bad("content", f"at most {caps.get(key, 0)} {role.replace('_', ' ')}s for model '{model_id}'")
    frames = counts.get("first_frame", 0) + counts.get("last_frame", 0)
    multimodal = sum(counts.get(r, 0) for r in ("reference_image", "reference_video", "reference_audio"))
    if frames and multimodal:
        raise bad("content", "first/last frame mode and reference mode cannot be mixed")
    edits = sum(counts.get(r, 0) for r in ("edit_video", "extend_forward", "extend_backward"))
    if edits > 1:
        raise bad("content", "one video to edit or extend at most")
