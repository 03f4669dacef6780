"""Media files: only for those allowed (404 otherwise), streamed, with Range for seeking."""

from __future__ import annotations

import asyncio

import pytest

from studio.gateway.media.storage import store_bytes
from studio.web.files import parse_range

pytestmark = pytest.mark.django_db


def body(response) -> bytes:
    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return asyncio.run(collect())


@pytest.mark.parametrize(
    ("header", "expected"),
    [(None, None), ("bytes=0-9", (0, 9)), ("bytes=10-", (10, 99)), ("bytes=-10", (90, 99)),
     ("bytes=90-200", (90, 99)), ("items=0-1", None), ("bytes=0-1,5-6", None)],
)
def test_parse_range(header, expected):
    assert parse_range(header, 100) == expected


@pytest.fixture
def asset(django_user_model):
    owner = django_user_model.objects.create_user("owner", password="pw-owner-123")
    data = bytes(range(256)) * 1024  # 256 KiB
    return owner, store_bytes(data, "video/mp4", owner_id=owner.id), data


def test_owner_gets_the_file_and_a_range(web, asset):
    client = web
    owner, stored, data = asset
    client.force_login(owner)
    response = client.get(f"/assets/{stored.id}/file")
    assert response.status_code == 200 and body(response) == data
    assert response["Accept-Ranges"] == "bytes"
    response = client.get(f"/assets/{stored.id}/file", HTTP_RANGE="bytes=1000-1999")
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 1000-1999/{len(data)}"
    assert body(response) == data[1000:2000]
    assert client.get(f"/assets/{stored.id}/file", HTTP_RANGE=f"bytes={len(data)}-").status_code == 416


def test_others_and_anonymous_get_404(web, asset, django_user_model):
    client = web
    _, stored, _ = asset
    assert client.get(f"/assets/{stored.id}/file").status_code == 404
    client.force_login(django_user_model.objects.create_user("mallory", password="pw-mallory-1"))
    assert client.get(f"/assets/{stored.id}/file").status_code == 404
