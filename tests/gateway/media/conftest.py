"""Fixtures of the media tests: small real images."""

from __future__ import annotations

import pytest

from tests.gateway.media.samples import image_bytes


@pytest.fixture(scope="module")
def png() -> bytes:
    return image_bytes("PNG")


@pytest.fixture(scope="module")
def jpeg() -> bytes:
    return image_bytes("JPEG", (32, 24))


@pytest.fixture(scope="module")
def webp() -> bytes:
    return image_bytes("WEBP", (32, 24))
