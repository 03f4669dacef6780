"""The OpenAI embeddings call, replayed from a captured vendor body."""

from __future__ import annotations

import pytest

from studio.core.embeddings import EmbeddingJob
from studio.providers.openai.provider import OpenAIProvider
from tests.providers.captured import captured
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://api.openai.fake.test/v1"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> OpenAIProvider:
    return OpenAIProvider(upstream("openai", BASE, "sk-vendor"))


async def test_embeddings_answer_is_put_back_in_input_order(vendor):
    fake = vendor({("POST", "/v1/embeddings"): (200, captured("openai", "embeddings_response"))})
    result = await provider().embed(EmbeddingJob(inputs=("first", "second"), dimensions=3), "text-embedding-3-small")
    assert result.vectors[0][0] == pytest.approx(0.0023064255) and result.input_tokens == 8
    assert fake.requests[0]["json"] == {"model": "text-embedding-3-small", "input": ["first", "second"],
                                        "encoding_format": "float", "dimensions": 3}


async def test_token_ids_go_to_the_vendor_as_arrays(vendor):
    fake = vendor({("POST", "/v1/embeddings"): (200, captured("openai", "embeddings_response"))})
    await provider().embed(EmbeddingJob(inputs=((791, 8415), (64, 8415, 11))), "text-embedding-3-small")
    assert fake.requests[0]["json"]["input"] == [[791, 8415], [64, 8415, 11]]
