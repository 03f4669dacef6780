"""Engine behaviour around vendors: failover at creation, polling with the creating upstream, mirroring limits."""

from __future__ import annotations

import httpx
import pytest

from studio.providers import http
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401
from tests.providers.video_fakes import FakeVendor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/alpha/video/generations"
TASKS = "/api/v3/contents/generations/tasks"
BODY = {"model": "alpha-2.0", "content": [{"type": "text", "text": "fireflies"}], "resolution": "480p",
        "duration": 4}


@pytest.fixture
def ark_vendor():
    mounted = []

    def mount(base: str, replies: dict) -> FakeVendor:
        fake = FakeVendor(replies)
        http.mount(base, httpx.ASGITransport(app=fake))
        mounted.append(base)
        return fake

    yield mount
    for base in mounted:
        http.unmount(base)


def add_upstream(name: str, base: str, credential: str, priority: int):
    from studio.models import Upstream

    upstream = Upstream(name=name, protocol="ark", base_url=base, priority=priority,
                        model_map={"alpha-2.0": "dreamina-seedance-2-0-260128"})
    upstream.credential = credential
    upstream.save()
    return upstream


async def test_create_fails_over_to_the_next_real_upstream_on_a_retryable_error(client, alice, ark_vendor):
    from asgiref.sync import sync_to_async

    from studio.models import VideoTask

    down = ark_vendor("https://ark-down.test", {("POST", TASKS): (503, {"error": {"code": "ServerOverloaded",
                                                                                  "message": "busy"}})})
    up = ark_vendor("https://ark-up.test", {("POST", TASKS): (200, {"id": "cgt-up"})})
    await sync_to_async(add_upstream)("ark-down", "https://ark-down.test", "k-down", priority=10)
    await sync_to_async(add_upstream)("ark-up", "https://ark-up.test", "k-up", priority=5)
    response = await client.post(URL, json=BODY, headers=auth(alice.secret))
    assert response.status_code == 200, response.text
    row = await VideoTask.objects.select_related("upstream").aget(id=response.json()["id"])
    assert row.upstream.name == "ark-up" and row.upstream_task_id == "cgt-up"
    assert len(down.requests) == 1 and len(up.requests) == 1


async def test_an_accepted_create_without_a_task_id_is_a_502_not_retried_on_the_next_upstream(client, alice,
                                                                                          ark_vendor):
    from asgiref.sync import sync_to_async

    from studio.models import VideoTask

    odd = ark_vendor("https://ark-odd.test", {("POST", TASKS): (200, {"task": {"id": "cgt-odd"}})})
    up = ark_vendor("https://ark-up.test", {("POST", TASKS): (200, {"id": "cgt-up"})})
    await sync_to_async(add_upstream)("ark-odd", "https://ark-odd.test", "k-odd", priority=10)
    await sync_to_async(add_upstream)("ark-up", "https://ark-up.test", "k-up", priority=5)
    response = await client.post(URL, json=BODY, headers=auth(alice.secret))
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert "no task id" in error["message"] and "'id'" in error["message"]
    # The first upstream may have made the task: making it again on the next would be paid twice.
    assert len(odd.requests) == 1 and len(up.requests) == 0
    assert await VideoTask.objects.acount() == 0


async def test_a_failing_real_upstream_is_never_answered_by_the_sandbox(client, alice, ark_vendor):
    from asgiref.sync import sync_to_async

    from studio.models import SandboxVideoJob, VideoTask

    down = ark_vendor("https://ark-down.test", {("POST", TASKS): (503, {"error": {"code": "ServerOverloaded",
                                                                                  "message": "busy"}})})
    await sync_to_async(add_upstream)("ark-down", "https://ark-down.test", "k-down", priority=10)
    response = await client.post(URL, json=BODY, headers=auth(alice.secret))
    assert response.status_code >= 500, response.text
    assert "error" in response.json() and "id" not in response.json()
    assert len(down.requests) == 1
    assert await VideoTask.objects.acount() == 0 and await SandboxVideoJob.objects.acount() == 0


async def test_task_is_polled_with_the_upstream_and_credential_that_created_it(client, alice, ark_vendor):
    from asgiref.sync import sync_to_async

    from studio.models import Upstream, VideoTask

    fake = ark_vendor("https://ark-a.test", {
        ("POST", TASKS): (200, {"id": "cgt-from-a"}),
        ("GET", f"{TASKS}/cgt-from-a"): (200, {"id": "cgt-from-a", "status": "failed",
                                               "error": {"code": "InternalServiceError", "message": "gone"}}),
    })
    await sync_to_async(add_upstream)("ark-a", "https://ark-a.test", "cred-a", priority=10)
    task_id = (await client.post(URL, json=BODY, headers=auth(alice.secret))).json()["id"]
    # The operator disables the upstream (and adds another) while the task runs.
    await Upstream.objects.filter(name="ark-a").aupdate(enabled=False)
    from studio.gateway import snapshot

    snapshot.invalidate()
    await poll_until_terminal(task_id)
    gets = [r for r in fake.requests if r["method"] == "GET"]
    assert gets and all(r["headers"]["authorization"] == "Bearer cred-a" for r in gets)
    row = await VideoTask.objects.aget(id=task_id)
    assert row.status == "failed" and row.error_code == "InternalServiceError"
    sent = fake.requests[0]["json"]
    assert sent["model"] == "dreamina-seedance-2-0-260128" and "/v1/video/callbacks/" in sent["callback_url"]


async def test_mirror_over_the_size_limit_keeps_the_upstream_url(client, alice, settings):
    from studio.models import VideoTask

    settings.STUDIO_VIDEO_MIRROR_MAX_BYTES = 1000
    task_id = (await client.post(URL, json={**BODY, "model": "alpha-2.0-fast"}, headers=auth(alice.secret))).json()["id"]
    await poll_until_terminal(task_id)
    row = await VideoTask.objects.aget(id=task_id)
    assert row.status == "succeeded" and row.video_id is None and "larger than" in row.mirror_error
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["content"]["video_url"] == row.video_upstream_url


async def test_query_answers_from_the_row_while_the_upstream_is_slow(client, alice):
    import asyncio
    import time
    from datetime import timedelta

    from asgiref.sync import sync_to_async
    from django.utils import timezone

    from studio.gateway.video import poll as video_poll
    from studio.models import VideoTask

    class SlowArk:
        async def __call__(self, scope, receive, send):
            while (await receive()).get("more_body"):
                pass
            if scope["method"] == "GET":
                await asyncio.sleep(5)
            body = b'{"id": "cgt-slow", "status": "running"}'
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})

    http.mount("https://ark-slow.test", httpx.ASGITransport(app=SlowArk()))
    try:
        await sync_to_async(add_upstream)("ark-slow", "https://ark-slow.test", "k", priority=10)
        task_id = (await client.post(URL, json=BODY, headers=auth(alice.secret))).json()["id"]
        past = timezone.now() - timedelta(seconds=30)
        await VideoTask.objects.filter(id=task_id).aupdate(created=past, next_poll_at=past)
        started = time.monotonic()
        response = await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))
        assert time.monotonic() - started < 1.5
        assert response.json()["status"] == "queued"
        await video_poll.drain()  # the refresh it started finishes behind the answer
        assert (await VideoTask.objects.aget(id=task_id)).status == "running"
    finally:
        http.unmount("https://ark-slow.test")
