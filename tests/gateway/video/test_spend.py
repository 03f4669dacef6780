"""A video task's spend: the estimate from the create body, the charge from what the vendor made,
charged once, and a failed task costs nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from asgiref.sync import sync_to_async

from studio.core.entries import ModelEntry
from studio.core.video_states import UpstreamVideoState, VideoStatus
from studio.gateway.video import spend

MODEL = ModelEntry(model_id="alpha-2.0", kind="video", routes=frozenset(), owned_by="t", created=0,
                   default_protocol="ark", capabilities={"duration": {"max": 12}, "default_resolution": "720p"})


def test_the_estimate_reads_each_protocols_body():
    ark = spend.requested("ark", {"duration": 5, "resolution": "1080P", "generate_audio": True}, MODEL)
    assert (ark.video_seconds, ark.video_resolution, ark.video_audio) == (5.0, "1080p", True)
    dashscope = spend.requested("dashscope", {"parameters": {"duration": 8, "resolution": "480P"}}, MODEL)
    assert (dashscope.video_seconds, dashscope.video_resolution, dashscope.video_audio) == (8.0, "480p", True)
    generic = spend.requested("generic", {"seconds": 4, "size": "720P"}, MODEL)
    assert (generic.video_seconds, generic.video_resolution) == (4.0, "720p")


def test_without_a_duration_the_estimate_is_the_longest_at_the_default_resolution():
    asked = spend.requested("ark", {"duration": "long"}, MODEL)
    assert (asked.video_seconds, asked.video_resolution, asked.video_audio) == (12.0, "720p", False)


def test_the_charge_is_what_the_vendor_made():
    asked = spend.requested("ark", {"duration": 10}, MODEL)
    assert spend.made({"duration": 6}, asked).video_seconds == 6
    assert spend.made({"usage": {"output_video_duration": 7}}, asked).video_seconds == 7
    assert spend.made({"frames": 96, "framespersecond": 24}, asked).video_seconds == 4
    assert spend.made({}, asked).video_seconds == 10
    assert spend.made({"resolution": "1080p", "generate_audio": True}, asked).video_audio is True


@pytest.mark.django_db(transaction=True)
async def test_a_task_is_charged_once_and_a_failed_one_costs_nothing(alice, make_task):
    from studio.models import UsageRecord

    task = await sync_to_async(make_task)(alice.user, api_key=alice.key, request={"duration": 4, "resolution": "480p", "generate_audio": False},
                                          reserved_at=0)
    done = UpstreamVideoState(status=VideoStatus.SUCCEEDED, upstream_status="succeeded", record={"duration": 4})
    first = await spend.finish(task, done)
    assert first == Decimal("0.05") * 4  # the seeded alpha-2.0 price of a 480p second without audio
    assert await spend.finish(task, done) == first  # a second poller finds it settled
    failed = await sync_to_async(make_task)(alice.user, api_key=alice.key, upstream_task_id="cgt-up-2")
    lost = UpstreamVideoState(status=VideoStatus.FAILED, upstream_status="failed", record={})
    assert await spend.finish(failed, lost) == 0
    rows = [(r.status_code, r.cost_usd, r.video_seconds) async for r in UsageRecord.objects.order_by("cost_usd")]
    assert rows == [(502, 0, 0), (200, first, 4)]
