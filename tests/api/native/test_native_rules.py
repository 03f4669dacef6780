"""Every request rule of the native routes: a 400 in the native error body that names the field."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.api.native.native_fakes import fake_gemini, sse_reply, text_frame  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/models/{model}:generateContent"


def png_b64(size=(32, 32), color=(200, 30, 30), fmt="PNG") -> str:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt)
    return base64.b64encode(out.getvalue()).decode()


PNG = png_b64()
JPEG = png_b64(fmt="JPEG")


def with_parts(*parts, **extra) -> dict:
    return {"contents": [{"role": "user", "parts": list(parts)}], **extra}


def config(**generation_config) -> dict:
    return with_parts({"text": "a cat"}, generationConfig=generation_config)


CASES = [
    # contents
    ({}, "contents"),
    ({"contents": []}, "contents"),
    ({"contents": "a cat"}, "contents"),
    ({"contents": [{"role": "user"}]}, "contents[0].parts"),
    ({"contents": [{"role": "user", "parts": []}]}, "contents[0].parts"),
    ({"contents": [{"role": "system", "parts": [{"text": "x"}]}]}, "contents[0].role"),
    # parts
    (with_parts({"text": "x"}, {"thought": True}), "contents[0].parts[1]"),
    (with_parts({"video": "x"}), "contents[0].parts[0]"),
    (with_parts({"text": 5}), "contents[0].parts[0].text"),
    # inline images
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "image/png", "data": "data:image/png;base64," + PNG}}),
     "contents[0].parts[1].inlineData.data"),
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "image/png", "data": "not base64 at all!!"}}),
     "contents[0].parts[1].inlineData.data"),
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "image/png",
                                                  "data": base64.b64encode(b"plain text, no image").decode()}}),
     "contents[0].parts[1].inlineData.data"),
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "text/plain", "data": PNG}}),
     "contents[0].parts[1].inlineData.mimeType"),
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "image/jpeg", "data": PNG}}),
     "contents[0].parts[1].inlineData.mimeType"),
    (with_parts({"text": "edit"}, {"inline_data": {"mime_type": "image/jpeg", "data": PNG}}),
     "contents[0].parts[1].inline_data.mime_type"),
    (with_parts({"text": "edit"}, {"inlineData": {"data": PNG}}), "contents[0].parts[1].inlineData.mimeType"),
    (with_parts({"text": "edit"}, {"inlineData": {"mimeType": "image/png"}}), "contents[0].parts[1].inlineData.data"),
    # model in the body
    (with_parts({"text": "x"}, model="delta-3-pro-image"), "model"),
    # generationConfig
    (config(responseModalities=["TEXT", "AUDIO"]), "generationConfig.responseModalities"),
    (config(responseModalities="IMAGE"), "generationConfig.responseModalities"),
    (config(imageConfig={"imageSize": "512"}), "generationConfig.imageConfig.imageSize"),  # pro has no 512
    (config(imageConfig={"imageSize": "1k"}), "generationConfig.imageConfig.imageSize"),
    (config(imageConfig={"imageSize": "8K"}), "generationConfig.imageConfig.imageSize"),
    (config(imageConfig={"aspectRatio": "8:1"}), "generationConfig.imageConfig.aspectRatio"),  # 3.1 flash only
    (config(imageConfig={"aspectRatio": "16x9"}), "generationConfig.imageConfig.aspectRatio"),
    (with_parts({"text": "x"}, generation_config={"image_config": {"image_size": "9K"}}),
     "generation_config.image_config.image_size"),
    ({"contents": [{"parts": [{"text": "x"}]}], "systemInstruction": {"parts": []}}, "systemInstruction.parts"),
]


@pytest.mark.parametrize(("body", "field"), CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)])
async def test_invalid_request_is_400_naming_the_field(client, alice, body, field):
    response = await client.post(URL.format(model="delta-3-pro-image"), json=body,
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert field in error["message"], error["message"]


async def test_not_json_is_400(client, alice):
    response = await client.post(URL.format(model="delta-3-pro-image"), content=b"{not json",
                                 headers={"x-delta-api-key": alice.secret, "content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(("model", "size", "ok"), [
    ("delta-3.1-flash-lite-image", "1K", True), ("delta-3.1-flash-lite-image", "2K", False),
    ("delta-3.1-flash-image", "512", True), ("delta-3.1-flash-image", "4K", True),
    ("delta-3-pro-image", "512", False), ("delta-3-pro-image", "2K", True),
])
async def test_image_size_table_per_model(client, alice, model, size, ok):
    from studio.gateway import snapshot
    from studio.gateway.native import rules as native_rules

    entry = (await snapshot.get()).models[model]
    body = config(imageConfig={"imageSize": size})
    if ok:
        native_rules.validate(body, entry)
    else:
        with pytest.raises(Exception, match="imageSize"):
            native_rules.validate(body, entry)


async def test_too_many_reference_images_is_400(client, alice):
    parts = [{"text": "compose"}] + [{"inlineData": {"mimeType": "image/png", "data": PNG}}] * 4
    response = await client.post(URL.format(model="delta-3.1-flash-lite-image"), json=with_parts(*parts),
                                 headers={"x-delta-api-key": alice.secret})
    assert response.status_code == 400
    assert "contents[0].parts" in response.json()["error"]["message"]


async def test_valid_unusual_body_is_forwarded_untouched(client, alice, fake_gemini):
    """Unknown fields, snake_case parts, case-insensitive modalities, JPEG declared as image/jpg."""
    fake = fake_gemini["fake-gemini"]
    fake.queue(sse_reply(text_frame("ok")))
    raw = (b'{"contents":[{"role":"user","parts":[{"text":"edit this"},'
           b'{"inline_data":{"mime_type":"image/jpg","data":"' + JPEG.encode() + b'"}}],"customTag":1}],'
           b'"generationConfig":{"responseModalities":["Text","Image"],"imageConfig":{"aspectRatio":"4:1"},'
           b'"thinkingConfig":{"includeThoughts":true}},"safetySettings":[],"futureField":{"x":1.50}}')
    response = await client.post(URL.replace("generateContent", "streamGenerateContent")
                                 .format(model="delta-3.1-flash-image"), content=raw,
                                 headers={"x-delta-api-key": alice.secret, "content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert fake.requests[0].body == raw  # byte for byte: nothing trimmed, reordered or re-encoded
    assert fake.requests[0].path == "/v1beta/models/gemini-3.1-flash-image-preview:streamGenerateContent"
