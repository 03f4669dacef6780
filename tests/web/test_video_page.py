"""The Video page, mirrored files served with Range, and live status events for the owner."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from channels.layers import get_channel_layer

from studio.realtime.events import user_group
from studio.sandbox.video import probe

from ..api.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
BODY = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "a red kite"}], "resolution": "480p",
        "duration": 4, "return_last_frame": True}


async def finished_task(client, secret: str) -> str:
    task_id = (await client.post("/v1/alpha/video/generations", json=BODY, headers=auth(secret))).json()["id"]
    await poll_until_terminal(task_id)
    return task_id


async def test_mirrored_video_served_by_signed_url_with_range(client, alice, tmp_path):
    task_id = await finished_task(client, alice.secret)
    record = (await client.get(f"/v1/alpha/video/generations/{task_id}", headers=auth(alice.secret))).json()
    path = "/" + record["content"]["video_url"].split("://", 1)[1].split("/", 1)[1]
    whole = await client.get(path)
    assert whole.status_code == 200 and whole.headers["content-type"] == "video/mp4"
    assert whole.headers["accept-ranges"] == "bytes"
    (tmp_path / "v.mp4").write_bytes(whole.content)
    assert probe(tmp_path / "v.mp4")["codec"] == "h264"
    part = await client.get(path, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == whole.content[100:200]
    assert (await client.get(path.split("?")[0] + "?sig=forged")).status_code == 404
    frame_path = "/" + record["content"]["last_frame_url"].split("://", 1)[1].split("/", 1)[1]
    frame = await client.get(frame_path)
    assert frame.status_code == 200 and frame.content.startswith(b"\x89PNG")


async def test_each_status_change_is_published_to_the_owner(client, alice):
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(user_group(alice.user.id), channel)
    task_id = await finished_task(client, alice.secret)
    events = []
    while True:
        try:
            message = await asyncio.wait_for(layer.receive(channel), timeout=0.5)
        except TimeoutError:
            break
        events.append(message["event"])
    mine = [e for e in events if e["id"] == task_id and e["type"] == "video.status"]
    assert [e["data"]["status"] for e in mine][0] == "queued"
    assert mine[-1]["data"]["status"] == "succeeded" and mine[-1]["data"]["video_url"]
    seqs = [e["seq"] for e in mine]
    assert seqs == sorted(set(seqs)), seqs


def test_page_lists_only_own_tasks_and_plays_finished_ones(web, alice, make_account):
    from datetime import timedelta

    from django.utils import timezone

    from studio.gateway.storage import store_bytes
    from studio.models import Upstream, VideoTask

    bob = make_account("bob")
    upstream = Upstream.objects.get(name="Sandbox")
    video = store_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64, "video/mp4", owner_id=alice.user.id)
    common = {"protocol": "C", "model_id": "alpha-2.0", "upstream": upstream, "upstream_protocol": "ark",
              "upstream_model": "m", "expires_at": timezone.now() + timedelta(days=1)}
    VideoTask.objects.create(user=alice.user, upstream_task_id="u1", status="succeeded", video=video,
                             prompt="alice's lighthouse", **common)
    VideoTask.objects.create(user=alice.user, upstream_task_id="u2", status="running", prompt="alice's river",
                             **common)
    VideoTask.objects.create(user=bob.user, upstream_task_id="u3", prompt="bob's secret", **common)
    assert web.get("/video/").status_code == 302
    web.force_login(alice.user)
    page = web.get("/video/").content.decode()
    assert "alice&#x27;s lighthouse" in page and "alice&#x27;s river" in page
    assert "bob&#x27;s secret" not in page
    assert page.count("<video ") == 1 and "/video/files/" in page
    assert 'aria-current="page">Video' in page


def test_page_creates_tasks_through_the_engine(web, alice):
    from studio.models import VideoTask

    web.force_login(alice.user)
    response = web.post("/video/create", data=orjson.dumps({"model": "beta3.0-video", "prompt": "snowfall",
                                                             "duration": 2, "resolution": "480p"}),
                        content_type="application/json")
    assert response.status_code == 200, response.content
    task = VideoTask.objects.get(id=response.json()["task"]["id"])
    assert task.user_id == alice.user.id and task.protocol == "C" and task.upstream_protocol == "dashscope"
    bad = web.post("/video/create", data=orjson.dumps({"model": "beta3.0-video", "prompt": "x", "duration": 99}),
                   content_type="application/json")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "duration"
