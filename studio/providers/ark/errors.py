"""Ark error bodies: ``{"error": {"code", "message", "param", "type"}}`` (reference §3.5, §4.5)."""

from __future__ import annotations

from studio.core.errors import GatewayError, from_upstream_status
from studio.providers.base import json_body, plain_error


def map_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    error = json_body(body).get("error")
    if not isinstance(error, dict):
        return plain_error(status, body, upstream_name)
    return from_upstream_status(
        status, str(error.get("message") or f"HTTP {status}"),
        param=error.get("param") or None, code=str(error.get("code") or "") or None,
        details={"upstream_status": status, "vendor_type": error.get("type")},
    )
