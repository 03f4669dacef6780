"""The multipart form of an edit, as the official SDK sends it, read into fields and uploads."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from studio.core.errors import BadRequest

INT_FORM_FIELDS = ("n", "output_compression", "partial_images")
BOOL_FORM_FIELDS = ("stream", "watermark", "layer_decomposition")
MAX_UPLOADS = 16


def _coerce(name: str, value: str) -> Any:
    """Form fields are strings; give numbers and booleans their JSON types."""
    if name in INT_FORM_FIELDS:
        try:
            return int(value)
        except ValueError:
            raise BadRequest(f"invalid '{name}': expected an integer", param=name, code="invalid_type") from None
    if name in BOOL_FORM_FIELDS:
        if value.lower() not in ("true", "false", "1", "0"):
            raise BadRequest(f"invalid '{name}': expected true or false", param=name, code="invalid_type")
        return value.lower() in ("true", "1")
    return value


def form_body(request: HttpRequest) -> tuple[dict[str, Any], dict[str, list[tuple[bytes, str]]]]:
    fields = {name: _coerce(name, request.POST[name]) for name in request.POST}
    uploads: dict[str, list[tuple[bytes, str]]] = {}
    count = 0
    for name in request.FILES:
        for upload in request.FILES.getlist(name):
            count += 1
            if count > MAX_UPLOADS + 2:
                raise BadRequest("too many files in the request", param=name, code="too_many_images")
            uploads.setdefault(name, []).append((upload.read(), upload.name or ""))
    return fields, uploads
