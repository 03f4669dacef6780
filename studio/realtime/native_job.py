"""A studio Generate job: the same engine call as /v1, with frames pushed to the page live.

Images are stored as they arrive and pushed as URLs (never megabytes of base64 in JSON);
each event is appended to the Generation row so reconnecting pages can catch up.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.urls import reverse

from studio.gateway import native_image
from studio.gateway.errors import GatewayError
from studio.gateway.native_frames import inline_bytes, parse_frame
from studio.gateway.native_result import inline_data
from studio.gateway.principal import Principal
from studio.gateway.storage import store_bytes

from .events import job_group, make_event, publish, user_group

logger = logging.getLogger(__name__)

_running: set[asyncio.Task] = set()  # keep references so tasks are not garbage-collected


def _create_generation(generation_id: uuid.UUID, principal: Principal, model_id: str, prompt: str,
                       parameters: dict[str, Any]) -> None:
    from studio.models import Generation

    Generation.objects.create(id=generation_id, user_id=principal.user_id, team_id=principal.team_id,
                              model_id=model_id, route="studio", prompt=prompt, parameters=parameters)


def _append_event(generation_id: uuid.UUID, event: dict[str, Any]) -> None:
    from django.db import transaction

    from studio.models import Generation

    with transaction.atomic():
        generation = Generation.objects.select_for_update().only("events").get(id=generation_id)
        generation.events = [*generation.events, event]
        generation.save(update_fields=["events"])


def asset_url(asset_id: uuid.UUID) -> str:
    return reverse("asset-file", args=[asset_id])


class NativeJob:
    def __init__(self, principal: Principal, model_id: str, body: dict[str, Any], prompt: str) -> None:
        self.principal = principal
        self.model_id = model_id
        self.body = body
        self.prompt = prompt
        self.id = uuid.uuid4()
        self.seq = 0
        self.part_count = 0
        self.final_count = 0

    async def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.seq += 1
        event = make_event(kind, str(self.id), self.seq, data)
        await sync_to_async(_append_event)(self.id, event)
        await publish(job_group(str(self.id)), event)

    async def prepare(self) -> None:
        """Validate and create the record; raises GatewayError for bad input before any task starts."""
        self.call = await native_image.prepare(self.principal, self.model_id, self.body, stream=True, route="native")
        self.call.record.generation_id = self.id
        self.call.record.preexisting = True
        self.call.record.route = "studio"
        parameters = self.call.record.parameters()
        await sync_to_async(_create_generation)(self.id, self.principal, self.model_id, self.prompt, parameters)

    def launch(self) -> None:
        task = asyncio.get_running_loop().create_task(self.run())
        _running.add(task)
        task.add_done_callback(_running.discard)

    async def run(self) -> None:
        started = time.perf_counter()
        await self.emit("job.started", {"model": self.model_id, "prompt": self.prompt})
        try:
            async for frame in native_image.stream(self.call):
                await self.on_frame(frame)
        except GatewayError as exc:
            await self.emit("job.failed", {"status": exc.status, "message": exc.message})
            return
        except Exception:
            logger.exception("studio job %s failed", self.id)
            await self.emit("job.failed", {"status": 500, "message": "internal error"})
            return
        result = self.call.record.result()
        await self.emit("job.completed", {
            "finish_reason": result.finish_reason, "block_reason": result.block_reason,
            "usage": result.usage, "text": result.text, "images": self.final_count,
            "duration_ms": int((time.perf_counter() - started) * 1000),
        })
        await publish(user_group(self.principal.user_id), make_event("gallery.changed", str(self.id), 0, {}))

    async def on_frame(self, frame: bytes) -> None:
        try:
            chunk = parse_frame(frame)  # a 4K image stays in the frame's bytes until decoded
        except orjson.JSONDecodeError:
            return
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
        try:
            data = inline_bytes(inline.get("data") or "")
        except GatewayError:
            return
        mime = str(inline.get("mimeType") or inline.get("mime_type") or "image/png")
        asset = await sync_to_async(_store_output)(self, data, mime, thought)
        if not thought:
            self.final_count += 1
            self.call.record.stored_outputs[self.part_count] = asset.id
        await self.emit("job.image", {
            "url": asset_url(asset.id), "asset": str(asset.id), "thought": thought,
            "width": asset.width, "height": asset.height, "mime": mime,
        })


def _store_output(job: NativeJob, data: bytes, mime: str, thought: bool):
    return store_bytes(data, mime, owner_id=job.principal.user_id, team_id=job.principal.team_id,
                       generation_id=job.id, index=job.final_count, is_draft=thought,
                       metadata={"part_index": job.part_count})
