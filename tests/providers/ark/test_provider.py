"""The Ark provider class against a fake of the vendor: its health check, its base-URL rule and
its error mapping on a real call."""

from __future__ import annotations

import orjson
import pytest

from studio.core.errors import UpstreamError
from studio.providers.contracts import Capability
from tests.providers.provider_checks import RecordingVendor, bound

HOST = "https://ark-check.test"


@pytest.mark.parametrize("base", [HOST, HOST + "/api/v3", HOST + "/api/v3/"])
async def test_check_lists_one_task_with_the_bearer_credential(base):
    with RecordingVendor(HOST, body=b'{"items": [], "total": 0}') as fake:
        assert await bound("ark", base).check() == 200
    (request,) = fake.requests
    assert (request["method"], request["path"]) == ("GET", "/api/v3/contents/generations/tasks")
    assert request["query"] == "page_num=1&page_size=1"
    assert request["headers"]["authorization"] == "Bearer vendor-credential"


async def test_a_refused_credential_is_the_gateways_problem_named_by_the_vendor():
    body = orjson.dumps({"error": {"code": "AuthenticationError", "message": "the API key is invalid"}})
    with RecordingVendor(HOST, status=401, body=body), pytest.raises(UpstreamError) as caught:
        await bound("ark", HOST).check()
    assert caught.value.status == 502 and "the API key is invalid" in caught.value.message


async def test_declares_images_and_video_tasks():
    provider = bound("ark", HOST)
    assert provider.capabilities == {Capability.IMAGES, Capability.VIDEO_TASKS}
    assert provider.video_format == "ark"
