"""A studio job on a native model: the form's request, and frames pushed as text and stored images."""

# ruff: noqa: F811  (fixtures imported from native_fakes are used as test arguments)

from __future__ import annotations

import base64
import io
import uuid

import pytest
from PIL import Image

from studio.core.errors import BadRequest
from studio.core.principal import Principal
from studio.gateway import recording
from studio.gateway.jobs.inputs import InputImage
from studio.gateway.jobs.native import NativeJob, native_body
from studio.models import Asset, Generation
from tests.api.native.native_fakes import fake_gemini, image_frame, sse_reply, text_frame  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"


def png(color: str, size=(20, 10)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_native_body_puts_references_before_the_text():
    image = InputImage(asset_id=uuid.uuid4(), mime="image/png", owner_id=1, team_id=None, data=b"abc")
    body = native_body("a boat", {"aspect_ratio": "16:9", "image_size": "2K", "seed": "42"}, [image])
    assert body == {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": "YWJj"}}, {"text": "a boat"}]}],
        "generationConfig": {"responseModalities": ["TEXT", "IMAGE"],
                             "imageConfig": {"aspectRatio": "16:9", "imageSize": "2K"}, "seed": 42}}
    assert "seed" not in native_body("x", {"seed": ""}, [])["generationConfig"]


@pytest.mark.parametrize("seed", ["abc", -1, 2**31])
def test_bad_seeds_name_the_field(seed):
    with pytest.raises(BadRequest) as exc:
        native_body("x", {"seed": seed}, [])
    assert exc.value.param == "seed"


async def test_frames_become_text_and_stored_images(alice, fake_gemini):
    thought = text_frame("drafting", thought=True)
    draft = image_frame(png("gray"), finish=None, usage=False)
    draft["candidates"][0]["content"]["parts"][0]["thought"] = True
    final = image_frame(png("gold", (40, 30)))
    fake_gemini["fake-gemini"].queue(sse_reply(thought, draft, text_frame("Here it is"), final))
    principal = Principal(user_id=alice.user.id)
    body = native_body("a lamp", {}, [])
    job = NativeJob(principal, MODEL, body, "a lamp")
    await job.prepare()
    await job.run()
    await recording.drain()
    events = (await Generation.objects.aget(id=job.id)).events
    kinds = [e["type"] for e in events]
    assert kinds == ["job.started", "job.text", "job.image", "job.text", "job.image", "job.completed"]
    assert events[1]["data"] == {"text": "drafting", "thought": True}
    draft_event, final_event = events[2]["data"], events[4]["data"]
    assert draft_event["thought"] is True and final_event["thought"] is False
    assert (final_event["width"], final_event["height"]) == (40, 30)
    assert all("data" not in e["data"] or len(str(e["data"])) < 1000 for e in events)  # URLs, never base64
    final_asset = await Asset.objects.aget(id=final_event["asset"])
    assert final_asset.generation_id == job.id and not final_asset.is_draft
    assert (await Asset.objects.aget(id=draft_event["asset"])).is_draft
    assert events[-1]["data"]["images"] == 1 and events[-1]["data"]["finish_reason"] == "STOP"
    assert job.outputs == [final_asset.id]
    generation = await Generation.objects.aget(id=job.id)
    assert generation.route == "studio" and generation.status == "succeeded"
    # The output stored during the stream is the record's: the recorder does not store it again.
    assert await Asset.objects.filter(generation_id=job.id, is_draft=False).acount() == 1


async def test_prompt_feedback_is_pushed(alice, fake_gemini):
    fake_gemini["fake-gemini"].queue(sse_reply({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}))
    job = NativeJob(Principal(user_id=alice.user.id), MODEL, native_body("x", {}, []), "x")
    await job.prepare()
    await job.run()
    events = (await Generation.objects.aget(id=job.id)).events
    feedback = [e for e in events if e["type"] == "job.feedback"]
    assert feedback[0]["data"] == {"prompt_feedback": {"blockReason": "PROHIBITED_CONTENT"}}
    assert events[-1]["data"]["block_reason"] == "PROHIBITED_CONTENT" and events[-1]["data"]["images"] == 0


async def test_invalid_requests_are_refused_before_any_row(alice, fake_gemini):
    body = native_body("x", {"image_size": "8K"}, [])
    job = NativeJob(Principal(user_id=alice.user.id), MODEL, body, "x")
    with pytest.raises(BadRequest) as exc:
        await job.prepare()
    assert exc.value.param == "generationConfig.imageConfig.imageSize"
    assert not await Generation.objects.filter(id=job.id).aexists()
