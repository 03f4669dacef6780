"""A body over the size limit gets a 413 in its route family's error body, never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 4096
ROUTES = [
    ("/v1/models/delta-3.1-flash-image:generateContent", "native"),
    ("/v1/models/delta-3.1-flash-image:streamGenerateContent", "native"),
    ("/v1/images/generations", "openai"),
    ("/v1/images/edits", "openai"),
    ("/v1/files", "openai"),
    ("/v1/chat/completions", "openai"),
    ("/v1/responses", "openai"),
    ("/v1/messages", "messages"),
    ("/v1/alpha/video/generations", "ark"),
    ("/v1/beta/video/generations", "dashscope"),
    ("/v1/video/generations", "openai"),
    ("/v1/video/callbacks/vt-x/sig", "openai"),
]


def _big_json() -> bytes:
    return b'{"model": "kappa-image-1", "prompt": "' + b"x" * (LIMIT * 2) + b'"}'


def _assert_family_413(response, family: str) -> None:
    assert response.status_code == 413, response.text
    body = response.json()
    if family == "native":
        assert body["error"]["code"] == 413 and body["error"]["status"]
    elif family == "messages":
        assert body == {"type": "error", "error": {"type": "request_too_large", "message": body["error"]["message"]},
                        "request_id": body["request_id"]}
        assert body["request_id"].startswith("req_")
    elif family == "dashscope":
        assert body["code"] and str(LIMIT) in body["message"]
    elif family == "ark":
        assert body["error"]["type"] and body["error"]["param"] == "body"
    else:
        assert body["error"]["type"] == "invalid_request_error" and body["error"]["param"] == "body"


@pytest.mark.parametrize(("url", "family"), ROUTES)
async def test_an_oversized_body_is_413_in_the_family_body(client, alice, settings, url, family):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    response = await client.post(url, content=_big_json(), headers={
        "Authorization": f"Bearer {alice.secret}", "x-api-key": alice.secret, "content-type": "application/json"})
    _assert_family_413(response, family)


@pytest.mark.parametrize(("url", "family"), ROUTES[::3])
async def test_an_oversized_streamed_body_without_length_is_413(client, alice, settings, url, family):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT

    async def chunks():
        body = _big_json()
        for start in range(0, len(body), 1000):
            yield body[start:start + 1000]

    response = await client.post(url, content=chunks(), headers={
        "Authorization": f"Bearer {alice.secret}", "x-api-key": alice.secret, "content-type": "application/json"})
    _assert_family_413(response, family)


async def test_an_oversized_multipart_edit_is_413(client, alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    response = await client.post("/v1/images/edits", headers={"Authorization": f"Bearer {alice.secret}"},
                                 data={"model": "kappa-image-1", "prompt": "a hat"},
                                 files={"image": ("a.png", b"\x89PNG\r\n\x1a\n" + b"\0" * LIMIT * 2, "image/png")})
    _assert_family_413(response, "openai")


async def test_a_body_under_the_limit_is_read(client, alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    response = await client.post("/v1/images/generations", json={"model": "kappa-image-1", "prompt": "x" * 100},
                                 headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200, response.text
