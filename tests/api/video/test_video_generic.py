"""Generic protocol C on both upstream protocols: translation, normalized statuses, C records."""

from __future__ import annotations

import pytest

from tests.api.video.test_video_dashscope import png_data_uri
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fast_video")]
URL = "/v1/video/generations"


async def test_generic_on_ark_model_translates_and_renders_c_record(client, alice):
    from studio.models import VideoTask

    body = {"model": "alpha-2.0-mini", "prompt": "a windmill on a hill", "duration": 4, "resolution": "480P",
            "ratio": "9:16", "generate_audio": False}
    created = await client.post(URL, json=body, headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    assert created.json()["status"] == "queued"
    task_id = created.json()["task_id"]
    row = await VideoTask.objects.aget(id=task_id)
    assert row.upstream_protocol == "ark" and row.callback_injected

    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "succeeded" and record["model"] == "alpha-2.0-mini"
    assert record["resolution"] == "480p" and record["ratio"] == "9:16" and record["video_duration"] == 4
    assert "/video/files/" + task_id in record["video_url"]
    assert record["created"] > 10**12 and record["updated"] >= record["created"]  # epoch milliseconds
    assert record["usage"]["total_tokens"] > 0


async def test_generic_on_dashscope_model_with_first_frame(client, alice):
    from studio.models import VideoTask

    body = {"model": "beta3.0-video", "prompt": "the kite rises", "duration": 2, "resolution": "480p",
            "medias": [{"type": "image", "url": png_data_uri(), "role": "first_frame"}]}
    created = await client.post(URL, json=body, headers=auth(alice.secret))
    assert created.status_code == 200, created.text
    task_id = created.json()["task_id"]
    row = await VideoTask.objects.aget(id=task_id)
    assert row.upstream_protocol == "dashscope" and not row.callback_injected
    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "succeeded"
    assert record["resolution"] == "480p" and record["video_duration"] == 2
    assert record["usage"]["output_video_duration"] == 2


async def test_generic_failure_has_error_code_and_message(client, alice):
    body = {"model": "beta2.7-t2v", "prompt": "hail [fail]", "duration": 2, "resolution": "480p"}
    task_id = (await client.post(URL, json=body, headers=auth(alice.secret))).json()["task_id"]
    await poll_until_terminal(task_id)
    record = (await client.get(f"{URL}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "failed"
    assert record["error_code"] == "DataInspectionFailed" and record["error_message"]


async def test_generic_errors_are_openai_style_and_name_c_fields(client, alice):
    body = {"model": "alpha-2.0", "prompt": "x", "duration": 99}
    response = await client.post(URL, json=body, headers=auth(alice.secret))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "duration" and error["type"] == "invalid_request_error"
    body = {"model": "beta3.0-video", "prompt": "x", "medias": [{"type": "image", "url": "ftp://x/y.png"}]}
    response = await client.post(URL, json=body, headers=auth(alice.secret))
    assert response.status_code == 400
    assert response.json()["error"]["param"].startswith("medias[0]")
