"""OpenAI Images protocol calls (mixed into ``OpenAIProvider``), reference §2.

Bodies are the client's fields with only the model replaced, so fields this adapter does not
know still reach the vendor. Edits go out as ``multipart/form-data`` the way the official SDK
sends them (``image`` or repeated ``image[]``, ``mask``); streams yield ``(event, payload)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from studio.gateway.errors import GatewayError, UpstreamError, from_upstream_status

from .base import json_body
from .sse import iter_sse

UploadFile = tuple[str, tuple[str, bytes, str]]  # (form field, (filename, bytes, mime))


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


class OpenAIImagesMixin:
    def images_path(self, operation: str) -> str:
        # Operators configure ``https://api.openai.com/v1`` or a bare host; both work.
        prefix = "" if self.upstream.base_url.endswith("/v1") else "/v1"  # type: ignore[attr-defined]
        return f"{prefix}/images/{operation}"

    async def images_generate(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.request("POST", self.images_path("generations"), json=body)  # type: ignore[attr-defined]
        return _answer(response.content)

    async def images_edit(self, fields: dict[str, Any], files: list[UploadFile]) -> dict[str, Any]:
        content, content_type = encode_multipart(fields, files)
        response = await self.request(  # type: ignore[attr-defined]
            "POST", self.images_path("edits"), content=content, headers={"content-type": content_type}
        )
        return _answer(response.content)

    async def images_generate_stream(self, body: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        content = orjson.dumps({**body, "stream": True})
        async for event in self._image_events("generations", content, "application/json"):
            yield event

    async def images_edit_stream(
        self, fields: dict[str, Any], files: list[UploadFile]
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        content, content_type = encode_multipart({**fields, "stream": True}, files)
        async for event in self._image_events("edits", content, content_type):
            yield event

    async def _image_events(
        self, operation: str, content: bytes, content_type: str
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        headers = {"content-type": content_type, "accept": "text/event-stream"}
        async with self.stream("POST", self.images_path(operation), content=content,  # type: ignore[attr-defined]
                               headers=headers) as response:
            async for event in iter_sse(response.aiter_raw()):
                if not event.data or event.data == b"[DONE]":  # the terminator is optional (§0)
                    continue
                payload = json_body(event.data)
                if isinstance(payload.get("error"), dict) or event.event == "error":
                    raise stream_error(payload)
                yield (event.event or str(payload.get("type") or "")), payload


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
