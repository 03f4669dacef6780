"""The sandbox's embedding vendors spoken to directly: deterministic unit vectors where similar texts
are close, each vendor's options (dimensions, base64, outputDimensionality) and its refusals."""

from __future__ import annotations

import base64
import math
import struct

import httpx
import pytest

from studio.providers.asgi_transport import StreamingASGITransport
from studio.sandbox.app import application
from studio.sandbox.embedding_vectors import token_vector, vector


@pytest.fixture
async def sandbox():
    async with httpx.AsyncClient(transport=StreamingASGITransport(application), base_url="http://sandbox") as c:
        yield c


def dot(a, b) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_deterministic_unit_length_and_similar_for_similar_texts():
    cat, cats, bonds = (vector(t, 512) for t in ("the cat sat on the mat", "cats sitting on mats", "bond yields rise"))
    assert vector("the cat sat on the mat", 512) == cat
    assert math.isclose(math.sqrt(dot(cat, cat)), 1.0, rel_tol=1e-6)
    assert dot(cat, cats) > dot(cat, bonds) + 0.1
    assert len(vector("", 64)) == 64 and math.isclose(math.sqrt(dot(vector("", 64), vector("", 64))), 1.0)


async def test_openai_embeddings_base64_dimensions_and_refusals(sandbox):
    auth = {"Authorization": "Bearer k"}
    answer = (await sandbox.post("/v1/embeddings", headers=auth, json={
        "model": "text-embedding-3-small", "input": ["a", "b"], "dimensions": 8, "encoding_format": "base64"})).json()
    first = struct.unpack("<8f", base64.b64decode(answer["data"][0]["embedding"]))
    assert first == pytest.approx(vector("a", 8), abs=1e-6) and answer["usage"]["prompt_tokens"] > 0
    refused = await sandbox.post("/v1/embeddings", headers=auth, json={
        "model": "text-embedding-ada-002", "input": "a", "dimensions": 8})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "dimensions"
    empty = await sandbox.post("/v1/embeddings", headers=auth, json={"model": "text-embedding-3-small", "input": ""})
    assert empty.status_code == 400 and empty.json()["error"]["param"] == "input"


async def test_gemini_embed_and_batch(sandbox):
    key = {"x-goog-api-key": "k"}
    one = (await sandbox.post("/v1beta/models/gemini-embedding-001:embedContent", headers=key, json={
        "content": {"parts": [{"text": "hello"}]}, "outputDimensionality": 128})).json()
    assert one["embedding"]["values"] == vector("hello", 128)
    batch = (await sandbox.post("/v1beta/models/gemini-embedding-001:batchEmbedContents", headers=key, json={
        "requests": [{"model": "models/gemini-embedding-001", "content": {"parts": [{"text": t}]}} for t in "ab"]}))
    assert [len(e["values"]) for e in batch.json()["embeddings"]] == [3072, 3072]
    small = await sandbox.post("/v1beta/models/gemini-embedding-001:embedContent", headers=key, json={
        "content": {"parts": [{"text": "x"}]}, "outputDimensionality": 64})
    assert small.status_code == 400 and small.json()["error"]["status"] == "INVALID_ARGUMENT"


async def test_openai_embeddings_of_token_ids(sandbox):
    auth = {"Authorization": "Bearer k"}
    cat, cats, bonds = [791, 8415, 7731, 389, 279, 5634], [791, 8415, 7731, 389, 264, 5634], [9071, 36508, 10205]
    answer = (await sandbox.post("/v1/embeddings", headers=auth, json={
        "model": "text-embedding-3-small", "input": [cat, cats, bonds], "dimensions": 64})).json()
    vectors = [item["embedding"] for item in answer["data"]]
    assert vectors[0] == pytest.approx(token_vector(cat, 64)) and answer["usage"]["prompt_tokens"] == 15
    assert dot(vectors[0], vectors[1]) > dot(vectors[0], vectors[2]) + 0.3
    one = (await sandbox.post("/v1/embeddings", headers=auth, json={
        "model": "text-embedding-3-small", "input": cat, "dimensions": 64})).json()  # one array of ids
    assert [item["embedding"] for item in one["data"]] == [vectors[0]] and one["usage"]["prompt_tokens"] == 6
    for bad in (["a cat", [1, 2]], [[1, -2]], [[]], [[True]]):
        refused = await sandbox.post("/v1/embeddings", headers=auth, json={"model": "text-embedding-3-small",
                                                                            "input": bad})
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "input", bad
    long = await sandbox.post("/v1/embeddings", headers=auth, json={"model": "text-embedding-3-small",
                                                                     "input": [[7] * 9000]})
    assert long.status_code == 400
    assert long.json()["error"]["message"].startswith("This model's maximum context length is 8192 tokens, "
                                                      "however you requested 9000 tokens")
