"""The standard images API on the Gemini protocol (``ImagesUpstream`` of ``GeminiProvider``).

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
from typing import TYPE_CHECKING, Any

import orjson
from PIL import Image

from studio.core.entries import ModelEntry
from studio.core.errors import UpstreamRejected
from studio.core.images import ImageEvent, ImageItem, ImageJob, ImageResult, tier_size
from studio.providers.gemini.answer import Answer, inline_image

if TYPE_CHECKING:
    from studio.providers.contracts import NativeImageUpstream

    _Base = NativeImageUpstream
else:
    _Base = object


def image_config(size: str | None, model: ModelEntry) -> dict[str, str]:
    """``imageConfig`` for a standard ``size`` (a 400 naming ``size`` when the model cannot make it)."""
    tier = tier_size(size, model)
    config = {"aspectRatio": tier.aspect_ratio, "imageSize": tier.tier}
    return {key: value for key, value in config.items() if value}


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


def _refusal(answer: Answer) -> UpstreamRejected:
    reason = answer.block_reason
    detail = f": {answer.text[:300]}" if answer.text else ""
    return UpstreamRejected(f"the model returned no image (reason {reason}){detail}", param="prompt",
                            code="moderation_blocked" if "SAFETY" in reason or "PROHIBITED" in reason
                            or "BLOCK" in reason else "no_image")


def echo(job: ImageJob, size: str | None) -> dict[str, Any]:
    return {"background": "opaque", "output_format": "png", "quality": job.fields.get("quality") or "auto",
            "size": size or job.fields.get("size") or "auto"}


class GeminiImagesMixin(_Base):
    async def images_run(self, job: ImageJob, upstream_model: str) -> ImageResult:
        answer = Answer()
        answer.add(orjson.loads(await self.generate_content(upstream_model, build_body(job))))
        finals = answer.final_images()
        if not finals:
            raise _refusal(answer)
        items = [_item(image.mime, image.decode()) for image in finals]
        return ImageResult(items=items, created=int(time.time()), usage=usage_of(answer.usage),
                           echo=echo(job, items[0].size), text=answer.text)

    async def images_stream(self, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
        answer = Answer()
        previews = 0
        async for frame in self.stream_generate_content(upstream_model, build_body(job)):
            for part in answer.add(orjson.loads(frame)):
                preview = inline_image(part)
                if preview is not None and preview.thought and previews < job.partial_images:
                    yield ImageEvent("partial", index=0, item=_item(preview.mime, preview.decode()),
                                     partial_index=previews, echo=echo(job, None))
                    previews += 1
        finals = answer.final_images()
        if not finals:
            raise _refusal(answer)
        for index, image in enumerate(finals):
            item = _item(image.mime, image.decode())
            yield ImageEvent("item", index=index, item=item, echo=echo(job, item.size))
        yield ImageEvent("completed", usage=usage_of(answer.usage), echo=echo(job, None))
