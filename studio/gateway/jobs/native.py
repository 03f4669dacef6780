"""A studio job on a native image model: the same engine call as the /v1 native stream route,
with thoughts, text and images pushed to the page as they arrive.

Images are stored as they arrive and pushed as URLs (never megabytes of base64 in JSON).
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import orjson
from asgiref.sync import sync_to_async

from studio.core.errors import BadRequest, GatewayError
from studio.core.principal import Principal
from studio.gateway.jobs.base import StudioJob, asset_url
from studio.gateway.jobs.inputs import InputImage
from studio.gateway.media.storage import store_base64, store_bytes
from studio.gateway.native import engine as native_image
from studio.gateway.native.frames import BigString, inline_bytes, parse_frame
from studio.gateway.native.result import NativeResult, inline_data

logger = logging.getLogger(__name__)


def _seed(options: dict[str, Any]) -> int | None:
    raw = options.get("seed")
    if raw in (None, ""):
        return None
    try:
        seed = int(raw)
    except (TypeError, ValueError):
        raise BadRequest("the seed must be a whole number", param="seed") from None
    if not 0 <= seed < 2**31:
        raise BadRequest("the seed must be between 0 and 2147483647", param="seed")
    return seed


def native_body(prompt: str, options: dict[str, Any], inputs: list[InputImage]) -> dict[str, Any]:
    """The native request the Generate form stands for: reference images first, then the text."""
    image_config: dict[str, Any] = {}
    if options.get("aspect_ratio"):
        image_config["aspectRatio"] = str(options["aspect_ratio"])
    if options.get("image_size"):
        image_config["imageSize"] = str(options["image_size"])
    config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"], "imageConfig": image_config}
    seed = _seed(options)
    if seed is not None:
        config["seed"] = seed
    parts: list[dict[str, Any]] = [{"inlineData": {"mimeType": image.mime, "data": image.b64()}} for image in inputs]
    parts.append({"text": prompt})
    return {"contents": [{"role": "user", "parts": parts}], "generationConfig": config}


class NativeJob(StudioJob):
    def __init__(self, principal: Principal, model_id: str, body: dict[str, Any], prompt: str,
                 compare: str | None = None) -> None:
        super().__init__(principal, model_id, prompt, compare)
        self.body = body
        self.part_count = 0
        # Merged here as frames arrive: the record's frames belong to the recorder once handed over.
        self.result = NativeResult()

    async def prepare(self) -> None:
        """Validate and create the record; raises GatewayError for bad input before any task starts."""
        self.call = await native_image.prepare(self.principal, self.model_id, self.body, stream=True, route="native")
        self.call.record.generation_id = self.id
        self.call.record.preexisting = True
        self.call.record.route = "studio"
        await self.create_row(self.call.record.parameters())

    def recorded_cost(self) -> Decimal | None:
        return self.call.record.cost_usd

    async def execute(self) -> dict[str, Any]:
        async for frame in native_image.stream(self.call):
            await self.on_frame(frame)
        result = self.result
        return {"finish_reason": result.finish_reason, "block_reason": result.block_reason,
                "usage": result.usage, "text": result.text, "first_byte_ms": self.call.record.first_byte_ms}

    async def on_frame(self, frame: bytes) -> None:
        try:
            chunk = parse_frame(frame)  # a 4K image stays in the frame's bytes until decoded
        except orjson.JSONDecodeError:
            return
        self.result.add(chunk)
        for candidate in chunk.get("candidates") or []:
            if candidate.get("index", 0) != 0:
                continue
            for part in (candidate.get("content") or {}).get("parts") or []:
                await self.on_part(part)
                self.part_count += 1
        feedback = chunk.get("promptFeedback")
        if feedback:
            await self.emit("job.feedback", {"prompt_feedback": feedback})

    async def on_part(self, part: dict[str, Any]) -> None:
        thought = bool(part.get("thought"))
        if isinstance(part.get("text"), str) and part["text"]:
            await self.emit("job.text", {"text": part["text"], "thought": thought})
        inline = inline_data(part)
        if inline is None:
            return
        mime = str(inline.get("mimeType") or inline.get("mime_type") or "image/png")
        try:
            asset = await sync_to_async(_store_output)(self, inline.get("data") or "", mime, thought)
        except GatewayError:
            return
        if not thought:
            self.final_count += 1
            self.outputs.append(asset.id)
            self.call.record.stored_outputs[self.part_count] = asset.id
        await self.emit("job.image", {
            "url": asset_url(asset.id), "asset": str(asset.id), "thought": thought,
            "width": asset.width, "height": asset.height, "mime": mime,
        })


def _store_output(job: NativeJob, data: str | BigString, mime: str, thought: bool):
    where = dict(owner_id=job.principal.user_id, team_id=job.principal.team_id, generation_id=job.id,
                 index=job.final_count, is_draft=thought, metadata={"part_index": job.part_count})
    if isinstance(data, BigString):  # decoded from the frame into the file, a piece at a time
        return store_base64(data.raw(), data.decode_base64, mime, **where)
    return store_bytes(inline_bytes(data), mime, **where)
