"""Fixtures of the images engine tests: vendors faked at HTTP, and the provider for each."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from studio.providers import http
from studio.providers.asgi_transport import StreamingASGITransport
from studio.providers.registry import vendor as registry_vendor
from tests.api.native.native_fakes import FakeGemini
from tests.gateway.catalog import upstream_entry
from tests.providers.fake_text_vendor import FakeVendor


def png(color: str = "red", size: tuple[int, int] = (24, 16)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
async def gemini():
    """A FakeGemini and a Gemini-protocol provider pointed at it: ``(fake, provider)``."""
    base = "http://images-gemini.test"
    fake = FakeGemini()
    http.mount(base, StreamingASGITransport(fake))
    entry = upstream_entry(71, protocol="gemini")
    entry = type(entry)(**{**{f: getattr(entry, f) for f in entry.__dataclass_fields__}, "base_url": base})
    yield fake, registry_vendor("gemini").provider(entry)
    http.unmount(base)


def vendor(protocol: str, base: str, id: int):
    fake = FakeVendor(base)
    fake.mount()
    entry = upstream_entry(id, protocol=protocol)
    entry = type(entry)(**{**{f: getattr(entry, f) for f in entry.__dataclass_fields__}, "base_url": base})
    return fake, registry_vendor(protocol).provider(entry)


@pytest.fixture
async def openai_images():
    fake, provider = vendor("openai", "http://images-openai.test/v1", 72)
    yield fake, provider
    fake.unmount()


@pytest.fixture
async def ark_images():
    fake, provider = vendor("ark", "http://images-ark.test/api/v3", 73)
    yield fake, provider
    fake.unmount()
