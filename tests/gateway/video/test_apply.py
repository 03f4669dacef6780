"""Applying upstream states to a task row: once, never after a terminal state, announced to the owner."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from studio.core.video_states import UpstreamVideoState
from studio.gateway.live import user_group
from studio.gateway.video import apply
from studio.models import Asset
from studio.models.videos import VideoTask
from tests.gateway.video.files import mp4_bytes, png_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def state(status: str, **kw) -> UpstreamVideoState:
    return UpstreamVideoState(status=status, upstream_status=kw.pop("upstream_status", status),
                              record=kw.pop("record", {"status": status}), **kw)


async def listen(user_id: int) -> tuple[object, str]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(user_group(user_id), channel)
    return layer, channel


async def test_same_status_refreshes_the_record_without_an_event(alice, make_task):
    task = await sync_to_async(make_task)(alice.user)
    layer, channel = await listen(alice.user.id)
    changed = await apply.apply_state(task, state("running", upstream_status="processing",
                                                  record={"status": "processing", "progress": 40}))
    assert changed is False
    row = await VideoTask.objects.aget(id=task.id)
    assert row.upstream_record == {"status": "processing", "progress": 40} and row.event_seq == 1
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.2)


async def test_a_change_is_stored_counted_and_published(alice, make_task):
    task = await sync_to_async(make_task)(alice.user)
    layer, channel = await listen(alice.user.id)
    changed = await apply.apply_state(task, state("failed", error_code="OutputVideoSensitive",
                                                  error_message="flagged"))
    assert changed is True
    assert (task.status, task.event_seq, task.error_code) == ("failed", 2, "OutputVideoSensitive")
    assert task.finished_at is not None
    message = await asyncio.wait_for(layer.receive(channel), 2)
    event = message["event"]
    assert (event["type"], event["id"], event["seq"]) == ("video.status", task.id, 2)
    assert event["data"]["status"] == "failed" and event["data"]["error_message"] == "flagged"


async def test_terminal_states_are_final(alice, make_task):
    task = await sync_to_async(make_task)(alice.user, status="succeeded")
    assert await apply.apply_state(task, state("failed")) is False
    assert (await VideoTask.objects.aget(id=task.id)).status == "succeeded"


async def test_two_observers_apply_a_change_once(alice, make_task, file_host):
    file_host.files["/v.mp4"] = (200, mp4_bytes())
    file_host.files["/f.png"] = (200, png_bytes())
    task = await sync_to_async(make_task)(alice.user)
    stale_copy = await VideoTask.objects.aget(id=task.id)  # e.g. the poller's, while a callback arrives
    done = state("succeeded", video_url=file_host.url("/v.mp4"), last_frame_url=file_host.url("/f.png"))
    assert await apply.apply_state(task, done) is True
    assert await apply.apply_state(stale_copy, done) is False
    row = await VideoTask.objects.aget(id=task.id)
    assert row.event_seq == 2 and row.video_id and row.last_frame_id
    assert row.video_upstream_url == file_host.url("/v.mp4")
    # The loser's mirrored copies were thrown away: one video and one frame remain.
    assert await Asset.objects.filter(metadata__video_task=task.id).acount() == 2


async def test_mirror_failure_keeps_the_upstream_url_and_says_why(alice, make_task, file_host):
    task = await sync_to_async(make_task)(alice.user)
    assert await apply.apply_state(task, state("succeeded", video_url=file_host.url("/gone.mp4"))) is True
    assert task.status == "succeeded" and task.video_id is None
    assert "video: download answered HTTP 404" in task.mirror_error
    assert apply.event_data(task)["video_url"] == file_host.url("/gone.mp4")


async def test_expire_marks_the_task_expired(alice, make_task):
    task = await sync_to_async(make_task)(alice.user, upstream_status="queued")
    assert await apply.expire(task) is True
    assert (task.status, task.error_code, task.upstream_status) == ("expired", "TaskExpired", "queued")
    assert await apply.expire(task) is False
