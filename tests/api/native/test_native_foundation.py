"""The first vertical slice: /v1 native image routes through auth, engine, provider and sandbox."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/models/{model}:generateContent"
STREAM_URL = "/v1/models/{model}:streamGenerateContent"


def text_body(prompt: str, **image_config) -> dict:
    body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
    if image_config:
        body["generationConfig"] = {"responseModalities": ["TEXT", "IMAGE"], "imageConfig": image_config}
    return body


def final_image(parts: list[dict]) -> Image.Image:
    finals = [p for p in parts if "inlineData" in p and not p.get("thought")]
    assert finals, parts
    return Image.open(io.BytesIO(base64.b64decode(finals[-1]["inlineData"]["data"])))


async def test_generate_content_returns_image_at_tier_and_ratio(client, alice):
    response = await client.post(
        URL.format(model="delta-3.1-flash-image"),
        json=text_body("a red fox in the snow", aspectRatio="16:9", imageSize="1K"),
        headers={"x-delta-api-key": alice.secret},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    candidate = body["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["role"] == "model"
    assert final_image(candidate["content"]["parts"]).size == (1376, 768)
    assert body["usageMetadata"]["totalTokenCount"] > 0
    assert body["modelVersion"] and body["responseId"]


async def test_stream_relays_frames_and_parts_concatenate(client, alice):
    response = await client.post(
        STREAM_URL.format(model="delta-3-pro-image"), json=text_body("a lighthouse at dusk"),
        headers={"Authorization": f"Bearer {alice.secret}"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    lines = [line for line in response.text.split("\n") if line]
    assert all(line.startswith("data: ") for line in lines)
    assert "[DONE]" not in response.text
    frames = [orjson.loads(line[6:]) for line in lines]
    assert len(frames) >= 3  # thoughts, text, image
    parts = [p for f in frames for c in f.get("candidates", []) for p in c["content"]["parts"]]
    assert any(p.get("thought") for p in parts)
    assert final_image(parts).size == (1024, 1024)
    assert frames[-1]["candidates"][0]["finishReason"] == "STOP"


async def test_generation_recorded_with_asset_and_usage(client, alice):
    from studio.models import Asset, Generation, UsageRecord

    response = await client.post(
        URL.format(model="delta-3.1-flash-lite-image"), json=text_body("a blue teapot"),
        headers={"x-delta-api-key": alice.secret},
    )
    assert response.status_code == 200
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.prompt == "a blue teapot"
    assert generation.status == "succeeded"
    assert generation.usage["totalTokenCount"] > 0
    assert generation.duration_ms is not None and generation.first_byte_ms is not None
    asset = await Asset.objects.aget(generation=generation)
    assert (asset.width, asset.height) == (1024, 1024) and asset.mime == "image/png"
    with asset.file.open("rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    usage = await UsageRecord.objects.aget(api_key=alice.key)
    assert usage.images == 1 and usage.total_tokens == generation.usage["totalTokenCount"]


async def test_streamed_generation_recorded_from_all_frames(client, alice):
    from studio.models import Asset, Generation

    response = await client.post(
        STREAM_URL.format(model="delta-3.1-flash-image"), json=text_body("a green kite", imageSize="512"),
        headers={"x-delta-api-key": alice.secret},
    )
    assert response.status_code == 200
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.text.startswith("Here is your image")
    assert await Asset.objects.filter(generation=generation).acount() == 1


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"x-delta-api-key": "sgw-not-a-real-key"}, 401),
        ({"x-delta-api-key": "AIzaSyVendorIssuedKey000000000000000"}, 401),
        ({"Authorization": "Bearer sk-proj-vendor-key"}, 401),
    ],
)
async def test_bad_keys_get_401_in_native_body(client, alice, headers, status):
    response = await client.post(URL.format(model="delta-3.1-flash-image"), json=text_body("x"), headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == status and error["status"] == "UNAUTHENTICATED" and error["message"]


async def test_both_headers_with_different_keys_is_400(client, alice, make_account):
    bob = make_account("bob")
    response = await client.post(
        URL.format(model="delta-3.1-flash-image"), json=text_body("x"),
        headers={"x-delta-api-key": alice.secret, "Authorization": f"Bearer {bob.secret}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "one header" in response.json()["error"]["message"]


async def test_goog_header_alias_is_accepted(client, alice):
    response = await client.post(
        URL.format(model="delta-3.1-flash-lite-image"), json=text_body("a cat"),
        headers={"x-goog-api-key": alice.secret},
    )
    assert response.status_code == 200


async def test_revoked_and_expired_keys_are_401(client, alice, make_account):
    from datetime import timedelta

    from django.utils import timezone

    alice.key.revoked = True
    await alice.key.asave()
    bob = make_account("bob", expires_at=timezone.now() - timedelta(minutes=1))
    for secret in (alice.secret, bob.secret):
        response = await client.post(
            URL.format(model="delta-3.1-flash-image"), json=text_body("x"), headers={"x-delta-api-key": secret}
        )
        assert response.status_code == 401, secret


async def test_key_not_allowed_for_model_is_403(client, make_account):
    carol = make_account("carol", allowed_models=["delta-3-pro-image"])
    response = await client.post(
        URL.format(model="delta-3.1-flash-image"), json=text_body("x"), headers={"x-delta-api-key": carol.secret}
    )
    assert response.status_code == 403
    assert response.json()["error"]["status"] == "PERMISSION_DENIED"


async def test_unknown_model_is_404_in_native_body(client, alice):
    response = await client.post(URL.format(model="delta-9-imaginary"), json=text_body("x"),
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


async def test_a_text_model_on_the_native_route_is_400_model_not_supported(client, alice):
    response = await client.post(URL.format(model="omicron-4-mini"), json=text_body("x"),
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT" and "omicron-4-mini" in response.text


async def test_key_as_query_parameter(client, alice, make_account):
    response = await client.post(URL.format(model="delta-9-imaginary") + f"?key={alice.secret}",
                                 json=text_body("x"))
    assert response.status_code == 404  # authenticated, then the model is unknown
    bob = make_account("bob")
    response = await client.post(URL.format(model="delta-9-imaginary") + f"?key={bob.secret}",
                                 json=text_body("x"), headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400 and response.json()["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "contents"),
        ({"contents": []}, "contents"),
        ({"model": "delta-3.1-flash-image", "contents": [{"parts": [{"text": "x"}]}]}, "model"),
        ({"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"imageConfig": {"imageSize": "8K"}}},
         "imageSize"),
        ({"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"imageConfig": {"aspectRatio": "8:1"}}},
         "aspectRatio"),
    ],
)
async def test_invalid_bodies_are_400_naming_the_field(client, alice, body, field):
    response = await client.post(URL.format(model="delta-3-pro-image"), json=body,
                                  headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and field in error["message"]


async def test_models_list_shows_only_allowed_models(client, alice, make_account):
    response = await client.get("/v1/models", headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200
    listed = response.json()
    assert listed["object"] == "list"
    ids = {m["id"] for m in listed["data"]}
    assert {"delta-3.1-flash-image", "kappa-image-1", "sigma-5.0-image", "omicron-4-mini", "epsilon-4.5",
            "alpha-2.5", "beta3.0-video", "gamma-1.0-video-edit"} <= ids
    assert all(m["object"] == "model" and m["owned_by"] and isinstance(m["created"], int) for m in listed["data"])
    dave = make_account("dave", allowed_models=["omicron-4-mini"])
    response = await client.get("/v1/models", headers={"Authorization": f"Bearer {dave.secret}"})
    assert [m["id"] for m in response.json()["data"]] == ["omicron-4-mini"]


async def test_models_list_requires_a_key_openai_style(client, catalog):
    response = await client.get("/v1/models")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert response.json()["error"]["code"] == "invalid_api_key"


async def test_unknown_v1_path_is_json_404(client, catalog):
    response = await client.get("/v1/nothing/here")
    assert response.status_code == 404 and "error" in response.json()


async def test_auth_and_routing_make_no_database_query(client, alice, count_queries):
    from studio.gateway import snapshot
    from studio.gateway.auth import authenticate
    from studio.gateway.native import engine as native_image

    await snapshot.get()  # a warm process
    count_queries["n"] = 0
    principal = authenticate(await snapshot.get(), alice.secret)
    call = await native_image.prepare(principal, "delta-3.1-flash-image", text_body("x"), stream=False)
    assert call.upstreams and call.upstreams[0].name == "Sandbox"
    response = await client.get("/v1/models", headers={"Authorization": f"Bearer {alice.secret}"})
    assert response.status_code == 200
    assert count_queries["n"] == 0, count_queries["sql"]


async def test_key_created_by_another_process_works_at_once(client, alice):
    """Another process's new key is unknown to this snapshot; a miss reloads it (rate-limited)."""
    import time

    from asgiref.sync import sync_to_async

    from studio.gateway import snapshot
    from studio.models import ApiKey

    stale = await snapshot.get()
    _, secret = await sync_to_async(ApiKey.issue)(alice.user, name="made elsewhere")
    # As if the key were made by another process: this process's snapshot was not invalidated.
    snapshot._state.snapshot = stale
    stale.loaded_at = time.monotonic() - 2
    response = await client.get("/v1/models", headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 200
    # A key unknown on the newest snapshot is refused without another reload.
    refused = await client.get("/v1/models", headers={"Authorization": "Bearer sk-not-a-key"})
    assert refused.status_code == 401
    assert await snapshot.reload_after_miss("sk-not-a-key") is None


async def test_v1beta_and_key_query_and_models_answer_like_the_native_api(client, alice):
    body = {"contents": [{"parts": [{"text": "a fox"}]}],
            "generationConfig": {"imageConfig": {"imageSize": "512"}}}
    answer = await client.post(f"/v1beta/models/delta-3.1-flash-image:generateContent?key={alice.secret}", json=body)
    assert answer.status_code == 200 and answer.json()["modelVersion"] == "delta-3.1-flash-image"
    native = (await client.get("/v1/models", headers={"x-goog-api-key": alice.secret})).json()
    assert "models" in native and all(m["name"].startswith("models/") for m in native["models"])
    openai_shape = (await client.get("/v1/models", headers={"Authorization": f"Bearer {alice.secret}"})).json()
    assert openai_shape["object"] == "list"
    paged = (await client.get("/v1beta/models?pageSize=1", headers={"x-goog-api-key": alice.secret})).json()
    assert len(paged["models"]) == 1 and paged["nextPageToken"]
    unknown = await client.get("/v1beta/nothing-here", headers={"x-goog-api-key": alice.secret})
    assert unknown.status_code == 404 and unknown.json()["error"]["status"] == "NOT_FOUND"


async def test_a_generation_whose_first_write_fails_keeps_its_image_for_the_retry(client, alice, settings, monkeypatch):
    """Storage that fails once (the record is tried again) still ends with the image stored and
    the generation succeeded, not recorded as if no image had come."""
    from studio.gateway.media import storage
    from studio.models import Asset, Generation

    settings.STUDIO_RECORDER_RETRY_DELAYS = (0.01, 0.01)
    calls = []

    def failing_once(real):
        def store(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                raise OSError("storage unavailable")
            return real(*args, **kwargs)
        return store

    # A big picture is stored from its base64 in pieces, a small one from its bytes.
    monkeypatch.setattr(storage, "store_bytes", failing_once(storage.store_bytes))
    monkeypatch.setattr(storage, "store_base64", failing_once(storage.store_base64))
    response = await client.post(URL.format(model="delta-3.1-flash-lite-image"), json=text_body("a blue teapot"),
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 200
    await recording.drain()
    assert len(calls) == 2
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.status == "succeeded"
    assert await Asset.objects.filter(generation=generation).acount() == 1
