"""A /v1 request object is the one Django's ``ASGIRequest`` makes of the same scope."""

from __future__ import annotations

import io

import pytest
from django.core.handlers.asgi import ASGIRequest

from studio import api_request
from studio.api_request import ApiRequest
from studio.core.memo import Memo


def scope(headers: list[tuple[bytes, bytes]], **extra) -> dict:
    return {"type": "http", "method": "post", "path": "/v1/chat/completions", "query_string": b"a=1&b=%20",
            "headers": headers, "client": ("10.0.0.7", 51000), "server": ("gateway.test", 8000), **extra}


SCOPES = {
    "json": scope([(b"host", b"gateway.test"), (b"content-type", b"application/json"),
                   (b"content-length", b"12"), (b"authorization", b"Bearer sgw-x")]),
    "json with a charset": scope([(b"content-type", b"application/json; charset=utf-8")]),
    "an unknown charset": scope([(b"content-type", b"text/plain; charset=no-such-codec")]),
    "multipart": scope([(b"content-type", b"multipart/form-data; boundary=xyz")]),
    "repeated and dropped headers": scope([(b"x-tag", b"a"), (b"x_tag", b"spoofed"), (b"X-Tag", b"b"),
                                           (b"accept", b"*/*"), (b"x-tag", b"c")]),
    "no content type, client or server": {"type": "http", "method": "GET", "path": "/v1/models", "headers": []},
    "a root path": scope([(b"content-type", b"application/json")], root_path="/gw", path="/gw/v1/responses"),
    "a text query string": scope([], query_string="q=1"),
}


@pytest.mark.parametrize("name", SCOPES)
def test_the_request_is_the_one_django_makes(name):
    theirs, ours = ASGIRequest(SCOPES[name], io.BytesIO(b"{}")), ApiRequest(SCOPES[name], io.BytesIO(b"{}"))
    assert list(ours.META.items()) == list(theirs.META.items())
    for attribute in ("path", "path_info", "script_name", "method", "content_type", "content_params", "encoding",
                      "resolver_match", "_read_started", "_post_parse_error"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.body == theirs.body == b"{}"


def test_header_names_are_worked_out_once_and_a_bounded_number_kept(monkeypatch):
    monkeypatch.setattr(api_request, "_meta_names", Memo(api_request._meta_key, kept=2))
    names = [b"x-one", b"x_two", b"x-three", b"x-one"]
    assert [api_request.meta_name(n) for n in names] == ["HTTP_X_ONE", None, "HTTP_X_THREE", "HTTP_X_ONE"]
    assert api_request._meta_names == {b"x-one": "HTTP_X_ONE", b"x_two": None}
