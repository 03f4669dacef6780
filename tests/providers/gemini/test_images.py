"""The standard images API on the Gemini protocol, against a fake Gemini at the HTTP boundary."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from PIL import Image

from studio.core.entries import ModelEntry
from studio.core.errors import BadRequest, UpstreamRejected
from studio.core.images import EDITS, GENERATIONS, ImageJob, SourceImage
from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport
from studio.providers.gemini.provider import GeminiProvider
from tests.api.native.native_fakes import FakeGemini, json_reply, sse_reply
from tests.providers.video_fakes import upstream

BASE = "http://gemini-images.test"
MODEL = ModelEntry(model_id="delta-x", kind="native-image", routes=frozenset(), default_protocol="gemini",
                   capabilities={"image_sizes": ["1K", "2K"], "aspect_ratios": ["1:1", "16:9"]},
                   owned_by="delta", created=0)


def png(size=(32, 32), colour=(10, 200, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "PNG")
    return buffer.getvalue()


def image_part(data: bytes, thought: bool = False) -> dict:
    return {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(data).decode()}, "thought": thought}


def answer(*parts: dict, usage: dict | None = None, **extra) -> dict:
    frame = {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "index": 0}], **extra}
    if usage:
        frame["usageMetadata"] = usage
    return frame


@pytest.fixture
def fake():
    vendor = FakeGemini()
    http.mount(BASE, StreamingASGITransport(vendor))
    yield vendor
    http.unmount(BASE)


def provider() -> GeminiProvider:
    return GeminiProvider(upstream("gemini", BASE, "AIza-key"))


def job(route=GENERATIONS, **fields) -> ImageJob:
    return ImageJob(route=route, model=MODEL, family="native", fields=fields, prompt="a green square")


async def test_generation_sends_the_prompt_and_size_and_reads_the_final_image(fake):
    final = png((64, 36))
    fake.queue(json_reply(answer(image_part(png(), thought=True), {"text": "done"}, image_part(final),
                                 usage={"promptTokenCount": 4, "totalTokenCount": 1300,
                                        "candidatesTokensDetails": [{"modality": "IMAGE", "tokenCount": 1290}]})))
    result = await provider().images_run(job(size="1920x1080", quality="high"), "gemini-x-image")
    sent = fake.requests[0]
    assert sent.path == "/v1beta/models/gemini-x-image:generateContent"
    assert sent.headers["x-goog-api-key"] == "AIza-key"
    assert sent.json() == {"contents": [{"role": "user", "parts": [{"text": "a green square"}]}],
                           "generationConfig": {"responseModalities": ["TEXT", "IMAGE"],
                                                "imageConfig": {"aspectRatio": "16:9", "imageSize": "2K"}}}
    assert [item.raw() for item in result.items] == [final]
    assert result.items[0].size == "64x36" and result.text == "done"
    assert result.usage["output_tokens"] == 1296 and result.usage["output_tokens_details"]["image_tokens"] == 1290
    assert result.echo["size"] == "64x36" and result.echo["quality"] == "high"


async def test_an_edit_sends_every_input_image(fake):
    fake.queue(json_reply(answer(image_part(png()))))
    source = png(colour=(1, 2, 3))
    edit = job(EDITS)
    edit.images = [SourceImage(data=source, mime="image/png", width=32, height=32, field="image")]
    await provider().images_run(edit, "gemini-x-image")
    parts = fake.requests[0].json()["contents"][0]["parts"]
    assert parts[1] == {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(source).decode()}}


async def test_no_image_is_a_refusal_naming_the_reason(fake):
    fake.queue(json_reply({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}))
    with pytest.raises(UpstreamRejected) as caught:
        await provider().images_run(job(), "gemini-x-image")
    assert caught.value.code == "moderation_blocked" and "PROHIBITED_CONTENT" in caught.value.message


async def test_a_size_the_model_cannot_make_is_refused_before_the_call(fake):
    with pytest.raises(BadRequest) as caught:
        await provider().images_run(job(size="1000x300"), "gemini-x-image")
    assert caught.value.param == "size"
    assert fake.requests == []


async def test_stream_previews_thought_images_then_the_final_one(fake):
    first, second, final = png(colour=(1, 1, 1)), png(colour=(2, 2, 2)), png(colour=(3, 3, 3))
    fake.queue(sse_reply(answer(image_part(first, thought=True)), answer(image_part(second, thought=True)),
                         answer(image_part(final), usage={"promptTokenCount": 2, "totalTokenCount": 10})))
    events = [e async for e in provider().images_stream(job(partial_images=1, stream=True), "gemini-x-image")]
    assert fake.requests[0].path == "/v1beta/models/gemini-x-image:streamGenerateContent"
    assert fake.requests[0].query == "alt=sse"
    assert [e.kind for e in events] == ["partial", "item", "completed"]
    assert events[0].item.raw() == first and events[1].item.raw() == final
    assert events[2].usage["total_tokens"] == 10
    assert orjson.loads(fake.requests[0].body)["contents"][0]["parts"][0]["text"] == "a green square"
