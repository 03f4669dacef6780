"""DashScope error bodies (no wrapper object) as typed errors (reference §5.3)."""

from __future__ import annotations

import orjson

from studio.core.errors import RateLimited, UpstreamError, UpstreamRejected
from studio.providers.dashscope.errors import map_error


def test_code_message_and_request_id():
    error = map_error(400, orjson.dumps({"request_id": "r-1", "code": "InvalidParameter",
                                         "message": "resolution is invalid"}), "d1")
    assert isinstance(error, UpstreamRejected)
    assert (error.code, error.message, error.details["request_id"]) == ("InvalidParameter", "resolution is invalid",
                                                                        "r-1")


def test_throttling_and_plain_bodies():
    assert isinstance(map_error(429, orjson.dumps({"code": "Throttling", "message": "m"}), "d1"), RateLimited)
    assert isinstance(map_error(500, b"", "d1"), UpstreamError)
