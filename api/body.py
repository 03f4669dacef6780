"""Reading a JSON body and writing a JSON answer, for every family."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from django.http.cookie import SimpleCookie
from django.http.response import ResponseHeaders

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


class JsonAnswer(HttpResponse):
    """``HttpResponse(content, status=status, content_type="application/json")`` for JSON bytes,
    made directly: the general constructor looks the content type up in the new header store,
    checks its name and value for their charset, and tests the content for an iterator (1.9 µs
    against 0.35 µs an answer here; ``tests/api/test_body.py`` compares the two)."""

    def __init__(self, content: bytes, status: int = 200) -> None:
        if not 100 <= status <= 599:
            raise ValueError("HTTP status code must be an integer from 100 to 599.")
        self.headers = ResponseHeaders(None)
        self.headers._store["content-type"] = ("Content-Type", "application/json")
        self._charset = None
        self._resource_closers = []
        self._handler_class = None
        self.cookies = SimpleCookie()
        self.closed = False
        self.status_code = status
        self._reason_phrase = None
        self._container = [content]


def json_response(value: object, status: int = 200) -> HttpResponse:
    return JsonAnswer(orjson.dumps(value), status)
