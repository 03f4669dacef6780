"""The Video page, mirrored files served with Range, and live status events for the owner."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from channels.layers import get_channel_layer

from studio.gateway.live import user_group
from studio.sandbox.video import probe
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

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

    from studio.gateway.media.storage import store_bytes
    from studio.models import Upstream, VideoTask

    bob = make_account("bob")
    upstream = Upstream.objects.get(name="Sandbox")
    video = store_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64, "video/mp4", owner_id=alice.user.id)
    common = {"protocol": "generic", "model_id": "alpha-2.0", "upstream": upstream, "upstream_protocol": "ark",
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
    assert task.user_id == alice.user.id and task.protocol == "generic" and task.upstream_protocol == "dashscope"
    bad = web.post("/video/create", data=orjson.dumps({"model": "beta3.0-video", "prompt": "x", "duration": 99}),
                   content_type="application/json")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "duration"


def page_data(web, name: str):
    import re

    html = web.get("/video/").content.decode()
    match = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S)
    return orjson.loads(match.group(1))


def test_models_read_as_designers_name_them_with_presets_they_support_and_prices(web, alice):
    from decimal import Decimal

    from studio.models import Price

    Price.objects.create(model_id="alpha-2.0-fast", per_video_second={"480p": "0.05", "480p+audio": "0.08",
                                                                      "720p": "0.10"})
    web.force_login(alice.user)
    models = {m["id"]: m for m in page_data(web, "video-models")}
    fast = models["alpha-2.0-fast"]
    assert fast["name"] == "Alpha 2.0 Fast"
    assert models["beta2.7-i2v"]["name"] == "Beta 2.7 · image to video"
    assert "beta2.7-videoedit" not in models  # it needs a video input the page does not take
    # Presets keep to what the model offers: no 1080p on a 480p/720p model, no 21:9 where it lacks it.
    presets = {p["id"]: p for p in fast["presets"]}
    assert presets["widescreen"]["resolution"] == "720p" and presets["widescreen"]["ratio"] == "16:9"
    assert presets["draft"]["duration"] == fast["options"]["duration"]["min"]
    assert "cinematic" not in {p["id"] for p in models["beta2.7-t2v"]["presets"]}
    assert all(p["audio"] is False for p in models["alpha-1.0-pro"]["presets"])  # no sound on that model
    assert Decimal(str(fast["per_second"]["480p+audio"])) == Decimal("0.08")
    assert fast["per_second"]["720p"] == 0.10 and "720p+audio" in fast["per_second"]  # falls back to 720p


async def test_cards_show_the_cost_charged_a_poster_frame_and_the_options_asked(client, alice):
    from decimal import Decimal

    from asgiref.sync import sync_to_async
    from django.test import Client
    from django.utils import timezone

    from studio.models import Price, VideoTask

    await Price.objects.acreate(model_id="alpha-2.0-fast", effective_from=timezone.now(),
                                per_video_second={"480p": "0.05"})
    task_id = await finished_task(client, alice.secret)
    task = await VideoTask.objects.aget(id=task_id)

    def rows():
        web = Client()
        web.force_login(alice.user)
        return web, web.get(f"/video/tasks?ids={task_id}").json()["tasks"][0]

    web, row = await sync_to_async(rows)()
    assert row["cost_usd"] == "0.2" and task.cost_usd == Decimal("0.2")  # 4 s at $0.05, as recorded
    assert row["options"] == {"duration": 4, "resolution": "480p"}
    poster = await sync_to_async(web.get)(row["poster_url"])
    assert poster.status_code == 200 and poster["content-type"] == "image/jpeg"
    assert poster.content.startswith(b"\xff\xd8")
    forged = await sync_to_async(web.get)(row["poster_url"].split("?")[0] + "?sig=forged")
    assert forged.status_code == 404


def test_progress_estimates_use_how_long_a_model_usually_takes(web, alice):
    from datetime import timedelta

    from django.utils import timezone

    from studio.models import Upstream, VideoTask

    upstream = Upstream.objects.get(name="Sandbox")
    now = timezone.now()
    for seconds in (30, 40, 90):  # the median of its recent finished tasks
        VideoTask.objects.create(user=alice.user, upstream=upstream, protocol="generic", model_id="alpha-2.0",
                                 upstream_protocol="ark", upstream_model="m", upstream_task_id=f"u{seconds}",
                                 status="succeeded", created=now - timedelta(seconds=seconds + 5),
                                 finished_at=now - timedelta(seconds=5), expires_at=now + timedelta(days=1))
    web.force_login(alice.user)
    models = {m["id"]: m for m in page_data(web, "video-models")}
    assert models["alpha-2.0"]["typical"] == {"fixed": 40.0, "per_second": 0.0}
    # A model that has finished nothing yet: a rule of thumb that grows with the video's length.
    assert models["alpha-2.0-fast"]["typical"]["per_second"] > 0
