"""The official google-genai client at its defaults (``/v1beta``, ``x-goog-api-key``, ``?alt=sse``):
only its base URL and key point it at the gateway (a real server on a loopback port)."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import errors, types

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "delta-3.1-flash-image"


@pytest.fixture
def sdk(live_asgi, alice) -> genai.Client:
    return genai.Client(api_key=alice.secret, http_options=types.HttpOptions(base_url=live_asgi))


def test_generate_content_names_the_platform_model(sdk):
    response = sdk.models.generate_content(
        model=MODEL, contents="a lighthouse on a cliff",
        config=types.GenerateContentConfig(image_config=types.ImageConfig(aspect_ratio="1:1", image_size="512")),
    )
    assert any(p.inline_data for p in response.candidates[0].content.parts)
    assert response.model_version == MODEL


def test_stream_with_alt_sse_names_the_platform_model(sdk):
    chunks = list(sdk.models.generate_content_stream(model="delta-3-pro-image", contents="a paper boat"))
    assert len(chunks) >= 2
    assert {c.model_version for c in chunks if c.model_version} == {"delta-3-pro-image"}
    assert any(p.inline_data for c in chunks for p in c.candidates[0].content.parts if c.candidates)


def test_list_and_get_models_in_gemini_shape(sdk):
    listed = {m.name: m for m in sdk.models.list()}
    assert f"models/{MODEL}" in listed
    assert "omicron-4-mini" not in " ".join(listed)  # no native route: not a native model
    model = sdk.models.get(model=MODEL)
    assert model.name == f"models/{MODEL}" and model.display_name == "Delta 3.1 Flash Image"
    assert "generateContent" in model.supported_actions and model.input_token_limit > 0
    with pytest.raises(errors.ClientError) as info:
        sdk.models.get(model="no-such-model")
    assert info.value.code == 404


def test_count_tokens(sdk):
    short = sdk.models.count_tokens(model=MODEL, contents="a cat")
    long = sdk.models.count_tokens(model=MODEL, contents="a cat sitting on a red chair by the window at dusk")
    assert 0 < short.total_tokens < long.total_tokens
