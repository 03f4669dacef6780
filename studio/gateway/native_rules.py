"""Request rules of the native image routes (spec/images.md), checked before any upstream call.

Every violation is a ``BadRequest`` whose message names the field, as the client wrote it.
Unknown properties are left alone: they are forwarded to the upstream unchanged.
"""

from __future__ import annotations

from typing import Any

from .errors import BadRequest
from .snapshot import ModelEntry

PART_KINDS = (("text", "text"), ("inlineData", "inline_data"), ("fileData", "file_data"),
              ("thoughtSignature", "thought_signature"))
NATIVE_MODALITIES = {"TEXT", "IMAGE"}


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def validate(body: Any, model: ModelEntry) -> None:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    if "model" in body:
        raise BadRequest("'model' must not be in the body: the model is the path parameter", param="model")
    contents = body.get("contents")
    if contents is None:
        raise BadRequest("'contents' is required", param="contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("'contents' must be an array with at least 1 item", param="contents")
    for ci, content in enumerate(contents):
        _validate_content(content, f"contents[{ci}]")
    system = _get(body, "systemInstruction", "system_instruction")
    if system is not None:
        _validate_content(system, "systemInstruction", role_required=False)
    config = _get(body, "generationConfig", "generation_config")
    if config is not None:
        _validate_config(config, model)


def _validate_content(content: Any, where: str, role_required: bool = False) -> None:
    if not isinstance(content, dict):
        raise BadRequest(f"'{where}' must be an object with 'parts'", param=where)
    role = content.get("role")
    if role is not None and not isinstance(role, str):
        raise BadRequest(f"'{where}.role' must be a string", param=f"{where}.role")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise BadRequest(f"'{where}.parts' must be an array with at least 1 part", param=f"{where}.parts")
    for pi, part in enumerate(parts):
        field = f"{where}.parts[{pi}]"
        if not isinstance(part, dict) or not any(c in part or s in part for c, s in PART_KINDS):
            raise BadRequest(
                f"'{field}' must have one of text, inlineData, fileData or thoughtSignature", param=field
            )
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            raise BadRequest(f"'{field}.text' must be a string", param=f"{field}.text")
        inline = _get(part, "inlineData", "inline_data")
        if inline is not None:
            validate_inline(inline, f"{field}.inlineData")


def validate_inline(inline: Any, field: str) -> None:
    """Shape of an inline image; the bytes themselves are checked by ``media_checks``."""
    if not isinstance(inline, dict):
        raise BadRequest(f"'{field}' must be an object with mimeType and data", param=field)
    data = inline.get("data")
    if not isinstance(data, str) or not data:
        raise BadRequest(f"'{field}.data' must be a non-empty base64 string", param=f"{field}.data")
    mime = _get(inline, "mimeType", "mime_type")
    if not isinstance(mime, str) or not mime:
        raise BadRequest(f"'{field}.mimeType' is required", param=f"{field}.mimeType")


def _validate_config(config: Any, model: ModelEntry) -> None:
    if not isinstance(config, dict):
        raise BadRequest("'generationConfig' must be an object", param="generationConfig")
    modalities = _get(config, "responseModalities", "response_modalities")
    if modalities is not None:
        if not isinstance(modalities, list) or not all(isinstance(m, str) for m in modalities):
            raise BadRequest("'generationConfig.responseModalities' must be an array of strings",
                             param="generationConfig.responseModalities")
        bad = [m for m in modalities if m.upper() not in NATIVE_MODALITIES]
        if bad:
            raise BadRequest(
                f"'generationConfig.responseModalities' may only contain TEXT and IMAGE for {model.model_id}; "
                f"got {', '.join(bad)}", param="generationConfig.responseModalities",
            )
    image_config = _get(config, "imageConfig", "image_config")
    if image_config is None:
        return
    if not isinstance(image_config, dict):
        raise BadRequest("'generationConfig.imageConfig' must be an object", param="generationConfig.imageConfig")
    caps = model.capabilities
    size = _get(image_config, "imageSize", "image_size")
    sizes = caps.get("image_sizes") or []
    if size is not None and size not in sizes:
        raise BadRequest(
            f"'generationConfig.imageConfig.imageSize' {size!r} is not offered by {model.model_id}; "
            f"use one of {', '.join(sizes)}", param="generationConfig.imageConfig.imageSize",
        )
    ratio = _get(image_config, "aspectRatio", "aspect_ratio")
    ratios = caps.get("aspect_ratios") or []
    if ratio is not None and ratio not in ratios:
        raise BadRequest(
            f"'generationConfig.imageConfig.aspectRatio' {ratio!r} is not offered by {model.model_id}; "
            f"use one of {', '.join(ratios)}", param="generationConfig.imageConfig.aspectRatio",
        )
