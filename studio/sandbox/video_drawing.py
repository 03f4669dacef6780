"""Drawing primitives shared by the sandbox video's frame sources.

The frame sources in :mod:`~studio.sandbox.video_landscape` and
:mod:`~studio.sandbox.video_stills` all need the same few things: deterministic randomness
derived from the prompt+seed digest, easing so motion starts and stops without a jolt, soft
sprites blended into numpy frames, drifting motes that make a still feel alive, and the prompt
caption. They live here so each frame source stays about one kind of motion.

Everything works on ``(h, w, 3)`` float or uint8 numpy frames in place; per-frame work is kept
to slices and small sprite blends because a clip renders inline within a request.
"""

from __future__ import annotations

import colorsys
import hashlib
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont, ImageOps


def seeded_rng(key: bytes, salt: str) -> np.random.Generator:
    """A generator seeded from the prompt+seed digest; salts keep independent choices uncorrelated."""
    digest = hashlib.sha256(key + salt.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def progress(index: int, frames: int) -> float:
    """0 on the first frame and exactly 1 on the last, so endpoint frames land on their images."""
    return index / (frames - 1) if frames > 1 else 0.0


def ease(t: float) -> float:
    """Smoothstep: camera moves and fades start and stop without a jolt."""
    t = min(1.0, max(0.0, t))
    return t * t * (3.0 - 2.0 * t)


def cover(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Scale and centre-crop to fill ``size``, honouring EXIF rotation from phone uploads."""
    upright = ImageOps.exif_transpose(image).convert("RGB")
    return ImageOps.fit(upright, size, Image.Resampling.LANCZOS)


def hsv(hue: float, saturation: float, value: float) -> np.ndarray:
    red, green, blue = colorsys.hsv_to_rgb(
        hue % 1.0, min(1.0, max(0.0, saturation)), min(1.0, max(0.0, value))
    )
    return np.array([red, green, blue], np.float32) * 255.0


def soft_dot(radius: float) -> np.ndarray:
    """A Gaussian-ish alpha sprite; soft edges hide integer positioning."""
    half = max(1, math.ceil(radius * 2.5))
    axis = np.arange(-half, half + 1, dtype=np.float32)
    distance2 = axis[None, :] ** 2 + axis[:, None] ** 2
    return np.exp(-distance2 / (2.0 * (radius * 0.6) ** 2)).astype(np.float32)


def blend(
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


class Motes:
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
        self.sprites = [soft_dot(r) for r in radii]

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
            blend(frame, sprite, x, y, self.color, float(alpha))


class Overlay:
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


def prompt_caption(prompt: str, size: tuple[int, int]) -> Overlay | None:
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
    return Overlay(Image.alpha_composite(layer, text_layer), height - band_h)

