"""The routes served directly are found as the URL resolver finds them, answer errors as the
ninja routes do, and leave every other method or address to the resolver."""

from __future__ import annotations

import pytest
from django.urls import resolve

from api import direct

pytestmark = pytest.mark.django_db(transaction=True)

DIRECT_PATHS = [
    "/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/images/generations",
    "/v1/models/delta-3.1-flash-image:generateContent", "/v1/models/delta-3.1-flash-image:streamGenerateContent",
    "/v1beta/models/delta-3.1-flash-image:generateContent", "/v1beta/models/a:b:streamGenerateContent",
]


@pytest.mark.parametrize("path", DIRECT_PATHS)
def test_a_direct_route_matches_as_the_resolver_does(path):
    view, match = direct.find("POST", path)
    resolved = resolve(path)
    assert (match.url_name, match.namespaces, match.kwargs, match.route) == (
        resolved.url_name, resolved.namespaces, resolved.kwargs, resolved.route)
    assert match.view_name == resolved.view_name


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/chat/completions"), ("POST", "/v1/chat/completions/"), ("POST", "/v1/models"),
    ("POST", "/v1/models/a/b:generateContent"), ("POST", "/v1/models/:generateContent"),
    ("POST", "/v1/models/x:countTokens"), ("POST", "/v1/messages/count_tokens"), ("POST", "/v2/chat/completions"),
])
def test_other_requests_are_left_to_the_resolver(method, path):
    assert direct.find(method, path) is None


@pytest.mark.parametrize(("path", "check"), [
    ("/v1/chat/completions", lambda b: b["error"]["code"] == "invalid_api_key"),
    ("/v1/messages", lambda b: b["type"] == "error" and b["error"]["type"] == "authentication_error"
        and b["request_id"].startswith("req_")),
    ("/v1/models/delta-3.1-flash-image:generateContent", lambda b: b["error"]["status"] == "UNAUTHENTICATED"),
    ("/v1beta/models/delta-3.1-flash-image:streamGenerateContent",
        lambda b: b["error"]["status"] == "UNAUTHENTICATED"),
])
async def test_a_direct_route_answers_errors_in_its_familys_body(client, path, check):
    response = await client.post(path, json={"model": "omicron-4-mini"}, headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert check(response.json())


async def test_an_unexpected_failure_is_a_500_in_the_familys_body(client, alice, monkeypatch):
    async def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("studio.gateway.text.engine.prepare", broken)
    response = await client.post("/v1/messages", json={}, headers={"x-api-key": alice.secret,
                                                                   "epsilon-version": "2023-06-01"})
    assert response.status_code == 500
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "api_error"
    assert response.headers["request-id"] == body["request_id"]
