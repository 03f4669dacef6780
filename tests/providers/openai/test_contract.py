"""Captured OpenAI bodies replayed through the OpenAI adapter (fake vendor at the HTTP boundary)."""

from __future__ import annotations

import pytest

from studio.core.errors import UpstreamRejected
from studio.core.images import GENERATIONS, ImageJob
from studio.providers.openai.provider import OpenAIProvider
from tests.providers.captured import captured, model
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://api.openai.fake.test/v1"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> OpenAIProvider:
    return OpenAIProvider(upstream("openai", BASE, "sk-vendor"))


def job() -> ImageJob:
    return ImageJob(route=GENERATIONS, model=model(), family="standard", fields={"prompt": "a fox", "n": 1},
                    prompt="a fox")


async def test_images_answer_reads_into_items_usage_and_echo(vendor):
    vendor({("POST", "/v1/images/generations"): (200, captured("openai", "images_response"))})
    result = await provider().images_run(job(), "gpt-image-1.5")
    assert len(result.items) == 1 and result.items[0].ok and result.items[0].raw().startswith(b"\x89PNG")
    assert result.usage["total_tokens"] == 4210
    assert result.echo == {"background": "opaque", "output_format": "png", "quality": "high", "size": "1024x1024"}



async def test_moderation_block_is_the_clients_400_with_the_vendors_code(vendor):
    vendor({("POST", "/v1/images/generations"): (400, captured("openai", "error_moderation_blocked"))})
    with pytest.raises(UpstreamRejected) as info:
        await provider().images_run(job(), "gpt-image-1.5")
    assert info.value.status == 400 and info.value.code == "moderation_blocked"
