"""The official google-genai SDK, pointed at the gateway, works unmodified (a real server on a port)."""

from __future__ import annotations

import io

import pytest
from google import genai
from google.genai import types
from PIL import Image

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"


@pytest.fixture
def sdk(live_asgi, alice) -> genai.Client:
    return genai.Client(api_key=alice.secret, http_options=types.HttpOptions(base_url=live_asgi, api_version="v1"))


def final_images(parts) -> list[Image.Image]:
    return [Image.open(io.BytesIO(p.inline_data.data)) for p in parts if p.inline_data and not p.thought]


def test_generate_content(sdk):
    response = sdk.models.generate_content(
        model=MODEL, contents="a lighthouse on a cliff",
        config=types.GenerateContentConfig(response_modalities=["TEXT", "IMAGE"],
                                           image_config=types.ImageConfig(aspect_ratio="16:9", image_size="512")),
    )
    parts = response.candidates[0].content.parts
    (image,) = final_images(parts)
    assert image.size == (688, 384)
    assert response.text.startswith("Here is your image")
    assert response.usage_metadata.total_token_count > 747
    assert response.candidates[0].finish_reason == types.FinishReason.STOP


def test_generate_content_stream(sdk):
    chunks = list(sdk.models.generate_content_stream(
        model="delta-3-pro-image", contents="a paper boat",
        config=types.GenerateContentConfig(image_config=types.ImageConfig(image_size="1K")),
    ))
    assert len(chunks) >= 3
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    assert any(p.thought for p in parts)  # thoughts arrive before the final image
    (image,) = final_images(parts)
    assert image.size == (1024, 1024)
    assert chunks[-1].usage_metadata.total_token_count > 0


def test_gateway_errors_reach_the_sdk_as_its_errors(sdk, live_asgi):
    from google.genai import errors

    with pytest.raises(errors.ClientError) as info:
        sdk.models.generate_content(model=MODEL, contents="x",
                                    config=types.GenerateContentConfig(image_config=types.ImageConfig(image_size="8K")))
    assert info.value.code == 400 and "imageSize" in info.value.message
    bad = genai.Client(api_key="AIzaSyVendorKey", http_options=types.HttpOptions(base_url=live_asgi, api_version="v1"))
    with pytest.raises(errors.ClientError) as info:
        bad.models.generate_content(model=MODEL, contents="x")
    assert info.value.code == 401


@pytest.mark.parametrize("streamed", [False, True])
def test_multi_turn_edit_through_chat_keeps_signatures(sdk, streamed):
    chat = sdk.chats.create(model=MODEL, config=types.GenerateContentConfig(
        response_modalities=["TEXT", "IMAGE"], image_config=types.ImageConfig(image_size="512", aspect_ratio="1:1"),
        thinking_config=types.ThinkingConfig(include_thoughts=True)))

    def send(message: str):
        if streamed:
            return [p for c in chat.send_message_stream(message) for p in c.candidates[0].content.parts]
        return chat.send_message(message).candidates[0].content.parts

    first = final_images(send("a red apple on a white table"))[0]
    second_parts = send("now make the background dark blue")  # strict replay accepts the history
    (second,) = final_images(second_parts)
    assert second.size == first.size
    assert "edited" in "".join(p.text or "" for p in second_parts if not p.thought)
    history = chat.get_history()
    roles = [c.role for c in history]  # a streamed answer is kept as one model content per chunk
    assert roles[0] == "user" and roles.count("user") == 2 and roles[-1] == "model"
    assert any(p.thought_signature for c in history if c.role == "model" for p in c.parts)
