"""The Gemini embeddings call, replayed from a captured vendor body."""

from __future__ import annotations

import pytest

from studio.core.embeddings import EmbeddingJob
from studio.providers.gemini.provider import GeminiProvider
from tests.providers.captured import captured
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://generativelanguage.fake.test/v1beta"
MODELS = "/v1beta/models/gemini-3.1-flash-image-preview"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> GeminiProvider:
    return GeminiProvider(upstream("gemini", BASE, "AIza-vendor"))


async def test_batch_embed_contents_request_and_answer(vendor):
    path = "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    fake = vendor({("POST", path): (200, captured("gemini", "batch_embed_contents"))})
    job = EmbeddingJob(inputs=("a cat", "a dog"), dimensions=768, task_type="SEMANTIC_SIMILARITY")
    result = await provider().embed(job, "gemini-embedding-001")
    assert result.vectors[0][0] == pytest.approx(0.013168523) and len(result.vectors) == 2
    assert result.input_tokens > 0  # the vendor reports none here: estimated
    sent = fake.requests[0]["json"]["requests"]
    assert sent[1] == {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "a dog"}]},
                       "taskType": "SEMANTIC_SIMILARITY", "outputDimensionality": 768}
