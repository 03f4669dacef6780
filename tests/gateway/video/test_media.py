"""Mirroring a finished task's files: streamed to storage, bounded in size, checked to be what they claim."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from studio.core.content_hash import of as hash_of
from studio.core.video_states import UpstreamVideoState
from studio.gateway.video import media
from studio.models import Asset, Visibility
from tests.gateway.video.files import mp4_bytes, png_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def finished(video: str = "", frame: str = "") -> UpstreamVideoState:
    return UpstreamVideoState(status="succeeded", upstream_status="succeeded", record={}, video_url=video,
                              last_frame_url=frame)


async def test_video_and_last_frame_are_copied_into_storage(alice, file_host):
    video, frame = mp4_bytes(), png_bytes()
    file_host.files.update({"/v.mp4": (200, video), "/f.png": (200, frame)})
    result = await media.mirror("cgt-m1", alice.user.id, None, finished(file_host.url("/v.mp4"),
                                                                          file_host.url("/f.png")))
    assert result.error == ""
    assert (result.video.mime, result.video.bytes, result.video.content_hash) == (
        "video/mp4", len(video), hash_of(video))
    assert (result.last_frame.width, result.last_frame.height, result.last_frame.mime) == (32, 18, "image/png")
    assert result.video.metadata == {"video_task": "cgt-m1", "role": "video"}
    assert result.video.visibility == Visibility.PRIVATE
    stored = await Asset.objects.aget(id=result.video.id)
    with stored.file.open("rb") as handle:
        assert handle.read() == video


async def test_over_the_size_limit_is_refused(alice, file_host, settings):
    settings.STUDIO_VIDEO_MIRROR_MAX_BYTES = 1000
    file_host.files["/v.mp4"] = (200, mp4_bytes())
    result = await media.mirror("cgt-m2", alice.user.id, None, finished(file_host.url("/v.mp4")))
    assert result.video is None and "larger than the 1000 bytes" in result.error
    assert await Asset.objects.acount() == 0


async def test_wrong_kind_and_http_errors_are_reported_per_file(alice, file_host):
    file_host.files.update({"/v.mp4": (200, png_bytes()), "/f.png": (500, b"")})
    result = await media.mirror("cgt-m3", alice.user.id, None, finished(file_host.url("/v.mp4"),
                                                                          file_host.url("/f.png")))
    assert result.video is None and result.last_frame is None
    assert result.error == "video: the downloaded file is not a video (image/png); " \
                           "last_frame: download answered HTTP 500"


async def test_nothing_to_copy(alice):
    result = await media.mirror("cgt-m4", alice.user.id, None, finished())
    assert (result.video, result.last_frame, result.error) == (None, None, "")


async def test_discard_removes_rows_and_files(alice, file_host):
    from studio.models import Team

    team = await Team.objects.acreate(name="T", slug="t")
    file_host.files["/v.mp4"] = (200, mp4_bytes())
    result = await media.mirror("cgt-m5", alice.user.id, team.id, finished(file_host.url("/v.mp4")))
    assert result.video.visibility == Visibility.TEAM
    name = result.video.file.name
    storage = result.video.file.storage
    await sync_to_async(media.discard)(result)
    assert await Asset.objects.acount() == 0 and not storage.exists(name)
