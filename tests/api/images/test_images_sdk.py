"""The official openai SDK, unmodified but for base URL and key, against a live server."""

from __future__ import annotations

import base64
import io
import time

import httpx
import pytest
from PIL import Image, ImageDraw

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sdk(live_asgi, alice, settings):
    import openai

    settings.PUBLIC_BASE_URL = live_asgi
    return openai.OpenAI(base_url=f"{live_asgi}/v1", api_key=alice.secret, max_retries=0)


def test_generate_b64_and_url(sdk):
    result = sdk.images.generate(model="kappa-image-1", prompt="a koi pond", n=2, size="1024x1536", quality="low")
    assert len(result.data) == 2 and result.size == "1024x1536" and result.usage.total_tokens > 0
    assert Image.open(io.BytesIO(base64.b64decode(result.data[0].b64_json))).size == (1024, 1536)

    linked = sdk.images.generate(model="kappa-image-1", prompt="a koi pond", response_format="url")
    fetched = httpx.get(linked.data[0].url, timeout=30)  # no key needed
    assert fetched.status_code == 200 and Image.open(io.BytesIO(fetched.content)).size == (1024, 1024)


def test_generate_stream(sdk):
    stream = sdk.images.generate(model="kappa-image-1", prompt="a comet", stream=True, partial_images=2)
    events = list(stream)
    assert [e.type for e in events] == ["image_generation.partial_image"] * 2 + ["image_generation.completed"]
    assert events[-1].usage.total_tokens > 0
    assert Image.open(io.BytesIO(base64.b64decode(events[-1].b64_json))).size == (1024, 1024)


def test_stream_of_several_images_types_every_completed_event(sdk, alice):
    from studio.models import Generation

    events = list(sdk.images.generate(model="kappa-image-1", prompt="two comets", n=2, stream=True,
                                      partial_images=1, quality="auto", size="auto", background="auto"))
    completed = [e for e in events if e.type == "image_generation.completed"]
    assert len(completed) == 2
    for event in completed:  # the SDK's own type: b64_json, usage and concrete settings on each
        assert event.b64_json and event.usage.output_tokens > 0 and event.usage.input_tokens_details is not None
        assert "auto" not in (event.size, event.quality, event.background)
        assert Image.open(io.BytesIO(base64.b64decode(event.b64_json))).size == tuple(
            int(v) for v in event.size.split("x"))
    deadline = time.monotonic() + 20
    while not Generation.objects.filter(prompt="two comets").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # records are written off the response path
    recorded = Generation.objects.get(prompt="two comets").usage
    assert recorded["total_tokens"] == sum(e.usage.total_tokens for e in completed)  # counted once


def test_edit_multipart_with_mask(sdk):
    image = Image.new("RGB", (256, 256), (30, 90, 160))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    mask = Image.new("RGBA", (256, 256), (0, 0, 0, 255))
    ImageDraw.Draw(mask).rectangle((0, 0, 127, 255), fill=(0, 0, 0, 0))
    mask_buffer = io.BytesIO()
    mask.save(mask_buffer, "PNG")
    result = sdk.images.edit(model="kappa-image-1", prompt="a red flower",
                             image=("photo.png", buffer.getvalue(), "image/png"),
                             mask=("mask.png", mask_buffer.getvalue(), "image/png"))
    edited = Image.open(io.BytesIO(base64.b64decode(result.data[0].b64_json))).convert("RGB")
    assert edited.crop((128, 0, 256, 256)).tobytes() == image.crop((128, 0, 256, 256)).tobytes()
    assert edited.crop((0, 0, 128, 256)).tobytes() != image.crop((0, 0, 128, 256)).tobytes()

    several = sdk.images.edit(model="kappa-image-1", prompt="combine",
                              image=[("a.png", buffer.getvalue(), "image/png"), ("b.png", buffer.getvalue(), "image/png")])
    assert several.data[0].b64_json


def test_sdk_sees_typed_errors(sdk):
    import openai

    with pytest.raises(openai.BadRequestError) as caught:
        sdk.images.generate(model="kappa-image-1", prompt="x", size="333x333")
    assert caught.value.param == "size"
    with pytest.raises(openai.NotFoundError):
        sdk.images.generate(model="nope", prompt="x")
