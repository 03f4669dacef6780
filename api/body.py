"""Reading a JSON body and writing a JSON answer, for every family."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse

from studio.core.errors import BadRequest


def parse_json(request: HttpRequest, code: str | None = None) -> object:
    try:
        return orjson.loads(request.body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the request body is not valid JSON: {exc}", param="body", code=code) from exc


def json_object(request: HttpRequest) -> dict[str, Any]:
    """The body as a JSON object, with OpenAI-style codes (images, files)."""
    body = parse_json(request, code="invalid_json") if request.body else None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object", param="body", code="invalid_json")
    return body


def json_response(value: object, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(value), status=status, content_type="application/json")
