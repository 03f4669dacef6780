"""Anthropic error bodies: ``{"type": "error", "error": {"type", "message"}}`` (reference §7.4)."""

from __future__ import annotations

from studio.core.errors import GatewayError, from_upstream_status
from studio.providers.base import json_body, plain_error


def map_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    """``{"type": "error", "error": {"type", "message"}}``."""
    error = json_body(body).get("error")
    if not isinstance(error, dict):
        return plain_error(status, body, upstream_name)
    return from_upstream_status(
        status, str(error.get("message") or f"HTTP {status}"), code=str(error.get("type") or "") or None,
        details={"upstream_status": status, "vendor_type": error.get("type")},
    )
