"""Images results in the client's wire shape: the standard images body and its SSE events, or the
layered/sequential extension body and its events (``partial_succeeded``/``partial_failed``/
``completed`` then ``[DONE]``). URLs are the gateway's own signed links to the stored outputs.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from studio.gateway.images_types import EDITS, ImageEvent, ImageItem, ImageJob, ImageResult
from studio.web.public_media import signed_url

DONE = (None, b"[DONE]")
Frame = tuple[str | None, bytes]
ITEM_KEYS = ("revised_prompt", "output_format", "size", "z_index", "name", "description", "bounding_box")


def image_fields(item: ImageItem, job: ImageJob) -> dict[str, Any]:
    if job.response_format == "url":
        return {"url": signed_url(item.asset_id)}
    return {"b64_json": item.b64_text()}


def item_body(item: ImageItem, job: ImageJob) -> dict[str, Any]:
    if item.error is not None or not item.ok:
        return {"error": item.error or {"code": "NoImage", "message": "no image was returned for this item"}}
    body = image_fields(item, job)
    for key in ITEM_KEYS:
        value = getattr(item, key)
        if value is not None:
            body[key] = value
    return body


def echo_of(job: ImageJob, echo: dict[str, Any]) -> dict[str, Any]:
    """The effective settings: what the upstream reported, else what the client asked for."""
    fields = job.fields
    return {
        "background": echo.get("background") or fields.get("background") or "auto",
        "output_format": echo.get("output_format") or fields.get("output_format") or "png",
        "quality": echo.get("quality") or fields.get("quality") or "auto",
        "size": echo.get("size") or fields.get("size") or "auto",
    }


def response_body(job: ImageJob, result: ImageResult) -> dict[str, Any]:
    data = [item_body(item, job) for item in result.items]
    if job.family == "layered":
        body: dict[str, Any] = {"model": job.model.model_id, "created": result.created, "data": data}
    else:
        body = {"created": result.created, **echo_of(job, result.echo), "data": data}
    if result.usage is not None:
        body["usage"] = result.usage
    return body


def _frame(name: str, payload: dict[str, Any]) -> Frame:
    return name, orjson.dumps({"type": name, **payload})


async def standard_events(job: ImageJob, events: AsyncIterator[ImageEvent]) -> AsyncIterator[Frame]:
    """``image_generation.*`` (``image_edit.*`` for edits). Each finished image is held until the
    next event so the last ``completed`` can carry the request's usage."""
    prefix = "image_edit" if job.route == EDITS else "image_generation"
    held: tuple[ImageItem, dict[str, Any]] | None = None

    def completed(item: ImageItem, echo: dict[str, Any], usage: dict[str, Any] | None) -> Frame:
        payload = {**image_fields(item, job), "created_at": int(time.time()), **echo_of(job, echo)}
        if item.revised_prompt:
            payload["revised_prompt"] = item.revised_prompt
        if usage is not None:
            payload["usage"] = usage
        return _frame(f"{prefix}.completed", payload)

    async for event in events:
        if event.kind == "completed":
            if held is not None:
                yield completed(*held, event.usage)
                held = None
            continue
        if held is not None:
            yield completed(*held, None)
            held = None
        if event.kind == "partial" and event.item is not None:
            yield _frame(f"{prefix}.partial_image", {
                "b64_json": event.item.b64_text(), "partial_image_index": event.partial_index,
                "created_at": int(time.time()), **echo_of(job, event.echo),
            })
        elif event.kind == "item" and event.item is not None and event.item.ok:
            held = (event.item, event.echo)
    if held is not None:
        yield completed(*held, None)


async def layered_events(job: ImageJob, events: AsyncIterator[ImageEvent]) -> AsyncIterator[Frame]:
    base = {"model": job.model.model_id}
    async for event in events:
        created = int(time.time())
        if event.kind == "item" and event.item is not None:
            body = item_body(event.item, job)
            name = "image_generation.partial_failed" if "error" in body else "image_generation.partial_succeeded"
            yield _frame(name, {**base, "created": created, "image_index": event.index, **body})
        elif event.kind == "completed":
            yield _frame("image_generation.completed", {**base, "created": created, "usage": event.usage or {}})
    yield DONE
