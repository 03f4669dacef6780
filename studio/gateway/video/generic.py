"""The ``generic`` video format (protocol C): field checks every translation of it shares.

A generic body is translated into the video format of the upstream that serves the model (one
module per pair, found through ``translations``), then validated by that format's rules;
parameter names in errors are mapped back to the generic body's.
"""

from __future__ import annotations

from typing import Any

from studio.core.errors import BadRequest
from studio.gateway.video.rules_ark import bad, check_callback_url, opt_bool, opt_int, opt_str

MEDIA_TYPES = {"image": "image", "image_url": "image", "video": "video", "video_url": "video",
               "audio": "audio", "audio_url": "audio"}
DEFAULT_ROLE = {"video": "reference_video", "audio": "reference_audio"}


def check_common(body: dict[str, Any]) -> list[dict[str, str]]:
    """Type checks of the generic fields; returns the medias with kind and role resolved."""
    for name in ("prompt", "negative_prompt", "resolution", "ratio"):
        opt_str(body, name)
    for name in ("generate_audio", "watermark"):
        opt_bool(body, name)
    for name in ("duration", "seed"):
        opt_int(body, name)
    check_callback_url(opt_str(body, "callback_url"))
    medias = body.get("medias")
    if medias is None:
        medias = []
    if not isinstance(medias, list):
        raise bad("medias", "must be an array of {type, url, role} objects")
    resolved = []
    images = sum(1 for m in medias if isinstance(m, dict) and MEDIA_TYPES.get(m.get("type")) == "image")
    for index, media in enumerate(medias):
        param = f"medias[{index}]"
        if not isinstance(media, dict):
            raise bad(param, "must be an object with type, url and role")
        kind = MEDIA_TYPES.get(media.get("type"))
        if kind is None:
            raise bad(f"{param}.type", "must be one of image, video, audio")
        if not isinstance(media.get("url"), str) or not media["url"]:
            raise bad(f"{param}.url", "must be a public URL or a base64 data URI")
        role = media.get("role")
        if role is not None and not isinstance(role, str):
            raise bad(f"{param}.role", "must be a string")
        if not role:
            role = DEFAULT_ROLE.get(kind) or ("first_frame" if images == 1 else "reference_image")
        resolved.append({"kind": kind, "url": media["url"], "role": role, "index": str(index)})
    if not (body.get("prompt") or "").strip() and not resolved:
        raise bad("prompt", "send a prompt, medias or both")
    return resolved


def rename_param(exc: BadRequest, param_map: dict[str, str]) -> BadRequest:
    """Speak of the client's generic field names in an error raised against the translated body."""
    param = exc.param or ""
    for upstream_prefix, c_prefix in sorted(param_map.items(), key=lambda kv: -len(kv[0])):
        if param == upstream_prefix or param.startswith(upstream_prefix + ".") or param.startswith(upstream_prefix + "["):
            renamed = c_prefix + param[len(upstream_prefix):]
            message = exc.message.replace(param, renamed, 1) if exc.message.startswith(param) else exc.message
            return BadRequest(message, param=renamed, code=exc.code)
    return exc
