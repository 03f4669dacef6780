"""Volcengine Ark protocol: Seedream images (``ark_images``) and Seedance tasks (``ark_tasks``)."""

from __future__ import annotations

from studio.gateway.errors import GatewayError, from_upstream_status

from .ark_images import ArkImagesMixin
from .ark_tasks import ArkTasksMixin
from .base import Provider, json_body


class ArkProvider(ArkImagesMixin, ArkTasksMixin, Provider):
    protocol = "ark"

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """``{"error": {"code", "message", "param", "type"}}`` (reference §3.5)."""
        error = json_body(body).get("error")
        if not isinstance(error, dict):
            return super().error_from_response(status, body)
        return from_upstream_status(
            status, str(error.get("message") or f"HTTP {status}"),
            param=error.get("param") or None, code=str(error.get("code") or "") or None,
            details={"upstream_status": status, "vendor_type": error.get("type")},
        )
