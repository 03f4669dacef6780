"""Media references in video create bodies: URL syntax, inline data of the right kind, clip lengths."""

from __future__ import annotations

import base64
import io

import av
import numpy as np
import pytest
from PIL import Image

from studio.core.errors import BadRequest, PayloadTooLarge
from studio.gateway.video.media_checks import check_media_url, inline_seconds

PARAM = "content[1].image_url.url"


def png_uri() -> tuple[str, bytes]:
    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), "plum").save(buffer, "PNG")
    data = buffer.getvalue()
    return "data:image/png;base64," + base64.b64encode(data).decode(), data


def clip_uri(seconds: float) -> str:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for _ in range(int(seconds * 10)):
            frame = av.VideoFrame.from_ndarray(np.zeros((32, 32, 3), dtype=np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return "data:video/mp4;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_public_url_is_accepted_without_fetching() -> None:
    assert check_media_url("https://cdn.example/a.png", PARAM, "image") is None


def test_inline_image_returns_its_bytes() -> None:
    uri, data = png_uri()
    assert check_media_url(uri, PARAM, "image") == data


@pytest.mark.parametrize("url", ["", None, 42])
def test_missing_url_names_the_parameter(url) -> None:
    with pytest.raises(BadRequest) as exc:
        check_media_url(url, PARAM, "image")
    assert (exc.value.param, exc.value.code) == (PARAM, "InvalidParameter")


@pytest.mark.parametrize("url", ["ftp://x.example/a.png", "https://user:pw@x.example/a.png", "file:///etc/passwd"])
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(BadRequest) as exc:
        check_media_url(url, PARAM, "image")
    assert exc.value.param == PARAM


def test_inline_media_of_the_wrong_kind_is_refused() -> None:
    uri, _ = png_uri()
    with pytest.raises(BadRequest) as exc:
        check_media_url(uri, "input.media[0].url", "video")
    assert exc.value.param == "input.media[0].url"


def test_inline_size_limit() -> None:
    uri, data = png_uri()
    with pytest.raises(PayloadTooLarge) as exc:
        check_media_url(uri, PARAM, "image", max_bytes=len(data) - 1)
    assert exc.value.param == PARAM


def test_asset_references_only_where_allowed() -> None:
    assert check_media_url("asset://asset-123", PARAM, "image", allow_asset=True) is None
    with pytest.raises(BadRequest):
        check_media_url("asset://asset-123", PARAM, "image")


def test_inline_seconds_of_a_clip_and_of_urls() -> None:
    assert inline_seconds(clip_uri(2.0)) == pytest.approx(2.0, abs=0.3)
    assert inline_seconds("https://cdn.example/clip.mp4") is None
    assert inline_seconds("data:video/mp4;base64," + base64.b64encode(b"not a video").decode()) is None
