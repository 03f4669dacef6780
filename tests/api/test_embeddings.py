"""Embeddings through both inbound shapes and both upstream protocols (the sandbox), with the
official openai and google-genai clients at their defaults against a live server."""

from __future__ import annotations

import math
import time

import pytest
from google import genai
from google.genai import types

from tests.gateway.spend_support import backend  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)
TEXTS = ["the cat sat on the mat", "a cat sits on a mat", "quarterly bond market report"]


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


@pytest.fixture
def openai_sdk(live_asgi, alice):
    import openai

    return openai.OpenAI(base_url=f"{live_asgi}/v1", api_key=alice.secret, max_retries=0)


@pytest.fixture
def genai_sdk(live_asgi, alice) -> genai.Client:
    return genai.Client(api_key=alice.secret, http_options=types.HttpOptions(base_url=live_asgi))


@pytest.mark.parametrize("model, size", [("omicron-embed-3-small", 1536), ("delta-embedding-1", 3072)])
def test_openai_client_default_base64_similar_texts_are_close(openai_sdk, model, size):
    result = openai_sdk.embeddings.create(model=model, input=TEXTS)  # the client asks for base64
    vectors = [item.embedding for item in result.data]
    assert [len(v) for v in vectors] == [size] * 3 and result.model == model
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.2
    assert abs(math.hypot(*vectors[0]) - 1) < 1e-3 and result.usage.prompt_tokens > 0
    again = openai_sdk.embeddings.create(model=model, input=TEXTS[0], encoding_format="float", dimensions=256)
    assert len(again.data[0].embedding) == 256


@pytest.mark.parametrize("model", ["delta-embedding-1", "omicron-embed-3-small"])
def test_genai_client_embed_content(genai_sdk, model):
    result = genai_sdk.models.embed_content(model=model, contents=TEXTS,
                                            config=types.EmbedContentConfig(output_dimensionality=256))
    vectors = [e.values for e in result.embeddings]
    assert [len(v) for v in vectors] == [256] * 3
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    same = genai_sdk.models.embed_content(model=model, contents=TEXTS[0],
                                          config=types.EmbedContentConfig(output_dimensionality=256))
    assert same.embeddings[0].values == vectors[0]  # deterministic


def test_openai_client_token_ids_as_langchain_sends_them(openai_sdk):
    # LangChain's OpenAIEmbeddings splits texts into token ids itself and sends those by default.
    cat, cats, bonds = [791, 8415, 7731, 389, 279, 5634], [791, 8415, 7731, 389, 264, 5634], [9071, 36508, 10205]
    result = openai_sdk.embeddings.create(model="omicron-embed-3-small", input=[cat, cats, bonds])
    vectors = [item.embedding for item in result.data]
    assert [len(v) for v in vectors] == [1536] * 3 and result.usage.prompt_tokens == 15
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.3
    one = openai_sdk.embeddings.create(model="omicron-embed-3-small", input=cat, encoding_format="float")
    assert one.data[0].embedding == pytest.approx(vectors[0], abs=1e-6) and one.usage.prompt_tokens == 6


def test_token_ids_for_a_model_whose_upstream_takes_only_texts_are_a_400(openai_sdk):
    import openai

    with pytest.raises(openai.BadRequestError) as info:
        openai_sdk.embeddings.create(model="delta-embedding-1", input=[[791, 8415]])
    error = info.value.body
    assert error["param"] == "input" and "token ids" in error["message"] and "texts" in error["message"]


async def test_a_model_that_cannot_take_token_ids_reserves_nothing(client, alice, backend):  # noqa: F811
    from studio.models import RateLimit

    await RateLimit.objects.acreate(api_key=alice.key, rpm=1)
    headers = {"Authorization": f"Bearer {alice.secret}"}
    refused = await client.post("/v1/embeddings", headers=headers, json={"model": "delta-embedding-1",
                                                                         "input": [[791, 8415]]})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "input"
    served = await client.post("/v1/embeddings", headers=headers, json={"model": "delta-embedding-1",
                                                                        "input": "the cat"})
    assert served.status_code == 200, served.text  # the one call a minute was not spent by the refusal
    assert served.headers["x-ratelimit-remaining-requests"] == "0"


def test_usage_is_recorded_and_priced(openai_sdk, alice):
    from studio.models import UsageRecord

    result = openai_sdk.embeddings.create(model="omicron-embed-3-small", input=TEXTS)
    deadline = time.monotonic() + 20
    while not UsageRecord.objects.filter(route="embeddings").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # written off the response path
    row = UsageRecord.objects.get(route="embeddings")
    assert row.model_id == "omicron-embed-3-small" and row.input_tokens == result.usage.prompt_tokens
    assert row.cost_usd > 0 and row.api_key_id == alice.key.id


async def test_bad_input_is_a_400_naming_the_field(client, alice):
    headers = {"Authorization": f"Bearer {alice.secret}"}
    cases = [({"model": "omicron-embed-3-small", "input": ""}, "input"),
             ({"model": "omicron-embed-3-small", "input": ["a", [1, 2, 3]]}, "input"),
             ({"model": "omicron-embed-3-small", "input": [[1, -2, 3]]}, "input"),
             ({"model": "omicron-embed-3-small", "input": [[1, 2], []]}, "input"),
             ({"model": "omicron-embed-3-small", "input": [[1] * 8192]}, "input"),
             ({"model": "delta-embedding-1", "input": [[1, 2, 3]]}, "input"),
             ({"model": "omicron-embed-3-small", "input": "x", "dimensions": 5000}, "dimensions"),
             ({"model": "omicron-4-mini", "input": "x"}, "model")]
    for body, param in cases:
        response = await client.post("/v1/embeddings", json=body, headers=headers)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["error"]["param"] == param
    native = await client.post("/v1beta/models/delta-embedding-1:batchEmbedContents", headers={
        "x-goog-api-key": alice.secret}, json={"requests": [{"model": "models/other", "content": {"parts": [
            {"text": "x"}]}}]})
    assert native.status_code == 400 and "requests[0].model" in native.json()["error"]["message"]


async def test_native_embed_settings_of_the_wrong_type_are_a_400_naming_the_field(client, alice):
    headers = {"x-goog-api-key": alice.secret}
    content = {"parts": [{"text": "x"}]}
    cases = [({"model": 7, "content": content}, "requests[0].model: must be models/delta-embedding-1, the model of the request"),
             ({"content": content, "taskType": ["RETRIEVAL_QUERY"]}, "requests[0].taskType: must be a string"),
             ({"content": content, "title": {"a": 1}}, "requests[0].title: must be a string"),
             ({"content": content, "outputDimensionality": [768]},
              "requests[0].outputDimensionality: must be an integer")]
    for request, message in cases:
        response = await client.post("/v1beta/models/delta-embedding-1:batchEmbedContents", headers=headers,
                                     json={"requests": [request]})
        assert response.status_code == 400, (request, response.text)
        assert response.json()["error"]["message"] == message
    single = await client.post("/v1beta/models/delta-embedding-1:embedContent", headers=headers,
                               json={"content": content, "taskType": 3})
    assert single.status_code == 400 and single.json()["error"]["message"] == "taskType: must be a string"
