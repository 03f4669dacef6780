"""Cancel (all three protocols), protocol A's task list and protocol B's UNKNOWN answer, against the sandbox."""

from __future__ import annotations

import pytest

from tests.api.video.test_video_ark import ark_body
from tests.api.video.video_support import auth, fast_video, poll_until_terminal  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)
A = "/v1/alpha/video/generations"
B = "/v1/beta/video/generations"
C = "/v1/video/generations"
B_BODY = {"model": "beta2.7-t2v", "input": {"prompt": "fog over a harbour"},
          "parameters": {"resolution": "480P", "duration": 2}}
C_BODY = {"model": "alpha-2.0-mini", "prompt": "a kite", "duration": 4, "resolution": "480p"}


@pytest.fixture
def slow_video(settings):
    """Sandbox tasks stay queued for a while, so there is time to cancel them."""
    settings.STUDIO_SANDBOX_VIDEO_SECONDS = 90
    settings.STUDIO_VIDEO_FIRST_POLL = 60


async def upstream_status(task_id: str) -> str:
    """What the sandbox vendor itself says about the task behind ``task_id``."""
    from studio.models import VideoTask
    from studio.sandbox import video_jobs

    row = await VideoTask.objects.aget(id=task_id)
    return video_jobs.phase(await video_jobs.get(row.upstream_task_id))


@pytest.mark.usefixtures("slow_video")
async def test_ark_delete_cancels_upstream_and_row_and_is_idempotent(client, alice):
    task_id = (await client.post(A, json=ark_body(), headers=auth(alice.secret))).json()["id"]
    first = await client.delete(f"{A}/{task_id}", headers=auth(alice.secret))
    assert first.status_code == 200 and first.json() == {}
    assert await upstream_status(task_id) == "cancelled"
    record = (await client.get(f"{A}/{task_id}", headers=auth(alice.secret))).json()
    assert record["status"] == "cancelled"
    again = await client.delete(f"{A}/{task_id}", headers=auth(alice.secret))
    assert again.status_code == 200


@pytest.mark.usefixtures("slow_video")
async def test_dashscope_cancel_and_generic_cancel(client, alice):
    task_id = (await client.post(B, json=B_BODY, headers=auth(alice.secret))).json()["output"]["task_id"]
    cancelled = await client.post(f"{B}/{task_id}/cancel", headers=auth(alice.secret))
    assert cancelled.status_code == 200 and cancelled.json()["request_id"]
    assert await upstream_status(task_id) == "cancelled"
    output = (await client.get(f"{B}/{task_id}", headers=auth(alice.secret))).json()["output"]
    assert output["task_status"] == "CANCELED"

    generic_id = (await client.post(C, json=C_BODY, headers=auth(alice.secret))).json()["task_id"]
    record = await client.post(f"{C}/{generic_id}/cancel", headers=auth(alice.secret))
    assert record.status_code == 200 and record.json()["status"] == "cancelled"
    assert await upstream_status(generic_id) == "cancelled"


@pytest.mark.usefixtures("fast_video")
async def test_finished_tasks_are_refused_in_each_vendors_error(client, alice):
    a_id = (await client.post(A, json=ark_body(), headers=auth(alice.secret))).json()["id"]
    b_id = (await client.post(B, json=B_BODY, headers=auth(alice.secret))).json()["output"]["task_id"]
    await poll_until_terminal(a_id)
    await poll_until_terminal(b_id)
    refused = await client.delete(f"{A}/{a_id}", headers=auth(alice.secret))
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "OperationDenied.InvalidState"
    refused = await client.post(f"{B}/{b_id}/cancel", headers=auth(alice.secret))
    assert refused.status_code == 400 and refused.json()["code"] == "UnsupportedOperation"
    assert (await client.get(f"{A}/{a_id}", headers=auth(alice.secret))).json()["status"] == "succeeded"


@pytest.mark.usefixtures("fast_video")
async def test_dashscope_query_of_unknown_task_is_200_unknown(client, alice, make_account):
    missing = await client.get(f"{B}/vt-000000000000000000000000", headers=auth(alice.secret))
    assert missing.status_code == 200
    assert missing.json()["output"] == {"task_id": "vt-000000000000000000000000", "task_status": "UNKNOWN"}
    b_id = (await client.post(B, json=B_BODY, headers=auth(alice.secret))).json()["output"]["task_id"]
    bob = make_account("bob")
    other = (await client.get(f"{B}/{b_id}", headers=auth(bob.secret))).json()  # not bob's: unknown to him
    assert other["output"]["task_status"] == "UNKNOWN"


@pytest.mark.usefixtures("fast_video")
async def test_ark_list_pages_and_filters(client, alice):
    ids = [(await client.post(A, json=ark_body(f"clip {i}"), headers=auth(alice.secret))).json()["id"]
           for i in range(3)]
    await poll_until_terminal(ids[0])
    listed = (await client.get(A, params={"page_num": 1, "page_size": 2}, headers=auth(alice.secret))).json()
    assert listed["total"] == 3 and [item["id"] for item in listed["items"]] == ids[:0:-1]
    second = (await client.get(A, params={"page_num": 2, "page_size": 2}, headers=auth(alice.secret))).json()
    assert [item["id"] for item in second["items"]] == [ids[0]]
    done = (await client.get(A, params={"filter.status": "succeeded"}, headers=auth(alice.secret))).json()
    assert ids[0] in [item["id"] for item in done["items"]]
    assert all(item["status"] == "succeeded" for item in done["items"])
    picked = (await client.get(f"{A}?filter.task_ids={ids[1]}&filter.task_ids={ids[2]}",
                               headers=auth(alice.secret))).json()
    assert picked["total"] == 2
    bad = await client.get(A, params={"page_size": 501}, headers=auth(alice.secret))
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "page_size"
