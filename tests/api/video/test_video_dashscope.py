"""Protocol B (dashscope) end to end against the sandbox: create response, PENDING → SUCCEEDED, record shape."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/beta/video/generations"


def png_data_uri(size=(320, 240), color=(200, 80, 40)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


async def test_beta30_text_to_video_lifecycle(client, alice):
    body = {"model": "beta3.0-video", "input": {"prompt": "a lantern festival at night"},
            "parameters": {"resolution": "480P", "ratio": "1:1", "duration": 2, "audio": False}}
    created = await client.post(URL, json=body, headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    data = created.json()
    assert data["output"]["task_status"] == "PENDING" and data["request_id"]
    task_id = data["output"]["task_id"]
    assert task_id.startswith("vt-")

    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    output = record["output"]
    assert output["task_id"] == task_id and output["task_status"] == "SUCCEEDED"
    assert "/video/files/" + task_id in output["video_url"]
    assert output["submit_time"] and output["end_time"] and output["orig_prompt"] == "a lantern festival at night"
    assert record["usage"]["output_video_duration"] == 2 and record["usage"]["video_count"] == 1


async def test_gamma_image_to_video_with_first_frame(client, alice):
    body = {"model": "gamma-1.1-i2v", "input": {"prompt": "slow push in",
            "media": [{"type": "first_frame", "url": png_data_uri()}]},
            "parameters": {"resolution": "480P", "duration": 2}}
    created = await client.post(URL, json=body, headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    task_id = created.json()["output"]["task_id"]
    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["output"]["task_status"] == "SUCCEEDED"


async def test_failed_task_has_output_code_and_message(client, alice):
    body = {"model": "beta2.7-t2v", "input": {"prompt": "thunder [fail]"},
            "parameters": {"resolution": "480P", "duration": 2}}
    task_id = (await client.post(URL, json=body, headers=auth(alice.secret))).json()["output"]["task_id"]
    await poll_until_terminal(task_id)
    output = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()["output"]
    assert output["task_status"] == "FAILED"
    assert output["code"] == "DataInspectionFailed" and output["message"]
    assert "video_url" not in output


async def test_unknown_task_is_200_unknown_like_dashscope(client, alice):
    response = await client.get(f"{URL}/vt-doesnotexist", headers=auth(alice.secret))
    assert response.status_code == 200
    assert response.json()["output"] == {"task_id": "vt-doesnotexist", "task_status": "UNKNOWN"}


async def test_invalid_field_is_400_in_dashscope_body(client, alice):
    body = {"model": "beta3.0-video", "input": {"prompt": "x", "media": [
        {"type": "first_frame", "url": png_data_uri()}, {"type": "reference_image", "url": png_data_uri()}]}}
    response = await client.post(URL, json=body, headers=auth(alice.secret))
    assert response.status_code == 400
    data = response.json()
    assert set(data) == {"request_id", "code", "message"}
    assert data["code"] == "InvalidParameter" and "input.media" in data["message"]


async def test_data_uri_whose_bytes_are_not_an_image_is_rejected(client, alice):
    body = {"model": "beta3.0-video", "input": {"prompt": "x", "media": [
        {"type": "reference_image", "url": "data:image/png;base64,aGVsbG8gd29ybGQ="}]}}
    response = await client.post(URL, json=body, headers=auth(alice.secret))
    assert response.status_code == 400 and "input.media[0].url" in response.json()["message"]
