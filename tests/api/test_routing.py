"""Every route declares its family: a wrong method gets the family's JSON 405 and an unknown /v1
address a JSON 404 in the nearest family's body, never an HTML page."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("method", "path", "check"), [
    ("GET", "/v1/chat/completions", lambda b: b["error"]["type"] == "invalid_request_error"
        and b["error"]["code"] == "method_not_allowed"),
    ("PUT", "/v1/images/generations", lambda b: b["error"]["code"] == "method_not_allowed"),
    ("DELETE", "/v1/models", lambda b: b["error"]["code"] == "method_not_allowed"),
    ("GET", "/v1/messages", lambda b: b["type"] == "error" and b["error"]["type"] == "invalid_request_error"),
    ("GET", "/v1/models/delta-3.1-flash-image:generateContent",
        lambda b: b["error"]["code"] == 405 and b["error"]["status"] == "UNIMPLEMENTED"),
    ("PUT", "/v1/alpha/video/generations/cgt-1", lambda b: b["error"]["code"] == "MethodNotAllowed"
        and b["error"]["type"] == "MethodNotAllowed"),
    ("PATCH", "/v1/beta/video/generations", lambda b: b["code"] == "MethodNotAllowed" and b["request_id"]),
    ("GET", "/v1/video/generations", lambda b: b["error"]["code"] == "method_not_allowed"),
    ("GET", "/v1/messages/count_tokens", lambda b: b["type"] == "error" and b["request_id"].startswith("req_")),
    ("POST", "/v1/responses/resp_1", lambda b: b["error"]["code"] == "method_not_allowed"),
    ("PUT", "/v1/responses/resp_1/input_items", lambda b: b["error"]["type"] == "invalid_request_error"),
])
async def test_wrong_method_is_the_familys_json_405(client, method, path, check):
    response = await client.request(method, path)
    assert response.status_code == 405
    assert response.headers["content-type"] == "application/json"
    assert method in response.text
    assert check(response.json())
    assert "POST" in response.headers["Allow"] or "GET" in response.headers["Allow"]


@pytest.mark.parametrize(("path", "check"), [
    ("/v1/nothing/here", lambda b: b["error"]["type"] == "invalid_request_error"),
    ("/v1", lambda b: b["error"]["type"] == "invalid_request_error"),
    ("/v1/", lambda b: b["error"]["type"] == "invalid_request_error" and b["error"]["code"] is None),
    ("/v1/responses/resp_1/input_items/x", lambda b: b["error"]["code"] is None),
    ("/v1/messages/batches", lambda b: b["type"] == "error" and b["error"]["type"] == "not_found_error"),
    ("/v1/alpha", lambda b: b["error"]["type"] == "NotFound"),
    ("/v1/alpha/video/tasks", lambda b: b["error"]["type"] == "NotFound"),
    ("/v1/beta/files", lambda b: b["code"] == "NotFound" and b["request_id"]),
])
async def test_unknown_v1_address_is_json_404_in_the_nearest_family(client, path, check):
    for method in ("GET", "POST"):
        response = await client.request(method, path)
        assert response.status_code == 404, (method, path)
        assert response.headers["content-type"] == "application/json"
        assert check(response.json())


async def test_a_colon_in_a_model_id_is_still_the_retrieve_route(client, alice):
    """Only ``:generateContent`` and ``:streamGenerateContent`` are native; ``/v1/models/{model}`` is
    the OpenAI-style retrieve route, and its errors are OpenAI-style."""
    response = await client.get("/v1/models/nope:thing", headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "model_not_found"
    assert "status" not in response.json()["error"]
