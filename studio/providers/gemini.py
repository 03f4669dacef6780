"""Gemini API protocol: ``models/{m}:generateContent`` and ``:streamGenerateContent?alt=sse``.

Bodies go out as the client sent them (only the model moves into the path); answers come back
as raw bytes so unknown fields survive and nothing is re-encoded on the way to the client.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from studio.gateway.errors import GatewayError, RateLimited, from_upstream_status

from .base import Provider, json_body
from .sse import iter_sse

_RETRY_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


class GeminiProvider(Provider):
    protocol = "gemini"

    def auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.upstream.credential}

    def model_path(self, upstream_model: str, method: str) -> str:
        # Operators may configure the base URL with or without the API version.
        base = self.upstream.base_url
        version = "" if re.search(r"/v1(beta\d*|alpha)?$", base) else "/v1beta"
        return f"{version}/models/{upstream_model}:{method}"

    async def generate_content(self, upstream_model: str, body: bytes) -> bytes:
        response = await self.request(
            "POST", self.model_path(upstream_model, "generateContent"), content=body,
            headers={"content-type": "application/json"},
        )
        return response.content

    async def stream_generate_content(self, upstream_model: str, body: bytes) -> AsyncIterator[bytes]:
        """Yield the JSON data of each SSE event as it arrives (no ``[DONE]`` in this protocol)."""
        path = self.model_path(upstream_model, "streamGenerateContent") + "?alt=sse"
        async with self.stream("POST", path, content=body, headers={"content-type": "application/json"}) as resp:
            async for event in iter_sse(resp.aiter_raw()):
                if event.data and event.data != b"[DONE]":
                    yield event.data

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        error = json_body(body).get("error")
        if not isinstance(error, dict):
            return super().error_from_response(status, body)
        message = str(error.get("message") or f"HTTP {status}")
        vendor_status = str(error.get("status") or "")
        details = {"upstream_status": status, "vendor_status": vendor_status}
        exc = from_upstream_status(status, message, code=vendor_status or None, details=details)
        if isinstance(exc, RateLimited):
            for detail in error.get("details") or ():
                match = _RETRY_DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
                if match:
                    exc.retry_after = float(match.group(1))
        return exc
