"""Captured Gemini API bodies replayed through the Gemini adapter (fake vendor at the HTTP boundary)."""

from __future__ import annotations

import orjson
import pytest

from studio.core.errors import UpstreamError
from studio.gateway.native.result import NativeResult
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


async def test_generate_content_answer_is_relayed_and_reads_as_a_result(vendor):
    answer = captured("gemini", "generate_content_image")
    fake = vendor({("POST", f"{MODELS}:generateContent"): (200, answer)})
    raw = await provider().generate_content("gemini-3.1-flash-image-preview", b'{"contents":[]}')
    assert orjson.loads(raw) == answer
    assert fake.requests[0]["headers"]["x-goog-api-key"] == "AIza-vendor"
    result = NativeResult()
    result.add(orjson.loads(raw))
    assert len(result.final_images()) == 1 and result.finish_reason == "STOP"


async def test_count_tokens_is_the_vendors_count(vendor):
    fake = vendor({("POST", f"{MODELS}:countTokens"): (200, captured("gemini", "count_tokens"))})
    raw = await provider().count_tokens("gemini-3.1-flash-image-preview", b'{"contents":[{"parts":[{"text":"x"}]}]}')
    assert orjson.loads(raw)["totalTokens"] == 31 and fake.requests[0]["json"]["contents"]



async def test_invalid_key_400_is_the_gateways_problem_not_the_clients(vendor):
    vendor({("POST", f"{MODELS}:generateContent"): (400, captured("gemini", "error_api_key_invalid"))})
    with pytest.raises(UpstreamError) as info:
        await provider().generate_content("gemini-3.1-flash-image-preview", b"{}")
    assert info.value.retryable and "API key not valid" in info.value.message
