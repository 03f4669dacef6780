"""A header read from ``META`` is the one ``request.headers`` gives, for every kind of name."""

from __future__ import annotations

import io

import pytest

from api.headers import header
from studio.api_request import ApiRequest

SENT = [(b"x-api-key", b"sgw-one"), (b"Anthropic-Version", b"2023-06-01"), (b"x-tag", b"a"), (b"x_tag", b"spoofed"),
        (b"X-Tag", b"b"), (b"content-type", b"application/json"), (b"content-length", b"2"),
        (b"authorization", b"Bearer sgw-two")]
ASKED = ["x-api-key", "X-Api-Key", "anthropic-version", "x-tag", "x_tag", "content-type", "Content-Length",
         "authorization", "anthropic-beta", "epsilon-version"]


@pytest.mark.parametrize("name", ASKED)
def test_a_header_reads_as_request_headers_reads_it(name):
    request = ApiRequest({"type": "http", "method": "POST", "path": "/v1/messages", "headers": SENT}, io.BytesIO(b"{}"))
    assert header(request, name) == request.headers.get(name)


def test_what_the_reads_give():
    request = ApiRequest({"type": "http", "method": "POST", "path": "/v1/messages", "headers": SENT}, io.BytesIO(b"{}"))
    assert header(request, "X-API-KEY") == "sgw-one"
    assert header(request, "x-tag") == header(request, "X_TAG") == "a,b"  # joined; the one sent as x_tag dropped
    assert header(request, "anthropic-beta") is None
