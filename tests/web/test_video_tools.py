"""The Video page's tools: options from the catalog, frames and references from the gallery,
extend from a finished task's last frame, failures with the upstream's reason."""

from __future__ import annotations

import base64
import io

import orjson
import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from PIL import Image, ImageChops, ImageStat

from studio.catalog_data import ALPHA_20, BETA27, BETA30
from studio.models import VideoTask
from studio.web.video_forms import last_frame_png, model_options
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401
from tests.web.library_factories import make_image, png

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]


def decoded(uri: str) -> Image.Image:
    assert uri.startswith("data:image/")
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB")


def post(web: Client, body: dict):
    return web.post("/video/create", data=orjson.dumps(body), content_type="application/json")


def test_options_follow_catalog_capabilities():
    alpha = model_options(ALPHA_20)
    assert alpha["media"] == {"first_frame": 1, "last_frame": 1, "reference_image": 9}
    assert alpha["audio"] is True and alpha["seed"] is False and alpha["resolutions"][0] == "480p"
    i2v = model_options({**BETA27, "media": {"first_frame": 1, "last_frame": 1, "driving_audio": 1}})
    assert i2v["media"] == {"first_frame": 1, "last_frame": 1, "reference_image": 0}
    assert i2v["audio"] is False and i2v["seed"] is True
    assert model_options(BETA30)["audio"] is True and model_options(BETA30)["duration"] == {"min": 2, "max": 30}


def test_first_and_last_frames_and_references_come_from_the_gallery(web, alice, make_account):
    first = make_image(alice.user, "dawn", data=png("orange", (640, 360)))
    last = make_image(alice.user, "dusk", data=png("purple", (640, 360)))
    web.force_login(alice.user)
    response = post(web, {"model": "alpha-2.0-fast", "prompt": "the sky turns", "duration": 4, "resolution": "480p",
                          "first_frame": str(first.id), "last_frame": str(last.id)})
    assert response.status_code == 200, response.content
    medias = VideoTask.objects.get(id=response.json()["task"]["id"]).request["medias"]
    assert [m["role"] for m in medias] == ["first_frame", "last_frame"]
    assert decoded(medias[0]["url"]).getpixel((5, 5)) == (255, 165, 0)
    assert decoded(medias[1]["url"]).getpixel((5, 5)) == (128, 0, 128)

    response = post(web, {"model": "alpha-2.0-fast", "prompt": "a collage comes alive", "duration": 4,
                          "resolution": "480p", "references": [str(first.id), str(last.id)]})
    assert response.status_code == 200, response.content
    medias = VideoTask.objects.get(id=response.json()["task"]["id"]).request["medias"]
    assert [m["role"] for m in medias] == ["reference_image", "reference_image"]

    bob = make_account("bob")
    secret = make_image(bob.user, "bob's", data=png("green"))
    refused = post(web, {"model": "alpha-2.0-fast", "prompt": "x", "first_frame": str(secret.id)})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "first_frame"
    refused = post(web, {"model": "alpha-2.0-fast", "prompt": "x", "last_frame": str(first.id)})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "last_frame"
    refused = post(web, {"model": "alpha-1.5-pro", "prompt": "x", "references": [str(first.id)]})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "medias"  # the engine's rule
    refused = post(web, {"model": "alpha-2.0-fast", "prompt": "x", "seed": "many"})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "seed"


async def test_extend_starts_from_the_finished_videos_last_frame(client, alice):
    created = await client.post("/v1/video/generations", json={
        "model": "alpha-2.0-fast", "prompt": "a red kite over the sea", "duration": 4, "resolution": "480p"},
        headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    first_id = created.json()["task_id"]
    await poll_until_terminal(first_id)

    def extend() -> tuple[Image.Image, Image.Image, str]:
        web = Client()
        web.force_login(alice.user)
        response = post(web, {"model": "alpha-2.0-fast", "prompt": "the kite climbs", "duration": 4,
                              "resolution": "480p", "extend_from": first_id})
        assert response.status_code == 200, response.content
        new = VideoTask.objects.get(id=response.json()["task"]["id"])
        (media,) = new.request["medias"]
        assert media["role"] == "first_frame"
        finished = VideoTask.objects.select_related("video").get(id=first_id)
        expected = Image.open(io.BytesIO(last_frame_png(finished.video))).convert("RGB")
        return decoded(media["url"]), expected, new.id

    frame, expected, new_id = await sync_to_async(extend)()
    assert frame.size == expected.size
    assert max(ImageStat.Stat(ImageChops.difference(frame, expected)).mean) < 2
    await poll_until_terminal(new_id)
    assert (await VideoTask.objects.aget(id=new_id)).status == "succeeded"


def test_extend_refuses_unfinished_or_foreign_tasks(web, alice, make_account):
    from datetime import timedelta

    from django.utils import timezone

    from studio.models import Upstream

    common = {"protocol": "generic", "model_id": "alpha-2.0", "upstream": Upstream.objects.get(name="Sandbox"),
              "upstream_protocol": "ark", "upstream_model": "m", "expires_at": timezone.now() + timedelta(days=1)}
    running = VideoTask.objects.create(user=alice.user, upstream_task_id="u1", status="running", **common)
    bob = make_account("bob")
    foreign = VideoTask.objects.create(user=bob.user, upstream_task_id="u2", status="succeeded", **common)
    web.force_login(alice.user)
    for task in (running, foreign):
        refused = post(web, {"model": "alpha-2.0-fast", "prompt": "more", "extend_from": task.id})
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "extend_from"


async def test_failed_task_row_carries_the_upstream_reason(client, alice):
    created = await client.post("/v1/video/generations", json={
        "model": "alpha-2.0-fast", "prompt": "a storm [fail]", "duration": 4, "resolution": "480p"},
        headers=auth(alice.secret))
    task_id = created.json()["task_id"]
    await poll_until_terminal(task_id)

    def rows() -> dict:
        web = Client()
        web.force_login(alice.user)
        return web.get(f"/video/tasks?ids={task_id}").json()["tasks"][0]

    row = await sync_to_async(rows)()
    assert row["status"] == "failed" and row["error_code"] and row["error_message"]
