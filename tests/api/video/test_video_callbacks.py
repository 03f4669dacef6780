"""The signed callback address upstreams post to, and webhooks relayed to the client's URL."""

from __future__ import annotations

import hashlib
import hmac

import httpx
import orjson
import pytest

from studio.gateway.video import signing as video_signing
from studio.gateway.video import webhooks as video_webhooks
from studio.sandbox import video_jobs
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401
from tests.loopback_hook import Hook

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/alpha/video/generations"
BODY = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "tide pools"}], "resolution": "480p",
        "duration": 4}


async def create(client, secret: str, **fields) -> tuple[str, str]:
    from studio.models import VideoTask

    task_id = (await client.post(URL, json={**BODY, **fields}, headers=auth(secret))).json()["id"]
    row = await VideoTask.objects.aget(id=task_id)
    return task_id, row.upstream_task_id


async def test_callback_with_valid_signature_applies_record_idempotently(client, alice):
    from studio.models import VideoTask

    task_id, upstream_id = await create(client, alice.secret)
    sent_url = (await video_jobs.get(upstream_id)).request["callback_url"]
    path = "/" + sent_url.split("://", 1)[1].split("/", 1)[1]
    running = {"id": upstream_id, "model": "m", "status": "running"}
    response = await client.post(path, json=running)
    assert response.status_code == 200, response.text
    assert (await VideoTask.objects.aget(id=task_id)).status == "running"

    failed = {"id": upstream_id, "status": "failed", "error": {"code": "OutputVideoSensitiveContentDetected",
                                                               "message": "no"}}
    assert (await client.post(path, json=failed)).status_code == 200
    assert (await client.post(path, json=failed)).status_code == 200  # a retried callback changes nothing
    row = await VideoTask.objects.aget(id=task_id)
    assert row.status == "failed" and row.error_code == "OutputVideoSensitiveContentDetected"
    seq = row.event_seq
    succeeded = {"id": upstream_id, "status": "succeeded", "content": {"video_url": "http://x/y.mp4"}}
    assert (await client.post(path, json=succeeded)).status_code == 200
    row = await VideoTask.objects.aget(id=task_id)
    assert row.status == "failed" and row.event_seq == seq  # terminal: never changes again


async def test_callback_with_bad_or_missing_signature_is_403_and_changes_nothing(client, alice):
    from studio.models import VideoTask

    task_id, upstream_id = await create(client, alice.secret)
    record = {"id": upstream_id, "status": "failed", "error": {"code": "X", "message": "forged"}}
    bad = video_signing.callback_signature(task_id)[:-2] + "00"
    response = await client.post(f"/v1/video/callbacks/{task_id}/{bad}", json=record)
    assert response.status_code == 403
    other = video_signing.callback_signature("vt-someoneelse")
    assert (await client.post(f"/v1/video/callbacks/{task_id}/{other}", json=record)).status_code == 403
    assert (await client.post(f"/v1/video/callbacks/{task_id}", json=record)).status_code == 403
    assert (await client.post(f"/v1/video/callbacks/{task_id}/{bad}", content=b"junk")).status_code == 403
    assert (await VideoTask.objects.aget(id=task_id)).status == "queued"


async def test_client_webhook_relays_each_change_signed_with_key_secret(client, alice, settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = True
    settings.STUDIO_VIDEO_WEBHOOK_BACKOFF = 0.01
    hook = Hook(fail_first=1)
    try:
        task_id, _ = await create(client, alice.secret, callback_url=hook.url)
        await poll_until_terminal(task_id)
        await video_webhooks.drain()
    finally:
        hook.close()
    statuses = [orjson.loads(body)["status"] for _, body in hook.received]
    assert statuses[0] == "queued" and statuses[-1] == "succeeded"  # the first delivery was retried
    secret = video_signing.webhook_secret(alice.key.id, alice.user.id)
    for headers, body in hook.received:
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        assert headers["X-Studio-Signature"] == expected
        assert orjson.loads(body)["id"] == task_id


async def test_client_webhook_to_private_address_is_refused(client, alice, settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    hook = Hook()
    try:
        assert await video_webhooks.deliver(hook.url, b"{}", "s", task_id="t", status="queued") is False
    finally:
        hook.close()
    assert hook.received == []


async def test_callback_url_syntax_checked_at_creation(client, alice):
    response = await client.post(URL, json={**BODY, "callback_url": "gopher://x"}, headers=auth(alice.secret))
    assert response.status_code == 400 and response.json()["error"]["param"] == "callback_url"


def test_sandbox_posts_status_callbacks_that_finish_the_task_without_polling(live_asgi, alice, settings):
    import time

    from studio.models import VideoTask

    settings.PUBLIC_BASE_URL = live_asgi
    settings.STUDIO_VIDEO_FIRST_POLL = 3600  # no poll will run: only callbacks can move the task
    response = httpx.post(f"{live_asgi}{URL}", json=BODY, headers=auth(alice.secret), timeout=30)
    assert response.status_code == 200, response.text
    task_id = response.json()["id"]
    deadline = time.time() + 60
    while time.time() < deadline:
        row = VideoTask.objects.get(id=task_id)
        if row.is_terminal:
            break
        time.sleep(0.1)
    assert row.status == "succeeded" and row.poll_attempts == 0 and row.video_id is not None


PRIVATE_HOOKS = [
    "http://127.0.0.1/hook", "http://localhost:8080/hook", "http://[::1]/hook", "http://2130706433/hook",
    "http://0177.0.0.1/hook", "http://0x7f.0.0.1/hook", "http://0x7f000001/hook", "http://169.254.169.254/latest",
    "http://[::ffff:127.0.0.1]/hook", "http://[::ffff:a9fe:a9fe]/", "http://10.0.0.5/hook", "http://192.168.1.1/",
    "http://0.0.0.0:9000/", "http://metadata.google.internal/", "http://127.1/hook",
]


@pytest.mark.parametrize("hook", PRIVATE_HOOKS)
@pytest.mark.parametrize("url", [URL, "/v1/video/generations"])
async def test_callback_to_a_private_address_is_refused_at_creation(client, alice, settings, hook, url):
    from studio.models import VideoTask

    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    body = {**BODY, "callback_url": hook} if url == URL else {"model": "alpha-2.0-fast", "prompt": "tide pools",
                                                                   "callback_url": hook}
    response = await client.post(url, json=body, headers=auth(alice.secret))
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "callback_url"
    assert not await VideoTask.objects.aexists()


async def test_callback_to_a_name_resolving_to_a_private_address_is_refused(client, alice, settings, monkeypatch):
    import asyncio
    import socket

    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    loop = asyncio.get_running_loop()

    async def resolve(host, port, **kw):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port))]

    monkeypatch.setattr(loop, "getaddrinfo", resolve)
    response = await client.post(URL, json={**BODY, "callback_url": "https://hooks.internal.example/x"},
                                 headers=auth(alice.secret))
    assert response.status_code == 400 and response.json()["error"]["param"] == "callback_url"


async def test_callback_to_a_public_or_unresolvable_name_is_accepted(client, alice, settings):
    settings.STUDIO_FETCH_ALLOW_PRIVATE = False
    response = await client.post(URL, json={**BODY, "callback_url": "https://hooks.example/v"},
                                 headers=auth(alice.secret))
    assert response.status_code == 200, response.text
