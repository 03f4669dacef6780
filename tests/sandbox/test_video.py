"""The offline video model must produce real, browser-playable H.264 MP4 files."""

from __future__ import annotations

import io
import time
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageOps

from studio.sandbox.video import (
    VideoResult,
    VideoSpec,
    adaptive_ratio,
    last_frame_png,
    make_video,
    probe,
    resolution_size,
)


@pytest.fixture(autouse=True)
def _media_root() -> None:
    """Shadows the shared Django fixture: rendering needs no settings, so these tests run without Django."""


@pytest.fixture(autouse=True)
def _fresh_gateway_state() -> None:
    """Shadows the shared gateway reset, which imports Django models this module never touches."""


def _decode(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def _diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def _picture(size: tuple[int, int], hue: int) -> Image.Image:
    """A still with edges and gradients, so camera moves and crossfades show up in pixel diffs."""
    width, height = size
    ramp = np.linspace(0, 255, width, dtype=np.uint8)
    pixels = np.stack(
        [
            np.tile(ramp, (height, 1)),
            np.full((height, width), hue, np.uint8),
            np.tile(ramp[::-1], (height, 1)),
        ],
        axis=-1,
    )
    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    for n in range(6):
        x, y = width * (n + 1) // 8, height * ((n * 3) % 5 + 1) // 7
        draw.ellipse((x - 40, y - 40, x + 40, y + 40), fill=(255 - hue, 30 * n, hue))
    draw.rectangle((width // 3, height // 3, width // 2, height // 2), fill=(255, 255, 255))
    return image


@pytest.fixture(scope="module")
def text_video(tmp_path_factory: pytest.TempPathFactory) -> VideoResult:
    width, height = resolution_size("480p", "16:9")
    spec = VideoSpec(prompt="rolling hills under a summer sky", width=width, height=height, duration=2.0)
    return make_video(spec, tmp_path_factory.mktemp("t2v") / "clip.mp4")


def test_text_to_video_is_h264_mp4_with_exact_frames(text_video: VideoResult) -> None:
    info = probe(text_video.path)
    assert info["codec"] == "h264"
    assert (info["width"], info["height"]) == (854, 480)
    assert info["fps"] == 24
    assert info["frames"] == 48
    assert info["duration"] == pytest.approx(2.0, abs=0.05)
    assert info["has_audio"] is False
    assert (text_video.width, text_video.height, text_video.frames) == (854, 480, 48)
    assert text_video.duration == pytest.approx(2.0)
    assert text_video.mode == "text_to_video"
    with av.open(str(text_video.path)) as container:
        assert container.streams.video[0].codec_context.pix_fmt == "yuv420p"


def test_text_to_video_moves(text_video: VideoResult) -> None:
    frames = _decode(text_video.path)
    assert len(frames) == 48
    steps = [_diff(a, b) for a, b in zip(frames, frames[1:], strict=False)]
    assert min(steps) > 0.05, "every frame should differ from the one before"
    assert _diff(frames[0], frames[-1]) > 2.0, "the scene should travel visibly over the clip"


def test_moov_atom_precedes_media_data(text_video: VideoResult) -> None:
    data = text_video.path.read_bytes()
    assert data.index(b"moov") < data.index(b"mdat")
    assert data[4:8] == b"ftyp"


def test_last_frame_png_is_full_resolution(text_video: VideoResult) -> None:
    image = Image.open(io.BytesIO(last_frame_png(text_video)))
    assert image.format == "PNG"
    assert image.size == (854, 480)
    decoded_last = _decode(text_video.path)[-1]
    assert _diff(np.asarray(image.convert("RGB")), decoded_last) < 6


def test_image_to_video_starts_on_the_first_frame(tmp_path: Path) -> None:
    width, height = resolution_size("480p", "16:9")
    still = _picture((1280, 720), hue=90)
    spec = VideoSpec(prompt="slow push in", width=width, height=height, duration=1.5, first_frame=still)
    result = make_video(spec, tmp_path / "i2v.mp4")
    assert result.mode == "image_to_video"
    frames = _decode(result.path)
    assert len(frames) == 36
    expected = np.asarray(ImageOps.fit(still, (width, height)))
    assert _diff(frames[0], expected) < 4
    assert _diff(frames[-1], expected) > _diff(frames[0], expected) + 3, "the camera should move"


def test_first_and_last_frames_anchor_both_ends(tmp_path: Path) -> None:
    width, height = resolution_size("480p", "16:9")
    first, last = _picture((854, 480), hue=20), _picture((854, 480), hue=230).transpose(Image.FLIP_LEFT_RIGHT)
    spec = VideoSpec(prompt="", width=width, height=height, duration=1.0, first_frame=first, last_frame=last)
    result = make_video(spec, tmp_path / "flf.mp4")
    assert result.mode == "first_last_frame"
    frames = _decode(result.path)
    assert _diff(frames[0], np.asarray(first)) < 4
    assert _diff(frames[-1], np.asarray(last)) < 4
    assert _diff(frames[-1], np.asarray(first)) > 20
    assert np.array_equal(np.asarray(result.last_frame), np.asarray(last))


def test_reference_images_make_a_slideshow(tmp_path: Path) -> None:
    refs = [_picture((640, 640), hue=h) for h in (0, 120, 240)]
    spec = VideoSpec(prompt="a product tour", width=480, height=480, duration=1.5, reference_images=refs)
    result = make_video(spec, tmp_path / "refs.mp4")
    assert result.mode == "reference_images"
    info = probe(result.path)
    assert (info["width"], info["height"], info["frames"]) == (480, 480, 36)


def test_audio_track_matches_the_video(tmp_path: Path) -> None:
    width, height = resolution_size("480p", "4:3")
    spec = VideoSpec(prompt="ocean waves", width=width, height=height, duration=2.0, seed=7, audio=True)
    result = make_video(spec, tmp_path / "audio.mp4")
    assert result.has_audio
    info = probe(result.path)
    assert info["has_audio"] is True
    assert info["audio_codec"] == "aac"
    with av.open(str(result.path)) as container:
        stream = container.streams.audio[0]
        assert stream.duration is not None
        assert float(stream.duration * stream.time_base) == pytest.approx(2.0, abs=0.1)
        samples = np.concatenate([frame.to_ndarray().ravel() for frame in container.decode(audio=0)])
    assert 0.05 < float(np.abs(samples).max()) <= 1.0, "the soundtrack should be audible but not clip"
    assert result.path.read_bytes().index(b"moov") < result.path.read_bytes().index(b"mdat")


def test_portrait_ratio_gives_a_portrait_video(tmp_path: Path) -> None:
    width, height = resolution_size("480p", "9:16")
    result = make_video(VideoSpec("city street", width, height, 0.5), tmp_path / "tall.mp4")
    info = probe(result.path)
    assert (info["width"], info["height"]) == (480, 854)
    assert info["height"] > info["width"]


def test_large_outputs_keep_the_requested_size(tmp_path: Path) -> None:
    width, height = resolution_size("1080p", "16:9")
    result = make_video(VideoSpec("snowy mountains", width, height, 0.25), tmp_path / "big.mp4")
    info = probe(result.path)
    assert (info["width"], info["height"], info["frames"]) == (1920, 1080, 6)
    assert Image.open(io.BytesIO(last_frame_png(result))).size == (1920, 1080)


def test_same_spec_renders_the_same_pixels(tmp_path: Path) -> None:
    def first_frame(seed: int, name: str) -> np.ndarray:
        spec = VideoSpec("a neon city at night", 640, 360, 0.25, seed=seed)
        return _decode(make_video(spec, tmp_path / name).path)[0]

    assert np.array_equal(first_frame(3, "a.mp4"), first_frame(3, "b.mp4"))
    assert not np.array_equal(first_frame(3, "a.mp4"), first_frame(4, "c.mp4"))


@pytest.mark.parametrize(
    ("resolution", "ratio", "size"),
    [
        ("720p", "16:9", (1280, 720)),
        ("480p", "16:9", (854, 480)),
        ("480P", "4:3", (640, 480)),
        ("720p", "1:1", (720, 720)),
        ("720p", "3:4", (720, 960)),
        ("1080p", "9:16", (1080, 1920)),
        ("1080P", "21:9", (2520, 1080)),
        ("720p", "9:21", (720, 1680)),
        ("480p", "5:4", (600, 480)),
        ("480p", "4:5", (480, 600)),
        ("4k", "16:9", (3840, 2160)),
        ("4K", "9:16", (2160, 3840)),
        ("720p", "adaptive", (1280, 720)),
    ],
)
def test_resolution_size_table(resolution: str, ratio: str, size: tuple[int, int]) -> None:
    assert resolution_size(resolution, ratio) == size


def test_resolution_sizes_are_even_with_the_short_side_fixed() -> None:
    for resolution, short in (("480p", 480), ("720p", 720), ("1080p", 1080), ("4k", 2160)):
        for ratio in ("16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "9:21", "5:4", "4:5"):
            width, height = resolution_size(resolution, ratio)
            assert width % 2 == 0 and height % 2 == 0
            assert min(width, height) == short


def test_adaptive_ratio_follows_the_first_frame() -> None:
    assert adaptive_ratio(Image.new("RGB", (1080, 1920))) == "9:16"
    assert adaptive_ratio(Image.new("RGB", (1000, 1000))) == "1:1"
    assert adaptive_ratio(Image.new("RGB", (1600, 1180))) == "4:3"
    assert resolution_size("720p", "adaptive", Image.new("RGB", (600, 800))) == (720, 960)


@pytest.mark.parametrize(("resolution", "ratio"), [("360x", "16:9"), ("720p", "2:1"), ("720p", "")])
def test_resolution_size_rejects_unknown_values(resolution: str, ratio: str) -> None:
    with pytest.raises(ValueError):
        resolution_size(resolution, ratio)


def test_invalid_specs_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        make_video(VideoSpec("odd", 853, 480, 1.0), tmp_path / "odd.mp4")
    with pytest.raises(ValueError):
        make_video(VideoSpec("empty", 640, 360, 0.0), tmp_path / "empty.mp4")
    assert not list(tmp_path.iterdir())


def test_five_second_720p_timing(tmp_path: Path) -> None:
    width, height = resolution_size("720p", "16:9")
    for audio in (False, True):
        started = time.perf_counter()
        result = make_video(
            VideoSpec("a calm lake at sunset", width, height, 5.0, audio=audio), tmp_path / "t.mp4"
        )
        elapsed = time.perf_counter() - started
        size_kb = result.path.stat().st_size / 1024
        print(f"5 s 720p (audio={audio}): {elapsed:.2f} s, {size_kb:.0f} KiB, {result.frames} frames")
        assert result.frames == 120
