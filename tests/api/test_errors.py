"""One meaning per error kind on every route: an unknown model, a model the key may not use and a
model that cannot serve the route are the same typed error everywhere, each in its family's body."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

TEXT_MODEL, NATIVE_MODEL, VIDEO_A, VIDEO_B = "omicron-4-mini", "delta-3.1-flash-image", "alpha-2.5", "beta3.0-video"


def call(secret: str, route: str, model: str) -> tuple[str, dict, dict]:
    """(path, body, headers) of a valid request to ``route`` for ``model``."""
    bearer = {"Authorization": f"Bearer {secret}"}
    return {
        "native": (f"/v1/models/{model}:generateContent", {"contents": [{"parts": [{"text": "a fox"}]}]},
                   {"x-delta-api-key": secret}),
        "chat": ("/v1/chat/completions", {"model": model, "messages": [{"role": "user", "content": "hi"}]}, bearer),
        "responses": ("/v1/responses", {"model": model, "input": "hi"}, bearer),
        "messages": ("/v1/messages", {"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]},
                     {"x-api-key": secret, "epsilon-version": "2023-06-01"}),
        "images": ("/v1/images/generations", {"model": model, "prompt": "a fox"}, bearer),
        "video_a": ("/v1/alpha/video/generations", {"model": model, "content": [{"type": "text", "text": "a fox"}]},
                    bearer),
        "video_b": ("/v1/beta/video/generations", {"model": model, "input": {"prompt": "a fox"}}, bearer),
        "video_c": ("/v1/video/generations", {"model": model, "prompt": "a fox"}, bearer),
    }[route]


def kind_of(route: str, status: int, body: dict) -> tuple[int, str]:
    """The family's own spelling of the error, reduced to (status, what the family calls it)."""
    if route == "native":
        return status, body["error"]["status"]
    if route == "messages":
        assert body["type"] == "error"
        return status, body["error"]["type"]
    if route == "video_a":
        return status, f'{body["error"]["type"]}/{body["error"]["code"]}'
    if route == "video_b":
        assert body["request_id"] and body["message"]
        return status, body["code"]
    error = body["error"]
    assert error["param"] == "model"
    return status, f'{error["type"]}/{error["code"]}'


UNKNOWN = {
    "native": (404, "NOT_FOUND"), "messages": (404, "not_found_error"),
    "video_a": (404, "NotFound/InvalidEndpointOrModel.NotFound"), "video_b": (404, "ModelNotFound"),
    **{r: (404, "invalid_request_error/model_not_found") for r in ("chat", "responses", "images", "video_c")},
}
NOT_ALLOWED = {
    "native": (403, "PERMISSION_DENIED"), "messages": (403, "permission_error"),
    "video_a": (403, "Forbidden/AccessDenied"), "video_b": (403, "AccessDenied"),
    **{r: (403, "invalid_request_error/model_not_allowed") for r in ("chat", "responses", "images", "video_c")},
}
UNSUPPORTED = {
    "native": (400, "INVALID_ARGUMENT"), "messages": (400, "invalid_request_error"),
    "video_a": (400, "BadRequest/InvalidParameter"), "video_b": (400, "InvalidParameter"),
    **{r: (400, "invalid_request_error/model_not_supported") for r in ("chat", "responses", "images", "video_c")},
}
# A model that exists but serves another kind of route.
WRONG_KIND = {"native": TEXT_MODEL, "chat": NATIVE_MODEL, "responses": NATIVE_MODEL, "messages": NATIVE_MODEL,
              "images": TEXT_MODEL, "video_a": TEXT_MODEL, "video_b": TEXT_MODEL, "video_c": TEXT_MODEL}
ALLOWED_KIND = {"native": NATIVE_MODEL, "chat": TEXT_MODEL, "responses": TEXT_MODEL, "messages": "epsilon-4.5",
                "images": "kappa-image-1", "video_a": VIDEO_A, "video_b": VIDEO_B, "video_c": VIDEO_A}


@pytest.mark.parametrize("route", list(UNKNOWN))
async def test_unknown_model_is_404_in_every_family(client, alice, route):
    path, body, headers = call(alice.secret, route, "no-such-model")
    response = await client.post(path, json=body, headers=headers)
    assert kind_of(route, response.status_code, response.json()) == UNKNOWN[route]
    assert "no-such-model" in response.text


@pytest.mark.parametrize("route", list(NOT_ALLOWED))
async def test_model_not_allowed_for_the_key_is_403_in_every_family(client, make_account, route):
    dave = make_account("dave", allowed_models=["kappa-image-1"] if route != "images" else [TEXT_MODEL])
    path, body, headers = call(dave.secret, route, ALLOWED_KIND[route])
    response = await client.post(path, json=body, headers=headers)
    assert kind_of(route, response.status_code, response.json()) == NOT_ALLOWED[route]


@pytest.mark.parametrize("route", list(UNSUPPORTED))
async def test_model_without_the_capability_is_400_model_not_supported(client, alice, route):
    path, body, headers = call(alice.secret, route, WRONG_KIND[route])
    response = await client.post(path, json=body, headers=headers)
    assert kind_of(route, response.status_code, response.json()) == UNSUPPORTED[route]
    assert WRONG_KIND[route] in response.text


async def test_openai_family_spells_auth_and_rate_limits_as_the_real_api(client, alice):
    response = await client.post("/v1/chat/completions", json={"model": TEXT_MODEL, "messages": []},
                                 headers={"Authorization": "Bearer sgw-wrong"})
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert response.json()["error"]["code"] == "invalid_api_key"
    response = await client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {alice.secret}"}, json={
        "model": "epsilon-4.5", "messages": [{"role": "user", "content": "please [status:429]"}]})
    assert response.status_code == 429
    assert (response.json()["error"]["type"], response.json()["error"]["code"]) == ("requests", "rate_limit_exceeded")


async def test_a_404_that_is_not_a_model_has_no_model_code(client, alice):
    response = await client.get("/v1/video/generations/cgt-missing", headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert response.json()["error"]["code"] != "model_not_found"


def test_openai_codes_are_the_ones_the_real_api_uses():
    from api.errors import openai_body
    from studio.core.errors import NotFound, UpstreamError, UpstreamRejected

    missing = openai_body(NotFound("no such model", param="model", code="model_not_found"))["error"]
    assert missing["type"] == "invalid_request_error" and missing["code"] == "model_not_found"
    upstream = openai_body(UpstreamError("upstream does not know the model", code="model_not_found"))["error"]
    assert upstream["type"] == "server_error" and upstream["code"] is None
    relayed = openai_body(UpstreamRejected("bad", code="invalid_request_error"))["error"]
    assert relayed["type"] == "invalid_request_error" and relayed["code"] is None
    kept = openai_body(UpstreamRejected("too big", param="max_tokens", code="integer_above_max_value"))["error"]
    assert kept["code"] == "integer_above_max_value"
