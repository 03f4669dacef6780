"""Ark Seedream image calls (mixed into ``ArkProvider``), reference §3.

The client's fields go out unchanged but for the model. Results given as ``url`` are
downloaded here with the provider's own client: they are the vendor's result links (trusted,
and they expire after 24 h), not URLs a client chose, so they do not go through the SSRF fetch.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson

from studio.gateway.errors import UpstreamError

from .base import json_body, map_transport_errors
from .sse import iter_sse

MAX_RESULT_BYTES = 64 * 1024 * 1024


class ArkImagesMixin:
    def seedream_path(self) -> str:
        base = self.upstream.base_url  # type: ignore[attr-defined]
        return "/images/generations" if base.endswith("/api/v3") else "/api/v3/images/generations"

    async def seedream_generate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The vendor's answer, with every ``url`` item's bytes attached as ``_bytes``."""
        response = await self.request("POST", self.seedream_path(), json=body)  # type: ignore[attr-defined]
        answer = json_body(response.content)
        if isinstance(answer.get("error"), dict) and not answer.get("data"):
            raise self.error_from_response(400, response.content)  # type: ignore[attr-defined]
        items = answer.get("data")
        if not isinstance(items, list):
            raise UpstreamError("the upstream answered without a data list")
        await asyncio.gather(*(self.download_result(item) for item in items if isinstance(item, dict)))
        return answer

    async def seedream_stream(self, body: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        content = orjson.dumps({**body, "stream": True})
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        async with self.stream("POST", self.seedream_path(), content=content,  # type: ignore[attr-defined]
                               headers=headers) as response:
            async for event in iter_sse(response.aiter_raw()):
                if not event.data:
                    continue
                if event.data == b"[DONE]":
                    return
                payload = json_body(event.data)
                kind = event.event or str(payload.get("type") or "")
                if not kind and isinstance(payload.get("error"), dict):
                    raise self.error_from_response(500, event.data)  # type: ignore[attr-defined]
                if kind == "image_generation.partial_succeeded":
                    await self.download_result(payload)
                yield kind, payload

    async def download_result(self, item: dict[str, Any]) -> None:
        url = item.get("url")
        if not isinstance(url, str) or "b64_json" in item:
            return
        with map_transport_errors(self.upstream.name):  # type: ignore[attr-defined]
            async with self.client.stream("GET", url) as response:  # type: ignore[attr-defined]
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
