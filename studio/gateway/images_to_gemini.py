"""Standard images requests on a Gemini-protocol upstream (the native delta models).

Generation: the prompt becomes one ``user`` text part; ``size`` becomes ``imageConfig``
(``aspectRatio`` + ``imageSize`` tier). Edit: the instruction text and every input image as
``inlineData`` parts of the same ``user`` message. Answers: the final (non-thought) images become
``data[]`` items, usage is re-spelled in the images shape; in a stream, thought images become
``partial_image`` previews (as many as ``partial_images`` asks for) and the final image is the
``completed`` event, sent once usage is known. No image in a 200 answer is a refusal, never an
empty success.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
from PIL import Image

from .errors import BadRequest, UpstreamRejected
from .images_types import ImageEvent, ImageItem, ImageJob, ImageResult
from .native_result import NativeResult
from .snapshot import ModelEntry

# Longest side (pixels) up to which a WxH size maps to each tier.
TIER_LIMITS = (("512", 768), ("1K", 1536), ("2K", 3072), ("4K", 1 << 30))
RATIO_TOLERANCE = 0.03


def image_config(size: str | None, model: ModelEntry) -> dict[str, str]:
    """``imageConfig`` for a size: ``auto``, a tier the model has, or WxH near one of its ratios."""
    caps = model.capabilities
    tiers, ratios = caps.get("image_sizes") or ["1K"], caps.get("aspect_ratios") or ["1:1"]
    if size in (None, "", "auto"):
        return {}
    if size in tiers:
        return {"imageSize": size}
    width, _, height = size.partition("x")
    if not (width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0):
        raise BadRequest(f"invalid 'size': {size!r}; use 'auto', a tier ({', '.join(tiers)}) or WIDTHxHEIGHT",
                         param="size", code="invalid_value")
    target = int(width) / int(height)

    def ratio_value(ratio: str) -> float:
        a, _, b = ratio.partition(":")
        return int(a) / int(b)

    ratio = min(ratios, key=lambda r: abs(ratio_value(r) - target))
    if abs(ratio_value(ratio) - target) / target > RATIO_TOLERANCE:
        raise BadRequest(f"invalid 'size': {size} has an aspect ratio model '{model.model_id}' cannot make; "
                         f"supported ratios: {', '.join(ratios)}", param="size", code="invalid_value")
    longest = max(int(width), int(height))
    tier = next(name for name, limit in TIER_LIMITS if longest <= limit)
    if tier not in tiers:
        raise BadRequest(f"invalid 'size': {size} needs the {tier} tier, which model '{model.model_id}' does not "
                         f"offer (tiers: {', '.join(tiers)})", param="size", code="invalid_value")
    return {"aspectRatio": ratio, "imageSize": tier}


def build_body(job: ImageJob) -> bytes:
    parts: list[dict[str, Any]] = [{"text": job.prompt}]
    for image in job.images:
        parts.append({"inlineData": {"mimeType": image.mime, "data": base64.b64encode(image.data).decode()}})
    config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"]}
    image_cfg = image_config(job.fields.get("size"), job.model)
    if image_cfg:
        config["imageConfig"] = image_cfg
    return orjson.dumps({"contents": [{"role": "user", "parts": parts}], "generationConfig": config})


def _modality_tokens(details: Any) -> dict[str, int]:
    counts = {"image_tokens": 0, "text_tokens": 0}
    for entry in details or []:
        if isinstance(entry, dict):
            key = "image_tokens" if entry.get("modality") == "IMAGE" else "text_tokens"
            counts[key] += int(entry.get("tokenCount") or 0)
    return counts


def usage_of(metadata: dict[str, Any]) -> dict[str, Any]:
    prompt = int(metadata.get("promptTokenCount") or 0)
    total = int(metadata.get("totalTokenCount") or 0)
    return {
        "input_tokens": prompt, "input_tokens_details": _modality_tokens(metadata.get("promptTokensDetails")),
        "output_tokens": max(total - prompt, 0),
        "output_tokens_details": _modality_tokens(metadata.get("candidatesTokensDetails")),
        "total_tokens": total,
    }


def _size_of(data: bytes) -> str | None:
    try:
        with Image.open(io.BytesIO(data)) as picture:  # reads the header only
            return f"{picture.width}x{picture.height}"
    except Exception:
        return None


def _item(mime: str, data: bytes) -> ImageItem:
    return ImageItem(data=data, mime=mime, size=_size_of(data), output_format=mime.split("/")[-1])


def _refusal(result: NativeResult) -> UpstreamRejected:
    reason = result.block_reason
    detail = f": {result.text[:300]}" if result.text else ""
    return UpstreamRejected(f"the model returned no image (reason {reason}){detail}", param="prompt",
                            code="moderation_blocked" if "SAFETY" in reason or "PROHIBITED" in reason
                            or "BLOCK" in reason else "no_image")


def echo(job: ImageJob, size: str | None) -> dict[str, Any]:
    return {"background": "opaque", "output_format": "png", "quality": job.fields.get("quality") or "auto",
            "size": size or job.fields.get("size") or "auto"}


async def call(provider: Any, job: ImageJob, upstream_model: str) -> ImageResult:
    answer = await provider.generate_content(upstream_model, build_body(job))
    result = NativeResult()
    parsed = orjson.loads(answer)
    if isinstance(parsed, dict):
        result.add(parsed)
    finals = result.final_images()
    if not finals:
        raise _refusal(result)
    items = [_item(image.mime, image.decode()) for image in finals]
    return ImageResult(items=items, created=int(time.time()), usage=usage_of(result.usage),
                       echo=echo(job, items[0].size), text=result.text)


async def stream(provider: Any, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
    result = NativeResult()
    previews = 0
    async for frame in provider.stream_generate_content(upstream_model, build_body(job)):
        chunk = orjson.loads(frame)
        if not isinstance(chunk, dict):
            continue
        for part in result.add(chunk):
            inline = part.get("inlineData") or part.get("inline_data")
            if part.get("thought") and isinstance(inline, dict) and previews < job.partial_images:
                preview = _item(str(inline.get("mimeType") or "image/png"),
                                base64.b64decode(str(inline.get("data") or "")))
                yield ImageEvent("partial", index=0, item=preview, partial_index=previews, echo=echo(job, None))
                previews += 1
    finals = result.final_images()
    if not finals:
        raise _refusal(result)
    for index, image in enumerate(finals):
        item = _item(image.mime, image.decode())
        yield ImageEvent("item", index=index, item=item, echo=echo(job, item.size))
    yield ImageEvent("completed", usage=usage_of(result.usage), echo=echo(job, None))
