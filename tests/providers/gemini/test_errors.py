"""Gemini error bodies as typed errors (reference §1.5)."""

from __future__ import annotations

import orjson

from studio.core.errors import RateLimited, UpstreamError, UpstreamRejected, UpstreamUnavailable
from studio.providers.gemini.errors import map_error


def body(code: int, status: str, message: str = "m", details: list | None = None) -> bytes:
    return orjson.dumps({"error": {"code": code, "status": status, "message": message, "details": details or []}})


def test_a_bad_request_is_the_clients():
    error = map_error(400, body(400, "INVALID_ARGUMENT", "bad size"), "g1")
    assert isinstance(error, UpstreamRejected) and error.status == 400
    assert error.message == "bad size" and error.code == "INVALID_ARGUMENT"


def test_a_400_about_the_gateways_key_is_an_upstream_error():
    invalid_key = map_error(400, body(400, "INVALID_ARGUMENT", "API key not valid",
                                      [{"reason": "API_KEY_INVALID"}]), "g1")
    assert isinstance(invalid_key, UpstreamError) and invalid_key.retryable
    assert "g1" in invalid_key.message
    precondition = map_error(400, body(400, "FAILED_PRECONDITION", "billing"), "g1")
    assert isinstance(precondition, UpstreamError)


def test_retry_info_becomes_retry_after():
    error = map_error(429, body(429, "RESOURCE_EXHAUSTED", "quota",
                                [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]), "g1")
    assert isinstance(error, RateLimited) and error.retry_after == 17.0


def test_overload_and_unknown_bodies():
    assert isinstance(map_error(503, body(503, "UNAVAILABLE"), "g1"), UpstreamUnavailable)
    plain = map_error(500, b"<html>oops</html>", "g1")
    assert isinstance(plain, UpstreamError) and plain.message == "<html>oops</html>"
