"""Anthropic error bodies as typed errors (reference §7.4)."""

from __future__ import annotations

import orjson

from studio.core.errors import UpstreamRejected, UpstreamUnavailable
from studio.providers.anthropic.errors import map_error


def body(type_: str, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": type_, "message": message}})


def test_the_error_type_is_the_code():
    error = map_error(400, body("invalid_request_error", "max_tokens: required"), "an1")
    assert isinstance(error, UpstreamRejected) and error.code == "invalid_request_error"
    assert error.message == "max_tokens: required"


def test_overloaded_is_unavailable():
    assert isinstance(map_error(529, body("overloaded_error", "busy"), "an1"), UpstreamUnavailable)
