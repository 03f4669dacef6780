"""Object storage: with an S3 bucket every stored file lands there, and is served under the same
access rules, streamed with Range (against a real S3 API server on loopback: moto)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from studio.gateway.media.storage import store_bytes
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401
from tests.s3_server import keys

pytestmark = pytest.mark.django_db(transaction=True)


def body(response) -> bytes:
    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return asyncio.run(collect())


def test_the_bucket_variables_select_s3_storage():
    env = {**os.environ, "STUDIO_S3_BUCKET": "media", "STUDIO_S3_ENDPOINT_URL": "http://127.0.0.1:9",
           "STUDIO_S3_REGION": "eu-west-1"}
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'studio.settings'); django.setup();"
            "from django.core.files.storage import storages; s = storages['default'];"
            "print(type(s).__name__, s.bucket_name, s.endpoint_url, s.region_name)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["S3Storage", "media", "http://127.0.0.1:9", "eu-west-1"], out.stderr


def test_assets_go_to_the_bucket_and_are_served_with_range_to_the_owner_only(s3_bucket, s3_endpoint, web,
                                                                            django_user_model):
    owner = django_user_model.objects.create_user("owner", password="pw-owner-123")
    data = bytes(range(256)) * 4096  # 1 MiB
    stored = store_bytes(data, "video/mp4", owner_id=owner.id)
    assert stored.file.name in keys(s3_endpoint, s3_bucket)
    web.force_login(owner)
    response = web.get(f"/assets/{stored.id}/file")
    assert response.status_code == 200 and body(response) == data
    response = web.get(f"/assets/{stored.id}/file", HTTP_RANGE="bytes=500000-500999")
    assert response.status_code == 206 and response["Content-Range"] == f"bytes 500000-500999/{len(data)}"
    assert body(response) == data[500000:501000]
    response = web.get(f"/assets/{stored.id}/file", HTTP_RANGE="bytes=-10")
    assert body(response) == data[-10:]
    web.force_login(django_user_model.objects.create_user("mallory", password="pw-mallory-1"))
    assert web.get(f"/assets/{stored.id}/file").status_code == 404


@pytest.mark.usefixtures("fast_video")
async def test_sandbox_and_mirrored_video_files_live_in_the_bucket(s3_bucket, s3_endpoint, client, alice):
    from studio.models import SandboxVideoJob, VideoTask

    body = {"model": "alpha-2.0-fast", "content": [{"type": "text", "text": "harbour lights"}],
            "resolution": "480p", "duration": 4, "return_last_frame": True}
    created = await client.post("/v1/alpha/video/generations", json=body, headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    task_id = created.json()["id"]
    await poll_until_terminal(task_id)
    row = await VideoTask.objects.select_related("video", "last_frame").aget(id=task_id)
    job = await SandboxVideoJob.objects.aget(id=row.upstream_task_id)
    stored = await asyncio.to_thread(keys, s3_endpoint, s3_bucket)
    assert row.status == "succeeded" and job.video_name in stored and job.last_frame_name in stored
    assert row.video.file.name in stored and row.last_frame.file.name in stored
    record = (await client.get(f"/v1/alpha/video/generations/{task_id}", headers=auth(alice.secret))).json()
    url = record["content"]["video_url"].split("://", 1)[1].split("/", 1)[1]
    ranged = await client.get("/" + url, headers={"Range": "bytes=0-11"})
    assert ranged.status_code == 206 and ranged.content[4:8] == b"ftyp"  # an MP4, read from the bucket
