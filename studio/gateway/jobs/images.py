"""A studio job on an images-API model (the standard family, or the layered/sequential extension):
the same engine as ``/v1/images/generations`` and ``/v1/images/edits``, always streamed.

Partial previews (standard ``partial_images``) and each finished image (the extension pushes one
per image as it is made) are stored the moment they arrive and pushed as URLs. The Generation row
exists from the start so its events can be kept; the record updates that row at the end instead of
creating one, and skips the outputs the job already stored.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from asgiref.sync import sync_to_async

from studio.core.errors import BadRequest
from studio.core.images import ImageEvent, ImageItem, ImageJob
from studio.core.principal import Principal
from studio.gateway.images import engine as images_engine
from studio.gateway.images.record import ImagesRecord
from studio.gateway.jobs.base import StudioJob, asset_url
from studio.gateway.jobs.inputs import InputImage
from studio.gateway.media.storage import store_item

# Form control → request field, for the values passed on as they are (the engine validates them).
PLAIN_OPTIONS = ("size", "quality", "output_format", "background")


def _int(options: dict[str, Any], name: str) -> int | None:
    raw = options.get(name)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise BadRequest(f"'{name}' must be a whole number", param=name) from None


def images_body(model_id: str, family: str, prompt: str, options: dict[str, Any],
                inputs: list[InputImage], user_id: int) -> dict[str, Any]:
    """The images request the Generate form stands for (fields as spec/images.md names them)."""
    body: dict[str, Any] = {"model": model_id, "prompt": prompt, "stream": True}
    for name in PLAIN_OPTIONS:
        if options.get(name):
            body[name] = str(options[name])
    for name in ("n", "partial_images"):
        value = _int(options, name)
        if value is not None:
            body[name] = value
    if family == "layered":
        if options.get("sequential"):
            body["sequential_image_generation"] = "auto"
            max_images = _int(options, "max_images")
            if max_images is not None:
                body["sequential_image_generation_options"] = {"max_images": max_images}
        for flag in ("layer_decomposition", "watermark"):
            if flag in options and options[flag] is not None:
                body[flag] = bool(options[flag])
        if options.get("optimize_prompt"):
            body["optimize_prompt_options"] = {"mode": str(options["optimize_prompt"])}
        body.pop("n", None)  # the extension makes sets with max_images, not n
    sources = [_source(image, user_id) for image in inputs]
    if sources:
        body["images" if family == "standard" else "image"] = sources
    return body


def _source(image: InputImage, user_id: int) -> Any:
    # The user's own asset travels by file id (the record keeps the lineage); one they see through
    # a team goes as data, since the engine's file ids resolve only what the principal owns.
    if image.owner_id == user_id:
        return {"file_id": f"file-{image.asset_id}"}
    return {"image_url": image.data_uri()}


class ImagesJob(StudioJob):
    def __init__(self, principal: Principal, model_id: str, body: dict[str, Any], prompt: str,
                 compare: str | None = None) -> None:
        super().__init__(principal, model_id, prompt, compare)
        self.body = body
        if body.get("layer_decomposition"):
            self.group = "layers"
        elif body.get("sequential_image_generation") == "auto":
            self.group = "set"

    async def prepare(self) -> None:
        has_sources = bool(self.body.get("images"))
        if has_sources:  # the standard family takes references on its edits route
            self.job: ImageJob = await images_engine.prepare_edit(self.principal, self.body)
        else:
            self.job = await images_engine.prepare_generation(self.principal, self.body)
        self.record = ImagesRecord(principal=self.principal, job=self.job, generation_id=self.id, preexisting=True,
                                         extra={"compare": self.compare} if self.compare else {})
        await self.create_row({**self.record.parameters(), **self.record.extra})

    def recorded_cost(self) -> Decimal | None:
        return self.record.cost_usd

    async def execute(self) -> dict[str, Any]:
        usage: dict[str, Any] = {}
        failed = 0
        async for event in images_engine.stream(self.principal, self.job, self.record):
            if event.kind == "partial" and event.item is not None:
                await self.on_partial(event)
            elif event.kind == "item" and event.item is not None:
                failed += 0 if await self.on_item(event.index, event.item) else 1
            elif event.kind == "completed":
                usage = event.usage or {}
        return {"usage": usage, "failed": failed, "first_byte_ms": self.record.first_byte_ms,
                "finish_reason": "STOP" if self.final_count else "", "block_reason": ""}

    async def on_partial(self, event: ImageEvent) -> None:
        item = event.item
        assert item is not None
        asset = await sync_to_async(store_item)(
            item, owner_id=self.principal.user_id, team_id=self.principal.team_id,
            generation_id=self.id, index=event.index, is_draft=True,
            metadata={"partial_image_index": event.partial_index})
        await self.emit("job.partial", {
            "url": asset_url(asset.id), "asset": str(asset.id), "index": event.index,
            "partial_index": event.partial_index, "width": asset.width, "height": asset.height,
        })

    async def on_item(self, index: int, item: ImageItem) -> bool:
        if not item.ok:
            await self.emit("job.item_failed", {"index": index, "error": item.error or {"message": "no image"}})
            return False
        await sync_to_async(self.record.store_output)(item, index, self.id)
        self.record.stored.add(item.asset_id)
        self.final_count += 1
        self.outputs.append(item.asset_id)
        width, height = _size_of(item)
        data: dict[str, Any] = {"url": asset_url(item.asset_id), "asset": str(item.asset_id), "index": index,
                                "thought": False, "width": width, "height": height, "mime": item.mime}
        for key in ("revised_prompt", "z_index", "name", "description", "bounding_box"):
            value = getattr(item, key)
            if value is not None:
                data[key] = value
        await self.emit("job.image", data)
        return True


def _size_of(item: ImageItem) -> tuple[int | None, int | None]:
    from studio.gateway.media.storage import item_size

    return item_size(item)
