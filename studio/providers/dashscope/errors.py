"""DashScope error bodies: ``{"request_id", "code", "message"}``, no wrapper object (reference §5.3)."""

from __future__ import annotations

from studio.core.errors import GatewayError, from_upstream_status
from studio.providers.base import json_body, plain_error


def map_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    data = json_body(body)
    if not data.get("code") and not data.get("message"):
        return plain_error(status, body, upstream_name)
    return from_upstream_status(
        status, str(data.get("message") or f"HTTP {status}"), code=str(data.get("code") or "") or None,
        details={"upstream_status": status, "request_id": data.get("request_id")},
    )
