"""What every provider shares: the base-URL rule of each vendor, and the fallback error mapping."""

from __future__ import annotations

import pytest

from studio.core.errors import GatewayError, RateLimited, UpstreamError, UpstreamRejected
from studio.providers.base import plain_error
from studio.providers.registry import vendor


@pytest.mark.parametrize(("protocol", "base", "path", "url"), [
    ("openai", "https://api.openai.com/v1", "/images/edits", "https://api.openai.com/v1/images/edits"),
    ("openai", "https://relay.example", "/chat/completions", "https://relay.example/v1/chat/completions"),
    ("openai", "https://relay.example/", "/responses", "https://relay.example/v1/responses"),
    ("anthropic", "https://api.anthropic.com", "/messages", "https://api.anthropic.com/v1/messages"),
    ("anthropic", "https://api.anthropic.com/v1", "/messages", "https://api.anthropic.com/v1/messages"),
    ("gemini", "https://generativelanguage.googleapis.com", "/models/m:generateContent",
     "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent"),
    ("gemini", "https://proxy.example/v1alpha", "/models/m:x", "https://proxy.example/v1alpha/models/m:x"),
    ("gemini", "https://proxy.example/v1beta/", "/models/m:x", "https://proxy.example/v1beta/models/m:x"),
    ("ark", "https://ark.cn-beijing.volces.com", "/contents/generations/tasks",
     "https://ark.cn-beijing.volces.com/api/v3/contents/generations/tasks"),
    ("ark", "https://ark.cn-beijing.volces.com/api/v3", "/images/generations",
     "https://ark.cn-beijing.volces.com/api/v3/images/generations"),
    ("dashscope", "https://dashscope.aliyuncs.com", "/tasks/t-1", "https://dashscope.aliyuncs.com/api/v1/tasks/t-1"),
    ("dashscope", "https://dashscope.aliyuncs.com/api/v1", "/tasks/t-1",
     "https://dashscope.aliyuncs.com/api/v1/tasks/t-1"),
])
def test_base_url_rule_accepts_the_url_with_or_without_its_version(protocol, base, path, url):
    assert vendor(protocol).base_url.url(base, path) == url


def test_plain_error_maps_the_status_and_keeps_the_body_as_message():
    assert isinstance(plain_error(429, b"slow down", "u"), RateLimited)
    rejected = plain_error(422, b"bad field", "u")
    assert isinstance(rejected, UpstreamRejected) and rejected.status == 400 and rejected.message == "bad field"
    empty = plain_error(500, b"", "u")
    assert isinstance(empty, UpstreamError) and empty.message == "HTTP 500"


@pytest.mark.parametrize(("protocol", "status", "header", "expected"), [
    ("ark", 429, "7", 7.0), ("dashscope", 503, "2", 2.0), ("ark", 429, "Wed, 21 Oct 2015 07:28:00 GMT", None),
    ("ark", 500, "7", None),
])
async def test_a_vendors_retry_after_header_is_kept_on_its_error(protocol, status, header, expected):
    import httpx

    from studio.providers import http
    from studio.providers.registry import video_upstream
    from tests.providers.video_fakes import upstream

    base = f"https://{protocol}-retry.test"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"code": "Busy", "message": "busy"}, headers={"retry-after": header})

    http.mount(base, httpx.MockTransport(answer))
    try:
        with pytest.raises(GatewayError) as caught:
            await video_upstream(protocol, upstream(protocol, base, "k")).video_get("t-1")
    finally:
        http.unmount(base)
    assert caught.value.retry_after == expected
