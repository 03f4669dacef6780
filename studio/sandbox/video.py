"""A local stand-in for a hosted video model.

A fresh install without vendor keys still has to hand back real media, so this module renders
short, browser-playable H.264 MP4 files from the same inputs a hosted video model accepts: a
prompt, optional first and last frames, reference images and an audio flag. The output is not
meant to depict the prompt; it is meant to behave like a real model's output (exact frame count,
a real codec, a faststart layout, a usable last frame) while rendering in a few seconds inline.

Frames are drawn at no more than 1280x720 from precomputed numpy layers with cheap per-frame
operations (slices, masked copies, small sprite blends); larger requests are scaled up by swscale
while converting to yuv420p, which costs far less than drawing every frame at full size.

This module is the public API (sizes, ``make_video``, ``probe``) and the MP4 writer. The frame
sources live in :mod:`~studio.sandbox.video_landscape` (text-to-video) and
:mod:`~studio.sandbox.video_stills` (image-driven modes), their shared primitives in
:mod:`~studio.sandbox.video_drawing`, and the soundtrack in :mod:`~studio.sandbox.video_audio`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import TracebackType

import av
import numpy as np
from av.video.reformatter import ColorPrimaries, ColorRange, Colorspace, ColorTrc
from PIL import Image, ImageOps

from studio.sandbox.video_audio import AUDIO_RATE, soundtrack
from studio.sandbox.video_drawing import cover, seeded_rng
from studio.sandbox.video_landscape import Landscape
from studio.sandbox.video_stills import ImageMotion, Interpolation, Slideshow

__all__ = [
    "RATIOS",
    "RESOLUTIONS",
    "VideoResult",
    "VideoSpec",
    "adaptive_ratio",
    "last_frame_png",
    "make_video",
    "probe",
    "resolution_size",
]

# Aspect ratios hosted video models accept, as (width, height) parts.
RATIOS: dict[str, tuple[int, int]] = {
    "21:9": (21, 9),
    "16:9": (16, 9),
    "4:3": (4, 3),
    "5:4": (5, 4),
    "1:1": (1, 1),
    "4:5": (4, 5),
    "3:4": (3, 4),
    "9:16": (9, 16),
    "9:21": (9, 21),
}
# Resolution names map to the length of the short side, the way vendors name them.
RESOLUTIONS: dict[str, int] = {"480p": 480, "720p": 720, "1080p": 1080, "2160p": 2160, "4k": 2160}

_MAX_RENDER_PIXELS = 1280 * 720  # frames are drawn at most this large and scaled up while encoding
_MAX_SIDE = 8192
_MAX_DURATION = 120.0
_AAC_FRAME = 1024  # samples per AAC frame; feeding whole frames keeps the encoder simple
_CRF = "26"  # small files, still clean for flat generated content
_PRESET = "veryfast"

FrameSource = Callable[[int], np.ndarray]


@dataclass
class VideoSpec:
    """What the caller asked for, already resolved to an output size."""

    prompt: str
    width: int
    height: int
    duration: float  # seconds
    fps: int = 24
    seed: int = 0
    first_frame: Image.Image | None = None
    last_frame: Image.Image | None = None
    reference_images: list[Image.Image] = field(default_factory=list)
    audio: bool = False


@dataclass
class VideoResult:
    """A rendered file plus the facts callers report back without re-reading it."""

    path: Path
    width: int
    height: int
    fps: int
    frames: int
    duration: float
    has_audio: bool
    last_frame: Image.Image  # full output resolution, for "return the last frame" requests
    mode: str = "text_to_video"


# --------------------------------------------------------------------------- sizes


def adaptive_ratio(image: Image.Image) -> str:
    """The listed ratio closest to the image's shape (compared in log space, so 2:1 and 1:2 are symmetric)."""
    width, height = ImageOps.exif_transpose(image).size
    if width <= 0 or height <= 0:
        raise ValueError("image has no pixels")
    shape = math.log(width / height)
    return min(RATIOS, key=lambda name: abs(math.log(RATIOS[name][0] / RATIOS[name][1]) - shape))


def resolution_size(resolution: str, ratio: str, image: Image.Image | None = None) -> tuple[int, int]:
    """Pixel (width, height) for a resolution name and ratio; the short side equals the resolution.

    "adaptive" follows ``image`` (normally the first frame) when one is given and 16:9 otherwise.
    Both sides are even because yuv420p stores chroma at half resolution.
    """
    short = RESOLUTIONS.get(resolution.strip().lower())
    if short is None:
        raise ValueError(f"unknown resolution {resolution!r}; expected one of {sorted(RESOLUTIONS)}")
    name = ratio.strip().lower()
    if name == "adaptive":
        name = adaptive_ratio(image) if image is not None else "16:9"
    if name not in RATIOS:
        raise ValueError(f"unknown ratio {ratio!r}; expected 'adaptive' or one of {list(RATIOS)}")
    parts_w, parts_h = RATIOS[name]
    if parts_w >= parts_h:
        return _even(short * parts_w / parts_h), short
    return short, _even(short * parts_h / parts_w)


def _even(value: float) -> int:
    return max(2, 2 * round(value / 2))


def _render_size(width: int, height: int) -> tuple[int, int]:
    """The size frames are drawn at: the output size, shrunk to the pixel budget if it is larger."""
    scale = min(1.0, math.sqrt(_MAX_RENDER_PIXELS / (width * height)))
    if scale >= 1.0:
        return width, height
    return _even(width * scale), _even(height * scale)


# --------------------------------------------------------------------------- public entry points


def make_video(spec: VideoSpec, out_path: str | os.PathLike[str]) -> VideoResult:
    """Render ``spec`` to an H.264 (+ AAC) MP4 at ``out_path`` and describe the result.

    The mode follows the inputs: first+last frame interpolation, image-to-video from a first
    (or only a last) frame, a reference-image slideshow, or a generated text-to-video scene.
    The file appears atomically, so nothing can serve it half-written.
    """
    _validate(spec)
    frames = max(1, round(spec.duration * spec.fps))
    size = _render_size(spec.width, spec.height)
    key = hashlib.sha256(f"{spec.prompt}\x1f{spec.seed}".encode()).digest()
    source, mode = _frame_source(spec, size, frames, key)
    audio = soundtrack(seeded_rng(key, "audio"), frames / spec.fps) if spec.audio else None

    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    last = np.zeros((size[1], size[0], 3), np.uint8)
    with _Mp4Writer(partial, (spec.width, spec.height), spec.fps, audio) as writer:
        for index in range(frames):
            last = source(index)
            writer.write(last)
    os.replace(partial, path)
    return VideoResult(
        path=path,
        width=spec.width,
        height=spec.height,
        fps=spec.fps,
        frames=frames,
        duration=frames / spec.fps,
        has_audio=audio is not None,
        last_frame=_full_size_last_frame(spec, last),
        mode=mode,
    )


def last_frame_png(result: VideoResult) -> bytes:
    """The last frame as PNG at the video's resolution, unmarked, for chaining clips."""
    image = result.last_frame
    if image.size != (result.width, result.height):
        image = image.resize((result.width, result.height), Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def probe(path: str | os.PathLike[str]) -> dict[str, object]:
    """Read a video file back: codec, size, frame rate, frame count (by demuxing), duration, audio."""
    with av.open(os.fspath(path)) as container:
        if not container.streams.video:
            raise ValueError(f"{path} has no video stream")
        video = container.streams.video[0]
        rate = video.average_rate or video.guessed_rate or video.base_rate
        fps = float(rate) if rate else 0.0
        audio = container.streams.audio[0] if container.streams.audio else None
        info: dict[str, object] = {
            "codec": video.codec_context.name,
            "width": video.codec_context.width,
            "height": video.codec_context.height,
            "fps": round(fps, 3),
            "has_audio": audio is not None,
            "audio_codec": audio.codec_context.name if audio is not None else None,
        }
        duration = float(video.duration * video.time_base) if video.duration and video.time_base else None
        frames = sum(1 for packet in container.demux(video) if packet.size)
    info["frames"] = frames
    info["duration"] = duration if duration is not None else (frames / fps if fps else 0.0)
    return info


def _validate(spec: VideoSpec) -> None:
    if spec.width < 16 or spec.height < 16 or spec.width > _MAX_SIDE or spec.height > _MAX_SIDE:
        raise ValueError(f"size {spec.width}x{spec.height} is outside 16..{_MAX_SIDE}")
    if spec.width % 2 or spec.height % 2:
        raise ValueError(f"size {spec.width}x{spec.height} must be even for yuv420p")
    if not 1 <= spec.fps <= 120:
        raise ValueError(f"fps {spec.fps} is outside 1..120")
    if not 0 < spec.duration <= _MAX_DURATION:
        raise ValueError(f"duration {spec.duration} is outside (0, {_MAX_DURATION}]")


def _frame_source(spec: VideoSpec, size: tuple[int, int], frames: int, key: bytes) -> tuple[FrameSource, str]:
    """Pick the renderer the inputs call for, most specific first."""
    if spec.first_frame is not None and spec.last_frame is not None:
        return Interpolation(
            spec.first_frame, spec.last_frame, size, frames, seeded_rng(key, "pan")
        ), "first_last_frame"
    if spec.first_frame is not None:
        return ImageMotion(spec.first_frame, size, frames, spec.fps, key, ending=False), "image_to_video"
    if spec.last_frame is not None:
        return ImageMotion(spec.last_frame, size, frames, spec.fps, key, ending=True), "last_frame_to_video"
    if spec.reference_images:
        return Slideshow(spec.reference_images, spec.prompt, size, frames, spec.fps, key), "reference_images"
    return Landscape(spec.prompt, size, spec.fps, key), "text_to_video"


def _full_size_last_frame(spec: VideoSpec, last: np.ndarray) -> Image.Image:
    """The final frame at output size; a requested last frame is used as-is so chaining stays lossless."""
    size = (spec.width, spec.height)
    if spec.last_frame is not None:
        return cover(spec.last_frame, size)
    image = Image.fromarray(last)
    if image.size != size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    return image



# --------------------------------------------------------------------------- encoding


class _Mp4Writer:
    """Streams RGB frames, plus an optional soundtrack, into a faststart H.264/AAC MP4.

    Audio is muxed as video advances so the packets stay interleaved, which lets browsers play
    while downloading; faststart moves the index (moov) in front of the media data at close.
    """

    def __init__(self, path: Path, size: tuple[int, int], fps: int, audio: np.ndarray | None) -> None:
        self.path = path
        self.size = size
        self.fps = fps
        self.audio = audio
        self.audio_at = 0
        self.index = 0
        self.container = av.open(os.fspath(path), "w", format="mp4", options={"movflags": "+faststart"})
        try:
            self.video = self._add_video()
            self.audio_stream = self._add_audio() if audio is not None else None
        except Exception:
            self.container.close()
            path.unlink(missing_ok=True)
            raise

    def _add_video(self) -> av.VideoStream:
        stream = self.container.add_stream("libx264", rate=self.fps)
        stream.width, stream.height = self.size
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": _CRF, "preset": _PRESET}
        context = stream.codec_context
        context.gop_size = self.fps * 2  # a keyframe every two seconds keeps scrubbing responsive
        # Tag BT.709 limited range, which is what the frames are converted to, so players agree.
        context.colorspace = Colorspace.ITU709
        context.color_primaries = ColorPrimaries.BT709
        context.color_trc = ColorTrc.BT709
        context.color_range = ColorRange.MPEG
        return stream

    def _add_audio(self) -> av.AudioStream:
        return self.container.add_stream("aac", rate=AUDIO_RATE, layout="stereo", bit_rate=128_000)

    def __enter__(self) -> _Mp4Writer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
            return
        with contextlib.suppress(Exception):  # the original error matters more than a failed cleanup
            self.container.close()
        self.path.unlink(missing_ok=True)

    def write(self, rgb: np.ndarray) -> None:
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
        width, height = self.size
        # One swscale pass both upscales (when frames were drawn smaller) and converts to yuv420p.
        frame = frame.reformat(
            width=width,
            height=height,
            format="yuv420p",
            dst_colorspace=Colorspace.ITU709,
            dst_color_range=ColorRange.MPEG,
            interpolation="BILINEAR",
        )
        frame.pts = self.index
        frame.time_base = Fraction(1, self.fps)
        self.index += 1
        self.container.mux(self.video.encode(frame))
        self._mux_audio(self.index / self.fps)

    def close(self) -> None:
        self.container.mux(self.video.encode(None))
        self._mux_audio(None)
        if self.audio_stream is not None:
            self.container.mux(self.audio_stream.encode(None))
        self.container.close()

    def _mux_audio(self, until: float | None) -> None:
        """Encode soundtrack chunks up to ``until`` seconds (or to the end)."""
        if self.audio is None or self.audio_stream is None:
            return
        total = self.audio.shape[1]
        end = total if until is None else min(total, round(until * AUDIO_RATE))
        while self.audio_at < end:
            stop = min(total, self.audio_at + _AAC_FRAME)
            chunk = np.ascontiguousarray(self.audio[:, self.audio_at : stop])
            frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
            frame.sample_rate = AUDIO_RATE
            frame.pts = self.audio_at
            frame.time_base = Fraction(1, AUDIO_RATE)
            self.container.mux(self.audio_stream.encode(frame))
            self.audio_at = stop
