"""The Video page's form: which options a model offers, and the protocol C body a submission makes.

Media picked from the gallery is sent as base64 data URIs (our own file URLs are not public to
an upstream), after checking the user may see each asset. "Extend" takes the finished task's last
frame (the mirrored one, or decoded from the mirrored video) as the new task's first frame.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404

from studio.models import Asset, AssetKind, VideoTask

from . import access

MEDIA_ROLES = ("first_frame", "last_frame", "reference_image")
PICKER_SIZE = 60
MAX_SEED = 2**31 - 1


class FormError(Exception):
    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.message, self.param = message, param


def model_options(caps: dict[str, Any]) -> dict[str, Any]:
    """What the form offers for a video model, read from its catalog capabilities."""
    duration = caps.get("duration") or {"min": 2, "max": 15}
    if "media" in caps:  # protocol B models list their accepted media per role
        media = {role: int(caps["media"].get(role, 0)) for role in MEDIA_ROLES}
    else:  # protocol A models take first/last frames, and references up to their limit
        media = {"first_frame": 1, "last_frame": 1, "reference_image": int(caps.get("max_reference_images", 0))}
    return {
        "resolutions": [r.lower() for r in caps.get("resolutions") or []],
        "default_resolution": str(caps.get("default_resolution") or "").lower(),
        "ratios": list(caps.get("ratios") or []),
        "duration": {"min": int(duration.get("min", 2)), "max": int(duration.get("max", 15))},
        "audio": bool(caps.get("generate_audio")) or caps.get("variant") == "beta3.0",
        "seed": bool(caps.get("seed")) or "variant" in caps,
        "media": media,
    }


def picker_assets(user) -> list[dict[str, str]]:
    """The user's visible images, newest first, for the frame and reference pickers."""
    rows = (access.visible_assets(user).filter(kind=AssetKind.IMAGE, is_draft=False)
            .order_by("-created").only("id")[:PICKER_SIZE])
    return [{"id": str(a.id), "thumb": f"/assets/{a.id}/thumb"} for a in rows]


def data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _asset_uri(user, asset_id: Any, param: str) -> str:
    try:
        asset = access.visible_asset_or_404(user, str(asset_id))
    except (Http404, ValidationError, ValueError):  # malformed, missing and forbidden look alike
        raise FormError(f"{param}: no such image in your gallery", param) from None
    if asset.kind != AssetKind.IMAGE:
        raise FormError(f"{param}: must be an image", param)
    with asset.file.open("rb") as handle:
        return data_uri(asset.mime, handle.read())


def last_frame_png(video: Asset) -> bytes:
    """The final frame of a stored video, as PNG."""
    import av

    last = None
    with video.file.storage.open(video.file.name, "rb") as handle, av.open(handle) as container:
        for frame in container.decode(video=0):
            last = frame
    if last is None:
        raise FormError("the video has no frames to extend from", "extend_from")
    out = io.BytesIO()
    last.to_image().convert("RGB").save(out, "PNG")
    return out.getvalue()


def extend_frame(user, task_id: Any) -> str:
    task = (VideoTask.objects.select_related("video", "last_frame")
            .filter(id=str(task_id), user=user).first())
    if task is None:
        raise FormError("extend_from: no such task of yours", "extend_from")
    if task.status != "succeeded" or (task.last_frame is None and task.video is None):
        raise FormError("extend_from: only a finished video with a stored copy can be extended", "extend_from")
    if task.last_frame is not None:
        with task.last_frame.file.open("rb") as handle:
            return data_uri(task.last_frame.mime, handle.read())
    return data_uri("image/png", last_frame_png(task.video))


def _opt_int(payload: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = payload.get(name)
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise FormError(f"{name}: must be a whole number", name) from None
    if not low <= number <= high:
        raise FormError(f"{name}: must be between {low} and {high}", name)
    return number


def build_body(user, payload: Any) -> dict[str, Any]:
    """A protocol C create body from the page's submission (the engine validates it further)."""
    if not isinstance(payload, dict):
        raise FormError("the body must be a JSON object", "body")
    body: dict[str, Any] = {"model": payload.get("model"), "prompt": str(payload.get("prompt") or "").strip()}
    for name in ("resolution", "ratio"):
        if payload.get(name):
            body[name] = str(payload[name])
    duration = _opt_int(payload, "duration", 1, 120)
    if duration is not None:
        body["duration"] = duration
    seed = _opt_int(payload, "seed", -1, MAX_SEED)
    if seed is not None:
        body["seed"] = seed
    if isinstance(payload.get("generate_audio"), bool):
        body["generate_audio"] = payload["generate_audio"]
    medias: list[dict[str, str]] = []
    if payload.get("extend_from"):
        medias.append({"type": "image_url", "url": extend_frame(user, payload["extend_from"]), "role": "first_frame"})
    elif payload.get("first_frame"):
        medias.append({"type": "image_url", "url": _asset_uri(user, payload["first_frame"], "first_frame"),
                       "role": "first_frame"})
    if payload.get("last_frame"):
        if not medias:
            raise FormError("last_frame: pick a first frame too", "last_frame")
        medias.append({"type": "image_url", "url": _asset_uri(user, payload["last_frame"], "last_frame"),
                       "role": "last_frame"})
    references = payload.get("references") or []
    if not isinstance(references, list):
        raise FormError("references: must be a list of image ids", "references")
    for index, asset_id in enumerate(references):
        medias.append({"type": "image_url", "url": _asset_uri(user, asset_id, f"references[{index}]"),
                       "role": "reference_image"})
    if medias:
        body["medias"] = medias
    return body
