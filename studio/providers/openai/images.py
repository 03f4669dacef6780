"""The images API on the OpenAI protocol (``ImagesUpstream`` of ``OpenAIProvider``), reference §2.

Bodies are the client's fields with only the model replaced (and the gateway's own fields
removed), so fields this adapter does not know still reach the vendor. Edits go out as
``multipart/form-data`` the way the official SDK sends them (``image`` or repeated ``image[]``,
``mask``); a background picture for outpainting is flattened into image and mask
(``openai/backdrop.py``), since the vendor's ``background`` is only a string setting. Answers become ``ImageResult``; stream events become ``ImageEvent``s
(``partial_image`` previews, one ``completed`` per image, usage summed over them).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
import orjson

from studio.core.errors import GatewayError, UpstreamError, from_upstream_status
from studio.core.images import EDITS, ImageEvent, ImageItem, ImageJob, ImageResult, item_from_vendor
from studio.providers.base import json_body
from studio.providers.bodies import arriving
from studio.providers.openai.backdrop import flatten
from studio.providers.sse import iter_sse

if TYPE_CHECKING:
    from studio.providers.base import Provider

    _Base = Provider
else:
    _Base = object

UploadFile = tuple[str, tuple[str, bytes, str]]  # (form field, (filename, bytes, mime))
ECHO_KEYS = ("background", "output_format", "quality", "size")
# Handled by the gateway itself: it always stores the image and serves its own URL.
GATEWAY_FIELDS = {"response_format"}


def encode_multipart(fields: dict[str, Any], files: list[UploadFile]) -> tuple[bytes, str]:
    """A multipart body and its content type; non-string values are sent as the SDK sends them."""
    data: dict[str, str] = {}
    for name, value in fields.items():
        if value is None:
            continue
        if isinstance(value, bool):
            data[name] = "true" if value else "false"
        elif isinstance(value, dict | list):
            data[name] = orjson.dumps(value).decode()
        else:
            data[name] = str(value)
    request = httpx.Request("POST", "http://multipart.invalid/", data=data, files=files)
    return request.read(), request.headers["content-type"]


class OpenAIImagesMixin(_Base):
    async def images_run(self, job: ImageJob, upstream_model: str) -> ImageResult:
        fields = _fields(job, upstream_model)
        if job.route == EDITS:
            answer = await self.images_edit(fields, _files(job))
        else:
            answer = await self.images_generate(fields)
        echo = _echo(answer)
        items = [_item(entry, echo) for entry in answer["data"] if isinstance(entry, dict)]
        return ImageResult(items=items, created=int(answer.get("created") or time.time()),
                           usage=answer.get("usage"), echo=echo)

    async def images_stream(self, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
        fields = _fields(job, upstream_model)
        if job.route == EDITS:
            content, content_type = encode_multipart({**fields, "stream": True}, _files(job))
            events = self._image_events("edits", content, content_type)
        else:
            events = self._image_events("generations", orjson.dumps({**fields, "stream": True}), "application/json")
        index = 0
        usage: dict[str, Any] | None = None
        async for name, payload in events:
            echo = _echo(payload)
            if name.endswith(".partial_image"):
                yield ImageEvent("partial", index=index, item=_item(payload, echo),
                                 partial_index=int(payload.get("partial_image_index") or 0), echo=echo)
            elif name.endswith(".completed"):
                own = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
                yield ImageEvent("item", index=index, item=_item(payload, echo), echo=echo, usage=own)
                usage = _add_usage(usage, own)
                index += 1
        yield ImageEvent("completed", usage=usage)

    # -- the vendor calls ------------------------------------------------------------------------
    async def images_generate(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.request("POST", "/images/generations", json=body)
        return _answer(response.content)

    async def images_edit(self, fields: dict[str, Any], files: list[UploadFile]) -> dict[str, Any]:
        content, content_type = encode_multipart(fields, files)
        response = await self.request("POST", "/images/edits", content=content, headers={"content-type": content_type})
        return _answer(response.content)

    async def _image_events(
        self, operation: str, content: bytes, content_type: str
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        headers = {"content-type": content_type, "accept": "text/event-stream"}
        async with self.stream("POST", f"/images/{operation}", content=content, headers=headers) as response, \
                contextlib.aclosing(iter_sse(arriving(response))) as events:
            async for event in events:
                if not event.data or event.data == b"[DONE]":  # the terminator is optional (§0)
                    continue
                payload = json_body(event.data)
                if isinstance(payload.get("error"), dict) or event.event == "error":
                    raise stream_error(payload)
                yield (event.event or str(payload.get("type") or "")), payload


def _fields(job: ImageJob, upstream_model: str) -> dict[str, Any]:
    fields = {k: v for k, v in job.fields.items() if k not in GATEWAY_FIELDS}
    if not isinstance(fields.get("background"), str):
        fields.pop("background", None)  # only the vendor's setting goes as ``background``
    fields["model"] = upstream_model
    return fields


def _files(job: ImageJob) -> list[UploadFile]:
    images, mask = list(job.images), job.mask
    if job.backdrop is not None and images:
        images[0], mask = flatten(images[0], job.backdrop, mask)
    name = "image" if len(images) == 1 else "image[]"
    files = [(name, (image.filename, image.data, image.mime)) for image in images]
    if mask is not None:
        files.append(("mask", ("mask.png", mask.data, mask.mime)))
    return files


def _echo(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer[k] for k in ECHO_KEYS if isinstance(answer.get(k), str)}


def _item(entry: dict[str, Any], echo: dict[str, Any]) -> ImageItem:
    item = item_from_vendor(entry, echo.get("output_format", "png"))
    item.size = item.size or echo.get("size")
    item.output_format = item.output_format or echo.get("output_format")
    return item


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


def stream_error(payload: dict[str, Any]) -> GatewayError:
    error = payload.get("error") if isinstance(payload.get("error"), dict) else payload
    message = str(error.get("message") or "the upstream stream failed")
    code = str(error.get("code") or "") or None
    if error.get("type") == "invalid_request_error" or code == "moderation_blocked":
        return from_upstream_status(400, message, code=code)
    return UpstreamError(message, code=code)


def _answer(content: bytes) -> dict[str, Any]:
    body = json_body(content)
    if not isinstance(body.get("data"), list):
        raise UpstreamError("the upstream answered without a data list")
    return body
