"""The OpenAI provider class against a fake of the vendor: its health check, its base-URL rule
and its error mapping on a real call."""

from __future__ import annotations

import orjson
import pytest

from studio.core.errors import RateLimited, UpstreamError
from studio.providers.contracts import Capability
from tests.providers.provider_checks import RecordingVendor, bound

HOST = "https://openai-check.test"


@pytest.mark.parametrize("base", [HOST, HOST + "/v1"])
async def test_check_lists_models_with_the_bearer_credential(base):
    with RecordingVendor(HOST, body=b'{"object": "list", "data": []}') as fake:
        assert await bound("openai", base).check() == 200
    (request,) = fake.requests
    assert (request["method"], request["path"]) == ("GET", "/v1/models")
    assert request["headers"]["authorization"] == "Bearer vendor-credential"


@pytest.mark.parametrize(("status", "kind", "code"), [
    (401, UpstreamError, "invalid_api_key"), (429, RateLimited, "rate_limit_exceeded"),
])
async def test_vendor_error_bodies_become_typed_errors(status, kind, code):
    body = orjson.dumps({"error": {"message": f"vendor says {code}", "type": "x", "param": None, "code": code}})
    with RecordingVendor(HOST, status=status, body=body), pytest.raises(kind) as caught:
        await bound("openai", HOST).check()
    assert f"vendor says {code}" in caught.value.message


async def test_declares_images_text_and_embeddings_in_the_openai_formats():
    provider = bound("openai", HOST)
    assert provider.capabilities == {Capability.IMAGES, Capability.TEXT, Capability.EMBEDDINGS,
                                     Capability.EMBEDDING_TOKENS}
    assert set(provider.text_formats) >= {"chat", "responses"}
