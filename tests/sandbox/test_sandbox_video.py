"""The sandbox's Ark Seedance and DashScope task protocols: pacing, real MP4 results, failures."""

from __future__ import annotations

import asyncio
import base64
import io

import httpx
import pytest
from PIL import Image

from studio.sandbox.app import application
from studio.sandbox.video import probe

ARK = "/api/v3/contents/generations/tasks"
DS = "/api/v1/services/aigc/video-generation/video-synthesis"
AUTH = {"Authorization": "Bearer sandbox"}


@pytest.fixture
async def sandbox(settings, transactional_db):
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 0
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=application),
                                 base_url="http://sandbox.studio.internal") as client:
        yield client


def png(color, size=(320, 180)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


async def wait_done(client, path: str, terminal=("succeeded", "failed", "SUCCEEDED", "FAILED")) -> dict:
    for _ in range(600):
        record = (await client.get(path, headers=AUTH)).json()
        status = record.get("status") or record["output"]["task_status"]
        if status in terminal:
            return record
        await asyncio.sleep(0.05)
    raise AssertionError("the sandbox task never finished")


async def fetch_video(client, url: str, tmp_path) -> dict:
    response = await client.get(url.replace("http://sandbox.studio.internal", ""))
    assert response.status_code == 200 and response.headers["content-type"] == "video/mp4"
    path = tmp_path / "out.mp4"
    path.write_bytes(response.content)
    return probe(path)


async def test_ark_text_to_video_with_last_frame(sandbox, tmp_path):
    body = {"model": "seedance", "content": [{"type": "text", "text": "dunes at dawn"}], "ratio": "1:1",
            "resolution": "480p", "duration": 2, "return_last_frame": True, "generate_audio": True}
    task_id = (await sandbox.post(ARK, json=body, headers=AUTH)).json()["id"]
    record = await wait_done(sandbox, f"{ARK}/{task_id}")
    assert record["status"] == "succeeded" and record["framespersecond"] == 24 and record["duration"] == 2
    info = await fetch_video(sandbox, record["content"]["video_url"], tmp_path)
    assert info["codec"] == "h264" and (info["width"], info["height"]) == (480, 480)
    assert info["frames"] == 48 and info["has_audio"]
    frame = await sandbox.get(record["content"]["last_frame_url"].replace("http://sandbox.studio.internal", ""))
    assert Image.open(io.BytesIO(frame.content)).size == (480, 480)


async def test_ark_first_and_last_frame_interpolation_uses_the_frames(sandbox, tmp_path):
    body = {"model": "seedance", "resolution": "480p", "ratio": "adaptive", "duration": 2, "frames": 49,
            "content": [{"type": "text", "text": "morph"},
                        {"type": "image_url", "image_url": {"url": png((255, 0, 0))}, "role": "first_frame"},
                        {"type": "image_url", "image_url": {"url": png((0, 0, 255))}, "role": "last_frame"}]}
    task_id = (await sandbox.post(ARK, json=body, headers=AUTH)).json()["id"]
    record = await wait_done(sandbox, f"{ARK}/{task_id}")
    assert record["frames"] == 49 and "duration" not in record
    info = await fetch_video(sandbox, record["content"]["video_url"], tmp_path)
    assert info["height"] == 480 and info["width"] == 854  # adaptive follows the 16:9 first frame


async def test_ark_pacing_moves_queued_running_succeeded(sandbox, settings):
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 0.9
    body = {"model": "m", "content": [{"type": "text", "text": "x"}], "resolution": "480p", "duration": 1}
    task_id = (await sandbox.post(ARK, json=body, headers=AUTH)).json()["id"]
    seen = []
    for _ in range(200):
        status = (await sandbox.get(f"{ARK}/{task_id}", headers=AUTH)).json()["status"]
        if not seen or seen[-1] != status:
            seen.append(status)
        if status == "succeeded":
            break
        await asyncio.sleep(0.05)
    assert seen == ["queued", "running", "succeeded"]


async def test_ark_fail_marker_and_errors(sandbox):
    body = {"model": "m", "content": [{"type": "text", "text": "x [fail]"}]}
    task_id = (await sandbox.post(ARK, json=body, headers=AUTH)).json()["id"]
    record = await wait_done(sandbox, f"{ARK}/{task_id}")
    assert record["status"] == "failed" and record["error"]["code"]
    assert (await sandbox.post(ARK, json={"model": "m"}, headers=AUTH)).json()["error"]["param"] == "content"
    assert (await sandbox.post(ARK, json=body)).status_code == 401
    assert (await sandbox.get(f"{ARK}/cgt-unknown", headers=AUTH)).status_code == 404


async def test_dashscope_requires_async_header_and_makes_video(sandbox, tmp_path):
    body = {"model": "wan2.7-i2v", "input": {"prompt": "pan", "media": [{"type": "first_frame",
                                                                          "url": png((10, 200, 10), (180, 320))}]},
            "parameters": {"resolution": "480P", "duration": 2}}
    refused = await sandbox.post(DS, json=body, headers=AUTH)
    assert refused.status_code == 403 and refused.json()["code"] == "AccessDenied"
    created = await sandbox.post(DS, json=body, headers={**AUTH, "X-DashScope-Async": "enable"})
    assert created.json()["output"]["task_status"] == "PENDING"
    task_id = created.json()["output"]["task_id"]
    record = await wait_done(sandbox, f"/api/v1/tasks/{task_id}")
    assert record["output"]["task_status"] == "SUCCEEDED" and record["usage"]["output_video_duration"] == 2
    info = await fetch_video(sandbox, record["output"]["video_url"], tmp_path)
    assert (info["width"], info["height"]) == (480, 854)  # 9:16 from the portrait first frame
    unknown = (await sandbox.get("/api/v1/tasks/nope", headers=AUTH)).json()
    assert unknown["output"]["task_status"] == "UNKNOWN"
