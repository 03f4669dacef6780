"""A local stand-in for a hosted video model.

A fresh install without vendor keys still has to hand back real media, so this module renders
short, browser-playable H.264 MP4 files from the same inputs a hosted video model accepts: a
prompt, optional first and last frames, reference images and an audio flag. The output is not
meant to depict the prompt; it is meant to behave like a real model's output (exact frame count,
a real codec, a faststart layout, a usable last frame) while rendering in a few seconds inline.

Frames are drawn at no more than 1280x720 from precomputed numpy layers with cheap per-frame
operations (slices, masked copies, small sprite blends); larger requests are scaled up by swscale
while converting to yuv420p, which costs far less than drawing every frame at full size.
"""

from __future__ import annotations

import colorsys
import contextlib
import hashlib
import io
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import TracebackType

import av
import numpy as np
from av.video.reformatter import ColorPrimaries, ColorRange, Colorspace, ColorTrc
from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps

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
_AUDIO_RATE = 48_000
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
    audio = _soundtrack(key, frames / spec.fps) if spec.audio else None

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
        return _Interpolation(
            spec.first_frame, spec.last_frame, size, frames, _rng(key, "pan")
        ), "first_last_frame"
    if spec.first_frame is not None:
        return _ImageMotion(spec.first_frame, size, frames, spec.fps, key, ending=False), "image_to_video"
    if spec.last_frame is not None:
        return _ImageMotion(spec.last_frame, size, frames, spec.fps, key, ending=True), "last_frame_to_video"
    if spec.reference_images:
        return _Slideshow(spec.reference_images, spec.prompt, size, frames, spec.fps, key), "reference_images"
    return _Landscape(spec.prompt, size, spec.fps, key), "text_to_video"


def _full_size_last_frame(spec: VideoSpec, last: np.ndarray) -> Image.Image:
    """The final frame at output size; a requested last frame is used as-is so chaining stays lossless."""
    size = (spec.width, spec.height)
    if spec.last_frame is not None:
        return _cover(spec.last_frame, size)
    image = Image.fromarray(last)
    if image.size != size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    return image


# --------------------------------------------------------------------------- shared helpers


def _rng(key: bytes, salt: str) -> np.random.Generator:
    """A generator seeded from the prompt+seed digest; salts keep independent choices uncorrelated."""
    digest = hashlib.sha256(key + salt.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _progress(index: int, frames: int) -> float:
    """0 on the first frame and exactly 1 on the last, so endpoint frames land on their images."""
    return index / (frames - 1) if frames > 1 else 0.0


def _ease(t: float) -> float:
    """Smoothstep: camera moves and fades start and stop without a jolt."""
    t = min(1.0, max(0.0, t))
    return t * t * (3.0 - 2.0 * t)


def _cover(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Scale and centre-crop to fill ``size``, honouring EXIF rotation from phone uploads."""
    upright = ImageOps.exif_transpose(image).convert("RGB")
    return ImageOps.fit(upright, size, Image.Resampling.LANCZOS)


def _hsv(hue: float, saturation: float, value: float) -> np.ndarray:
    red, green, blue = colorsys.hsv_to_rgb(
        hue % 1.0, min(1.0, max(0.0, saturation)), min(1.0, max(0.0, value))
    )
    return np.array([red, green, blue], np.float32) * 255.0


def _soft_dot(radius: float) -> np.ndarray:
    """A Gaussian-ish alpha sprite; soft edges hide integer positioning."""
    half = max(1, math.ceil(radius * 2.5))
    axis = np.arange(-half, half + 1, dtype=np.float32)
    distance2 = axis[None, :] ** 2 + axis[:, None] ** 2
    return np.exp(-distance2 / (2.0 * (radius * 0.6) ** 2)).astype(np.float32)


def _blend(
    frame: np.ndarray, alpha: np.ndarray, x: float, y: float, color: np.ndarray, opacity: float
) -> None:
    """Alpha-blend a small sprite centred at (x, y) into ``frame`` in place, clipped to the frame."""
    sprite_h, sprite_w = alpha.shape
    height, width = frame.shape[:2]
    left, top = round(x) - sprite_w // 2, round(y) - sprite_h // 2
    x0, y0 = max(0, left), max(0, top)
    x1, y1 = min(width, left + sprite_w), min(height, top + sprite_h)
    if x1 <= x0 or y1 <= y0 or opacity <= 0:
        return
    weight = alpha[y0 - top : y1 - top, x0 - left : x1 - left, None] * opacity
    region = frame[y0:y1, x0:x1]
    region[...] = region + (color - region) * weight


class _Motes:
    """Drifting soft dots (pollen, dust in light, fireflies): cheap motion that reads as "alive"."""

    def __init__(
        self,
        rng: np.random.Generator,
        size: tuple[int, int],
        count: int,
        color: np.ndarray,
        radius: tuple[float, float],
        drift: tuple[float, float],
        opacity: float,
    ) -> None:
        width, height = size
        scale = height / 720.0
        self.size = size
        self.color = color
        self.margin = radius[1] * scale * 3.0
        self.start = rng.uniform(0, 1, (count, 2)) * (width, height)
        speed = rng.uniform(0.4, 1.0, (count, 1)) * scale
        self.velocity = np.asarray(drift, np.float64)[None, :] * speed
        self.wobble = rng.uniform((2.0, 0.02, 0.0), (10.0, 0.08, math.tau), (count, 3)) * (scale, 1, 1)
        self.opacity = rng.uniform(0.4, 1.0, count) * opacity
        self.twinkle = rng.uniform(0.05, 0.2, count)
        radii = rng.uniform(radius[0], radius[1], count) * scale
        self.sprites = [_soft_dot(r) for r in radii]

    def draw(self, frame: np.ndarray, index: int, strength: float = 1.0) -> None:
        if strength <= 0:
            return
        width, height = self.size
        span = np.array([width + 2 * self.margin, height + 2 * self.margin])
        position = self.start + self.velocity * index
        position[:, 0] += self.wobble[:, 0] * np.sin(self.wobble[:, 1] * index + self.wobble[:, 2])
        position = (position + self.margin) % span - self.margin  # wrap so motes re-enter from the far edge
        shimmer = 0.75 + 0.25 * np.sin(self.twinkle * index + self.wobble[:, 2])
        for (x, y), sprite, alpha in zip(
            position, self.sprites, self.opacity * shimmer * strength, strict=True
        ):
            _blend(frame, sprite, x, y, self.color, float(alpha))


class _Overlay:
    """A fixed RGBA band (the caption) kept premultiplied so applying it is one multiply-add."""

    def __init__(self, rgba: Image.Image, top: int) -> None:
        pixels = np.asarray(rgba, np.float32) / 255.0
        self.top = top
        self.alpha = pixels[..., 3:]
        self.premultiplied = pixels[..., :3] * self.alpha * 255.0
        self.keep = 1.0 - self.alpha

    def apply(self, frame: np.ndarray) -> None:
        region = frame[self.top : self.top + self.alpha.shape[0]]
        region[...] = region * self.keep + self.premultiplied


def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=pixels)
    except (OSError, TypeError):  # Pillow built without FreeType falls back to the bitmap font
        return ImageFont.load_default()


def _wrap(
    text: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: float, lines: int
) -> list[str]:
    """Greedy word wrap into at most ``lines`` lines, ending with an ellipsis when text is cut."""
    draw = ImageDraw.Draw(Image.new("L", (1, 1)))
    out: list[str] = []
    words = text.split()
    while words and len(out) < lines:
        line = words.pop(0)
        while words and draw.textlength(f"{line} {words[0]}", font=font) <= width:
            line = f"{line} {words.pop(0)}"
        out.append(line)
    if words or (out and draw.textlength(out[-1], font=font) > width):
        last = out[-1]
        while last and draw.textlength(f"{last}...", font=font) > width:
            last = last[:-1]
        out[-1] = f"{last.rstrip()}..."
    return out


def _caption(prompt: str, size: tuple[int, int]) -> _Overlay | None:
    """The prompt on a soft dark band along the bottom, so a glance says what was asked for."""
    text = " ".join(prompt.split())
    if not text:
        return None
    width, height = size
    font_px = max(12, round(height / 26))
    font = _font(font_px)
    lines = _wrap(text, font, width * 0.9, 2)
    line_h = round(font_px * 1.35)
    band_h = min(height, line_h * len(lines) + 2 * font_px)
    ramp = np.linspace(0.0, 1.0, band_h, dtype=np.float32) ** 1.5 * 170.0
    band = np.zeros((band_h, width, 4), np.uint8)
    band[..., 3] = ramp[:, None].astype(np.uint8)
    layer = Image.fromarray(band, "RGBA")
    text_layer = Image.new("RGBA", layer.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(text_layer)
    y = band_h - font_px // 2 - line_h * len(lines)
    shadow = max(1, font_px // 14)
    for line in lines:
        x = (width - draw.textlength(line, font=font)) / 2
        draw.text((x + shadow, y + shadow), line, font=font, fill=(0, 0, 0, 170))
        draw.text((x, y), line, font=font, fill=(255, 255, 255, 235))
        y += line_h
    return _Overlay(Image.alpha_composite(layer, text_layer), height - band_h)


# --------------------------------------------------------------------------- text to video


_TERRAIN_WORDS: dict[str, tuple[str, ...]] = {
    "city": ("city", "street", "building", "urban", "skyline", "town", "downtown", "skyscraper"),
    "sea": ("sea", "ocean", "water", "beach", "lake", "river", "wave", "surf", "boat", "coast", "shore"),
    "mountains": ("mountain", "peak", "alps", "cliff", "snow", "glacier", "canyon", "volcano"),
}
_NIGHT_WORDS = ("night", "star", "space", "moon", "galaxy", "midnight", "neon", "dark", "aurora")


def _scene_style(prompt: str) -> tuple[str, bool]:
    """A few prompt words steer the scene (terrain, night) so different prompts look different."""
    words = re.findall(r"[a-z]+", prompt.lower())

    def mentions(stems: Sequence[str]) -> bool:
        return any(word.startswith(stem) for word in words for stem in stems)

    terrain = next((name for name, stems in _TERRAIN_WORDS.items() if mentions(stems)), "hills")
    return terrain, mentions(_NIGHT_WORDS)


@dataclass(frozen=True)
class _Palette:
    sky_top: np.ndarray
    sky_horizon: np.ndarray
    sun: np.ndarray
    land_far: np.ndarray
    land_near: np.ndarray
    accent: np.ndarray


def _palette(key: bytes, night: bool, terrain: str) -> _Palette:
    """Colours from the prompt+seed digest: a sky hue and a related land hue, darker at night."""
    hue = key[0] / 255.0
    land_hue = hue + 0.02 if terrain == "sea" else hue + 0.42 + (key[1] / 255.0 - 0.5) * 0.25
    light = 0.35 if night else 1.0
    return _Palette(
        sky_top=_hsv(hue, 0.55 + key[2] / 1275.0, 0.55 * light),
        sky_horizon=_hsv(hue + 0.08, 0.35, 0.95 * light + (0.1 if night else 0.0)),
        sun=_hsv(0.13, 0.05, 1.0) if night else _hsv(hue + 0.12, 0.3, 1.0),
        land_far=_hsv(land_hue, 0.3, 0.62 * light + 0.05),
        land_near=_hsv(land_hue + 0.04, 0.55, 0.22 * light + 0.04),
        accent=_hsv(0.15, 0.55, 1.0) if night else _hsv(hue + 0.15, 0.25, 1.0),
    )


def _sky_panorama(
    size: tuple[int, int], palette: _Palette, night: bool, rng: np.random.Generator
) -> np.ndarray:
    """A gradient sky with clouds (or stars), one frame wide and tileable, stored twice side by side."""
    width, height = size
    t = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None] ** 1.3
    gradient = palette.sky_top * (1.0 - t) + palette.sky_horizon * t
    sky = np.repeat(gradient[:, None, :], width, axis=1)
    if night:
        count = width * height // 700
        xs = rng.integers(0, width, count)
        ys = (rng.uniform(0, 1, count) ** 1.6 * height * 0.7).astype(int)
        sky[ys, xs] = np.maximum(sky[ys, xs], rng.uniform(120, 255, (count, 1)))
    else:
        clouds = _cloud_mask(size, rng)[..., None] * 0.65
        tint = palette.sky_horizon * 0.4 + 255.0 * 0.6
        sky = sky + (tint - sky) * clouds
    sky = np.clip(sky, 0, 255).astype(np.uint8)
    return np.concatenate([sky, sky], axis=1)


def _cloud_mask(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Blurred ellipse clusters drawn small; drawing three copies before blurring keeps the seam invisible."""
    width, height = size
    tile_w, tile_h = max(8, width // 4), max(8, height // 4)
    canvas = Image.new("L", (tile_w * 3, tile_h), 0)
    draw = ImageDraw.Draw(canvas)
    for _ in range(int(rng.integers(4, 8))):
        cx, cy = rng.uniform(0, tile_w), rng.uniform(0.08, 0.42) * tile_h
        for _ in range(int(rng.integers(3, 6))):
            rx, ry = rng.uniform(0.04, 0.1) * tile_w, rng.uniform(0.03, 0.06) * tile_h
            dx, dy = rng.uniform(-1.5, 1.5) * rx, rng.uniform(-0.6, 0.6) * ry
            for copy in range(3):
                x = cx + dx + copy * tile_w
                draw.ellipse((x - rx, cy + dy - ry, x + rx, cy + dy + ry), fill=255)
    canvas = canvas.filter(ImageFilter.GaussianBlur(max(1.0, tile_h * 0.03)))
    tile = canvas.crop((tile_w, 0, 2 * tile_w, tile_h)).resize(size, Image.Resampling.BILINEAR)
    return np.asarray(tile, np.float32) / 255.0


def _profile(kind: str, rng: np.random.Generator, width: int, base: float, amplitude: float) -> np.ndarray:
    """The skyline of one layer as a row per column; periodic over ``width`` so it scrolls forever."""
    x = np.arange(width, dtype=np.float64) / width
    if kind == "city":
        heights = np.empty(width)
        column = 0
        while column < width:
            span = int(rng.uniform(0.025, 0.08) * width) + 2
            heights[column : column + span] = base - rng.uniform(0.25, 1.0) * amplitude * 1.6
            column += span
        return heights
    if kind == "sea":
        cycles, weights = rng.integers(6, 18, 3), np.array([0.5, 0.3, 0.2])
        shape = sum(
            w * np.sin(math.tau * (c * x + rng.uniform())) for c, w in zip(cycles, weights, strict=True)
        )
        return base - amplitude * 0.15 * shape
    if kind == "mountains":
        cycles = rng.integers(2, 9, 4)
        ridge = sum(
            (1.0 - 2.0 * np.abs(((c * x + rng.uniform()) % 1.0) - 0.5)) / (i + 1)
            for i, c in enumerate(cycles)
        )
        return base - amplitude * 1.4 * ridge / 2.1
    cycles = rng.integers(1, 6, 3)
    shape = sum(np.sin(math.tau * (c * x + rng.uniform())) / (i + 1) for i, c in enumerate(cycles))
    return base - amplitude * (0.55 + 0.3 * shape)


@dataclass
class _Layer:
    rgb: np.ndarray  # (h, 2w, 3): tiled twice so any w-wide window is a plain slice
    mask: np.ndarray  # (h, 2w) True where the layer covers what is behind it
    top: int  # first row the layer can touch, to skip the sky above it
    speed: float  # pixels per frame; nearer layers move faster (parallax)


def _terrain_layers(
    size: tuple[int, int], terrain: str, palette: _Palette, night: bool, rng: np.random.Generator, fps: int
) -> list[_Layer]:
    width, height = size
    rows = np.arange(height)[:, None]
    layers = []
    for index in range(3):
        depth = index / 2.0
        kind = "hills" if terrain == "sea" and index == 0 else terrain
        base = height * (0.55 + 0.14 * depth)
        amplitude = height * (0.16 - 0.05 * depth)
        profile = np.clip(_profile(kind, rng, width, base, amplitude), 0, height - 1)
        color = palette.land_far * (1.0 - depth) + palette.land_near * depth
        shade = np.linspace(1.08, 0.72, height, dtype=np.float32)[:, None]
        rgb = np.repeat(np.clip(color * shade, 0, 255)[:, None, :], width, axis=1)
        if kind == "city":
            _light_windows(rgb, rng, palette.accent, 0.35 if night else 0.08, height)
        mask = rows >= profile[None, :]
        layers.append(
            _Layer(
                rgb=np.concatenate([rgb, rgb], axis=1).astype(np.uint8),
                mask=np.concatenate([mask, mask], axis=1),
                top=int(profile.min()),
                speed=width * (0.012 + 0.1 * depth**1.5) / fps,
            )
        )
    return layers


def _light_windows(
    rgb: np.ndarray, rng: np.random.Generator, color: np.ndarray, share: float, height: int
) -> None:
    """Scatter lit windows over a city layer's texture; the layer mask keeps them on the buildings."""
    cell = max(4, height // 90)
    rows, cols = rgb.shape[0] // (cell * 2), rgb.shape[1] // cell
    lit = rng.random((rows, cols)) < share
    window = np.zeros((cell * 2, cell), bool)
    window[cell // 2 : cell * 2 - cell // 2, cell // 4 : cell - cell // 4] = True
    pattern = np.kron(lit, window)
    target = rgb[: pattern.shape[0], : pattern.shape[1]]
    target[pattern] = target[pattern] * 0.3 + color * 0.7


class _Sun:
    """A sun (or moon) with a glow that slowly arcs across the sky behind the terrain."""

    def __init__(self, size: tuple[int, int], color: np.ndarray, rng: np.random.Generator, fps: int) -> None:
        width, height = size
        radius = height * rng.uniform(0.05, 0.08)
        half = math.ceil(radius * 3.2)
        axis = np.arange(-half, half + 1, dtype=np.float32)
        distance = np.sqrt(axis[None, :] ** 2 + axis[:, None] ** 2)
        disc = np.clip(radius - distance + 0.5, 0.0, 1.0)
        glow = 0.45 * np.exp(-((distance / (radius * 1.6)) ** 2))
        self.sprite = np.maximum(disc, glow).astype(np.float32)
        self.color = color
        self.x = width * rng.uniform(0.18, 0.82)
        self.y = height * rng.uniform(0.22, 0.42)
        self.dx = width * rng.choice([-1.0, 1.0]) * 0.015 / fps
        self.dy = -height * 0.01 / fps

    def draw(self, frame: np.ndarray, index: int) -> None:
        _blend(frame, self.sprite, self.x + self.dx * index, self.y + self.dy * index, self.color, 1.0)


class _Landscape:
    """Text-to-video: a parallax landscape whose palette and terrain come from the prompt."""

    def __init__(self, prompt: str, size: tuple[int, int], fps: int, key: bytes) -> None:
        terrain, night = _scene_style(prompt)
        palette = _palette(key, night, terrain)
        width = size[0]
        self.size = size
        self.sky = _sky_panorama(size, palette, night, _rng(key, "sky"))
        self.sky_speed = width * 0.006 / fps
        self.sun = _Sun(size, palette.sun, _rng(key, "sun"), fps)
        self.layers = _terrain_layers(size, terrain, palette, night, _rng(key, "terrain"), fps)
        drift = (14.0, -6.0) if night else (22.0, -10.0)
        self.motes = _Motes(
            _rng(key, "motes"), size, 36, palette.accent, (1.5, 5.0), (drift[0] / fps, drift[1] / fps), 0.8
        )
        self.caption = _caption(prompt, size)

    def __call__(self, index: int) -> np.ndarray:
        width = self.size[0]
        offset = round(self.sky_speed * index) % width
        frame = self.sky[:, offset : offset + width].copy()
        self.sun.draw(frame, index)
        for layer in self.layers:
            offset = round(layer.speed * index) % width
            window = slice(offset, offset + width)
            np.copyto(
                frame[layer.top :],
                layer.rgb[layer.top :, window],
                where=layer.mask[layer.top :, window, None],
            )
        self.motes.draw(frame, index)
        if self.caption is not None:
            self.caption.apply(frame)
        return frame


# --------------------------------------------------------------------------- image-driven modes


def _pan(rng: np.random.Generator) -> tuple[float, float]:
    angle = rng.uniform(0, math.tau)
    return 0.7 * math.cos(angle), 0.7 * math.sin(angle)


class _CameraMove:
    """A slow zoom with a drift toward one side over a still; zoom 1 shows exactly the still."""

    def __init__(
        self, image: Image.Image, size: tuple[int, int], zoom: tuple[float, float], pan: tuple[float, float]
    ) -> None:
        self.size = size
        self.zoom = zoom
        self.pan = pan
        self.base = _cover(image, size)
        top = max(zoom)
        # A larger source keeps zoomed frames sharp instead of upsampling the output-size still.
        self.source = _cover(image, (round(size[0] * top), round(size[1] * top))) if top > 1 else self.base

    def at(self, t: float) -> Image.Image:
        zoom = self.zoom[0] + (self.zoom[1] - self.zoom[0]) * _ease(t)
        if zoom <= 1.0 + 1e-6:
            return self.base
        source_w, source_h = self.source.size
        box_w, box_h = source_w / zoom, source_h / zoom
        # Drift is proportional to the zoom margin, so there is none (and no crop) at zoom 1.
        cx = source_w / 2 + self.pan[0] * (source_w - box_w) / 2
        cy = source_h / 2 + self.pan[1] * (source_h - box_h) / 2
        box = (cx - box_w / 2, cy - box_h / 2, cx + box_w / 2, cy + box_h / 2)
        return self.source.resize(self.size, Image.Resampling.BILINEAR, box=box)


class _ImageMotion:
    """Image-to-video: a camera move from (or, with ``ending``, onto) one still, with dust in the light."""

    def __init__(
        self, image: Image.Image, size: tuple[int, int], frames: int, fps: int, key: bytes, ending: bool
    ) -> None:
        zoom = (1.15, 1.0) if ending else (1.0, 1.15)
        self.camera = _CameraMove(image, size, zoom, _pan(_rng(key, "pan")))
        self.frames = frames
        self.ending = ending
        self.fade = max(1, round(0.6 * fps))
        glow = np.array([255.0, 246.0, 224.0], np.float32)
        self.motes = _Motes(_rng(key, "dust"), size, 40, glow, (1.2, 3.5), (3.0 / fps, -9.0 / fps), 0.35)

    def __call__(self, index: int) -> np.ndarray:
        frame = np.array(self.camera.at(_progress(index, self.frames)))
        # The dust fades in (or out) so the frame on the given image is the image itself.
        edge = self.frames - 1 - index if self.ending else index
        self.motes.draw(frame, index, min(1.0, edge / self.fade))
        return frame


class _Interpolation:
    """First+last frame: zoom into the first still while crossfading to the last, which settles at zoom 1."""

    def __init__(
        self,
        first: Image.Image,
        last: Image.Image,
        size: tuple[int, int],
        frames: int,
        rng: np.random.Generator,
    ) -> None:
        pan = _pan(rng)
        self.start = _CameraMove(first, size, (1.0, 1.12), pan)
        self.end = _CameraMove(last, size, (1.12, 1.0), (-pan[0], -pan[1]))
        self.frames = frames

    def __call__(self, index: int) -> np.ndarray:
        t = _progress(index, self.frames)
        mix = _ease((t - 0.12) / 0.76)  # hold briefly on each end so both stills read clearly
        if mix <= 0.0:
            return np.asarray(self.start.at(t))
        if mix >= 1.0:
            return np.asarray(self.end.at(t))
        return np.asarray(Image.blend(self.start.at(t), self.end.at(t), mix))


class _Slideshow:
    """Reference images: each gets a camera move, with crossfades between them and the prompt caption."""

    def __init__(
        self,
        images: Sequence[Image.Image],
        prompt: str,
        size: tuple[int, int],
        frames: int,
        fps: int,
        key: bytes,
    ) -> None:
        rng = _rng(key, "slides")
        self.moves = [
            _CameraMove(image, size, (1.0, 1.15) if n % 2 == 0 else (1.15, 1.0), _pan(rng))
            for n, image in enumerate(images)
        ]
        self.span = frames / len(self.moves)
        self.fade = min(0.6 * fps, self.span * 0.4)
        self.caption = _caption(prompt, size)

    def _slide(self, n: int, index: int) -> Image.Image:
        # Each slide's move spans its own time plus half a crossfade on either side.
        start = n * self.span - self.fade / 2
        return self.moves[n].at((index - start) / (self.span + self.fade))

    def __call__(self, index: int) -> np.ndarray:
        n = min(len(self.moves) - 1, int(index // self.span))
        image = self._slide(n, index)
        into_next = index - ((n + 1) * self.span - self.fade / 2)
        from_prev = index - (n * self.span - self.fade / 2)
        if n + 1 < len(self.moves) and into_next > 0:
            image = Image.blend(image, self._slide(n + 1, index), _ease(into_next / self.fade))
        elif n > 0 and from_prev < self.fade:
            image = Image.blend(self._slide(n - 1, index), image, _ease(from_prev / self.fade))
        frame = np.array(image)
        if self.caption is not None:
            self.caption.apply(frame)
        return frame


# --------------------------------------------------------------------------- audio


_ROOTS_HZ = (130.81, 146.83, 164.81, 174.61, 196.00)  # C3..G3: warm without getting muddy
# Chords as semitones above the root; progressions every listener has heard a thousand times.
_PROGRESSIONS: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((0, 4, 7), (7, 11, 14), (9, 12, 16), (5, 9, 12)),
    ((0, 4, 7), (9, 12, 16), (5, 9, 12), (7, 11, 14)),
    ((9, 12, 16), (5, 9, 12), (0, 4, 7), (7, 11, 14)),
    ((0, 4, 7, 11), (5, 9, 12, 16), (2, 5, 9, 12), (7, 11, 14, 17)),
)


def _smoothstep(values: np.ndarray) -> np.ndarray:
    values = np.clip(values, 0.0, 1.0)
    return values * values * (3.0 - 2.0 * values)


def _voice(t: np.ndarray, frequency: float) -> np.ndarray:
    """A soft organ-like tone: the fundamental with two quiet harmonics."""
    phase = math.tau * frequency * t
    return np.sin(phase) + 0.3 * np.sin(2 * phase) + 0.1 * np.sin(3 * phase)


def _soundtrack(key: bytes, seconds: float, rate: int = _AUDIO_RATE) -> np.ndarray:
    """A stereo pad cycling through a chord progression chosen by the digest, faded in and out.

    Returns float32 samples shaped (2, n) in [-1, 1], the layout the AAC encoder wants (fltp).
    """
    rng = _rng(key, "audio")
    root = float(rng.choice(_ROOTS_HZ))
    progression = _PROGRESSIONS[int(rng.integers(len(_PROGRESSIONS)))]
    total = max(1, round(seconds * rate))
    t = np.arange(total, dtype=np.float64) / rate
    chords = max(1, round(seconds / 2.5))
    span = seconds / chords
    fade = min(0.5, span / 2)
    out = np.zeros((2, total))
    for n in range(chords):
        notes = progression[n % len(progression)]
        lo, hi = max(0, int((n * span - fade) * rate)), min(total, int(((n + 1) * span + fade) * rate) + 1)
        part = t[lo:hi]
        # Complementary smoothsteps at each boundary sum to one, so chord changes never dip or swell.
        rise = 1.0 if n == 0 else _smoothstep((part - n * span) / fade + 0.5)
        fall = 1.0 if n == chords - 1 else 1.0 - _smoothstep((part - (n + 1) * span) / fade + 0.5)
        frequencies = [root * 2 ** (s / 12) for s in notes] + [root * 2 ** ((notes[0] - 12) / 12)]
        chime = _chime(part - n * span, root * 2 ** (notes[-1] / 12 + 1))
        for channel, detune in enumerate((0.9986, 1.0014)):  # slight detune between ears for width
            pad = sum(_voice(part, f * detune) for f in frequencies)
            out[channel, lo:hi] += (pad + chime) * rise * fall
    for channel, phase in enumerate((0.0, 1.7)):
        out[channel] *= 1.0 + 0.12 * np.sin(math.tau * 0.3 * t + phase)  # slow swell so the pad breathes
    envelope = _smoothstep(t / min(0.6, seconds / 4)) * _smoothstep((seconds - t) / min(1.0, seconds / 3))
    out *= envelope
    peak = float(np.abs(out).max())
    if peak > 0:
        out *= 0.3 / peak  # about -10 dBFS: present but never loud
    return np.ascontiguousarray(out, dtype=np.float32)


def _chime(t: np.ndarray, frequency: float) -> np.ndarray:
    """A decaying bell note at each chord change; the 5 ms attack avoids a click."""
    started = np.clip(t / 0.005, 0.0, 1.0)
    return 1.2 * started * np.exp(-np.maximum(t, 0.0) * 2.5) * np.sin(math.tau * frequency * t)


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
        return self.container.add_stream("aac", rate=_AUDIO_RATE, layout="stereo", bit_rate=128_000)

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
        end = total if until is None else min(total, round(until * _AUDIO_RATE))
        while self.audio_at < end:
            stop = min(total, self.audio_at + _AAC_FRAME)
            chunk = np.ascontiguousarray(self.audio[:, self.audio_at : stop])
            frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
            frame.sample_rate = _AUDIO_RATE
            frame.pts = self.audio_at
            frame.time_base = Fraction(1, _AUDIO_RATE)
            self.container.mux(self.audio_stream.encode(frame))
            self.audio_at = stop
