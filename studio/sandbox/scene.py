"""Scene painting for the offline image model.

Given the cues read from a prompt (see :mod:`studio.sandbox.palette`), this paints a picture:
landscape elements such as sun, sea, mountains, city, trees or a cat on a sky-and-ground
layout, or a seeded abstract composition of shapes. Painting happens on a small working
canvas, which keeps the cost flat at any output size, and the result is resized with a
smooth filter. All randomness comes from a ``random.Random`` seeded by the caller, so the
same prompt and seed always give the same pixels.

This module composes the two kinds of picture; the brushes it composes them from (gradients,
glows and one drawing function per element) are in :mod:`studio.sandbox.scene_elements`.
"""

from __future__ import annotations

import math
import random

from PIL import Image, ImageDraw

from studio.sandbox.palette import (
    GEOMETRIC_ELEMENTS,
    GROUND_ELEMENTS,
    RGB,
    Palette,
    PromptInfo,
    analyse_prompt,
    clamp01,
    colour_name,
    make_palette,
    mix,
    rgba,
)
from studio.sandbox.regions import SceneNotes, attach

# The raster helpers and element brushes live in scene_elements; they are re-exported here
# because imaging, edits and the tests reach them as ``scene.<name>``.
from studio.sandbox.scene_elements import (
    WORK_BUDGET,
    cover,
    draw_bird,
    draw_boat,
    draw_cat,
    draw_cloud,
    draw_flower,
    draw_house,
    draw_moon,
    draw_shape,
    draw_sun,
    draw_tree,
    glow,
    linear_gradient,
    shape_points,
    to_rgb,
    vertical_gradient,
    vignette,
    work_size,
)

__all__ = [
    "WORK_BUDGET",
    "cover",
    "draw_bird",
    "draw_boat",
    "draw_cat",
    "draw_cloud",
    "draw_flower",
    "draw_house",
    "draw_moon",
    "draw_shape",
    "draw_sun",
    "draw_tree",
    "glow",
    "linear_gradient",
    "paint_scene",
    "render_scene",
    "shape_points",
    "to_rgb",
    "vertical_gradient",
    "vignette",
    "work_size",
]


# --------------------------------------------------------------------------- terrain


def _ridge(rng: random.Random, base_y: float, amp: float, levels: int = 5) -> list[float]:
    """Mountain ridge heights by midpoint displacement: few random numbers, natural silhouettes."""
    pts = [base_y - amp * rng.uniform(0.2, 0.7), base_y - amp * rng.uniform(0.2, 0.7)]
    disp = amp
    for _ in range(levels):
        nxt: list[float] = []
        for a, b in zip(pts, pts[1:], strict=False):
            nxt += [a, (a + b) / 2 + rng.uniform(-disp, disp) * 0.5]
        nxt.append(pts[-1])
        pts = nxt
        disp *= 0.55
    return [min(base_y - amp * 0.05, max(base_y - amp * 1.2, p)) for p in pts]


# --------------------------------------------------------------------------- scenes


def _paint_landscape(size: tuple[int, int], info: PromptInfo, pal: Palette, rng: random.Random,
                     t: float, notes: SceneNotes) -> Image.Image:
    W, H = size
    u = min(W, H)
    els = set(info.elements)
    words = set(info.words)
    night = pal.night
    horizon = H * rng.uniform(0.56, 0.66)
    floor = H * 0.86  # stand things above the caption band so the text never hides the subject
    arc = math.sin(math.pi * t)
    sky_bottom = mix(pal.sky_horizon, pal.accent, 0.35 * (1 - arc))  # warmer light when the sun is low
    sky_top = mix(pal.sky_top, pal.dark, 0.25 * (1 - arc)) if not night else pal.sky_top
    img = vertical_gradient((W, H), [(0.0, sky_top), (horizon / H * 0.55, pal.sky_mid),
                                     (horizon / H, sky_bottom), (1.0, sky_bottom)])
    d = ImageDraw.Draw(img, "RGBA")
    notes.add("sky", 0, 0, W, horizon)

    n_stars = int(70 * W / u)
    if night or "star" in els:
        for i in range(n_stars):
            x, y = rng.uniform(0, W), rng.uniform(0, horizon * 0.92)
            r = rng.uniform(0.5, 1.7) * u / 500
            a = rng.randint(110, 255) * (0.65 + 0.35 * abs(math.sin(i * 1.7 + t * math.pi * 2)))
            d.ellipse((x - r, y - r, x + r, y + r), fill=(255, 252, 235, int(a)))

    draw_sun_now = "sun" in els or (not night and "moon" not in els and rng.random() < 0.6)
    sun_r = u * rng.uniform(0.065, 0.095)
    sx, sy = W * (0.12 + 0.76 * t), horizon * (0.56 - 0.4 * arc)  # low at the ends of the day, never gone
    if draw_sun_now:
        draw_sun(img, sx, sy, sun_r, pal)
        notes.element("sun", sx, sy, sun_r)
    if "moon" in els or (night and "sun" not in els):
        mt = 1 - t if draw_sun_now else t
        marc = math.sin(math.pi * mt)
        draw_moon(img, W * (0.12 + 0.76 * mt), horizon * (0.8 - 0.62 * marc), u * 0.06, pal)
        notes.element("moon", W * (0.12 + 0.76 * mt), horizon * (0.8 - 0.62 * marc), u * 0.06)

    n_clouds = rng.randint(2, 4) + (2 if "cloud" in els else 0)
    cloudy = "cloud" in els or rng.random() < 0.5
    cloud_mask = Image.new("L", (W, H), 0)
    shadow_mask = Image.new("L", (W, H), 0)
    for _ in range(int(n_clouds * max(1.0, W / u * 0.7))):
        cx = (rng.uniform(0, W) + t * u * 0.35) % (W + u * 0.3) - u * 0.15
        cy = rng.uniform(0.12, 0.5) * horizon
        cw = u * rng.uniform(0.18, 0.34)
        puffs = rng.getrandbits(32)  # same puffs for the cloud and its shadow
        draw_cloud(ImageDraw.Draw(shadow_mask), cx, cy + cw * 0.05, cw, random.Random(puffs))
        draw_cloud(ImageDraw.Draw(cloud_mask), cx, cy, cw, random.Random(puffs))
        if cloudy:
            notes.element("cloud", cx, cy, cw)
    if cloudy:
        cloud = mix((255, 255, 255), pal.sky_horizon, 0.15) if not night else mix(pal.sky_mid, (255, 255, 255), 0.2)
        img.paste(mix(cloud, pal.sky_mid, 0.45), (0, 0), shadow_mask.point(lambda v: v * 2 // 3))
        img.paste(cloud, (0, 0), cloud_mask.point(lambda v: v * 9 // 10))

    if "bird" in els:
        for _ in range(rng.randint(3, 7)):
            bx = (rng.uniform(0.1, 0.8) * W + t * u * 0.5) % W
            by, bs = rng.uniform(0.15, 0.5) * horizon, u * rng.uniform(0.015, 0.035)
            draw_bird(d, bx, by, bs, rgba(pal.dark, 220))
            notes.element("bird", bx, by, bs)

    for i, kind in enumerate(k for k in GEOMETRIC_ELEMENTS if k in els and k != "star"):
        r = u * rng.uniform(0.07, 0.12) * (0.85 + 0.3 * t)
        x, y = W * rng.uniform(0.15, 0.85), horizon * rng.uniform(0.25, 0.6)
        colour = (pal.accent, pal.accent2, pal.light)[i % 3]
        draw_shape(d, kind, x + u * 0.01, y + u * 0.015, r, rgba(pal.dark, 60), (t - 0.5) * 120)
        draw_shape(d, kind, x, y, r, rgba(colour, 235), (t - 0.5) * 120)
        notes.element(kind, x, y, r, colour_name(colour).lower(), (t - 0.5) * 120)

    if "mountain" in els:
        snowy = "winter" in info.moods or rng.random() < 0.45
        for layer in range(3):
            amp = horizon * (0.55 - 0.15 * layer) * rng.uniform(0.85, 1.1)
            ridge = _ridge(rng, horizon + u * 0.02, amp)
            pts = [(W * i / (len(ridge) - 1), y) for i, y in enumerate(ridge)]
            # Aerial perspective: far ranges fade toward the sky, near ones are darker.
            colour = mix(mix(pal.ground_far, pal.dark, 0.15 + 0.2 * layer), sky_bottom, 0.3 - 0.15 * layer)
            poly = [*pts, (W, horizon + u * 0.03), (0, horizon + u * 0.03)]
            d.polygon(poly, fill=colour)
            notes.add("mountain", 0, min(ridge), W, horizon + u * 0.03)
            if snowy and layer == 0:
                line = min(ridge) + amp * 0.35
                m = Image.new("L", (W, H), 0)
                md = ImageDraw.Draw(m)
                md.polygon(poly, fill=255)
                md.polygon([(0, line + amp), (W, line + amp)] +
                           [(W * i / 16, line + (u * 0.02 if i % 2 else -u * 0.01)) for i in range(16, -1, -1)],
                           fill=0)
                img.paste(mix((250, 250, 255), sky_bottom, 0.2), (0, 0), m)

    if "city" in els:
        notes.add("city", 0, horizon - u * 0.4, W, horizon + u * 0.04)
        for row, (lo, hi, shade) in enumerate(((0.14, 0.32, 0.45), (0.08, 0.4, 0.75))):
            x = -u * 0.02
            body = mix(pal.sky_mid, pal.dark, shade)
            while x < W:
                bw = u * rng.uniform(0.05, 0.11)
                bh = u * rng.uniform(lo, hi)
                top = horizon + u * 0.01 * row - bh
                d.rectangle((x, top, x + bw, horizon + u * 0.04), fill=body)
                step = u * 0.026
                lit = (255, 214, 120, 230) if night else rgba(mix(sky_bottom, (255, 255, 255), 0.5), 110)
                wy = top + step * 0.6
                while wy < horizon - step * 0.5:
                    wx = x + step * 0.4
                    while wx < x + bw - step * 0.6:
                        if rng.random() < (0.5 if night else 0.35):
                            d.rectangle((wx, wy, wx + step * 0.45, wy + step * 0.55), fill=lit)
                        wx += step
                    wy += step
                x += bw + u * rng.uniform(0.0, 0.02)

    if "sea" in els:
        notes.add("sea", 0, horizon, W, H)
        sea_top = mix(sky_bottom, pal.sky_mid, 0.35)
        sea = vertical_gradient((W, max(1, H - int(horizon))), [(0.0, sea_top),
                                                                 (1.0, mix(pal.sky_top, pal.dark, 0.45))])
        img.paste(sea, (0, int(horizon)))
        d = ImageDraw.Draw(img, "RGBA")
        for _ in range(int(60 * W / u)):
            f = rng.random() ** 1.8
            y = horizon + (H - horizon) * f
            ln = u * rng.uniform(0.02, 0.07) * (1 + 2 * f)
            x = rng.uniform(0, W)
            d.line([(x, y), (x + ln, y)], fill=rgba(pal.light, rng.randint(40, 110)), width=max(1, int(u * 0.003)))
        if draw_sun_now and sy < horizon:
            for k in range(24):
                f = k / 24
                y = horizon + (H - horizon) * f * 0.8 + u * 0.004
                half = sun_r * (1.1 - f * 0.6) * rng.uniform(0.5, 1.0)
                d.line([(sx - half, y), (sx + half, y)], fill=rgba(pal.light, 170 * (1 - f)),
                       width=max(1, int(u * 0.006)))
        if "boat" in els:
            draw_boat(d, W * (0.15 + 0.7 * t), horizon + (H - horizon) * 0.35, u * 0.14, pal)
            notes.element("boat", W * (0.15 + 0.7 * t), horizon + (H - horizon) * 0.35, u * 0.14)
        if els & GROUND_ELEMENTS:
            shore = floor - u * 0.06
            d.polygon([(0, shore + u * 0.03)] + [(W * i / 12, shore + math.sin(i * 0.9) * u * 0.015)
                                                 for i in range(13)] + [(W, H), (0, H)], fill=pal.ground_far)
            img.paste(vertical_gradient((W, max(1, H - int(floor))), [(0, pal.ground_far), (1, pal.ground_near)]),
                      (0, int(floor)))
    else:
        notes.add("ground", 0, horizon, W, H)
        ground = vertical_gradient((W, max(1, H - int(horizon))), [(0.0, pal.ground_far), (1.0, pal.ground_near)])
        img.paste(ground, (0, int(horizon)))
        d = ImageDraw.Draw(img, "RGBA")
        for layer in range(2):
            phase, amp = rng.uniform(0, 6.28), u * rng.uniform(0.02, 0.05)
            base = horizon + (H - horizon) * (0.12 + 0.3 * layer)
            pts = [(W * i / 40, base - amp * (1 + math.sin(phase + i * 0.45))) for i in range(41)]
            d.polygon([*pts, (W, H), (0, H)], fill=mix(pal.ground_far, pal.ground_near, 0.35 + 0.4 * layer))

    d = ImageDraw.Draw(img, "RGBA")
    if "tree" in els:
        forest = bool(words & {"forest", "woods", "jungle"})
        count = int(9 * W / u) if forest else rng.randint(1, 3)
        trees = []
        for _ in range(count):
            depth = rng.random() if forest else 0.8 + rng.random() * 0.2
            trees.append((depth, W * rng.uniform(0.04, 0.96), rng.random() < 0.55 or "pine" in words,
                          rng.uniform(0.8, 1.2)))
        for depth, x, pine, k in sorted(trees):
            base = horizon + (floor - horizon) * depth
            s = u * (0.1 + 0.2 * depth) * k
            colour = mix(mix(pal.ground_near, pal.dark, 0.35), sky_bottom, 0.35 * (1 - depth))
            draw_tree(d, x, base, s, colour, pine)
            notes.element("tree", x, base, s, extra=float(pine))
    if "house" in els:
        hx = W * rng.uniform(0.2, 0.45)
        draw_house(d, hx, floor - u * 0.01, u * 0.2, pal)
        notes.element("house", hx, floor - u * 0.01, u * 0.2)
    if "flower" in els:
        for _ in range(int(rng.randint(6, 12) * W / u)):
            x = rng.uniform(0.03, 0.97) * W
            petal = (pal.accent, pal.accent2, pal.light)[rng.randint(0, 2)]
            fy, fs = floor + u * rng.uniform(-0.04, 0.04), u * rng.uniform(0.026, 0.042)
            draw_flower(d, x, fy, fs, petal, mix(pal.ground_near, (40, 90, 40), 0.4))
            notes.element("flower", x, fy, fs, colour_name(petal).lower())
    if "cat" in els:
        eye = (250, 220, 90) if night else mix(pal.accent, (255, 255, 255), 0.3)
        cx, cs = W * rng.uniform(0.55, 0.72), u * rng.uniform(0.26, 0.32)
        draw_cat(d, cx, floor, cs, pal.dark, eye)
        notes.element("cat", cx, floor, cs, colour_name(pal.dark).lower())
    vignette(img)
    return img


def _paint_abstract(size: tuple[int, int], info: PromptInfo, pal: Palette, rng: random.Random,
                    t: float, notes: SceneNotes) -> Image.Image:
    W, H = size
    u = min(W, H)
    img = linear_gradient(size, pal.sky_top, pal.sky_horizon, rng.uniform(0, 360))
    glow(img, (rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.7) * H), u * rng.uniform(0.5, 0.8), pal.accent, 0.45)
    d = ImageDraw.Draw(img, "RGBA")

    pattern = rng.choice(("dots", "lines", "rings", "none"))
    faint = rgba(pal.light, 34)
    if pattern == "dots":
        step = u * rng.uniform(0.05, 0.08)
        r = step * 0.09
        for gy in range(int(H / step) + 1):
            for gx in range(int(W / step) + 1):
                d.ellipse((gx * step - r, gy * step - r, gx * step + r, gy * step + r), fill=faint)
    elif pattern == "lines":
        step = u * rng.uniform(0.04, 0.07)
        for i in range(-int(H / step) - 1, int(W / step) + 2):
            d.line([(i * step, 0), (i * step + H, H)], fill=faint, width=max(1, int(u * 0.003)))
    elif pattern == "rings":
        cx, cy = rng.uniform(0, W), rng.uniform(0, H)
        for i in range(1, 14):
            rr = i * u * 0.09
            d.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), outline=faint, width=max(1, int(u * 0.004)))

    colours = [pal.accent, pal.accent2, pal.light, pal.dark, pal.sky_mid, pal.ground_far]
    named = [k for k in GEOMETRIC_ELEMENTS if k in info.elements]
    anchors = [(0.33, 0.36), (0.67, 0.36), (0.5, 0.46), (0.3, 0.62), (0.7, 0.62), (0.5, 0.24), (0.16, 0.3),
               (0.84, 0.5)]
    rng.shuffle(anchors)
    grow = 0.85 + 0.3 * t
    spin = (t - 0.5) * 120  # a single picture (t near 0.5) stays close to upright
    drawn: list[tuple[str, float, float, float, tuple[int, ...], float]] = []
    if named:
        for i, kind in enumerate(named):
            ax, ay = anchors[i % len(anchors)] if len(named) > 1 else (0.5 + rng.uniform(-0.08, 0.08), 0.44)
            r = u * (0.27 if len(named) == 1 else 0.2) * grow
            drawn.append((kind, ax * W, ay * H, r, rgba(colours[i % 3], 245), rng.uniform(-12, 12) + spin))
        for j in range(rng.randint(3, 5)):
            ax, ay = anchors[(j + len(named)) % len(anchors)]
            kind = named[j % len(named)]
            r = u * rng.uniform(0.05, 0.11) * grow
            drawn.append((kind if j % 2 == 0 or kind != "circle" else "ring", ax * W + rng.uniform(-0.05, 0.05) * W,
                          ay * H, r, rgba(colours[(j + 1) % len(colours)], rng.randint(170, 230)),
                          rng.uniform(0, 360) - spin))
    else:
        kinds = ("circle", "ring", "square", "triangle", "arc", "bar", "half", "hexagon")
        for j in range(rng.randint(5, 8)):
            ax, ay = anchors[j % len(anchors)]
            drawn.append((rng.choice(kinds), (ax + rng.uniform(-0.1, 0.1)) * W, (ay + rng.uniform(-0.08, 0.08)) * H,
                          u * rng.uniform(0.07, 0.24) * grow, rgba(rng.choice(colours), rng.randint(175, 245)),
                          rng.uniform(0, 360) + spin * (1 if j % 2 else -1)))
    for kind, x, y, r, fill, angle in drawn:
        draw_shape(d, kind, x + u * 0.012, y + u * 0.018, r, rgba(pal.dark, 55), angle)  # soft drop shadow
        draw_shape(d, kind, x, y, r, fill, angle)
        notes.element(kind, x, y, r, colour_name(fill[:3]).lower(), angle)
    vignette(img, 0.22)
    return img


def paint_scene(prompt: str, seed: int, size: tuple[int, int], t: float | None = None,
                hint: RGB | None = None) -> Image.Image:
    """Paint the prompt's scene at exactly ``size`` (the working canvas); no caption.

    ``t`` in 0..1 animates the scene (sun position, rotation, growth) for sequences while every
    random choice stays the same, so frames of a set share palette and layout.
    """
    info = analyse_prompt(prompt)
    rng = random.Random(seed)
    pal = make_palette(info, rng, hint)
    default_t = rng.uniform(0.3, 0.7)
    tt = default_t if t is None else clamp01(t)
    notes = SceneNotes(size)
    painter = _paint_landscape if info.landscape else _paint_abstract
    return attach(painter(size, info, pal, rng, tt, notes), notes.regions)


def render_scene(prompt: str, seed: int, width: int, height: int, t: float | None = None,
                 hint: RGB | None = None, budget: int = WORK_BUDGET) -> Image.Image:
    """Paint on a working canvas and resize to the output size (downsampling doubles as anti-aliasing)."""
    ws = work_size(width, height, budget)
    img = paint_scene(prompt, seed, ws, t, hint)
    if ws == (width, height):
        return img
    up = ws[0] < width
    return img.resize((width, height), Image.Resampling.BICUBIC if up else Image.Resampling.LANCZOS)
