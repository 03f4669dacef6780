"""POST /v1/images/generations: standard, layered/sequential extension and native models, end to end."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.gateway import recording

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/v1/images/generations"


def auth(account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.secret}"}


def picture(b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(b64)))


def sse_events(text: str) -> list[tuple[str | None, str]]:
    events = []
    for block in text.strip().split("\n\n"):
        name, data = None, ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        events.append((name, data))
    return events


async def test_standard_generation_returns_n_distinct_images_with_echo_and_usage(client, alice):
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "a red fox in the snow", "n": 3,
                                             "size": "1536x1024", "quality": "low", "output_format": "webp",
                                             "output_compression": 60}, headers=auth(alice))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["size"] == "1536x1024" and body["quality"] == "low" and body["output_format"] == "webp"
    assert body["background"] == "opaque"
    assert len(body["data"]) == 3
    images = [picture(item["b64_json"]) for item in body["data"]]
    assert all(im.format == "WEBP" and im.size == (1536, 1024) for im in images)
    assert len({item["b64_json"] for item in body["data"]}) == 3
    usage = body["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert set(usage["input_tokens_details"]) == {"image_tokens", "text_tokens"}


async def test_transparent_png_has_alpha(client, alice):
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "a logo of a star",
                                             "background": "transparent", "output_format": "png"}, headers=auth(alice))
    assert response.status_code == 200, response.text
    image = picture(response.json()["data"][0]["b64_json"])
    assert image.mode == "RGBA" and image.getchannel("A").getextrema()[0] == 0
    assert response.json()["background"] == "transparent"


async def test_url_response_is_signed_public_and_expires(client, alice, settings):
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "a lighthouse",
                                             "response_format": "url"}, headers=auth(alice))
    assert response.status_code == 200, response.text
    url = response.json()["data"][0]["url"]
    assert url.startswith(settings.PUBLIC_BASE_URL + "/m/")
    await recording.drain()
    path = url[len(settings.PUBLIC_BASE_URL):]
    fetched = await client.get(path)  # no API key
    assert fetched.status_code == 200
    assert fetched.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(fetched.content)).size == (1024, 1024)
    ranged = await client.get(path, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206 and len(ranged.content) == 10
    forged = path[:-3] + ("aaa" if not path.endswith("aaa") else "bbb")
    assert (await client.get(forged)).status_code == 404
    settings.STUDIO_MEDIA_URL_TTL = -1
    assert (await client.get(path)).status_code == 404


async def test_standard_stream_sends_partials_then_completed(client, alice):
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "a blue whale", "stream": True,
                                             "partial_images": 2}, headers=auth(alice))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names == ["image_generation.partial_image"] * 2 + ["image_generation.completed"]
    payloads = [orjson.loads(data) for _, data in events]
    assert [p["partial_image_index"] for p in payloads[:2]] == [0, 1]
    assert all(p["type"] == name for p, name in zip(payloads, names, strict=True))
    final = payloads[-1]
    assert picture(final["b64_json"]).size == (1024, 1024)
    assert final["usage"]["total_tokens"] > 0


async def test_layered_sequential_set_stops_at_max_images_without_item_errors(client, alice):
    response = await client.post(URL, json={
        "model": "sigma-5.0-image", "prompt": "a story in 5 panels of a cat and a moon", "size": "1K",
        "sequential_image_generation": "auto", "sequential_image_generation_options": {"max_images": 3},
        "response_format": "b64_json", "watermark": False,
    }, headers=auth(alice))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"] == "sigma-5.0-image"
    ok = [item for item in body["data"] if "b64_json" in item]
    assert len(ok) == len(body["data"]) == 3  # max_images bounds the set; nothing is invented past it
    assert body["usage"]["generated_images"] == 3
    assert body["usage"]["output_tokens"] == body["usage"]["total_tokens"] == 3 * 1024 * 1024 // 256
    frames = [picture(item["b64_json"]) for item in ok]
    assert len({f.tobytes() for f in frames}) == 3


async def test_layered_default_url_is_downloaded_and_rehosted(client, alice, settings):
    response = await client.post(URL, json={"model": "sigma-5.0-image", "prompt": "a mountain poster",
                                             "size": "1K", "optimize_prompt_options": {"mode": "standard"}},
                                 headers=auth(alice))
    assert response.status_code == 200, response.text
    item = response.json()["data"][0]
    assert item["url"].startswith(settings.PUBLIC_BASE_URL + "/m/")  # our host, not the vendor's
    assert item["revised_prompt"].startswith("a mountain poster") and len(item["revised_prompt"]) > 20
    assert item["output_format"] == "jpeg" and item["size"] == "1024x1024"
    await recording.drain()
    fetched = await client.get(item["url"][len(settings.PUBLIC_BASE_URL):])
    assert fetched.status_code == 200 and fetched.headers["content-type"] == "image/jpeg"


def shapes_png() -> bytes:
    from PIL import ImageDraw

    image = Image.new("RGB", (600, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((60, 80, 260, 230), fill=(220, 30, 30))
    draw.ellipse((380, 200, 540, 360), fill=(30, 60, 220))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


async def test_layer_decomposition_returns_positioned_layers(client, alice):
    data_uri = "data:image/png;base64," + base64.b64encode(shapes_png()).decode()
    response = await client.post(URL, json={"model": "sigma-5.0-image", "image": data_uri,
                                             "layer_decomposition": True, "output_format": "png",
                                             "response_format": "b64_json"}, headers=auth(alice))
    assert response.status_code == 200, response.text
    body = response.json()
    layers = body["data"]
    assert layers[0]["z_index"] == 0 and "bounding_box" not in layers[0]
    red = next(layer for layer in layers if layer.get("name", "").lower().startswith("red"))
    x1, y1, x2, y2 = red["bounding_box"]["absolute"]
    assert abs(x1 - 60) <= 3 and abs(y1 - 80) <= 3 and abs(x2 - 261) <= 3 and abs(y2 - 231) <= 3
    assert red["bounding_box"]["normalized"] == [round(x1 * 1000 / 600), round(y1 * 1000 / 400),
                                                 round(x2 * 1000 / 600), round(y2 * 1000 / 400)]
    layer_image = picture(red["b64_json"])
    assert layer_image.mode == "RGBA" and layer_image.size == (x2 - x1, y2 - y1)
    assert body["usage"]["input_images"] == 1
    # A handful of meaningful layers (base, background, the two shapes), billed as the vendor counts them.
    assert len(layers) == 4 and body["usage"]["generated_images"] == len(layers)
    from studio.models import UsageRecord

    await recording.drain()
    record = await UsageRecord.objects.aget(user=alice.user)
    assert record.images == body["usage"]["generated_images"]


async def test_layered_stream_events_then_done(client, alice):
    response = await client.post(URL, json={
        "model": "sigma-5.0-image", "prompt": "three images of a growing flower", "size": "1K", "stream": True,
        "sequential_image_generation": "auto", "sequential_image_generation_options": {"max_images": 2},
    }, headers=auth(alice))
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names == ["image_generation.partial_succeeded"] * 2 + ["image_generation.completed", None]
    assert events[-1][1] == "[DONE]"
    first = orjson.loads(events[0][1])
    assert first["image_index"] == 0 and first["url"].startswith("http") and first["model"] == "sigma-5.0-image"
    assert orjson.loads(events[2][1])["usage"]["generated_images"] == 2


async def test_watermark_is_visible(client, alice):
    common = {"model": "sigma-5.0-image", "prompt": "a plain sky", "size": "1K", "response_format": "b64_json"}
    marked = (await client.post(URL, json={**common, "watermark": True}, headers=auth(alice))).json()
    plain = (await client.post(URL, json={**common, "watermark": False}, headers=auth(alice))).json()
    a, b = picture(marked["data"][0]["b64_json"]).convert("RGB"), picture(plain["data"][0]["b64_json"]).convert("RGB")
    from PIL import ImageChops

    box = ImageChops.difference(a, b).point(lambda v: 255 if v > 40 else 0).getbbox()
    assert box is not None and box[0] > 512 and box[1] > 900  # bottom-right corner only


async def test_native_model_text_to_image_by_translation(client, alice):
    response = await client.post(URL, json={"model": "delta-3.1-flash-image", "prompt": "a paper boat",
                                             "size": "1376x768"}, headers=auth(alice))
    assert response.status_code == 200, response.text
    body = response.json()
    assert picture(body["data"][0]["b64_json"]).size == (1376, 768)
    assert body["size"] == "1376x768" and body["output_format"] == "png"
    assert body["usage"]["output_tokens_details"]["image_tokens"] == 1120


async def test_native_model_stream_translates_to_standard_events(client, alice):
    response = await client.post(URL, json={"model": "delta-3-pro-image", "prompt": "a castle", "stream": True,
                                             "partial_images": 1}, headers=auth(alice))
    assert response.status_code == 200, response.text
    names = [name for name, _ in sse_events(response.text)]
    assert names == ["image_generation.partial_image", "image_generation.completed"]
    final = orjson.loads(sse_events(response.text)[-1][1])
    assert picture(final["b64_json"]).size == (1024, 1024) and final["usage"]["total_tokens"] > 0


async def test_generation_is_recorded_with_outputs(client, alice):
    from studio.models import Asset, Generation, UsageRecord

    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "two pears", "n": 2},
                                 headers=auth(alice))
    assert response.status_code == 200
    await recording.drain()
    generation = await Generation.objects.aget(user=alice.user)
    assert generation.route == "images.generations" and generation.status == "succeeded"
    assert generation.prompt == "two pears" and generation.parameters["n"] == 2
    outputs = [a async for a in Asset.objects.filter(generation=generation).order_by("index")]
    assert [a.index for a in outputs] == [0, 1] and all(a.owner_id == alice.user.id for a in outputs)
    usage = await UsageRecord.objects.aget(user=alice.user)
    assert usage.images == 2 and usage.total_tokens == response.json()["usage"]["total_tokens"]


async def test_hot_path_makes_no_query(client, alice, count_queries, settings, monkeypatch):
    settings.STUDIO_CACHE_TTL = 3600  # no background refresh during the measurement
    await client.post(URL, json={"model": "kappa-image-1", "prompt": "warm up"}, headers=auth(alice))
    await recording.drain()
    held = []
    # records wait until the response is measured
    monkeypatch.setattr(recording, "submit", lambda record, **_: held.append(record))
    count_queries["n"] = 0
    response = await client.post(URL, json={"model": "kappa-image-1", "prompt": "a tree", "quality": "low"},
                                 headers=auth(alice))
    assert response.status_code == 200
    assert count_queries["n"] == 0, [s[:90] for s in count_queries["sql"]]
    assert len(held) == 1 and held[0].items  # the record was handed over, not written inline
