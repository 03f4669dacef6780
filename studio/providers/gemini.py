"""Gemini API protocol: ``models/{m}:generateContent`` and ``:streamGenerateContent?alt=sse``.

Bodies go out as the client sent them (only the model moves into the path); answers come back
as raw bytes so unknown fields survive and nothing is re-encoded on the way to the client. A
4K image answer is one 10-20 MB frame: it is read into one buffer and handed on as that buffer
(see ``gemini_sse``), never copied or parsed here.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from studio.gateway.errors import GatewayError, RateLimited, UpstreamError, from_upstream_status

from .base import Provider, json_body
from .gemini_sse import iter_frames

_RETRY_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")
_JSON_OBJECT = re.compile(rb"\s*\{")
_ERROR_EVENT = re.compile(rb'\s*\{\s*"error"\s*:')
# A 400 that is about the gateway's own account, not the client's request: another upstream may work.
_ACCOUNT_REASONS = {"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_EXPIRED", "BILLING_DISABLED"}
_ACCOUNT_STATUSES = {"FAILED_PRECONDITION", "UNAUTHENTICATED"}


class GeminiProvider(Provider):
    protocol = "gemini"

    def auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.upstream.credential}

    def model_path(self, upstream_model: str, method: str) -> str:
        # Operators may configure the base URL with or without the API version.
        base = self.upstream.base_url.rstrip("/")
        version = "" if re.search(r"/v1(beta\d*|alpha)?$", base) else "/v1beta"
        return f"{version}/models/{upstream_model}:{method}"

    def url(self, path: str) -> str:
        return self.upstream.base_url.rstrip("/") + path

    async def generate_content(self, upstream_model: str, body: bytes) -> bytearray:
        """The whole JSON answer, read into one buffer (``Response.content`` would join a copy)."""
        path = self.model_path(upstream_model, "generateContent")
        async with self.stream("POST", path, content=body, headers={"content-type": "application/json"}) as resp:
            answer = bytearray()
            async for chunk in resp.aiter_bytes():
                answer += chunk
        if not _JSON_OBJECT.match(answer):
            raise UpstreamError(f"upstream '{self.upstream.name}' answered 200 without a JSON object",
                                details={"upstream_status": 200})
        return answer

    async def stream_generate_content(self, upstream_model: str, body: bytes) -> AsyncIterator[bytearray]:
        """Yield the JSON data of each SSE event as it arrives (no ``[DONE]`` in this protocol)."""
        path = self.model_path(upstream_model, "streamGenerateContent") + "?alt=sse"
        sent = False
        async with self.stream("POST", path, content=body, headers={"content-type": "application/json"}) as resp:
            async for frame in iter_frames(resp.aiter_bytes()):
                if len(frame) <= 8 and (not frame.strip() or frame == b"[DONE]"):  # some relays add it
                    continue
                if _ERROR_EVENT.match(frame):
                    # An error reported inside the stream: typed like an HTTP error of that code.
                    error = json_body(bytes(frame)).get("error")
                    code = error.get("code") if isinstance(error, dict) else None
                    raise self.error_from_response(code if isinstance(code, int) and code >= 400 else 500,
                                                   bytes(frame))
                sent = True
                yield frame
        if not sent:
            raise UpstreamError(f"upstream '{self.upstream.name}' ended the stream without any response",
                                details={"upstream_status": 200})

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        error = json_body(body).get("error")
        if not isinstance(error, dict):
            return super().error_from_response(status, body)
        message = str(error.get("message") or f"HTTP {status}")
        vendor_status = str(error.get("status") or "")
        details_list = error.get("details") if isinstance(error.get("details"), list) else []
        reasons = {str(d.get("reason")) for d in details_list if isinstance(d, dict) and d.get("reason")}
        details = {"upstream_status": status, "vendor_status": vendor_status}
        if status == 400 and (reasons & _ACCOUNT_REASONS or vendor_status in _ACCOUNT_STATUSES):
            # The vendor's 400 for a bad API key is about *our* credential: never the client's 400.
            return UpstreamError(f"upstream '{self.upstream.name}' refused the gateway's account: {message}",
                                 code=vendor_status or None, details=details)
        exc = from_upstream_status(status, message, code=vendor_status or None, details=details)
        if isinstance(exc, RateLimited):
            for detail in details_list:
                match = _RETRY_DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
                if match:
                    exc.retry_after = float(match.group(1))
        return exc
