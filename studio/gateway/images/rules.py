"""Validation of images requests against the model's capabilities (catalog data, not ifs).

Each rule names the field it guards, so every refusal is a 400 whose ``param`` is that field.
A field whose capability the model does not declare is refused as unsupported by the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest
from studio.core.images import tier_size

# field → capability listing its allowed values; ``DEFAULT_VALUES`` when the catalog is silent.
ENUM_FIELDS: dict[str, str] = {
    "quality": "qualities", "output_format": "output_formats", "background": "backgrounds",
    "moderation": "moderations", "style": "styles", "input_fidelity": "input_fidelities",
    "response_format": "response_formats", "sequential_image_generation": "sequential_modes",
    "optimize_prompt_options.mode": "optimize_prompt_modes",
}
DEFAULT_VALUES: dict[str, list[str]] = {"response_formats": ["url", "b64_json"]}
# field → (lowest, capability holding the highest or a fixed highest)
INT_FIELDS: dict[str, tuple[int, str | int]] = {
    "n": (1, "max_n"), "output_compression": (0, 100), "partial_images": (0, "max_partial_images"),
    "sequential_image_generation_options.max_images": (1, "max_images"),
}
# boolean field → capability that must be true for the field to be used (None: always allowed)
BOOL_FIELDS: dict[str, str | None] = {
    "stream": None, "watermark": "watermark", "layer_decomposition": "layer_decomposition",
}
STRING_FIELDS = ("prompt", "user", "model")
_WXH = re.compile(r"^(\d{2,5})x(\d{2,5})$")


def lookup(fields: dict[str, Any], dotted: str) -> Any:
    value: Any = fields
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _unsupported(name: str, model: ModelEntry) -> BadRequest:
    return BadRequest(f"'{name}' is not supported by model '{model.model_id}'", param=name, code="unsupported_parameter")


def check_enums(fields: dict[str, Any], model: ModelEntry) -> None:
    caps = model.capabilities
    for name, cap in ENUM_FIELDS.items():
        value = lookup(fields, name)
        if value is None:
            continue
        allowed = caps.get(cap, DEFAULT_VALUES.get(cap))
        if allowed is None:
            raise _unsupported(name, model)
        if not isinstance(value, str) or value not in allowed:
            raise BadRequest(f"invalid '{name}': {value!r}; model '{model.model_id}' supports "
                             + ", ".join(f"'{a}'" for a in allowed), param=name, code="invalid_value")


def check_ints(fields: dict[str, Any], model: ModelEntry) -> None:
    for name, (low, high_source) in INT_FIELDS.items():
        value = lookup(fields, name)
        if value is None:
            continue
        high = high_source if isinstance(high_source, int) else model.capabilities.get(high_source)
        if high is None:
            raise _unsupported(name, model)
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadRequest(f"invalid '{name}': expected an integer", param=name, code="invalid_type")
        if not low <= value <= high:
            raise BadRequest(f"invalid '{name}': {value} is out of range; model '{model.model_id}' allows "
                             f"{low} to {high}", param=name, code="integer_out_of_range")


def check_bools(fields: dict[str, Any], model: ModelEntry) -> None:
    for name, cap in BOOL_FIELDS.items():
        value = fields.get(name)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise BadRequest(f"invalid '{name}': expected true or false", param=name, code="invalid_type")
        if value and cap is not None and not model.capabilities.get(cap):
            raise _unsupported(name, model)


def check_strings(fields: dict[str, Any]) -> None:
    for name in STRING_FIELDS:
        value = fields.get(name)
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"invalid '{name}': expected a string", param=name, code="invalid_type")


# -- size: one checker per family ------------------------------------------------------------------


def _listed_size(size: str, model: ModelEntry) -> None:
    allowed = model.capabilities.get("sizes") or []
    if size not in allowed:
        raise BadRequest(f"invalid 'size': {size!r}; model '{model.model_id}' supports "
                         + ", ".join(f"'{s}'" for s in allowed), param="size", code="invalid_value")


def _tier_or_pixels(size: str, model: ModelEntry) -> None:
    caps = model.capabilities
    if size in (caps.get("sizes") or []):
        return
    match = _WXH.match(size)
    low, high = caps.get("pixel_range") or (0, 0)
    if match:
        width, height = int(match.group(1)), int(match.group(2))
        if low <= width * height <= high and 1 / 16 <= width / height <= 16:
            return
    raise BadRequest(f"invalid 'size': {size!r}; use a tier ({', '.join(caps.get('sizes') or [])}) or WIDTHxHEIGHT "
                     f"with {low} to {high} pixels and a ratio between 1:16 and 16:1", param="size",
                     code="invalid_value")


def _native_size(size: str, model: ModelEntry) -> None:
    tier_size(size, model)  # raises the 400 naming 'size'


SIZE_CHECKS: dict[str, Callable[[str, ModelEntry], None]] = {
    "standard": _listed_size, "layered": _tier_or_pixels, "native": _native_size,
}


def check_size(fields: dict[str, Any], model: ModelEntry, family: str) -> None:
    size = fields.get("size")
    if size is None:
        return
    if not isinstance(size, str):
        raise BadRequest("invalid 'size': expected a string such as '1024x1024'", param="size", code="invalid_type")
    SIZE_CHECKS[family](size, model)


def check_combinations(fields: dict[str, Any], model: ModelEntry) -> None:
    output_format = fields.get("output_format") or model.capabilities.get("default_output_format", "png")
    if fields.get("background") == "transparent" and output_format == "jpeg":
        raise BadRequest("a transparent background needs output_format 'png' or 'webp'; jpeg has no transparency",
                         param="background", code="invalid_value")
    if fields.get("output_compression") is not None and output_format == "png" and fields.get("output_format"):
        raise BadRequest("'output_compression' applies to jpeg and webp output only", param="output_compression",
                         code="invalid_value")
    if fields.get("partial_images") and not fields.get("stream"):
        return  # allowed and harmless: previews exist only in a stream


def validate(fields: dict[str, Any], model: ModelEntry, family: str, *, prompt_required: bool) -> str:
    """Check every field; returns the prompt."""
    check_strings(fields)
    prompt = fields.get("prompt") or ""
    if prompt_required and not prompt.strip():
        raise BadRequest("'prompt' is required", param="prompt", code="missing_required_parameter")
    check_enums(fields, model)
    check_ints(fields, model)
    check_bools(fields, model)
    check_size(fields, model, family)
    check_combinations(fields, model)
    return prompt
