"""The sandbox speaks the OpenAI Images and Ark Seedream protocols with real results."""

from __future__ import annotations

import base64
import io

import httpx
import pytest
from PIL import Image

from studio.sandbox.app import application

HEADERS = {"authorization": "Bearer sandbox"}


@pytest.fixture
async def sandbox(transactional_db):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=application),
                                 base_url="http://sandbox.studio.internal") as c:
        yield c


async def test_openai_vendor_errors_and_auth(sandbox):
    assert (await sandbox.post("/v1/images/generations", json={"prompt": "x"})).status_code == 401
    bad = await sandbox.post("/v1/images/generations", json={"model": "gpt-image-1.5", "prompt": "x", "n": 11},
                             headers=HEADERS)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "n"
    unknown = await sandbox.post("/v1/images/generations", json={"model": "gpt-x", "prompt": "x"}, headers=HEADERS)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"


async def test_openai_jpeg_compression_is_honoured(sandbox):
    sizes = []
    for compression in (10, 95):
        response = await sandbox.post("/v1/images/generations", headers=HEADERS, json={
            "model": "gpt-image-1.5", "prompt": "a forest", "output_format": "jpeg", "output_compression": compression})
        data = base64.b64decode(response.json()["data"][0]["b64_json"])
        assert Image.open(io.BytesIO(data)).format == "JPEG"
        sizes.append(len(data))
    assert sizes[0] < sizes[1]


async def test_ark_results_are_served_and_sequential_sets_are_related(sandbox):
    response = await sandbox.post("/api/v3/images/generations", headers=HEADERS, json={
        "model": "dola-seedream-5-0-pro-260628", "prompt": "four pictures of a sunrise", "size": "1K",
        "sequential_image_generation": "auto", "watermark": False})
    assert response.status_code == 200, response.text
    items = response.json()["data"]
    assert len(items) == 4 and all("url" in item for item in items)
    frames = []
    for item in items:
        fetched = await sandbox.get(item["url"])
        assert fetched.status_code == 200 and fetched.headers["content-type"] == "image/jpeg"
        frames.append(Image.open(io.BytesIO(fetched.content)).convert("RGB").resize((32, 32)))
    assert len({f.tobytes() for f in frames}) == 4  # distinct frames...
    palettes = [f.quantize(4).getpalette()[:12] for f in frames]
    assert sum(abs(a - b) for a, b in zip(palettes[0], palettes[1], strict=True)) < 12 * 60  # ...of one palette


async def test_ark_errors_use_the_vendor_body(sandbox):
    response = await sandbox.post("/api/v3/images/generations", headers=HEADERS,
                                  json={"model": "dola-seedream-5-0-pro-260628", "size": "1K"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "MissingParameter" and error["param"] == "prompt" and error["type"] == "BadRequest"
    missing = await sandbox.get("/api/v3/results/" + "0" * 32 + ".png")
    assert missing.status_code == 404
