"""Captured DashScope bodies replayed through the DashScope adapter (fake vendor at the HTTP boundary)."""

from __future__ import annotations

import pytest

from studio.core.errors import UpstreamError
from studio.providers.dashscope.provider import DashScopeProvider
from tests.providers.captured import captured
from tests.providers.video_fakes import mount_vendors, upstream

BASE = "https://dashscope.fake.test"


@pytest.fixture
def vendor():
    yield from mount_vendors(BASE)


def provider() -> DashScopeProvider:
    return DashScopeProvider(upstream("dashscope", f"{BASE}/api/v1", "sk-ds"))


async def test_create_and_every_task_record(vendor):
    records = {name: captured("dashscope", name) for name in ("task_succeeded", "task_failed", "task_unknown")}
    replies = {("POST", "/api/v1/services/aigc/video-generation/video-synthesis"):
               (200, captured("dashscope", "create_task"))}
    replies.update({("GET", f"/api/v1/tasks/{r['output']['task_id']}"): (200, r) for r in records.values()})
    vendor(replies)
    p = provider()
    assert await p.video_create({"model": "wan2.6-t2v", "input": {"prompt": "x"}}) == \
        "b3be072e-cc82-4033-8fb7-0b089846544f"
    states = {name: p.video_state(await p.video_get(r["output"]["task_id"])) for name, r in records.items()}
    assert states["task_succeeded"].status == "succeeded" and states["task_succeeded"].video_url.startswith("https://")
    assert (states["task_failed"].status, states["task_failed"].error_code) == ("failed", "InvalidParameter")
    assert states["task_unknown"].status == "unknown" and states["task_unknown"].terminal


async def test_invalid_api_key_is_the_gateways_problem(vendor):
    vendor({("GET", "/api/v1/tasks/t-1"): (401, captured("dashscope", "error_invalid_api_key"))})
    with pytest.raises(UpstreamError) as info:
        await provider().video_get("t-1")
    assert "Invalid API-key" in info.value.message
