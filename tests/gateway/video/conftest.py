"""Fixtures of the video engine tests: a faked Ark vendor and file host, and task rows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from studio.providers import http
from tests.providers.video_fakes import FakeVendor

ARK_BASE = "https://ark-unit.test"
FILES_BASE = "https://files-unit.test"
TASKS = "/api/v3/contents/generations/tasks"


class FileHost:
    """An ASGI app serving fixed bytes per path (the vendor's result URLs)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, bytes]] = {}
        self.requests: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.requests.append(scope["path"])
        status, body = self.files.get(scope["path"], (404, b"missing"))
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    def url(self, path: str) -> str:
        return FILES_BASE + path


@pytest.fixture
def file_host():
    host = FileHost()
    http.mount(FILES_BASE, httpx.ASGITransport(app=host))
    yield host
    http.unmount(FILES_BASE)


@pytest.fixture
def ark(catalog):
    """A FakeVendor mounted at ``ARK_BASE`` and the Upstream row pointing at it: ``(fake, upstream)``."""
    from studio.models import Upstream

    fake = FakeVendor({})
    http.mount(ARK_BASE, httpx.ASGITransport(app=fake))
    upstream = Upstream(name="Ark unit", protocol="ark", base_url=ARK_BASE, priority=50,
                        model_map={"alpha-2.0": "seedance-unit"})
    upstream.credential = "ark-unit-credential"
    upstream.save()
    yield fake, upstream
    http.unmount(ARK_BASE)


@pytest.fixture
def make_task(ark) -> Callable[..., object]:
    """A task row on the faked Ark upstream, due for polling now (sync; use sync_to_async in async tests)."""
    from studio.models import VideoTask

    _, upstream = ark

    def make(user, **fields):
        now = timezone.now()
        values = dict(user=user, protocol="ark", model_id="alpha-2.0", upstream=upstream, upstream_protocol="ark",
                      upstream_model="seedance-unit", upstream_task_id="cgt-up-1", status="running",
                      next_poll_at=now - timedelta(seconds=1), expires_at=now + timedelta(days=1), event_seq=1,
                      prompt="tide pools")
        values.update(fields)
        return VideoTask.objects.create(**values)

    return make
