"""Anthropic Messages protocol (reference §7): ``x-api-key`` and ``anthropic-version`` headers,
``POST /v1/messages`` buffered or as ``event:``/``data:`` pairs ending with ``message_stop``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from studio.gateway.errors import GatewayError, from_upstream_status

from .base import Provider, json_body
from .sse import SSEEvent, iter_sse

ANTHROPIC_VERSION = "2023-06-01"
JSON = {"content-type": "application/json"}
# The HTTP status of each error type (reference §7.4), for errors that arrive inside a 200 stream.
ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529}


class AnthropicProvider(Provider):
    protocol = "anthropic"
    text_formats: ClassVar[tuple[str, ...]] = ("messages",)

    def auth_headers(self) -> dict[str, str]:
        return {"x-api-key": self.upstream.credential, "anthropic-version": ANTHROPIC_VERSION}

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """``{"type": "error", "error": {"type", "message"}}``."""
        error = json_body(body).get("error")
        if not isinstance(error, dict):
            return super().error_from_response(status, body)
        return from_upstream_status(
            status, str(error.get("message") or f"HTTP {status}"), code=str(error.get("type") or "") or None,
            details={"upstream_status": status, "vendor_type": error.get("type")},
        )

    def text_path(self, fmt: str) -> str:
        assert fmt == "messages", fmt
        return "/messages" if self.upstream.base_url.endswith("/v1") else "/v1/messages"

    async def text_request(self, fmt: str, body: bytes) -> bytes:
        response = await self.request("POST", self.text_path(fmt), content=body, headers=JSON)
        return response.content

    async def text_stream(self, fmt: str, body: bytes) -> AsyncIterator[SSEEvent]:
        async with self.stream("POST", self.text_path(fmt), content=body, headers=JSON) as response:
            async for event in iter_sse(response.aiter_raw()):
                if event.event == "error":
                    error = json_body(event.data).get("error") or {}
                    status = ERROR_STATUS.get(str(error.get("type")), 500)
                    raise self.error_from_response(status, event.data)
                yield event
