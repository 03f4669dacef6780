"""Ark error bodies as typed errors (reference §3.5, §4.5)."""

from __future__ import annotations

import orjson

from studio.core.errors import RateLimited, UpstreamRejected, UpstreamUnavailable
from studio.providers.ark.errors import map_error


def test_code_and_param_survive():
    error = map_error(400, orjson.dumps({"error": {"code": "InvalidParameter", "message": "duration too long",
                                                    "param": "duration", "type": "BadRequest"}}), "a1")
    assert isinstance(error, UpstreamRejected)
    assert (error.code, error.param, error.message) == ("InvalidParameter", "duration", "duration too long")


def test_rate_limit_and_plain_bodies():
    assert isinstance(map_error(429, orjson.dumps({"error": {"code": "RateLimitExceeded", "message": "m"}}), "a1"),
                      RateLimited)
    plain = map_error(502, b"bad gateway", "a1")
    assert isinstance(plain, UpstreamUnavailable) and plain.message == "bad gateway"
