"""OpenAI error bodies as typed errors (reference §2.5)."""

from __future__ import annotations

import orjson

from studio.core.errors import RateLimited, UpstreamError, UpstreamRejected
from studio.providers.openai.errors import map_error


def body(message: str, type_: str, param: str | None = None, code: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type_, "param": param, "code": code}})


def test_param_and_code_survive():
    error = map_error(400, body("Invalid size", "invalid_request_error", "size", "invalid_value"), "o1")
    assert isinstance(error, UpstreamRejected)
    assert (error.status, error.param, error.code, error.message) == (400, "size", "invalid_value", "Invalid size")
    assert error.details["vendor_type"] == "invalid_request_error"


def test_rate_limits_and_credentials():
    assert isinstance(map_error(429, body("slow", "rate_limit_error"), "o1"), RateLimited)
    refused = map_error(401, body("bad key", "invalid_request_error", code="invalid_api_key"), "o1")
    assert isinstance(refused, UpstreamError) and refused.status == 502


def test_a_body_without_the_error_object():
    error = map_error(500, b"upstream connect error", "o1")
    assert isinstance(error, UpstreamError) and error.message == "upstream connect error"
