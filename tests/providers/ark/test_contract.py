"""Captured Ark bodies replayed through the Ark adapter; one base-URL rule for images and tasks."""

from __future__ import annotations

import pytest

from studio.core.errors import UpstreamError
from studio.core.images import GENERATIONS, ImageJob
from studio.providers.ark.provider import ArkProvider
from tests.providers.captured import captured, model
from tests.providers.video_fakes import mount_vendors, upstream

HOST = "https://ark.cn-beijing.fake.test"
TASKS = "/api/v3/contents/generations/tasks"


@pytest.fixture
def vendor():
    yield from mount_vendors(HOST)


@pytest.mark.parametrize("base", [f"{HOST}/api/v3", f"{HOST}/api/v3/", HOST])
async def test_documented_and_bare_base_urls_reach_the_same_paths(vendor, base):
    fake = vendor({("POST", TASKS): (200, captured("ark", "create_task")),
                   ("POST", "/api/v3/images/generations"): (200, captured("ark", "images_response"))})
    provider = ArkProvider(upstream("ark", base, "ark-key"))
    assert await provider.video_create({"model": "m", "content": []}) == "cgt-20260514183217-t8rzv"
    job = ImageJob(route=GENERATIONS, model=model(protocol="ark"), family="layered",
                   fields={"prompt": "x", "response_format": "b64_json"}, prompt="x")
    result = await provider.images_run(job, "seedream-5-0-260128")
    assert [r["path"] for r in fake.requests] == [TASKS, "/api/v3/images/generations"]
    assert result.items[0].ok and result.items[1].error["code"] == "OutputImageSensitiveContentDetected"
    assert result.usage["generated_images"] == 1


async def test_task_records_read_into_states(vendor):
    done, failed = captured("ark", "task_succeeded"), captured("ark", "task_failed")
    vendor({("GET", f"{TASKS}/{done['id']}"): (200, done), ("GET", f"{TASKS}/{failed['id']}"): (200, failed)})
    provider = ArkProvider(upstream("ark", f"{HOST}/api/v3", "ark-key"))
    state = provider.video_state(await provider.video_get(done["id"]))
    assert state.status == "succeeded" and state.video_url.endswith("X-Tos-Expires=86400")
    assert state.last_frame_url.endswith("last.png")
    state = provider.video_state(await provider.video_get(failed["id"]))
    assert (state.status, state.error_code) == ("failed", "OutputVideoSensitiveContentDetected")


async def test_cancel_is_a_delete_and_a_bad_key_is_the_gateways_problem(vendor):
    fake = vendor({("DELETE", f"{TASKS}/cgt-1"): (200, {}),
                   ("GET", f"{TASKS}/cgt-2"): (401, captured("ark", "error_unauthorized"))})
    provider = ArkProvider(upstream("ark", f"{HOST}/api/v3", "ark-key"))
    await provider.video_cancel("cgt-1")
    assert fake.requests[0]["method"] == "DELETE"
    with pytest.raises(UpstreamError):
        await provider.video_get("cgt-2")
