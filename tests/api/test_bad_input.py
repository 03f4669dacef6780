"""Bad input on every family: a 4xx in the family's body naming the field, never a 500 or a lost record."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

NUL = "a red fox\u0000 in the snow"


def _native(body_text: str) -> dict:
    return {"contents": [{"parts": [{"text": body_text}]}]}


CASES = [
    ("/v1/models/delta-3.1-flash-image:generateContent", "native", _native(NUL), "contents[0].parts[0].text"),
    ("/v1/images/generations", "openai", {"model": "kappa-image-1", "prompt": NUL}, "prompt"),
    ("/v1/chat/completions", "openai",
     {"model": "omicron-4-mini", "messages": [{"role": "user", "content": NUL}]}, "messages[0].content"),
    ("/v1/messages", "messages",
     {"model": "omicron-4-mini", "max_tokens": 16, "messages": [{"role": "user", "content": NUL}]},
     "messages[0].content"),
    ("/v1/responses", "openai", {"model": "omicron-4-mini", "input": NUL}, "input"),
    ("/v1/alpha/video/generations", "ark",
     {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": NUL}]}, "content[0].text"),
    ("/v1/beta/video/generations", "dashscope",
     {"model": "beta2.7-t2v", "input": {"prompt": NUL}}, "input.prompt"),
    ("/v1/video/generations", "generic", {"model": "alpha-2.0-fast", "prompt": NUL}, "prompt"),
]


def _headers(family: str, secret: str) -> dict[str, str]:
    if family == "messages":
        return {"x-api-key": secret, "anthropic-version": "2023-06-01"}
    return {"Authorization": f"Bearer {secret}"}


def _message_and_param(family: str, body: dict) -> tuple[str, str | None]:
    if family == "native":
        return body["error"]["message"], None
    if family == "messages":
        return body["error"]["message"], None
    if family == "dashscope":
        return body["message"], None
    return body["error"]["message"], body["error"].get("param")


@pytest.mark.parametrize(("url", "family", "body", "param"), CASES, ids=[c[1] + c[0] for c in CASES])
async def test_a_nul_character_is_refused_naming_the_field(client, alice, url, family, body, param):
    from studio.models import Generation, VideoTask

    response = await client.post(url, json=body, headers=_headers(family, alice.secret))
    assert response.status_code == 400, response.text
    message, named = _message_and_param(family, response.json())
    assert param in message
    if named is not None:
        assert named == param
    assert await Generation.objects.acount() == 0 and await VideoTask.objects.acount() == 0


@pytest.mark.parametrize("base", ["/v1/alpha/video/generations", "/v1/beta/video/generations",
                                  "/v1/video/generations"])
@pytest.mark.parametrize("task_id", ["%00%01%02", "vt-%00", "..%2F..%2Fetc", "x" * 300])
async def test_a_task_id_of_control_characters_is_not_found(client, alice, base, task_id):
    response = await client.get(f"{base}/{task_id}", headers=_headers("openai", alice.secret))
    if base == "/v1/beta/video/generations" and response.status_code == 200:
        # Protocol B's vendor answers a query for a task it does not know with 200 and UNKNOWN.
        assert response.json()["output"]["task_status"] == "UNKNOWN", response.text
    else:
        assert response.status_code == 404, response.text


NOT_AN_IMAGE = "aGVsbG8sIEkgYW0gYSBQTkcsIGhvbmVzdGx5"  # "hello, I am a PNG, honestly"
IMAGE_CASES = [
    ("/v1/chat/completions", "openai", {"model": "omicron-4-mini", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{NOT_AN_IMAGE}"}}]}]},
     "messages[0].content[0].image_url.url"),
    ("/v1/messages", "messages", {"model": "omicron-4-mini", "max_tokens": 16, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": NOT_AN_IMAGE}}]}]},
     "messages[0].content[0].source.data"),
    ("/v1/responses", "openai", {"model": "omicron-4-mini", "input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": f"data:image/png;base64,{NOT_AN_IMAGE}"}]}]},
     "input[0].content[0].image_url"),
]


@pytest.mark.parametrize(("url", "family", "body", "param"), IMAGE_CASES, ids=[c[0] for c in IMAGE_CASES])
async def test_text_routes_refuse_bytes_that_are_not_an_image(client, alice, url, family, body, param):
    from studio.models import Generation

    response = await client.post(url, json=body, headers=_headers(family, alice.secret))
    assert response.status_code == 400, response.text
    message, named = _message_and_param(family, response.json())
    assert param in message
    if named is not None:
        assert named == param
    assert await Generation.objects.acount() == 0
