"""OpenAI error bodies: ``{"error": {"message", "type", "param", "code"}}`` (reference §2.5, §6)."""

from __future__ import annotations

from studio.core.errors import GatewayError, from_upstream_status
from studio.providers.base import json_body, plain_error


def map_error(status: int, body: bytes, upstream_name: str) -> GatewayError:
    error = json_body(body).get("error")
    if not isinstance(error, dict):
        return plain_error(status, body, upstream_name)
    return from_upstream_status(
        status, str(error.get("message") or f"HTTP {status}"),
        param=error.get("param") if isinstance(error.get("param"), str) else None,
        code=str(error["code"]) if error.get("code") else None,
        details={"upstream_status": status, "vendor_type": error.get("type")},
    )
