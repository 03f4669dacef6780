"""A task as the inbound protocols show it: our links when we hold the files, the vendor's
otherwise, the effective error of an expired task, and the generic format's record fields."""

from __future__ import annotations

from decimal import Decimal

import pytest
from asgiref.sync import sync_to_async

from studio.core.video_states import VideoStatus
from studio.gateway.video import view

pytestmark = pytest.mark.django_db(transaction=True)


async def test_upstream_links_until_the_files_are_mirrored(alice, make_task):
    task = await sync_to_async(make_task)(alice.user, status=VideoStatus.SUCCEEDED,
                                          video_upstream_url="https://cdn.vendor.test/v.mp4",
                                          last_frame_upstream_url="https://cdn.vendor.test/f.png",
                                          cost_usd=Decimal("0.4"))
    shown = view.view_of(task)
    assert (shown.video_url, shown.last_frame_url) == ("https://cdn.vendor.test/v.mp4", "https://cdn.vendor.test/f.png")
    assert shown.is_terminal and shown.cost_usd == Decimal("0.4") and shown.generic_fields == {}

    from studio.gateway.media.storage import store_bytes

    stored = await sync_to_async(store_bytes)(b"\x00\x00\x00\x18ftypmp42", "video/mp4", owner_id=alice.user.id)
    task.video_id = stored.id
    mirrored = view.view_of(task)
    assert mirrored.video_url != task.video_upstream_url and task.id in mirrored.video_url
    assert mirrored.video_url.split("?")[0].endswith("video.mp4")


async def test_an_expired_task_explains_itself(alice, make_task):
    task = await sync_to_async(make_task)(alice.user, status=VideoStatus.EXPIRED)
    shown = view.view_of(task)
    assert shown.error_code == "TaskExpired" and "execution_expires_after" in shown.error_message
    failed = await sync_to_async(make_task)(alice.user, status=VideoStatus.EXPIRED, error_code="Vendor",
                                            error_message="vendor's own words")
    assert view.error_of(failed) == ("Vendor", "vendor's own words")


async def test_generic_tasks_read_their_fields_from_the_upstream_record(alice, make_task):
    task = await sync_to_async(make_task)(
        alice.user, protocol="generic", request={"resolution": "720P", "ratio": "16:9"},
        upstream_record={"frames": 120, "framespersecond": 24, "usage": {"total_tokens": 99}})
    fields = view.view_of(task).generic_fields
    assert fields == {"resolution": "720p", "ratio": "16:9", "video_duration": 5.0, "usage": {"total_tokens": 99}}
