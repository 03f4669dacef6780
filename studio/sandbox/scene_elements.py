"""The brushes the offline image model paints with: raster helpers and scene elements.

:mod:`studio.sandbox.scene` composes whole pictures; this module holds what it composes them
from — gradients, glows, the vignette, cover/flatten helpers shared with the image edits, and
one drawing function per element a prompt can name (sun, moon, cat, tree, house, flower, boat,
bird, cloud, geometric shapes). Kept apart so the element vocabulary can grow without the
composition code growing with it. Every function draws with what it is given and takes its
randomness from the caller, so painting stays deterministic per prompt and seed.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from studio.sandbox.palette import RGB, Palette, mix, rgba

# Pixels painted on the working canvas. About a megapixel keeps a 4K render well under a
# second while leaving enough detail for the bicubic upscale to look smooth, not blocky.
WORK_BUDGET = 900_000

# --------------------------------------------------------------------------- raster helpers


def work_size(width: int, height: int, budget: int = WORK_BUDGET) -> tuple[int, int]:
    """Working-canvas size: supersampled for small outputs, capped by pixel budget for big ones."""
    s = min(2.0, math.sqrt(budget / (width * height)))
    return max(8, round(width * s)), max(8, round(height * s))


def vertical_gradient(size: tuple[int, int], stops: list[tuple[float, RGB]]) -> Image.Image:
    """Multi-stop top-to-bottom gradient, built as one column and stretched (cheap at any width)."""
    w, h = size
    ys = np.linspace(0.0, 1.0, h)
    pos = [p for p, _ in stops]
    cols = np.array([c for _, c in stops], dtype=np.float64)
    col = np.stack([np.interp(ys, pos, cols[:, i]) for i in range(3)], axis=1)
    strip = Image.fromarray(col.round().astype(np.uint8).reshape(h, 1, 3), "RGB")
    return strip.resize((w, h), Image.Resampling.NEAREST)


def linear_gradient(size: tuple[int, int], c1: RGB, c2: RGB, angle_deg: float) -> Image.Image:
    """Two-colour gradient along an arbitrary angle, for abstract backgrounds."""
    w, h = size
    m = max(w, h)
    a = math.radians(angle_deg)
    x = (np.arange(w, dtype=np.float32) - w / 2) / m
    y = (np.arange(h, dtype=np.float32) - h / 2) / m
    t = x[None, :] * math.cos(a) + y[:, None] * math.sin(a)
    t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
    c1a = np.array(c1, dtype=np.float32)
    c2a = np.array(c2, dtype=np.float32)
    arr = c1a + (c2a - c1a) * t[..., None]
    return Image.fromarray(arr.round().astype(np.uint8), "RGB")


@lru_cache(maxsize=1)
def _soft_disc() -> Image.Image:
    """A 256px radial falloff (1 at the centre, 0 at the rim) reused for every glow."""
    r = np.hypot(*np.meshgrid(np.linspace(-1, 1, 256), np.linspace(-1, 1, 256)))
    return Image.fromarray((np.clip(1 - r, 0, 1) ** 2 * 255).astype(np.uint8), "L")


@lru_cache(maxsize=1)
def _vignette_mask() -> Image.Image:
    r = np.hypot(*np.meshgrid(np.linspace(-1, 1, 256), np.linspace(-1, 1, 256))) / math.sqrt(2)
    return Image.fromarray((np.clip((r - 0.45) / 0.55, 0, 1) ** 1.6 * 255).astype(np.uint8), "L")


def glow(img: Image.Image, centre: tuple[float, float], radius: float, colour: RGB, strength: float) -> None:
    """Soft light around a point (sun halo, abstract light source)."""
    r = max(2, int(radius))
    mask = _soft_disc().resize((2 * r, 2 * r), Image.Resampling.BILINEAR)
    mask = mask.point(lambda v: int(v * strength))
    img.paste(colour, (int(centre[0]) - r, int(centre[1]) - r), mask)


def vignette(img: Image.Image, strength: float = 0.28) -> None:
    """Darken the corners a little: it frames the picture and makes flat shapes feel finished."""
    mask = _vignette_mask().resize(img.size, Image.Resampling.BILINEAR).point(lambda v: int(v * strength))
    img.paste((0, 0, 0), (0, 0), mask)


def cover(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Scale and centre-crop to fill ``size`` (like ImageOps.fit), skipping the work when sizes match.

    ``reducing_gap`` lets Pillow shrink big inputs in cheap integer steps first, which keeps 4K
    collages fast without visible loss.
    """
    if image.size == size:
        return image.copy()
    w, h = image.size
    scale = max(size[0] / w, size[1] / h)
    cw, ch = size[0] / scale, size[1] / scale
    box = ((w - cw) / 2, (h - ch) / 2, (w + cw) / 2, (h + ch) / 2)
    return image.resize(size, Image.Resampling.LANCZOS, box=box, reducing_gap=3.0)


def to_rgb(image: Image.Image, background: RGB = (255, 255, 255)) -> Image.Image:
    """Flatten to RGB; transparent areas become ``background`` instead of Pillow's arbitrary black."""
    if image.mode == "RGB":
        return image.copy()
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGBA", rgba.size, (*background, 255))
        return Image.alpha_composite(flat, rgba).convert("RGB")
    return image.convert("RGB")


# --------------------------------------------------------------------------- element drawing


def shape_points(kind: str, cx: float, cy: float, r: float, angle: float = 0.0) -> list[tuple[float, float]]:
    """Outline points of a named polygonal shape of "radius" r, rotated by angle degrees."""
    if kind == "heart":
        pts = []
        for i in range(48):
            a = 2 * math.pi * i / 48
            x = 16 * math.sin(a) ** 3
            y = -(13 * math.cos(a) - 5 * math.cos(2 * a) - 2 * math.cos(3 * a) - math.cos(4 * a))
            pts.append((x * r / 17, y * r / 17))
    elif kind == "star":
        pts = [((r if i % 2 == 0 else r * 0.45) * math.cos(math.radians(-90 + 36 * i)),
                (r if i % 2 == 0 else r * 0.45) * math.sin(math.radians(-90 + 36 * i))) for i in range(10)]
    else:
        sides, start = {"square": (4, -45.0), "triangle": (3, -90.0), "hexagon": (6, 0.0)}.get(kind, (32, 0.0))
        pts = [(r * math.cos(math.radians(start + 360 * i / sides)),
                r * math.sin(math.radians(start + 360 * i / sides))) for i in range(sides)]
    ca, sa = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return [(cx + x * ca - y * sa, cy + x * sa + y * ca) for x, y in pts]


def draw_shape(d: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float,
               fill: tuple[int, ...], angle: float = 0.0) -> None:
    """Draw a geometric element; circles and rings are special-cased, the rest are polygons."""
    if kind == "circle":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    elif kind == "ring":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=fill, width=max(1, int(r * 0.2)))
    elif kind == "half":
        d.pieslice((cx - r, cy - r, cx + r, cy + r), angle, angle + 180, fill=fill)
    elif kind == "arc":
        d.arc((cx - r, cy - r, cx + r, cy + r), angle, angle + 200, fill=fill, width=max(1, int(r * 0.16)))
    elif kind == "bar":
        ca, sa = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        hw, hh = r * 1.6, r * 0.22
        pts = [(cx + x * ca - y * sa, cy + x * sa + y * ca) for x, y in ((-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh))]
        d.polygon(pts, fill=fill)
    else:
        d.polygon(shape_points(kind, cx, cy, r, angle), fill=fill)


def draw_sun(img: Image.Image, cx: float, cy: float, r: float, pal: Palette) -> None:
    glow(img, (cx, cy), r * 4.2, pal.light, 0.55)
    d = ImageDraw.Draw(img, "RGBA")
    d.ellipse((cx - r * 1.25, cy - r * 1.25, cx + r * 1.25, cy + r * 1.25), fill=rgba(pal.light, 70))
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=mix(pal.light, (255, 250, 235), 0.5))


def draw_moon(img: Image.Image, cx: float, cy: float, r: float, pal: Palette) -> None:
    glow(img, (cx, cy), r * 3.0, mix(pal.light, (220, 230, 255), 0.5), 0.3)
    size = max(4, int(r * 2))
    mask = Image.new("L", (size, size), 0)
    md = ImageDraw.Draw(mask)
    md.ellipse((0, 0, size - 1, size - 1), fill=255)
    md.ellipse((size * 0.3, -size * 0.12, size * 1.25, size * 0.92), fill=0)  # bite out a crescent
    img.paste(mix(pal.light, (246, 246, 236), 0.6), (int(cx - r), int(cy - r)), mask)


def draw_cat(d: ImageDraw.ImageDraw, cx: float, base: float, s: float, colour: RGB, eye: RGB) -> None:
    """A sitting cat silhouette of height s standing on y=base: body, head, ears, tail and eyes."""
    bw = s * 0.56
    d.ellipse((cx - bw / 2, base - s * 0.62, cx + bw / 2, base + s * 0.02), fill=colour)
    d.line([(cx + bw * 0.3, base - s * 0.04), (cx + bw * 0.85, base - s * 0.08), (cx + bw * 0.98, base - s * 0.38)],
           fill=colour, width=max(2, int(s * 0.07)), joint="curve")
    hr = s * 0.2
    hx, hy = cx, base - s * 0.72
    d.ellipse((hx - hr, hy - hr, hx + hr, hy + hr), fill=colour)
    for side in (-1, 1):
        d.polygon([(hx + side * hr * 0.98, hy - hr * 0.15), (hx + side * hr * 0.78, hy - hr * 1.5),
                   (hx + side * hr * 0.18, hy - hr * 0.86)], fill=colour)
        ex = hx + side * hr * 0.42
        d.ellipse((ex - hr * 0.13, hy - hr * 0.2, ex + hr * 0.13, hy + hr * 0.14), fill=eye)


def draw_tree(d: ImageDraw.ImageDraw, x: float, base: float, s: float, colour: RGB, pine: bool) -> None:
    trunk = mix(colour, (60, 40, 28), 0.6)
    d.rectangle((x - s * 0.045, base - s * 0.3, x + s * 0.045, base), fill=trunk)
    if pine:
        for i in range(3):
            top = base - s * (1.0 - i * 0.2)
            half = s * (0.2 + i * 0.07)
            d.polygon([(x, top), (x - half, top + s * 0.42), (x + half, top + s * 0.42)],
                      fill=mix(colour, (0, 0, 0), 0.1 * (2 - i)))
    else:
        r = s * 0.3
        for dx, dy, k in ((-0.16, -0.62, 0.9), (0.16, -0.62, 0.9), (0.0, -0.8, 1.0)):
            d.ellipse((x + s * dx - r * k, base + s * dy - r * k, x + s * dx + r * k, base + s * dy + r * k),
                      fill=colour)
        d.ellipse((x - r * 0.5, base - s * 0.95, x + r * 0.1, base - s * 0.8), fill=mix(colour, (255, 255, 220), 0.18))


def draw_house(d: ImageDraw.ImageDraw, x: float, base: float, s: float, pal: Palette) -> None:
    wall = mix(pal.light, pal.accent2, 0.3)
    d.rectangle((x - s * 0.5, base - s * 0.6, x + s * 0.5, base), fill=wall)
    d.polygon([(x - s * 0.62, base - s * 0.58), (x, base - s * 1.05), (x + s * 0.62, base - s * 0.58)],
              fill=mix(pal.accent, pal.dark, 0.35))
    d.rectangle((x - s * 0.1, base - s * 0.32, x + s * 0.1, base), fill=mix(pal.dark, wall, 0.3))
    lit = (255, 214, 120) if pal.night else mix(pal.sky_mid, (255, 255, 255), 0.4)
    d.rectangle((x + s * 0.2, base - s * 0.45, x + s * 0.38, base - s * 0.28), fill=lit)


def draw_flower(d: ImageDraw.ImageDraw, x: float, base: float, s: float, petal: RGB, stem: RGB) -> None:
    top = base - s * 3
    d.line([(x, base), (x + s * 0.3, base - s * 1.5), (x, top)], fill=stem, width=max(1, int(s * 0.18)),
           joint="curve")
    for i in range(6):
        a = math.radians(60 * i)
        px, py = x + math.cos(a) * s * 0.55, top + math.sin(a) * s * 0.55
        d.ellipse((px - s * 0.42, py - s * 0.42, px + s * 0.42, py + s * 0.42), fill=petal)
    d.ellipse((x - s * 0.33, top - s * 0.33, x + s * 0.33, top + s * 0.33), fill=(250, 210, 80))


def draw_boat(d: ImageDraw.ImageDraw, x: float, y: float, s: float, pal: Palette) -> None:
    d.polygon([(x - s * 0.6, y - s * 0.2), (x + s * 0.6, y - s * 0.2), (x + s * 0.42, y), (x - s * 0.42, y)],
              fill=pal.dark)
    d.line([(x, y - s * 0.2), (x, y - s * 1.2)], fill=pal.dark, width=max(1, int(s * 0.04)))
    d.polygon([(x + s * 0.03, y - s * 1.15), (x + s * 0.03, y - s * 0.28), (x + s * 0.5, y - s * 0.28)],
              fill=pal.light)
    d.polygon([(x - s * 0.03, y - s * 0.95), (x - s * 0.03, y - s * 0.28), (x - s * 0.38, y - s * 0.28)],
              fill=mix(pal.light, pal.accent, 0.3))


def draw_bird(d: ImageDraw.ImageDraw, x: float, y: float, s: float, colour: tuple[int, ...]) -> None:
    w = max(1, int(s * 0.16))
    d.arc((x - s, y - s * 0.5, x, y + s * 0.5), 200, 340, fill=colour, width=w)
    d.arc((x, y - s * 0.5, x + s, y + s * 0.5), 200, 340, fill=colour, width=w)


def draw_cloud(mask_draw: ImageDraw.ImageDraw, cx: float, cy: float, w: float, rng: random.Random) -> None:
    """Puffs of a cloud drawn into a mask, so overlapping ellipses merge into one soft shape."""
    h = w * 0.28
    mask_draw.rounded_rectangle((cx - w / 2, cy - h * 0.3, cx + w / 2, cy + h * 0.45), radius=h * 0.37, fill=255)
    for _ in range(4):
        px = cx + rng.uniform(-0.32, 0.32) * w
        pr = h * rng.uniform(0.45, 0.8)
        mask_draw.ellipse((px - pr, cy - pr * 1.2, px + pr, cy + pr * 0.6), fill=255)
