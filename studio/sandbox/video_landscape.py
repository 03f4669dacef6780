"""Text-to-video for the sandbox: a parallax landscape generated from the prompt.

With no image to animate, the clip still has to look like *something* and differ between
prompts, so a few prompt words choose the terrain (hills, city, sea, mountains) and night or
day, the prompt+seed digest chooses the palette, and precomputed layers scroll at different
speeds under a drifting sun. Each layer is tiled twice so any frame-wide window is a plain
slice, which keeps per-frame cost to copies.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from studio.sandbox.video_drawing import Motes, blend, hsv, prompt_caption, seeded_rng

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
        sky_top=hsv(hue, 0.55 + key[2] / 1275.0, 0.55 * light),
        sky_horizon=hsv(hue + 0.08, 0.35, 0.95 * light + (0.1 if night else 0.0)),
        sun=hsv(0.13, 0.05, 1.0) if night else hsv(hue + 0.12, 0.3, 1.0),
        land_far=hsv(land_hue, 0.3, 0.62 * light + 0.05),
        land_near=hsv(land_hue + 0.04, 0.55, 0.22 * light + 0.04),
        accent=hsv(0.15, 0.55, 1.0) if night else hsv(hue + 0.15, 0.25, 1.0),
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
        blend(frame, self.sprite, self.x + self.dx * index, self.y + self.dy * index, self.color, 1.0)


class Landscape:
    """Text-to-video: a parallax landscape whose palette and terrain come from the prompt."""

    def __init__(self, prompt: str, size: tuple[int, int], fps: int, key: bytes) -> None:
        terrain, night = _scene_style(prompt)
        palette = _palette(key, night, terrain)
        width = size[0]
        self.size = size
        self.sky = _sky_panorama(size, palette, night, seeded_rng(key, "sky"))
        self.sky_speed = width * 0.006 / fps
        self.sun = _Sun(size, palette.sun, seeded_rng(key, "sun"), fps)
        self.layers = _terrain_layers(size, terrain, palette, night, seeded_rng(key, "terrain"), fps)
        drift = (14.0, -6.0) if night else (22.0, -10.0)
        self.motes = Motes(
            seeded_rng(key, "motes"),
            size,
            36,
            palette.accent,
            (1.5, 5.0),
            (drift[0] / fps, drift[1] / fps),
            0.8,
        )
        self.caption = prompt_caption(prompt, size)

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
