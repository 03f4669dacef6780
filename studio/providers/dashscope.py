"""Alibaba DashScope protocol: asynchronous video synthesis tasks (reference §5)."""

from __future__ import annotations

from studio.gateway.errors import GatewayError, from_upstream_status

from .base import Provider, json_body


class DashScopeProvider(Provider):
    protocol = "dashscope"

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """``{"request_id", "code", "message"}``, no wrapper object (reference §5.3)."""
        data = json_body(body)
        if not data.get("code") and not data.get("message"):
            return super().error_from_response(status, body)
        return from_upstream_status(
            status, str(data.get("message") or f"HTTP {status}"), code=str(data.get("code") or "") or None,
            details={"upstream_status": status, "request_id": data.get("request_id")},
        )
