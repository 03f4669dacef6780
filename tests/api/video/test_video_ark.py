"""Protocol A (ark) end to end against the sandbox: create, poll, mirrored media, record shape, errors."""

from __future__ import annotations

import asyncio

import pytest

from studio.gateway.video import poll as video_poll
from studio.sandbox.video import probe
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/alpha/video/generations"


def ark_body(prompt: str = "a paper boat drifting on a pond", **fields) -> dict:
    return {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": prompt}],
            "resolution": "480p", "ratio": "16:9", "duration": 4, **fields}


async def test_lifecycle_succeeds_with_mirrored_playable_video_and_last_frame(client, alice):
    from studio.models import VideoTask

    created = await client.post(URL, json=ark_body(return_last_frame=True), headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    task_id = created.json()["id"]
    assert set(created.json()) == {"id"} and task_id.startswith("vt-")
    row = await VideoTask.objects.aget(id=task_id)
    assert row.upstream_task_id.startswith("cgt-") and row.upstream_task_id != task_id

    first = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert first["id"] == task_id and first["model"] == "alpha-2.0-fast"
    assert first["status"] in ("queued", "running")

    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "succeeded", record
    assert record["resolution"] == "480p" and record["ratio"] == "16:9" and record["duration"] == 4
    assert record["framespersecond"] == 24 and record["usage"]["total_tokens"] > 0
    assert isinstance(record["created_at"], int) and record["updated_at"] >= record["created_at"]
    video_url = record["content"]["video_url"]
    assert "/video/files/" + task_id in video_url  # ours, not the upstream's expiring URL
    assert "/video/files/" + task_id in record["content"]["last_frame_url"]

    row = await VideoTask.objects.select_related("video", "last_frame").aget(id=task_id)
    info = probe(row.video.file.path)
    assert info["codec"] == "h264" and (info["width"], info["height"]) == (854, 480)
    assert abs(info["duration"] - 4) < 0.2
    assert row.last_frame.mime == "image/png" and (row.last_frame.width, row.last_frame.height) == (854, 480)


async def test_failed_task_carries_error_code_and_message(client, alice):
    created = await client.post(URL, json=ark_body("a storm [fail]"), headers=auth(alice.secret))
    task_id = created.json()["id"]
    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "failed"
    assert record["error"]["code"] == "OutputVideoSensitiveContentDetected" and record["error"]["message"]
    assert "content" not in record


async def test_upstream_rejection_is_an_ark_style_400(client, alice):
    response = await client.post(URL, json=ark_body("[reject] something"), headers=auth(alice.secret))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "InputTextSensitiveContentDetected"


async def test_other_principal_gets_404_and_other_protocol_404(client, alice, make_account):
    bob = make_account("bob")
    task_id = (await client.post(URL, json=ark_body(), headers=auth(alice.secret))).json()["id"]
    response = await client.get(f"{URL}/{task_id}", headers=auth(bob.secret))
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "NotFound"
    assert (await client.get(f"/v1/video/generations/{task_id}", headers=auth(alice.secret))).status_code == 404
    await video_poll.drain()


async def test_missing_key_is_401_in_ark_body(client, catalog):
    response = await client.post(URL, json=ark_body())
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AuthenticationError"


class HeldUpstream:
    """The task's real upstream, except that each status query waits until the test lets it go."""

    def __init__(self, inner, asked: asyncio.Event, gate: asyncio.Event) -> None:
        self.inner, self.asked, self.gate = inner, asked, gate

    async def video_get(self, upstream_task_id: str):
        self.asked.set()
        await self.gate.wait()
        return await self.inner.video_get(upstream_task_id)

    def video_state(self, record):
        return self.inner.video_state(record)

    async def video_cancel(self, upstream_task_id: str):
        return await self.inner.video_cancel(upstream_task_id)


async def test_query_never_blocks_and_refreshes_stale_row(client, alice, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from studio.models import VideoTask

    real = video_poll.video_upstream
    asked, gate = asyncio.Event(), asyncio.Event()
    monkeypatch.setattr(video_poll, "video_upstream",
                        lambda protocol, entry: HeldUpstream(real(protocol, entry), asked, gate))
    task_id = (await client.post(URL, json=ark_body(), headers=auth(alice.secret))).json()["id"]
    past = timezone.now() - timedelta(seconds=30)
    await VideoTask.objects.filter(id=task_id).aupdate(created=past, next_poll_at=past)
    try:
        stored = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
        # The answer is the row as stored, sent while the refresh it started still waits on the upstream.
        assert stored["status"] in ("queued", "running")
        await asyncio.wait_for(asked.wait(), timeout=30)
        assert not gate.is_set()
    finally:
        gate.set()
    for _ in range(200):
        await video_poll.drain()
        record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
        if record["status"] == "succeeded":
            break
        await VideoTask.objects.filter(id=task_id).aupdate(last_polled_at=past, next_poll_at=past)
        await asyncio.sleep(0.05)
    assert record["status"] == "succeeded"  # the stale row was refreshed from the upstream
    await video_poll.drain()


async def test_invalid_field_is_400_in_ark_body_naming_the_field(client, alice):
    from studio.models import VideoTask

    response = await client.post(URL, json=ark_body(priority=12), headers=auth(alice.secret))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "priority" and error["type"] == "BadRequest" and error["code"] == "InvalidParameter"
    assert "priority" in error["message"]
    assert await VideoTask.objects.acount() == 0


async def test_unknown_model_and_bad_json(client, alice):
    response = await client.post(URL, json={**ark_body(), "model": "alpha-9"}, headers=auth(alice.secret))
    assert response.status_code == 404 and response.json()["error"]["param"] == "model"
    # A protocol B model exists but cannot serve protocol A.
    response = await client.post(URL, json={**ark_body(), "model": "beta3.0-video"}, headers=auth(alice.secret))
    assert response.status_code == 400 and response.json()["error"]["param"] == "model"
    assert response.json()["error"]["code"] == "InvalidParameter"
    response = await client.post(URL, content=b"{nope", headers={**auth(alice.secret),
                                                                 "content-type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "body"


async def test_passthrough_keeps_unknown_fields_and_rewrites_model(client, alice):
    from studio.sandbox import video_jobs

    body = ark_body(tools=[{"type": "web_search"}], callback_url="https://client.example.com/hook")
    task_id = (await client.post(URL, json=body, headers=auth(alice.secret))).json()["id"]
    from studio.models import VideoTask

    row = await VideoTask.objects.aget(id=task_id)
    sent = (await video_jobs.get(row.upstream_task_id)).request
    assert sent["model"] == "dreamina-seedance-2-0-fast-260128"
    assert sent["tools"] == [{"type": "web_search"}]
    assert sent["callback_url"].endswith(f"/v1/video/callbacks/{task_id}/" + sent["callback_url"].rsplit("/", 1)[1])
    assert row.client_callback_url == "https://client.example.com/hook"
