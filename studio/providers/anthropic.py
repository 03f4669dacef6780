"""Anthropic Messages protocol (reference §7)."""

from __future__ import annotations

from studio.gateway.errors import GatewayError, from_upstream_status

from .base import Provider, json_body

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(Provider):
    protocol = "anthropic"

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
