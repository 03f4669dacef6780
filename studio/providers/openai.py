"""OpenAI protocol: images (``openai_images``) and text (``openai_text``) on one provider."""

from __future__ import annotations

from studio.gateway.errors import GatewayError, from_upstream_status

from .base import Provider, json_body
from .openai_images import OpenAIImagesMixin
from .openai_text import OpenAITextMixin


class OpenAIProvider(OpenAIImagesMixin, OpenAITextMixin, Provider):
    protocol = "openai"

    def error_from_response(self, status: int, body: bytes) -> GatewayError:
        """``{"error": {"message", "type", "param", "code"}}`` (reference §2.5)."""
        error = json_body(body).get("error")
        if not isinstance(error, dict):
            return super().error_from_response(status, body)
        return from_upstream_status(
            status, str(error.get("message") or f"HTTP {status}"),
            param=error.get("param") if isinstance(error.get("param"), str) else None,
            code=str(error["code"]) if error.get("code") else None,
            details={"upstream_status": status, "vendor_type": error.get("type")},
        )
