"""The Video page's form: which options a model offers, and the generic (protocol C) body a submission makes.

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

from studio.gateway import permissions as access
from studio.models import Asset, AssetKind, VideoTask

MEDIA_ROLES = ("first_frame", "last_frame", "reference_image")
# Designers' starting points: each is offered for a model that supports its aspect ratio, with its
# duration and resolution brought within what that model offers.
PRESETS: tuple[dict[str, Any], ...] = (
    {"id": "story", "name": "Social story", "ratio": "9:16", "duration": 5, "resolution": "720p", "audio": True},
    {"id": "widescreen", "name": "Widescreen", "ratio": "16:9", "duration": 5, "resolution": "1080p", "audio": True},
    {"id": "square", "name": "Square post", "ratio": "1:1", "duration": 5, "resolution": "720p", "audio": False},
    {"id": "cinematic", "name": "Cinematic", "ratio": "21:9", "duration": 10, "resolution": "1080p", "audio": True},
    {"id": "draft", "name": "Quick draft", "ratio": "16:9", "duration": 0, "resolution": "480p", "audio": False},
)
MODE_NAMES = {"t2v": "text to video", "i2v": "image to video", "r2v": "from references",
              "videoedit": "video edit"}
# Before a model has finished any task: about this long to render one second of video.
DEFAULT_SECONDS_PER_OUTPUT_SECOND = 12.0
DEFAULT_FIXED_SECONDS = 30.0
PICKER_SIZE = 60
MAX_SEED = 2**31 - 1


class FormError(Exception):
    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.message, self.param = message, param


def model_options(caps: dict[str, Any]) -> dict[str, Any]:
    """What the form offers for a video model, read from its catalog capabilities."""
    duration = caps.get("duration") or {"min": 2, "max": 15}
    if "media" in caps:  # dashscope (protocol B) models list their accepted media per role
        media = {role: int(caps["media"].get(role, 0)) for role in MEDIA_ROLES}
    else:  # ark (protocol A) models take first/last frames, and references up to their limit
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


def model_name(model_id: str, display_name: str, caps: dict[str, Any]) -> str:
    """A name a designer reads: the catalog's display name, or one made from the id ("Alpha 2.0 Fast")."""
    if display_name and display_name != model_id:
        return display_name
    words = [w for w in model_id.replace("_", "-").split("-") if w and w not in MODE_NAMES and w != "video"]
    name = " ".join(w[:1].upper() + w[1:] for w in words)
    for prefix in ("Beta", "Gamma", "Alpha"):  # "Beta2.7" reads "Beta 2.7"
        if name.startswith(prefix) and name[len(prefix):len(prefix) + 1].isdigit():
            name = f"{prefix} {name[len(prefix):]}"
    mode = MODE_NAMES.get(str(caps.get("mode") or ""))
    return f"{name} · {mode}" if mode else name


def _closest(values: list[str], wanted: str) -> str:
    def number(value: str) -> int:
        digits = "".join(c for c in value if c.isdigit())
        return 2160 if value == "4k" else int(digits or 0)
    return min(values, key=lambda v: abs(number(v) - number(wanted))) if values else ""


def presets_for(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The presets a model can make, with values it accepts (a preset whose shape it lacks is left out)."""
    low, high = options["duration"]["min"], options["duration"]["max"]
    made = []
    for preset in PRESETS:
        if options["ratios"] and preset["ratio"] not in options["ratios"]:
            continue
        duration = low if not preset["duration"] else max(low, min(high, preset["duration"]))
        resolution = preset["resolution"] if preset["resolution"] in options["resolutions"] else _closest(
            options["resolutions"], preset["resolution"])
        made.append({**preset, "duration": duration, "resolution": resolution,
                     "audio": preset["audio"] and options["audio"],
                     "summary": " · ".join(v for v in (preset["ratio"], f"{duration} s", resolution,
                                                       "sound" if preset["audio"] and options["audio"] else "silent")
                                           if v)})
    return made


def typical_time(samples: list[float]) -> dict[str, float]:
    """How long a task of a model usually takes, as ``fixed + per_second * duration``: the median of
    its recent tasks when it has finished some, else a rule of thumb."""
    if samples:
        ordered = sorted(samples)
        return {"fixed": round(ordered[len(ordered) // 2], 1), "per_second": 0.0}
    return {"fixed": DEFAULT_FIXED_SECONDS, "per_second": DEFAULT_SECONDS_PER_OUTPUT_SECOND}


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
    """A generic (protocol C) create body from the page's submission (the engine validates it further)."""
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
