"""Images on each upstream protocol: one backend per protocol, looked up in one registry.

A backend turns an ``ImageJob`` into the vendor's call (through the provider adapter) and the
vendor's answer into ``ImageResult`` / ``ImageEvent``. The client's fields are passed on
unchanged except for the model name and the image sources, so extension fields survive.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from . import images_to_gemini
from .errors import NoUpstream
from .images_types import EDITS, ImageEvent, ImageItem, ImageJob, ImageResult, item_from_vendor

ECHO_KEYS = ("background", "output_format", "quality", "size")
# Handled by the gateway itself: it always stores the image and serves its own URL.
GATEWAY_FIELDS = {"response_format"}


# -- OpenAI Images -----------------------------------------------------------------------------


def _openai_fields(job: ImageJob, upstream_model: str) -> dict[str, Any]:
    fields = {k: v for k, v in job.fields.items() if k not in GATEWAY_FIELDS}
    if job.backdrop is not None:
        fields.pop("background", None)  # the image goes as a file part instead
    fields["model"] = upstream_model
    return fields


def _openai_files(job: ImageJob) -> list[tuple[str, tuple[str, bytes, str]]]:
    name = "image" if len(job.images) == 1 else "image[]"
    files = [(name, (image.filename, image.data, image.mime)) for image in job.images]
    if job.mask is not None:
        files.append(("mask", ("mask.png", job.mask.data, job.mask.mime)))
    if job.backdrop is not None:
        files.append(("background", (job.backdrop.filename, job.backdrop.data, job.backdrop.mime)))
    return files


def _echo(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer[k] for k in ECHO_KEYS if isinstance(answer.get(k), str)}


def _openai_item(entry: dict[str, Any], echo: dict[str, Any]) -> ImageItem:
    item = item_from_vendor(entry, echo.get("output_format", "png"))
    item.size = item.size or echo.get("size")
    item.output_format = item.output_format or echo.get("output_format")
    return item


async def openai_call(provider: Any, job: ImageJob, upstream_model: str) -> ImageResult:
    fields = _openai_fields(job, upstream_model)
    if job.route == EDITS:
        answer = await provider.images_edit(fields, _openai_files(job))
    else:
        answer = await provider.images_generate(fields)
    echo = _echo(answer)
    items = [_openai_item(entry, echo) for entry in answer["data"] if isinstance(entry, dict)]
    return ImageResult(items=items, created=int(answer.get("created") or time.time()),
                       usage=answer.get("usage"), echo=echo)


async def openai_stream(provider: Any, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
    fields = _openai_fields(job, upstream_model)
    if job.route == EDITS:
        events = provider.images_edit_stream(fields, _openai_files(job))
    else:
        events = provider.images_generate_stream(fields)
    index = 0
    usage: dict[str, Any] | None = None
    async for name, payload in events:
        echo = _echo(payload)
        if name.endswith(".partial_image"):
            yield ImageEvent("partial", index=index, item=_openai_item(payload, echo),
                             partial_index=int(payload.get("partial_image_index") or 0), echo=echo)
        elif name.endswith(".completed"):
            yield ImageEvent("item", index=index, item=_openai_item(payload, echo), echo=echo)
            usage = _add_usage(usage, payload.get("usage"))
            index += 1
    yield ImageEvent("completed", usage=usage)


def _add_usage(total: dict[str, Any] | None, more: Any) -> dict[str, Any] | None:
    """One ``completed`` per image, each with its own usage: the request's usage is their sum."""
    if not isinstance(more, dict):
        return total
    if total is None:
        return dict(more)
    summed = dict(total)
    for key, value in more.items():
        if isinstance(value, int) and isinstance(summed.get(key), int):
            summed[key] += value
        elif isinstance(value, dict) and isinstance(summed.get(key), dict):
            summed[key] = _add_usage(summed[key], value)
    return summed


# -- Ark Seedream --------------------------------------------------------------------------------


def _seedream_body(job: ImageJob, upstream_model: str) -> dict[str, Any]:
    body = {**job.fields, "model": upstream_model}
    if job.images:
        uris = [image.data_uri() for image in job.images]
        body["image"] = uris if job.image_as_list or len(uris) > 1 else uris[0]
    return body


async def seedream_call(provider: Any, job: ImageJob, upstream_model: str) -> ImageResult:
    answer = await provider.seedream_generate(_seedream_body(job, upstream_model))
    items = [item_from_vendor(entry, "jpeg") for entry in answer["data"] if isinstance(entry, dict)]
    return ImageResult(items=items, created=int(answer.get("created") or time.time()), usage=answer.get("usage"),
                       echo={"model": answer.get("model")})


async def seedream_stream(provider: Any, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
    async for name, payload in provider.seedream_stream(_seedream_body(job, upstream_model)):
        index = int(payload.get("image_index") or 0)
        if name in ("image_generation.partial_succeeded", "image_generation.partial_failed"):
            yield ImageEvent("item", index=index, item=item_from_vendor(payload, "jpeg"))
        elif name == "image_generation.completed":
            yield ImageEvent("completed", usage=payload.get("usage"))


# -- the registry ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ImagesBackend:
    call: Callable[[Any, ImageJob, str], Awaitable[ImageResult]]
    stream: Callable[[Any, ImageJob, str], AsyncIterator[ImageEvent]]


BACKENDS: dict[str, ImagesBackend] = {
    "openai": ImagesBackend(openai_call, openai_stream),
    "ark": ImagesBackend(seedream_call, seedream_stream),
    "gemini": ImagesBackend(images_to_gemini.call, images_to_gemini.stream),
}


def backend_for(protocol: str) -> ImagesBackend:
    backend = BACKENDS.get(protocol)
    if backend is None:
        raise NoUpstream(f"protocol '{protocol}' cannot serve the images API")
    return backend
