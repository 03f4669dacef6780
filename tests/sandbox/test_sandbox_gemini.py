"""The sandbox's Gemini protocol: thoughts, signatures, usage by tier, strict replay, derived edits."""

from __future__ import annotations

import base64
import io

import httpx
import orjson
import pytest
from PIL import Image, ImageChops, ImageStat

from studio.providers.asgi_transport import StreamingASGITransport
from studio.sandbox.app import application

BASE = "http://sandbox.test"
KEY = {"x-goog-api-key": "sandbox-key"}


@pytest.fixture
async def vendor():
    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url=BASE, timeout=60) as c:
        yield c


def png_b64(image: Image.Image) -> str:
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def decode(part: dict) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(part["inlineData"]["data"]))).convert("RGB")


async def generate(vendor, model: str, body: dict) -> httpx.Response:
    return await vendor.post(f"/v1beta/models/{model}:generateContent", json=body, headers=KEY)


def user(*parts) -> dict:
    return {"role": "user", "parts": list(parts)}


async def test_stream_puts_thoughts_first_and_signatures_where_the_vendor_does(vendor):
    response = await vendor.post("/v1beta/models/gemini-3-pro-image-preview:streamGenerateContent?alt=sse",
                                 json={"contents": [user({"text": "a castle"})]}, headers=KEY)
    assert response.status_code == 200
    assert "\r\n\r\n" in response.text and "[DONE]" not in response.text
    frames = [orjson.loads(line[6:]) for line in response.text.split("\r\n") if line.startswith("data: ")]
    parts = [p for f in frames for p in f["candidates"][0]["content"]["parts"]]
    thoughts = [p for p in parts if p.get("thought")]
    rest = parts[len(thoughts):]
    assert thoughts and all(p.get("thought") for p in parts[:len(thoughts)])  # thoughts come first
    assert any("inlineData" in p for p in thoughts)  # a draft thought image
    assert all("thoughtSignature" not in p for p in thoughts)
    assert "thoughtSignature" in rest[0]  # the first part after the thoughts
    assert all("thoughtSignature" in p for p in rest if "inlineData" in p)
    usage = frames[-1]["usageMetadata"]
    assert usage["thoughtsTokenCount"] > 0 and frames[-1]["candidates"][0]["finishReason"] == "STOP"


@pytest.mark.parametrize(("model", "tier", "tokens"), [
    ("gemini-3.1-flash-image-preview", "512", 747), ("gemini-3.1-flash-image-preview", "2K", 1680),
    ("gemini-3-pro-image-preview", "1K", 1120), ("gemini-2.5-flash-image", "1K", 1290),
])
async def test_usage_counts_image_tokens_by_tier(vendor, model, tier, tokens):
    response = await generate(vendor, model, {"contents": [user({"text": "a dot"})],
                                              "generationConfig": {"imageConfig": {"imageSize": tier}}})
    usage = response.json()["usageMetadata"]
    image = [d["tokenCount"] for d in usage["candidatesTokensDetails"] if d["modality"] == "IMAGE"]
    assert image == [tokens]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage.get(
        "thoughtsTokenCount", 0)


async def turn_two(vendor, mutate) -> httpx.Response:
    first_user = user({"text": "a yellow star"})
    first = (await generate(vendor, "gemini-3.1-flash-image-preview", {"contents": [first_user]})).json()
    model_turn = first["candidates"][0]["content"]
    mutate(model_turn["parts"])
    return await generate(vendor, "gemini-3.1-flash-image-preview",
                          {"contents": [first_user, model_turn, user({"text": "make it invert"})]})


async def test_strict_replay_accepts_the_complete_model_turn(vendor):
    assert (await turn_two(vendor, lambda parts: None)).status_code == 200


@pytest.mark.parametrize("mutate", [
    lambda parts: parts[-1].pop("thoughtSignature"),  # the image's signature lost
    lambda parts: parts[0].pop("thoughtSignature"),  # the first text part's signature lost
    lambda parts: parts[-1].update(thoughtSignature=parts[0]["thoughtSignature"]),  # moved to another part
])
async def test_strict_replay_rejects_a_lost_signature(vendor, mutate):
    response = await turn_two(vendor, mutate)
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


def distance(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a, b.resize(a.size))).mean) / 3


async def test_edit_is_derived_from_the_input_image(vendor):
    source = Image.new("RGB", (512, 512), (30, 140, 40))
    source.paste((240, 240, 20), (128, 128, 384, 384))
    edit = await generate(vendor, "gemini-3.1-flash-image-preview", {"contents": [user(
        {"text": "make it brighter"}, {"inlineData": {"mimeType": "image/png", "data": png_b64(source)}})]})
    fresh = await generate(vendor, "gemini-3.1-flash-image-preview",
                           {"contents": [user({"text": "make it brighter"})]})
    edited = decode(edit.json()["candidates"][0]["content"]["parts"][-1])
    unrelated = decode(fresh.json()["candidates"][0]["content"]["parts"][-1])
    assert edited.size == (1024, 1024)  # the input's 1:1 ratio at the default tier
    assert distance(edited, source) < distance(unrelated, source) / 2
    assert ImageStat.Stat(edited.convert("L")).mean[0] > ImageStat.Stat(source.convert("L")).mean[0]


async def test_composition_uses_every_reference(vendor):
    red, blue = Image.new("RGB", (256, 256), (220, 20, 20)), Image.new("RGB", (256, 256), (20, 20, 220))
    response = await generate(vendor, "gemini-3-pro-image-preview", {"contents": [user(
        {"text": "the first beside the second"},
        {"inlineData": {"mimeType": "image/png", "data": png_b64(red)}},
        {"inlineData": {"mimeType": "image/png", "data": png_b64(blue)}})]})
    image = decode(response.json()["candidates"][0]["content"]["parts"][-1])
    pixels = image.resize((64, 64)).getdata()
    assert sum(1 for r, g, b in pixels if r > 150 and b < 100) > 100
    assert sum(1 for r, g, b in pixels if b > 150 and r < 100) > 100


async def test_multi_turn_edits_the_previous_image(vendor):
    from PIL import ImageOps

    kept = []
    response = await turn_two(vendor, kept.extend)
    assert response.status_code == 200
    parts = response.json()["candidates"][0]["content"]["parts"]
    assert parts[0]["text"].startswith("Here is the edited image")
    previous, edited = decode(kept[-1]), decode(parts[-1])
    assert distance(edited, ImageOps.invert(previous)) < distance(edited, previous) / 2


async def test_vendor_errors_in_vendor_shape(vendor):
    no_key = await vendor.post("/v1beta/models/gemini-3-pro-image-preview:generateContent",
                               json={"contents": [user({"text": "x"})]})
    assert no_key.status_code == 403 and no_key.json()["error"]["status"] == "PERMISSION_DENIED"
    missing = await generate(vendor, "gemini-9-image", {"contents": [user({"text": "x"})]})
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"


async def test_count_tokens_refuses_contents_of_the_wrong_shape_as_the_vendor_does(vendor):
    path = "/v1beta/models/gemini-3-pro-image-preview:countTokens"
    counted = await vendor.post(path, json={"contents": [user({"text": "a red fox"})]}, headers=KEY)
    assert counted.status_code == 200 and counted.json()["totalTokens"] > 0
    for contents, where in (([1], "contents[0]"), ([{"parts": 5}], "contents[0].parts"), ("x", "contents")):
        refused = await vendor.post(path, json={"contents": contents}, headers=KEY)
        assert refused.status_code == 400, contents
        error = refused.json()["error"]
        assert error["status"] == "INVALID_ARGUMENT" and f"Invalid value at '{where}'" in error["message"]
    inner = await vendor.post(path, json={"generateContentRequest": {"contents": [7]}}, headers=KEY)
    assert inner.status_code == 400 and "'contents[0]'" in inner.json()["error"]["message"]
