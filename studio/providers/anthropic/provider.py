"""Anthropic Messages protocol (reference §7): ``x-api-key`` and ``anthropic-version`` headers,
``POST /v1/messages`` buffered or as ``event:``/``data:`` pairs ending with ``message_stop``, and
``POST /v1/messages/count_tokens``. A client's ``anthropic-beta`` header travels with the call.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from typing import ClassVar

from studio.providers.anthropic.errors import map_error
from studio.providers.base import BaseUrlRule, Provider, json_body
from studio.providers.bodies import arriving
from studio.providers.contracts import Capability
from studio.providers.sse import Read, iter_sse_reads

ANTHROPIC_VERSION = "2023-06-01"
JSON = {"content-type": "application/json"}
# The HTTP status of each error type (reference §7.4), for errors that arrive inside a 200 stream.
ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529}


class AnthropicProvider(Provider):
    protocol = "anthropic"
    capabilities = frozenset({Capability.TEXT, Capability.TOKEN_COUNT})
    base_url = BaseUrlRule("/v1", re.compile(r"/v1$"))
    error_mapping = staticmethod(map_error)

    def check_path(self) -> str:
        return "/models?limit=1"
    text_formats: ClassVar[tuple[str, ...]] = ("messages",)
    TEXT_PATHS: ClassVar[dict[str, str]] = {"messages": "/messages"}

    def auth_headers(self) -> dict[str, str]:
        return {"x-api-key": self.upstream.credential, "anthropic-version": ANTHROPIC_VERSION}

    async def text_request(self, fmt: str, body: bytes, headers: Mapping[str, str] | None = None) -> bytes:
        response = await self.request("POST", self.TEXT_PATHS[fmt], content=body, headers={**JSON, **(headers or {})})
        return response.content

    async def count_tokens(self, body: bytes, headers: Mapping[str, str] | None = None) -> bytes:
        response = await self.request("POST", "/messages/count_tokens", content=body,
                                      headers={**JSON, **(headers or {})})
        return response.content

    async def text_stream(self, fmt: str, body: bytes,
                          headers: Mapping[str, str] | None = None) -> AsyncIterator[Read]:
        async with self.stream("POST", self.TEXT_PATHS[fmt], content=body,
                               headers={**JSON, **(headers or {})}) as response, \
                contextlib.aclosing(iter_sse_reads(arriving(response))) as reads:
            async for events in reads:
                for i, event in enumerate(events):
                    if event.event == "error":
                        if i:
                            yield events.head(i)  # what came before it in the same read goes first
                        error = json_body(event.data).get("error") or {}
                        status = ERROR_STATUS.get(str(error.get("type")), 500)
                        raise self.error_from_response(status, event.data)
                yield events
