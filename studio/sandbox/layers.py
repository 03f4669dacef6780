"""Layer decomposition for the offline image model.

Layered-image models return a picture split into a handful of meaningful RGBA layers: the
background, the subjects standing on it and the text over it, each cut out with its bounding
box. The sandbox does a real, if simple, segmentation so the layers line up with the picture:
colours are quantized on a downscaled copy; the large colour regions touching the frame are the
background; the rest is foreground, where lines of many small pieces are text and nearby pieces
are joined into subjects. The background layer has the subjects lifted out and the gaps filled,
so a designer can move a subject without leaving a hole. Only Pillow and numpy are used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter, ImageStat

from studio.sandbox.palette import colour_name

# Segmentation runs on a copy at most this large: enough to find regions a couple of pixels
# accurate at typical sizes, small enough that the pure-Python labelling stays fast.
ANALYSIS_MAX_SIDE = 384
PALETTE_COLOURS = 8
# A colour region touching the frame is background when it covers at least this share.
BACKGROUND_MIN_FRACTION = 0.03
# A subject covers at least this share of the picture; smaller pieces stay in the background.
SUBJECT_MIN_FRACTION = 0.004
MAX_SUBJECTS = 4
# Mean-colour distance (RGB) a subject or a line of text keeps from what surrounds it.
SUBJECT_CONTRAST = 40.0
TEXT_CONTRAST = 60.0
DEFAULT_MAX_LAYERS = 7  # base, background, up to four subjects, text


@dataclass(frozen=True)
class Layer:
    """One layer of a decomposed image.

    ``bbox`` is (x1, y1, x2, y2) in pixels of the source image with x2/y2 exclusive, the same
    convention as ``Image.crop``; ``image`` is exactly that crop. ``normalized`` is the bbox
    scaled to 0..1000 of the source width/height and rounded, the convention vision models use.
    """

    image: Image.Image
    z_index: int
    name: str
    description: str
    bbox: tuple[int, int, int, int]
    normalized: tuple[int, int, int, int]


def _normalize(bbox: tuple[int, int, int, int], width: int, height: int) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = bbox
    return (round(x1 * 1000 / width), round(y1 * 1000 / height), round(x2 * 1000 / width),
            round(y2 * 1000 / height))


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]  # path halving keeps the trees flat
        i = parent[i]
    return i


def label_regions(q: np.ndarray) -> tuple[np.ndarray, int]:
    """4-connected components of equal values in a 2-D array; returns (labels, count).

    Works on horizontal runs rather than pixels: each run is a node, runs of the same value
    that overlap the run above are merged with union-find. Quantized pictures have few runs per
    row, so this is fast without scipy.
    """
    h, w = q.shape
    parent: list[int] = []
    row_runs: list[tuple[np.ndarray, list[int]]] = []
    prev: tuple[list[int], list[int], list[int], list[int]] | None = None
    for y in range(h):
        row = q[y]
        cuts = np.flatnonzero(row[1:] != row[:-1]) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [w]))
        values = row[starts].tolist()
        first = len(parent)
        ids = list(range(first, first + len(starts)))
        parent.extend(ids)
        s_list, e_list = starts.tolist(), ends.tolist()
        if prev is not None:
            ps, pe, pv, pids = prev
            i = j = 0
            while i < len(s_list) and j < len(ps):
                if s_list[i] < pe[j] and ps[j] < e_list[i] and values[i] == pv[j]:
                    a, b = _find(parent, ids[i]), _find(parent, pids[j])
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                if e_list[i] <= pe[j]:
                    i += 1
                else:
                    j += 1
        prev = (s_list, e_list, values, ids)
        row_runs.append((ends - starts, ids))
    roots = [_find(parent, i) for i in range(len(parent))]
    compact: dict[int, int] = {}
    run_labels = np.array([compact.setdefault(r, len(compact)) for r in roots], dtype=np.int32)
    flat = np.concatenate([np.repeat(run_labels[ids[0]:ids[-1] + 1], lengths) for lengths, ids in row_runs])
    return flat.reshape(h, w), len(compact)


def _dilate(mask: np.ndarray, rx: int, ry: int) -> np.ndarray:
    """Binary dilation by a (2rx+1) x (2ry+1) box, with shifted ORs (no scipy)."""
    out = mask.copy()
    for dx in range(1, rx + 1):
        out[:, dx:] |= mask[:, :-dx]
        out[:, :-dx] |= mask[:, dx:]
    wide = out.copy()
    for dy in range(1, ry + 1):
        out[dy:, :] |= wide[:-dy, :]
        out[:-dy, :] |= wide[dy:, :]
    return out


def _components(mask: np.ndarray) -> list[np.ndarray]:
    """The 4-connected True regions of a boolean mask, largest first."""
    labels, count = label_regions(mask.astype(np.uint8))
    areas = np.bincount(labels[mask], minlength=count)
    return [labels == lab for lab in np.argsort(-areas, kind="stable") if areas[lab]]


def heal(rgb: Image.Image, holes: Image.Image) -> Image.Image:
    """``rgb`` with the ``holes`` (L, 255 = hole) filled from their surroundings: a normalized blur
    of the kept pixels, so a subject lifted onto its own layer leaves clean background behind."""
    w, h = rgb.size
    s = min(1.0, 256 / max(w, h))
    size = (max(1, round(w * s)), max(1, round(h * s)))
    small = np.asarray(rgb.resize(size, Image.Resampling.BOX), dtype=np.float32)
    keep = 1.0 - np.asarray(holes.resize(size, Image.Resampling.BOX), dtype=np.float32) / 255.0
    fill = small.copy()
    for radius in (4, 12, 40):
        kept = Image.fromarray(np.clip(small * keep[..., None], 0, 255).astype(np.uint8))
        weight = Image.fromarray(np.clip(keep * 255, 0, 255).astype(np.uint8), "L")
        num = np.asarray(kept.filter(ImageFilter.BoxBlur(radius)), dtype=np.float32)
        den = np.asarray(weight.filter(ImageFilter.BoxBlur(radius)), dtype=np.float32)[..., None] / 255.0
        ok = den[..., 0] > 0.02
        todo = ok & (keep < 0.99)
        fill[todo] = (num[todo] / den[todo])
        keep = np.where(todo, 1.0, keep)
    patch = Image.fromarray(np.clip(fill, 0, 255).astype(np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
    soft = holes.filter(ImageFilter.GaussianBlur(max(1.0, min(w, h) / 300)))
    return Image.composite(patch, rgb, soft)


def _position(cx: float, cy: float) -> str:
    col = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
    row = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
    return f"{row} {col}".strip() or "centre"


@dataclass(frozen=True)
class _Cut:
    """A region at full resolution: its box and its binary mask cropped to that box."""

    bbox: tuple[int, int, int, int]
    mask: Image.Image


def _cut(region: np.ndarray, size: tuple[int, int]) -> _Cut | None:
    """Scale a region of the analysis picture back to a full-resolution box and mask."""
    W, H = size
    sh, sw = region.shape
    ys = np.flatnonzero(region.any(axis=1))
    xs = np.flatnonzero(region.any(axis=0))
    if not len(xs):
        return None
    # Small-image box with a one-pixel margin, mapped to full resolution.
    bx1, by1 = max(0, int(xs[0]) - 1), max(0, int(ys[0]) - 1)
    bx2, by2 = min(sw, int(xs[-1]) + 2), min(sh, int(ys[-1]) + 2)
    fx1, fy1 = int(bx1 * W / sw), int(by1 * H / sh)
    fx2, fy2 = min(W, -(-bx2 * W // sw)), min(H, -(-by2 * H // sh))
    mask_small = Image.fromarray(region.astype(np.uint8) * 255, "L")
    box = (fx1 * sw / W, fy1 * sh / H, fx2 * sw / W, fy2 * sh / H)
    mask = mask_small.resize((fx2 - fx1, fy2 - fy1), Image.Resampling.BILINEAR, box=box)
    mask = mask.point(lambda v: 255 if v >= 128 else 0)
    inner = mask.getbbox()
    if inner is None:
        return None
    return _Cut((fx1 + inner[0], fy1 + inner[1], fx1 + inner[2], fy1 + inner[3]), mask.crop(inner))


def _contrast(pixels: np.ndarray, region: np.ndarray, ring: np.ndarray) -> float:
    """Distance between the mean colours of a region and the ring around it (0..441)."""
    if not ring.any() or not region.any():
        return 0.0
    return float(np.linalg.norm(pixels[region].mean(axis=0) - pixels[ring].mean(axis=0)))


def _segment(rgb: Image.Image) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(background, text, subjects) masks of a downscaled copy of ``rgb``."""
    W, H = rgb.size
    s = min(1.0, ANALYSIS_MAX_SIDE / max(W, H))
    sw, sh = max(1, round(W * s)), max(1, round(H * s))
    small = rgb if (sw, sh) == (W, H) else rgb.resize((sw, sh), Image.Resampling.BOX)
    quant = small.quantize(colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    quant = quant.filter(ImageFilter.ModeFilter(3))  # removes speckle that would split regions
    labels, count = label_regions(np.asarray(quant))
    pixels = np.asarray(small, dtype=np.float32)
    areas = np.bincount(labels.ravel(), minlength=count)
    edge = set(labels[0].tolist()) | set(labels[-1].tolist()) | set(labels[:, 0].tolist()) | set(labels[:, -1].tolist())
    big = [lab for lab in edge if areas[lab] >= BACKGROUND_MIN_FRACTION * sw * sh]
    background = np.isin(labels, big or [int(np.argmax(areas))])
    foreground = ~background
    unit = max(1, round(max(sw, sh) / 128))
    # Text: a line of many small pieces, joined by a horizontal dilation of a few letter widths.
    pieces, _ = label_regions(foreground.astype(np.uint8))
    text = np.zeros_like(foreground)
    for line in _components(_dilate(foreground, 3 * unit, 0)):
        ys = np.flatnonzero(line.any(axis=1))
        xs = np.flatnonzero(line.any(axis=0))
        height, width = int(ys[-1] - ys[0] + 1), int(xs[-1] - xs[0] + 1)
        inside = line & foreground
        if not inside.any():
            continue
        count_pieces = len(np.unique(pieces[inside]))
        sparse = inside.sum() < 0.7 * line.sum()  # letters leave gaps; a solid stripe does not
        if (height <= 0.14 * sh and width >= 3 * height and count_pieces >= 4 and sparse
                and _contrast(pixels, inside, line & ~inside) >= TEXT_CONTRAST):
            text |= inside
    rest = foreground & ~text
    # Pieces that stand out from what is around them; a band of a gradient does not.
    solid = np.zeros_like(rest)
    min_piece = max(4, int(0.0005 * sw * sh))
    for lab in np.flatnonzero(np.bincount(labels[rest], minlength=count) >= min_piece):
        region = (labels == lab) & rest
        ys = np.flatnonzero(region.any(axis=1))
        xs = np.flatnonzero(region.any(axis=0))
        m = 2 * unit
        y1, y2 = max(0, ys[0] - m), min(sh, ys[-1] + m + 1)
        x1, x2 = max(0, xs[0] - m), min(sw, xs[-1] + m + 1)
        part = region[y1:y2, x1:x2]
        ring = _dilate(part, m, m) & ~part
        if _contrast(pixels[y1:y2, x1:x2], part, ring) >= SUBJECT_CONTRAST:
            solid |= region
    subjects = []
    for joined in _components(_dilate(solid, 2 * unit, 2 * unit)):
        region = joined & solid
        if region.sum() < SUBJECT_MIN_FRACTION * sw * sh:
            break  # largest first: the rest are smaller still
        subjects.append(region)
    return background, text, subjects


def _layer(rgb: Image.Image, cut: _Cut, z: int, name: str, description: str) -> Layer:
    W, H = rgb.size
    layer_img = rgb.crop(cut.bbox).convert("RGBA")
    layer_img.putalpha(cut.mask)
    return Layer(layer_img, z, name, description, cut.bbox, _normalize(cut.bbox, W, H))


def _describe(rgb: Image.Image, cut: _Cut) -> tuple[str, str, tuple[int, int, int]]:
    W, H = rgb.size
    crop = rgb.crop(cut.bbox)
    mean = tuple(round(c) for c in ImageStat.Stat(crop, cut.mask).mean[:3])
    x1, y1, x2, y2 = cut.bbox
    return colour_name(mean), _position((x1 + x2) / 2 / W, (y1 + y2) / 2 / H), mean  # type: ignore[arg-type,return-value]


def decompose_layers(image: Image.Image, max_layers: int = DEFAULT_MAX_LAYERS) -> list[Layer]:
    """Split ``image`` into at most ``max_layers`` meaningful layers (the base layer included).

    Layer 0 is the whole image (RGB, bbox = full frame), as layered models return it. Then, bottom
    to top: the background (full frame, subjects and text lifted out and filled in), the subjects
    from the largest to the smallest (at most four), and the text. Each is an RGBA crop of the
    original pixels whose alpha is its mask, named for what it is ("Red subject (top left)").
    """
    if max_layers < 1:
        raise ValueError("max_layers must be at least 1")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        rgb = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    else:
        rgb = image.convert("RGB")
    W, H = rgb.size
    layers = [Layer(rgb.copy(), 0, "Base image", "The complete original image.", (0, 0, W, H), (0, 0, 1000, 1000))]
    if max_layers == 1:
        return layers
    background, text, subjects = _segment(rgb)
    room = max_layers - 2  # after the base and the background
    text_cut = _cut(text, (W, H)) if text.any() and room >= 2 else None
    cuts = [c for c in (_cut(region, (W, H)) for region in subjects) if c is not None]
    cuts = cuts[: min(MAX_SUBJECTS, room - (1 if text_cut else 0))]
    holes = Image.new("L", (W, H), 0)
    for cut in [*cuts, *([text_cut] if text_cut else [])]:
        holes.paste(255, cut.bbox[:2], cut.mask)
    bg_cut = _cut(background, (W, H))
    colour = _describe(rgb, bg_cut)[0] if bg_cut else "Plain"
    filled = heal(rgb, holes) if holes.getbbox() else rgb
    layers.append(Layer(filled.convert("RGBA"), 1, f"{colour} background",
                        f"{colour} background of the whole frame, with the subjects and text lifted out and "
                        "the gaps filled in.", (0, 0, W, H), (0, 0, 1000, 1000)))
    names: dict[str, int] = {}
    for cut in cuts:
        colour, where, mean = _describe(rgb, cut)
        name = f"{colour} subject ({where})"
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:
            name = f"{name} {names[name]}"
        x1, y1, x2, y2 = cut.bbox
        share = (x2 - x1) * (y2 - y1) / (W * H)
        description = (f"{colour} subject in the {where} of the image, its box about {max(1, round(share * 100))}% "
                       f"of it; average colour #{mean[0]:02x}{mean[1]:02x}{mean[2]:02x}.")
        layers.append(_layer(rgb, cut, len(layers), name, description))
    if text_cut is not None:
        colour, where, _ = _describe(rgb, text_cut)
        layers.append(_layer(rgb, text_cut, len(layers), f"Text ({where})",
                             f"{colour} lettering in the {where} of the image, on its own layer so it can be "
                             "edited or replaced."))
    return layers
