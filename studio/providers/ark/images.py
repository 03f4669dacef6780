"""The images API on Ark Seedream (``ImagesUpstream`` of ``ArkProvider``), reference §3.

The client's fields go out unchanged but for the model and the input images (data URIs under
``image``, a list when the client sent one or there are several). Results given as ``url`` are
downloaded here with the provider's own client: they are the vendor's result links (trusted,
and they expire after 24 h), not URLs a client chose, so they do not go through the SSRF fetch.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from studio.core.errors import UpstreamError
from studio.core.images import ImageEvent, ImageJob, ImageResult, item_from_vendor
from studio.providers.base import json_body, map_transport_errors
from studio.providers.bodies import arriving
from studio.providers.sse import iter_sse

if TYPE_CHECKING:
    from studio.providers.base import Provider

    _Base = Provider
else:
    _Base = object

MAX_RESULT_BYTES = 64 * 1024 * 1024
PATH = "/images/generations"


def seedream_body(job: ImageJob, upstream_model: str) -> dict[str, Any]:
    body = {**job.fields, "model": upstream_model}
    if job.images:
        uris = [image.data_uri() for image in job.images]
        body["image"] = uris if job.image_as_list or len(uris) > 1 else uris[0]
    return body


class ArkImagesMixin(_Base):
    async def images_run(self, job: ImageJob, upstream_model: str) -> ImageResult:
        answer = await self.seedream_generate(seedream_body(job, upstream_model))
        items = [item_from_vendor(entry, "jpeg") for entry in answer["data"] if isinstance(entry, dict)]
        return ImageResult(items=items, created=int(answer.get("created") or time.time()),
                           usage=answer.get("usage"), echo={"model": answer.get("model")})

    async def images_stream(self, job: ImageJob, upstream_model: str) -> AsyncIterator[ImageEvent]:
        async for name, payload in self.seedream_stream(seedream_body(job, upstream_model)):
            index = int(payload.get("image_index") or 0)
            if name in ("image_generation.partial_succeeded", "image_generation.partial_failed"):
                yield ImageEvent("item", index=index, item=item_from_vendor(payload, "jpeg"))
            elif name == "image_generation.completed":
                yield ImageEvent("completed", usage=payload.get("usage"))

    # -- the vendor calls ------------------------------------------------------------------------
    async def seedream_generate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The vendor's answer, with every ``url`` item's bytes attached as ``_bytes``."""
        response = await self.request("POST", PATH, json=body)
        answer = json_body(response.content)
        if isinstance(answer.get("error"), dict) and not answer.get("data"):
            raise self.error_from_response(400, response.content)
        items = answer.get("data")
        if not isinstance(items, list):
            raise UpstreamError("the upstream answered without a data list")
        await asyncio.gather(*(self.download_result(item) for item in items if isinstance(item, dict)))
        return answer

    async def seedream_stream(self, body: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        content = orjson.dumps({**body, "stream": True})
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        async with self.stream("POST", PATH, content=content, headers=headers) as response, \
                contextlib.aclosing(iter_sse(arriving(response))) as events:
            async for event in events:
                if not event.data:
                    continue
                if event.data == b"[DONE]":
                    return
                payload = json_body(event.data)
                kind = event.event or str(payload.get("type") or "")
                if not kind and isinstance(payload.get("error"), dict):
                    raise self.error_from_response(500, event.data)
                if kind == "image_generation.partial_succeeded":
                    await self.download_result(payload)
                yield kind, payload

    async def download_result(self, item: dict[str, Any]) -> None:
        url = item.get("url")
        if not isinstance(url, str) or "b64_json" in item:
            return
        with map_transport_errors(self.upstream.name):
            async with self.client.stream("GET", url) as response:
                if response.status_code >= 400:
                    raise UpstreamError(f"downloading the upstream result failed with HTTP {response.status_code}")
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_RESULT_BYTES:
                        raise UpstreamError("the upstream result is larger than the gateway accepts")
                    chunks.append(chunk)
        item["_bytes"] = b"".join(chunks)
        item["_mime"] = response.headers.get("content-type", "").split(";")[0].strip() or None
