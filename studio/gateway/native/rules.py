"""Request rules of the native image routes (spec/images.md), checked before any upstream call.

Every violation is a ``BadRequest`` whose message names the field, as the client wrote it
(camelCase or the vendor's snake_case form). Unknown properties are left alone: the body is
forwarded to the upstream exactly as the client sent it. The per-model lists (tiers, ratios,
reference image limit) are catalog data in ``ModelEntry.capabilities``, not code.
"""

from __future__ import annotations

from typing import Any

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest
from studio.gateway.media.validation import decode_inline_image, media_kind, normalize_mime

# (camelCase, snake_case): the vendor accepts both spellings of every part field.
PART_KINDS = (("text", "text"), ("inlineData", "inline_data"), ("fileData", "file_data"),
              ("thoughtSignature", "thought_signature"))
ROLES = ("user", "model")
NATIVE_MODALITIES = {"TEXT", "IMAGE"}
# What the body of a native request can never carry, with the reason the client is told.
FORBIDDEN_TOP_LEVEL = {"model": "the model is the path parameter and must not be in the body"}


def field_of(obj: dict[str, Any], camel: str, snake: str) -> tuple[str | None, Any]:
    """The spelling the client used and its value (``None, None`` when absent)."""
    if camel in obj:
        return camel, obj[camel]
    if snake in obj:
        return snake, obj[snake]
    return None, None


def validate(body: Any, model: ModelEntry) -> None:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    for name, why in FORBIDDEN_TOP_LEVEL.items():
        if name in body:
            raise BadRequest(f"'{name}' must not be in the body: {why}", param=name)
    contents = body.get("contents")
    if contents is None:
        raise BadRequest("'contents' is required", param="contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("'contents' must be an array with at least 1 item", param="contents")
    max_refs = int(model.capabilities.get("max_reference_images") or 0)
    for ci, content in enumerate(contents):
        images = _validate_content(content, f"contents[{ci}]")
        if max_refs and images > max_refs and content.get("role", "user") == "user":
            raise BadRequest(
                f"'contents[{ci}].parts' has {images} images; {model.model_id} accepts at most {max_refs}",
                param=f"contents[{ci}].parts",
            )
    name, system = field_of(body, "systemInstruction", "system_instruction")
    if system is not None:
        _validate_content(system, str(name), roles=None)
    name, config = field_of(body, "generationConfig", "generation_config")
    if config is not None:
        _validate_config(config, model, str(name))


def validate_count(body: Any) -> None:
    """A ``countTokens`` body: ``contents``, or a ``generateContentRequest`` holding them, each
    Content as ``generateContent`` takes it (the model's own limits do not apply: nothing is made)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body")
    inner = body.get("generateContentRequest")
    where, contents = "contents", body.get("contents")
    if contents is None and isinstance(inner, dict):
        where, contents = "generateContentRequest.contents", inner.get("contents")
    if not isinstance(contents, list):
        raise BadRequest("send 'contents' or a 'generateContentRequest' to count", param=where)
    for ci, content in enumerate(contents):
        _validate_content(content, f"{where}[{ci}]")


def _validate_content(content: Any, where: str, roles: tuple[str, ...] | None = ROLES) -> int:
    """Check one Content; returns how many inline images it holds."""
    if not isinstance(content, dict):
        raise BadRequest(f"'{where}' must be an object with 'parts'", param=where)
    role = content.get("role")
    if role is not None and (not isinstance(role, str) or (roles and role not in roles)):
        raise BadRequest(f"'{where}.role' must be one of: {', '.join(roles or ('a string',))}",
                         param=f"{where}.role")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise BadRequest(f"'{where}.parts' must be an array with at least 1 part", param=f"{where}.parts")
    images = 0
    for pi, part in enumerate(parts):
        field = f"{where}.parts[{pi}]"
        if not isinstance(part, dict) or not any(c in part or s in part for c, s in PART_KINDS):
            raise BadRequest(
                f"'{field}' must have one of text, inlineData, fileData or thoughtSignature", param=field
            )
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            raise BadRequest(f"'{field}.text' must be a string", param=f"{field}.text")
        name, signature = field_of(part, "thoughtSignature", "thought_signature")
        if signature is not None and not isinstance(signature, str):
            raise BadRequest(f"'{field}.{name}' must be a base64 string", param=f"{field}.{name}")
        name, inline = field_of(part, "inlineData", "inline_data")
        if inline is not None:
            validate_inline(inline, f"{field}.{name}")
            images += 1
        name, file_data = field_of(part, "fileData", "file_data")
        if file_data is not None:
            _validate_file_data(file_data, f"{field}.{name}")
    return images


def validate_inline(inline: Any, field: str) -> None:
    """An inline image: raw base64 (no ``data:`` prefix) of an image whose bytes match ``mimeType``."""
    if not isinstance(inline, dict):
        raise BadRequest(f"'{field}' must be an object with mimeType and data", param=field)
    mime_name, mime = field_of(inline, "mimeType", "mime_type")
    if not isinstance(mime, str) or not mime.strip():
        raise BadRequest(f"'{field}.mimeType' is required (an image MIME type such as image/png)",
                         param=f"{field}.mimeType")
    if media_kind(normalize_mime(mime)) != "image":
        raise BadRequest(f"'{field}.{mime_name}' must be an image MIME type, not {mime!r}",
                         param=f"{field}.{mime_name}")
    data = inline.get("data")
    if not isinstance(data, str) or not data:
        raise BadRequest(f"'{field}.data' must be a non-empty base64 string", param=f"{field}.data")
    # Strict: no data URI, valid base64, the sniffed bytes are an image of the declared type.
    try:
        decode_inline_image(data, mime, field=f"{field}.data")
    except BadRequest as exc:
        if exc.code == "mime_type_mismatch":  # the client's mistake is in mimeType: name that
            raise BadRequest(f"'{field}.{mime_name}' {mime!r} does not match the image data, which is "
                             f"{exc.details.get('detected')}", param=f"{field}.{mime_name}",
                             code=exc.code) from None
        raise


def _validate_file_data(file_data: Any, field: str) -> None:
    if not isinstance(file_data, dict):
        raise BadRequest(f"'{field}' must be an object with mimeType and fileUri", param=field)
    _, uri = field_of(file_data, "fileUri", "file_uri")
    if not isinstance(uri, str) or not uri:
        raise BadRequest(f"'{field}.fileUri' is required", param=f"{field}.fileUri")


def _validate_config(config: Any, model: ModelEntry, where: str) -> None:
    if not isinstance(config, dict):
        raise BadRequest(f"'{where}' must be an object", param=where)
    name, modalities = field_of(config, "responseModalities", "response_modalities")
    if modalities is not None:
        field = f"{where}.{name}"
        if not isinstance(modalities, list) or not all(isinstance(m, str) for m in modalities):
            raise BadRequest(f"'{field}' must be an array of strings", param=field)
        # The vendor's enum is case-insensitive ("Image" works); values outside it do not.
        bad = [m for m in modalities if m.upper() not in NATIVE_MODALITIES]
        if bad or not modalities:
            raise BadRequest(
                f"'{field}' may only contain TEXT and IMAGE for {model.model_id}; got {', '.join(bad) or 'nothing'}",
                param=field,
            )
    name, image_config = field_of(config, "imageConfig", "image_config")
    if image_config is None:
        return
    where = f"{where}.{name}"
    if not isinstance(image_config, dict):
        raise BadRequest(f"'{where}' must be an object", param=where)
    caps = model.capabilities
    _check_offered(image_config, ("imageSize", "image_size"), caps.get("image_sizes") or [], model, where)
    _check_offered(image_config, ("aspectRatio", "aspect_ratio"), caps.get("aspect_ratios") or [], model, where)


def _check_offered(config: dict[str, Any], names: tuple[str, str], offered: list[str], model: ModelEntry,
                   where: str) -> None:
    name, value = field_of(config, *names)
    if value is None:
        return
    field = f"{where}.{name}"
    # Exact match: the vendor rejects "1k" and "16x9" too.
    if not isinstance(value, str) or value not in offered:
        raise BadRequest(
            f"'{field}' {value!r} is not offered by {model.model_id}; use one of {', '.join(offered)}",
            param=field,
        )
