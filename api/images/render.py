"""Images results in the client's wire shape: the standard images body and its SSE events, or the
layered/sequential extension body and its events (``partial_succeeded``/``partial_failed``/
``completed`` then ``[DONE]``). URLs are the gateway's own signed links to the stored outputs.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import orjson

from studio.core import streams
from studio.core.images import EDITS, ImageEvent, ImageItem, ImageJob, ImageResult
from studio.gateway.media.links import signed_url
from studio.gateway.media.storage import item_size as picture_size

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


# What ``auto`` came to when the upstream did not say (the pixels themselves give the size).
RESOLVED = {"background": "opaque", "quality": "medium"}
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")
DETAIL_KEYS = ("image_tokens", "text_tokens")


def _concrete(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != "auto" else None


def item_size(item: ImageItem | None) -> str | None:
    if item is None or not item.ok:
        return None
    if _concrete(item.size):
        return item.size
    width, height = picture_size(item)  # from the header: the pixels are never decoded here
    return f"{width}x{height}" if width is not None else None


def echo_of(job: ImageJob, echo: dict[str, Any], item: ImageItem | None = None) -> dict[str, Any]:
    """The effective settings, never ``auto``: what the upstream reported, else what the client
    asked for, else what ``auto`` came to (the size read from the image made)."""
    fields = job.fields
    size = _concrete(echo.get("size")) or item_size(item) or _concrete(fields.get("size")) or "1024x1024"
    return {
        "background": _concrete(echo.get("background")) or _concrete(fields.get("background")) or RESOLVED["background"],
        "output_format": echo.get("output_format") or fields.get("output_format") or "png",
        "quality": _concrete(echo.get("quality")) or _concrete(fields.get("quality")) or RESOLVED["quality"],
        "size": size,
    }


def full_usage(usage: dict[str, Any] | None) -> dict[str, Any]:
    """Usage with every field the images event types require (missing counts are 0)."""
    usage = dict(usage or {})
    for key in USAGE_KEYS:
        usage[key] = int(usage.get(key) or 0)
    details = usage.get("input_tokens_details")
    details = dict(details) if isinstance(details, dict) else {}
    usage["input_tokens_details"] = {**details, **{k: int(details.get(k) or 0) for k in DETAIL_KEYS}}
    return usage


def usage_minus(total: dict[str, Any], spent: dict[str, Any]) -> dict[str, Any]:
    """What of ``total`` is left after ``spent`` (never below zero), field by field."""
    left = full_usage(total)
    for key in USAGE_KEYS:
        left[key] = max(0, left[key] - int(spent.get(key) or 0))
    spent_details = spent.get("input_tokens_details") or {}
    left["input_tokens_details"] = {k: max(0, v - int(spent_details.get(k) or 0)) if isinstance(v, int) else v
                                    for k, v in left["input_tokens_details"].items()}
    return left


def usage_plus(total: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    summed = full_usage(total)
    for key in USAGE_KEYS:
        summed[key] += int(more.get(key) or 0)
    details = more.get("input_tokens_details") or {}
    for key in DETAIL_KEYS:
        summed["input_tokens_details"][key] += int(details.get(key) or 0)
    return summed


def response_body(job: ImageJob, result: ImageResult) -> dict[str, Any]:
    data = [item_body(item, job) for item in result.items]
    if job.family == "layered":
        body: dict[str, Any] = {"model": job.model.model_id, "created": result.created, "data": data}
    else:
        first = next((item for item in result.items if item.ok), None)
        body = {"created": result.created, **echo_of(job, result.echo, first), "data": data}
    if result.usage is not None:
        body["usage"] = result.usage
    return body


def priced_usage(usage: dict[str, Any] | None, cost_usd: Decimal | None) -> dict[str, Any] | None:
    """The final event's usage with the call's cost as ``cost_usd`` (US dollars), like the
    ``x-studio-cost-usd`` header of a buffered answer. The usage object is where the format
    reports what a call used, and the OpenAI SDK's models keep fields they do not know; an upstream
    that reported no usage leaves the event without one."""
    if usage is None or cost_usd is None:
        return usage
    return {**usage, "cost_usd": float(cost_usd)}


def _frame(name: str, payload: dict[str, Any]) -> Frame:
    return name, orjson.dumps({"type": name, **payload})


async def standard_events(job: ImageJob, events: AsyncIterator[ImageEvent]) -> AsyncIterator[Frame]:
    """``image_generation.*`` (``image_edit.*`` for edits): one ``completed`` per image, each with
    its ``b64_json`` and its usage, so that their usages add up to the request's (an upstream that
    reports usage only at the end has it on the last ``completed``). Each finished image is held
    until the next event, to know whether it is the last."""
    prefix = "image_edit" if job.route == EDITS else "image_generation"
    held: ImageEvent | None = None
    spent: dict[str, Any] = full_usage(None)

    def completed(event: ImageEvent, usage: dict[str, Any]) -> Frame:
        item = event.item
        assert item is not None
        payload = {"b64_json": item.b64_text(), **image_fields(item, job), "created_at": int(time.time()),
                   **echo_of(job, event.echo, item)}
        if item.revised_prompt:
            payload["revised_prompt"] = item.revised_prompt
        payload["usage"] = full_usage(usage)
        return _frame(f"{prefix}.completed", payload)

    try:
        async for event in events:
            if event.kind == "completed":
                if held is not None:
                    own = held.usage or {}
                    left = usage_minus(event.usage, spent) if event.usage is not None else own
                    yield completed(held, priced_usage(left, event.cost_usd) or left)
                    held = None
                continue
            if held is not None:
                own = full_usage(held.usage)
                spent = usage_plus(spent, own)
                yield completed(held, own)
                held = None
            if event.kind == "partial" and event.item is not None:
                yield _frame(f"{prefix}.partial_image", {
                    "b64_json": event.item.b64_text(), "partial_image_index": event.partial_index,
                    "created_at": int(time.time()), **echo_of(job, event.echo, event.item),
                })
            elif event.kind == "item" and event.item is not None and event.item.ok:
                held = event
        if held is not None:
            yield completed(held, held.usage or {})
    finally:
        await streams.close(events)  # left early: the engine's stream lets its upstream go now


async def layered_events(job: ImageJob, events: AsyncIterator[ImageEvent]) -> AsyncIterator[Frame]:
    base = {"model": job.model.model_id}
    try:
        async for event in events:
            created = int(time.time())
            if event.kind == "item" and event.item is not None:
                body = item_body(event.item, job)
                name = "image_generation.partial_failed" if "error" in body else "image_generation.partial_succeeded"
                yield _frame(name, {**base, "created": created, "image_index": event.index, **body})
            elif event.kind == "completed":
                yield _frame("image_generation.completed", {**base, "created": created,
                                                            "usage": priced_usage(event.usage or {}, event.cost_usd)})
    finally:
        await streams.close(events)
    yield DONE
